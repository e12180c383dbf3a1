"""TaintToleration (score): fewer untolerated PreferNoSchedule taints score higher.

Raw score: the node's PreferNoSchedule taints not tolerated by the pod's tolerations whose
effect is empty or PreferNoSchedule (a NoSchedule toleration does not count). Normalised in
reverse: the node with most such taints gets 0, nodes with none get 100.
"""

from __future__ import annotations

from collections.abc import Sequence

from extender.engine.args import NoArgs
from extender.engine.framework import MAX_NODE_SCORE, ClusterContext
from extender.engine.scores.normalize import default_normalize_score
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.model.taints import PREFER_NO_SCHEDULE, Taint, Toleration, tolerates_any

NAME = "TaintToleration"


def prefer_no_schedule_tolerations(tolerations: Sequence[Toleration]) -> tuple[Toleration, ...]:
    """The tolerations PreScore keeps: an empty effect means every effect."""
    return tuple(t for t in tolerations if t.effect in ("", PREFER_NO_SCHEDULE))


def count_intolerable(taints: Sequence[Taint], tolerations: tuple[Toleration, ...]) -> int:
    return sum(1 for taint in taints
               if taint.effect == PREFER_NO_SCHEDULE and not tolerates_any(tolerations, taint))


class TaintToleration:
    name = NAME

    def __init__(self, args: NoArgs | None = None) -> None:
        pass

    def score(self, pod: PodView, nodes: Sequence[NodeInfo], ctx: ClusterContext) -> list[int]:
        tolerations = prefer_no_schedule_tolerations(pod.tolerations)
        # Taint sets are interned by the state, so identity names a distinct set: each is
        # counted once per request however many nodes share it. The nodes keep the sets
        # alive for the whole loop, so ids cannot be reused meanwhile.
        counts: dict[int, int] = {}
        raw = []
        append = raw.append
        for node in nodes:
            taints = node.node.taints
            if not taints:
                append(0)
                continue
            key = id(taints)
            count = counts.get(key)
            if count is None:
                count = counts[key] = count_intolerable(taints, tolerations)
            append(count)
        return default_normalize_score(MAX_NODE_SCORE, True, raw)
