"""PodTopologySpread and InterPodAffinity through the real HTTP app, default policy: counts
come from the extender's whole cluster view (not only the nodes sent), the system default
spread finds the pod's Service and ReplicaSet, and a bind is counted by the next request."""

from __future__ import annotations

import json

from starlette.testclient import TestClient

from extender.api.app import create_app
from extender.api.runtime import Runtime
from extender.engine.evaluate import DEFAULT_POLICY, cluster_from_objects
from extender.engine.policy import parse_policy
from extender.engine.profile import build_profile
from extender.state.binder import SnapshotBinder
from tests.engine.upstream.builders import (
    namespace,
    node,
    owner,
    pod,
    replica_set,
    selector,
    service,
)

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
ALLOC = {"cpu": "8", "memory": "16Gi", "pods": "110"}


def nodes() -> list[dict]:
    return [node(name, {ZONE: zone, HOST: name}, allocatable=ALLOC)
            for name, zone in (("a1", "a"), ("a2", "a"), ("b1", "b"), ("b2", "b"))]


def client_for(objects: list[dict]) -> TestClient:
    state = cluster_from_objects(objects)
    profile = build_profile(parse_policy(DEFAULT_POLICY))
    return TestClient(create_app(Runtime(profile, state, SnapshotBinder(state, 30.0))))


def web(name: str, node_name: str = "", **extra: object) -> dict:
    return pod(name, labels={"app": "web"}, node=node_name, requests={"cpu": "100m"},
               owner=owner("ReplicaSet", "web-5d8f"), **extra)  # type: ignore[arg-type]


def args(pending: dict, names: list[str]) -> bytes:
    return json.dumps({"Pod": pending, "Nodes": None, "NodeNames": names}).encode()


def test_required_anti_affinity_fails_nodes_holding_a_matching_pod_even_if_not_sent():
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": ZONE, "labelSelector": selector({"app": "web"})}]}}
    with client_for([*nodes(), web("w1", "a1")]) as client:
        # a1 holds the web pod and is not even a candidate: zone a is taken all the same.
        reply = client.post("/filter", content=args(web("w2", affinity=anti), ["a2", "b1"])).json()
    assert reply["NodeNames"] == ["b1"]
    assert reply["FailedNodes"] == {"a2": "node(s) didn't match pod anti-affinity rules"}
    assert reply["Error"] == ""


def test_system_default_spread_scores_from_the_pods_service_and_replicaset():
    objects = [*nodes(), namespace("default"),
               service("web", selector={"app": "web"}),
               replica_set("web-5d8f", selector=selector({"app": "web"})),
               web("w1", "a1"), web("w2", "a1"), web("w3", "a2")]
    with client_for(objects) as client:
        reply = client.post("/prioritize", content=args(web("w4"), ["a1", "a2", "b1", "b2"])).json()
        scores = {entry["Host"]: entry["Score"] for entry in reply}
        # Zone b holds no web pod, a1 two: spreading (weight 2 of the default profile) decides.
        # The profile's totals are 555 (a1), 585 (a2) and 672 (b1, b2), as kube-scheduler's own
        # plugins give them (conformance/oracle); on the extender's 0-10 scale a1 and a2 meet.
        assert scores == {"a1": 7, "a2": 7, "b1": 8, "b2": 8}, scores
        # Bind one to b1: the next pod of the set sees it at once (the extender's own view).
        bound = client.post("/bind", content=json.dumps({
            "PodName": "w4", "PodNamespace": "default", "PodUID": "uid-default-w4",
            "Node": "b1"}).encode()).json()
        assert bound == {"Error": ""}
        # The 0-10 scale hides the difference (both 8): the profile's totals show it.
        after = client.post("/explain", content=args(web("w5"), ["b1", "b2"])).json()
        assert {n: after["nodes"][n]["total"] for n in ("b1", "b2")} == {"b1": 645, "b2": 672}


def test_an_invalid_pod_affinity_selector_is_a_clear_rejection_not_an_error_reply():
    bad = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": ZONE, "labelSelector": {"matchLabels": {"app": "{{bad}}"}}}]}}
    with client_for(nodes()) as client:
        response = client.post("/filter", content=args(web("w1", affinity=bad), ["a1", "b1"]))
    assert response.status_code == 200
    reply = response.json()
    message = ('parsing pod: requiredAffinityTerms: values[0][app]: Invalid value: "{{bad}}": '
               "a valid label must be an empty string or consist of alphanumeric characters")
    assert set(reply["FailedAndUnresolvableNodes"]) == {"a1", "b1"}
    assert all(m.startswith(message) for m in reply["FailedAndUnresolvableNodes"].values())
