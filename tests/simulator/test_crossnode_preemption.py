"""CrossNodePreemption in the simulator: the profile's PostFilter evicts victims on several
nodes (each on its own node, after its grace period) and nominates one node; the loop needs
nothing more than it does for DefaultPreemption."""

from __future__ import annotations

from typing import Any

from .helpers import by_name, node, pod, simulate

FILTERS = ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
           "NodeResourcesFit", "InterPodAffinity"]


def policy(post_filter: str) -> dict[str, Any]:
    return {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy", "plugins": {
        "filter": {"enabled": [{"name": n} for n in FILTERS]},
        "score": {"enabled": [{"name": "NodeResourcesFit", "weight": 1}]},
        "postFilter": {"enabled": [{"name": post_filter}], "disabled": [{"name": "*"}]}}}


def labelled(obj: dict[str, Any], **labels: str) -> dict[str, Any]:
    obj["metadata"]["labels"] = labels
    return obj


def cluster() -> list[dict[str, Any]]:
    """zone1: db-1 on node-a, db-2 and web on node-b; zone2: node-x, full (one pod allowed)
    with a pod of the preemptor's priority. The victims go at once (grace period 0)."""
    return [
        node("node-a", "4", "8Gi", labels={"zone": "zone1"}),
        node("node-b", "4", "8Gi", labels={"zone": "zone1"}),
        node("node-x", "4", "8Gi", pods="1", labels={"zone": "zone2"}),
        labelled(pod("db-1", "100m", node_name="node-a", terminationGracePeriodSeconds=0),
                 app="db"),
        labelled(pod("db-2", "100m", node_name="node-b", terminationGracePeriodSeconds=0),
                 app="db"),
        labelled(pod("web", "100m", node_name="node-b", terminationGracePeriodSeconds=0),
                 app="web"),
        pod("x", "100m", node_name="node-x", priority=100),
    ]


def preemptor() -> dict[str, Any]:
    """Required anti-affinity to app=db within a zone."""
    return pod("p", "100m", priority=100, affinity={"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone"}]}})


def test_cross_node_preemption_evicts_on_two_nodes_and_schedules_the_pod(tmp_path):
    _, report = simulate(tmp_path, cluster(), [preemptor()], policy("CrossNodePreemption"))
    pods = by_name(report)
    assert pods["p"]["status"] == "Scheduled"
    assert pods["p"]["node"] == "node-a"  # the nominated node (node-a and node-b tie)
    assert sorted(pods["p"]["preempted"]) == ["default/db-1", "default/db-2"]
    for victim in ("db-1", "db-2"):
        assert (pods[victim]["status"], pods[victim]["preemptedBy"]) == ("Preempted", "default/p")
    assert report["totals"]["preempted"] == 2  # web, not needed, is spared


def test_default_preemption_cannot_place_the_same_pod(tmp_path):
    _, report = simulate(tmp_path, cluster(), [preemptor()], policy("DefaultPreemption"))
    pods = by_name(report)
    assert pods["p"]["status"] != "Scheduled"
    assert report["totals"]["preempted"] == 0
