"""NetworkOverhead (scheduler-plugins `pkg/networkaware/networkoverhead`).

A pod labelled `appgroup.diktyo.x-k8s.io: <AppGroup>` and `appgroup.diktyo.x-k8s.io.workload:
<selector>` depends on the workloads its AppGroup lists for that selector. For every pod of the
AppGroup already on a node (any namespace) whose workload is one of those dependencies, a
candidate node is judged against the node of that pod:

* the same node: satisfied, cost 0;
* that node has neither region nor zone label: violated, cost 100 (`MaxCost`);
* the same region and zone: satisfied, cost 1 (`SameZone`);
* the same region, another zone: the NetworkTopology's zone cost (candidate zone → that zone);
  within the dependency's `maxNetworkCost` satisfied, above it violated; no cost known:
  neither, cost 100;
* another region: the same with the region cost (candidate region → that region).

Filter rejects a node with more violated than satisfied dependencies (Unschedulable, with
upstream's message). Score is the node's accumulated cost; NormalizeScore turns the lowest cost
into 100 and the highest into 0, linearly (`100 − int64(100·(s−lo)/(hi−lo))` in float64).
A pod without an AppGroup label, without dependencies, or whose AppGroup has no pod on a node
yet passes every node and scores 0 everywhere (upstream's `scoreEqually`).

Where upstream dereferences a missing AppGroup or NetworkTopology (the scheduler panics), the
pod's cycle fails with an Error naming the missing object instead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from extender.engine.framework import (
    MAX_NODE_SCORE,
    ClusterContext,
    Code,
    CycleState,
    FilterState,
    PluginError,
    Status,
    unschedulable,
)
from extender.engine.plugins.network_aware.args import NetworkOverheadArgs
from extender.engine.plugins.network_aware.store import NetworkStore
from extender.model.networkaware import (
    APP_GROUP_LABEL,
    NETPERF_COSTS,
    REGION_KEY,
    ZONE_KEY,
    AppGroupView,
    Dependency,
    NetworkTopologyView,
    pod_app_group,
    pod_workload,
)
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.model.selectors import selector_from_set

NAME = "NetworkOverhead"
#: Upstream's constants: the cost of a dependency whose node has no region and no zone, or
#: whose cost the NetworkTopology does not give; on the same node; in the same zone.
MAX_COST = 100
SAME_HOSTNAME = 0
SAME_ZONE = 1

REASON = ("Node {node} does not meet several network requirements from Workload dependencies: "
          "Satisfied: {satisfied} Violated: {violated}")

#: (workload selector, node name, pods, that node's region, that node's zone)
Entry = tuple[str, str, int, str, str]


def go_slice(values: Iterable[str]) -> str:
    """A []string as Go's %s/%v prints it."""
    return "[" + " ".join(values) + "]"


T = TypeVar("T")


def find_in_namespaces(get: Callable[[str, str], T | None], namespaces: Sequence[str],
                       name: str) -> T | None:
    """The first namespace's object of that name (`find*NetworkOverhead`), by `get`
    (namespace, name); None when no namespace has one."""
    for namespace in namespaces:
        found = get(namespace, name)
        if found is not None:
            return found
    return None


def _region_zone(info: NodeInfo) -> tuple[str, str]:
    labels = info.node.labels or {}
    return labels.get(REGION_KEY, ""), labels.get(ZONE_KEY, "")


