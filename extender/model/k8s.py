"""Minimal typed Kubernetes objects: only the fields the engine reads.

One decoder serves the wire (`Pod`/`Nodes` in extender requests), snapshot files and watch
events, so a field is read the same way wherever it comes from. Unknown fields are skipped by
msgspec without building objects, which is what makes 5000-node bodies cheap to decode.
"""

from __future__ import annotations

import uuid

import msgspec

QuantityValue = str | int | float
ResourceList = dict[str, QuantityValue]


class _Base(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    pass


class OwnerReference(_Base):
    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None


#: Where a pod without `metadata.uid` (hand-written files) gets one: a UUID of its
#: namespace/name, the same wherever it is read (snapshot or workload).
PODS_WITHOUT_UID = uuid.UUID("6f0c5d3e-8d1c-4a59-9d0e-5a1b2c3d4e5f")


def derived_uid(namespace: str, name: str) -> str:
    return str(uuid.uuid5(PODS_WITHOUT_UID, f"{namespace}/{name}"))


class ObjectMeta(_Base):
    """Metadata without annotations: no plugin reads a pod's or a node's, and they are where
    objects get large (a legal 1.5 MB annotation would otherwise be decoded, kept and hashed
    with every pod)."""

    name: str = ""
    namespace: str = ""
    uid: str = ""
    resource_version: str = ""
    labels: dict[str, str] | None = None
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    owner_references: list[OwnerReference] | None = None


class AnnotatedMeta(ObjectMeta):
    """Metadata of the kinds whose annotations a plugin reads (PriorityClass:
    PreemptionToleration's policy)."""

    annotations: dict[str, str] | None = None


class ResourceRequirements(_Base):
    requests: ResourceList | None = None
    limits: ResourceList | None = None


class ContainerPort(_Base):
    container_port: int = 0
    host_port: int = 0
    host_ip: str = msgspec.field(default="", name="hostIP")
    protocol: str = ""


class Container(_Base):
    name: str = ""
    image: str = ""
    resources: ResourceRequirements | None = None
    ports: list[ContainerPort] | None = None
    restart_policy: str | None = None


class Toleration(_Base):
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None


class NodeSelectorRequirement(_Base):
    key: str = ""
    operator: str = ""
    values: list[str] | None = None


class NodeSelectorTerm(_Base):
    match_expressions: list[NodeSelectorRequirement] | None = None
    match_fields: list[NodeSelectorRequirement] | None = None


class NodeSelector(_Base):
    node_selector_terms: list[NodeSelectorTerm] | None = None


class PreferredSchedulingTerm(_Base):
    weight: int = 0
    preference: NodeSelectorTerm | None = None


class LabelSelectorRequirement(_Base):
    key: str = ""
    operator: str = ""
    values: list[str] | None = None


class LabelSelector(_Base):
    match_labels: dict[str, str] | None = None
    match_expressions: list[LabelSelectorRequirement] | None = None


class NodeAffinity(_Base):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] | None = None


class PodAffinityTerm(_Base):
    label_selector: LabelSelector | None = None
    namespaces: list[str] | None = None
    topology_key: str = ""
    namespace_selector: LabelSelector | None = None
    match_label_keys: list[str] | None = None
    mismatch_label_keys: list[str] | None = None


class WeightedPodAffinityTerm(_Base):
    weight: int = 0
    pod_affinity_term: PodAffinityTerm = msgspec.field(default_factory=PodAffinityTerm)


class PodAffinity(_Base):
    """Also the shape of `podAntiAffinity`."""

    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] | None = None
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] | None = None


class Affinity(_Base):
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None


class TopologySpreadConstraint(_Base):
    max_skew: int = 0
    topology_key: str = ""
    when_unsatisfiable: str = ""
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: list[str] | None = None


class PodSchedulingGate(_Base):
    name: str = ""


class PodSpec(_Base):
    node_name: str = ""
    scheduler_name: str = ""
    containers: list[Container] | None = None
    init_containers: list[Container] | None = None
    overhead: ResourceList | None = None
    resources: ResourceRequirements | None = None
    node_selector: dict[str, str] | None = None
    affinity: Affinity | None = None
    tolerations: list[Toleration] | None = None
    priority: int | None = None
    priority_class_name: str = ""
    preemption_policy: str | None = None
    topology_spread_constraints: list[TopologySpreadConstraint] | None = None
    scheduling_gates: list[PodSchedulingGate] | None = None
    #: Seconds a deleted pod has to stop (None: the API server's default, 30).
    termination_grace_period_seconds: int | None = None


class PodCondition(_Base):
    type: str = ""
    status: str = ""
    reason: str = ""
    last_transition_time: str | None = None


class PodStatus(_Base):
    phase: str = ""
    nominated_node_name: str = ""
    start_time: str | None = None
    conditions: list[PodCondition] | None = None


class Pod(_Base):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PodSpec = msgspec.field(default_factory=PodSpec)
    status: PodStatus = msgspec.field(default_factory=PodStatus)


