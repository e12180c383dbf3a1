"""NodeResourcesBalancedAllocation: favour nodes whose resource fractions stay even.

Pre-v1.36 formula: `int((1 − std) × 100)` over `min(req / alloc, 1)` per resource, with real
requests (not the non-zero defaults). Configured weights are ignored, as in kube. A pod that
requests none of the configured resources skips the plugin (PreScore Skip, v1.33+).

Float arithmetic follows the Go code operation by operation (no `sum()`, which may compensate
rounding), so results are bit-for-bit kube's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from extender.engine.args import NodeResourcesBalancedAllocationArgs
from extender.engine.framework import (
    MAX_NODE_SCORE,
    NOT_VECTORISED,
    REUSE_ROWS,
    ClusterContext,
    CycleState,
    ScoredAsIs,
)
from extender.engine.nodetable import NodeTable
from extender.engine.scores.memo import score_key
from extender.engine.scores.resource_allocation import (
    Column,
    all_allocatable,
    cpu_memory_rows,
    cpu_memory_weights,
    memoised_by_load,
    pod_request,
    requested_load,
    resource_columns,
)
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

NAME = "NodeResourcesBalancedAllocation"


def balanced_score(fractions: Sequence[float]) -> int:
    """`balancedResourceScorer` over one node's capped fractions."""
    std = 0.0
    n = len(fractions)
    if n == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif n > 2:
        total = 0.0
        for f in fractions:
            total += f
        mean = total / n
        squares = 0.0
        for f in fractions:
            squares = squares + (f - mean) * (f - mean)
        std = math.sqrt(squares / n)
    return int((1 - std) * MAX_NODE_SCORE)


def capped_fractions(column: Column) -> list[float]:
    """`min(req / alloc, 1.0)` per node, for a column counted on every node (alloc > 0).
    Python's int/int division is correctly rounded: the same as Go's
    float64(req) / float64(alloc) for values below 2**53 (8 PiB)."""
    return [r / a if r <= a else 1.0 for a, r in zip(column.allocatable, column.requested,
                                                      strict=True)]


def balanced_pair(a_cpu: int, a_memory: int, r_cpu: int, r_memory: int) -> int | None:
    """The two-resource score over cpu and memory for one node (as the column path computes
    it, operation by operation); None when the node lacks cpu or memory allocatable."""
    if a_cpu <= 0 or a_memory <= 0:
        return None
    f_cpu = r_cpu / a_cpu if r_cpu <= a_cpu else 1.0
    f_memory = r_memory / a_memory if r_memory <= a_memory else 1.0
    return int((1 - abs((f_cpu - f_memory) / 2)) * MAX_NODE_SCORE)


class NodeResourcesBalancedAllocation(ScoredAsIs):
    name = NAME
    reply_reuse = REUSE_ROWS

    def __init__(self, args: NodeResourcesBalancedAllocationArgs | None = None) -> None:
        resources = (args or NodeResourcesBalancedAllocationArgs()).resources
        self.resources = tuple((r.name, r.weight) for r in resources)
        # The fused pass for cpu and memory (the default; this plugin ignores the weights).
        self.cpu_memory = cpu_memory_weights(self.resources) is not None


    def score_rows(self, state: CycleState, pod: PodView, table: NodeTable, rows: np.ndarray,
                   ctx: ClusterContext) -> np.ndarray | None:
        """`balanced_pair` over table rows, the same float operations in the same order."""
        if not any(pod_request(pod, name, use_requested=True) for name, _ in self.resources):
            return None
        columns = cpu_memory_rows(table, rows, pod.requests.milli_cpu, pod.requests.memory,
                                  use_requested=True) if self.cpu_memory else None
        if columns is None:
            return NOT_VECTORISED  # type: ignore[no-any-return]
        a_cpu, a_memory, r_cpu, r_memory = columns
        f_cpu = np.where(r_cpu <= a_cpu, r_cpu / a_cpu, 1.0)
        f_memory = np.where(r_memory <= a_memory, r_memory / a_memory, 1.0)
        return np.trunc((1 - np.abs((f_cpu - f_memory) / 2)) * MAX_NODE_SCORE).astype(np.int64)

    def score(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
              ctx: ClusterContext) -> list[int] | None:
        if not any(pod_request(pod, name, use_requested=True) for name, _ in self.resources):
            return None
        if self.cpu_memory:
            cpu, memory = pod.requests.milli_cpu, pod.requests.memory
            scores = memoised_by_load(nodes, score_key(NAME, cpu, memory), cpu, memory,
                                      requested_load, balanced_pair)
            if scores is not None:
                return scores
        columns = resource_columns(self.resources, pod, nodes, use_requested=True)
        if len(columns) == 2 and all_allocatable(columns[0]) and all_allocatable(columns[1]):
            # Two resources (cpu and memory, usually) on every node: std is half the difference.
            return [int((1 - abs((f0 - f1) / 2)) * MAX_NODE_SCORE)
                    for f0, f1 in zip(capped_fractions(columns[0]),
                                      capped_fractions(columns[1]), strict=True)]
        # Otherwise each node's fractions are those of the resources it has (allocatable > 0).
        scores = []
        for i in range(len(nodes)):
            fractions = []
            for column in columns:
                a = column.allocatable[i]
                if a > 0:
                    r = column.requested[i]
                    fractions.append(r / a if r <= a else 1.0)
            scores.append(balanced_score(fractions))
        return scores
