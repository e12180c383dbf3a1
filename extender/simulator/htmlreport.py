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

Pure string building: no plotting library, nothing the server image lacks. The output is a
function of its inputs only (no wall-clock values): the same run gives the same bytes.

Events follow `extender simulate --events` (one object per line, `t` in virtual seconds,
`action` one of arrive, attempt, move, bind, nominate, preempt, evict, delete, complete,
node, permit, queues, end). Without events (an old report) `events_from_report` rebuilds the
arrivals and placements from the report, and the page says what it cannot show.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any, TextIO

Event = Mapping[str, Any]

#: The timeline's drawing width (viewBox units; the SVG scales to the page).
WIDTH = 1200
_LEFT, _RIGHT = 78, 24
_QUEUE_HEIGHT, _ALLOC_HEIGHT, _ROW = 190, 150, 28
_PAD = 10  # between the y axis and time 0
_MARK_R = 4.5
#: Distinct priorities with a row of their own; more than this share a linear scale.
MAX_PRIORITY_ROWS = 16

QUEUE_SERIES = (("pending", "pending (not bound)", "#57606a"),
                ("active", "activeQ", "#1f77b4"),
                ("backoff", "backoffQ", "#ff7f0e"),
                ("unschedulable", "unschedulable pool", "#d62728"))
ALLOC_SERIES = (("cpuAllocated", "cpu requested / allocatable", "#1f77b4"),
                ("memoryAllocated", "memory requested / allocatable", "#2ca02c"))
STATUS_CLASS = {"Scheduled": "ok", "Pending": "bad", "Preempted": "warn", "Deleted": "muted"}


class EventsError(ValueError):
    """An events file that is not JSON lines of objects with `t` and `action`."""


def read_events(source: str | Path | TextIO) -> Iterator[dict[str, Any]]:
    """The events of an `--events` file (a path, or an open text stream), one dict per
    non-blank line."""
    if isinstance(source, (str, Path)):
        with open(source, encoding="utf-8") as fh:
            yield from _parse_lines(fh, str(source))
    else:
        yield from _parse_lines(source, getattr(source, "name", "<events>"))


def _parse_lines(lines: Iterable[str], name: str) -> Iterator[dict[str, Any]]:
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError as exc:
            raise EventsError(f"{name}:{number}: not JSON: {exc.msg}") from None
        if not isinstance(event, dict) or "t" not in event or "action" not in event:
            raise EventsError(f"{name}:{number}: not an event (an object with t and action)")
        yield event


