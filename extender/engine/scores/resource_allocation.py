"""Per-resource (allocatable, requested) columns over the candidate nodes.

Shared by NodeResourcesFit and NodeResourcesBalancedAllocation, as kube-scheduler's
`resource_allocation.go` is. One column per configured resource holds, for every node, the
node's allocatable and what would be requested with the pod placed there (B.2):

- cpu / memory: the node's non-zero-default totals plus the pod's non-zero request
  (`use_requested=False`, the Fit strategies) or real requests (`use_requested=True`,
  BalancedAllocation);
- ephemeral-storage and scalar resources: always real requests;
- a scalar resource the pod does not request, and any other name (`pods`, unknown), yields no
  column: kube returns (0, 0) for them, which skips the resource on every node.

A node whose allocatable is 0 for a column skips that resource; the strategies apply that per
node. Columns are built with comprehensions, one list per resource and none per node.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from extender.engine.nodetable import EXACT_LIMIT, NodeTable
from extender.model.node import Signature
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.model.resources import CPU, EPHEMERAL_STORAGE, MEMORY, is_scalar_resource


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    weight: int
    allocatable: list[int]
    requested: list[int]


def pod_request(pod: PodView, name: str, use_requested: bool) -> int:
    """The pod's request for one resource as the scorers see it (cpu in millicores)."""
    if name == CPU:
        return pod.requests.milli_cpu if use_requested else pod.scoring_non_zero_cpu
    if name == MEMORY:
        return pod.requests.memory if use_requested else pod.scoring_non_zero_memory
    if name == EPHEMERAL_STORAGE:
        return pod.requests.ephemeral_storage
    return pod.requests.scalar.get(name, 0)


def resource_columns(resources: Sequence[tuple[str, int]], pod: PodView,
                     nodes: Sequence[NodeInfo], use_requested: bool) -> list[Column]:
    """One column per (name, weight) that can count on some node, in configuration order."""
    columns = []
    for name, weight in resources:
        request = pod_request(pod, name, use_requested)
        if name == CPU:
            allocatable = [n.node.allocatable.milli_cpu for n in nodes]
            if use_requested:
                requested = [n.requested.milli_cpu + request for n in nodes]
            else:
                requested = [n.non_zero_cpu + request for n in nodes]
        elif name == MEMORY:
            allocatable = [n.node.allocatable.memory for n in nodes]
            if use_requested:
                requested = [n.requested.memory + request for n in nodes]
            else:
                requested = [n.non_zero_memory + request for n in nodes]
        elif name == EPHEMERAL_STORAGE:
            allocatable = [n.node.allocatable.ephemeral_storage for n in nodes]
            requested = [n.requested.ephemeral_storage + request for n in nodes]
        elif is_scalar_resource(name) and request != 0:
            # A node without the resource has allocatable 0, so it skips it like kube does.
            allocatable = [n.node.allocatable.scalar.get(name, 0) for n in nodes]
            requested = [n.requested.scalar.get(name, 0) + request for n in nodes]
        else:
            continue
        columns.append(Column(name, weight, allocatable, requested))
    return columns


def all_allocatable(column: Column) -> bool:
    """Whether every node counts this resource (the common case, allowing fast paths).

    kube skips only allocatable == 0; a negative allocatable cannot come from a kubelet and
    is skipped too, which keeps every division here over a positive denominator.
    """
    return not column.allocatable or min(column.allocatable) > 0


#: One node's score from its allocatable cpu and memory and what would be requested with the
#: pod placed there; None when the node lacks cpu or memory, which only the column path handles.
PairScorer = Callable[[int, int, int, int], int | None]

#: A fused pass's memo entry in a node's view: (load cpu, load memory, score). Unlike the
#: node-only memos, the score also depends on the node's pods, which change without a new
#: view; so the entry carries the load it was computed for and counts only while the node's
#: load is the same. Anything else the score reads is the view's or is in the memo key.
LoadMemo = tuple[int, int, int]

#: A node's load as a fused pass reads it: (cpu, memory) totals of the pods on it.
LoadReader = Callable[[NodeInfo], tuple[int, int]]


def non_zero_load(info: NodeInfo) -> tuple[int, int]:
    return info.non_zero_cpu, info.non_zero_memory


def requested_load(info: NodeInfo) -> tuple[int, int]:
    requested = info.requested
    return requested.milli_cpu, requested.memory


def memoised_by_load(nodes: Sequence[NodeInfo], key: Signature, cpu: int, memory: int,
                     load: LoadReader, score_pair: PairScorer) -> list[int] | None:
    """`score_pair` over cpu and memory for every node in one pass, memoised by load (see
    `LoadMemo`). `cpu` and `memory` are the pod's requests, which `key` must capture with the
    plugin's configuration. None when a node lacks cpu or memory allocatable: the column path
    handles that."""
    scores: list[int] = []
    append = scores.append
    for info in nodes:
        view = info.node
        load_cpu, load_memory = load(info)
        # The memo holds `object`s; under `key` they are this function's LoadMemo entries.
        entry: LoadMemo | None = view.memo.get(key)  # type: ignore[assignment]
        if entry is None or entry[0] != load_cpu or entry[1] != load_memory:
            allocatable = view.allocatable
            score = score_pair(allocatable.milli_cpu, allocatable.memory,
                               load_cpu + cpu, load_memory + memory)
            if score is None:
                return None
            entry = (load_cpu, load_memory, score)
            view.remember(key, entry)
        append(entry[2])
    return scores


def cpu_memory_rows(table: NodeTable, rows: np.ndarray, cpu: int, memory: int,
                    use_requested: bool) -> tuple[np.ndarray, ...] | None:
    """(allocatable cpu, allocatable memory, requested cpu, requested memory) over `rows`
    with the pod's `cpu` and `memory` added (non-zero totals, or real requests with
    `use_requested`); None when a row lacks cpu or memory allocatable or holds amounts too
    large for exact columns, which the per-node path handles."""
    if not (-EXACT_LIMIT < cpu < EXACT_LIMIT and -EXACT_LIMIT < memory < EXACT_LIMIT):
        return None
    a_cpu, a_memory = table.alloc_cpu[rows], table.alloc_memory[rows]
    if not (table.exact[rows].all() and (a_cpu > 0).all() and (a_memory > 0).all()):
        return None
    if use_requested:
        return a_cpu, a_memory, table.req_cpu[rows] + cpu, table.req_memory[rows] + memory
    return a_cpu, a_memory, table.nz_cpu[rows] + cpu, table.nz_memory[rows] + memory


def cpu_memory_weights(resources: Sequence[tuple[str, int]]) -> tuple[int, int] | None:
    """The (cpu, memory) weights when the resources are exactly cpu then memory, the default.

    The scorers serve that configuration with one fused pass over the nodes instead of
    building columns: the same arithmetic, without a list per resource and per step."""
    if len(resources) == 2 and resources[0][0] == CPU and resources[1][0] == MEMORY:
        return resources[0][1], resources[1][1]
    return None
