"""diktyo-io's AppGroup and NetworkTopology as scheduler-plugins' NetworkAware plugins read them.

An `AppGroup` (appgroup.diktyo.x-k8s.io/v1alpha1) lists an application's workloads and, per
workload, the workloads it talks to with the highest network cost it tolerates
(`maxNetworkCost`); its status carries the topological order the AppGroup controller computed
(sorted by workload selector). A `NetworkTopology` (networktopology.diktyo.x-k8s.io/v1alpha1)
holds named sets of costs (`weights[].name`: "UserDefined", "NetperfCosts", ...) between the
values of the region and zone topology keys.

Pods say which AppGroup and workload they belong to with two labels:
`appgroup.diktyo.x-k8s.io: <AppGroup name>` and `appgroup.diktyo.x-k8s.io.workload: <selector>`.

The lookups keep upstream's binary searches (`pkg/networkaware/util`): they assume the lists
are sorted as the controllers (or NetworkOverhead's own sorting) leave them, and an unsorted
list is searched the same way upstream searches it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from extender.model import k8s

#: `agv1alpha1.AppGroupLabel` / `AppGroupSelectorLabel` (the API group's name).
APP_GROUP_LABEL = "appgroup.diktyo.x-k8s.io"
APP_GROUP_SELECTOR_LABEL = APP_GROUP_LABEL + ".workload"
#: `ntv1alpha1.NetworkTopologyRegion` / `NetworkTopologyZone` (`v1.LabelTopologyRegion/Zone`).
REGION_KEY = "topology.kubernetes.io/region"
ZONE_KEY = "topology.kubernetes.io/zone"
#: `ntv1alpha1.NetworkTopologyNetperfCosts`: costs measured by netperf, kept sorted by the
#: NetworkTopology controller (NetworkOverhead sorts every other weight set itself).
NETPERF_COSTS = "NetperfCosts"


def pod_app_group(labels: Mapping[str, str] | None) -> str:
    """`GetPodAppGroupLabel`: the pod's AppGroup name, or ""."""
    return (labels or {}).get(APP_GROUP_LABEL, "")


def pod_workload(labels: Mapping[str, str] | None) -> str:
    """`GetPodAppGroupSelector`: the pod's workload selector, or ""."""
    return (labels or {}).get(APP_GROUP_SELECTOR_LABEL, "")


@dataclass(frozen=True, slots=True)
class Dependency:
    """One `DependenciesInfo`: the workload depended on and the highest cost tolerated."""

    selector: str
    max_network_cost: int
    min_bandwidth: k8s.QuantityValue | None = None  # read, but NetworkOverhead does not use it


class AppGroupView:
    __slots__ = ("namespace", "name", "uid", "workloads", "topology_order")

    def __init__(self, ag: k8s.AppGroup) -> None:
        self.namespace = ag.metadata.namespace
        self.name = ag.metadata.name
        self.uid = ag.metadata.uid
        #: (workload selector, its dependencies) in spec order.
        self.workloads: tuple[tuple[str, tuple[Dependency, ...]], ...] = tuple(
            (w.workload.selector,
             tuple(Dependency(d.workload.selector, d.max_network_cost, d.min_bandwidth)
                   for d in w.dependencies or ()))
            for w in ag.spec.workloads or ())
        #: status.topologyOrder as (selector, index), in the order stored.
        self.topology_order: tuple[tuple[str, int], ...] = tuple(
            (t.workload.selector, t.index) for t in ag.status.topology_order or ())

    def dependencies(self, selector: str) -> list[Dependency]:
        """`GetDependencyList`: every dependency of every workload with this selector, in spec
        order (empty: the pod has no dependencies)."""
        return [d for workload, deps in self.workloads if workload == selector for d in deps]

    def pod_order(self, selector: str) -> int:
        """`FindPodOrder`: the workload's topology index by binary search over
        status.topologyOrder (kept sorted by selector by the AppGroup controller); -1 if not
        found."""
        order = self.topology_order
        low, high = 0, len(order) - 1
        while low <= high:
            mid = (low + high) // 2
            found = order[mid][0]
            if found == selector:
                return order[mid][1]
            if found < selector:
                low = mid + 1
            else:
                high = mid - 1
        return -1


