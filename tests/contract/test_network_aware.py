"""NetworkOverhead through the real HTTP app (snapshot mode): the filter verb's reasons, the
prioritize verb's scores (NormalizeScore over the candidates kube-scheduler sends, on the
wire's 0..10), and the Error a pod of a missing AppGroup gets.

The cluster is upstream's `TestNetworkOverheadFilter` fixture (networkoverhead_test.go):
AppGroup basic (p1 -> p2 -> p3), NetworkTopology nt-test (us-west-1 <-> us-east-1 cost 20,
Z1 <-> Z2 5, Z3 <-> Z4 10), pods p1 on n-2, p2 on n-5, p3 on n-8; every maxNetworkCost is 0.
"""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

from extender.api.app import create_app
from extender.api.runtime import Runtime
from extender.engine.evaluate import cluster_from_objects
from extender.engine.policy import parse_policy
from extender.engine.profile import build_profile
from extender.state.binder import SnapshotBinder
from tests.engine.upstream import networkaware_data as data
from tests.engine.upstream.test_networkaware_rows import basic_objects, network_policy, pod

NODES = [name for name, _, _ in data.NODES_BASIC]
P1 = pod("p1", "p1-deployment", "basic")


def client_for(objects: list[dict[str, Any]], *, filters: list[str],
               scores: list[str]) -> TestClient:
    state = cluster_from_objects(objects)
    profile = build_profile(parse_policy(network_policy(filters=filters, scores=scores)))
    return TestClient(create_app(Runtime(profile, state, SnapshotBinder(state, 30.0))))


def args(pending: dict[str, Any], names: list[str]) -> dict[str, Any]:
    return {"Pod": pending, "Nodes": None, "NodeNames": names}


def reason(node: str, satisfied: int, violated: int) -> str:
    return (f"Node {node} does not meet several network requirements from Workload "
            f"dependencies: Satisfied: {satisfied} Violated: {violated}")


def test_filter_keeps_the_nodes_near_the_dependency_and_names_the_counts() -> None:
    # p1 depends on p2 (on n-5, us-east-1/Z3): n-5 itself and n-6 (same zone) satisfy it; the
    # other zone of the region costs 10 and the other region 20, both above maxNetworkCost 0.
    with client_for(basic_objects(data.FILTER_ROWS[0]["pods"]), filters=["NetworkOverhead"],
                    scores=[]) as client:
        reply = client.post("/filter", json=args(P1, NODES)).json()
    assert reply["NodeNames"] == ["n-5", "n-6"]
    assert reply["FailedNodes"] == {n: reason(n, 0, 1)
                                    for n in ("n-1", "n-2", "n-3", "n-4", "n-7", "n-8")}
    assert not reply["FailedAndUnresolvableNodes"]
    assert reply["Error"] == ""


def test_prioritize_favours_the_cheapest_nodes_among_the_candidates() -> None:
    objects = basic_objects(data.SCORE_ROWS[0]["pods"])
    with client_for(objects, filters=[], scores=["NetworkOverhead"]) as client:
        every = client.post("/prioritize", json=args(P1, NODES)).json()
        # Only the two nodes the filter keeps: their costs 0 and 1 span the whole range.
        near = client.post("/prioritize", json=args(P1, ["n-5", "n-6"])).json()
    # Upstream's normalised {0,0,0,0,100,95,50,50} on the wire's 0..10, rounded half up.
    assert every == [{"Host": n, "Score": s}
                     for n, s in zip(NODES, [0, 0, 0, 0, 10, 10, 5, 5], strict=True)]
    assert near == [{"Host": "n-5", "Score": 10}, {"Host": "n-6", "Score": 0}]


def test_a_pod_without_an_app_group_passes_everywhere_and_scores_zero() -> None:
    stranger = pod("x", "x-deployment", "")
    objects = basic_objects(data.SCORE_ROWS[0]["pods"])
    with client_for(objects, filters=["NetworkOverhead"], scores=["NetworkOverhead"]) as client:
        assert client.post("/filter", json=args(stranger, NODES)).json()["NodeNames"] == NODES
        scores = client.post("/prioritize", json=args(stranger, NODES)).json()
    assert scores == [{"Host": n, "Score": 0} for n in NODES]


def test_a_missing_app_group_is_an_error_on_every_node() -> None:
    # Upstream dereferences the missing AppGroup (the scheduler panics); here the pod's
    # PreFilter fails with an Error, which preemption cannot resolve.
    lost = pod("p1", "p1-deployment", "gone")
    with client_for(basic_objects(data.FILTER_ROWS[0]["pods"]), filters=["NetworkOverhead"],
                    scores=[]) as client:
        reply = client.post("/filter", json=args(lost, ["n-1", "n-2"])).json()
    message = 'appGroup "gone" not found in namespaces [default]'
    assert reply["FailedAndUnresolvableNodes"] == {"n-1": message, "n-2": message}
    assert not reply["NodeNames"]
