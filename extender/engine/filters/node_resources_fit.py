"""NodeResourcesFit (filter): pods count, cpu, memory, ephemeral storage and scalar resources.

A request above what is left on the node is `Unschedulable`; a request above the node's whole
allocatable is `UnschedulableAndUnresolvable` (v1.34+), so preemption skips that node. The rule
itself (what is checked, ignored and how it is worded) is `fit_kernel`'s; this module turns its
verdicts into Statuses for the filter's paths.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from extender.engine.args import NodeResourcesFitArgs
from extender.engine.filters.fit_kernel import FitRequest, Ignored, table_columns
from extender.engine.framework import BatchCheck, Code, Status
from extender.engine.nodetable import NodeTable
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

NAME = "NodeResourcesFit"


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


class FitCheck(BatchCheck):
    """NodeResourcesFit prepared for one pod: `fit_kernel`'s rule on a node (`__call__`),
    on table rows (`fits_rows`, `explain_rows`) and on a list (`filter_many`). Public so the
    preemption fast paths can recognise it and read its `request`."""

    __slots__ = ("request", "_verdict")

    def __init__(self, request: FitRequest) -> None:
        self.request = request
        self._verdict = request.verdict  # bound once: the check runs per node

    def __call__(self, node: NodeInfo) -> Status | None:
        verdict = self._verdict(node)
        if verdict is None:
            return None
        reasons, unresolvable = verdict
        return _status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable
                       else Code.UNSCHEDULABLE, reasons)

    def fits_rows(self, table: NodeTable, rows: np.ndarray) -> np.ndarray | None:
        """Which rows surely fit, in one vectorised pass (`filter_many`'s test); a row it
        does not pass (or whose amounts are too large for exact columns) is asked one by
        one. None with scalar requests, which only the per-node check reads."""
        request = self.request
        if request.scalars:
            return None
        alloc, used = table_columns(table)
        free = {d: alloc[d][rows] - used[d][rows] for d in request.dims}
        fits = request.fits_columns(table.alloc_pods[rows] - table.pod_count[rows], free)
        return table.exact[rows] & fits  # type: ignore[no-any-return]

    def explain_rows(self, table: NodeTable,
                     rows: np.ndarray) -> tuple[np.ndarray, list[Status | None]] | None:
        """Each row's verdict as an index into the returned list (`judge_rows`' shape), in
        one vectorised pass; None with scalar requests. A verdict depends only on which checks
        fail and whether one exceeds the whole allocatable (`FitRequest.shortfall_columns`),
        so each distinct pattern is worded once, by asking one of its rows (`__call__`); rows
        whose amounts are too large for exact columns are asked each."""
        request = self.request
        if request.scalars:
            return None
        alloc, used = table_columns(table)
        whole = {d: alloc[d][rows] for d in request.dims}
        free = {d: whole[d] - used[d][rows] for d in request.dims}
        bits, beyond = request.shortfall_columns(
            table.alloc_pods[rows] - table.pod_count[rows], free, whole)
        pattern = bits | beyond.astype(np.int64) << 4
        inexact = np.flatnonzero(~table.exact[rows])
        pattern[inexact] = -1 - inexact  # a pattern of their own
        _, first, local = np.unique(pattern, return_index=True, return_inverse=True)
        infos = table.infos
        return local, [self(infos[row]) for row in rows[first].tolist()]

    def filter_many(self, nodes: Sequence[NodeInfo], statuses: dict[str, Status]) -> list[NodeInfo]:
        request = self.request
        if request.scalars:
            return super().filter_many(nodes, statuses)
        fits = request.fits
        kept = []
        for node in nodes:
            # The common case in a few comparisons; the full check only explains failures.
            if fits(node.free_pods, node.free_cpu, node.free_memory, node.free_ephemeral):
                kept.append(node)
            else:
                self.judge_into(node, kept, statuses)
        return kept


class NodeResourcesFit:
    name = NAME

    def __init__(self, args: NodeResourcesFitArgs | None = None) -> None:
        args = args or NodeResourcesFitArgs()
        self.ignored = Ignored(frozenset(args.ignored_resources),
                               frozenset(args.ignored_resource_groups))

    def prepare(self, pod: PodView) -> FitCheck:
        return FitCheck(FitRequest.of(pod, self.ignored))
