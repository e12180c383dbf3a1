"""The report's timeline: one SVG on the virtual clock (pending pods and the sub-queues, the
cluster's allocation, a row of marks per priority, node changes)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from html import escape

from extender.simulator.htmlformat import duration_label, exact, secs
from extender.simulator.runview import RunView

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


# -- the time axis ------------------------------------------------------------------------------

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
                         f'text-anchor="middle">{duration_label(t)}</text>')
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
        parts.append(_no_data(top, bottom, "no queue samples: kube-scheduler does not report "
                                           "its queues" if view.real else
                                           "no queue samples: render with the run's events "
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
        attrs = (f' data-pod="{escape(m.pod)}" data-t="{exact(m.t)}" '
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
                     f'{escape(change)} at {secs(t)}</title></line>')
        right = x(t) > WIDTH - _RIGHT - 120  # the label goes left of a line near the right edge
        parts.append(f'<text class="nodelabel" x="{_num(x(t) + (-4 if right else 4))}" '
                     f'y="{_num(30 + 10)}" text-anchor="{"end" if right else "start"}">'
                     f'{sign}{escape(node)}</text>')
    if view.end_reason:
        px = _num(x(view.end_t))
        parts.append(f'<line class="end" x1="{px}" y1="30" x2="{px}" y2="{_num(full_bottom)}">'
                     f'<title>run ended ({escape(view.end_reason)}) at {secs(view.end_t)}</title></line>')
    height_total = full_bottom + 24
    return (f'<svg id="{prefix}timeline" class="timeline" xmlns="http://www.w3.org/2000/svg" '
            f'viewBox="0 0 {WIDTH} {_num(height_total)}" role="img" '
            f'aria-label="timeline of the run on virtual time" data-end="{exact(x.end)}" '
            f'data-placements="{view.placements}" data-preemptions="{view.preemptions}">'
            + "".join(parts) + "</svg>")


def _no_data(top: float, bottom: float, text: str) -> str:
    return (f'<text class="nodata" x="{WIDTH / 2:g}" y="{_num((top + bottom) / 2)}" '
            f'text-anchor="middle">{escape(text)}</text>')
