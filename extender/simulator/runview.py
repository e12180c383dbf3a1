"""A run as the HTML report reads it: the `--events` lines (or, without them, what the report
alone tells) gathered in one pass into a `RunView` — timeline samples, marks, node changes,
each pod's events, rejection counts per plugin and per reason."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from extender.simulator.htmlformat import secs

Event = Mapping[str, Any]


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
    def real(self) -> bool:
        """A run of the real kube-scheduler (`--on-sandbox`), not a simulation."""
        return bool(self.report.get("inputs", {}).get("onSandbox"))

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
                                   f"{pod} arrives at {secs(t)} (priority {prio})"))
        elif action == "bind":
            view.marks.append(Mark(t, "placement", pod, prio,
                                   f"{pod} → {e.get('node')} at {secs(t)} (priority {prio})"))
        elif action == "preempt":
            victims = ", ".join(e.get("victims") or []) or "no victim"
            view.marks.append(Mark(t, "preemption", pod, prio,
                                   f"{pod} preempts on {e.get('node')} at {secs(t)} "
                                   f"(priority {prio}): {victims}"))
        elif action == "evict" and not e.get("terminated"):
            view.marks.append(Mark(t, "eviction", pod, prio,
                                   f"{pod} evicted from {e.get('node')} by {e.get('by')} at "
                                   f"{secs(t)} (priority {prio})"))
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
