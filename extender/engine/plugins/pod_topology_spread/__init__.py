"""PodTopologySpread: spread a workload's pods evenly over topology domains.

Filter (`DoNotSchedule` constraints): a node fails when placing the pod there would make its
domain exceed the global minimum by more than `maxSkew`. Score (`ScheduleAnyway` constraints,
or the system defaults): nodes in domains with fewer matching pods score higher.
"""

from __future__ import annotations

from collections.abc import Sequence

from extender.engine.args import PodTopologySpreadArgs
from extender.engine.framework import ClusterContext, Code, CycleState, Status
from extender.engine.plugins.pod_topology_spread.common import (
    DO_NOT_SCHEDULE,
    NAME,
    SCHEDULE_ANYWAY,
    constraints_for,
)
from extender.engine.plugins.pod_topology_spread.filtering import SpreadFilter
from extender.engine.plugins.pod_topology_spread.scoring import (
    normalize_spread,
    spread_raw_scores,
)
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.model.selectors import InvalidSelector

__all__ = ["NAME", "PodTopologySpread"]

#: The `CycleState` key of PreScore's ignored candidates (kube-scheduler's preScoreStateKey).
PRE_SCORE_KEY = "PreScore" + NAME


class PodTopologySpread:
    name = NAME

    def __init__(self, args: PodTopologySpreadArgs | None = None) -> None:
        self.args = args or PodTopologySpreadArgs()

    def pre_filter(self, state: CycleState, pod: PodView,
                   ctx: ClusterContext) -> SpreadFilter | Status | None:
        try:
            constraints = constraints_for(pod, DO_NOT_SCHEDULE, self.args, ctx)
        except InvalidSelector as exc:
            return Status(Code.ERROR, (f"calculating preFilterState: {exc}",), NAME)
        if not constraints:
            return None
        return SpreadFilter.build(pod, constraints, ctx)

    def raw_scores(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
                   ctx: ClusterContext) -> list[int] | None:
        """PreScore and Score: each node's weighted matching-pod count plus `maxSkew - 1` per
        constraint; None without ScheduleAnyway constraints (Skip). Which candidates PreScore
        ignores (0, left out of the normalising) goes to `state` for `normalize`."""
        if not nodes or not ctx.nodes:
            return None
        # Nodes need every topology key only for the pod's own or the List-defaulted
        # constraints, so nodes without a zone still get hostname spreading by default.
        require_all = bool(pod.spread_constraints) or self.args.defaulting_type != "System"
        try:
            constraints = constraints_for(pod, SCHEDULE_ANYWAY, self.args, ctx)
        except InvalidSelector:
            return None
        if not constraints:
            return None
        raw, ignored = spread_raw_scores(pod, constraints, nodes, ctx, require_all)
        state.write(PRE_SCORE_KEY, ignored)
        return raw

    def normalize(self, raw: list[int], state: CycleState) -> list[int]:
        """NormalizeScore: the fewest matching pods 100; the candidates `raw_scores` ignored
        (as it recorded in `state`; none when it recorded nothing) 0."""
        ignored: list[bool] | None = state.read(PRE_SCORE_KEY)
        return normalize_spread(raw, [False] * len(raw) if ignored is None else ignored)

    def score(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
              ctx: ClusterContext) -> list[int] | None:
        raw = self.raw_scores(state, pod, nodes, ctx)
        return None if raw is None else self.normalize(raw, state)
