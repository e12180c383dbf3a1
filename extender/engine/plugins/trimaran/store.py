"""Trimaran's data: the newest node load snapshot (`metrics`, in load-watcher's shape; the
metrics refresher, `evaluate(metrics=…)`, a recording's replay or the simulator's
`--utilization` sets it), and when pods became assigned to each node, as scheduler-plugins'
`PodAssignEventHandler` records them (this extender's binds and the informer's
pending-to-bound updates), for the load the metrics cannot show yet (TargetLoadPacking).
Every 5 minutes from its start, the records older than 60 s go; at most `LIMIT` are kept
besides (oldest first)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from extender.engine.stores import PluginStore
from extender.model.loadmetrics import WatcherMetrics
from extender.model.pod import PodView

CLEANUP_SECONDS = 300.0
MIN_AGE_SECONDS = 60.0
LIMIT = 65536


@dataclass
class TrimaranStore(PluginStore):
    #: node -> {uid: (Unix seconds, pod)}.
    assignments: dict[str, dict[str, tuple[float, PodView]]] = field(default_factory=dict)
    #: The same records oldest first: uid -> (node, time).
    _order: dict[str, tuple[str, float]] = field(default_factory=dict)
    #: The cleanups' phase: they run at this time + k × 5 min (k >= 1); Unix seconds.
    since: float = math.nan
    #: The newest node load snapshot; None: no source configured or nothing fetched yet.
    #: Nodes without fresh data are absent from it.
    metrics: WatcherMetrics | None = None

    def __post_init__(self) -> None:
        if math.isnan(self.since):
            self.since = self.host.wall_clock()

    def set_metrics(self, metrics: WatcherMetrics | None) -> None:
        """Replace the load snapshot (never from a request: the refresher's job)."""
        self.metrics = metrics
        self.host.changed()

    def recent(self, node_name: str) -> Sequence[tuple[float, PodView]]:
        """(Unix seconds, pod) of the pods remembered as having become assigned to the node
        that no cleanup has removed yet (a pure read: the records a cleanup would have
        removed are skipped here and dropped when the next is added)."""
        found = self.assignments.get(node_name)
        if not found:
            return ()
        now = self.host.wall_clock()
        return [entry for entry in found.values() if self._kept(entry[0], now)]

    def sizes(self) -> dict[str, int]:
        # pruned past 60 s, at most 65 536
        return {"pod_assignment_times": len(self._order)}

    # ---- pod events -----------------------------------------------------------------------
    def pod_seen(self, pod: PodView, before: PodView | None) -> None:
        if pod.node_name and before is not None and not before.node_name:
            self._note(pod)  # pending until now: it has just been bound

    def pod_assumed(self, pod: PodView, node_name: str) -> None:
        self._note(pod)

    def pod_deleted(self, namespace: str, name: str, uid: str | None) -> None:
        if uid:
            self._forget(uid)

    def assumption_dropped(self, uid: str) -> None:
        self._forget(uid)

    def pods_relisted(self, kept: Callable[[str], bool]) -> None:
        for uid in [u for u in self._order if not kept(u)]:
            self._forget(uid)

    def _note(self, pod: PodView) -> None:
        """A pod already remembered on that node keeps its first time: the bind verb's
        assumption comes before the watch confirms it."""
        known = self._order.get(pod.uid)
        if known is not None:
            if known[0] == pod.node_name:
                return
            self._forget(pod.uid)
        now = self.host.wall_clock()
        self.assignments.setdefault(pod.node_name, {})[pod.uid] = (now, pod)
        self._order[pod.uid] = (pod.node_name, now)
        order = self._order
        while order:  # oldest first, and what a cleanup removes is always the oldest
            uid, (_, at) = next(iter(order.items()))
            if self._kept(at, now) and len(order) <= LIMIT:
                break
            self._forget(uid)

    def _kept(self, at: float, now: float) -> bool:
        """Whether a record made at `at` is still there at `now`: no cleanup has run since it
        became 60 s old (the first cleanup at or after `at` + 60 s is later than `now`)."""
        due = at + MIN_AGE_SECONDS - self.since
        ticks = max(1, math.ceil(due / CLEANUP_SECONDS))
        return self.since + ticks * CLEANUP_SECONDS > now

    def _forget(self, uid: str) -> None:
        found = self._order.pop(uid, None)
        if found is None:
            return
        on_node = self.assignments.get(found[0])
        if on_node is not None:
            on_node.pop(uid, None)
            if not on_node:
                del self.assignments[found[0]]
