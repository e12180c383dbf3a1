"""Several profiles in one scheduler (a KubeSchedulerConfiguration's `profiles[]`).

kube-scheduler runs one queue and one cache for all its profiles; each pod is scheduled by the
framework its `spec.schedulerName` names, and a pod no profile names is another scheduler's.
Every profile must use the same QueueSort (its validation refuses others). `ProfileRouting` is
a mixin of `loop.Simulation`: the pod's profile and algorithm (own `percentageOfNodesToScore`;
the RNG and `nextStartNodeIndex` are the scheduler's, shared).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from extender.engine.plugins.coscheduling.core import NAME as COSCHEDULING
from extender.engine.profile import Profile
from extender.engine.queuesort import queue_sort_plugin
from extender.model.pod import PodView
from extender.simulator.schedule import Algorithm

DEFAULT_SCHEDULER_NAME = "default-scheduler"


@dataclass(frozen=True)
class SchedulingProfile:
    """One profile: the pods whose `spec.schedulerName` is `scheduler_name` (none:
    "default-scheduler") are scheduled with `profile` and its own percentageOfNodesToScore."""

    scheduler_name: str
    profile: Profile
    #: None: filter every node; 0: kube-scheduler's adaptive sampling; 1..100: that percentage.
    percentage_of_nodes_to_score: int | None = None


def queue_sort_name(profile: Profile) -> str:
    """The profile's QueueSort: Coscheduling's when its filter is enabled, else the policy's
    `plugins.queueSort` (PrioritySort by default)."""
    if any(getattr(f, "name", "") == COSCHEDULING for f in profile.filters):
        return COSCHEDULING
    plugin = queue_sort_plugin(profile.policy)
    return "PrioritySort" if plugin is None else str(getattr(plugin, "name", type(plugin).__name__))


def check_profiles(profiles: Sequence[SchedulingProfile]) -> None:
    """What one queue needs of several profiles, or a ValueError: distinct scheduler names,
    one QueueSort for all (kube-scheduler refuses profiles that differ in it), and no
    Coscheduling (its Permit and PostFilter state is one per loop for now)."""
    names = [p.scheduler_name or DEFAULT_SCHEDULER_NAME for p in profiles]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"several profiles name schedulerName {duplicates[0]!r}")
    if len(profiles) < 2:
        return
    sorts = {name: queue_sort_name(p.profile) for name, p in zip(names, profiles, strict=True)}
    if len(set(sorts.values())) > 1:
        raise ValueError("every profile must use the same QueueSort plugin, as kube-scheduler "
                         "requires: " + ", ".join(f"{n} {s}" for n, s in sorts.items()))
    if COSCHEDULING in sorts.values():
        raise ValueError("Coscheduling is not supported with several profiles yet: keep it in "
                         "a configuration with one profile")


class ProfileRouting:
    """Which profile schedules a pod (a mixin of `loop.Simulation`)."""

    _schedulers: dict[str, tuple[Profile, Algorithm]] | None
    _unrouted: dict[str, int]
    profile: Profile
    algorithm: Algorithm
    records: dict[str, Any]
    settled: int

    def _scheduler_for(self, pod: PodView) -> tuple[Profile, Algorithm]:
        if self._schedulers is None:
            return self.profile, self.algorithm
        return self._schedulers[pod.scheduler_name or DEFAULT_SCHEDULER_NAME]

    def _routed(self, pod: PodView) -> bool:
        """Whether a pending pod has a profile (always, without routing). One without is left
        to another scheduler, as kube-scheduler leaves it: it stays Pending, unqueued."""
        if self._schedulers is None:
            return True
        name = pod.scheduler_name or DEFAULT_SCHEDULER_NAME
        if name in self._schedulers:
            return True
        self._unrouted[name] = self._unrouted.get(name, 0) + 1
        self.records[pod.uid].failure = (f"no profile has schedulerName {name!r}: left to "
                                         "another scheduler")
        self.settled += 1
        return False
