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

from extender.engine.framework import ClusterContext, Code, CycleState, Status
from extender.engine.preemption.victims import fits_with_nominated
from extender.engine.profile import Profile
from extender.engine.runner import FilterPass, prepare_filters, run_checks, run_scores, score_totals
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.simulator.extenders import EXTENDER_PLUGIN, ExtenderError, HttpExtender
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
class Diagnosis:
    """Why nodes were rejected: node -> first failing status, and the rejecting plugins."""

    statuses: dict[str, Status] = field(default_factory=dict)
    unschedulable_plugins: set[str] = field(default_factory=set)
    #: A PreFilter rejection's message: the FitError shows it instead of the histogram.
    pre_filter_msg: str = ""

    def record(self, node: str, status: Status) -> None:
        self.statuses[node] = status
        if status.plugin:
            self.unschedulable_plugins.add(status.plugin)


@dataclass(slots=True)
class Placement:
    """The outcome of `Algorithm.schedule`."""

    feasible: list[NodeInfo]
    diagnosis: Diagnosis
    node: NodeInfo | None = None
    totals: list[int] = field(default_factory=list)
    error: str = ""  # an Error (not a FitError), e.g. a failed filter extender


class Algorithm:
    """The stateful part of scheduling (`nextStartNodeIndex`, the seeded RNG)."""

    def __init__(self, profile: Profile, *, percentage_of_nodes_to_score: int | None = None,
                 extenders: Sequence[HttpExtender] = (), rng: random.Random | None = None) -> None:
        self.profile = profile
        self.percentage = percentage_of_nodes_to_score
        self.extenders = list(extenders)
        self.rng = rng or random.Random(0)
        self.next_start_node_index = 0

    # -- filtering ------------------------------------------------------------------------------

    def has_scoring(self) -> bool:
        return bool(self.profile.scorers) or any(e.prioritize_verb for e in self.extenders)

    def _filter(self, filters: FilterPass, pod: PodView, nodes: Sequence[NodeInfo],
                nominator: Nominator, diagnosis: Diagnosis, want: int) -> tuple[list[NodeInfo], int]:
        """Feasible nodes (at most `want`, in search order) and how many nodes were processed.

        Upstream walks nodes from `nextStartNodeIndex` and stops at the `want`-th feasible one.
        Judging every node with the engine's batch checks and cutting afterwards gives the same
        feasible list, statuses and processed count, and is much faster in Python."""
        n = len(nodes)
        if n == 0:
            return [], 0
        start = self.next_start_node_index % n
        rotated = [*nodes[start:], *nodes[:start]] if start else list(nodes)
        statuses: dict[str, Status] = {}
        feasible = run_checks(filters.checks, rotated, statuses)
        nominated_by_node = nominator.by_node
        if nominated_by_node:
            # Only nodes with nominated pods need the two-pass check; re-judge just those.
            by_name = {node.node.name: node for node in rotated}
            for name, nominated in nominated_by_node.items():
                node = by_name.get(name)
                if node is None:
                    continue
                status = fits_with_nominated(filters, pod, node, nominated)
                if status is None:
                    statuses.pop(name, None)
                else:
                    statuses[name] = status
            feasible = [node for node in rotated if node.node.name not in statuses]
        processed = n
        if len(feasible) > want:
            last = feasible[want - 1]
            feasible = feasible[:want]
            processed = next(i for i, node in enumerate(rotated) if node is last) + 1
        record = diagnosis.record
        if processed == n:
            for name, status in statuses.items():
                record(name, status)
        else:
            for node in rotated[:processed]:
                status = statuses.get(node.node.name)
                if status is not None:
                    record(node.node.name, status)
        return feasible, processed

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
                            ctx: ClusterContext | None = None,
                            state: CycleState | None = None) -> tuple[list[NodeInfo], Diagnosis]:
        """`findNodesThatFitPod`; `ctx` is the cluster cross-node plugins count (None: an empty
        one), `state` the cycle's state (None: a new one)."""
        diagnosis = Diagnosis()
        filters = prepare_filters(self.profile, pod, ctx, state)
        if filters.rejection is not None:
            # A PreFilter rejection: every node gets its status (no filter runs).
            for node in nodes:
                diagnosis.record(node.node.name, filters.rejection)
            if filters.rejection.plugin:
                diagnosis.unschedulable_plugins.add(filters.rejection.plugin)
            diagnosis.pre_filter_msg = filters.rejection.message
            return [], diagnosis
        raw = pod_raw or {}
        if pod.nominated_node_name:
            # The node preemption made room on is likely the only fit: try it first.
            nominated = next((n for n in nodes if n.name == pod.nominated_node_name), None)
            if nominated is not None:
                feasible, _ = self._filter(filters, pod, [nominated], nominator, diagnosis, 1)
                if feasible and self.extenders:
                    feasible = self._run_extenders(pod, raw, feasible, diagnosis, node_raw)
                if feasible:
                    return feasible, diagnosis
        want = num_feasible_nodes_to_find(self.percentage, len(nodes))
        if not self.has_scoring() and not any(e.filter_verb for e in self.extenders):
            want = 1
        feasible, processed = self._filter(filters, pod, nodes, nominator, diagnosis, want)
        if nodes:
            self.next_start_node_index = (self.next_start_node_index + processed) % len(nodes)
        if self.extenders and feasible:
            feasible = self._run_extenders(pod, raw, feasible, diagnosis, node_raw)
        return feasible, diagnosis

    # -- scoring and selection ------------------------------------------------------------------

    def prioritize(self, pod: PodView, feasible: Sequence[NodeInfo], ctx: ClusterContext,
                   state: CycleState, pod_raw: Mapping[str, Any] | None = None,
                   node_raw: Mapping[str, Any] | None = None) -> list[int]:
        if not self.profile.scorers and not any(e.prioritize_verb for e in self.extenders):
            return [1] * len(feasible)
        totals = score_totals(run_scores(self.profile, pod, feasible, ctx, state), len(feasible))
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

    def select_host(self, feasible: Sequence[NodeInfo], totals: Sequence[int]) -> NodeInfo:
        """Uniform among the nodes with the top total: reservoir sampling in feasible order."""
        best = max(totals)
        selected: NodeInfo | None = None
        count = 0
        for node, total in zip(feasible, totals, strict=True):
            if total != best:
                continue
            count += 1
            if count == 1 or self.rng.randrange(count) == 0:
                selected = node
        assert selected is not None
        return selected

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
