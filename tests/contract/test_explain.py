"""POST /explain through the real HTTP app: every filter plugin's verdict on every node, the
score breakdown, and agreement with what /filter and /prioritize answer for the same body."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from starlette.testclient import TestClient

from extender.api.app import create_app
from extender.api.candidates import UNKNOWN_NODE
from extender.api.runtime import Runtime
from extender.engine.policy import load_policy
from extender.engine.profile import build_profile
from extender.state.binder import SnapshotBinder
from tests.conftest import ROOT, fixture_bytes, fixture_json
from tests.contract.test_bad_input import BAD_BODIES

UNTOLERATED = "node(s) had untolerated taint(s)"
AFFINITY = "node(s) didn't match Pod's node affinity/selector"


@pytest.fixture
def default_client(demo_state):
    """The app under config/policy.yaml (kube-scheduler's defaults: several weighted scorers)."""
    profile = build_profile(load_policy(ROOT / "config" / "policy.yaml"))
    runtime = Runtime(profile, demo_state, SnapshotBinder(demo_state, 30.0))
    with TestClient(create_app(runtime)) as test_client:
        yield test_client


def failing(node: dict[str, Any]) -> dict[str, list[str]]:
    return {v["plugin"]: v["reasons"] for v in node["filters"]
            if v["code"] not in ("Success", "Skip")}


def filter_messages(reply: dict[str, Any]) -> dict[str, str]:
    return {**reply["FailedNodes"], **reply["FailedAndUnresolvableNodes"]}


def test_every_filter_plugin_on_every_node(client):
    body = fixture_bytes("filter-names.request.json")
    reply = client.post("/explain", content=body)
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "application/json"
    out = reply.json()
    assert set(out) == {"pod", "prefilter", "rejection", "scorers", "feasible", "nodes"}
    assert out["pod"] == "default/api-7d9f"
    assert out["rejection"] is None
    assert list(out["nodes"]) == fixture_json("filter-names.request.json")["NodeNames"]
    assert out["feasible"] == ["worker-a1", "worker-a2"]
    plugins = ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
               "NodeResourcesFit"]
    assert [(v["plugin"], v["code"]) for v in out["prefilter"]] == [
        ("NodeUnschedulable", "Success"), ("NodeName", "Skip"), ("TaintToleration", "Success"),
        ("NodeAffinity", "Success"), ("NodePorts", "Skip"), ("NodeResourcesFit", "Success")]
    for node in out["nodes"].values():
        assert [v["plugin"] for v in node["filters"]] == plugins  # every plugin, policy order
    # Not only the first failure: the cordoned node fails three plugins, tiny-c2 two.
    assert failing(out["nodes"]["cordoned-c1"]) == {
        "NodeUnschedulable": ["node(s) were unschedulable"], "TaintToleration": [UNTOLERATED],
        "NodeAffinity": [AFFINITY]}
    assert failing(out["nodes"]["tiny-c2"]) == {"NodeAffinity": [AFFINITY],
                                                "NodeResourcesFit": ["Too many pods"]}
    assert out["nodes"]["worker-b2"]["verdict"] == {
        "plugin": "NodeResourcesFit", "code": "Unschedulable", "reasons": ["Insufficient cpu"]}
    # The verdict is what /filter reports for the node, for every node.
    filtered = client.post("/filter", content=body).json()
    verdicts = {name: ", ".join(node["verdict"]["reasons"])
                for name, node in out["nodes"].items() if node["verdict"] is not None}
    assert verdicts == filter_messages(filtered)
    assert out["feasible"] == filtered["NodeNames"]
    # Infeasible nodes get no scores.
    assert out["nodes"]["gpu-b1"]["scores"] == []
    assert out["nodes"]["gpu-b1"]["total"] is None
    assert out["nodes"]["gpu-b1"]["extenderScore"] is None


