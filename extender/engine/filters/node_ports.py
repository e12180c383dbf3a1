"""NodePorts: the pod's host ports must be free on the node (hostIP and protocol aware)."""

from __future__ import annotations

from collections import Counter

from extender.engine.framework import NodeCheck, Status, unschedulable
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import HostPort, PodView

NAME = "NodePorts"
REASON = "node(s) didn't have free ports for the requested pod ports"
ANY_IP = "0.0.0.0"


def conflicts(wanted: tuple[HostPort, ...], used: Counter[HostPort]) -> bool:
    for ip, protocol, port in wanted:
        if ip == ANY_IP:
            if any(p == port and proto == protocol for _, proto, p in used):
                return True
        elif (ip, protocol, port) in used or (ANY_IP, protocol, port) in used:
            return True
    return False


class NodePorts:
    name = NAME

    def prepare(self, pod: PodView) -> NodeCheck | None:
        wanted = pod.host_ports
        if not wanted:
            return None
        status = unschedulable(NAME, REASON)

        def check(node: NodeInfo) -> Status | None:
            used = node.used_ports
            return status if used and conflicts(wanted, used) else None

        return check
