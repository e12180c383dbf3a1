"""The HTML report of a simulation: one self-contained file, for a browser.

`render_html(report, events)` turns the JSON report (`report.build_report`) and the run's
events (the `--events` lines as dicts, any iterable, in virtual-time order: `extender simulate
--html` keeps them in memory when there is no `--events` file) into one HTML page with everything inline — CSS, SVG, a few lines of JavaScript, and a
Content-Security-Policy that forbids any other request — so it can be mailed, attached to a
ticket or opened offline:

* a summary (counts, the end reason, the profile);
* a timeline on the virtual clock (SVG): pending pods and each sub-queue's size (activeQ,
  backoffQ, the unschedulable pool), the cluster's cpu/memory allocation, and one mark per
  arrival, placement (bind), preemption and eviction in a row per priority, with node changes
  as vertical lines; every mark links to its pod;
* per-plugin rejection counts (from the attempts' `plugins`: nodes rejected, attempts, pods)
  and the rejection reasons;
* a per-pod drill-down: every attempt (time, cycle, result, node, message, reasons, plugins)
  and every other event of the pod, in order;
* the nodes' allocation before and after, warnings and the run's settings.

The run is gathered in `runview.py` (events read, or rebuilt from the report), the timeline
drawn in `htmlchart.py`, times and shares written by `htmlformat.py`; this module writes the
sections and the pages. Pure string building: no plotting library, nothing the server image
lacks. The output is a
function of its inputs only (no wall-clock values): the same run gives the same bytes.

Events follow `extender simulate --events` (one object per line, `t` in virtual seconds,
`action` one of arrive, attempt, move, bind, nominate, preempt, evict, delete, complete,
node, permit, queues, end). Without events (an old report) `events_from_report` rebuilds the
arrivals and placements from the report, and the page says what it cannot show.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from extender.simulator.htmlchart import timeline_svg
from extender.simulator.htmlformat import duration_label, pct, pod_id, secs
from extender.simulator.outcomes import outcome_counts
from extender.simulator.runview import (
    Event,
    EventsError,
    RunView,
    collect,
    events_from_report,
    pod_key,
    read_events,
)

STATUS_CLASS = {"Scheduled": "ok", "Succeeded": "ok", "Pending": "bad", "Failed": "bad",
                "Rejected": "bad", "Preempted": "warn", "Deleted": "muted"}

__all__ = ["Event", "EventsError", "collect", "comparison_html", "events_from_report",
           "read_events", "render_compare_html", "render_html", "timeline_svg", "write_html"]


# -- the sections -------------------------------------------------------------------------------

#: The cards after the pods and their outcomes (`outcomes.outcome_counts`, as the summary
#: line shows them: they add up to the pods).
_ACTIVITY = ("preemptions", "attempts", "cycles")


def _card(key: str, value: Any) -> str:
    return (f'<div class="card" data-total="{key}"><div class="n">{escape(str(value))}</div>'
            f'<div class="k">{key}</div></div>')


def _summary(view: RunView) -> str:
    totals = view.report.get("totals", {})
    cards = [_card("pods", totals.get("pods", "–"))]
    cards += [_card(key, count) for key, count in outcome_counts(totals)]
    cards += [_card(key, totals.get(key, "–")) for key in _ACTIVITY]
    vt = totals.get("virtualTimeSeconds")
    cards.append(f'<div class="card" data-total="virtualTimeSeconds"><div class="n">'
                 f'{duration_label(vt) if vt else "0"}</div><div class="k">virtual time</div></div>')
    end = view.end_reason or ("horizon" if totals.get("truncated") else None)
    if end:
        cards.append(f'<div class="card" data-total="end"><div class="n">{escape(end)}</div>'
                     f'<div class="k">end</div></div>')
    return '<div class="cards">' + "".join(cards) + "</div>"


def _bar(fraction: float, cls: str = "") -> str:
    width = max(0.0, min(fraction, 1.0)) * 100
    return f'<span class="bar {cls}"><span style="width:{width:.1f}%"></span></span>'


def rejections_html(view: RunView) -> str:
    if not view.has_events:
        return '<p class="note">No attempt events: render with the run\'s events for the ' \
               'per-plugin rejection counts.</p>'
    attempts = sum(view.results.values())
    results = ", ".join(f"{n} {escape(r)}" for r, n in sorted(view.results.items()))
    out = [f'<p>{attempts} attempts: {results or "none"}.</p>']
    if not view.plugins and not view.reasons:
        out.append('<p class="note">No plugin rejected a node.</p>')
        return "".join(out)
    if not view.plugins:  # a real run: kube-scheduler's events give reasons, not plugins
        out.append('<p class="note">kube-scheduler\'s events name the reasons, not the '
                   'plugins that gave them.</p>')
        _reasons_table(out, view)
        return "".join(out)
    top = max(c.nodes for c in view.plugins.values())
    out.append('<table class="rejections" id="plugin-rejections"><thead><tr><th>plugin</th>'
               '<th class="num">nodes rejected</th><th class="num">attempts</th>'
               '<th class="num">pods</th><th></th></tr></thead><tbody>')
    for name, c in sorted(view.plugins.items(), key=lambda kv: (-kv[1].nodes, kv[0])):
        out.append(f'<tr data-plugin="{escape(name)}" data-nodes="{c.nodes}" '
                   f'data-attempts="{c.attempts}" data-pods="{len(c.pods)}"><td>{escape(name)}</td>'
                   f'<td class="num">{c.nodes}</td><td class="num">{c.attempts}</td>'
                   f'<td class="num">{len(c.pods)}</td><td class="barcell">{_bar(c.nodes / top)}</td></tr>')
    out.append("</tbody></table>")
    _reasons_table(out, view)
    return "".join(out)


def _reasons_table(out: list[str], view: RunView) -> None:
    if not view.reasons:
        return
    out.append('<h3>reasons</h3><table class="rejections" id="reason-rejections"><thead><tr>'
               '<th>reason</th><th class="num">nodes</th><th class="num">attempts</th>'
               '<th class="num">pods</th></tr></thead><tbody>')
    for reason, c in sorted(view.reasons.items(), key=lambda kv: (-kv[1].nodes, kv[0])):
        out.append(f'<tr data-nodes="{c.nodes}"><td>{escape(reason)}</td><td class="num">{c.nodes}'
                   f'</td><td class="num">{c.attempts}</td><td class="num">{len(c.pods)}</td></tr>')
    out.append("</tbody></table>")


def _counts(mapping: Mapping[str, Any] | None) -> str:
    if not mapping:
        return ""
    items = sorted(mapping.items(), key=lambda kv: (-int(kv[1]), kv[0]))
    return "<ul class=\"counts\">" + "".join(
        f"<li>{escape(str(k))} <b>×{int(v)}</b></li>" for k, v in items) + "</ul>"


def _event_detail(e: Event) -> str:
    action = e["action"]
    if action == "move":
        why = f" ({escape(e['event'])})" if e.get("event") else ""
        return f"{escape(str(e.get('from')))} → {escape(str(e.get('to')))}{why}"
    if action == "preempt":
        return (f"on {escape(str(e.get('node')))}, victims: "
                f"{escape(', '.join(e.get('victims') or [])) or 'none'}")
    if action == "evict":
        if e.get("terminated"):
            return f"terminated on {escape(str(e.get('node')))}"
        grace = e.get("gracePeriodSeconds")
        grace_text = f" (grace period {secs(float(grace))})" if grace is not None else ""
        return f"from {escape(str(e.get('node')))} by {escape(str(e.get('by')))}{grace_text}"
    if action in ("bind", "nominate"):
        return escape(str(e.get("node") or "–"))
    if action == "arrive":
        return f"priority {escape(str(e.get('priority')))}"
    if action == "permit":
        msg = f": {escape(e['message'])}" if e.get("message") else ""
        return f"{escape(str(e.get('result')))}{msg}"
    if action == "complete":
        return escape(str(e.get("phase")))
    return ""


def _or_dash(value: Any) -> str:
    """A cell's text: `–` where the report has no value (an old or a real run's report)."""
    return "–" if value is None or value == "" else str(value)


def pods_html(view: RunView, prefix: str = "") -> tuple[str, dict[str, str]]:
    """The drill-down (one `<details>` per pod) and each pod's element id."""
    pods = list(view.report.get("pods", []))
    known = {pod_key(p) for p in pods}
    for key in sorted(set(view.by_pod) - known):  # in the events only
        ns, _, name = key.partition("/")
        pods.append({"namespace": ns, "name": name, "status": "", "priority": None})
    ids = {pod_key(p): pod_id(prefix, i) for i, p in enumerate(pods)}
    out = [f'<div class="filters"><input type="search" class="podfilter" placeholder="filter pods '
           f'(name, node, status)" data-target="{prefix}pods"> '
           f'<button type="button" class="expand" data-target="{prefix}pods">expand all</button> '
           f'<button type="button" class="collapse" data-target="{prefix}pods">collapse all</button>'
           f'</div><div class="pods" id="{prefix}pods">']
    out.append('<div class="podhead"><span>pod</span><span>priority</span><span>status</span>'
               '<span>node</span><span class="num">attempts</span><span class="num">arrived</span>'
               '<span class="num">scheduled</span><span>preempted by</span></div>')
    for p in pods:
        key = pod_key(p)
        evs = view.by_pod.get(key, [])
        status = p.get("status") or ""
        node = p.get("node") or ""
        search = " ".join([key, node, status, p.get("nominatedNode") or ""]).lower()
        out.append(f'<details class="pod" id="{ids[key]}" data-pod="{escape(key)}" '
                   f'data-status="{escape(status)}" data-search="{escape(search)}">'
                   f'<summary><span class="name">{escape(key)}</span>'
                   f'<span>{escape(_or_dash(p.get("priority")))}</span>'
                   f'<span class="status {STATUS_CLASS.get(status, "")}">{escape(_or_dash(status))}</span>'
                   f'<span>{escape(node or "–")}</span>'
                   f'<span class="num">{escape(_or_dash(p.get("attempts")))}</span>'
                   f'<span class="num">{secs(p.get("arrivedAtSeconds"))}</span>'
                   f'<span class="num">{secs(p.get("scheduledAtSeconds"))}</span>'
                   f'<span>{escape(p.get("preemptedBy") or "")}</span></summary>')
        extra = []
        if p.get("message"):
            extra.append(f'<p class="msg">last message: <code>{escape(p["message"])}</code></p>')
        if p.get("preempted"):
            extra.append(f'<p>preempted: {escape(", ".join(p["preempted"]))}</p>')
        if p.get("nominatedNode"):
            extra.append(f'<p>nominated node: {escape(p["nominatedNode"])}</p>')
        out.extend(extra)
        if evs:
            out.append('<table class="events"><thead><tr><th class="num">time</th><th>event</th>'
                       '<th>result</th><th>node</th><th>details</th></tr></thead><tbody>')
            for e in evs:
                action = e["action"]
                if action == "attempt":
                    result = str(e.get("result", ""))
                    detail = ""
                    if e.get("message"):
                        detail += f'<code>{escape(e["message"])}</code>'
                    if e.get("reasons"):
                        detail += '<div><span class="lbl">reasons:</span>' + _counts(e["reasons"]) + "</div>"
                    if e.get("plugins"):
                        detail += '<div><span class="lbl">plugins:</span>' + _counts(e["plugins"]) + "</div>"
                    out.append(f'<tr class="attempt {escape(result)}" data-cycle="{e.get("cycle", "")}">'
                               f'<td class="num">{secs(float(e["t"]))}</td>'
                               f'<td>attempt {escape(str(e.get("cycle", "")))}</td>'
                               f'<td>{escape(result)}</td><td>{escape(str(e.get("node") or "–"))}</td>'
                               f'<td>{detail}</td></tr>')
                else:
                    out.append(f'<tr class="ev {escape(action)}"><td class="num">{secs(float(e["t"]))}'
                               f'</td><td>{escape(action)}</td><td></td>'
                               f'<td>{escape(str(e.get("node") or ""))}</td>'
                               f'<td>{_event_detail(e)}</td></tr>')
            out.append("</tbody></table>")
        elif not view.has_events:
            out.append('<p class="note">no events for this pod</p>')
        out.append("</details>")
    out.append("</div>")
    return "".join(out), ids


