"""NodeName: a pod with `spec.nodeName` fits only that node."""

from __future__ import annotations

from extender.engine.framework import NodeCheck, Status, unresolvable
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

NAME = "NodeName"
REASON = "node(s) didn't match the requested node name"


class NodeName:
    name = NAME

    def prepare(self, pod: PodView) -> NodeCheck | None:
        wanted = pod.node_name
        if not wanted:
            return None
        status = unresolvable(NAME, REASON)

        def check(node: NodeInfo) -> Status | None:
            return None if node.node.name == wanted else status

        return check
