"""NodeResourcesBalancedAllocation: favour nodes whose resource fractions stay even.

The balance of a node is `int((1 − std) × 100)` over `min(req / alloc, 1)` per resource, with
real requests (not the non-zero defaults). Before v1.36 the score is the balance with the pod
added; from v1.36 it is the pod's effect on it, `50 + (50 + with − without) / 2` (Go's integer
division; `balancedResourceScorer` in noderesources/balanced_allocation.go), so a pod that
evens a node out scores towards 100 and one that tilts it towards 50. Configured weights are
ignored, as in kube. A pod that requests none of the configured resources skips the plugin
(PreScore Skip, v1.33+).

Float arithmetic follows the Go code operation by operation (no `sum()`, which may compensate
rounding), so results are bit-for-bit kube's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, overload

import numpy as np

from extender.engine.args import NEWEST_VERSION, NodeResourcesBalancedAllocationArgs, Version
from extender.engine.framework import (
    MAX_NODE_SCORE,
    NOT_VECTORISED,
    ClusterContext,
    CycleState,
    ScoredAsIs,
)
from extender.engine.nodetable import NodeTable
from extender.engine.scores.memo import score_key
from extender.engine.scores.resource_allocation import (
    Column,
    PairScorer,
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
#: The first minor scoring the pod's effect on the balance rather than the balance with it.
EFFECT_SINCE: Version = (1, 36)


@overload
def effect_score(with_pod: int, without_pod: int) -> int: ...
@overload
def effect_score(with_pod: np.ndarray, without_pod: np.ndarray) -> np.ndarray: ...
def effect_score(with_pod: Any, without_pod: Any) -> Any:
    """v1.36+: `MaxNodeScore/2 + (MaxNodeScore/2 + with − without)/2`, for one node or a row
    array. Both balances lie in 50..100, so the dividend is never negative and Go's
    truncation is a floor."""
    half = MAX_NODE_SCORE // 2
    return half + (half + with_pod - without_pod) // 2


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


def fractions_of(columns: Sequence[Column], i: int, without: Sequence[int] | None = None,
                 ) -> list[float]:
    """Node `i`'s capped fractions over the resources it has (allocatable > 0); `without`
    takes each column's pod request back out (the balance before the pod)."""
    fractions = []
    for c, column in enumerate(columns):
        a = column.allocatable[i]
        if a > 0:
            r = column.requested[i] - (without[c] if without is not None else 0)
            fractions.append(r / a if r <= a else 1.0)
    return fractions


class NodeResourcesBalancedAllocation(ScoredAsIs):
    name = NAME

    def __init__(self, args: NodeResourcesBalancedAllocationArgs | None = None,
                 version: Version = NEWEST_VERSION) -> None:
        resources = (args or NodeResourcesBalancedAllocationArgs()).resources
        self.resources = tuple((r.name, r.weight) for r in resources)
        # The fused pass for cpu and memory (the default; this plugin ignores the weights).
        self.cpu_memory = cpu_memory_weights(self.resources) is not None
        self.effect = version >= EFFECT_SINCE
        self.memo_name = f"{NAME}/effect" if self.effect else NAME

    def _pair(self, cpu: int, memory: int) -> PairScorer:
        """The per-node cpu-and-memory scorer for a pod requesting `cpu` and `memory`."""
        if not self.effect:
            return balanced_pair

        def effect_pair(a_cpu: int, a_memory: int, r_cpu: int, r_memory: int) -> int | None:
            with_pod = balanced_pair(a_cpu, a_memory, r_cpu, r_memory)
            if with_pod is None:
                return None
            without = balanced_pair(a_cpu, a_memory, r_cpu - cpu, r_memory - memory)
            assert without is not None
            return effect_score(with_pod, without)
        return effect_pair


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
        with_pod = _balance_rows(a_cpu, a_memory, r_cpu, r_memory)
        if not self.effect:
            return with_pod
        without = _balance_rows(a_cpu, a_memory, r_cpu - pod.requests.milli_cpu,
                                r_memory - pod.requests.memory)
        return effect_score(with_pod, without)

    def score(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
              ctx: ClusterContext) -> list[int] | None:
        if not any(pod_request(pod, name, use_requested=True) for name, _ in self.resources):
            return None
        if self.cpu_memory:
            cpu, memory = pod.requests.milli_cpu, pod.requests.memory
            scores = memoised_by_load(nodes, score_key(self.memo_name, cpu, memory), cpu, memory,
                                      requested_load, self._pair(cpu, memory))
            if scores is not None:
                return scores
        columns = resource_columns(self.resources, pod, nodes, use_requested=True)
        if not self.effect and len(columns) == 2 and all_allocatable(columns[0]) \
                and all_allocatable(columns[1]):
            # Two resources (cpu and memory, usually) on every node: std is half the difference.
            return [int((1 - abs((f0 - f1) / 2)) * MAX_NODE_SCORE)
                    for f0, f1 in zip(capped_fractions(columns[0]),
                                      capped_fractions(columns[1]), strict=True)]
        # Otherwise each node's fractions are those of the resources it has (allocatable > 0).
        requests = [pod_request(pod, column.name, use_requested=True) for column in columns]
        scores = []
        for i in range(len(nodes)):
            with_pod = balanced_score(fractions_of(columns, i))
            scores.append(effect_score(with_pod, balanced_score(fractions_of(columns, i, requests)))
                          if self.effect else with_pod)
        return scores


def _balance_rows(a_cpu: np.ndarray, a_memory: np.ndarray, r_cpu: np.ndarray,
                  r_memory: np.ndarray) -> np.ndarray:
    """`balanced_pair` over arrays, the same float operations in the same order."""
    f_cpu = np.where(r_cpu <= a_cpu, r_cpu / a_cpu, 1.0)
    f_memory = np.where(r_memory <= a_memory, r_memory / a_memory, 1.0)
    return np.trunc((1 - np.abs((f_cpu - f_memory) / 2)) * MAX_NODE_SCORE).astype(np.int64)
