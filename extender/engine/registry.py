"""Every plugin the engine knows, one record each: the one place a plugin is registered.

A record owns the plugin's name, its arguments model, a factory per extension point, the
cluster events that can make a pod it rejected schedulable again (the simulator's queue reads
them) and what its filter verdict may be memoised on. The profile builder, `check-config`,
the policy validation and the simulator derive what they need from these records.
"""

from __future__ import annotations

from collections.abc import Callable
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
from extender.engine.plugins.trimaran import (
    LoadVariationRiskBalancing,
    LowRiskOverCommitment,
    TargetLoadPacking,
)
from extender.engine.preemption.crossnode import CrossNodePreemption, CrossNodePreemptionArgs
from extender.engine.preemption.plugins import DefaultPreemption, PreemptionToleration
from extender.engine.scores import balanced_allocation, image_locality, node_affinity, pod_state
from extender.engine.scores import node_resources_fit as fit_score
from extender.engine.scores import taint_toleration as taint_score

_A = ActionType


class FilterMemo(Enum):
    """What a filter's verdict on a node may be memoised on."""

    NONE = "none"  # per request only
    #: Only the node's view and the pod's `placement_key`: kept in `NodeView.memo` across
    #: requests (a node change replaces its view, so entries never go stale).
    NODE_VIEW = "node-view"


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
    filter_memo: FilterMemo = FilterMemo.NONE
    #: What its answers for a pod depend on (`framework.REUSE_ROWS`, `REUSE_STATE`), so that a
    #: reply over it may be served again (`api.rowreply`) and the simulator may keep a retried
    #: pod's verdicts (`simulator.filtermemo`); None: never (e.g. it reads the clock).
    reply_reuse: str | None = None

    @property
    def extension_points(self) -> tuple[str, ...]:
        return tuple(point for point, factory in (("filter", self.filter), ("score", self.score),
                                                  ("postFilter", self.post_filter),
                                                  ("queueSort", self.queue_sort)) if factory)


_NODE_ADD_OR_LABEL = ClusterEvent(NODE, _A.ADD | _A.UPDATE_NODE_LABEL)

