"""NetworkAware in the simulator: TopologicalSort orders activeQ when the policy enables it as
its queue sort (`plugins.queueSort`), and NetworkOverhead filters and scores with the
AppGroup and NetworkTopology of the cluster snapshot."""

from __future__ import annotations

from typing import Any

import pytest

from extender.engine.policy import PolicyError, parse_policy
from extender.model.networkaware import APP_GROUP_LABEL, APP_GROUP_SELECTOR_LABEL
from tests.engine.upstream import networkaware_data as data
from tests.engine.upstream.test_networkaware_rows import app_group, network_topology

from .helpers import by_name, node, pod, simulate

FILTERS = ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
           "NodeResourcesFit"]


def member(selector: str, group: str = "basic", **extra: Any) -> dict[str, Any]:
    obj = pod(f"{selector}-pod", "100m", **extra)
    obj["metadata"]["labels"] = {APP_GROUP_LABEL: group, APP_GROUP_SELECTOR_LABEL: selector}
    return obj


def policy(*, queue_sort: str | None, network: bool = False) -> dict[str, Any]:
    plugins: dict[str, Any] = {
        "filter": {"enabled": [{"name": n} for n in
                               (*FILTERS, *(["NetworkOverhead"] if network else []))]},
        "score": {"enabled": [{"name": "NetworkOverhead" if network else "NodeResourcesFit",
                               "weight": 1}]},
    }
    if queue_sort:
        plugins["queueSort"] = {"enabled": [{"name": queue_sort}]}
    return {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy", "plugins": plugins,
            "pluginConfig": [{"name": "NetworkOverhead", "args": {"networkTopologyName": "nt-test"}}]}


@pytest.mark.parametrize(("queue_sort", "order"), [
    (None, ["p3", "p2", "p1"]),                 # PrioritySort: arrival order at equal priority
    ("PrioritySort", ["p3", "p2", "p1"]),
    ("TopologicalSort", ["p1", "p2", "p3"]),    # basic's topologyOrder: p1 1, p2 2, p3 3
])
def test_topological_sort_orders_an_app_group_by_its_topology(tmp_path, queue_sort, order):
    cluster = [node("n1", "4", "8Gi"), app_group(data.APP_GROUP_BASIC)]
    workload = [member("p3"), member("p2"), member("p1")]  # all arrive at once, in this order
    _, report = simulate(tmp_path, cluster, workload, policy(queue_sort=queue_sort))
    pods = by_name(report)
    bound = sorted(pods.values(), key=lambda p: p["scheduledAtSeconds"])
    assert [p["name"].removesuffix("-pod") for p in bound] == order


def test_topological_sort_leaves_other_pods_to_priority(tmp_path):
    """A pod outside the AppGroup goes by priority against the group's pods."""
    cluster = [node("n1", "4", "8Gi"), app_group(data.APP_GROUP_BASIC)]
    workload = [member("p3"), member("p1"), pod("urgent", "100m", priority=100)]
    _, report = simulate(tmp_path, cluster, workload, policy(queue_sort="TopologicalSort"))
    bound = sorted(by_name(report).values(), key=lambda p: p["scheduledAtSeconds"])
    assert [p["name"] for p in bound] == ["urgent", "p1-pod", "p3-pod"]


def test_an_app_group_outside_the_sorts_namespaces_is_warned_of(tmp_path):
    """Upstream's TopologicalSort fails on such pods; the simulator orders them by priority and
    says so (it said nothing)."""
    cluster = [node("n1", "4", "8Gi"), app_group(data.APP_GROUP_BASIC)]
    workload = [member("p3", group="elsewhere"), member("p1", group="elsewhere")]
    _, report = simulate(tmp_path, cluster, workload, policy(queue_sort="TopologicalSort"))
    assert report["warnings"] == [
        "TopologicalSort: AppGroup(s) elsewhere of queued pods in none of its namespaces "
        "(default): those pods were ordered by priority (scheduler-plugins' TopologicalSort "
        "fails on them; set its namespaces)"]
    workload = [member("p3"), member("p1")]  # the AppGroup there: nothing to say
    _, report = simulate(tmp_path, cluster, workload, policy(queue_sort="TopologicalSort"))
    assert report["warnings"] == []


def test_network_overhead_keeps_a_dependency_in_its_zone(tmp_path):
    """p3 (no dependency) lands anywhere; p2 depends on p3 with maxNetworkCost 0, so only
    p3's zone (us-east-1/Z3 or Z4 here, 10 apart) satisfies it."""
    zones = {"e3": ("us-east-1", "Z3"), "e3b": ("us-east-1", "Z3"), "e4": ("us-east-1", "Z4")}
    nodes = []
    for name, (region, zone) in zones.items():
        nodes.append(node(name, "4", "8Gi", labels={data.REGION: region, data.ZONE: zone}))
    cluster = [*nodes, app_group(data.APP_GROUP_BASIC), network_topology(data.NETWORK_TOPOLOGY_BASIC)]
    for seed in range(4):
        workload = [member("p3"), member("p2", created="2024-01-01T00:00:01Z")]
        _, report = simulate(tmp_path, cluster, workload, policy(queue_sort=None, network=True),
                             seed=seed)
        pods = by_name(report)
        assert pods["p2-pod"]["status"] == "Scheduled"
        assert zones[pods["p2-pod"]["node"]][1] == zones[pods["p3-pod"]["node"]][1]


def test_topological_sort_cannot_replace_coscheduling_s_queue_sort():
    document = policy(queue_sort="TopologicalSort")
    document["plugins"]["filter"]["enabled"].append({"name": "Coscheduling"})
    with pytest.raises(PolicyError, match="cannot be enabled with Coscheduling"):
        parse_policy(document)


@pytest.mark.parametrize(("plugins", "message"), [
    ({"queueSort": {"enabled": [{"name": "NetworkOverhead"}]}},
     "plugins.queueSort.enabled[0].name: plugin 'NetworkOverhead' has no queueSort extension point"),
    ({"queueSort": {"enabled": [{"name": "TopologicalSort"}, {"name": "PrioritySort"}]}},
     "plugins.queueSort.enabled: exactly one queue sort plugin must be enabled (got 2)"),
    ({"filter": {"enabled": [{"name": "TopologicalSort"}]}},
     "plugins.filter.enabled[0].name: plugin 'TopologicalSort' has no filter extension point"),
])
def test_queue_sort_policy_problems(plugins, message):
    with pytest.raises(PolicyError) as caught:
        parse_policy({"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
                      "plugins": plugins})
    assert message in caught.value.problems