def nodes_html(report: Mapping[str, Any]) -> str:
    out = ['<table class="nodes"><thead><tr><th>node</th><th colspan="2">cpu before → after</th>'
           '<th colspan="2">memory before → after</th><th class="num">pods</th></tr></thead><tbody>']
    for n in report.get("nodes", []):
        b, a = n.get("before") or {}, n.get("after") or {}
        cells = []
        for key in ("cpuFraction", "memoryFraction"):
            fb, fa = b.get(key), a.get(key)
            cells.append(f'<td class="num">{pct(fb)} → {pct(fa)}</td>'
                         f'<td class="barcell">{_bar(fb or 0, "before")}{_bar(fa or 0, "after")}</td>')
        state = "" if n.get("before") and n.get("after") else (" (added)" if n.get("after") else " (deleted)")
        out.append(f'<tr data-node="{escape(n["name"])}"><td>{escape(n["name"])}{state}</td>'
                   + "".join(cells)
                   + f'<td class="num">{b.get("pods", "–")} → {a.get("pods", "–")}</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


def _inputs_html(report: Mapping[str, Any]) -> str:
    inputs = report.get("inputs", {})
    return ("<details><summary>settings and profile (the report's <code>inputs</code>)</summary>"
            f"<pre>{escape(json.dumps(inputs, indent=2, sort_keys=True, ensure_ascii=False))}</pre>"
            "</details>")


def _warnings_html(report: Mapping[str, Any]) -> str:
    warnings = report.get("warnings") or []
    if not warnings:
        return ""
    return ('<section id="warnings"><h2>warnings</h2><ul>'
            + "".join(f"<li>{escape(w)}</li>" for w in warnings) + "</ul></section>")


def _profile_line(report: Mapping[str, Any]) -> str:
    inputs = report.get("inputs", {})
    profile = inputs.get("profile") or {}
    scores = ", ".join(f"{s['name']}×{s['weight']}" for s in profile.get("scores", []))
    bits = [] if inputs.get("onSandbox") else [f"seed {inputs.get('seed', 0)}"]  # real: no seed
    bits.append(f"nodes searched: {inputs.get('nodeSearch', 'all')}")
    if scores:
        bits.append(f"scores: {scores}")
    if profile.get("postFilter"):
        bits.append(f"postFilter: {profile['postFilter']}")
    return escape("; ".join(bits))


# -- pages --------------------------------------------------------------------------------------

_CSS = """
:root{--fg:#1b1f24;--muted:#6a737d;--line:#d0d7de;--bg:#ffffff;--soft:#f6f8fa;
--ok:#1a7f37;--bad:#cf222e;--warn:#bf8700}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
color:var(--fg);background:var(--bg);margin:0;padding:16px 24px 48px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px;border-bottom:1px solid var(--line);
padding-bottom:4px}h3{font-size:14px;margin:16px 0 6px}
.sub{color:var(--muted);margin:0 0 12px}
nav a{margin-right:14px;color:#0969da;text-decoration:none}
.cards{display:flex;flex-wrap:wrap;gap:8px;margin:8px 0}
.card{border:1px solid var(--line);border-radius:6px;padding:6px 12px;min-width:92px;background:var(--soft)}
.card .n{font-size:20px;font-weight:600}.card .k{color:var(--muted);font-size:12px}
svg.timeline{width:100%;height:auto;display:block;border:1px solid var(--line);border-radius:6px;background:#fff}
svg .grid{stroke:#eef1f4;stroke-width:1}svg .axis{stroke:#8c959f;stroke-width:1}
svg .tick{font-size:11px;fill:var(--muted)}svg .title{font-size:13px;font-weight:600;fill:var(--fg)}
svg .legend{font-size:11px;fill:var(--fg)}svg .nodata{font-size:12px;fill:var(--muted)}
svg .series{fill:none;stroke-width:2;stroke-linejoin:round}
svg .area{fill:#d0d7de;fill-opacity:.6;stroke:none}
svg .series[data-series=pending]{stroke-width:1}
svg .range{stroke-width:1;stroke-opacity:.18;fill:none}
svg .nodechange{stroke:#8250df;stroke-dasharray:4 3;stroke-width:1.2}
svg .nodelabel{font-size:11px;fill:#8250df}
svg .end{stroke:#57606a;stroke-dasharray:2 2;stroke-width:1.2}
svg .placement{fill:#1f77b4;stroke:#fff;stroke-width:.8}
svg .preemption{fill:#d62728;stroke:#fff;stroke-width:.8}
svg .eviction{stroke:#d62728;stroke-width:2;fill:none}
svg .arrival{stroke:#8c959f;stroke-width:1.5}
svg a:hover .mark{stroke:#000;stroke-width:1.5}
table{border-collapse:collapse;margin:6px 0}th,td{padding:3px 10px;border-bottom:1px solid var(--line);
text-align:left;vertical-align:top}th{background:var(--soft);font-weight:600}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.bar{display:inline-block;width:160px;height:8px;background:#eaeef2;border-radius:4px;overflow:hidden;
vertical-align:middle;margin-right:4px}.bar>span{display:block;height:100%;background:#1f77b4}
.bar.before>span{background:#8c959f}.barcell{white-space:nowrap}
.note{color:var(--muted);font-style:italic}
.filters{margin:6px 0 8px}.filters input{padding:4px 8px;width:320px;border:1px solid var(--line);border-radius:4px}
.pods{border:1px solid var(--line);border-radius:6px}
.podhead,details.pod>summary{display:grid;grid-template-columns:minmax(180px,2.2fr) 70px 90px minmax(90px,1fr)
70px 90px 90px minmax(120px,1.2fr);gap:8px;padding:4px 10px;align-items:baseline}
.podhead{background:var(--soft);font-weight:600;border-bottom:1px solid var(--line)}
details.pod{border-bottom:1px solid var(--line)}details.pod>summary{cursor:pointer;list-style:none}
details.pod>summary::-webkit-details-marker{display:none}
details.pod>summary .name::before{content:"▸ ";color:var(--muted)}
details.pod[open]>summary .name::before{content:"▾ "}
details.pod[open]{background:#fbfcfd}details.pod>:not(summary){margin-left:24px;margin-right:10px}
details.pod:target>summary{background:#fff8c5}
.status.ok{color:var(--ok)}.status.bad{color:var(--bad)}.status.warn{color:var(--warn)}.status.muted{color:var(--muted)}
table.events td{font-size:13px}tr.attempt.unschedulable td,tr.attempt.error td{background:#fff5f5}
tr.attempt.scheduled td{background:#f3fbf5}tr.attempt.waiting td{background:#fffbea}
ul.counts{display:inline;margin:0;padding:0}ul.counts li{display:inline;margin-left:8px}
ul.counts li+li::before{content:"· ";color:var(--muted)}
table.events td:nth-child(-n+4){white-space:nowrap}.events .lbl{color:var(--muted)}code{font-size:12px;white-space:pre-wrap;word-break:break-word}
.columns{display:grid;grid-template-columns:repeat(auto-fit,minmax(640px,1fr));gap:24px}
.columns>*{min-width:0;overflow-x:auto}
.diff td.changed{background:#fff8c5}
pre{background:var(--soft);padding:8px;border-radius:6px;overflow:auto}
"""

_JS = """
(function(){
  function pods(id){return document.getElementById(id);}
  document.querySelectorAll('input.podfilter').forEach(function(input){
    input.addEventListener('input',function(){
      var q=input.value.trim().toLowerCase(), box=pods(input.dataset.target);
      box.querySelectorAll('details.pod').forEach(function(d){
        d.hidden = q!=='' && d.dataset.search.indexOf(q)<0;
      });
    });
  });
  document.querySelectorAll('button.expand,button.collapse').forEach(function(b){
    b.addEventListener('click',function(){
      var open=b.classList.contains('expand');
      pods(b.dataset.target).querySelectorAll('details.pod').forEach(function(d){
        if(!d.hidden){d.open=open;}
      });
    });
  });
  function reveal(){
    var id=decodeURIComponent(location.hash.slice(1)), el=id&&document.getElementById(id);
    if(el&&el.tagName==='DETAILS'){el.open=true;}
  }
  window.addEventListener('hashchange',reveal);reveal();
  var svgs=document.querySelectorAll('svg.timeline');
  document.documentElement.dataset.ready=String(svgs.length);
})();
"""

#: Nothing but this document's own inline styles and scripts (and data: images) may load.
_CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
        "img-src data:")


