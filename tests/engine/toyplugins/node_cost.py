"""A scorer that reads a custom resource: a cluster-scoped `NodeCost` per node (named after
it, `spec.cost` 0..100); a node costs less, it scores more. Its store keeps the objects."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from extender.engine.framework import ClusterContext, CycleState, ScoredAsIs
from extender.engine.registry import PluginRecord
from extender.engine.stores import PluginStore, WatchedResource
from extender.model import k8s
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

NAME = "ToyNodeCost"


class NodeCostSpec(msgspec.Struct, rename="camel"):
    cost: int = 0


class NodeCost(msgspec.Struct, rename="camel"):
    metadata: k8s.ObjectMeta = msgspec.field(default_factory=k8s.ObjectMeta)
    spec: NodeCostSpec = msgspec.field(default_factory=NodeCostSpec)


NODE_COSTS = WatchedResource("nodecosts", "/apis/toy.example.com/v1/nodecosts", NodeCost,
                             crd="nodecosts.toy.example.com", component="toy", namespaced=False)


@dataclass
class NodeCostStore(PluginStore):
    costs: dict[str, int] = field(default_factory=dict)

    def apply(self, kind: str, obj: Any) -> None:
        self.costs[obj.metadata.name] = obj.spec.cost

    def delete(self, kind: str, namespace: str, name: str) -> bool:
        return self.costs.pop(name, None) is not None

    def keys(self, kind: str) -> list[tuple[str, str]]:
        return [("", name) for name in self.costs]

    def replace(self, kind: str, objects: Iterable[Any]) -> None:
        self.costs.clear()
        super().replace(kind, objects)


class ToyNodeCost(ScoredAsIs):
    name = NAME

    def score(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
              ctx: ClusterContext) -> list[int] | None:
        costs = ctx.store(NodeCostStore).costs
        return [100 - min(100, max(0, costs.get(info.node.name, 100))) for info in nodes]


RECORD = PluginRecord(NAME, score=lambda a, v: ToyNodeCost(), resources=(NODE_COSTS,),
                      store=NodeCostStore)