def events_from_report(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What a report alone tells of the run's events: arrivals and placements (binds).

    Preemption times, queue sizes, allocation over time and attempts are not in the report;
    the HTML says so when it is rendered from these."""
    out: list[dict[str, Any]] = []
    for p in report.get("pods", []):
        key = f"{p['namespace']}/{p['name']}"
        if p.get("arrivedAtSeconds") is not None:
            out.append({"t": p["arrivedAtSeconds"], "action": "arrive", "pod": key,
                        "priority": p.get("priority", 0)})
        if p.get("scheduledAtSeconds") is not None and p.get("node"):
            if p.get("arrivedAtSeconds") == p["scheduledAtSeconds"] and p.get("attempts") == 0:
                continue  # arrived bound (spec.nodeName): not a placement
            out.append({"t": p["scheduledAtSeconds"], "action": "bind", "pod": key,
                        "node": p["node"]})
    order = {"arrive": 0, "bind": 1}
    out.sort(key=lambda e: (e["t"], order[e["action"]], e["pod"]))
    return out


# -- gathering ----------------------------------------------------------------------------------

@dataclass
class Mark:
    t: float
    kind: str  # arrival, placement, preemption, eviction
    pod: str
    priority: int
    title: str


@dataclass
class PluginCount:
    nodes: int = 0  # nodes it rejected, summed over attempts
    attempts: int = 0  # attempts in which it rejected at least one node
    pods: set[str] = field(default_factory=set)


@dataclass
class RunView:
    """One pass over a run's events, with its report: what the page draws."""

    report: Mapping[str, Any]
    has_events: bool
    samples: list[tuple[float, Mapping[str, Any]]] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    node_changes: list[tuple[float, str, str]] = field(default_factory=list)
    by_pod: dict[str, list[Event]] = field(default_factory=lambda: defaultdict(list))
    plugins: dict[str, PluginCount] = field(default_factory=lambda: defaultdict(PluginCount))
    reasons: dict[str, PluginCount] = field(default_factory=lambda: defaultdict(PluginCount))
    results: Counter[str] = field(default_factory=Counter)
    priorities: dict[str, int] = field(default_factory=dict)
    end_reason: str | None = None
    end_t: float = 0.0
    last_t: float = 0.0

    @property
    def placements(self) -> int:
        return sum(1 for m in self.marks if m.kind == "placement")

    @property
    def preemptions(self) -> int:
        return sum(1 for m in self.marks if m.kind == "preemption")


def pod_key(p: Mapping[str, Any]) -> str:
    return f"{p['namespace']}/{p['name']}"


def collect(report: Mapping[str, Any], events: Iterable[Event] | None) -> RunView:
    """Gather what the page shows. `events` None (or empty): rebuilt from the report."""
    listed = list(events) if events is not None else []
    view = RunView(report, has_events=bool(listed))
    if not listed:
        listed = events_from_report(report)
    priorities = {pod_key(p): int(p.get("priority") or 0) for p in report.get("pods", [])}
    for e in listed:  # arrivals first: a pod's priority as it arrived
        if e.get("action") == "arrive" and "priority" in e:
            priorities.setdefault(e["pod"], int(e["priority"]))
    for e in listed:
        t = float(e["t"])
        view.last_t = max(view.last_t, t)
        action = e["action"]
        pod = e.get("pod")
        if pod:
            view.by_pod[pod].append(e)
        prio = priorities.get(pod or "", 0)
        if action == "queues":
            view.samples.append((t, e))
        elif action == "arrive":
            view.marks.append(Mark(t, "arrival", pod, prio,
                                   f"{pod} arrives at {_secs(t)} (priority {prio})"))
        elif action == "bind":
            view.marks.append(Mark(t, "placement", pod, prio,
                                   f"{pod} → {e.get('node')} at {_secs(t)} (priority {prio})"))
        elif action == "preempt":
            victims = ", ".join(e.get("victims") or []) or "no victim"
            view.marks.append(Mark(t, "preemption", pod, prio,
                                   f"{pod} preempts on {e.get('node')} at {_secs(t)} "
                                   f"(priority {prio}): {victims}"))
        elif action == "evict" and not e.get("terminated"):
            view.marks.append(Mark(t, "eviction", pod, prio,
                                   f"{pod} evicted from {e.get('node')} by {e.get('by')} at "
                                   f"{_secs(t)} (priority {prio})"))
        elif action == "node":
            view.node_changes.append((t, e.get("node", ""), e.get("change", "")))
        elif action == "attempt":
            view.results[e.get("result", "")] += 1
            for name, n in (e.get("plugins") or {}).items():
                _count(view.plugins[name], int(n), pod)
            for reason, n in (e.get("reasons") or {}).items():
                _count(view.reasons[reason], int(n), pod)
        elif action == "end":
            view.end_reason = e.get("reason")
    totals = report.get("totals", {})
    if view.end_reason is None:
        view.end_reason = totals.get("endReason")
    view.end_t = max(float(totals.get("virtualTimeSeconds") or 0.0), view.last_t)
    view.priorities = priorities
    return view


def _count(c: PluginCount, n: int, pod: str | None) -> None:
    if n > 0:
        c.nodes += n
        c.attempts += 1
        if pod:
            c.pods.add(pod)


# -- formatting ---------------------------------------------------------------------------------

def _secs(t: float | None) -> str:
    if t is None:
        return "–"
    return f"{t:.3f}".rstrip("0").rstrip(".") + " s" if t else "0 s"


def _duration_label(t: float) -> str:
    """An axis label: 0, 250ms, 1.5s, 2m, 1h30m."""
    if t == 0:
        return "0"
    if t < 1:
        return f"{t * 1000:.4g}ms"
    if t < 60:
        return f"{t:.4g}s"
    total = round(t)
    h, rem = divmod(total, 3600)
    m, s = divmod(rem, 60)
    parts = (f"{h}h" if h else "") + (f"{m}m" if m else "") + (f"{s}s" if s else "")
    return parts or "0"


_TIME_STEPS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30,
               60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)


