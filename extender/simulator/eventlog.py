"""`extender simulate --events FILE`: what happened, one JSON object per line, in virtual time.

Every line is `{"t": <virtual seconds>, "action": "<action>", ...}` (the fields of each action
are listed in extender/simulator/README.md). Keys keep a fixed order and nested maps are sorted,
nothing comes from the wall clock: the same inputs and seed give the same bytes. Without
`--events` the simulation holds no `EventLog` and does no work for it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TextIO

from extender.simulator.clock import to_seconds
from extender.simulator.queue import QueuedPodInfo

if TYPE_CHECKING:
    from extender.model.pod import PodView

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))

#: The plugin named for a node an extender's filter rejected (its status names no plugin).
EXTENDER = "Extender"


def rejection_counts(statuses: Mapping[str, Any]) -> tuple[dict[str, int], dict[str, int]]:
    """({plugin: nodes it rejected}, {reason: nodes}) from a FitError's node -> Status map;
    both sorted by key."""
    plugins: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for status in statuses.values():
        plugins[getattr(status, "plugin", "") or EXTENDER] += 1
        for reason in getattr(status, "reasons", ()):
            reasons[reason] += 1
    return dict(sorted(plugins.items())), dict(sorted(reasons.items()))


class EventLog:
    """Writes event lines to a text stream (the caller opens and closes it)."""

    __slots__ = ("_write", "lines")

    def __init__(self, stream: TextIO) -> None:
        self._write = stream.write
        self.lines = 0

    def emit(self, t: int, action: str, **fields: Any) -> None:
        """One line at virtual time `t` (ns); `fields` in the order given."""
        self._write(_encoder.encode({"t": to_seconds(t), "action": action, **fields}))
        self._write("\n")
        self.lines += 1


class EventLogging:
    """The simulation's writes to its `--events` log (a mixin of `loop.Simulation`; only called
    when there is a log)."""

    def _log_move(self, pod: PodView, source: str, target: str, event: str) -> None:
        assert self.events is not None
        self.events.emit(self.clock.now(), "move", pod=pod.key, **{"from": source},
                         to=target, event=event)

    def _log_attempt(self, info: QueuedPodInfo, result: str, node: str = "", *,
                     statuses: Mapping[str, Any] | None = None) -> None:
        assert self.events is not None
        pod = info.pod
        fields: dict[str, Any] = {"pod": pod.key, "cycle": self.cycles, "result": result}
        if node:
            fields["node"] = node
        else:
            fields["message"] = self.records[pod.uid].message
        plugins, reasons = rejection_counts(statuses or {})
        fields["plugins"] = plugins
        fields["reasons"] = reasons
        self.events.emit(self.clock.now(), "attempt", **fields)

    def _allocated(self) -> tuple[float, float]:
        """Cluster-wide requested / allocatable cpu and memory (0..1), per state version."""
        if self._allocation is None or self._allocation[0] != self.version:
            used_cpu = used_mem = all_cpu = all_mem = 0
            for info in self.state.nodes.values():
                used_cpu += info.requested.milli_cpu
                used_mem += info.requested.memory
                alloc = info.node.allocatable
                all_cpu += alloc.milli_cpu
                all_mem += alloc.memory
            self._allocation = (self.version, (
                round(used_cpu / all_cpu, 6) if all_cpu else 0.0,
                round(used_mem / all_mem, 6) if all_mem else 0.0))
        return self._allocation[1]

    def _log_queues(self, t: int) -> None:
        """The sub-queue sizes and allocation at the end of instant `t`, when they changed."""
        assert self.events is not None
        queue = self.queue
        cpu, memory = self._allocated()
        sample = (queue.num_active, queue.num_backoff, queue.num_unschedulable,
                  len(self.pending), cpu, memory)
        if sample == self._queue_sample:
            return
        self._queue_sample = sample
        self.events.emit(t, "queues", active=sample[0], backoff=sample[1],
                         unschedulable=sample[2], pending=sample[3], cpuAllocated=cpu,
                         memoryAllocated=memory)
