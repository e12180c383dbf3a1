"""NodeResourcesFit (filter): pods count, cpu, memory, ephemeral storage and scalar resources.

A request above what is left on the node is `Unschedulable`; a request above the node's whole
allocatable is `UnschedulableAndUnresolvable` (v1.34+), so preemption skips that node.
"""

from __future__ import annotations

from extender.engine.args import NodeResourcesFitArgs
from extender.engine.framework import Code, NodeCheck, Status
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.model.resources import is_extended_resource

NAME = "NodeResourcesFit"
TOO_MANY_PODS = "Too many pods"


def insufficient(resource: str) -> str:
    return f"Insufficient {resource}"


class NodeResourcesFit:
    name = NAME

    def __init__(self, args: NodeResourcesFitArgs | None = None) -> None:
        args = args or NodeResourcesFitArgs()
        self.ignored = frozenset(args.ignored_resources)
        self.ignored_groups = frozenset(args.ignored_resource_groups)

    def _ignored(self, name: str) -> bool:
        return is_extended_resource(name) and (
            name in self.ignored or name.split("/", 1)[0] in self.ignored_groups
        )

    def prepare(self, pod: PodView) -> NodeCheck:
        requests = pod.requests
        cpu, memory, ephemeral = requests.milli_cpu, requests.memory, requests.ephemeral_storage
        # Go iterates a map here, so the order of scalar reasons is unspecified; sort for stability.
        scalars = tuple(
            (name, amount) for name, amount in sorted(requests.scalar.items())
            if amount != 0 and not self._ignored(name)
        )
        nothing_requested = not (cpu or memory or ephemeral or requests.scalar)

        def check(node: NodeInfo) -> Status | None:
            allocatable = node.node.allocatable
            used = node.requested
            reasons: list[str] = []
            unresolvable = False
            if len(node.pods) + 1 > allocatable.allowed_pods:
                reasons.append(TOO_MANY_PODS)
            if nothing_requested:
                return Status(Code.UNSCHEDULABLE, tuple(reasons), NAME) if reasons else None
            if cpu > 0 and cpu > allocatable.milli_cpu - used.milli_cpu:
                reasons.append("Insufficient cpu")
                unresolvable = unresolvable or cpu > allocatable.milli_cpu
            if memory > 0 and memory > allocatable.memory - used.memory:
                reasons.append("Insufficient memory")
                unresolvable = unresolvable or memory > allocatable.memory
            if ephemeral > 0 and ephemeral > allocatable.ephemeral_storage - used.ephemeral_storage:
                reasons.append("Insufficient ephemeral-storage")
                unresolvable = unresolvable or ephemeral > allocatable.ephemeral_storage
            for name, amount in scalars:
                capacity = allocatable.scalar.get(name, 0)
                if amount > capacity - used.scalar.get(name, 0):
                    reasons.append(insufficient(name))
                    unresolvable = unresolvable or amount > capacity
            if not reasons:
                return None
            code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE
            return Status(code, tuple(reasons), NAME)

        return check
