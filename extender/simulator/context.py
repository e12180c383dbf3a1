"""The engine's `ClusterContext` over the simulation: node order is the scheduler's node tree,
nominations come from the queue's nominator, pending pods are listed (Coscheduling's pod
lister sees them), and time is the virtual clock."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from extender.engine.framework import T
from extender.engine.podindex import PodIndex
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.model.resources import Resources
from extender.model.scheduling import ElasticQuotaView, PodGroupView


class SimContext:
    """The engine's ClusterContext and preemption's node listing, for the simulation: node
    order is the scheduler's node tree, nominations come from the queue's nominator."""

    def __init__(self, sim: Any) -> None:
        self._sim = sim

    @property
    def nodes(self) -> Mapping[str, NodeInfo]:
        return self._sim.node_map()

    def node_count(self) -> int:
        return len(self._sim.state.nodes)

    def image_node_count(self, image: str) -> int:
        return self._sim.state.image_node_count(image)

    def nominated_pods(self, node_name: str) -> Sequence[PodView]:
        return self._sim.queue.nominator.nominated_pods_for_node(node_name)

    def pdb_list(self) -> Sequence[Any]:
        return self._sim.state.pdb_list()

    def priority_class(self, name: str) -> Any:
        return self._sim.state.priority_class(name)

    # The cross-node plugins' reads come from the simulated cluster's state as they are.
    @property
    def pod_index(self) -> PodIndex:
        return self._sim.state.pod_index

    @property
    def namespaces(self) -> Mapping[str, Mapping[str, str]]:
        return self._sim.state.namespaces

    def namespace_labels(self, name: str) -> Mapping[str, str] | None:
        return self._sim.state.namespace_labels(name)

    def services_in(self, namespace: str) -> list[Mapping[str, str]]:
        return self._sim.state.services_in(namespace)

    def controller_selector(self, kind: str, namespace: str, name: str) -> object | None:
        return self._sim.state.controller_selector(kind, namespace, name)

    def node_memo(self, key: object, compute: Callable[[], T]) -> T:
        return self._sim.state.node_memo(key, compute)

    def label_column(self, key: str) -> Mapping[NodeInfo, str | None]:
        return self._sim.state.label_column(key)

    # scheduler-plugins' objects. The pod lister sees pending pods too (they are not in the
    # simulated cluster state until assumed), hence the simulation's own group index.
    def pod_by_uid(self, uid: str) -> PodView | None:
        return self._sim.state.pods.get(uid) or self._sim.pending.get(uid)

    def nominated_all(self) -> list[PodView]:
        return [pod for pods in self._sim.queue.nominator.by_node.values() for pod in pods]

    def pod_group(self, namespace: str, name: str) -> PodGroupView | None:
        return self._sim.state.pod_group(namespace, name)

    def app_group(self, namespace: str, name: str) -> Any:
        return self._sim.state.app_group(namespace, name)

    def network_topology(self, namespace: str, name: str) -> Any:
        return self._sim.state.network_topology(namespace, name)

    def group_pods(self, namespace: str, group: str) -> Mapping[str, bool]:
        return self._sim.group_members.get((namespace, group), {})

    def quotas(self) -> Mapping[str, ElasticQuotaView]:
        return self._sim.state.quotas()

    def quota_used(self, namespace: str, exclude: str = "") -> Resources:
        return self._sim.state.quota_used(namespace, exclude)

    def quota_counted(self, pod: PodView) -> bool:
        return self._sim.state.quota_counted(pod)

    @property
    def node_metrics(self) -> Any:  # the replayed utilization (Trimaran), or None
        return self._sim.state.node_metrics

    @property
    def assignments(self) -> Mapping[str, Mapping[str, tuple[float, PodView]]]:
        """node -> pods bound to it lately (TargetLoadPacking looks here before asking
        `recent_assignments`)."""
        return self._sim.state.assignments

    def node_topology(self, node_name: str) -> Any:
        """The node's NodeResourceTopology (NodeResourceTopologyMatch), or None."""
        return self._sim.state.node_topology(node_name)

    def unplaced_pods(self) -> list[PodView]:
        """Pods bound to a node the state does not know (NetworkOverhead counts them)."""
        return self._sim.state.unplaced_pods()

    def recent_assignments(self, node_name: str) -> Sequence[tuple[float, PodView]]:
        """Pods bound to the node lately, at virtual epoch seconds (TargetLoadPacking's load
        the metrics do not show yet)."""
        return self._sim.state.recent_assignments(node_name)

    def clock(self) -> float:
        """The virtual time, in epoch seconds (what Coscheduling's TTLs and failure times
        are kept in)."""
        return self._sim.epoch_now()
