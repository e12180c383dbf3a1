"""NetworkOverhead's and TopologicalSort's data: diktyo-io's AppGroups and NetworkTopologies,
by (namespace, name)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from extender.engine.stores import ViewStore, WatchedResource
from extender.model import k8s
from extender.model.networkaware import AppGroupView, NetworkTopologyView

# Shipped by manifests/components/network-aware.
APP_GROUPS = WatchedResource("appgroups", "/apis/appgroup.diktyo.x-k8s.io/v1alpha1/appgroups",
                             k8s.AppGroup, crd="appgroups.appgroup.diktyo.x-k8s.io",
                             component="network-aware")
NETWORK_TOPOLOGIES = WatchedResource(
    "networktopologies", "/apis/networktopology.diktyo.x-k8s.io/v1alpha1/networktopologies",
    k8s.NetworkTopology, crd="networktopologies.networktopology.diktyo.x-k8s.io",
    component="network-aware")


@dataclass
class NetworkStore(ViewStore):
    app_groups: dict[tuple[str, str], AppGroupView] = field(default_factory=dict)
    network_topologies: dict[tuple[str, str], NetworkTopologyView] = field(default_factory=dict)

    def _table(self, kind: str) -> dict[tuple[str, str], Any]:
        return self.app_groups if kind == "AppGroup" else self.network_topologies

    def _view(self, kind: str, obj: Any) -> Any:
        return AppGroupView(obj) if kind == "AppGroup" else NetworkTopologyView(obj)

    def app_group(self, namespace: str, name: str) -> AppGroupView | None:
        return self.app_groups.get((namespace, name))

    def network_topology(self, namespace: str, name: str) -> NetworkTopologyView | None:
        return self.network_topologies.get((namespace, name))
