"""NodeResourcesAllocatable (scheduler-plugins `pkg/noderesources/allocatable.go`).

Favours nodes by their allocatable resources, not by what is requested on them: Score is the
weighted mean of the node's allocatable amounts (cpu in millicores, every other resource in
base units), negated in `Least` mode (prefer the smallest nodes, pack them) and as is in
`Most` mode; the pod's own requests do not enter. NormalizeScore maps [lowest, highest] onto
0..100 (all equal: 0 everywhere).

Go's int64 arithmetic is kept: the sums wrap, the division truncates toward zero (Least's raw
scores are negative), and the weights are a map (a resource named twice keeps its last
weight).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field, model_validator

from extender.engine.args import _Args
from extender.engine.framework import MAX_NODE_SCORE, ClusterContext, CycleState
from extender.engine.scores.normalize import go_div
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.model.resources import CPU, EPHEMERAL_STORAGE, MEMORY, is_scalar_resource

NAME = "NodeResourcesAllocatable"
LEAST = "Least"
MOST = "Most"
_INT64_MAX = (1 << 63) - 1


def wrap64(value: int) -> int:
    """Go int64 overflow: wrap into [-2^63, 2^63)."""
    return ((value + (1 << 63)) % (1 << 64)) - (1 << 63)


class AllocatableResource(_Args):
    """`schedulerconfig.ResourceSpec` (weight is int64; upstream requires it positive)."""

    name: str = Field(min_length=1)
    weight: int = Field(default=0, le=_INT64_MAX, ge=-_INT64_MAX - 1)


#: `defaultNodeResourcesAllocatableResourcesToWeightMap`: 1 millicore weighs like 1 MiB.
DEFAULT_RESOURCES = (AllocatableResource(name=CPU, weight=1 << 20),
                     AllocatableResource(name=MEMORY, weight=1))


class NodeResourcesAllocatableArgs(_Args):
    """scheduler-plugins' `NodeResourcesAllocatableArgs`: `mode` Least (default) or Most,
    `resources` (default cpu 1<<20, memory 1). `NewAllocatable`'s checks, in its order."""

    mode: str = ""
    resources: list[AllocatableResource] = Field(default_factory=list)

    @model_validator(mode="after")
    def _upstream_checks(self) -> NodeResourcesAllocatableArgs:
        if self.mode not in ("", LEAST, MOST):
            raise ValueError(f"invalid mode, got {self.mode}")
        for resource in self.resources:
            if resource.weight <= 0:
                raise ValueError(f"resource Weight of {resource.name} should be a positive "
                                 f"value, got {resource.weight}")
        return self


def _allocatable(info: NodeInfo, name: str) -> int:
    """`calculateResourceAllocatableRequest`'s allocatable half."""
    allocatable = info.node.allocatable
    if name == CPU:
        return allocatable.milli_cpu
    if name == MEMORY:
        return allocatable.memory
    if name == EPHEMERAL_STORAGE:
        return allocatable.ephemeral_storage
    if is_scalar_resource(name):
        return allocatable.scalar.get(name, 0)
    return 0  # not considered (pods, unknown names)


class NodeResourcesAllocatable:
    name = NAME

    def __init__(self, args: NodeResourcesAllocatableArgs | None = None) -> None:
        args = args or NodeResourcesAllocatableArgs()
        self.mode = args.mode or LEAST
        resources = args.resources or list(DEFAULT_RESOURCES)
        weights: dict[str, int] = {}
        for resource in resources:
            weights[resource.name] = resource.weight  # a map: the last one wins
        self.weights = tuple(weights.items())
        self.weight_sum = wrap64(sum(weights.values()))
        self._sign = -1 if self.mode == LEAST else 1

    def node_score(self, info: NodeInfo) -> int:
        """Score for one node: Σ w·(±allocatable) / Σ w, in Go's int64."""
        total = 0
        sign = self._sign
        for name, weight in self.weights:
            total = wrap64(total + wrap64(sign * _allocatable(info, name) * weight))
        return wrap64(go_div(total, self.weight_sum))

    def raw_scores(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
                   ctx: ClusterContext) -> list[int]:
        """Score: each node's weighted allocatable (negative in Least mode)."""
        return [self.node_score(info) for info in nodes]

    def normalize(self, raw: list[int], state: CycleState) -> list[int]:
        """NormalizeScore: (s − lowest)·100 / (highest − lowest); all equal → 0 (in place)."""
        if not raw:
            return raw
        lowest, highest = min(raw), max(raw)
        old_range = wrap64(highest - lowest)
        if old_range == 0:
            raw[:] = [0] * len(raw)
        else:
            raw[:] = [wrap64(go_div(wrap64(wrap64(s - lowest) * MAX_NODE_SCORE), old_range))
                      for s in raw]
        return raw

    def score(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
              ctx: ClusterContext) -> list[int]:
        return self.normalize(self.raw_scores(state, pod, nodes, ctx), state)