class NetworkPlan:
    """PreFilter's state: the pod's dependencies, the scheduled pods of its AppGroup that they
    name (with their nodes' region and zone), and the NetworkTopology's costs.

    `judge` is upstream's `checkMaxNetworkCostRequirements` and `getAccumulatedCost` for one
    node. A node hosting none of those pods is judged by its region and zone alone, so the
    answer is remembered per (region, zone)."""

    __slots__ = ("deps", "entries", "hosts", "topology", "weights_name", "_by_domain")

    def __init__(self, deps: Sequence[Dependency], entries: Sequence[Entry],
                 topology: NetworkTopologyView | None, weights_name: str) -> None:
        self.deps = tuple(deps)
        self.entries = tuple(entries)
        self.hosts = frozenset(entry[1] for entry in self.entries)
        self.topology = topology
        self.weights_name = weights_name
        self._by_domain: dict[tuple[str, str], tuple[int, int, int]] = {}

    def judge(self, info: NodeInfo) -> tuple[int, int, int]:
        """(satisfied, violated, accumulated cost) of the node."""
        name = info.node.name
        region, zone = _region_zone(info)
        if name in self.hosts:
            return self._judge(name, region, zone)
        key = (region, zone)
        found = self._by_domain.get(key)
        if found is None:
            found = self._by_domain[key] = self._judge(name, region, zone)
        return found

    def _judge(self, name: str, region: str, zone: str) -> tuple[int, int, int]:
        if not self.entries:
            return 0, 0, 0
        assert self.topology is not None
        costs = self.topology.cost_map(self.weights_name, region, zone)
        satisfied = violated = cost = 0
        for selector, host, count, host_region, host_zone in self.entries:
            for dep in self.deps:
                if dep.selector != selector:
                    continue
                if host == name:
                    satisfied += count
                    cost += SAME_HOSTNAME * count
                    continue
                if host_region == "" and host_zone == "":
                    violated += count
                    cost += MAX_COST * count
                    continue
                if region == host_region:
                    if zone == host_zone:
                        satisfied += count
                        cost += SAME_ZONE * count
                        continue
                    known = costs.get((zone, host_zone))
                else:
                    known = costs.get((region, host_region))
                if known is None:
                    cost += MAX_COST * count
                    continue
                if known <= dep.max_network_cost:
                    satisfied += count
                else:
                    violated += count
                cost += known * count
        return satisfied, violated, cost


def plan_for(pod: PodView, ctx: ClusterContext,
             args: NetworkOverheadArgs) -> NetworkPlan | Status | None:
    """PreFilter: the plan, None to score every node equally (`scoreEqually`), or an Error
    status. Upstream's order of checks is kept."""
    ag_name = pod_app_group(pod.labels)
    if not ag_name:
        return None  # "Pod does not belong to an AppGroup, return"
    namespaces = args.namespaces
    store = ctx.store(NetworkStore)
    app_group = find_in_namespaces(store.app_group, namespaces, ag_name)
    topology = find_in_namespaces(store.network_topology, namespaces,
                                  args.network_topology_name)
    manual = args.weights_name != NETPERF_COSTS
    if topology is None and manual:
        # sortNetworkTopologyCosts reads the NetworkTopology first.
        return _error(f'networkTopology "{args.network_topology_name}" not found in '
                      f"namespaces {go_slice(namespaces)}")
    if app_group is None:
        return _error(f'appGroup "{ag_name}" not found in namespaces {go_slice(namespaces)}')
    assert isinstance(app_group, AppGroupView)
    deps = app_group.dependencies(pod_workload(pod.labels))
    if not deps:
        return None  # "Pod has no dependencies, return"
    scheduled = scheduled_pods(ag_name, ctx)
    if not scheduled:
        return None  # "No pods yet allocated" / "Scheduled list is empty"
    nodes = ctx.nodes
    if not nodes:
        return NetworkPlan(deps, (), None, args.weights_name)
    if topology is None:
        # populateCostMap reads it for the first node (NetperfCosts weights).
        return _error(f'networkTopology "{args.network_topology_name}" not found in '
                      f"namespaces {go_slice(namespaces)}")
    assert isinstance(topology, NetworkTopologyView)
    wanted = {dep.selector for dep in deps}
    entries: list[Entry] = []
    missing: list[str] = []
    for (selector, host), count in sorted(scheduled.items()):
        if selector not in wanted:
            continue
        info = nodes.get(host)
        if info is None:
            missing.append(host)
            continue
        entries.append((selector, host, count, *_region_zone(info)))
    if missing:
        return _error(f"pod hostname not found: nodeinfo not found for node name "
                      f'"{min(missing)}"')
    return NetworkPlan(deps, entries, topology, args.weights_name)


