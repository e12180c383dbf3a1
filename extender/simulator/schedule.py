"""One pod's placement decision: kube-scheduler's `schedulePod` (schedule_one.go).

nominated-node fast path → filters over the nodes, starting at `nextStartNodeIndex` and
stopping after `numFeasibleNodesToFind` feasible nodes (when sampling) → filter extenders →
0 nodes: FitError, 1 node: taken, several: scores (+ extender priorities × weight × 10) and
`selectHost` (reservoir sampling among the top totals, from a seeded `random.Random`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from extender.engine.framework import ClusterContext, Code, CycleState, Status
from extender.engine.nodetable import NodeTable
from extender.engine.profile import Profile
from extender.engine.rows import row_totals, score_rows
from extender.engine.runner import (
    prepare_filters,
    run_scores,
    score_totals,
)
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.simulator.extenders import EXTENDER_PLUGIN, ExtenderError, HttpExtender
from extender.simulator.filtermemo import FilterMemo, node_local
from extender.simulator.filterpass import Diagnosis, FilterPasses
from extender.simulator.nominator import Nominator

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
MAX_NODE_SCORE = 100
MAX_EXTENDER_PRIORITY = 10


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """How many feasible nodes the search stops at (None: every node is examined)."""
    if percentage is None or num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:  # adaptive, the default
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass(slots=True)
class Placement:
    """The outcome of `Algorithm.schedule`."""

    feasible: list[NodeInfo]
    diagnosis: Diagnosis
    node: NodeInfo | None = None
    totals: list[int] | np.ndarray = field(default_factory=list)
    error: str = ""  # an Error (not a FitError), e.g. a failed filter extender


class Algorithm:
    """The stateful part of scheduling (`nextStartNodeIndex`, the seeded RNG)."""

    def __init__(self, profile: Profile, *, percentage_of_nodes_to_score: int | None = None,
                 extenders: Sequence[HttpExtender] = (), rng: random.Random | None = None,
                 memo: FilterMemo | None = None, verify: bool = False,
                 table: NodeTable | None = None) -> None:
        """`memo`, `verify`, `table`: the filter passes' (`filterpass.FilterPasses`); the
        scorers take the same `table`'s rows (`engine.rows.score_rows`) and `verify` holds
        them to the per-node scores."""
        self.profile = profile
        self.percentage = percentage_of_nodes_to_score
        self.extenders = list(extenders)
        self.rng = rng or random.Random(0)
        self.next_start_node_index = 0
        self.verify = verify
        self.table = table
        self.passes = FilterPasses(profile, memo=memo, verify=verify, table=table)

    # -- filtering ------------------------------------------------------------------------------

    def has_scoring(self) -> bool:
        return bool(self.profile.scorers) or any(e.prioritize_verb for e in self.extenders)

    def _run_extenders(self, pod: PodView, pod_raw: Mapping[str, Any], feasible: list[NodeInfo],
                       diagnosis: Diagnosis, node_raw: Mapping[str, Any] | None) -> list[NodeInfo]:
        """findNodesThatPassExtenders; raises ExtenderError for a non-ignorable failure."""
        for ext in self.extenders:
            if not feasible:
                break
            if not ext.filter_verb or not ext.is_interested(pod):
                continue
            try:
                reply = ext.filter(pod_raw, feasible, node_raw)
            except ExtenderError:
                if ext.ignorable:
                    continue
                raise
            for name, msg in reply.failed_unresolvable.items():
                old = diagnosis.statuses.get(name)
                reasons = (*(old.reasons if old else ()), msg)
                diagnosis.statuses[name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)
            for name, msg in reply.failed.items():
                if name in reply.failed_unresolvable:
                    continue
                old = diagnosis.statuses.get(name)
                reasons = (*(old.reasons if old else ()), msg)
                diagnosis.statuses[name] = Status(Code.UNSCHEDULABLE, reasons)
            if len(reply.passed) < len(feasible):
                # ≈v1.30+: a node removed by an extender records the extender as a rejector.
                diagnosis.unschedulable_plugins.add(EXTENDER_PLUGIN)
            feasible = reply.passed
        return feasible

    def find_nodes_that_fit(self, pod: PodView, nodes: Sequence[NodeInfo], nominator: Nominator,
                            pod_raw: Mapping[str, Any] | None = None,
                            node_raw: Mapping[str, Any] | None = None, *,
                            ctx: ClusterContext,
                            state: CycleState | None = None) -> tuple[list[NodeInfo], Diagnosis]:
        """`findNodesThatFitPod`; `ctx` is the cluster cross-node plugins count, `state` the
        cycle's state (None: a new one)."""
        diagnosis = Diagnosis()
        filters = prepare_filters(self.profile, pod, ctx, state)
        if node_local(filters, self.profile):
            diagnosis.local_filters = filters
        if filters.rejection is not None:
            # A PreFilter rejection: every node gets its status (no filter runs).
            for node in nodes:
                diagnosis.record(node.node.name, filters.rejection)
            if filters.rejection.plugin:
                diagnosis.unschedulable_plugins.add(filters.rejection.plugin)
            diagnosis.pre_filter_msg = filters.rejection.message
            diagnosis.pre_filter_stopped = (
                filters.rejection.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
            return [], diagnosis
        raw = pod_raw or {}
        if pod.nominated_node_name:
            # The node preemption made room on is likely the only fit: try it first.
            nominated = next((n for n in nodes if n.name == pod.nominated_node_name), None)
            if nominated is not None:
                feasible, _ = self.passes.run(filters, pod, [nominated], 0, nominator,
                                              diagnosis, 1)
                if feasible and self.extenders:
                    feasible = self._run_extenders(pod, raw, feasible, diagnosis, node_raw)
                if feasible:
                    return feasible, diagnosis
        want = num_feasible_nodes_to_find(self.percentage, len(nodes))
        if not self.has_scoring() and not any(e.filter_verb for e in self.extenders):
            want = 1
        feasible, processed = self.passes.run(filters, pod, nodes, self.next_start_node_index,
                                              nominator, diagnosis, want, ctx, memo=True)
        if nodes:
            self.next_start_node_index = (self.next_start_node_index + processed) % len(nodes)
        if self.extenders and feasible:
            feasible = self._run_extenders(pod, raw, feasible, diagnosis, node_raw)
        return feasible, diagnosis

    # -- scoring and selection ------------------------------------------------------------------

    def prioritize(self, pod: PodView, feasible: Sequence[NodeInfo], ctx: ClusterContext,
                   state: CycleState, pod_raw: Mapping[str, Any] | None = None,
                   node_raw: Mapping[str, Any] | None = None) -> list[int] | np.ndarray:
        """kube-scheduler's total per feasible node: Σ score × weight, plus the extenders'
        priorities × weight × 10."""
        if not self.profile.scorers and not any(e.prioritize_verb for e in self.extenders):
            return [1] * len(feasible)
        rows = None
        if self.table is not None:
            known = self.passes.feasible_rows
            rows = known[1] if known is not None and known[0] is feasible \
                else self.table.rows([node.node.name for node in feasible])
        totals: list[int] | np.ndarray
        if rows is not None:
            assert self.table is not None
            totals = row_totals(score_rows(self.profile, pod, rows, self.table, ctx, state),
                                len(rows))
            if self.verify and totals.tolist() != score_totals(
                    run_scores(self.profile, pod, feasible, ctx, state), len(feasible)):
                raise AssertionError(f"row scores of {pod.key} differ from the per-node ones")
        else:
            totals = score_totals(run_scores(self.profile, pod, feasible, ctx, state),
                                  len(feasible))
        for ext in self.extenders:
            if not ext.prioritize_verb or not ext.is_interested(pod):
                continue
            index = {n.node.name: i for i, n in enumerate(feasible)}
            scale = ext.weight * (MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY)
            for host, score in ext.prioritize(pod_raw or {}, feasible, node_raw).items():
                i = index.get(host)
                if i is not None:
                    totals[i] += score * scale
        return totals

    def select_host(self, feasible: Sequence[NodeInfo],
                    totals: Sequence[int] | np.ndarray) -> NodeInfo:
        """Uniform among the nodes with the top total: reservoir sampling in feasible order
        (the k-th tied node replaces the choice when a draw in [0, k) is 0)."""
        scores = np.asarray(totals)
        assert len(scores) == len(feasible)
        ties = np.flatnonzero(scores == scores.max()).tolist()
        selected = ties[0]
        randrange = self.rng.randrange
        for count in range(2, len(ties) + 1):
            if randrange(count) == 0:
                selected = ties[count - 1]
        return feasible[selected]

    def schedule(self, pod: PodView, nodes: Sequence[NodeInfo], nominator: Nominator,
                 ctx: ClusterContext, pod_raw: Mapping[str, Any] | None = None,
                 node_raw: Mapping[str, Any] | None = None) -> Placement:
        state = CycleState()
        try:
            feasible, diagnosis = self.find_nodes_that_fit(pod, nodes, nominator, pod_raw,
                                                           node_raw, ctx=ctx, state=state)
        except ExtenderError as exc:
            return Placement([], Diagnosis(), error=str(exc))
        placement = Placement(feasible, diagnosis)
        if len(feasible) == 1:
            placement.node = feasible[0]
        elif feasible:
            placement.totals = self.prioritize(pod, feasible, ctx, state, pod_raw, node_raw)
            placement.node = self.select_host(feasible, placement.totals)
        return placement