RECORDS = (
    PluginRecord("NodeUnschedulable", filter=lambda a, v: NodeUnschedulable(),
                 events=(ClusterEvent(NODE, _A.ADD | _A.UPDATE_NODE_TAINT),),
                 filter_memo=FilterMemo.NODE_VIEW, reply_reuse=REUSE_ROWS),
    PluginRecord("NodeName", filter=lambda a, v: NodeName(), events=(ClusterEvent(NODE, _A.ADD),),
                 filter_memo=FilterMemo.NODE_VIEW, reply_reuse=REUSE_ROWS),
    PluginRecord("TaintToleration", filter=lambda a, v: TaintToleration(v),
                 score=lambda a, v: taint_score.TaintToleration(),
                 events=(ClusterEvent(NODE, _A.ADD | _A.UPDATE_NODE_TAINT),),
                 filter_memo=FilterMemo.NODE_VIEW, reply_reuse=REUSE_ROWS),
    PluginRecord("NodeAffinity", args.NodeAffinityArgs, filter=lambda a, v: NodeAffinity(a),
                 score=lambda a, v: node_affinity.NodeAffinity(a), events=(_NODE_ADD_OR_LABEL,),
                 filter_memo=FilterMemo.NODE_VIEW, reply_reuse=REUSE_ROWS),
    PluginRecord("NodePorts", filter=lambda a, v: NodePorts(),
                 events=(ClusterEvent(POD, _A.DELETE), ClusterEvent(NODE, _A.ADD)),
                 reply_reuse=REUSE_ROWS),
    PluginRecord("NodeResourcesFit", args.NodeResourcesFitArgs, filter=lambda a, v: NodeResourcesFit(a),
                 score=lambda a, v: fit_score.NodeResourcesFit(a),
                 events=(ClusterEvent(POD, _A.DELETE),
                         ClusterEvent(NODE, _A.ADD | _A.UPDATE_NODE_ALLOCATABLE)),
                 reply_reuse=REUSE_ROWS),
    PluginRecord("PodTopologySpread", args.PodTopologySpreadArgs,
                 filter=lambda a, v: pod_topology_spread.PodTopologySpread(a),
                 score=lambda a, v: pod_topology_spread.PodTopologySpread(a),
                 events=(ClusterEvent(POD, _A.ALL),
                         ClusterEvent(NODE, _A.ADD | _A.DELETE | _A.UPDATE_NODE_LABEL)),
                 reply_reuse=REUSE_STATE),
    PluginRecord("InterPodAffinity", args.InterPodAffinityArgs,
                 filter=lambda a, v: inter_pod_affinity.InterPodAffinity(a),
                 score=lambda a, v: inter_pod_affinity.InterPodAffinity(a),
                 events=(ClusterEvent(POD, _A.ALL), _NODE_ADD_OR_LABEL), reply_reuse=REUSE_STATE),
    # Score-only plugins never reject a pod, so they register no event.
    PluginRecord("NodeResourcesBalancedAllocation", args.NodeResourcesBalancedAllocationArgs,
                 score=lambda a, v: balanced_allocation.NodeResourcesBalancedAllocation(a, v),
                 reply_reuse=REUSE_ROWS),
    PluginRecord("ImageLocality", score=lambda a, v: image_locality.ImageLocality(),
                 reply_reuse=REUSE_ROWS),
    PluginRecord("PodState", score=lambda a, v: pod_state.PodState()),
    PluginRecord("DefaultPreemption", args.DefaultPreemptionArgs,
                 post_filter=lambda a, v: DefaultPreemption(a)),
    PluginRecord("PreemptionToleration", args.DefaultPreemptionArgs,
                 post_filter=lambda a, v: PreemptionToleration(a)),
    # scheduler-plugins. Coscheduling's Permit runs in the bind verb, its QueueSort and
    # PostFilter in the simulator, whenever its filter is enabled.
    PluginRecord("Coscheduling", args.CoschedulingArgs,
                 filter=lambda a, v: coscheduling.Coscheduling(a),
                 events=(ClusterEvent(POD, _A.ADD), ClusterEvent(POD_GROUP, _A.ADD | _A.UPDATE))),
    PluginRecord("CapacityScheduling",
                 filter=lambda a, v: capacity_scheduling.CapacityScheduling(),
                 post_filter=lambda a, v: capacity_scheduling.CapacityScheduling(),
                 events=(ClusterEvent(POD, _A.DELETE), ClusterEvent(ELASTIC_QUOTA, _A.ALL))),
    # scheduler-plugins' NodeResourcesAllocatable: score only (no events).
    PluginRecord("NodeResourcesAllocatable",
                 node_resources_allocatable.NodeResourcesAllocatableArgs,
                 score=lambda a, v: node_resources_allocatable.NodeResourcesAllocatable(a)),
    # scheduler-plugins' NetworkAware. NetworkOverhead has no EnqueueExtensions upstream, so
    # every cluster event may make a pod it rejected schedulable; TopologicalSort is a QueueSort
    # (simulator only), as is kube-scheduler's PrioritySort, registered so a policy can name it.
    PluginRecord("NetworkOverhead", network_aware.NetworkOverheadArgs,
                 filter=lambda a, v: network_aware.NetworkOverhead(a),
                 score=lambda a, v: network_aware.NetworkOverhead(a),
                 events=(ClusterEvent(WILDCARD, _A.ALL),)),
    PluginRecord("TopologicalSort", network_aware.TopologicalSortArgs,
                 queue_sort=lambda a, v: network_aware.TopologicalSort(a)),
    PluginRecord("PrioritySort", queue_sort=lambda a, v: priority_sort.PrioritySort()),
    # scheduler-plugins' QOSSort (`pkg/qos`): priority, then QoS class, then queue time.
    PluginRecord("QOSSort", queue_sort=lambda a, v: qos_sort.QOSSort()),
    # scheduler-plugins' CrossNodePreemption (sample): victims on several nodes, so only the
    # simulator runs it; the preempt verb vets its policies as DefaultPreemption.
    PluginRecord("CrossNodePreemption", CrossNodePreemptionArgs,
                 post_filter=lambda a, v: CrossNodePreemption(a)),
    # scheduler-plugins' Trimaran: load-aware scorers over the node load metrics (no events).
    PluginRecord("TargetLoadPacking", args.TargetLoadPackingArgs,
                 score=lambda a, v: TargetLoadPacking(a)),
    PluginRecord("LoadVariationRiskBalancing", args.LoadVariationRiskBalancingArgs,
                 score=lambda a, v: LoadVariationRiskBalancing(a)),
    PluginRecord("LowRiskOverCommitment", args.LowRiskOverCommitmentArgs,
                 score=lambda a, v: LowRiskOverCommitment(a)),
    # scheduler-plugins' NodeResourceTopologyMatch: single-numa-node Filter and NUMA Score over
    # the nodes' NodeResourceTopology objects (its Reserve is the bind verb's assumption).
    PluginRecord("NodeResourceTopologyMatch",
                 node_resource_topology.NodeResourceTopologyMatchArgs,
                 filter=lambda a, v: node_resource_topology.NodeResourceTopologyMatch(a),
                 score=lambda a, v: node_resource_topology.NodeResourceTopologyMatch(a),
                 events=(ClusterEvent(POD, _A.DELETE),
                         ClusterEvent(NODE, _A.ADD | _A.UPDATE_NODE_ALLOCATABLE),
                         ClusterEvent(node_resource_topology.NODE_RESOURCE_TOPOLOGY,
                                      _A.ADD | _A.UPDATE))),
)

PLUGINS: dict[str, PluginRecord] = {record.name: record for record in RECORDS}


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


def factory(point: str, name: str) -> Factory:
    record = PLUGINS[name]
    made = {"filter": record.filter, "score": record.score, "postFilter": record.post_filter,
            "queueSort": record.queue_sort}[point]
    assert made is not None, f"{name} has no {point} extension point"
    return made