def scheduled_pods(ag_name: str, ctx: ClusterContext) -> Counter[tuple[str, str]]:
    """`GetScheduledList` over the pod lister's pods of the AppGroup, every namespace:
    (workload selector, node name) -> pods."""
    found: Counter[tuple[str, str]] = Counter()
    selector = selector_from_set({APP_GROUP_LABEL: ag_name})
    index = ctx.pod_index
    for namespace in list(index.namespaces()):
        for group in index.matching(namespace, selector):
            workload = pod_workload(group.labels)
            for host, count in group.nodes.items():
                found[(workload, host)] += count
    for pod in ctx.unplaced_pods():  # bound to nodes the state does not know: listed all the same
        if pod_app_group(pod.labels) == ag_name and pod.node_name:
            found[(pod_workload(pod.labels), pod.node_name)] += 1
    return found


def _error(message: str) -> Status:
    return Status(Code.ERROR, (message,), NAME)


class NetworkOverheadFilter(FilterState):
    """Filter over the PreFilter plan. AddPod/RemovePod change nothing (upstream's are no-ops),
    and Clone returns the same state, as upstream's does."""

    def __init__(self, plan: NetworkPlan) -> None:
        self.plan = plan

    def __call__(self, node: NodeInfo) -> Status | None:
        satisfied, violated, _ = self.plan.judge(node)
        if violated > satisfied:
            return unschedulable(NAME, REASON.format(node=node.node.name, satisfied=satisfied,
                                                     violated=violated))
        return None

    def clone(self) -> NetworkOverheadFilter:
        return self


def normalize_costs(scores: list[int]) -> list[int]:
    """NetworkOverhead's NormalizeScore (in place): lower cost, higher score."""
    if not scores:
        return scores
    lowest, highest = min(scores), max(scores)
    if lowest == 0 and highest == 0:
        return scores
    if highest != lowest:
        spread = float(highest - lowest)
        scores[:] = [MAX_NODE_SCORE - int(float(MAX_NODE_SCORE) * float(s - lowest) / spread)
                     for s in scores]
    else:
        scores[:] = [MAX_NODE_SCORE - int(float(s - lowest)) for s in scores]
    return scores


class NetworkOverhead:
    """Filter (with PreFilter) and score plugin."""

    name = NAME

    def __init__(self, args: NetworkOverheadArgs | None = None) -> None:
        self.args = args or NetworkOverheadArgs()

    def pre_filter(self, state: CycleState, pod: PodView,
                   ctx: ClusterContext) -> NetworkOverheadFilter | Status | None:
        plan = plan_for(pod, ctx, self.args)
        if plan is None or isinstance(plan, Status):
            return plan
        return NetworkOverheadFilter(plan)

    def _plan(self, state: CycleState, pod: PodView, ctx: ClusterContext) -> NetworkPlan | None:
        # The cycle's PreFilter state when the filter ran in it (evaluate, the simulator);
        # the prioritize verb has none and computes the same plan.
        prepared = state.read(NAME)
        if isinstance(prepared, NetworkOverheadFilter):
            return prepared.plan
        plan = plan_for(pod, ctx, self.args)
        if isinstance(plan, Status):
            raise PluginError(NAME, plan.message)
        return plan

    def raw_scores(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
                   ctx: ClusterContext) -> list[int]:
        """Score: each node's accumulated cost (0 everywhere when scoring equally)."""
        plan = self._plan(state, pod, ctx)
        if plan is None:
            return [0] * len(nodes)
        return [plan.judge(info)[2] for info in nodes]

    def normalize(self, raw: list[int], state: CycleState) -> list[int]:
        return normalize_costs(raw)

    def score(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
              ctx: ClusterContext) -> list[int]:
        return self.normalize(self.raw_scores(state, pod, nodes, ctx), state)
