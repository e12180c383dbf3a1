"""NodeResourceTopology objects and NUMA-related pod arithmetic, as NodeResourceTopologyMatch
(kubernetes-sigs/scheduler-plugins, `pkg/noderesourcetopology`) reads them.

* `NRTView`: one `NodeResourceTopology` (`topology.node.k8s.io/v1alpha2`, cluster-scoped, named
  after its node): the kubelet Topology Manager configuration it reports (`nodeconfig`:
  deprecated `topologyPolicies[0]` first, then the `topologyManager*` attributes) and its NUMA
  cells (zones of type `Node`, named `node-<id>`) with their `available` resources and costs
  (`createNUMANodeList`).
* Pod side: the QoS class (`v1qos.GetPodQOS`), per-container requests, the pod's effective
  request (`util.GetPodEffectiveRequest`: max of Σ app containers and each init container, no
  overhead, no sidecar special case) and the resource classifications the plugin uses.

Quantities are exact integers in nano-units (`quantity.nano_value`), so comparisons are
`Quantity.Cmp` and subtractions `Quantity.Sub`; `units()` is `Quantity.Value()` (rounded up).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from extender.model import k8s, podfingerprint
from extender.model.quantity import NANO, QuantityError, nano_value, scaled_from_nanos

ZONE_TYPE_NODE = "Node"

ATTRIBUTE_SCOPE = "topologyManagerScope"
ATTRIBUTE_POLICY = "topologyManagerPolicy"
ATTRIBUTE_MAX_NUMA_NODES = "topologyManagerMaxNUMANodes"

POLICY_NONE = "none"
POLICY_BEST_EFFORT = "best-effort"
POLICY_RESTRICTED = "restricted"
POLICY_SINGLE_NUMA_NODE = "single-numa-node"
SCOPE_CONTAINER = "container"
SCOPE_POD = "pod"

#: kubelet's legacy maximum and the Topology Manager's default (`nodeconfig.DefaultMaxNUMANodes`).
DEFAULT_MAX_NUMA_NODES = 8
#: `nodeconfig.LimitNUMANodes`: larger attribute values are capped to it.
LIMIT_NUMA_NODES = 1024
#: `maxNUMAId`: NUMA cells with a larger id are ignored (upstream indexes an array of 64).
MAX_NUMA_ID = 64

QOS_GUARANTEED = "Guaranteed"
QOS_BURSTABLE = "Burstable"
QOS_BEST_EFFORT = "BestEffort"

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
STORAGE = "storage"

# The deprecated `topologyPolicies[0]` values that set a policy and a scope.
_LEGACY_POLICIES = {
    "SingleNUMANodePodLevel": (POLICY_SINGLE_NUMA_NODE, SCOPE_POD),
    "SingleNUMANodeContainerLevel": (POLICY_SINGLE_NUMA_NODE, SCOPE_CONTAINER),
    "BestEffortPodLevel": (POLICY_BEST_EFFORT, SCOPE_POD),
    "BestEffortContainerLevel": (POLICY_BEST_EFFORT, SCOPE_CONTAINER),
    "RestrictedPodLevel": (POLICY_RESTRICTED, SCOPE_POD),
    "RestrictedContainerLevel": (POLICY_RESTRICTED, SCOPE_CONTAINER),
}
_POLICIES = frozenset({POLICY_NONE, POLICY_BEST_EFFORT, POLICY_RESTRICTED, POLICY_SINGLE_NUMA_NODE})
_SCOPES = frozenset({SCOPE_CONTAINER, SCOPE_POD})
_NUMA_NAME = re.compile(r"node-\+?([0-9]+)")
_GO_INT = re.compile(r"[+-]?[0-9]+")


def numa_id(name: str) -> int | None:
    """`numanode.NameToID`: the id of a `node-<id>` zone name, or None."""
    match = _NUMA_NAME.fullmatch(name)
    return int(match.group(1)) if match else None


def units(nanos: int) -> int:
    """`Quantity.Value()`: whole units, rounded up."""
    return scaled_from_nanos(nanos, NANO)


# ---- resource classes ---------------------------------------------------------------------
def is_native_resource(name: str) -> bool:
    """`v1helper.IsNativeResource`: no domain, or the `kubernetes.io/` one."""
    return "/" not in name or "kubernetes.io/" in name


def is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def is_host_level_resource(name: str) -> bool:
    """`isHostLevelResource`: resources that may not be bound to NUMA cells (storage, and any
    non-native resource: devices and extended resources)."""
    return name in (EPHEMERAL_STORAGE, STORAGE) or not is_native_resource(name)


def is_numa_affine_resource(name: str) -> bool:
    """`isNUMAAffineResource`: cpu, memory and hugepages must be NUMA-aligned."""
    return name in (CPU, MEMORY) or is_hugepages(name)


def is_resource_set_suitable(qos: str, name: str, quantity: int, numa_quantity: int) -> bool:
    """`isResourceSetSuitable`: a non-Guaranteed pod's cpu, memory and hugepages are never
    exclusive, so any cell will do; everything else must fit the cell's amount."""
    if qos != QOS_GUARANTEED and is_numa_affine_resource(name):
        return True
    return numa_quantity >= quantity