def test_a_node_failing_taint_and_resources_shows_both(client):
    request = fixture_json("filter-names.request.json")
    # 7 cpu: gpu-b1 (8 cpu, 2 requested) is also too small, besides its taint.
    request["Pod"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "7"
    out = client.post("/explain", json=request).json()
    gpu = out["nodes"]["gpu-b1"]
    assert failing(gpu) == {"TaintToleration": [UNTOLERATED],
                            "NodeResourcesFit": ["Insufficient cpu"]}
    assert {v["plugin"]: v["code"] for v in gpu["filters"]}["NodeResourcesFit"] == "Unschedulable"
    # /filter names only the first failure, in policy order.
    assert gpu["verdict"]["plugin"] == "TaintToleration"
    assert filter_messages(client.post("/filter", json=request).json())["gpu-b1"] == UNTOLERATED
    assert out["feasible"] == []


def test_score_breakdown_sums_to_total_and_matches_prioritize(default_client):
    out = default_client.post("/explain",
                              content=fixture_bytes("filter-names.request.json")).json()
    assert out["feasible"] == ["worker-a1", "worker-a2"]
    assert [(s["plugin"], s["weight"], s["status"]) for s in out["scorers"]] == [
        ("TaintToleration", 3, "Scored"), ("NodeAffinity", 2, "Scored"),
        ("PodTopologySpread", 2, "Skipped"), ("InterPodAffinity", 2, "Skipped"),
        ("NodeResourcesFit", 1, "Scored"), ("NodeResourcesBalancedAllocation", 1, "Scored"),
        ("ImageLocality", 1, "Scored")]
    a1 = out["nodes"]["worker-a1"]
    assert {s["plugin"]: (s["raw"], s["normalized"], s["weight"], s["weighted"])
            for s in a1["scores"]} == {
        "TaintToleration": (0, 100, 3, 300),   # no PreferNoSchedule taint: reversed to 100
        "NodeAffinity": (50, 100, 2, 200),     # the only candidate with disktype=ssd
        "NodeResourcesFit": (31, 31, 1, 31),   # no NormalizeScore: raw = normalised
        # v1.36+: the pod's effect on the balance (kube-scheduler's own plugin agrees: 72)
        "NodeResourcesBalancedAllocation": (72, 72, 1, 72),
        "ImageLocality": (0, 0, 1, 0)}
    assert (a1["total"], a1["extenderScore"]) == (603, 8)
    a2 = out["nodes"]["worker-a2"]
    assert (a2["total"], a2["extenderScore"]) == (443, 6)
    for name in out["feasible"]:
        node = out["nodes"][name]
        assert node["total"] == sum(s["weighted"] for s in node["scores"])
        assert all(s["weighted"] == s["normalized"] * s["weight"] for s in node["scores"])
    # The 0..10 score is what /prioritize answers for the feasible nodes (what kube-scheduler
    # sends it after filtering).
    prioritize = fixture_json("prioritize-names.request.json")
    assert prioritize["NodeNames"] == out["feasible"]
    answered = default_client.post("/prioritize", json=prioritize).json()
    assert answered == [{"Host": name, "Score": out["nodes"][name]["extenderScore"]}
                        for name in out["feasible"]]


def test_prioritize_fixture_agrees_under_the_fixture_policy(client):
    out = client.post("/explain", content=fixture_bytes("prioritize-names.request.json")).json()
    expected = fixture_json("prioritize-leastallocated.expected.json")
    assert [{"Host": name, "Score": out["nodes"][name]["extenderScore"]}
            for name in out["feasible"]] == expected


def test_nodes_form_explains_the_same(client):
    names = client.post("/explain", content=fixture_bytes("filter-names.request.json")).json()
    nodes = client.post("/explain", content=fixture_bytes("filter-nodes.request.json")).json()
    assert nodes["nodes"].keys() == names["nodes"].keys()
    assert nodes == names


def test_a_prefilter_rejection_and_the_other_plugins(default_client):
    request = fixture_json("filter-names.request.json")
    request["Pod"]["spec"]["affinity"]["podAntiAffinity"] = {
        "requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Bogus"}]},
            "topologyKey": "kubernetes.io/hostname"}]}
    out = default_client.post("/explain", json=request).json()
    rejection = out["rejection"]
    assert rejection["plugin"] == "InterPodAffinity"
    assert rejection["code"] == "UnschedulableAndUnresolvable"
    assert "'Bogus' is not a valid label selector operator" in rejection["reasons"][0]
    assert {v["plugin"]: v for v in out["prefilter"]}["InterPodAffinity"] == rejection
    assert out["feasible"] == []
    for node in out["nodes"].values():
        assert node["verdict"] == rejection
    # The other plugins still judged every node.
    assert failing(out["nodes"]["gpu-b1"]) == {"TaintToleration": [UNTOLERATED],
                                               "InterPodAffinity": rejection["reasons"]}
    assert failing(out["nodes"]["worker-a1"]) == {"InterPodAffinity": rejection["reasons"]}


def test_unknown_nodes_are_reported_in_request_order(client):
    request = fixture_json("filter-names.request.json")
    request["NodeNames"] = ["ghost-9", "worker-a1", "worker-a1"]
    out = client.post("/explain", json=request).json()
    assert list(out["nodes"]) == ["ghost-9", "worker-a1"]
    assert out["nodes"]["ghost-9"] == {
        "feasible": False, "filters": [], "scores": [], "total": None, "extenderScore": None,
        "verdict": {"plugin": "", "code": "Unschedulable", "reasons": [UNKNOWN_NODE]}}
    assert out["feasible"] == ["worker-a1"]
    assert out["nodes"]["worker-a1"]["extenderScore"] == 3  # as /prioritize: LeastAllocated


def test_explain_changes_nothing(client):
    before = client.post("/prioritize", content=fixture_bytes("prioritize-names.request.json"))
    for _ in range(2):
        assert client.post("/explain",
                           content=fixture_bytes("filter-names.request.json")).status_code == 200
    after = client.post("/prioritize", content=fixture_bytes("prioritize-names.request.json"))
    assert before.json() == after.json()


def test_explain_does_not_remember_the_pod_for_bind(client, runtime):
    uid = "uid-default-api-7d9f"
    client.post("/explain", content=fixture_bytes("filter-names.request.json"))
    assert runtime.state.pending_pod(uid) is None
    client.post("/filter", content=fixture_bytes("filter-names.request.json"))
    assert runtime.state.pending_pod(uid) is not None  # /filter does


@pytest.mark.parametrize(("body", "message"), BAD_BODIES)
def test_bad_body_is_400_with_message(client, body, message):
    response = client.post("/explain", content=body)
    assert response.status_code == 400
    assert message in response.json()["Error"]
    assert "Traceback" not in response.text
    assert client.post("/explain", content=fixture_bytes("filter-names.request.json")).status_code == 200


def test_too_many_candidates_is_413(client, runtime):
    runtime.max_candidates = 2
    request = fixture_json("filter-names.request.json")
    response = client.post("/explain", json=request)
    assert response.status_code == 413
    assert "6 candidate nodes exceed the limit of 2" in response.json()["Error"]
    nodes = copy.deepcopy(fixture_json("filter-nodes.request.json"))
    assert client.post("/explain", json=nodes).status_code == 413


def test_wrong_method(client):
    assert client.get("/explain").status_code == 405