class Taint(_Base):
    key: str = ""
    value: str = ""
    effect: str = ""


class NodeSpec(_Base):
    unschedulable: bool = False
    taints: list[Taint] | None = None


class ContainerImage(_Base):
    names: list[str] | None = None
    size_bytes: int = 0


class NodeStatus(_Base):
    allocatable: ResourceList | None = None
    capacity: ResourceList | None = None
    images: list[ContainerImage] | None = None


class Node(_Base):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: NodeSpec = msgspec.field(default_factory=NodeSpec)
    status: NodeStatus = msgspec.field(default_factory=NodeStatus)


class RequestNodeMeta(_Base):
    """What `NodeView` reads of a request's node metadata: annotations, owner references and
    the rest are skipped, not built."""

    name: str = ""
    uid: str = ""
    resource_version: str = ""
    labels: dict[str, str] | None = None


class RequestNodeStatus(_Base):
    allocatable: ResourceList | None = None
    capacity: ResourceList | None = None
    #: `status.images` as sent (`list[ContainerImage]`, or null): a request's ~30 images per
    #: node are decoded only if a plugin reads them (ImageLocality), `NodeView.images`.
    images: msgspec.Raw = msgspec.Raw()


class RequestNode(_Base):
    """A Node of a filter/prioritize request (`Nodes` form) as `NodeView.from_request` reads
    it: `Node` without what no plugin reads, and with its image list left undecoded."""

    metadata: RequestNodeMeta = msgspec.field(default_factory=RequestNodeMeta)
    spec: NodeSpec = msgspec.field(default_factory=NodeSpec)
    status: RequestNodeStatus = msgspec.field(default_factory=RequestNodeStatus)


class PodDisruptionBudgetSpec(_Base):
    selector: LabelSelector | None = None


class PodDisruptionBudgetStatus(_Base):
    disruptions_allowed: int = 0
    disrupted_pods: dict[str, str] | None = None


class PodDisruptionBudget(_Base):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PodDisruptionBudgetSpec = msgspec.field(default_factory=PodDisruptionBudgetSpec)
    status: PodDisruptionBudgetStatus = msgspec.field(default_factory=PodDisruptionBudgetStatus)


class PriorityClass(_Base):
    metadata: AnnotatedMeta = msgspec.field(default_factory=AnnotatedMeta)
    value: int = 0
    global_default: bool = False
    preemption_policy: str | None = None


class Namespace(_Base):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)


class ServiceSpec(_Base):
    selector: dict[str, str] | None = None


class Service(_Base):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ServiceSpec = msgspec.field(default_factory=ServiceSpec)


class SelectorSpec(_Base):
    """The part of a ReplicaSet's or StatefulSet's spec the scheduler reads."""

    selector: LabelSelector | None = None


class ReplicaSet(_Base):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: SelectorSpec = msgspec.field(default_factory=SelectorSpec)


class StatefulSet(_Base):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: SelectorSpec = msgspec.field(default_factory=SelectorSpec)


class ReplicationControllerSpec(_Base):
    selector: dict[str, str] | None = None


class ReplicationController(_Base):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ReplicationControllerSpec = msgspec.field(default_factory=ReplicationControllerSpec)


# scheduler-plugins' CRDs (`scheduling.x-k8s.io/v1alpha1`), read by Coscheduling and
# CapacityScheduling.

class PodGroupSpec(_Base):
    min_member: int = 0
    min_resources: ResourceList | None = None
    schedule_timeout_seconds: int | None = None


class PodGroupStatus(_Base):
    phase: str = ""
    scheduled: int = 0
    running: int = 0
    succeeded: int = 0
    failed: int = 0


class PodGroup(_Base):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PodGroupSpec = msgspec.field(default_factory=PodGroupSpec)
    status: PodGroupStatus = msgspec.field(default_factory=PodGroupStatus)


class ElasticQuotaSpec(_Base):
    min: ResourceList | None = None
    max: ResourceList | None = None


class ElasticQuotaStatus(_Base):
    used: ResourceList | None = None


class ElasticQuota(_Base):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ElasticQuotaSpec = msgspec.field(default_factory=ElasticQuotaSpec)
    status: ElasticQuotaStatus = msgspec.field(default_factory=ElasticQuotaStatus)


#: The kinds kube-scheduler's cache keeps, by `kind` (`engine.registry.KINDS` adds the
#: plugins' resources).
KINDS: dict[str, type] = {
    "Node": Node,
    "Pod": Pod,
    "PodDisruptionBudget": PodDisruptionBudget,
    "PriorityClass": PriorityClass,
    "Namespace": Namespace,
    "Service": Service,
    "ReplicaSet": ReplicaSet,
    "StatefulSet": StatefulSet,
    "ReplicationController": ReplicationController,
}


_converters: dict[type, msgspec.json.Decoder] = {}


