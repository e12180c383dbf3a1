"""NodeResourceTopologyMatch's data: each node's NodeResourceTopology (named after it), and
the overreserve cache's reservations: the pods this extender bound to such a node since its
report last changed, dropped when the next report arrives."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from extender.engine.stores import PluginStore, WatchedResource
from extender.model import k8s
from extender.model.numa import NRTView, effective_request
from extender.model.pod import PodView

# kubernetes-sigs' NodeResourceTopology (manifests/components/numa).
NODE_RESOURCE_TOPOLOGIES = WatchedResource(
    "noderesourcetopologies", "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies",
    k8s.NodeResourceTopology, crd="noderesourcetopologies.topology.node.k8s.io",
    component="numa", namespaced=False)


@dataclass
class TopologyStore(PluginStore):
    topologies: dict[str, NRTView] = field(default_factory=dict)
    #: node -> {pod "namespace/name": effective request in nano-units}.
    reserved: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)

    def apply(self, kind: str, obj: Any) -> None:
        """A new report (another resourceVersion, or none) supersedes what was reserved on
        the node: the agent has seen those pods."""
        view = NRTView.from_k8s(obj)
        current = self.topologies.get(view.name)
        if (current is None or not view.resource_version
                or current.resource_version != view.resource_version):
            self.reserved.pop(view.name, None)
        self.topologies[view.name] = view

    def delete(self, kind: str, namespace: str, name: str) -> bool:
        self.reserved.pop(name, None)
        return self.topologies.pop(name, None) is not None

    def keys(self, kind: str) -> list[tuple[str, str]]:
        return [("", name) for name in self.topologies]

    def replace(self, kind: str, objects: Iterable[Any]) -> None:
        # Reports that did not change keep their reservations (`apply` decides).
        objects = list(objects)
        listed = {obj.metadata.name for obj in objects}
        for name in [n for n in self.topologies if n not in listed]:
            self.delete(kind, "", name)
        super().replace(kind, objects)

    def node_topology(self, node_name: str) -> NRTView | None:
        """The node's NodeResourceTopology, or None."""
        return self.topologies.get(node_name)

    def reservations(self, node_name: str) -> Sequence[Mapping[str, int]]:
        """Effective requests of the pods bound to the node since its last report."""
        found = self.reserved.get(node_name)
        return tuple(found.values()) if found else ()

    def pod_assumed(self, pod: PodView, node_name: str) -> None:
        self.reserve(pod, node_name)

    def reserve(self, pod: PodView, node_name: str) -> None:
        """The overreserve cache's Reserve (only nodes with a report: the others have nothing
        to correct)."""
        if node_name in self.topologies and pod.pod_spec is not None:
            self.reserved.setdefault(node_name, {})[pod.key] = effective_request(pod.pod_spec)
