"""NodeResourceTopologyMatch (kubernetes-sigs/scheduler-plugins, `pkg/noderesourcetopology`):
NUMA-aware placement from the `NodeResourceTopology` objects a node agent (NFD topology-updater,
resource-topology-exporter) publishes per node. `../shared/reference/plugins-next.md` §7.

* Filter: on a node whose kubelet runs the Topology Manager with the `single-numa-node`
  policy, the pod (scope `pod`) or each container (scope `container`; init and sidecar
  containers each on their own, app containers one after the other on what the previous ones
  left) must fit in one NUMA cell, else `cannot align pod` / `cannot align init container` /
  `cannot align sidecar container` / `cannot align container` (Unschedulable). BestEffort pods asking for no device pass; a node
  without a NodeResourceTopology, or with another policy, passes.
* Score (no NormalizeScore): MostAllocated, LeastAllocated, BalancedAllocation (single-numa-node
  nodes only) or LeastNUMANodes (any policy); only Guaranteed pods are scored (others: 100); a
  node without data scores 0.
* The overreserve cache (`cacheResyncPeriodSeconds` > 0): the plugin reads the cache's copy of
  each node's report, with the pods this extender bound to the node since taken from every NUMA
  cell (`TopologyStore`). A Filter rejection marks the node; every period (`serve`, live:
  `state.nrtresync`), a marked node whose latest report carries the pod fingerprint of the pods
  on it gets that report as its copy, its reservations dropped; a report that changes the
  Topology Manager's configuration does so at the next resync whatever its fingerprint.
  A node where a pod of another scheduler ran since is stale (`foreignPodsDetect`): Filter
  answers `invalid node topology data` (Unschedulable) and Score 0 until a resync takes its
  report. Two differences from upstream: a node's first report is taken whenever it arrives
  (upstream lists the reports once, at its start, and never learns of a node added later,
  whose pods it then places as if it had no report), and the profiles that are not "another
  scheduler" are learned from the pods kube-scheduler asks about (upstream's are its own
  profiles' names, known from its start).
* Reserve is the bind verb's start (kube-scheduler has no Reserve call for extenders; it binds
  right after its Reserve and Permit): the cache counts the pod from there, and forgets it
  if the bind fails (Unreserve). `discardReservedNodes` (upstream's DiscardReserved cache,
  which takes precedence over the others): a node with a bind under way, from its start to
  its end (PostBind or Unreserve), is `invalid node topology data` to Filter and 0 to Score;
  otherwise the reports are read as they are.

The plugin reads the cluster (`node_topology`, `topology_reservations` of the state), so it has
the cross-node shape; its verdict on a node depends only on that node, and preemption's
AddPod/RemovePod do not change it (upstream's own preemption support is off by default).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from extender.engine.framework import (
    MAX_NODE_SCORE,
    ClusterContext,
    Code,
    CycleState,
    FilterState,
    Profile,
    Status,
    unschedulable,
)
from extender.engine.plugins.node_resource_topology.args import NodeResourceTopologyMatchArgs
from extender.engine.plugins.node_resource_topology.filtering import (
    INCONSISTENT_ACCOUNTING,
    AccountingError,
    node_resource_names,
    single_numa_verdict,
)
from extender.engine.plugins.node_resource_topology.scoring import (
    STRATEGIES,
    least_numa_score,
    strategy_score,
)
from extender.engine.plugins.node_resource_topology.store import TopologyStore
from extender.model.nodeinfo import NodeInfo
from extender.model.numa import (
    POLICY_SINGLE_NUMA_NODE,
    QOS_BEST_EFFORT,
    QOS_GUARANTEED,
    NRTView,
    NumaCell,
    NumaPod,
    numa_pod,
)
from extender.model.pod import PodView

NAME = "NodeResourceTopologyMatch"
#: Filter's answer on a node the cache takes for stale (`!info.Fresh`).
INVALID_TOPOLOGY = "invalid node topology data"
#: The cluster event resource the plugin registers (`EventsToRegister`, GVK form).
NODE_RESOURCE_TOPOLOGY = "noderesourcetopologies.v1alpha2.topology.node.k8s.io"
LEAST_NUMA_NODES = "LeastNUMANodes"


_STALE = unschedulable(NAME, INVALID_TOPOLOGY)


def pod_info(pod: PodView) -> NumaPod | None:
    """The pod's containers as the plugin reads them; None for a view without its spec."""
    if pod.pod_spec is None:
        return None
    return numa_pod(pod.namespace, pod.name, pod.pod_spec)


