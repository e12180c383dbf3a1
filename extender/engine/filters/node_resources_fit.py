"""NodeResourcesFit (filter): pods count, cpu, memory, ephemeral storage and scalar resources.

A request above what is left on the node is `Unschedulable`; a request above the node's whole
allocatable is `UnschedulableAndUnresolvable` (v1.34+), so preemption skips that node.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from extender.engine.args import NodeResourcesFitArgs
from extender.engine.framework import BatchCheck, Code, Status
from extender.engine.nodetable import NodeTable
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.model.resources import is_extended_resource

NAME = "NodeResourcesFit"
TOO_MANY_PODS = "Too many pods"
_NEVER = -(2**63)  # a zero request never fails, however over-committed the node is


def insufficient(resource: str) -> str:
    return f"Insufficient {resource}"


#: One Status per distinct verdict: a full cluster fails thousands of nodes a request for the
#: same few reasons (bounded: a scalar resource's name is part of a reason).
_statuses: dict[tuple[Code, tuple[str, ...]], Status] = {}


def _status(code: Code, reasons: tuple[str, ...]) -> Status:
    found = _statuses.get((code, reasons))
    if found is None:
        if len(_statuses) > 4096:
            _statuses.clear()
        found = _statuses[(code, reasons)] = Status(code, reasons, NAME)
    return found


class _FitCheck(BatchCheck):
    __slots__ = ("cpu", "memory", "ephemeral", "scalars", "nothing_requested", "need")

    def __init__(self, pod: PodView, scalars: tuple[tuple[str, int], ...]) -> None:
        requests = pod.requests
        self.cpu, self.memory = requests.milli_cpu, requests.memory
        self.ephemeral = requests.ephemeral_storage
        self.scalars = scalars
        self.nothing_requested = not (self.cpu or self.memory or self.ephemeral or requests.scalar)
        self.need = tuple(amount if amount > 0 else _NEVER
                          for amount in (self.cpu, self.memory, self.ephemeral))

    def __call__(self, node: NodeInfo) -> Status | None:
        allocatable = node.node.allocatable
        used = node.requested
        reasons: list[str] = []
        unresolvable = False
        if len(node.pods) + 1 > allocatable.allowed_pods:
            reasons.append(TOO_MANY_PODS)
        if self.nothing_requested:
            return _status(Code.UNSCHEDULABLE, tuple(reasons)) if reasons else None
        cpu, memory, ephemeral = self.cpu, self.memory, self.ephemeral
        if cpu > 0 and cpu > allocatable.milli_cpu - used.milli_cpu:
            reasons.append("Insufficient cpu")
            unresolvable = unresolvable or cpu > allocatable.milli_cpu
        if memory > 0 and memory > allocatable.memory - used.memory:
            reasons.append("Insufficient memory")
            unresolvable = unresolvable or memory > allocatable.memory
        if ephemeral > 0 and ephemeral > allocatable.ephemeral_storage - used.ephemeral_storage:
            reasons.append("Insufficient ephemeral-storage")
            unresolvable = unresolvable or ephemeral > allocatable.ephemeral_storage
        for name, amount in self.scalars:
            capacity = allocatable.scalar.get(name, 0)
            if amount > capacity - used.scalar.get(name, 0):
                reasons.append(insufficient(name))
                unresolvable = unresolvable or amount > capacity
        if not reasons:
            return None
        code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE
        return _status(code, tuple(reasons))

    def fits_rows(self, table: NodeTable, rows: np.ndarray) -> np.ndarray | None:
        """Which rows surely fit, in one vectorised pass (`filter_many`'s test); a row it
        does not pass (or whose amounts are too large for exact columns) is asked one by
        one. None with scalar requests, which only the per-node check reads."""
        if self.scalars:
            return None
        need_cpu, need_memory, need_ephemeral = self.need
        fits = table.exact[rows] & (table.alloc_pods[rows] - table.pod_count[rows] > 0)
        if need_cpu != _NEVER:
            fits &= need_cpu <= table.alloc_cpu[rows] - table.req_cpu[rows]
        if need_memory != _NEVER:
            fits &= need_memory <= table.alloc_memory[rows] - table.req_memory[rows]
        if need_ephemeral != _NEVER:
            fits &= need_ephemeral <= table.alloc_ephemeral[rows] - table.req_ephemeral[rows]
        return fits  # type: ignore[no-any-return]

    def explain_rows(self, table: NodeTable,
                     rows: np.ndarray) -> tuple[np.ndarray, list[Status | None]] | None:
        """Each row's verdict as an index into the returned list (`judge_rows`' shape), in
        one vectorised pass; None with scalar requests. A verdict depends only on which of the
        pod count, cpu, memory and ephemeral storage fall short and whether one exceeds the
        whole allocatable, so each distinct pattern is worded once, by asking one of its rows
        (`__call__`); rows whose amounts are too large for exact columns are asked each."""
        if self.scalars:
            return None
        pattern = (table.alloc_pods[rows] - table.pod_count[rows] <= 0).astype(np.int64)
        if not self.nothing_requested:
            unresolvable = np.zeros(len(rows), dtype=bool)
            for bit, (amount, alloc, used) in enumerate((
                    (self.cpu, table.alloc_cpu, table.req_cpu),
                    (self.memory, table.alloc_memory, table.req_memory),
                    (self.ephemeral, table.alloc_ephemeral, table.req_ephemeral)), 1):
                if amount > 0:
                    allocatable = alloc[rows]
                    short = amount > allocatable - used[rows]
                    pattern |= short.astype(np.int64) << bit
                    unresolvable |= short & (amount > allocatable)
            pattern |= unresolvable.astype(np.int64) << 4
        inexact = np.flatnonzero(~table.exact[rows])
        pattern[inexact] = -1 - inexact  # a pattern of their own
        _, first, local = np.unique(pattern, return_index=True, return_inverse=True)
        infos = table.infos
        return local, [self(infos[row]) for row in rows[first].tolist()]

    def filter_many(self, nodes: Sequence[NodeInfo], statuses: dict[str, Status]) -> list[NodeInfo]:
        if self.scalars:
            return super().filter_many(nodes, statuses)
        need_cpu, need_memory, need_ephemeral = self.need
        kept = []
        for node in nodes:
            # The common case in three comparisons; the full check only explains failures.
            if (node.free_pods > 0 and need_cpu <= node.free_cpu
                    and need_memory <= node.free_memory and need_ephemeral <= node.free_ephemeral):
                kept.append(node)
            else:
                self.judge_into(node, kept, statuses)
        return kept


class NodeResourcesFit:
    name = NAME

    def __init__(self, args: NodeResourcesFitArgs | None = None) -> None:
        args = args or NodeResourcesFitArgs()
        self.ignored = frozenset(args.ignored_resources)
        self.ignored_groups = frozenset(args.ignored_resource_groups)

    def _ignored(self, name: str) -> bool:
        return is_extended_resource(name) and (
            name in self.ignored or name.split("/", 1)[0] in self.ignored_groups
        )

    def prepare(self, pod: PodView) -> _FitCheck:
        # Go iterates a map here, so the order of scalar reasons is unspecified; sort for stability.
        scalars = tuple(
            (name, amount) for name, amount in sorted(pod.requests.scalar.items())
            if amount != 0 and not self._ignored(name)
        )
        return _FitCheck(pod, scalars)