def _page(title: str, body: str) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{_CSP}\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>\n"
            f"{body}\n<script>{_JS}</script></body></html>\n")


def _run_sections(view: RunView, prefix: str, *, end: float | None = None) -> dict[str, str]:
    """The sections of one run (ids prefixed, so two runs fit one page)."""
    pods, ids = pods_html(view, prefix)
    note = "" if view.has_events else (
        '<p class="note">Rendered from the report alone: the run\'s events (queue sizes, '
        'allocation over time, preemptions, attempts) were not given.</p>')
    return {
        "summary": _summary(view),
        "timeline": note + timeline_svg(view, end=end, prefix=prefix, pod_ids=ids),
        "rejections": rejections_html(view),
        "pods": pods,
        "nodes": nodes_html(view.report),
        "inputs": _inputs_html(view.report),
        "warnings": _warnings_html(view.report),
    }


def render_html(report: Mapping[str, Any], events: Iterable[Event] | None = None, *,
                title: str = "extender simulate") -> str:
    """One self-contained HTML page for a run: its report and (optionally) its events."""
    view = collect(report, events)
    s = _run_sections(view, "")
    body = (f"<header><h1>{escape(title)}</h1><p class=\"sub\">{_profile_line(report)}</p>"
            '<nav><a href="#timeline-section">timeline</a><a href="#rejections">rejections</a>'
            '<a href="#pods-section">pods</a><a href="#nodes">nodes</a></nav></header>'
            f'<section id="summary">{s["summary"]}</section>'
            f'<section id="timeline-section"><h2>timeline (virtual time)</h2>{s["timeline"]}</section>'
            f'<section id="rejections"><h2>rejections by plugin</h2>{s["rejections"]}</section>'
            f'<section id="pods-section"><h2>pods</h2>{s["pods"]}</section>'
            f'<section id="nodes"><h2>nodes: allocation before → after</h2>{s["nodes"]}</section>'
            f'{s["warnings"]}<section id="inputs"><h2>inputs</h2>{s["inputs"]}</section>')
    return _page(title, body)