class TopologyFilterState(FilterState):
    """Filter for one pod: each node judged on its own NodeResourceTopology."""

    __slots__ = ("plugin", "pod", "ctx")

    def __init__(self, plugin: NodeResourceTopologyMatch, pod: NumaPod,
                 ctx: ClusterContext) -> None:
        self.plugin = plugin
        self.pod = pod
        self.ctx = ctx

    def __call__(self, node: NodeInfo) -> Status | None:
        return self.plugin.filter_node(self.pod, node, self.ctx)

    def clone(self) -> TopologyFilterState:
        return self  # nothing AddPod/RemovePod change


class NodeResourceTopologyMatch:
    name = NAME

    def __init__(self, args: NodeResourceTopologyMatchArgs) -> None:
        self.args = args
        strategy = args.scoring_strategy
        self.strategy_type = strategy.type
        self.strategy = STRATEGIES.get(strategy.type)
        self.weight: Callable[[str], int] = strategy.weight

    # ---- the node's report, through the cache -----------------------------------------
    def topology(self, node_name: str, ctx: ClusterContext
                 ) -> tuple[NRTView | None, Sequence[NumaCell]] | None:
        """`GetCachedNRTCopy`: the node's report and its NUMA cells, with the overreserve
        cache's reservations taken off when it is on; None when the cache takes the node
        for stale (pods of another scheduler ran there since it took the node's report; with
        `discardReservedNodes`, a bind under way there)."""
        store = ctx.store(TopologyStore)
        if self.args.discard_reserved_nodes and store.binding.get(node_name):
            return None
        if not self.args.overreserve:
            view = store.node_topology(node_name)
            return (None, ()) if view is None else (view, view.cells)
        if store.has_foreign_pods(node_name):
            return None
        view = store.cached_topology(node_name)
        if view is None:
            return None, ()
        return view, view.with_reserved(store.reservations(node_name))

    # ---- Filter -------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodView,
                   ctx: ClusterContext) -> FilterState | Status | None:
        info = pod_info(pod)
        if info is None or (info.qos == QOS_BEST_EFFORT and not info.non_native):
            return None  # Filter passes every node
        return TopologyFilterState(self, info, ctx)

    def filter_node(self, pod: NumaPod, node: NodeInfo, ctx: ClusterContext) -> Status | None:
        found = self.topology(node.node.name, ctx)
        if found is None:
            return _STALE
        view, cells = found
        if view is None or view.manager.policy != POLICY_SINGLE_NUMA_NODE:
            return None
        try:
            reason = single_numa_verdict(view.manager.scope, pod, cells,
                                         node_resource_names(node.node.allocatable.scalar))
        except AccountingError as exc:
            status = Status(Code.ERROR, (INCONSISTENT_ACCOUNTING, str(exc)), NAME)
        else:
            if reason is None:
                return None
            status = unschedulable(NAME, reason)
        if self.args.overreserve:
            ctx.store(TopologyStore).node_maybe_overreserved(node.node.name)
        return status

    # ---- Score (no NormalizeScore) ------------------------------------------------------
    def node_score(self, pod: NumaPod, node_name: str, ctx: ClusterContext) -> int:
        found = self.topology(node_name, ctx)
        view, cells = found if found is not None else (None, ())  # stale: scores 0
        if view is None:
            return 0
        manager = view.manager
        if self.strategy_type == LEAST_NUMA_NODES:
            return least_numa_score(manager.scope, pod, cells, manager.max_numa_nodes)
        if manager.policy != POLICY_SINGLE_NUMA_NODE or self.strategy is None:
            return 0
        return strategy_score(manager.scope, pod, cells, self.strategy, self.weight)

    def raw_scores(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
                   ctx: ClusterContext) -> list[int] | None:
        info = pod_info(pod)
        if info is None or info.qos != QOS_GUARANTEED:
            return [MAX_NODE_SCORE] * len(nodes)  # every node is a good fit
        return [self.node_score(info, node.node.name, ctx) for node in nodes]

    def normalize(self, raw: list[int], state: CycleState) -> list[int]:
        return raw

    def score(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
              ctx: ClusterContext) -> list[int] | None:
        return self.raw_scores(state, pod, nodes, ctx)


def topology_plugin(profile: Profile) -> NodeResourceTopologyMatch | None:
    """The profile's NodeResourceTopologyMatch (its filter, else its scorer: one set of
    arguments serves both), or None."""
    return next((p for p in profile.plugins if isinstance(p, NodeResourceTopologyMatch)), None)


def discards_reserved_nodes(profile: Profile) -> bool:
    """Whether `profile` runs NodeResourceTopologyMatch with `discardReservedNodes`: the bind
    verb then tells the store which nodes have a bind under way."""
    plugin = topology_plugin(profile)
    return plugin is not None and plugin.args.discard_reserved_nodes


__all__ = ["NAME", "NODE_RESOURCE_TOPOLOGY", "NodeResourceTopologyMatch",
           "NodeResourceTopologyMatchArgs", "discards_reserved_nodes", "topology_plugin"]
