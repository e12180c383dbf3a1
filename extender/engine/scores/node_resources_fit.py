"""NodeResourcesFit (score): LeastAllocated, MostAllocated or RequestedToCapacityRatio.

Each strategy scores one resource column (a list over the nodes); the plugin then takes the
weighted mean over the resources each node counts. No normalisation step: the per-node
score is already 0..100 (kube's Fit has no ScoreExtensions).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from extender.engine.args import NodeResourcesFitArgs, UtilizationShapePoint
from extender.engine.framework import (
    MAX_NODE_SCORE,
    NOT_VECTORISED,
    ClusterContext,
    CycleState,
    ScoredAsIs,
)
from extender.engine.nodetable import NodeTable
from extender.engine.scores.memo import score_key
from extender.engine.scores.normalize import go_div
from extender.engine.scores.resource_allocation import (
    Column,
    PairScorer,
    all_allocatable,
    cpu_memory_rows,
    cpu_memory_weights,
    memoised_by_load,
    non_zero_load,
    resource_columns,
)
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

NAME = "NodeResourcesFit"

#: Shape scores are configured on 0..10 (`MaxCustomPriorityScore`) and scaled to 0..100.
SHAPE_SCORE_SCALE = MAX_NODE_SCORE // 10
MAX_UTILIZATION = 100

#: Scores one resource over the nodes: (allocatable, requested) lists → per-node scores.
ColumnScorer = Callable[[list[int], list[int]], list[int]]


def least_allocated(allocatable: list[int], requested: list[int]) -> list[int]:
    """`(alloc − req) × 100 / alloc`, 0 when the node would be over-committed."""
    return [((a - r) * MAX_NODE_SCORE // a if r <= a else 0) if a > 0 else 0
            for a, r in zip(allocatable, requested, strict=True)]


def most_allocated(allocatable: list[int], requested: list[int]) -> list[int]:
    """`min(req, alloc) × 100 / alloc`: clamped, since non-zero defaults can overshoot."""
    return [(r if r < a else a) * MAX_NODE_SCORE // a if a > 0 else 0
            for a, r in zip(allocatable, requested, strict=True)]


def broken_linear(shape: Sequence[tuple[int, int]], p: int) -> int:
    """`helper.BuildBrokenLinearFunction`: piecewise linear through (utilization, score)
    points, flat before the first and after the last. Go's truncating division matters on
    downward slopes: [(0, 100), (3, 0)] at 1 is 100 − 33 = 67, not 100 − 34."""
    for i, (utilization, score) in enumerate(shape):
        if p <= utilization:
            if i == 0:
                return score
            prev_utilization, prev_score = shape[i - 1]
            return prev_score + go_div((score - prev_score) * (p - prev_utilization),
                                       utilization - prev_utilization)
    return shape[-1][1]


def scaled_shape(points: Sequence[UtilizationShapePoint]) -> list[tuple[int, int]]:
    return [(p.utilization, p.score * SHAPE_SCORE_SCALE) for p in points]


def requested_to_capacity_ratio(shape: Sequence[tuple[int, int]]) -> ColumnScorer:
    """The shape applied to `req × 100 / alloc`, or to 100 when over-committed.

    Utilisation is an integer in 0..100, so the shape is tabulated once per plugin.
    """
    table = [broken_linear(shape, p) for p in range(MAX_UTILIZATION + 1)]
    full, empty = table[MAX_UTILIZATION], table[0]

    def score(allocatable: list[int], requested: list[int]) -> list[int]:
        # A negative request (invalid anyway) maps below every point, i.e. to the first score.
        return [(table[r * MAX_UTILIZATION // a] if 0 <= r <= a else full if r > a else empty)
                if a > 0 else 0
                for a, r in zip(allocatable, requested, strict=True)]

    return score


def weighted_mean(columns: Sequence[Column], scores: Sequence[list[int]], count: int) -> list[int]:
    """`Σ sᵢ·wᵢ / Σ wᵢ` per node over the resources it has (allocatable > 0), 0 if none."""
    if all(all_allocatable(c) for c in columns):
        weight_sum = sum(c.weight for c in columns)
        if weight_sum == 0:
            return [0] * count
        if len(columns) == 2:  # cpu and memory: the common configuration
            w0, w1 = columns[0].weight, columns[1].weight
            return [(s0 * w0 + s1 * w1) // weight_sum
                    for s0, s1 in zip(scores[0], scores[1], strict=True)]
        totals = [0] * count
        for column, part in zip(columns, scores, strict=True):
            w = column.weight
            totals = [t + s * w for t, s in zip(totals, part, strict=True)]
        return [t // weight_sum for t in totals]
    totals, weights = [0] * count, [0] * count
    for column, part in zip(columns, scores, strict=True):
        w = column.weight
        totals = [t + s * w for t, s in zip(totals, part, strict=True)]
        weights = [ws + w if a > 0 else ws
                   for ws, a in zip(weights, column.allocatable, strict=True)]
    return [t // ws if ws else 0 for t, ws in zip(totals, weights, strict=True)]


def rounded_positive_mean(columns: Sequence[Column], scores: Sequence[list[int]],
                          count: int) -> list[int]:
    """RequestedToCapacityRatio's mean: only resources scoring > 0 count, in the sum and in
    the weights; Go's `math.Round` (half away from zero) of the float quotient, done here in
    exact integers (`(2t + w) // 2w`): for these magnitudes the float quotient of a half is
    exact and of anything else is far from a half, so the two agree."""
    totals, weights = [0] * count, [0] * count
    for column, part in zip(columns, scores, strict=True):
        w = column.weight
        totals = [t + s * w for t, s in zip(totals, part, strict=True)]
        weights = [ws + w if s > 0 else ws for ws, s in zip(weights, part, strict=True)]
    return [(2 * t + ws) // (2 * ws) if ws else 0 for t, ws in zip(totals, weights, strict=True)]


def least_allocated_pair(w_cpu: int, w_memory: int) -> PairScorer:
    """`least_allocated` on cpu and memory and their `weighted_mean`, for one node."""
    weight_sum = w_cpu + w_memory

    def score(a_cpu: int, a_memory: int, r_cpu: int, r_memory: int) -> int | None:
        if a_cpu <= 0 or a_memory <= 0:
            return None
        s_cpu = (a_cpu - r_cpu) * MAX_NODE_SCORE // a_cpu if r_cpu <= a_cpu else 0
        s_memory = (a_memory - r_memory) * MAX_NODE_SCORE // a_memory if r_memory <= a_memory else 0
        return (s_cpu * w_cpu + s_memory * w_memory) // weight_sum

    return score


def most_allocated_pair(w_cpu: int, w_memory: int) -> PairScorer:
    """`most_allocated` on cpu and memory and their `weighted_mean`, for one node."""
    weight_sum = w_cpu + w_memory

    def score(a_cpu: int, a_memory: int, r_cpu: int, r_memory: int) -> int | None:
        if a_cpu <= 0 or a_memory <= 0:
            return None
        s_cpu = (r_cpu if r_cpu < a_cpu else a_cpu) * MAX_NODE_SCORE // a_cpu
        s_memory = (r_memory if r_memory < a_memory else a_memory) * MAX_NODE_SCORE // a_memory
        return (s_cpu * w_cpu + s_memory * w_memory) // weight_sum

    return score


#: The one-node scorers, by strategy, for the cpu-and-memory configuration.
CPU_MEMORY_PAIRS = {"LeastAllocated": least_allocated_pair, "MostAllocated": most_allocated_pair}


class NodeResourcesFit(ScoredAsIs):
    """The scoring half of NodeResourcesFit; the filter half lives in `engine.filters`."""

    name = NAME

    def __init__(self, args: NodeResourcesFitArgs | None = None) -> None:
        strategy = (args or NodeResourcesFitArgs()).scoring_strategy
        self.resources = tuple((r.name, r.weight) for r in strategy.resources)
        self.strategy = strategy.type
        self.column_scorer: ColumnScorer
        self.combine = weighted_mean
        if strategy.type == "LeastAllocated":
            self.column_scorer = least_allocated
        elif strategy.type == "MostAllocated":
            self.column_scorer = most_allocated
        else:
            assert strategy.requested_to_capacity_ratio is not None  # validated by the args
            shape = scaled_shape(strategy.requested_to_capacity_ratio.shape)
            self.column_scorer = requested_to_capacity_ratio(shape)
            self.combine = rounded_positive_mean
        # The fused pass for cpu and memory, when configured so (the default) with weights that
        # do not sum to 0 (a case the column path covers).
        self.score_pair: PairScorer | None = None
        self.pair_weights: tuple[int, int] | None = None
        weights = cpu_memory_weights(self.resources)
        pair = CPU_MEMORY_PAIRS.get(strategy.type)
        if pair is not None and weights is not None and sum(weights) > 0:
            self.score_pair = pair(*weights)
            self.pair_weights = weights

    def score_rows(self, state: CycleState, pod: PodView, table: NodeTable, rows: np.ndarray,
                   ctx: ClusterContext) -> np.ndarray:
        """The fused cpu-and-memory pass over table rows (LeastAllocated, MostAllocated)."""
        columns = cpu_memory_rows(table, rows, pod.scoring_non_zero_cpu,
                                  pod.scoring_non_zero_memory, use_requested=False)
        if self.pair_weights is None or columns is None:
            return NOT_VECTORISED
        a_cpu, a_memory, r_cpu, r_memory = columns
        if self.strategy == "LeastAllocated":
            s_cpu = np.where(r_cpu <= a_cpu, (a_cpu - r_cpu) * MAX_NODE_SCORE // a_cpu, 0)
            s_memory = np.where(r_memory <= a_memory,
                                (a_memory - r_memory) * MAX_NODE_SCORE // a_memory, 0)
        else:
            s_cpu = np.minimum(r_cpu, a_cpu) * MAX_NODE_SCORE // a_cpu
            s_memory = np.minimum(r_memory, a_memory) * MAX_NODE_SCORE // a_memory
        w_cpu, w_memory = self.pair_weights
        return (s_cpu * w_cpu + s_memory * w_memory) // (w_cpu + w_memory)  # type: ignore[no-any-return]


    def score(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo], ctx: ClusterContext) -> list[int]:
        if self.score_pair is not None:
            cpu, memory = pod.scoring_non_zero_cpu, pod.scoring_non_zero_memory
            key = score_key(NAME, self.strategy, self.resources, cpu, memory)
            fused = memoised_by_load(nodes, key, cpu, memory, non_zero_load, self.score_pair)
            if fused is not None:
                return fused
        columns = resource_columns(self.resources, pod, nodes, use_requested=False)
        scorer = self.column_scorer
        per_column = [scorer(c.allocatable, c.requested) for c in columns]
        return self.combine(columns, per_column, len(nodes))
