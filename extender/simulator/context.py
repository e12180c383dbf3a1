"""The engine's `ClusterContext` over the simulation: node order is the scheduler's node tree,
nominations come from the queue's nominator, pending pods are listed (Coscheduling's pod
lister sees them), and time is the virtual clock."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from extender.engine.framework import S, T
from extender.engine.plugins.coscheduling.store import PodGroupStore
from extender.engine.podindex import PodIndex
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView


class SimContext:
    """The engine's ClusterContext and preemption's node listing, for the simulation: node
    order is the scheduler's node tree, nominations come from the queue's nominator."""

    def __init__(self, sim: Any) -> None:
        self._sim = sim
        self._groups: PodGroupStore | None = None

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

    def store(self, cls: type[S]) -> S:
        """A plugin's store, from the simulated cluster's state; Coscheduling's over the
        simulation's own member index (its pod lister sees pending pods too)."""
        if cls is PodGroupStore:
            if self._groups is None:
                self._groups = self._sim.state.store(PodGroupStore).with_members(
                    self._sim.group_members)
            return self._groups  # type: ignore[return-value]
        return self._sim.state.store(cls)  # type: ignore[no-any-return]

    def unplaced_pods(self) -> list[PodView]:
        """Pods bound to a node the state does not know (NetworkOverhead counts them)."""
        return self._sim.state.unplaced_pods()

    def clock(self) -> float:
        """The virtual time, in epoch seconds (what Coscheduling's TTLs and failure times
        are kept in)."""
        return self._sim.epoch_now()
