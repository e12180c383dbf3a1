"""scheduler-plugins' PreemptionToleration: victims whose PriorityClass tolerates the preemptor.

The policy is in the victim's PriorityClass annotations: preemptors below
`minimum-preemptable-priority` (default: the class value + 1) cannot evict the victim while it
has been scheduled for less than `toleration-seconds` (default 0: no toleration; negative:
forever).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from extender.model.disruption import PriorityClassView
from extender.model.pod import PodView

log = logging.getLogger(__name__)

PLUGIN = "PreemptionToleration"
ANNOTATION_PREFIX = "preemption-toleration.scheduling.x-k8s.io/"
MINIMUM_PREEMPTABLE_PRIORITY = ANNOTATION_PREFIX + "minimum-preemptable-priority"
TOLERATION_SECONDS = ANNOTATION_PREFIX + "toleration-seconds"

# Go's strconv.ParseInt(s, 10, bits): optional sign, decimal digits, nothing else
# (Python's int() would also accept spaces and underscores).
_GO_INT = re.compile(r"[+-]?[0-9]+")


def _parse_go_int(text: str, bits: int) -> int:
    if not _GO_INT.fullmatch(text):
        raise ValueError(f"invalid syntax: {text!r}")
    value = int(text)
    if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
        raise ValueError(f"value out of range: {text!r}")
    return value


@dataclass(frozen=True, slots=True)
class TolerationPolicy:
    minimum_preemptable_priority: int
    toleration_seconds: int


def toleration_policy(priority_class: PriorityClassView) -> TolerationPolicy:
    """The class's policy with upstream defaults; ValueError on an unparsable annotation."""
    annotations = priority_class.annotations
    minimum = annotations.get(MINIMUM_PREEMPTABLE_PRIORITY)
    seconds = annotations.get(TOLERATION_SECONDS)
    return TolerationPolicy(
        priority_class.value + 1 if minimum is None else _parse_go_int(minimum, 32),
        0 if seconds is None else _parse_go_int(seconds, 64),
    )


def exempted_from_preemption(victim: PodView, preemptor: PodView,
                             priority_class: PriorityClassView | None, now: float) -> bool:
    """Whether `victim` tolerates preemption by `preemptor` at `now` (`ExemptedFromPreemption`).

    `priority_class` is the victim's class as the cluster state knows it. Upstream fails the
    whole node when the class cannot be read; here an unknown class exempts just this victim,
    which keeps the same promise (nothing the policy might protect is evicted) without losing
    the node's other victims.
    """
    if not victim.priority_class_name:
        return False
    if priority_class is None:
        log.warning("PriorityClass %r of pod %s is unknown; treating the pod as exempt from "
                    "preemption", victim.priority_class_name, victim.key)
        return True
    if preemptor.preemption_policy == "Never":
        return True
    try:
        policy = toleration_policy(priority_class)
    except ValueError as exc:
        # Upstream: a broken policy grants no toleration at all.
        log.warning("PriorityClass %r has an invalid preemption toleration policy (%s); pod %s "
                    "does not tolerate preemption", priority_class.name, exc, victim.key)
        return False
    if preemptor.priority >= policy.minimum_preemptable_priority:
        return False
    if policy.toleration_seconds < 0:
        return True
    if victim.scheduled_time is None:  # no PodScheduled=True condition yet
        return True
    return victim.scheduled_time + policy.toleration_seconds > now