#: (destination, networkCost) of one origin.
Costs = tuple[tuple[str, int], ...]
#: (origin, costs) of one topology key.
Origins = tuple[tuple[str, Costs], ...]


class NetworkTopologyView:
    __slots__ = ("namespace", "name", "uid", "weights", "_cost_maps")

    def __init__(self, nt: k8s.NetworkTopology) -> None:
        self.namespace = nt.metadata.namespace
        self.name = nt.metadata.name
        self.uid = nt.metadata.uid
        #: (weights name, ((topology key, origins), ...)) in spec order.
        self.weights: tuple[tuple[str, tuple[tuple[str, Origins], ...]], ...] = tuple(
            (w.name, tuple(
                (t.topology_key, tuple(
                    (o.origin, tuple((c.destination, c.network_cost) for c in o.cost_list or ()))
                    for o in t.origin_list or ()))
                for t in w.topology_list or ()))
            for w in nt.spec.weights or ())
        self._cost_maps: dict[tuple[str, str, str], dict[tuple[str, str], int]] = {}

    def cost_map(self, weights_name: str, region: str, zone: str) -> dict[tuple[str, str], int]:
        """NetworkOverhead's `populateCostMap` for a node in `region` and `zone`:
        (origin, destination) -> networkCost of the region's and the zone's costs in the
        weight sets named `weights_name`. Memoised per (weights name, region, zone): each
        entry is a pure function of its key and the (immutable) view."""
        key = (weights_name, region, zone)
        found = self._cost_maps.get(key)
        if found is None:
            found = _populate_cost_map(self.weights, weights_name, region, zone)
            if len(self._cost_maps) > 4096:
                self._cost_maps.clear()
            self._cost_maps[key] = found
        return found


def _populate_cost_map(weights: Sequence[tuple[str, tuple[tuple[str, Origins], ...]]],
                       weights_name: str, region: str, zone: str) -> dict[tuple[str, str], int]:
    manual = weights_name != NETPERF_COSTS
    cost_map: dict[tuple[str, str], int] = {}
    for name, topology_list in weights:
        if name != weights_name:
            continue
        if manual:
            # sortNetworkTopologyCosts: manually defined lists may be unsorted (a stable sort,
            # as Go's insertion sort is for the short lists these are).
            topology_list = tuple(sorted(topology_list, key=lambda t: t[0]))
        for value, key in ((region, REGION_KEY), (zone, ZONE_KEY)):
            if value == "":
                continue
            origins = find_topology_key(topology_list, key)
            if manual:
                origins = tuple(sorted(origins, key=lambda o: o[0]))
            for destination, cost in find_origin_costs(origins, value):
                cost_map[(value, destination)] = cost
    return cost_map


def find_topology_key(topology_list: Sequence[tuple[str, Origins]], key: str) -> Origins:
    """`FindTopologyKey`: binary search by topology key; () when not found."""
    low, high = 0, len(topology_list) - 1
    while low <= high:
        mid = (low + high) // 2
        found = topology_list[mid][0]
        if found == key:
            return topology_list[mid][1]
        if found < key:
            low = mid + 1
        else:
            high = mid - 1
    return ()


def find_origin_costs(origins: Origins, origin: str) -> Costs:
    """`FindOriginCosts`: binary search by origin; () when not found."""
    low, high = 0, len(origins) - 1
    while low <= high:
        mid = (low + high) // 2
        found = origins[mid][0]
        if found == origin:
            return origins[mid][1]
        if found < origin:
            low = mid + 1
        else:
            high = mid - 1
    return ()
