"""TaintToleration (score): fewer untolerated PreferNoSchedule taints score higher.

Raw score: the node's PreferNoSchedule taints not tolerated by the pod's tolerations whose
effect is empty or PreferNoSchedule (a NoSchedule toleration does not count). Normalised in
reverse: the node with most such taints gets 0, nodes with none get 100.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from extender.engine.args import NoArgs
from extender.engine.framework import MAX_NODE_SCORE, ClusterContext, CycleState
from extender.engine.nodetable import NodeTable
from extender.engine.scores.memo import memoised, score_key
from extender.engine.scores.normalize import default_normalize_score, normalize_rows
from extender.model.node import NodeView
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


def per_taint_set(tolerations: tuple[Toleration, ...]) -> Callable[[NodeView], int]:
    """`count_intolerable` for a view, counted once per distinct taint set: most nodes share
    a few sets (often the empty one), which matters when many views miss their memo."""
    counts: dict[tuple[Taint, ...], int] = {}

    def count(view: NodeView) -> int:
        taints = view.taints
        found = counts.get(taints)
        if found is None:
            found = counts[taints] = count_intolerable(taints, tolerations)
        return found

    return count


class TaintToleration:
    name = NAME

    def __init__(self, args: NoArgs | None = None) -> None:
        pass

    def raw_scores(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
                   ctx: ClusterContext) -> list[int]:
        """Score: each node's count of untolerated PreferNoSchedule taints."""
        tolerations = prefer_no_schedule_tolerations(pod.tolerations)
        # The count depends only on the node's taints and these tolerations: a workload's
        # pods reuse each node's count.
        key = score_key(NAME, tolerations)
        return memoised(nodes, key, per_taint_set(tolerations))

    def score_rows(self, state: CycleState, pod: PodView, table: NodeTable, rows: np.ndarray,
                   ctx: ClusterContext) -> np.ndarray:
        """`score` over table rows: the count memoised per row, normalised in numpy."""
        tolerations = prefer_no_schedule_tolerations(pod.tolerations)
        count = per_taint_set(tolerations)
        raw, _ = table.memoised(score_key(NAME, tolerations), rows,
                                lambda info, memo: count(info.node))
        return normalize_rows(MAX_NODE_SCORE, True, raw)

    def normalize(self, raw: list[int], state: CycleState) -> list[int]:
        """NormalizeScore: reversed, the most taints 0 and none 100 (in place)."""
        return default_normalize_score(MAX_NODE_SCORE, True, raw)

    def score(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
              ctx: ClusterContext) -> list[int]:
        return self.normalize(self.raw_scores(state, pod, nodes, ctx), state)