def render_compare_html(runs: Sequence[tuple[str, Mapping[str, Any], Iterable[Event] | None]],
                        comparison: Mapping[str, Any] | None, *,
                        title: str = "extender simulate --compare",
                        differences: str | None = None,
                        subtitle: str = "same cluster, workload and seed") -> str:
    """Two runs on one page: the differences first (`comparison` drawn by `comparison_html`,
    or `differences` as given), then each run's timeline on one shared time axis, their
    rejections side by side, and each run's drill-down."""
    views = [(name, collect(report, events)) for name, report, events in runs]
    end = max(v.end_t for _, v in views)
    sections = [(name, _run_sections(v, f"{chr(97 + i)}-", end=end))
                for i, (name, v) in enumerate(views)]
    names = [name for name, _ in views]
    body = [f"<header><h1>{escape(title)}</h1>"
            f"<p class=\"sub\">{' vs '.join(escape(n) for n in names)} — {escape(subtitle)}"
            f"</p><nav><a href=\"#differences\">differences</a><a href=\"#timelines\">"
            "timelines</a><a href=\"#rejections\">rejections</a><a href=\"#pods-section\">pods</a>"
            "</nav></header>"]
    if differences is None:
        assert comparison is not None
        differences = comparison_html(comparison)
    body.append(f'<section id="differences"><h2>differences</h2>{differences}</section>')
    body.append('<section id="timelines"><h2>timelines (virtual time, one axis)</h2>')
    for name, s in sections:
        body.append(f"<h3>{escape(name)}</h3>{s['summary']}{s['timeline']}")
    body.append('</section><section id="rejections"><h2>rejections by plugin</h2><div class="columns">')
    for name, s in sections:
        body.append(f"<div><h3>{escape(name)}</h3>{s['rejections']}</div>")
    body.append('</div></section><section id="pods-section"><h2>pods</h2>')
    for name, s in sections:
        body.append(f"<h3>{escape(name)}</h3>{s['pods']}")
    body.append('</section><section id="inputs"><h2>inputs</h2>')
    for name, s in sections:
        body.append(f"<h3>{escape(name)}</h3>{s['warnings']}{s['inputs']}")
    body.append("</section>")
    return _page(title, "".join(body))


