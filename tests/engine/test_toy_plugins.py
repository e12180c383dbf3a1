"""Adding a plugin touches only its folder and its record: two toy plugins written in a test
folder (`tests/engine/toyplugins/`), a node-local filter and a scorer that reads a custom
resource through a store of its own, are registered with `registry.register` and then run
everywhere the built-in ones do — the policy, `evaluate`, the snapshot loader, the informer's
resource list and sink, the simulator (its objects arriving in a workload) and its loopback API
server, the sandbox's paths and replay order, and the real HTTP app."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from extender.api.app import create_app
from extender.api.runtime import Runtime
from extender.engine import registry
from extender.engine.cluster import ClusterState
from extender.engine.evaluate import cluster_from_objects, evaluate
from extender.engine.policy import parse_policy
from extender.engine.profile import build_profile
from extender.model import k8s
from extender.state import informer
from extender.state.binder import SnapshotBinder
from extender.state.snapshot import load_into
from tests.engine.toyplugins import name_length, node_cost
from tests.engine.upstream.builders import node, pod

POLICY = {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
          "plugins": {"filter": {"enabled": [{"name": "ToyNameLength"}]},
                      "score": {"enabled": [{"name": "ToyNodeCost", "weight": 2}]}},
          "pluginConfig": [{"name": "ToyNameLength", "args": {"maxLength": 6}}]}


def cost(name: str, value: int) -> dict:
    return {"apiVersion": "toy.example.com/v1", "kind": "NodeCost",
            "metadata": {"name": name}, "spec": {"cost": value}}


OBJECTS = [node("short"), node("middle"), node("much-too-long"),
           cost("short", 30), cost("middle", 80)]


@pytest.fixture(autouse=True)
def toys() -> Iterator[None]:
    registry.register(name_length.RECORD)
    registry.register(node_cost.RECORD)
    try:
        yield
    finally:
        registry.unregister(name_length.RECORD.name)
        registry.unregister(node_cost.RECORD.name)


def test_evaluate_runs_both_from_the_policy() -> None:
    ev = evaluate(OBJECTS, pod("p"), POLICY)
    assert ev.filter["short"] is None and ev.filter["middle"] is None
    assert ev.filter["much-too-long"] == {"plugin": "ToyNameLength",
                                          "code": "UnschedulableAndUnresolvable",
                                          "reasons": ["node name longer than 6"]}
    assert ev.scores == {"ToyNodeCost": {"short": 70, "middle": 20}}
    assert ev.total == {"short": 140, "middle": 40}


def test_the_store_follows_its_objects() -> None:
    state = cluster_from_objects(OBJECTS)
    store = state.store(node_cost.NodeCostStore)
    assert store.costs == {"short": 30, "middle": 80}
    state.delete("NodeCost", "", "short")
    state.replace("NodeCost", [k8s.convert(cost("other", 5), node_cost.NodeCost)])
    assert store.costs == {"other": 5}
    assert state.store_of_kind("NodeCost") is store


def test_the_snapshot_loader_reads_the_kind(tmp_path: Path) -> None:
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"kind": "List", "items": OBJECTS}))
    state = ClusterState()
    counts = load_into(state, path)
    assert counts["NodeCost"] == 2 and counts["Node"] == 3
    assert state.store(node_cost.NodeCostStore).costs == {"short": 30, "middle": 80}


def test_the_informer_watches_it_when_the_plugin_is_enabled() -> None:
    assert node_cost.NODE_COSTS in informer.resources_for(["ToyNodeCost"])
    assert node_cost.NODE_COSTS not in informer.resources_for(["ToyNameLength"])
    state = ClusterState()
    sink = informer.sink_for(node_cost.NODE_COSTS, state)
    sink.apply(k8s.convert(cost("short", 10), node_cost.NodeCost))
    assert state.store(node_cost.NodeCostStore).costs == {"short": 10}


def test_the_simulated_api_server_serves_it() -> None:
    from extender.simulator.apiserver import resources

    resource = resources()["nodecosts"]
    assert (resource.kind, resource.group_version, resource.namespaced) == (
        "NodeCost", "toy.example.com/v1", False)


def test_the_http_app_filters_and_prioritizes_with_them() -> None:
    state = cluster_from_objects(OBJECTS)
    runtime = Runtime(build_profile(parse_policy(POLICY)), state, SnapshotBinder(state, 30.0))
    client = TestClient(create_app(runtime))
    names = ["short", "middle", "much-too-long"]
    args = {"Pod": pod("p"), "Nodes": None, "NodeNames": names}
    reply = client.post("/filter", json=args).json()
    assert reply["NodeNames"] == ["short", "middle"]
    assert reply["FailedNodes"] == {}
    assert reply["FailedAndUnresolvableNodes"] == {"much-too-long": "node name longer than 6"}
    args["NodeNames"] = ["short", "middle"]
    scores = client.post("/prioritize", json=args).json()
    assert scores == [{"Host": "short", "Score": 7}, {"Host": "middle", "Score": 2}]


def test_the_simulator_replays_its_objects_over_time(tmp_path: Path) -> None:
    from tests.simulator.helpers import at, by_name, node, pod, simulate

    def timed(obj: dict, seconds: float) -> dict:
        obj["metadata"]["creationTimestamp"] = at(seconds)
        return obj

    cluster = [node("short", "4", "8Gi"), node("middle", "4", "8Gi")]
    # A node without a NodeCost costs 100: "short" scores 0 until its NodeCost arrives.
    workload = [timed(cost("middle", 10), 0), pod("first", "1", created=at(1)),
                timed(cost("short", 0), 2), pod("second", "1", created=at(3))]
    _, report = simulate(tmp_path, cluster, workload, policy=POLICY)
    placed = {name: p["node"] for name, p in by_name(report).items()}
    assert placed == {"first": "middle", "second": "short"}


def test_the_sandbox_knows_where_its_objects_live() -> None:
    from extender.sandbox.api import path
    from extender.sandbox.replayplan import cluster_kinds

    assert path("NodeCost", name="short") == "/apis/toy.example.com/v1/nodecosts/short"
    assert cluster_kinds().index("NodeCost") < cluster_kinds().index("Pod")


def test_a_record_that_watches_resources_names_their_store() -> None:
    with pytest.raises(ValueError, match="ToyOrphan watches resources but names no store"):
        registry.PluginRecord("ToyOrphan", score=node_cost.RECORD.score,
                              resources=(node_cost.NODE_COSTS,))
    assert registry.store_of_kind("NodeCost") is node_cost.NodeCostStore


def test_a_plugin_whose_arguments_need_a_field_is_refused_without_them_by_path() -> None:
    # Enabled with no pluginConfig entry, its arguments are defaulted from {}: a required field
    # made build_profile fail with pydantic's traceback, past check-config and serve's message.
    import dataclasses

    from pydantic import Field

    from extender.engine.args import _Args
    from extender.engine.policy import PolicyError

    class NeedsKeyArgs(_Args):
        key: str = Field(alias="key")

    record = dataclasses.replace(
        name_length.RECORD, name="ToyNeedsKey", args_model=NeedsKeyArgs,
        filter=lambda a, v: name_length.ToyNameLength(name_length.ToyNameLengthArgs()))
    registry.register(record)
    try:
        policy = {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
                  "plugins": {"filter": {"enabled": [{"name": "ToyNeedsKey"}]}}}
        with pytest.raises(PolicyError) as refused:
            parse_policy(policy)
        assert refused.value.problems == [
            "plugins.filter: ToyNeedsKey is enabled without a pluginConfig entry, and its "
            "arguments need key: add {name: ToyNeedsKey, args: {...}} to pluginConfig"]
        configured = {**policy, "pluginConfig": [{"name": "ToyNeedsKey", "args": {"key": "k"}}]}
        assert len(build_profile(parse_policy(configured)).filters) == 1
    finally:
        registry.unregister("ToyNeedsKey")
