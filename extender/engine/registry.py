"""Every plugin the engine knows, one record each: the one place a plugin is registered.

A record owns the plugin's name, its arguments model, a factory per extension point, the
cluster events that can make a pod it rejected schedulable again (the simulator's queue reads
them), what its filter verdict may be memoised on, the resources it watches and the store it
keeps its data in (`engine.stores`). The profile builder, `check-config`, the policy
validation, the cluster state, the informer and the simulator derive what they need from
these records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from extender.engine import args
from extender.engine.events import (
    ELASTIC_QUOTA,
    NODE,
    POD,
    POD_GROUP,
    WILDCARD,
    ActionType,
    ClusterEvent,
)
from extender.engine.filters.node_affinity import NodeAffinity
from extender.engine.filters.node_name import NodeName
from extender.engine.filters.node_ports import NodePorts
from extender.engine.filters.node_resources_fit import NodeResourcesFit
from extender.engine.filters.node_unschedulable import NodeUnschedulable
from extender.engine.filters.taint_toleration import TaintToleration
from extender.engine.framework import REUSE_ROWS, REUSE_STATE
from extender.engine.plugins import (
    capacity_scheduling,
    coscheduling,
    inter_pod_affinity,
    network_aware,
    node_resource_topology,
    node_resources_allocatable,
    pod_topology_spread,
    priority_sort,
    qos_sort,
)
from extender.engine.plugins.capacity_scheduling.store import ELASTIC_QUOTAS, QuotaStore
from extender.engine.plugins.coscheduling.store import POD_GROUPS, PodGroupStore
from extender.engine.plugins.network_aware.store import APP_GROUPS, NETWORK_TOPOLOGIES, NetworkStore
from extender.engine.plugins.node_resource_topology.store import (
    NODE_RESOURCE_TOPOLOGIES,
    TopologyStore,
)
from extender.engine.plugins.trimaran import (
    LoadVariationRiskBalancing,
    LowRiskOverCommitment,
    TargetLoadPacking,
)
from extender.engine.plugins.trimaran.store import TrimaranStore
from extender.engine.preemption.crossnode import CrossNodePreemption, CrossNodePreemptionArgs
from extender.engine.preemption.plugins import DefaultPreemption, PreemptionToleration
from extender.engine.scores import balanced_allocation, image_locality, node_affinity, pod_state
from extender.engine.scores import node_resources_fit as fit_score
from extender.engine.scores import taint_toleration as taint_score
from extender.engine.stores import PluginStore, WatchedResource
from extender.model import k8s

_A = ActionType


class Purity(Enum):
    """What a plugin's answers for a pod depend on, declared once in its record: the filter
    memo across requests, reply reuse (`api.rowreply`) and the simulator's filter memo for a
    retried pod (`simulator.filtermemo`) derive from it."""

    #: Only the node's view and the pod's `placement_key`: a filter verdict is kept in
    #: `NodeView.memo` across requests (a node change replaces its view, so entries never go
    #: stale), and replies over it may be reused.
    NODE_VIEW = "node-view"
    #: The candidate nodes' views and pods (and, for scorers, the cluster's node set).
    NODES = "nodes"
    #: Anything in the cluster state: a reply may be reused until any change.
    STATE = "state"
    #: Something else (the clock, load metrics, its own bookkeeping): never reused.
    NONE = "none"


#: Builds the plugin from its validated arguments and the Kubernetes release it follows
#: (reason wordings that changed between releases).
Factory = Callable[[Any, args.Version], Any]


@dataclass(frozen=True)
class PluginRecord:
    name: str
    args_model: type[args._Args] = args.NoArgs
    filter: Factory | None = None
    score: Factory | None = None
    post_filter: Factory | None = None
    #: QueueSort (the simulator's activeQ order; it has no extender verb).
    queue_sort: Factory | None = None
    #: `EventsToRegister`: what can make a pod this plugin rejected schedulable again.
    events: tuple[ClusterEvent, ...] = ()
    purity: Purity = Purity.NONE
    #: The resources it reads beyond kube-scheduler's own (custom resources): the informer
    #: watches them when the plugin is enabled, the snapshot loader and the simulator's API
    #: server take them.
    resources: tuple[WatchedResource, ...] = ()
    #: The store its data lives in (`ClusterState` keeps one of each registered store and
    #: feeds it the objects of `resources` and the pod events); plugins may share one.
    store: type[PluginStore] | None = None

    def __post_init__(self) -> None:
        if self.resources and self.store is None:
            raise ValueError(f"plugin {self.name} watches resources but names no store for them")

    @property
    def memoised_per_node_view(self) -> bool:
        return self.purity is Purity.NODE_VIEW

    @property
    def reply_reuse(self) -> str | None:
        """`framework.REUSE_ROWS`, `REUSE_STATE`, or None (never)."""
        return _REUSE[self.purity]

    @property
    def extension_points(self) -> tuple[str, ...]:
        return tuple(point for point, factory in (("filter", self.filter), ("score", self.score),
                                                  ("postFilter", self.post_filter),
                                                  ("queueSort", self.queue_sort)) if factory)


_REUSE = {Purity.NODE_VIEW: REUSE_ROWS, Purity.NODES: REUSE_ROWS, Purity.STATE: REUSE_STATE,
          Purity.NONE: None}
_NODE_ADD_OR_LABEL = ClusterEvent(NODE, _A.ADD | _A.UPDATE_NODE_LABEL)

RECORDS: tuple[PluginRecord, ...] = (
    PluginRecord("NodeUnschedulable", filter=lambda a, v: NodeUnschedulable(),
                 events=(ClusterEvent(NODE, _A.ADD | _A.UPDATE_NODE_TAINT),),
                 purity=Purity.NODE_VIEW),
    PluginRecord("NodeName", filter=lambda a, v: NodeName(), events=(ClusterEvent(NODE, _A.ADD),),
                 purity=Purity.NODE_VIEW),
    PluginRecord("TaintToleration", filter=lambda a, v: TaintToleration(v),
                 score=lambda a, v: taint_score.TaintToleration(),
                 events=(ClusterEvent(NODE, _A.ADD | _A.UPDATE_NODE_TAINT),),
                 purity=Purity.NODE_VIEW),
    PluginRecord("NodeAffinity", args.NodeAffinityArgs, filter=lambda a, v: NodeAffinity(a),
                 score=lambda a, v: node_affinity.NodeAffinity(a), events=(_NODE_ADD_OR_LABEL,),
                 purity=Purity.NODE_VIEW),
    PluginRecord("NodePorts", filter=lambda a, v: NodePorts(),
                 events=(ClusterEvent(POD, _A.DELETE), ClusterEvent(NODE, _A.ADD)),
                 purity=Purity.NODES),
    PluginRecord("NodeResourcesFit", args.NodeResourcesFitArgs, filter=lambda a, v: NodeResourcesFit(a),
                 score=lambda a, v: fit_score.NodeResourcesFit(a),
                 events=(ClusterEvent(POD, _A.DELETE),
                         ClusterEvent(NODE, _A.ADD | _A.UPDATE_NODE_ALLOCATABLE)),
                 purity=Purity.NODES),
    PluginRecord("PodTopologySpread", args.PodTopologySpreadArgs,
                 filter=lambda a, v: pod_topology_spread.PodTopologySpread(a),
                 score=lambda a, v: pod_topology_spread.PodTopologySpread(a),
                 events=(ClusterEvent(POD, _A.ALL),
                         ClusterEvent(NODE, _A.ADD | _A.DELETE | _A.UPDATE_NODE_LABEL)),
                 purity=Purity.STATE),
    PluginRecord("InterPodAffinity", args.InterPodAffinityArgs,
                 filter=lambda a, v: inter_pod_affinity.InterPodAffinity(a),
                 score=lambda a, v: inter_pod_affinity.InterPodAffinity(a),
                 events=(ClusterEvent(POD, _A.ALL), _NODE_ADD_OR_LABEL), purity=Purity.STATE),
    # Score-only plugins never reject a pod, so they register no event.
    PluginRecord("NodeResourcesBalancedAllocation", args.NodeResourcesBalancedAllocationArgs,
                 score=lambda a, v: balanced_allocation.NodeResourcesBalancedAllocation(a, v),
                 purity=Purity.NODES),
    PluginRecord("ImageLocality", score=lambda a, v: image_locality.ImageLocality(),
                 purity=Purity.NODES),
    PluginRecord("PodState", score=lambda a, v: pod_state.PodState()),
    PluginRecord("DefaultPreemption", args.DefaultPreemptionArgs,
                 post_filter=lambda a, v: DefaultPreemption(a)),
    PluginRecord("PreemptionToleration", args.DefaultPreemptionArgs,
                 post_filter=lambda a, v: PreemptionToleration(a)),
    # scheduler-plugins. Coscheduling's Permit runs in the bind verb, its QueueSort and
    # PostFilter in the simulator, whenever its filter is enabled.
    PluginRecord("Coscheduling", args.CoschedulingArgs,
                 filter=lambda a, v: coscheduling.Coscheduling(a),
                 events=(ClusterEvent(POD, _A.ADD), ClusterEvent(POD_GROUP, _A.ADD | _A.UPDATE)),
                 resources=(POD_GROUPS,), store=PodGroupStore),
    PluginRecord("CapacityScheduling",
                 filter=lambda a, v: capacity_scheduling.CapacityScheduling(),
                 post_filter=lambda a, v: capacity_scheduling.CapacityScheduling(),
                 events=(ClusterEvent(POD, _A.DELETE), ClusterEvent(ELASTIC_QUOTA, _A.ALL)),
                 resources=(ELASTIC_QUOTAS,), store=QuotaStore),
    # scheduler-plugins' NodeResourcesAllocatable: score only (no events); a node's score is
    # its allocatable, normalised over the candidates.
    PluginRecord("NodeResourcesAllocatable",
                 node_resources_allocatable.NodeResourcesAllocatableArgs,
                 score=lambda a, v: node_resources_allocatable.NodeResourcesAllocatable(a),
                 purity=Purity.NODE_VIEW),
    # scheduler-plugins' NetworkAware. NetworkOverhead has no EnqueueExtensions upstream, so
    # every cluster event may make a pod it rejected schedulable; TopologicalSort is a QueueSort
    # (simulator only), as is kube-scheduler's PrioritySort, registered so a policy can name it.
    PluginRecord("NetworkOverhead", network_aware.NetworkOverheadArgs,
                 filter=lambda a, v: network_aware.NetworkOverhead(a),
                 score=lambda a, v: network_aware.NetworkOverhead(a),
                 events=(ClusterEvent(WILDCARD, _A.ALL),),
                 resources=(APP_GROUPS, NETWORK_TOPOLOGIES), store=NetworkStore),
    PluginRecord("TopologicalSort", network_aware.TopologicalSortArgs,
                 queue_sort=lambda a, v: network_aware.TopologicalSort(a), store=NetworkStore),
    PluginRecord("PrioritySort", queue_sort=lambda a, v: priority_sort.PrioritySort()),
    # scheduler-plugins' QOSSort (`pkg/qos`): priority, then QoS class, then queue time.
    PluginRecord("QOSSort", queue_sort=lambda a, v: qos_sort.QOSSort()),
    # scheduler-plugins' CrossNodePreemption (sample): victims on several nodes, so only the
    # simulator runs it; the preempt verb vets its policies as DefaultPreemption.
    PluginRecord("CrossNodePreemption", CrossNodePreemptionArgs,
                 post_filter=lambda a, v: CrossNodePreemption(a)),
    # scheduler-plugins' Trimaran: load-aware scorers over the node load metrics (no events).
    PluginRecord("TargetLoadPacking", args.TargetLoadPackingArgs,
                 score=lambda a, v: TargetLoadPacking(a), store=TrimaranStore),
    PluginRecord("LoadVariationRiskBalancing", args.LoadVariationRiskBalancingArgs,
                 score=lambda a, v: LoadVariationRiskBalancing(a), store=TrimaranStore),
    PluginRecord("LowRiskOverCommitment", args.LowRiskOverCommitmentArgs,
                 score=lambda a, v: LowRiskOverCommitment(a), store=TrimaranStore),
    # scheduler-plugins' NodeResourceTopologyMatch: single-numa-node Filter and NUMA Score over
    # the nodes' NodeResourceTopology objects (its Reserve is the bind verb's start).
    PluginRecord("NodeResourceTopologyMatch",
                 node_resource_topology.NodeResourceTopologyMatchArgs,
                 filter=lambda a, v: node_resource_topology.NodeResourceTopologyMatch(a),
                 score=lambda a, v: node_resource_topology.NodeResourceTopologyMatch(a),
                 events=(ClusterEvent(POD, _A.DELETE),
                         ClusterEvent(NODE, _A.ADD | _A.UPDATE_NODE_ALLOCATABLE),
                         ClusterEvent(node_resource_topology.NODE_RESOURCE_TOPOLOGY,
                                      _A.ADD | _A.UPDATE)),
                 resources=(NODE_RESOURCE_TOPOLOGIES,), store=TopologyStore),
)

PLUGINS: dict[str, PluginRecord] = {record.name: record for record in RECORDS}
#: Every plugin's store, once (`ClusterState` keeps one of each).
STORES: tuple[type[PluginStore], ...] = tuple(dict.fromkeys(
    record.store for record in RECORDS if record.store is not None))
#: Every resource a plugin watches, once, by its name.
WATCHED: dict[str, WatchedResource] = {
    resource.name: resource for record in RECORDS for resource in record.resources}
#: The store that keeps each of those resources' kinds (its record's).
STORE_OF_KIND: dict[str, type[PluginStore]] = {
    resource.kind: record.store for record in RECORDS if record.store is not None
    for resource in record.resources}


#: Every kind an object given to the engine may have (a snapshot, `evaluate`'s objects): the
#: ones kube-scheduler's cache keeps and the plugins' resources.
KINDS: dict[str, type] = {**k8s.KINDS, **{r.kind: r.struct for r in WATCHED.values()}}


def resource_of_kind(kind: str) -> WatchedResource | None:
    """The plugin resource whose objects are of `kind`, if any."""
    return next((r for r in WATCHED.values() if r.kind == kind), None)


def store_of_kind(kind: str) -> type[PluginStore] | None:
    """The store a plugin keeps objects of `kind` in, if any."""
    return STORE_OF_KIND.get(kind)


def resources_of(plugin_names: Iterable[str]) -> tuple[WatchedResource, ...]:
    """The resources the named plugins watch, once each, in the order named."""
    return tuple(dict.fromkeys(resource for name in plugin_names if name in PLUGINS
                               for resource in PLUGINS[name].resources))


def reply_reuse(plugin: object) -> str | None:
    """The record's `reply_reuse` of a plugin instance (None for one not registered)."""
    record = PLUGINS.get(getattr(plugin, "name", ""))
    return record.reply_reuse if record is not None else None