# ---- the node side ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class TopologyManager:
    """`nodeconfig.TopologyManager`: kubelet's Topology Manager as the NRT object reports it."""

    scope: str = SCOPE_CONTAINER
    policy: str = POLICY_NONE
    max_numa_nodes: int = DEFAULT_MAX_NUMA_NODES


def topology_manager(nrt: k8s.NodeResourceTopology) -> TopologyManager:
    """`TopologyManagerFromNodeResourceTopology`: defaults, then the deprecated
    `topologyPolicies[0]` (extra entries ignored), then the attributes (valid values only)."""
    scope, policy, max_numa = SCOPE_CONTAINER, POLICY_NONE, DEFAULT_MAX_NUMA_NODES
    if nrt.topology_policies:
        legacy = _LEGACY_POLICIES.get(nrt.topology_policies[0])
        if legacy is not None:
            policy, scope = legacy
    for attr in nrt.attributes or ():
        if attr.name == ATTRIBUTE_SCOPE and attr.value in _SCOPES:
            scope = attr.value
        elif attr.name == ATTRIBUTE_POLICY and attr.value in _POLICIES:
            policy = attr.value
        elif attr.name == ATTRIBUTE_MAX_NUMA_NODES and _GO_INT.fullmatch(attr.value):
            value = int(attr.value)  # strconv.Atoi
            if value > 1:  # IsValidMaxNUMANodes
                max_numa = min(value, LIMIT_NUMA_NODES)
    return TopologyManager(scope, policy, max_numa)


@dataclass(frozen=True, slots=True)
class NumaCell:
    """One NUMA cell: `available` per resource (nano-units) and costs to other cells by id."""

    numa_id: int
    resources: Mapping[str, int]
    costs: Mapping[int, int]


class NRTView:
    """A `NodeResourceTopology` as the plugin reads it. Build with `NRTView.from_k8s`."""

    __slots__ = ("name", "resource_version", "manager", "cells", "fingerprint",
                 "fingerprint_method", "fingerprint_attribute")

    name: str
    resource_version: str
    manager: TopologyManager
    #: The NUMA cells in zone order, with the reported `available` amounts.
    cells: tuple[NumaCell, ...]
    #: The fingerprint of the pods the report accounts for (`model.podfingerprint`): its
    #: attribute's, else its annotation's; "" when it has none.
    fingerprint: str
    #: Whether the fingerprint came from the attribute (only that one says its method).
    fingerprint_attribute: bool
    #: The attribute saying which pods the agent counted ("" when absent).
    fingerprint_method: str

    @classmethod
    def from_k8s(cls, nrt: k8s.NodeResourceTopology) -> NRTView:
        self = cls.__new__(cls)
        meta = nrt.metadata
        self.name = meta.name
        self.resource_version = meta.resource_version
        self.manager = topology_manager(nrt)
        self.cells = numa_cells(nrt.zones or ())
        # The first of a name counts (`attribute.Get`).
        attributes = {a.name: a.value for a in reversed(nrt.attributes or ())}
        self.fingerprint_attribute = podfingerprint.ATTRIBUTE in attributes
        if self.fingerprint_attribute:
            self.fingerprint = attributes[podfingerprint.ATTRIBUTE]
        else:
            self.fingerprint = (meta.annotations or {}).get(podfingerprint.ANNOTATION, "")
        self.fingerprint_method = attributes.get(podfingerprint.ATTRIBUTE_METHOD, "")
        return self

    def with_reserved(self, reserved: Iterable[Mapping[str, int]]) -> tuple[NumaCell, ...]:
        """The cells after the overreserve cache's pessimistic accounting
        (`resourceStore.UpdateNRT`): every reserved pod's effective request is taken from
        *every* cell that reports the resource (the pod may land on any), floored at zero."""
        requests = [r for r in reserved if r]
        if not requests:
            return self.cells
        cells = []
        for cell in self.cells:
            resources = dict(cell.resources)
            for request in requests:
                for name, available in resources.items():
                    wanted = request.get(name)
                    if wanted is not None:
                        # "cannot decrement resource": a request above what is left zeroes it.
                        resources[name] = 0 if available < wanted else available - wanted
            cells.append(NumaCell(cell.numa_id, resources, cell.costs))
        return tuple(cells)

    def __repr__(self) -> str:
        return f"NRTView({self.name!r}, {self.manager})"


