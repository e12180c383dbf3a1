"""PodState (scheduler-plugins): favour nodes with terminating pods, avoid nominated ones.

Raw score: terminating pods on the node minus pods nominated to it (their room is spoken for,
while a terminating pod's room is about to free up). Normalised min-max onto 0..100; when all
candidates are equal every node gets 0, as the upstream NormalizeScore does.
"""

from __future__ import annotations

from collections.abc import Sequence

from extender.engine.args import NoArgs
from extender.engine.framework import ClusterContext, CycleState
from extender.engine.scores.normalize import min_max_normalize
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

NAME = "PodState"


class PodState:
    name = NAME

    def __init__(self, args: NoArgs | None = None) -> None:
        pass

    def raw_scores(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
                   ctx: ClusterContext) -> list[int]:
        """Score: terminating pods minus nominated pods, per node."""
        # Upstream counts every pod nominated to the node, the incoming pod included when
        # it carries a nomination; so does this.
        nominated = ctx.nominated_pods
        return [node.num_terminating - len(nominated(node.node.name)) for node in nodes]

    def normalize(self, raw: list[int], state: CycleState) -> list[int]:
        """NormalizeScore: min-max onto 0..100, all equal 0 (in place)."""
        return min_max_normalize(raw)

    def score(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
              ctx: ClusterContext) -> list[int]:
        return self.normalize(self.raw_scores(state, pod, nodes, ctx), state)