def _point(point: str) -> dict[str, PluginRecord]:
    return {r.name: r for r in RECORDS if point in r.extension_points}


FILTERS = _point("filter")
SCORES = _point("score")
POST_FILTERS = _point("postFilter")
QUEUE_SORTS = _point("queueSort")
EXTENSION_POINTS = {"filter": FILTERS, "score": SCORES, "postFilter": POST_FILTERS,
                    "queueSort": QUEUE_SORTS}

#: kube-scheduler's default plugins (v1 MultiPoint), restricted to those implemented here.
DEFAULT_FILTERS = ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
                   "NodePorts", "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity")
DEFAULT_SCORES = (("TaintToleration", 3), ("NodeAffinity", 2), ("PodTopologySpread", 2),
                  ("InterPodAffinity", 2), ("NodeResourcesFit", 1),
                  ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1))
DEFAULT_POST_FILTERS = ("DefaultPreemption",)
DEFAULT_QUEUE_SORTS = ("PrioritySort",)
#: The PostFilter plugins that preempt; a profile runs at most one of them.
PREEMPTION_PLUGINS = ("DefaultPreemption", "PreemptionToleration", "CapacityScheduling",
                      "CrossNodePreemption")
#: PostFilter plugins only the simulator runs as such (victims on several nodes, which the
#: extender's preempt verb cannot carry); the verb treats them as DefaultPreemption.
SIMULATOR_ONLY_POST_FILTERS = ("CrossNodePreemption",)