def _time_ticks(end: float, target: int = 10) -> list[float]:
    step = next((s for s in _TIME_STEPS if end / s <= target), None)
    if step is None:
        step = 86400 * math.ceil(end / 86400 / target)
    n = int(end / step + 1e-9)
    return [round(i * step, 6) for i in range(n + 1)]


def _nice_ceiling(value: float) -> float:
    if value <= 0:
        return 1
    exp = 10 ** math.floor(math.log10(value))
    for m in (1, 2, 2.5, 5, 10):
        if value <= m * exp:
            return m * exp
    return 10 * exp


def _num(x: float) -> str:
    """An SVG coordinate: one decimal, no trailing zeros."""
    s = f"{x:.1f}"
    return s[:-2] if s.endswith(".0") else s


def _exact(t: float) -> str:
    """Seconds for a data attribute: to the nanosecond, no trailing zeros."""
    return f"{t:.9f}".rstrip("0").rstrip(".")


def _pct(fraction: float | None) -> str:
    return "–" if fraction is None else f"{100 * fraction:.1f}%"


def _pod_id(prefix: str, index: int) -> str:
    return f"{prefix}pod-{index}"


# -- the timeline (SVG) -------------------------------------------------------------------------

class _XScale:
    def __init__(self, end: float) -> None:
        self.end = end if end > 0 else 1.0
        self.span = WIDTH - _LEFT - _RIGHT - _PAD

    def __call__(self, t: float) -> float:
        return _LEFT + _PAD + self.span * min(max(t, 0.0), self.end) / self.end


def _step_series(points: Sequence[tuple[float, float]], end_x: float) -> tuple[str, str]:
    """A step line through (x, y) samples (pixels) held to `end_x`, and the faint range strokes
    of its busy pixel columns: (polyline points, path data).

    A column with one change draws it exactly (a vertical step). A column with several (a long
    run: thousands of changes over 1200 px) draws their time-weighted mean on the line and their
    range (the least to the greatest value held) as a vertical stroke, so peaks stay visible
    and the line does not become a wall; either way a few points per pixel."""
    out: list[tuple[float, float]] = []
    ranges: list[str] = []
    prev: float | None = None
    last_busy: int | None = None
    exit_point: tuple[float, float] | None = None

    def add(x: float, y: float) -> None:
        if not out or out[-1] != (x, y):
            out.append((x, y))

    # Only changes matter: a sample repeating the value before it adds nothing to the line.
    points = [p for k, p in enumerate(points) if k == 0 or p[1] != points[k - 1][1]]
    i = 0
    while i < len(points):
        column = round(points[i][0])
        j = i
        while j < len(points) and round(points[j][0]) == column:
            j += 1
        group = points[i:j]
        i = j
        busy = len(group) > 1
        if exit_point is not None and not (busy and last_busy == column - 1):
            add(*exit_point)
        exit_point = None
        if not busy:
            x, y = round(group[0][0], 1), group[0][1]
            if prev is not None:
                add(x, prev)
            add(x, y)
            prev = y
            continue
        left, right = column - 0.5, column + 0.5
        held = ([(left, prev)] if prev is not None else []) + list(group)
        weighted = total = 0.0
        for k, (xk, yk) in enumerate(held):
            until = held[k + 1][0] if k + 1 < len(held) else right
            w = max(until - max(xk, left), 0.0)
            weighted += w * yk
            total += w
        mean = weighted / total if total > 0 else group[-1][1]
        values = [y for _, y in held]
        lo, hi = min(values), max(values)
        if prev is not None and last_busy != column - 1:
            add(left, prev)
        add(float(column), round(mean, 1))
        if hi > lo:
            ranges.append(f"M{_num(column)} {_num(lo)}V{_num(hi)}")
        prev = group[-1][1]
        last_busy = column
        exit_point = (min(right, end_x), prev)
    if exit_point is not None:
        add(*exit_point)
    if out and out[-1][0] < end_x:
        out.append((end_x, out[-1][1]))
    # Drop the middle of three points on one horizontal, or on one vertical when it lies
    # between the other two.
    slim: list[tuple[float, float]] = []
    for p in out:
        if len(slim) >= 2:
            (x0, y0), (x1, y1) = slim[-2], slim[-1]
            if (y0 == y1 == p[1]) or (x0 == x1 == p[0] and min(y0, p[1]) <= y1 <= max(y0, p[1])):
                slim[-1] = p
                continue
        slim.append(p)
    return " ".join(f"{_num(x)},{_num(y)}" for x, y in slim), "".join(ranges)


