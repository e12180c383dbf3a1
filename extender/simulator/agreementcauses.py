"""Divergences a real run's event log explains: races inside the real scheduler, which no
prediction can settle, found in the log and named beside the divergences they cause.

One is known, **CapacityScheduling's stale quota** (scheduler-plugins). The plugin keeps each
ElasticQuota's use in a map of its own, which its own pod-informer handler updates
(`deletePod`); kube-scheduler's queue listens to the same informer apart. So a preemptor
retried on its victim's deletion can run PreFilter before the plugin has let the victim go:
refused by the quota ("total ElasticQuota used is more than min"), it preempts again, as if
the victim were still there. The simulator frees the quota and moves the pod at one instant.
In a real run's log (`--on-sandbox --events`) it reads: a preemption by a pod, beside an
attempt of that pod the quota refused, within `RETRY_WINDOW` of one of the pod's own earlier
victims ending (docs/agreement.md, *The quota example*).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

from extender.engine.plugins.capacity_scheduling import MAX_REFUSAL, MIN_REFUSAL

STALE_QUOTA = "stale quota"
#: What each cause is, said once under the divergences it explains.
CAUSES = {STALE_QUOTA: (
    "a race inside the real scheduler: CapacityScheduling keeps each quota's use in a map of "
    "its own, which its own informer handler updates apart from kube-scheduler's queue, so a "
    "pod retried on its victim's end may find the victim still counted (docs/agreement.md, "
    "The quota example)")}
#: A retry its victim's end triggered comes within milliseconds (14–20 ms in the runs read).
RETRY_WINDOW = 1.0
#: An attempt and the preemption it made are logged this close, in either order.
BESIDE = 0.1


@dataclass(frozen=True, slots=True)
class StalePreemption:
    """A preemption made on a quota that still counted one of the preemptor's own victims."""

    preemptor: str
    at: float
    victims: tuple[str, ...]
    ended: str  # the earlier victim whose end the retry followed
    after: float  # seconds from that end to the preemption


def _quota_refusal(event: Mapping[str, Any]) -> bool:
    message = event.get("message") or ""
    return event.get("result") == "unschedulable" and (
        MIN_REFUSAL in message or MAX_REFUSAL in message)


def stale_quota_preemptions(events: Iterable[Mapping[str, Any]]) -> list[StalePreemption]:
    """The preemptions of a real run's event log that followed, within `RETRY_WINDOW`, the end
    of one of the same pod's earlier victims, beside an attempt the quota refused."""
    ended: dict[str, tuple[str, float]] = {}  # preemptor -> its latest victim to end, and when
    refused: dict[str, list[float]] = {}
    candidates: list[tuple[str, float, tuple[str, ...], str, float]] = []
    for event in events:
        action, pod, t = event.get("action"), event.get("pod"), event.get("t")
        if not isinstance(pod, str) or not isinstance(t, int | float):
            continue
        if action == "attempt" and _quota_refusal(event):
            refused.setdefault(pod, []).append(t)
        elif action == "evict" and event.get("terminated") and isinstance(event.get("by"), str):
            ended[event["by"]] = (pod, t)
        elif action == "preempt" and pod in ended and 0 <= t - ended[pod][1] <= RETRY_WINDOW:
            victim, end = ended[pod]
            candidates.append((pod, t, tuple(event.get("victims") or ()), victim, end))
    return [StalePreemption(pod, t, victims, victim, round(t - end, 6))
            for pod, t, victims, victim, end in candidates
            if any(abs(t - at) <= BESIDE for at in refused.get(pod, ()))]


def explain(divergences: Sequence[MutableMapping[str, Any]],
            stale: Sequence[StalePreemption]) -> int:
    """Add `explained` to each divergence the stale preemptions account for (the `simulated`
    side a prediction, the `real` side the run whose log they came from); how many."""
    by_preemptor: dict[str, list[StalePreemption]] = {}
    for preemption in stale:
        by_preemptor.setdefault(preemption.preemptor, []).append(preemption)
    taken_by = {victim: p for p in stale for victim in p.victims}
    count = 0
    for divergence in divergences:
        sim, real = divergence.get("simulated"), divergence.get("real")
        if sim is None or real is None:
            continue
        extra = set(real["victims"]) - set(sim["victims"])
        missing = set(sim["victims"]) - set(real["victims"])
        own = [p for p in by_preemptor.get(real["pod"], ()) if extra & set(p.victims)]
        text = None
        if own and not missing and extra <= {v for p in own for v in p.victims} \
                and divergence["differs"] == ["victims"]:
            text = "; ".join(
                f"the real retry {p.after * 1000:.0f} ms after {p.ended} ended was refused by "
                f"the quota, which still counted it, and preempted "
                f"{', '.join(sorted(extra & set(p.victims)))} as well" for p in own)
        elif real["pod"] in taken_by and real["status"] == "Preempted" \
                and set(divergence["differs"]) <= {"outcome", "node"}:
            text = (f"preempted in the real run by {taken_by[real['pod']].preemptor}'s retry "
                    f"on it")
        elif missing and all(v in taken_by and taken_by[v].preemptor != real["pod"]
                             for v in missing):
            takers = sorted({taken_by[v].preemptor for v in missing})
            text = (f"{', '.join(sorted(missing))} had already gone in the real run, "
                    f"preempted by {', '.join(takers)}'s retry on it")
        if text is not None:
            divergence["cause"], divergence["explained"] = STALE_QUOTA, text
            count += 1
    return count


def explained_note(result: Mapping[str, Any]) -> str:
    """What follows the count of an agreement's divergences: how many a race explains."""
    return (f" ({result['explained']} explained by a race inside the real scheduler)"
            if result.get("explained") else "")


def causes_named(divergences: Iterable[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """Each cause the divergences name, with what it is, once."""
    return [(cause, CAUSES[cause])
            for cause in sorted({d["cause"] for d in divergences if d.get("cause")})]
