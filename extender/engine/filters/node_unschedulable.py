"""NodeUnschedulable: `spec.unschedulable` nodes, unless the pod tolerates the cordon taint."""

from __future__ import annotations

from extender.engine.framework import NodeCheck, Status, unresolvable
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.model.taints import UNSCHEDULABLE_TAINT, tolerates_any

NAME = "NodeUnschedulable"
REASON = "node(s) were unschedulable"


class NodeUnschedulable:
    name = NAME

    def prepare(self, pod: PodView) -> NodeCheck | None:
        if tolerates_any(pod.tolerations, UNSCHEDULABLE_TAINT):
            return None
        status = unresolvable(NAME, REASON)

        def check(node: NodeInfo) -> Status | None:
            return status if node.node.unschedulable else None

        return check