def _series(parts: list[str], key: str, label: str, colour: str,
            points: Sequence[tuple[float, float]], end_x: float) -> None:
    line, ranges = _step_series(points, end_x)
    if ranges:
        parts.append(f'<path class="range" data-series="{key}" stroke="{colour}" d="{ranges}"/>')
    parts.append(f'<polyline class="series" data-series="{key}" stroke="{colour}" '
                 f'points="{line}"><title>{escape(label)}</title></polyline>')


def _axis(parts: list[str], x: _XScale, top: float, bottom: float, label_axis: bool) -> None:
    for t in _time_ticks(x.end):
        px = _num(x(t))
        parts.append(f'<line class="grid" x1="{px}" y1="{_num(top)}" x2="{px}" y2="{_num(bottom)}"/>')
        if label_axis:
            parts.append(f'<text class="tick" x="{px}" y="{_num(bottom + 14)}" '
                         f'text-anchor="middle">{_duration_label(t)}</text>')
    parts.append(f'<line class="axis" x1="{_LEFT}" y1="{_num(bottom)}" '
                 f'x2="{WIDTH - _RIGHT}" y2="{_num(bottom)}"/>')
    parts.append(f'<line class="axis" x1="{_LEFT}" y1="{_num(top)}" x2="{_LEFT}" '
                 f'y2="{_num(bottom)}"/>')


def _legend(parts: list[str], items: Sequence[tuple[str, str, str]], y: float) -> None:
    """Legend entries (swatch kind, label, colour) right-aligned above a panel."""
    x = WIDTH - _RIGHT
    for kind, label, colour in reversed(items):
        width = 7.0 * len(label) + 22
        x -= width
        if kind == "area":
            parts.append(f'<rect class="area" x="{_num(x)}" y="{_num(y - 9)}" width="14" '
                         f'height="10"/>')
        elif kind == "line":
            parts.append(f'<line x1="{_num(x)}" y1="{_num(y - 4)}" x2="{_num(x + 14)}" '
                         f'y2="{_num(y - 4)}" stroke="{colour}" stroke-width="2.5"/>')
        else:
            parts.append(_mark_shape(kind, x + 7, y - 4))
        parts.append(f'<text class="legend" x="{_num(x + 18)}" y="{_num(y)}">{escape(label)}</text>')


def _mark_shape(kind: str, cx: float, cy: float, attrs: str = "", title: str = "") -> str:
    """One mark: an arrival tick, a placement circle, a preemption triangle, an eviction cross.
    `attrs` and a `<title>` (the tooltip) go on marks of the timeline, not on legend swatches."""
    r = _MARK_R
    cls = f' class="mark {kind}"{attrs}' if attrs else f' class="swatch {kind}"'
    if kind == "placement":
        tag, geometry = "circle", f'cx="{_num(cx)}" cy="{_num(cy)}" r="{r}"'
    elif kind == "preemption":
        tag, geometry = "polygon", (f'points="{_num(cx - r - 1)},{_num(cy - r)} '
                                    f'{_num(cx + r + 1)},{_num(cy - r)} {_num(cx)},{_num(cy + r + 1)}"')
    elif kind == "eviction":
        tag, geometry = "path", (f'd="M{_num(cx - r)} {_num(cy - r)}L{_num(cx + r)} {_num(cy + r)}'
                                 f'M{_num(cx - r)} {_num(cy + r)}L{_num(cx + r)} {_num(cy - r)}"')
    else:  # arrival
        tag, geometry = "line", (f'x1="{_num(cx)}" y1="{_num(cy - r - 1)}" x2="{_num(cx)}" '
                                 f'y2="{_num(cy + r + 1)}"')
    if title:
        return f"<{tag}{cls} {geometry}><title>{escape(title)}</title></{tag}>"
    return f"<{tag}{cls} {geometry}/>"


_MARK_LEGEND = (("arrival", "arrival", ""), ("placement", "placement (bind)", ""),
                ("preemption", "preemption (preemptor)", ""), ("eviction", "eviction (victim)", ""))