def numa_cells(zones: Iterable[k8s.NRTZone]) -> tuple[NumaCell, ...]:
    """`createNUMANodeList`: zones of type `Node` with a valid `node-<id>` name (id below 64),
    in zone order; resources from `available`, costs from the cell's `costs` by cell id."""
    cells: list[tuple[int, dict[str, int]]] = []
    costs_of: dict[int, dict[int, int]] = {}
    for z, zone in enumerate(zones):
        if zone.type != ZONE_TYPE_NODE:
            continue
        ident = numa_id(zone.name)
        if ident is None or ident >= MAX_NUMA_ID:
            continue
        resources = {res.name: _available(res.available, f"zones[{z}].resources[{r}].available")
                     for r, res in enumerate(zone.resources or ())}
        cells.append((ident, resources))
        costs: dict[int, int] = {}
        for cost in zone.costs or ():
            other = numa_id(cost.name)
            if other is not None and other <= MAX_NUMA_ID:
                costs[other] = cost.value
        costs_of[ident] = costs  # the last zone of a repeated id gives the costs, as upstream
    return tuple(NumaCell(ident, resources, costs_of[ident]) for ident, resources in cells)


def _available(raw: k8s.QuantityValue, path: str) -> int:
    try:
        return nano_value(raw)
    except QuantityError as exc:  # which of a report's entries is wrong, as for a Node's
        raise QuantityError(f"{path}: {exc}") from None


# ---- the pod side -------------------------------------------------------------------------
def _nanos(items: Mapping[str, k8s.QuantityValue] | None) -> dict[str, int]:
    return {name: nano_value(raw) for name, raw in items.items()} if items else {}


def container_requests(container: k8s.Container) -> dict[str, int]:
    """The container's requests in nano-units (zero entries kept, as the ResourceList has them)."""
    return _nanos(container.resources.requests if container.resources else None)


_QOS_RESOURCES = (CPU, MEMORY)


def qos_class(spec: k8s.PodSpec) -> str:
    """`v1qos.ComputePodQOS` (pod-level resources, when set, decide; else every app and init
    container's cpu and memory)."""
    requests: dict[str, int] = {}
    limits: dict[str, int] = {}
    guaranteed = True
    pod_level = spec.resources
    if pod_level is not None and (pod_level.requests or pod_level.limits):
        for name, amount in _nanos(pod_level.requests).items():
            if name in _QOS_RESOURCES and amount > 0:
                requests[name] = requests.get(name, 0) + amount
        if pod_level.limits:
            found = set()
            for name, amount in _nanos(pod_level.limits).items():
                if name in _QOS_RESOURCES and amount > 0:
                    limits[name] = limits.get(name, 0) + amount
                    found.add(name)
            if not found.issuperset(_QOS_RESOURCES):
                guaranteed = False
        else:
            guaranteed = False
    else:
        for container in [*(spec.containers or ()), *(spec.init_containers or ())]:
            resources = container.resources
            for name, amount in _nanos(resources.requests if resources else None).items():
                if name in _QOS_RESOURCES and amount > 0:
                    requests[name] = requests.get(name, 0) + amount
            found = set()
            for name, amount in _nanos(resources.limits if resources else None).items():
                if name in _QOS_RESOURCES and amount > 0:
                    found.add(name)
                    limits[name] = limits.get(name, 0) + amount
            if not found.issuperset(_QOS_RESOURCES):
                guaranteed = False
    if not requests and not limits:
        return QOS_BEST_EFFORT
    if guaranteed:
        for name, amount in requests.items():
            if limits.get(name) != amount:
                guaranteed = False
                break
    if guaranteed and len(requests) == len(limits):
        return QOS_GUARANTEED
    return QOS_BURSTABLE


