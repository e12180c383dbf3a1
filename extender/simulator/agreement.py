"""`extender simulate --agreement SIM.json REAL.json`: how far a simulated run agrees with a
real one, pod by pod.

Both files are `SimulationReport`s: the simulator's (`--report`, best with `--follow
REAL.json`), and one `extender simulate --on-sandbox` recorded from a real kube-scheduler.
Pods pair by name, or, where a controller named them at random, by owner in bind order
(`follow.identity`). A pair agrees when

* **outcome**: both have the same status (Scheduled, Pending, Preempted, ...);
* **node**: both are on the same node, or the real node is one the simulator found tied with
  its choice for the top score (`tiedNodes`: kube-scheduler picks among those at random);
* **victims**: the pods it preempted are the same (by identity; empty on both sides for most).

Either file may also be a real run's or a simulation's, to see how far the real scheduler
agrees with itself, or a simulation without `--follow` with a real run: the text then names
each side by what it is. A real report names no tied best, so where it comes first a node
agrees only when it is the same node.

Attempts are compared on their own, not in the pod's agreement: kube-scheduler retries when
its backoff and the cluster's events in real time say so, so they agree when within
`attempt_tolerance`. Given the second run's event log, a divergence that a race inside the
real scheduler accounts for (`agreementcauses`) says so; it still counts as a divergence. The
last line of the text is `agreement: A/N pods`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from extender.simulator.agreementcauses import (
    causes_named,
    explain,
    explained_note,
    stale_quota_preemptions,
)
from extender.simulator.follow import report_identity

KIND = "SimulationAgreement"
SIDES = ("simulated", "real")
#: A pod's agreement covers these; attempts are counted apart.
ASPECTS = ("outcome", "node", "victims")


class AgreementError(ValueError):
    """A file that is not a simulation report."""


def load_report(path: str | Path) -> dict[str, Any]:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise AgreementError(f"{path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise AgreementError(f"{path}: not JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("kind") != "SimulationReport":
        raise AgreementError(f"{path}: not a SimulationReport (extender simulate --report, or "
                             "--on-sandbox --report)")
    return doc


def source(report: Mapping[str, Any]) -> str | None:
    """"real" for a report `--on-sandbox` recorded, "simulated" for the simulator's; None
    when the report does not say (it has no `inputs`)."""
    inputs = report.get("inputs")
    if not isinstance(inputs, Mapping):
        return None
    return "real" if inputs.get("onSandbox") else "simulated"


#: The names `side_names` gives a real report in the first place.
_REAL_FIRST = ("real", "first real run")


def side_names(sim: Mapping[str, Any], real: Mapping[str, Any]) -> tuple[str, str]:
    """What to call the two sides: "simulated" and "real", as the option names them, unless
    the reports say otherwise: "first …" and "second …" for two of one kind, or "real" and
    "simulated" for the other order."""
    first = source(sim) or SIDES[0]
    second = source(real) or SIDES[1]
    if first != second:
        return first, second
    kind = "real run" if first == "real" else "simulation"
    return f"first {kind}", f"second {kind}"


def attempt_tolerance(a: int, b: int) -> int:
    """How far two attempt counts may differ and still agree: one, or a quarter of the larger
    count (a retry's moment depends on the backoff and on when cluster events arrive)."""
    return max(1, max(a, b) // 4)


def _order(pod: Mapping[str, Any]) -> tuple[float, str]:
    at = pod.get("scheduledAtSeconds")
    return (float("inf") if at is None else at, pod["name"])


def pair_pods(sim: Sequence[Mapping[str, Any]], real: Sequence[Mapping[str, Any]],
              victims: tuple[Mapping[str, Mapping[str, Any]], Mapping[str, Mapping[str, Any]]]
              | None = None,
              ) -> list[tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]]:
    """Each simulated pod with its real counterpart (None where one run has no such pod),
    by identity; pods of one owner are interchangeable, so they pair where they agree (with
    `victims`, each report's pods by namespace/name: also on whom they preempted)."""
    groups: dict[str, tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]] = {}
    for side, pods in enumerate((sim, real)):
        for pod in pods:
            groups.setdefault(report_identity(pod), ([], []))[side].append(pod)
    pairs: list[tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]] = []
    for key in sorted(groups):
        s, r = (sorted(g, key=_order) for g in groups[key])
        # Interchangeable pods: those that agree pair first (same outcome and node, then the
        # real node among the simulated pod's tied best), the rest in bind order.
        def same_victims(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
            if victims is None:
                return True
            return _same_place(a, b) and _victims(a, victims[0]) == _victims(b, victims[1])

        for same in (same_victims, _same_place, _tied_place):
            for sim_pod in list(s):
                match = next((p for p in r if same(sim_pod, p)), None)
                if match is not None:
                    pairs.append((sim_pod, match))
                    s.remove(sim_pod)
                    r.remove(match)
        for i in range(max(len(s), len(r))):
            pairs.append((s[i] if i < len(s) else None, r[i] if i < len(r) else None))
    return pairs


def _same_place(sim: Mapping[str, Any], real: Mapping[str, Any]) -> bool:
    return (sim.get("status"), sim.get("node")) == (real.get("status"), real.get("node"))


def _tied_place(sim: Mapping[str, Any], real: Mapping[str, Any]) -> bool:
    return sim.get("status") == real.get("status") and real.get("node") in (
        sim.get("tiedNodes") or ())


def _victims(pod: Mapping[str, Any], by_key: Mapping[str, Mapping[str, Any]]) -> list[str]:
    out = []
    for key in pod.get("preempted") or ():
        victim = by_key.get(key)
        out.append(report_identity(victim) if victim is not None else key)
    return sorted(out)


def _side(pod: Mapping[str, Any] | None, by_key: Mapping[str, Mapping[str, Any]],
          ) -> dict[str, Any] | None:
    if pod is None:
        return None
    return {"pod": f"{pod['namespace']}/{pod['name']}", "status": pod.get("status"),
            "node": pod.get("node"), "tiedNodes": pod.get("tiedNodes") or [],
            "attempts": pod.get("attempts") or 0, "message": pod.get("message"),
            "victims": _victims(pod, by_key),
            # When each side placed it (None: never): a node chosen seconds apart was chosen
            # among nodes that had changed meanwhile.
            "scheduledAtSeconds": pod.get("scheduledAtSeconds") if pod.get("node") else None}


def _differs(s: dict[str, Any] | None, r: dict[str, Any] | None) -> tuple[list[str], bool]:
    """(the aspects that differ, whether the attempts agree)."""
    if s is None or r is None:
        return list(ASPECTS), False
    differs = []
    if s["status"] != r["status"]:
        differs.append("outcome")
    if s["node"] != r["node"] and r["node"] not in s["tiedNodes"]:
        differs.append("node")
    if Counter(s["victims"]) != Counter(r["victims"]):
        differs.append("victims")
    close = abs(s["attempts"] - r["attempts"]) <= attempt_tolerance(s["attempts"], r["attempts"])
    return differs, close


def agreement(sim: Mapping[str, Any], real: Mapping[str, Any],
              real_events: Iterable[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """The per-pod comparison of two reports, JSON-ready; with the second run's event log
    (`real_events`), each divergence a race it shows inside the real scheduler accounts for
    is `explained` (`agreementcauses`)."""
    sim_pods, real_pods = sim.get("pods") or [], real.get("pods") or []
    keys = [{f"{p['namespace']}/{p['name']}": p for p in pods} for pods in (sim_pods, real_pods)]
    counts: Counter[str] = Counter()
    divergences = []
    attempts_apart = []
    preemptions = 0
    for s_pod, r_pod in pair_pods(sim_pods, real_pods, (keys[0], keys[1])):
        s, r = _side(s_pod, keys[0]), _side(r_pod, keys[1])
        differs, close = _differs(s, r)
        counts["pods"] += 1
        if (s and s["victims"]) or (r and r["victims"]):
            preemptions += 1
            counts["preemptionsAgree"] += "victims" not in differs
        for aspect in ASPECTS:
            counts[f"{aspect}Agree"] += aspect not in differs
        counts["attemptsAgree"] += close
        if not differs:
            counts["agree"] += 1
            counts["tieFollowed"] += bool(s and r and s["node"] != r["node"])
        else:
            divergences.append({"differs": differs, "simulated": s, "real": r})
        if not close and s is not None and r is not None:
            attempts_apart.append({"pod": r["pod"], "simulated": s["attempts"],
                                   "real": r["attempts"]})
    explained = 0
    if real_events is not None:
        explained = explain(divergences, stale_quota_preemptions(real_events))
    return {
        "apiVersion": "simulator.extender/v1", "kind": KIND,
        "pods": counts["pods"], "agree": counts["agree"],
        "aspects": {a: counts[f"{a}Agree"] for a in (*ASPECTS, "attempts")},
        "preemptions": preemptions, "preemptionsAgree": counts["preemptionsAgree"],
        "tiedPlacementsOnOtherNodes": counts["tieFollowed"],
        "divergences": divergences, "explained": explained, "attemptsApart": attempts_apart,
        "sides": list(side_names(sim, real)),
        "totals": {side: {k: (rep.get("totals") or {}).get(k) for k in
                          ("pods", "scheduled", "pending", "preempted", "preemptions")}
                   for side, rep in zip(SIDES, (sim, real), strict=True)},
    }


def placed_at(side: Mapping[str, Any]) -> str:
    """" at T s" for a pod its run placed (its report's virtual seconds), else nothing."""
    at = side.get("scheduledAtSeconds")
    return f" at {at:.1f} s" if isinstance(at, int | float) else ""


def _cell(side: Mapping[str, Any] | None, paired: str) -> str:
    """One side of a divergence; `paired`: the other side's pod name, which this side's is
    shown beside when they differ (pods a controller named at random pair by owner)."""
    if side is None:
        return "(no such pod)"
    text = f"{side['status']} on {side['node'] or '-'}{placed_at(side)}"
    if len(side["tiedNodes"]) > 1:
        text += f" (tied with {len(side['tiedNodes']) - 1} more)"
    if side["victims"]:
        text += f", preempted {', '.join(side['victims'])}"
    if side["status"] == "Pending" and side["message"]:
        text += f": {side['message']}"
    if side["pod"] != paired:
        text += f" [{side['pod']}]"
    return text


def format_agreement(result: Mapping[str, Any]) -> str:
    """The text `--agreement` prints; its last line is `agreement: A/N pods`. The sides are
    named by `result["sides"]`; the JSON keeps the keys `simulated` and `real` for them."""
    n = result["pods"]
    aspects = result["aspects"]
    first, second = result.get("sides") or SIDES
    width = max(len(first), len(second)) + 1
    lines = [f"pods compared: {n} ({first} {result['totals']['simulated']['pods']}, {second} "
             f"{result['totals']['real']['pods']})"]
    if first in _REAL_FIRST:
        lines.append("  the first report is a real run: it names no tied best, so a node agrees "
                     "only where it is the same node")
    for aspect in (*ASPECTS, "attempts"):
        extra = " (within the backoff's tolerance; not part of a pod's agreement)" \
            if aspect == "attempts" else ""
        lines.append(f"  {aspect}: {aspects[aspect]}/{n} agree{extra}")
    if result["tiedPlacementsOnOtherNodes"]:
        lines.append(f"  placements on another of the simulator's tied best nodes: "
                     f"{result['tiedPlacementsOnOtherNodes']}")
    lines.append(f"  preemptions: {result['preemptionsAgree']}/{result['preemptions']} with "
                 "the same victims")
    divergences = result["divergences"]
    lines.append(f"divergences: {len(divergences)}{explained_note(result)}")
    for d in divergences:
        pod = (d["real"] or d["simulated"])["pod"]
        lines.append(f"  {pod} [{', '.join(d['differs'])}]")
        lines.append(f"    {(first + ':').ljust(width)} {_cell(d['simulated'], pod)}")
        lines.append(f"    {(second + ':').ljust(width)} {_cell(d['real'], pod)}")
        if d.get("explained"):
            lines.append(f"    {(d['cause'] + ':').ljust(width)} {d['explained']}")
    for cause, what in causes_named(divergences):
        lines.append(f"{cause}: {what}")
    if result["attemptsApart"]:
        lines.append(f"attempts apart: {len(result['attemptsApart'])}")
        for a in result["attemptsApart"]:
            lines.append(f"  {a['pod']}: {first} {a['simulated']}, {second} {a['real']}")
    lines.append(f"agreement: {result['agree']}/{n} pods")
    return "\n".join(lines) + "\n"