def decoder(kind: type) -> msgspec.json.Decoder:
    """A cached JSON decoder for one of the types above."""
    dec = _converters.get(kind)
    if dec is None:
        dec = _converters[kind] = msgspec.json.Decoder(kind)
    return dec


def convert(obj: object, kind: type):
    """Build a typed object from already-parsed data (YAML, a dict from a JSON list)."""
    return msgspec.convert(obj, kind, str_keys=True)


# diktyo-io's CRDs read by scheduler-plugins' NetworkAware plugins (NetworkOverhead,
# TopologicalSort): `AppGroup` (appgroup.diktyo.x-k8s.io/v1alpha1) and `NetworkTopology`
# (networktopology.diktyo.x-k8s.io/v1alpha1), field names as their Go types' JSON tags.

class AppGroupWorkloadInfo(_Base):
    kind: str = ""
    name: str = ""
    #: The value of the pods' `appgroup.diktyo.x-k8s.io.workload` label.
    selector: str = ""
    api_version: str = ""
    namespace: str = ""


class AppGroupDependency(_Base):
    """`DependenciesInfo`."""

    workload: AppGroupWorkloadInfo = msgspec.field(default_factory=AppGroupWorkloadInfo)
    min_bandwidth: QuantityValue | None = None
    max_network_cost: int = 0


class AppGroupWorkload(_Base):
    workload: AppGroupWorkloadInfo = msgspec.field(default_factory=AppGroupWorkloadInfo)
    dependencies: list[AppGroupDependency] | None = None


class AppGroupSpec(_Base):
    num_members: int = 0
    topology_sorting_algorithm: str = ""
    workloads: list[AppGroupWorkload] | None = None


class AppGroupTopologyInfo(_Base):
    workload: AppGroupWorkloadInfo = msgspec.field(default_factory=AppGroupWorkloadInfo)
    index: int = 0


class AppGroupStatus(_Base):
    running_workloads: int = 0
    #: Written by the AppGroup controller, sorted by workload selector.
    topology_order: list[AppGroupTopologyInfo] | None = None


class AppGroup(_Base):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: AppGroupSpec = msgspec.field(default_factory=AppGroupSpec)
    status: AppGroupStatus = msgspec.field(default_factory=AppGroupStatus)


class NetworkCostInfo(_Base):
    """`CostInfo`."""

    destination: str = ""
    is_allowed: bool = False
    bandwidth_capacity: QuantityValue | None = None
    bandwidth_allocated: QuantityValue | None = None
    network_cost: int = 0


class NetworkOriginInfo(_Base):
    """`OriginInfo`."""

    origin: str = ""
    min_cost: int = 0
    avg_cost: int = 0
    max_cost: int = 0
    cost_list: list[NetworkCostInfo] | None = None


class NetworkTopologyInfo(_Base):
    """`TopologyInfo`: the costs between the values of one topology key (region or zone)."""

    topology_key: str = ""
    origin_list: list[NetworkOriginInfo] | None = None


class NetworkWeightInfo(_Base):
    """`WeightInfo`: one named set of costs ("UserDefined", "NetperfCosts", ...)."""

    name: str = ""
    topology_list: list[NetworkTopologyInfo] | None = None


class NetworkTopologySpec(_Base):
    weights: list[NetworkWeightInfo] | None = None
    configmap_name: str = ""


class NetworkTopologyStatus(_Base):
    node_count: int = 0
    weight_calculation_time: str | None = None


class NetworkTopology(_Base):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: NetworkTopologySpec = msgspec.field(default_factory=NetworkTopologySpec)
    status: NetworkTopologyStatus = msgspec.field(default_factory=NetworkTopologyStatus)




# NodeResourceTopology (`topology.node.k8s.io/v1alpha2`, cluster-scoped, named after its node),
# read by NodeResourceTopologyMatch. Only `available` is used; capacity and allocatable are kept
# for `explain` and snapshots.

class NRTResourceInfo(_Base):
    name: str = ""
    capacity: QuantityValue = 0
    allocatable: QuantityValue = 0
    available: QuantityValue = 0


class NRTCostInfo(_Base):
    name: str = ""
    value: int = 0


class NRTAttributeInfo(_Base):
    name: str = ""
    value: str = ""


class NRTZone(_Base):
    name: str = ""
    type: str = ""
    parent: str = ""
    costs: list[NRTCostInfo] | None = None
    attributes: list[NRTAttributeInfo] | None = None
    resources: list[NRTResourceInfo] | None = None


class NodeResourceTopology(_Base):
    #: Annotated: the overreserve cache reads the pods' fingerprint there when no attribute has it.
    metadata: AnnotatedMeta = msgspec.field(default_factory=AnnotatedMeta)
    #: Deprecated (v1alpha2): `[SingleNUMANodeContainerLevel]` and the like; attributes win.
    topology_policies: list[str] | None = None
    zones: list[NRTZone] | None = None
    attributes: list[NRTAttributeInfo] | None = None


