"""`NodeInfo`: a node view plus the pods on it and their running totals.

Mirrors kube-scheduler's `framework.NodeInfo`. The state keeps one per node and updates it
incrementally; preemption and the simulator work on cheap clones.
"""

from __future__ import annotations

from collections import Counter

from extender.model.node import NodeView
from extender.model.pod import HostPort, PodView
from extender.model.resources import Resources


class NodeInfo:
    __slots__ = ("node", "pods", "requested", "non_zero_cpu", "non_zero_memory", "used_ports",
                 "num_terminating", "free_pods", "free_cpu", "free_memory", "free_ephemeral")

    def __init__(self, node: NodeView, pods: list[PodView] | tuple[PodView, ...] = ()) -> None:
        self.node = node
        self.pods: dict[str, PodView] = {}
        self.requested = Resources()
        self.non_zero_cpu = 0
        self.non_zero_memory = 0
        self.used_ports: Counter[HostPort] = Counter()
        self.num_terminating = 0
        for pod in pods:
            self.add_pod(pod)
        self._refresh_free()

    @property
    def name(self) -> str:
        return self.node.name

    def add_pod(self, pod: PodView) -> None:
        if pod.uid in self.pods:
            self.remove_pod(self.pods[pod.uid])
        self.pods[pod.uid] = pod
        self.requested.add(pod.requests)
        self.non_zero_cpu += pod.non_zero_cpu
        self.non_zero_memory += pod.non_zero_memory
        if pod.host_ports:
            self.used_ports.update(pod.host_ports)
        if pod.terminating:
            self.num_terminating += 1
        self._refresh_free()

    def remove_pod(self, pod: PodView) -> bool:
        current = self.pods.pop(pod.uid, None)
        if current is None:
            return False
        self.requested.add(current.requests, -1)
        self.non_zero_cpu -= current.non_zero_cpu
        self.non_zero_memory -= current.non_zero_memory
        if current.host_ports:
            self.used_ports.subtract(current.host_ports)
            self.used_ports += Counter()  # drop zero counts
        if current.terminating:
            self.num_terminating -= 1
        self._refresh_free()
        return True

    def _refresh_free(self) -> None:
        # What is left on the node, kept current so the Fit filter's common case is a few
        # comparisons per node.
        allocatable, requested = self.node.allocatable, self.requested
        self.free_pods = allocatable.allowed_pods - len(self.pods)
        self.free_cpu = allocatable.milli_cpu - requested.milli_cpu
        self.free_memory = allocatable.memory - requested.memory
        self.free_ephemeral = allocatable.ephemeral_storage - requested.ephemeral_storage

    def with_node(self, node: NodeView) -> NodeInfo:
        """The same pods on a new view of the node (a node update)."""
        clone = self.clone()
        clone.node = node
        clone._refresh_free()
        return clone

    def sharing_pods(self, node: NodeView) -> NodeInfo:
        """A read-only view of `node` that shares this info's pods and totals (no copying).

        For requests that carry their own Node objects: the engine only reads it."""
        view = NodeInfo.__new__(NodeInfo)
        view.node = node
        view.pods = self.pods
        view.requested = self.requested
        view.non_zero_cpu = self.non_zero_cpu
        view.non_zero_memory = self.non_zero_memory
        view.used_ports = self.used_ports
        view.num_terminating = self.num_terminating
        view._refresh_free()
        return view

    def clone(self) -> NodeInfo:
        clone = NodeInfo.__new__(NodeInfo)
        clone.node = self.node
        clone.pods = dict(self.pods)
        clone.requested = self.requested.copy()
        clone.non_zero_cpu = self.non_zero_cpu
        clone.non_zero_memory = self.non_zero_memory
        clone.used_ports = Counter(self.used_ports)
        clone.num_terminating = self.num_terminating
        clone.free_pods, clone.free_cpu = self.free_pods, self.free_cpu
        clone.free_memory, clone.free_ephemeral = self.free_memory, self.free_ephemeral
        return clone

    def __repr__(self) -> str:
        return f"NodeInfo({self.node.name!r}, pods={len(self.pods)})"