def effective_request(spec: k8s.PodSpec) -> dict[str, int]:
    """`util.GetPodEffectiveRequest`: per resource, the larger of the app containers' sum and
    the largest init container request (sidecars are init containers here), then the pod's
    overhead added (v0.34.7; the conformance oracle found the engine leaving it out)."""
    init: dict[str, int] = {}
    for container in spec.init_containers or ():
        for name, amount in container_requests(container).items():
            if name not in init or amount > init[name]:
                init[name] = amount
    total: dict[str, int] = {}
    for container in spec.containers or ():
        for name, amount in container_requests(container).items():
            total[name] = total.get(name, 0) + amount
    for name, amount in init.items():
        if name not in total or amount > total[name]:
            total[name] = amount
    for name, amount in _nanos(spec.overhead).items():
        total[name] = total.get(name, 0) + amount
    return total


def exclusive_resources(spec: k8s.PodSpec) -> bool:
    """`resourcerequests.AreExclusiveForPod`: an init or app container requests a resource the
    kubelet hands out exclusively: a non-native one (a device), or, in a Guaranteed pod,
    whole cpus, memory or hugepages."""
    containers = [*(spec.init_containers or ()), *(spec.containers or ())]
    requested = [c.resources.requests for c in containers if c.resources and c.resources.requests]
    if any(not is_native_resource(name) for requests in requested for name in requests):
        return True
    if not requested:
        return False
    if spec.resources is None and not all(
            c.resources and c.resources.limits and CPU in c.resources.limits
            and MEMORY in c.resources.limits for c in containers):
        return False  # most pods: not Guaranteed, seen without reading a quantity
    if qos_class(spec) != QOS_GUARANTEED:
        return False
    for requests in requested:
        for name, amount in _nanos(requests).items():
            if name == CPU and amount > 0 and -(-amount // 10**9) * 1000 == -(-amount // 10**6):
                return True  # Value() * 1000 == MilliValue(): whole cpus
            if (name == MEMORY or is_hugepages(name)) and amount > 0:
                return True
    return False


def include_non_native(spec: k8s.PodSpec) -> bool:
    """`resourcerequests.IncludeNonNative`: any init or app container requests a non-native
    resource (a device, an extended resource)."""
    for container in [*(spec.init_containers or ()), *(spec.containers or ())]:
        requests = container.resources.requests if container.resources else None
        if requests and any(not is_native_resource(name) for name in requests):
            return True
    return False


@dataclass(frozen=True, slots=True)
class NumaPod:
    """What the plugin reads of a pod, computed once per scheduling cycle."""

    namespace: str
    name: str
    qos: str
    #: (container name, requests) of the init containers (sidecars included) and app ones.
    init: tuple[tuple[str, dict[str, int]], ...]
    app: tuple[tuple[str, dict[str, int]], ...]
    effective: dict[str, int]
    non_native: bool
    #: The init containers that are sidecars (`restartPolicy: Always`).
    sidecars: frozenset[str] = frozenset()


def numa_pod(namespace: str, name: str, spec: k8s.PodSpec) -> NumaPod:
    init = spec.init_containers or ()
    return NumaPod(
        namespace, name, qos_class(spec),
        tuple((c.name, container_requests(c)) for c in init),
        tuple((c.name, container_requests(c)) for c in spec.containers or ()),
        effective_request(spec), include_non_native(spec),
        frozenset(c.name for c in init if c.restart_policy == "Always"))
