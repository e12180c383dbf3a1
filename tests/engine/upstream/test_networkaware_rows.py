"""scheduler-plugins' NetworkAware unit-test rows (NetworkOverhead, TopologicalSort).

The rows are the data transcribed, with citations, in `networkaware_data.py`; each test is
parametrised with one row per pytest param, id = the upstream case name.

How upstream's wiring maps onto the engine
------------------------------------------
* NetworkOverhead's PreFilter + Filter (TestNetworkOverheadFilter) and PreFilter + Score +
  NormalizeScore (TestNetworkOverheadScore) go through the public `extender.engine.evaluate`
  (normalised scores, per-node filter verdicts) and `extender.engine.explain` (the raw Score
  before NormalizeScore). Upstream scores every node after PreFilter without running Filter,
  so the score rows use a policy with no filter and NetworkOverhead as the only scorer.
* The PreFilter benchmark's table (`BenchmarkNetworkOverheadPreFilter`) asserts PreFilter's
  Success; its random node labels are drawn from a seeded generator here.
* TopologicalSort's `Less` rows run through the plugin the policy's `queueSort` builds, on
  queued-pod records with equal (zero) timestamps as upstream's, and then through the
  simulator's activeQ (`PriorityQueue` with the plugin's sort key): the pod `Less` puts first
  pops first.

Not transcribed: BenchmarkNetworkOverheadScore / BenchmarkNetworkOverheadFilter (the same
table as the PreFilter benchmark, asserting only NormalizeScore's success, which the
benchmark row here also exercises) and BenchmarkTopologicalSortPlugin (no expectation).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from extender.engine import evaluate
from extender.engine.evaluate import cluster_from_objects
from extender.engine.explain import explain
from extender.engine.policy import parse_policy
from extender.engine.queuesort import queue_sort_plugin
from extender.model import k8s
from extender.model.networkaware import APP_GROUP_LABEL, APP_GROUP_SELECTOR_LABEL
from extender.model.pod import PodView
from extender.simulator.clock import VirtualClock
from extender.simulator.queue import PriorityQueue, QueuedPodInfo
from tests.engine.upstream import networkaware_data as data

Obj = dict[str, Any]


# ---- builders: the data module's records -> Kubernetes objects ------------------------------

def app_group(spec: Obj) -> Obj:
    def workload(selector: str) -> Obj:
        return data._workload(selector)

    meta: Obj = {"name": spec["name"], "namespace": "default"}
    if spec["uid"]:
        meta["uid"] = spec["uid"]
    return {
        "apiVersion": "appgroup.diktyo.x-k8s.io/v1alpha1", "kind": "AppGroup", "metadata": meta,
        "spec": {"numMembers": spec["numMembers"],
                 "topologySortingAlgorithm": spec["topologySortingAlgorithm"],
                 "workloads": [{"workload": workload(sel),
                                **({"dependencies": [{"workload": workload(d)} for d in deps]}
                                   if deps else {})}
                               for sel, deps in spec["workloads"]]},
        "status": {"topologyOrder": [{"workload": workload(sel), "index": index}
                                     for sel, index in spec["topologyOrder"]]},
    }


def network_topology(spec: Obj) -> Obj:
    meta: Obj = {"name": spec["name"], "namespace": "default"}
    if spec["uid"]:
        meta["uid"] = spec["uid"]
    return {
        "apiVersion": "networktopology.diktyo.x-k8s.io/v1alpha1", "kind": "NetworkTopology",
        "metadata": meta,
        "spec": {"configmapName": "", "weights": [
            {"name": name, "topologyList": [
                {"topologyKey": key, "originList": [
                    {"origin": origin, "costList": [{"destination": d, "networkCost": c}
                                                    for d, c in costs]}
                    for origin, costs in origins]}
                for key, origins in topology]}
            for name, topology in spec["weights"].items()]},
    }


def node(name: str, region: str, zone: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": f"uid-node-{name}",
                         "labels": {data.REGION: region, data.ZONE: zone}},
            "status": {"allocatable": {"cpu": "8000m", "memory": "16Gi", "pods": "32"}}}


def pod(selector: str, name: str, app_group_name: str, node_name: str = "",
        uid: str | None = None) -> Obj:
    """makePod / makePodAllocated."""
    spec: Obj = {"priority": 0, "containers": [{"name": name, "image": "img"}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default",
                         "uid": uid or f"uid-{name}-{node_name or 'pending'}",
                         "labels": {APP_GROUP_LABEL: app_group_name,
                                    APP_GROUP_SELECTOR_LABEL: selector}},
            "spec": spec, "status": {"phase": "Running" if node_name else "Pending"}}


def network_policy(*, filters: list[str], scores: list[str]) -> Obj:
    """`pl := &NetworkOverhead{namespaces: ["default"], weightsName: "UserDefined",
    ntName: "nt-test"}`."""
    return {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
            "plugins": {"filter": {"enabled": [{"name": n} for n in filters]},
                        "score": {"enabled": [{"name": n, "weight": 1} for n in scores]}},
            "pluginConfig": [{"name": "NetworkOverhead", "args": {
                "namespaces": ["default"], "weightsName": "UserDefined",
                "networkTopologyName": "nt-test"}}]}


def basic_objects(pods: list[tuple[str, str, str, str]]) -> list[Obj]:
    return [app_group(data.APP_GROUP_BASIC), network_topology(data.NETWORK_TOPOLOGY_BASIC),
            *(node(*n) for n in data.NODES_BASIC),
            *(pod(sel, name, ag, host) for sel, name, host, ag in pods)]


def _ids(rows: list[Obj]) -> list[Any]:
    return [pytest.param(row, id=row["case"]) for row in rows]


# ---- NetworkOverhead ------------------------------------------------------------------------

# pkg/networkaware/networkoverhead/networkoverhead_test.go TestNetworkOverheadScore
@pytest.mark.parametrize("row", _ids(data.SCORE_ROWS))
def test_network_overhead_score(row: Obj) -> None:
    objects = basic_objects(row["pods"])
    pending = pod(*row["pod"][:2], row["pod"][2])
    policy = network_policy(filters=[], scores=["NetworkOverhead"])
    names = [n for n, _, _ in data.NODES_BASIC]
    ev = evaluate(objects, pending, policy)
    assert ev.prefilter is None
    assert [ev.scores["NetworkOverhead"][n] for n in names] == row["normalized"]
    ex = explain(objects, pending, policy)
    raw = [next(s["raw"] for s in ex.nodes[n].scores if s["plugin"] == "NetworkOverhead")
           for n in names]
    assert raw == row["raw"]


# pkg/networkaware/networkoverhead/networkoverhead_test.go TestNetworkOverheadFilter
@pytest.mark.parametrize("row", _ids(data.FILTER_ROWS))
def test_network_overhead_filter(row: Obj) -> None:
    objects = basic_objects(row["pods"])
    pending = pod(*row["pod"][:2], row["pod"][2])
    ev = evaluate(objects, pending, network_policy(filters=["NetworkOverhead"], scores=[]),
                  nodes=[row["node"]])
    assert ev.prefilter is None  # PreFilter: Success
    got = ev.filter[row["node"]]
    if row["want"] is None:
        assert got is None
    else:
        code, message = row["want"]
        assert got == {"plugin": "NetworkOverhead", "code": code, "reasons": [message]}


def _benchmark_objects(count: int) -> list[Obj]:
    rng = random.Random(count)
    nodes = [node(f"n-{i + 1}", rng.choice(data.BENCHMARK_REGIONS),
                  rng.choice(data.BENCHMARK_ZONES)) for i in range(count)]
    pods = [pod(sel, name, "onlineboutique", host) for sel, name, host in data.BENCHMARK_PODS]
    return [app_group(data.APP_GROUP_ONLINE_BOUTIQUE),
            network_topology(data.NETWORK_TOPOLOGY_FULL), *nodes, *pods]


# pkg/networkaware/networkoverhead/networkoverhead_test.go BenchmarkNetworkOverheadPreFilter
@pytest.mark.parametrize("row", _ids(data.PREFILTER_BENCHMARK_ROWS))
def test_network_overhead_prefilter_benchmark_table(row: Obj) -> None:
    objects = _benchmark_objects(row["nodes"])
    pending = pod(*row["pod"][:2], row["pod"][2])
    ev = evaluate(objects, pending,
                  network_policy(filters=["NetworkOverhead"], scores=["NetworkOverhead"]))
    assert row["expected"] == "Success" and ev.prefilter is None
    # NormalizeScore succeeded: every feasible node has a 0..100 score.
    assert all(0 <= s <= 100 for s in ev.scores["NetworkOverhead"].values())


# ---- TopologicalSort ------------------------------------------------------------------------

def _less_context(row: Obj) -> Any:
    spec = {"basic": data.APP_GROUP_BASIC,
            "onlineboutique": data.APP_GROUP_ONLINE_BOUTIQUE}[row["app_group"]]
    return cluster_from_objects([app_group(spec)])


def _topological_sort() -> Any:
    policy = parse_policy({"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
                           "plugins": {"queueSort": {"enabled": [{"name": "TopologicalSort"}]}},
                           "pluginConfig": [{"name": "TopologicalSort",
                                             "args": {"namespaces": ["default"]}}]})
    plugin = queue_sort_plugin(policy)
    assert plugin is not None and plugin.name == "TopologicalSort"
    return plugin


def _view(spec: tuple[str, str, str]) -> PodView:
    return PodView.from_k8s(k8s.convert(pod(*spec[:2], spec[2]), k8s.Pod))


# pkg/networkaware/topologicalsort/topologicalsort_test.go TestTopologicalSortLess
@pytest.mark.parametrize("row", _ids(data.LESS_ROWS))
def test_topological_sort_less(row: Obj) -> None:
    plugin = _topological_sort()
    ctx = _less_context(row)
    info1 = QueuedPodInfo(_view(row["p1"]), 0)
    info2 = QueuedPodInfo(_view(row["p2"]), 0)
    assert plugin.less(info1, info2, ctx) is row["want"]


# The same rows through the simulator's activeQ: pInfo2 is queued first, then pInfo1 (at the
# same virtual time); the pod `Less` puts first pops first.
@pytest.mark.parametrize("row", _ids(data.LESS_ROWS))
def test_topological_sort_orders_the_active_queue(row: Obj) -> None:
    plugin = _topological_sort()
    ctx = _less_context(row)
    queue = PriorityQueue(VirtualClock(), sort_key=plugin.sort_key(ctx))
    second = queue.add(_view(row["p2"]))
    first = queue.add(_view(row["p1"]))
    popped = queue.pop()
    assert popped is (first if row["want"] else second)