def register(record: PluginRecord) -> None:
    """Add a plugin built outside this module (its folder and its record are all it needs):
    every table derived from the records learns it, and cluster states made afterwards keep
    its store."""
    global RECORDS, STORES
    if record.name in PLUGINS:
        raise ValueError(f"plugin {record.name} is already registered")
    RECORDS = (*RECORDS, record)
    PLUGINS[record.name] = record
    for point in record.extension_points:
        EXTENSION_POINTS[point][record.name] = record
    if record.store is not None and record.store not in STORES:
        STORES = (*STORES, record.store)
    for resource in record.resources:
        WATCHED[resource.name] = resource
        KINDS[resource.kind] = resource.struct
        if record.store is not None:
            STORE_OF_KIND[resource.kind] = record.store


def unregister(name: str) -> None:
    """Take a `register`ed plugin out again (what its store and resources added goes too,
    unless another record still names them)."""
    global RECORDS, STORES
    record = PLUGINS.pop(name)
    RECORDS = tuple(r for r in RECORDS if r.name != name)
    for table in EXTENSION_POINTS.values():
        table.pop(name, None)
    if record.store is not None and all(r.store is not record.store for r in RECORDS):
        STORES = tuple(s for s in STORES if s is not record.store)
    for resource in record.resources:
        if all(resource not in r.resources for r in RECORDS):
            WATCHED.pop(resource.name, None)
            KINDS.pop(resource.kind, None)
            STORE_OF_KIND.pop(resource.kind, None)


def factory(point: str, name: str) -> Factory:
    record = PLUGINS[name]
    made = {"filter": record.filter, "score": record.score, "postFilter": record.post_filter,
            "queueSort": record.queue_sort}[point]
    assert made is not None, f"{name} has no {point} extension point"
    return made