def timeline_svg(view: RunView, *, end: float | None = None, prefix: str = "",
                 pod_ids: Mapping[str, str] | None = None) -> str:
    """The timeline of one run. `end` fixes the time axis (two runs side by side share one)."""
    x = _XScale(view.end_t if end is None else end)
    pod_ids = pod_ids or {}
    parts: list[str] = []
    y = 8.0
    # 1. queue sizes
    top, bottom = y + 26, y + _QUEUE_HEIGHT
    parts.append(f'<g class="panel" id="{prefix}panel-queues">')
    parts.append(f'<text class="title" x="{_LEFT}" y="{_num(y + 12)}">pods pending and in each '
                 'sub-queue</text>')
    _legend(parts, [("area" if key == "pending" else "line", label, colour)
                    for key, label, colour in QUEUE_SERIES], y + 13)
    _axis(parts, x, top, bottom, label_axis=True)
    if view.samples:
        peak = max(max(int(s.get(k) or 0) for k, _, _ in QUEUE_SERIES) for _, s in view.samples)
        ystep = max(1, int(_nice_ceiling(peak / 5))) if peak > 5 else 1
        ymax = max(math.ceil(peak / ystep) * ystep, ystep)
        for v in range(0, ymax + 1, ystep):
            py = bottom - (bottom - top) * v / ymax
            parts.append(f'<line class="grid" x1="{_LEFT}" y1="{_num(py)}" x2="{WIDTH - _RIGHT}" '
                         f'y2="{_num(py)}"/>')
            parts.append(f'<text class="tick" x="{_LEFT - 6}" y="{_num(py + 4)}" '
                         f'text-anchor="end">{v}</text>')
        # Pending as a shaded area under the sub-queues' lines (it is their sum plus the pods
        # being scheduled or waiting at Permit).
        pending = [(x(t), bottom - (bottom - top) * float(s.get("pending") or 0) / ymax)
                   for t, s in view.samples]
        line, _ = _step_series(pending, x(x.end))
        first = line.split(" ", 1)[0].split(",")[0]
        parts.append(f'<polygon class="area" data-series="pending-area" '
                     f'points="{first},{_num(bottom)} {line} {_num(x(x.end))},{_num(bottom)}"/>')
        for key, label, colour in QUEUE_SERIES:
            pts = [(x(t), bottom - (bottom - top) * float(s.get(key) or 0) / ymax)
                   for t, s in view.samples]
            _series(parts, key, label, colour, pts, x(x.end))
    else:
        parts.append(_no_data(top, bottom, "no queue samples: render with the run's events "
                                           "(extender simulate --html, or --events)"))
    parts.append("</g>")
    y = bottom + 24
    # 2. allocation
    top, bottom = y + 26, y + _ALLOC_HEIGHT
    parts.append(f'<g class="panel" id="{prefix}panel-allocation">')
    parts.append(f'<text class="title" x="{_LEFT}" y="{_num(y + 12)}">cluster allocation '
                 '(requests / allocatable)</text>')
    _legend(parts, [("line", label, colour) for _, label, colour in ALLOC_SERIES], y + 13)
    _axis(parts, x, top, bottom, label_axis=True)
    for v in (0, 25, 50, 75, 100):
        py = bottom - (bottom - top) * v / 100
        parts.append(f'<line class="grid" x1="{_LEFT}" y1="{_num(py)}" x2="{WIDTH - _RIGHT}" '
                     f'y2="{_num(py)}"/>')
        parts.append(f'<text class="tick" x="{_LEFT - 6}" y="{_num(py + 4)}" '
                     f'text-anchor="end">{v}%</text>')
    if view.samples:
        for key, label, colour in ALLOC_SERIES:
            pts = [(x(t), bottom - (bottom - top) * min(float(s.get(key) or 0), 1.0))
                   for t, s in view.samples]
            _series(parts, key, label, colour, pts, x(x.end))
    else:
        parts.append(_no_data(top, bottom, "no allocation samples"))
    parts.append("</g>")
    y = bottom + 24
    # 3. marks by priority
    priorities = sorted({m.priority for m in view.marks}, reverse=True) or [0]
    rows = len(priorities) <= MAX_PRIORITY_ROWS
    height = (len(priorities) if rows else MAX_PRIORITY_ROWS) * _ROW + 8
    top, bottom = y + 26, y + 26 + height
    parts.append(f'<g class="panel" id="{prefix}panel-marks">')
    parts.append(f'<text class="title" x="{_LEFT}" y="{_num(y + 12)}">arrivals, placements, '
                 'preemptions and evictions by priority</text>')
    _legend(parts, list(_MARK_LEGEND), y + 13)
    _axis(parts, x, top, bottom, label_axis=True)
    if rows:
        row_y = {p: top + _ROW * (i + 0.5) + 4 for i, p in enumerate(priorities)}
        for p, py in row_y.items():
            parts.append(f'<line class="grid" x1="{_LEFT}" y1="{_num(py)}" x2="{WIDTH - _RIGHT}" '
                         f'y2="{_num(py)}"/>')
            parts.append(f'<text class="tick" x="{_LEFT - 6}" y="{_num(py + 4)}" '
                         f'text-anchor="end">{p}</text>')

        def prio_y(p: int) -> float:
            return row_y[p]
    else:
        lo, hi = priorities[-1], priorities[0]

        def prio_y(p: int) -> float:
            return bottom - 8 - (bottom - top - 16) * (p - lo) / (hi - lo)

        for p in (lo, hi):
            parts.append(f'<text class="tick" x="{_LEFT - 6}" y="{_num(prio_y(p) + 4)}" '
                         f'text-anchor="end">{p}</text>')
    parts.append(f'<text class="tick" x="14" y="{_num((top + bottom) / 2)}" text-anchor="middle" '
                 f'transform="rotate(-90 14 {_num((top + bottom) / 2)})">priority</text>')
    # Marks on the same pixel of the same row spread around it (up, down, up...), so three
    # binds in the same millisecond show as three marks.
    stacked: Counter[tuple[str, int, int]] = Counter()
    order = {"arrival": 0, "placement": 1, "preemption": 2, "eviction": 3}
    for m in sorted(view.marks, key=lambda m: (order[m.kind], m.t, m.pod)):
        cx, cy = x(m.t), prio_y(m.priority)
        if m.kind != "arrival":  # ticks that coincide read as one; the others alternate
            slot = (m.kind, m.priority, round(cx / (2 * _MARK_R)))
            n = stacked[slot]
            stacked[slot] += 1
            cy += (-1 if n % 2 else 1) * min((n + 1) // 2, 2) * _MARK_R * 1.2
        attrs = (f' data-pod="{escape(m.pod)}" data-t="{_exact(m.t)}" '
                 f'data-priority="{m.priority}"')
        shape = _mark_shape(m.kind, cx, cy, attrs, m.title)
        href = pod_ids.get(m.pod)
        parts.append(f'<a href="#{href}">{shape}</a>' if href else shape)
    parts.append("</g>")
    full_bottom = bottom
    # node changes and the end, across every panel
    for t, node, change in view.node_changes:
        px = _num(x(t))
        sign = {"add": "+", "delete": "−", "update": "~"}.get(change, "")
        parts.append(f'<line class="nodechange" data-node="{escape(node)}" data-change="{escape(change)}" '
                     f'x1="{px}" y1="30" x2="{px}" y2="{_num(full_bottom)}"><title>node {escape(node)} '
                     f'{escape(change)} at {_secs(t)}</title></line>')
        right = x(t) > WIDTH - _RIGHT - 120  # the label goes left of a line near the right edge
        parts.append(f'<text class="nodelabel" x="{_num(x(t) + (-4 if right else 4))}" '
                     f'y="{_num(30 + 10)}" text-anchor="{"end" if right else "start"}">'
                     f'{sign}{escape(node)}</text>')
    if view.end_reason:
        px = _num(x(view.end_t))
        parts.append(f'<line class="end" x1="{px}" y1="30" x2="{px}" y2="{_num(full_bottom)}">'
                     f'<title>run ended ({escape(view.end_reason)}) at {_secs(view.end_t)}</title></line>')
    height_total = full_bottom + 24
    return (f'<svg id="{prefix}timeline" class="timeline" xmlns="http://www.w3.org/2000/svg" '
            f'viewBox="0 0 {WIDTH} {_num(height_total)}" role="img" '
            f'aria-label="timeline of the run on virtual time" data-end="{_exact(x.end)}" '
            f'data-placements="{view.placements}" data-preemptions="{view.preemptions}">'
            + "".join(parts) + "</svg>")


def _no_data(top: float, bottom: float, text: str) -> str:
    return (f'<text class="nodata" x="{WIDTH / 2:g}" y="{_num((top + bottom) / 2)}" '
            f'text-anchor="middle">{escape(text)}</text>')


# -- the sections -------------------------------------------------------------------------------

_TOTALS = (("pods", "pods"), ("scheduled", "scheduled"), ("pending", "pending"),
           ("preempted", "preempted"), ("deleted", "deleted"), ("preemptions", "preemptions"),
           ("attempts", "attempts"), ("cycles", "cycles"))


def _summary(view: RunView) -> str:
    totals = view.report.get("totals", {})
    cards = [f'<div class="card" data-total="{key}"><div class="n">{escape(str(totals.get(key, "–")))}'
             f'</div><div class="k">{label}</div></div>' for key, label in _TOTALS]
    vt = totals.get("virtualTimeSeconds")
    cards.append(f'<div class="card" data-total="virtualTimeSeconds"><div class="n">'
                 f'{_duration_label(vt) if vt else "0"}</div><div class="k">virtual time</div></div>')
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
    if not view.plugins:
        out.append('<p class="note">No plugin rejected a node.</p>')
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
    if view.reasons:
        out.append('<h3>reasons</h3><table class="rejections" id="reason-rejections"><thead><tr>'
                   '<th>reason</th><th class="num">nodes</th><th class="num">attempts</th>'
                   '<th class="num">pods</th></tr></thead><tbody>')
        for reason, c in sorted(view.reasons.items(), key=lambda kv: (-kv[1].nodes, kv[0])):
            out.append(f'<tr data-nodes="{c.nodes}"><td>{escape(reason)}</td><td class="num">{c.nodes}'
                       f'</td><td class="num">{c.attempts}</td><td class="num">{len(c.pods)}</td></tr>')
        out.append("</tbody></table>")
    return "".join(out)


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
        grace_text = f" (grace period {_secs(float(grace))})" if grace is not None else ""
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


def pods_html(view: RunView, prefix: str = "") -> tuple[str, dict[str, str]]:
    """The drill-down (one `<details>` per pod) and each pod's element id."""
    pods = list(view.report.get("pods", []))
    known = {pod_key(p) for p in pods}
    for key in sorted(set(view.by_pod) - known):  # in the events only
        ns, _, name = key.partition("/")
        pods.append({"namespace": ns, "name": name, "status": "", "priority": None})
    ids = {pod_key(p): _pod_id(prefix, i) for i, p in enumerate(pods)}
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
                   f'<span>{escape(str(p.get("priority", "")))}</span>'
                   f'<span class="status {STATUS_CLASS.get(status, "")}">{escape(status)}</span>'
                   f'<span>{escape(node or "–")}</span>'
                   f'<span class="num">{escape(str(p.get("attempts", "–")))}</span>'
                   f'<span class="num">{_secs(p.get("arrivedAtSeconds"))}</span>'
                   f'<span class="num">{_secs(p.get("scheduledAtSeconds"))}</span>'
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
                               f'<td class="num">{_secs(float(e["t"]))}</td>'
                               f'<td>attempt {escape(str(e.get("cycle", "")))}</td>'
                               f'<td>{escape(result)}</td><td>{escape(str(e.get("node") or "–"))}</td>'
                               f'<td>{detail}</td></tr>')
                else:
                    out.append(f'<tr class="ev {escape(action)}"><td class="num">{_secs(float(e["t"]))}'
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
            cells.append(f'<td class="num">{_pct(fb)} → {_pct(fa)}</td>'
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
    bits = [f"seed {inputs.get('seed', 0)}", f"nodes searched: {inputs.get('nodeSearch', 'all')}"]
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
.columns{display:grid;grid-template-columns:1fr 1fr;gap:24px}
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
                             f"{s['node'] or '–'} · {s['status']} · {_secs(s['scheduledAtSeconds'])}")
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
            for key, fmt in (("cpuFraction", _pct), ("memoryFraction", _pct), ("pods", _fmt)):
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
