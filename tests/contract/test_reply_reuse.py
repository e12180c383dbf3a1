"""Filter and prioritize through the real app: the row path (and its reused replies) answer
exactly what the per-node path answers, request after request, while pods are bound and
deleted, nodes change and cluster objects come and go.

Each step sends the same request twice: once as served (rows, replies reused while valid) and
once down the per-node path with reuse off, and compares the replies.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from extender.api import rowreply
from extender.api.app import create_app
from extender.api.runtime import Runtime
from extender.engine.evaluate import DEFAULT_POLICY, cluster_from_objects
from extender.engine.policy import parse_policy
from extender.engine.profile import build_profile
from extender.model import k8s
from extender.state.binder import SnapshotBinder
from tests.engine.upstream.builders import node, owner, pod, selector, service

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
NAMES = [f"n{i}" for i in range(6)]
LEAST_ALLOCATED_ONLY = {
    "apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
    "plugins": {
        "filter": {"enabled": [{"name": n} for n in (
            "NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodeResourcesFit")]},
        "score": {"enabled": [{"name": "NodeResourcesFit", "weight": 1},
                              {"name": "ImageLocality", "weight": 1},
                              {"name": "TaintToleration", "weight": 1}]},
    },
}


def cluster_objects(rng: random.Random) -> list[dict]:
    objects = []
    for name in NAMES:
        taints = [{"key": "gpu", "value": "", "effect": "NoSchedule"}] if rng.random() < 0.2 else []
        objects.append(node(name, {ZONE: rng.choice("ab"), HOST: name},
                            allocatable={"cpu": str(rng.choice([2, 4, 8])), "memory": "8Gi",
                                         "pods": str(rng.choice([2, 4, 110]))},
                            taints=taints))
    return objects


PENDING = [
    {"requests": {"cpu": "500m", "memory": "1Gi"}},
    {"requests": {"cpu": "3", "memory": "1Gi"}},
    {"requests": {"cpu": "100m"}, "tolerations": [{"key": "gpu", "operator": "Exists"}]},
    {"requests": {"cpu": "100m"}, "affinity": {"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": ZONE, "labelSelector": selector({"app": "web"})}]}}},
]


def pending_pod(kind: int, serial: int) -> dict:
    # A new name and uid each time, the same spec: pods of one workload.
    return pod(f"p{kind}-{serial}", labels={"app": "web"}, owner=owner("ReplicaSet", "web-1"),
               **PENDING[kind])  # type: ignore[arg-type]


def send(client: TestClient, verb: str, pending: dict, names: list[str]) -> object:
    # Compact, as Go's encoder writes it: a remembered list is then split off the body
    # (`RowReplies.split`) rather than decoded.
    body = json.dumps({"Pod": pending, "Nodes": None, "NodeNames": names},
                      separators=(",", ":")).encode()
    reply = client.post(f"/{verb}", content=body)
    assert reply.status_code == 200
    return reply.json()


def per_node(client: TestClient, runtime: Runtime, monkeypatch, verb: str, pending: dict,
             names: list[str]) -> object:
    with monkeypatch.context() as patch:
        patch.setattr(rowreply.RowReplies, "resolve",
                      lambda self, raw, table: (None, json.loads(bytes(raw))))
        patch.setattr(rowreply.RowReplies, "split", lambda self, body, table: None)
        reuse, runtime.reply_reuse = runtime.reply_reuse, 0
        try:
            return send(client, verb, pending, names)
        finally:
            runtime.reply_reuse = reuse


def mutate(runtime: Runtime, rng: random.Random, serial: int) -> None:
    state = runtime.state
    choice = rng.randrange(5)
    if choice == 0:  # a pod bound to some node
        target = rng.choice(NAMES)
        state.apply_pod(k8s.convert(pod(f"run-{serial}", labels={"app": rng.choice(["web", "db"])},
                                        node=target, requests={"cpu": rng.choice(["1", "2"])}),
                                    k8s.Pod))
    elif choice == 1:  # a bound pod deleted
        bound = [p for p in state.pods.values() if p.node_name]
        if bound:
            victim = rng.choice(bound)
            state.delete_pod(victim.namespace, victim.name, victim.uid)
    elif choice == 2:  # a node cordoned or uncordoned
        state.set_node_unschedulable(rng.choice(NAMES), rng.random() < 0.5)
    elif choice == 3:  # a Service (the system default spread reads it)
        state.apply_service(k8s.convert(service(f"svc-{serial}", selector={"app": "web"}),
                                       k8s.Service))
    # else: nothing changes, so the next identical request may be reused


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), policy=st.sampled_from(["default", "rows-only"]))
def test_row_path_and_reused_replies_equal_the_per_node_path(seed, policy, monkeypatch):
    rng = random.Random(seed)
    state = cluster_from_objects(cluster_objects(rng))
    document = DEFAULT_POLICY if policy == "default" else LEAST_ALLOCATED_ONLY
    runtime = Runtime(build_profile(parse_policy(document)), state, SnapshotBinder(state, 30.0))
    lists = [NAMES, NAMES[:3], NAMES[::-1]]
    with TestClient(create_app(runtime)) as client:
        for serial in range(30):
            verb = rng.choice(["filter", "prioritize"])
            pending = pending_pod(rng.randrange(len(PENDING)), serial)
            names = rng.choice(lists)
            served = send(client, verb, pending, names)
            assert served == per_node(client, runtime, monkeypatch, verb, pending, names)
            if rng.random() < 0.5:
                mutate(runtime, rng, serial)


def test_a_repeated_request_is_reused_until_a_candidate_changes():
    state = cluster_from_objects(cluster_objects(random.Random(1)))
    runtime = Runtime(build_profile(parse_policy(LEAST_ALLOCATED_ONLY)), state,
                      SnapshotBinder(state, 30.0))
    reused: list[bool] = []
    with TestClient(create_app(runtime)) as client:
        original = rowreply.RowReplies.reusable

        def spy(*args, **kwargs):
            found = original(*args, **kwargs)
            reused.append(found is not None)
            return found

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(rowreply.RowReplies, "reusable", staticmethod(spy))
            first = send(client, "prioritize", pending_pod(0, 1), NAMES[:3])
            assert send(client, "prioritize", pending_pod(0, 2), NAMES[:3]) == first
            # A pod bound to a node that is not a candidate: with these node-local plugins
            # the reply still holds.
            state.apply_pod(k8s.convert(pod("elsewhere", node=NAMES[5], requests={"cpu": "1"}),
                                        k8s.Pod))
            assert send(client, "prioritize", pending_pod(0, 3), NAMES[:3]) == first
            # One bound to a candidate changes its score: computed again.
            state.apply_pod(k8s.convert(pod("here", node=NAMES[0], requests={"cpu": "1"}),
                                        k8s.Pod))
            send(client, "prioritize", pending_pod(0, 4), NAMES[:3])
            # Another spec is another pod signature.
            send(client, "prioritize", pending_pod(1, 5), NAMES[:3])
    assert reused == [False, True, True, False, False]


def test_what_a_reply_depends_on_is_declared_once_in_the_record() -> None:
    """`reply_reuse` lives in the plugin's `PluginRecord` (beside `filter_memo`), not on its
    classes: every default plugin declares it; a plugin reading the clock or metrics, none."""
    from extender.engine import registry
    from extender.engine.framework import REUSE_ROWS, REUSE_STATE

    defaults = {*registry.DEFAULT_FILTERS, *(name for name, _ in registry.DEFAULT_SCORES)}
    assert {name: registry.PLUGINS[name].reply_reuse for name in defaults} == {
        name: REUSE_STATE if name in ("PodTopologySpread", "InterPodAffinity") else REUSE_ROWS
        for name in defaults}
    assert registry.PLUGINS["TargetLoadPacking"].reply_reuse is None
    profile = build_profile(parse_policy(DEFAULT_POLICY))
    assert all(not hasattr(type(p), "reply_reuse") for p in profile.filters)
    assert [registry.reply_reuse(p) for p, _ in profile.scorers][:2] == [REUSE_ROWS, REUSE_ROWS]


@pytest.mark.parametrize("written", ["compact", "spaced", "escaped"])
def test_a_list_every_node_passes_is_answered_byte_for_byte_as_the_per_node_path(
        written: str, monkeypatch) -> None:
    """Where every node of a list passes, the row path's reply names them as the request
    wrote them, if the encoder would write them so (as kube-scheduler's does): byte for byte
    the per-node path's reply whichever way the list is written."""
    roomy = [node(name, {ZONE: "a", HOST: name},
                  allocatable={"cpu": "8", "memory": "8Gi", "pods": "110"}) for name in NAMES]
    state = cluster_from_objects(roomy)
    runtime = Runtime(build_profile(parse_policy(LEAST_ALLOCATED_ONLY)), state,
                      SnapshotBinder(state, 30.0))
    names = {"compact": json.dumps(NAMES, separators=(",", ":")),
             "spaced": json.dumps(NAMES),
             "escaped": json.dumps(NAMES, separators=(",", ":")).replace("n3", "\\u006e3")}[written]
    pending = json.dumps(pending_pod(0, 1), separators=(",", ":"))
    body = f'{{"Pod":{pending},"Nodes":null,"NodeNames":{names}}}'.encode()
    echoed: list[bool] = []
    original = rowreply.RowReplies._as_encoded

    def spy(self, raw, rows, table):  # type: ignore[no-untyped-def]
        echoed.append(original(self, raw, rows, table))
        return echoed[-1]

    with TestClient(create_app(runtime)) as client:
        with monkeypatch.context() as patch:
            patch.setattr(rowreply.RowReplies, "_as_encoded", spy)
            served = client.post("/filter", content=body).content
        with monkeypatch.context() as patch:
            patch.setattr(rowreply.RowReplies, "resolve",
                          lambda self, raw, table: (None, json.loads(bytes(raw))))
            patch.setattr(rowreply.RowReplies, "split", lambda self, body, table: None)
            runtime.reply_reuse = 0
            straight = client.post("/filter", content=body).content
    assert json.loads(served)["NodeNames"] == NAMES
    assert served == straight
    assert echoed == [written == "compact"]
