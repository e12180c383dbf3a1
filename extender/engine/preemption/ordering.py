"""Which pod matters more: kube-scheduler's `MoreImportantPod` and the start-time helpers.

Higher priority first; at equal priority the pod that started earlier is more important (it
has done more work). A pod without `status.startTime` counts as started `now`, as upstream's
`GetPodStartTime` does, which is why every function here takes the clock reading.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from extender.model.pod import PodView


def start_time(pod: PodView, now: float) -> float:
    """`status.startTime` in epoch seconds, or `now` when the pod has not started."""
    return now if pod.start_time is None else pod.start_time


def importance_key(pod: PodView, now: float) -> tuple[int, float]:
    """Sort key putting the most important pod first."""
    return -pod.priority, start_time(pod, now)


def more_important_pod(a: PodView, b: PodView, now: float) -> bool:
    """Whether `a` is strictly more important than `b`."""
    if a.priority != b.priority:
        return a.priority > b.priority
    return start_time(a, now) < start_time(b, now)


def by_importance(pods: Iterable[PodView], now: float) -> list[PodView]:
    """The pods most important first. Stable, so equal pods keep their given order."""
    given = list(pods)
    if len(given) < 2:  # often a single victim: nothing to compare
        return given
    return sorted(given, key=lambda p: importance_key(p, now))


def earliest_start_of_highest(victims: Sequence[PodView], now: float) -> float:
    """`GetEarliestPodStartTime`: the earliest start among the highest-priority victims
    (`victims` must not be empty)."""
    top = max(p.priority for p in victims)
    return min(start_time(p, now) for p in victims if p.priority == top)
