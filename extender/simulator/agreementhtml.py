"""The page of `extender simulate --agreement … --html`: the real-vs-simulated comparison.

The per-pod divergences come first (each with both sides' outcome, node, tied nodes, victims
and last message, and what explains it where the real run's log shows a race inside the real
scheduler), then the counts per aspect, then both runs as `--compare` draws two:
timelines on one axis, rejections side by side, each run's pods.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

from extender.simulator.agreement import ASPECTS, placed_at
from extender.simulator.agreementcauses import causes_named, explained_note
from extender.simulator.htmlreport import Event, render_compare_html


def _side(side: Mapping[str, Any] | None, paired: str) -> str:
    if side is None:
        return "(no such pod)"
    parts = [f"{side['status']} · {side['node'] or '–'}{placed_at(side)}"]
    if side["pod"] != paired:  # paired by owner: a controller named each side's pod
        parts.append(f"as {side['pod']}")
    if len(side["tiedNodes"]) > 1:
        parts.append(f"tied best: {', '.join(side['tiedNodes'])}")
    if side["victims"]:
        parts.append(f"preempted: {', '.join(side['victims'])}")
    parts.append(f"{side['attempts']} attempt(s)")
    if side["message"]:
        parts.append(side["message"])
    return "<br>".join(escape(p) for p in parts)


#: The page's subtitle by the comparison's sides (`agreement.side_names`).
_SUBTITLES = {("simulated", "real"): "the simulator's prediction against a real kube-scheduler's run",
              ("first real run", "second real run"): "a real kube-scheduler's run against another"}


def agreement_html(result: Mapping[str, Any], names: Sequence[str]) -> str:
    """Divergences first, then the counts."""
    n = result["pods"]
    divergences = result["divergences"]
    out = [f'<p id="agreement-line"><strong>agreement: {result["agree"]}/{n} pods</strong></p>',
           f"<h3>pods that diverge: {len(divergences)} of {n}{explained_note(result)}</h3>"]
    if divergences:
        out.append('<table class="diff" id="agreement-pods"><thead><tr><th>pod</th>'
                   f'<th>differs</th><th>{escape(names[0])}</th><th>{escape(names[1])}</th>'
                   "</tr></thead><tbody>")
        for d in divergences:
            pod = (d["real"] or d["simulated"])["pod"]
            out.append(f'<tr data-pod="{escape(pod)}"><td>{escape(pod)}</td>'
                       f'<td>{escape(", ".join(d["differs"]))}</td>'
                       f'<td class="changed">{_side(d["simulated"], pod)}</td>'
                       f'<td class="changed">{_side(d["real"], pod)}</td></tr>')
            if d.get("explained"):
                out.append(f'<tr class="explained" data-pod="{escape(pod)}"><td></td>'
                           f'<td colspan="3">{escape(d["cause"])}: {escape(d["explained"])}</td></tr>')
        out.append("</tbody></table>")
        for cause, what in causes_named(divergences):
            out.append(f'<p class="cause">{escape(cause)}: {escape(what)}</p>')
    out.append('<table class="diff" id="agreement-aspects"><thead><tr><th>aspect</th>'
               '<th class="num">pods that agree</th></tr></thead><tbody>')
    for aspect in (*ASPECTS, "attempts"):
        out.append(f'<tr data-aspect="{aspect}"><td>{aspect}</td>'
                   f'<td class="num">{result["aspects"][aspect]}/{n}</td></tr>')
    out.append(f'<tr data-aspect="preemptions"><td>preemptions with the same victims</td>'
               f'<td class="num">{result["preemptionsAgree"]}/{result["preemptions"]}</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


def render_agreement_html(sim: Mapping[str, Any], real: Mapping[str, Any],
                          result: Mapping[str, Any], *,
                          names: Sequence[str] = ("simulated", "real"),
                          events: Sequence[Iterable[Event]] | None = None) -> str:
    """The page; `events`: both runs' event logs (else drawn from the reports alone)."""
    sim_events, real_events = events if events is not None else (None, None)
    return render_compare_html(
        [(names[0], sim, sim_events), (names[1], real, real_events)], None,
        title="extender simulate --agreement", differences=agreement_html(result, names),
        subtitle=_SUBTITLES.get(tuple(result.get("sides") or ()), "two runs, pod by pod"))