def comparison_html(comparison: Mapping[str, Any]) -> str:
    """The comparison (`compare.compare_reports`) as tables: totals, pods, nodes."""
    a, b = (escape(n) for n in comparison["names"])
    out = [f'<table class="diff" id="compare-totals"><thead><tr><th></th><th class="num">{a}</th>'
           f'<th class="num">{b}</th></tr></thead><tbody>']
    for key, (va, vb) in comparison["totals"].items():
        cls = ' class="num changed"' if va != vb else ' class="num"'
        out.append(f'<tr data-total="{escape(key)}"><td>{escape(key)}</td><td{cls}>'
                   f'{escape(_fmt(va))}</td><td{cls}>{escape(_fmt(vb))}</td></tr>')
    out.append("</tbody></table>")
    pods = comparison["pods"]
    out.append(f"<h3>pods that differ: {len(pods)} of {comparison['podCount']}</h3>")
    if pods:
        out.append(f'<table class="diff" id="compare-pods"><thead><tr><th>pod</th><th>{a}</th>'
                   f'<th>{b}</th></tr></thead><tbody>')
        for d in pods:
            cells = []
            for side in ("a", "b"):
                s = d[side]
                cells.append("–" if s is None else
                             f"{s['node'] or '–'} · {s['status']} · {secs(s['scheduledAtSeconds'])}")
            out.append(f'<tr data-pod="{escape(d["pod"])}" data-differs="{escape(",".join(d["differs"]))}">'
                       f'<td>{escape(d["pod"])}</td><td class="changed">{escape(cells[0])}</td>'
                       f'<td class="changed">{escape(cells[1])}</td></tr>')
        out.append("</tbody></table>")
    out.append('<h3>nodes at the end</h3><table class="diff" id="compare-nodes"><thead><tr>'
               f'<th>node</th><th colspan="3">{a}: cpu, memory, pods</th>'
               f'<th colspan="3">{b}: cpu, memory, pods</th></tr></thead><tbody>')
    for n in comparison["nodes"]:
        row = [f'<td>{escape(n["name"])}</td>']
        for side in ("a", "b"):
            s = n[side] or {}
            other = n["b" if side == "a" else "a"] or {}
            for key, fmt in (("cpuFraction", pct), ("memoryFraction", pct), ("pods", _fmt)):
                cls = "num changed" if s.get(key) != other.get(key) else "num"
                row.append(f'<td class="{cls}">{escape(fmt(s.get(key)))}</td>')
        out.append(f'<tr data-node="{escape(n["name"])}">' + "".join(row) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def write_html(text: str, path: str | Path) -> None:
    Path(path).write_text(text, encoding="utf-8")
