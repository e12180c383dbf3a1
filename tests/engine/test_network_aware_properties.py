"""NetworkOverhead's fast paths against a straightforward reference: per-pod loops (no grouping,
no per-(region, zone) memo) over generated clusters, and Score = NormalizeScore(raw Score)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from extender.engine.evaluate import cluster_from_objects
from extender.engine.framework import CycleState
from extender.engine.plugins.network_aware import NetworkOverhead, NetworkOverheadArgs
from extender.engine.plugins.network_aware.network_overhead import normalize_costs
from extender.model import k8s
from extender.model.networkaware import APP_GROUP_LABEL, APP_GROUP_SELECTOR_LABEL
from extender.model.pod import PodView

REGION = "topology.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGIONS = ["", "r1", "r2"]
ZONES = ["", "z1", "z2", "z3"]
WORKLOADS = ["w1", "w2", "w3"]


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, Any], dict]:
    nodes = []
    for i in range(draw(st.integers(1, 6))):
        labels = {}
        region, zone = draw(st.sampled_from(REGIONS)), draw(st.sampled_from(ZONES))
        if region:
            labels[REGION] = region
        if zone:
            labels[ZONE] = zone
        nodes.append({"kind": "Node", "metadata": {"name": f"n{i}", "labels": labels},
                      "status": {"allocatable": {"pods": "110"}}})
    deps = {w: draw(st.lists(st.tuples(st.sampled_from(WORKLOADS), st.integers(0, 30)),
                             max_size=3)) for w in WORKLOADS}
    app_group = {"kind": "AppGroup", "metadata": {"name": "ag", "namespace": "default"},
                 "spec": {"workloads": [
                     {"workload": {"selector": w},
                      "dependencies": [{"workload": {"selector": d}, "maxNetworkCost": c}
                                       for d, c in ds]} for w, ds in deps.items()]}}
    costs = {}
    for values in (REGIONS[1:], ZONES[1:]):
        for origin in values:
            for destination in values:
                if origin != destination and draw(st.booleans()):
                    costs[(origin, destination)] = draw(st.integers(0, 40))
    topology = {"kind": "NetworkTopology", "metadata": {"name": "nt", "namespace": "default"},
                "spec": {"weights": [{"name": "UserDefined", "topologyList": [
                    {"topologyKey": key, "originList": [
                        {"origin": o, "costList": [{"destination": d, "networkCost": c}
                                                   for (oo, d), c in costs.items() if oo == o]}
                        for o in values]}
                    for key, values in ((ZONE, ZONES[1:]), (REGION, REGIONS[1:]))]}]}}
    pods = []
    for j in range(draw(st.integers(0, 8))):
        host = draw(st.sampled_from(nodes))["metadata"]["name"]
        ns = draw(st.sampled_from(["default", "other"]))
        pods.append({"kind": "Pod", "metadata": {
            "name": f"p{j}", "namespace": ns, "uid": f"u{j}",
            "labels": {APP_GROUP_LABEL: draw(st.sampled_from(["ag", "other"])),
                       APP_GROUP_SELECTOR_LABEL: draw(st.sampled_from(WORKLOADS))}},
            "spec": {"nodeName": host, "containers": []}})
    pending = {"kind": "Pod", "metadata": {
        "name": "pending", "namespace": "default", "uid": "pending",
        "labels": {APP_GROUP_LABEL: "ag",
                   APP_GROUP_SELECTOR_LABEL: draw(st.sampled_from(WORKLOADS))}},
        "spec": {"containers": []}}
    return [*nodes, app_group, topology, *pods], pending, costs


def reference(objects: list[dict[str, Any]], pending: dict[str, Any],
              costs: dict) -> dict[str, tuple[int, int, int]]:
    """checkMaxNetworkCostRequirements / getAccumulatedCost, pod by pod, for every node."""
    nodes = {o["metadata"]["name"]: o["metadata"]["labels"] for o in objects if o["kind"] == "Node"}
    (ag,) = [o for o in objects if o["kind"] == "AppGroup"]
    selector = pending["metadata"]["labels"][APP_GROUP_SELECTOR_LABEL]
    deps = [(d["workload"]["selector"], d["maxNetworkCost"]) for w in ag["spec"]["workloads"]
            if w["workload"]["selector"] == selector for d in w["dependencies"]]
    scheduled = [(o["metadata"]["labels"][APP_GROUP_SELECTOR_LABEL], o["spec"]["nodeName"])
                 for o in objects if o["kind"] == "Pod"
                 and o["metadata"]["labels"][APP_GROUP_LABEL] == "ag"]
    out = {}
    for name, labels in nodes.items():
        region, zone = labels.get(REGION, ""), labels.get(ZONE, "")
        sat = vio = cost = 0
        for sel, host in scheduled:
            for dsel, max_cost in deps:
                if sel != dsel:
                    continue
                if host == name:
                    sat += 1
                    continue
                hregion, hzone = nodes[host].get(REGION, ""), nodes[host].get(ZONE, "")
                if not hregion and not hzone:
                    vio += 1
                    cost += 100
                    continue
                if region == hregion:
                    if zone == hzone:
                        sat += 1
                        cost += 1
                        continue
                    known = costs.get((zone, hzone)) if zone else None
                else:
                    known = costs.get((region, hregion)) if region else None
                if known is None:
                    cost += 100
                    continue
                sat, vio = (sat + 1, vio) if known <= max_cost else (sat, vio + 1)
                cost += known
        out[name] = (sat, vio, cost)
    return out


@settings(max_examples=200, deadline=None)
@given(clusters(), st.randoms(use_true_random=False))
def test_network_overhead_matches_the_reference(cluster, rng) -> None:
    objects, pending, costs = cluster
    state = cluster_from_objects(objects)
    pod = PodView.from_k8s(k8s.convert(pending, k8s.Pod))
    plugin = NetworkOverhead(NetworkOverheadArgs.model_validate(
        {"networkTopologyName": "nt"}))
    expected = reference(objects, pending, costs)
    infos = list(state.nodes.values())
    rng.shuffle(infos)
    names = [info.node.name for info in infos]
    cycle = CycleState()
    prepared = plugin.pre_filter(cycle, pod, state)
    has_work = any(e[0] or e[1] or e[2] for e in expected.values())
    if prepared is None:
        assert not has_work
    else:
        cycle.write(plugin.name, prepared)
        for info in infos:
            sat, vio, _ = expected[info.node.name]
            status = prepared(info)
            assert (status is not None) == (vio > sat)
            if status is not None:
                assert status.reasons == (
                    f"Node {info.node.name} does not meet several network requirements from "
                    f"Workload dependencies: Satisfied: {sat} Violated: {vio}",)
    raw = plugin.raw_scores(cycle, pod, infos, state)
    assert raw == ([expected[n][2] for n in names] if prepared is not None else [0] * len(names))
    # Without the cycle's PreFilter state (the prioritize verb) the same; Score = Normalize(raw).
    assert plugin.raw_scores(CycleState(), pod, infos, state) == raw
    assert plugin.score(CycleState(), pod, infos, state) == normalize_costs(list(raw))
