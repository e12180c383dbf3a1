"""NodeUnschedulable: `spec.unschedulable` nodes, unless the pod tolerates the cordon taint."""

from __future__ import annotations

from collections.abc import Sequence

from extender.engine.framework import BatchCheck, Status, unresolvable
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.model.taints import UNSCHEDULABLE_TAINT, tolerates_any

NAME = "NodeUnschedulable"
REASON = "node(s) were unschedulable"


_STATUS = unresolvable(NAME, REASON)


class _UnschedulableCheck(BatchCheck):
    def __call__(self, node: NodeInfo) -> Status | None:
        return _STATUS if node.node.unschedulable else None

    def filter_many(self, nodes: Sequence[NodeInfo], statuses: dict[str, Status]) -> list[NodeInfo]:
        kept = [node for node in nodes if not node.node.unschedulable]
        if len(kept) != len(nodes):
            for node in nodes:
                if node.node.unschedulable:
                    statuses[node.node.name] = _STATUS
        return kept


class NodeUnschedulable:
    name = NAME

    def prepare(self, pod: PodView) -> _UnschedulableCheck | None:
        if tolerates_any(pod.tolerations, UNSCHEDULABLE_TAINT):
            return None
        return _UnschedulableCheck()
