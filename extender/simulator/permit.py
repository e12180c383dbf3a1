"""The Permit stage's waiting pods (kube-scheduler's `waitingPodsMap`), on virtual time.

A Permit plugin answering Wait leaves the pod assumed on its node (its room taken, counted by
`CalculateAssignedPods` and the quotas) until a plugin allows it, something rejects it, or its
timeout passes. Only Coscheduling answers Wait among the plugins modelled here.
"""

from __future__ import annotations

from dataclasses import dataclass

from extender.engine.waiting import MAX_PERMIT_TIMEOUT_NS, go_duration, timeout_message
from extender.simulator.clock import TimelineEntry as _TimelineEntry
from extender.simulator.queue import QueuedPodInfo

__all__ = ["MAX_PERMIT_TIMEOUT", "WaitingPod", "go_duration", "timeout_message"]

#: `RunPermitPlugins` caps a plugin's wait at 15 minutes (framework runtime `maxTimeout`).
MAX_PERMIT_TIMEOUT = MAX_PERMIT_TIMEOUT_NS


@dataclass(slots=True, eq=False)
class WaitingPod:
    """A pod held at Permit: assumed on `node`, rejected at `since + wait` unless allowed."""

    info: QueuedPodInfo  # the queue's bookkeeping of the pod's scheduling attempt
    node: str
    plugin: str
    group: tuple[str, str]  # (namespace, PodGroup)
    since: int
    wait: int
    timer: _TimelineEntry | None = None

    @property
    def uid(self) -> str:
        return str(self.info.pod.uid)

    @property
    def deadline(self) -> int:
        return self.since + self.wait
