"""`preCheckForNode`: which pool pods a node add/update may help (legacy queueing mode).

kube-scheduler (queueing hints disabled) moves a pod on a node event only if the node would
admit it: resources fit (nothing ignored), required node affinity/selector, nodeName, host
ports — kubelet's `AdmissionCheck` — and no untolerated NoSchedule taint. These are fixed,
whatever plugins the profile enables.
"""

from __future__ import annotations

from collections.abc import Callable

from extender.engine.filters.node_affinity import NodeAffinity
from extender.engine.filters.node_name import NodeName
from extender.engine.filters.node_ports import NodePorts
from extender.engine.filters.node_resources_fit import NodeResourcesFit
from extender.engine.runner import node_fits
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.model.taints import NO_SCHEDULE, tolerates_any

_ADMISSION = (NodeResourcesFit(), NodeAffinity(), NodeName(), NodePorts())


def admits(pod: PodView, node: NodeInfo) -> bool:
    """Would `node` admit `pod` (AdmissionCheck plus NoSchedule taints)?"""
    checks = [c for c in (p.prepare(pod) for p in _ADMISSION) if c is not None]
    if node_fits(checks, node) is not None:
        return False
    return all(tolerates_any(pod.tolerations, t) for t in node.node.taints if t.effect == NO_SCHEDULE)


def node_pre_check(node: NodeInfo) -> Callable[[PodView], bool]:
    return lambda pod: admits(pod, node)
