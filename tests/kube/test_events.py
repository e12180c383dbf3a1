"""FailedScheduling Events: what the filter and bind routes record, and how little of it reaches
the API server (series, token buckets), against the fake API server."""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from starlette.testclient import TestClient

from extender.api.app import create_app
from extender.api.offload import Offloader
from extender.api.runtime import Runtime
from extender.engine.framework import Code, Status
from extender.engine.policy import parse_policy
from extender.engine.profile import build_profile
from extender.kube.client import KubeClient
from extender.kube.config import ClusterConfig
from extender.state.binder import ApiBinder
from extender.state.events import (
    EventRecorder,
    filter_note,
    micro_time,
    truncate_note,
)
from tests.kube import kube_objects as ko
from tests.kube.fake_apiserver import FakeApiServer, Fault
from tests.kube.kube_helpers import truth
from tests.polling import until

ROOT = Path(__file__).resolve().parents[2]
POLICY = {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy"}
NOTE = "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu."




def _cluster(server: FakeApiServer, pods: int = 1) -> list[dict[str, Any]]:
    server.put(ko.node("n1", cpu="1"))
    server.put(ko.node("n2", cpu="1"))
    tainted = ko.node("n3", cpu="8")
    tainted["spec"]["taints"] = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    server.put(tainted)
    return [server.put(ko.pod(f"big-{i}", cpu="2")) for i in range(pods)]


@pytest.fixture
def app(apiserver: FakeApiServer, kube_config: ClusterConfig,
        ) -> Iterator[tuple[TestClient, Runtime, EventRecorder]]:
    _cluster(apiserver)
    state = truth(apiserver)
    client = KubeClient(kube_config)
    runtime = Runtime(build_profile(parse_policy(POLICY)), state,
                      ApiBinder(client, state, deadline=1.0))
    recorder = EventRecorder(client, series_interval=0.2)
    runtime.events = recorder  # type: ignore[attr-defined]  # as `serve` sets it
    runtime.startup.append(recorder.start)
    runtime.shutdown += [recorder.stop, client.aclose]
    with TestClient(create_app(runtime)) as http:
        yield http, runtime, recorder


def _filter(http: TestClient, pod: dict[str, Any]) -> dict[str, Any]:
    reply = http.post("/filter", json={"Pod": pod, "NodeNames": ["n1", "n2", "n3"]})
    assert reply.status_code == 200
    return reply.json()


def test_a_pod_rejected_everywhere_gets_one_event_with_kube_schedulers_note(
        apiserver: FakeApiServer, app: tuple[TestClient, Runtime, EventRecorder]) -> None:
    http, _, recorder = app
    pod = apiserver.get("Pod", "default", "big-0")
    reply = _filter(http, pod)
    assert reply["NodeNames"] == [] and reply["Error"] == ""
    until(lambda: len(apiserver.events) == 1, what="the event")
    ((namespace, name), event), = apiserver.events.items()
    assert namespace == "default" and re.fullmatch(r"big-0\.[0-9a-f]+", name)
    assert event["note"] == NOTE
    assert {k: event[k] for k in ("apiVersion", "kind", "reason", "action", "type",
                                  "reportingController")} == {
        "apiVersion": "events.k8s.io/v1", "kind": "Event", "reason": "FailedScheduling",
        "action": "Scheduling", "type": "Warning", "reportingController": "scheduler-extender"}
    assert event["regarding"] == {"apiVersion": "v1", "kind": "Pod", "namespace": "default",
                                  "name": "big-0", "uid": pod["metadata"]["uid"]}
    assert event["reportingInstance"].startswith("scheduler-extender-")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", event["eventTime"])
    until(lambda: recorder.counts["posted"] == 1, what="the recorder to count it")

    # A pod that fits somewhere is no event.
    small = apiserver.put(ko.pod("small", cpu="100m"))
    assert _filter(http, small)["NodeNames"] == ["n1", "n2"]
    # A marker after it: decisions and posts keep their order, so once the marker's event is
    # there, one for `small` would be too.
    marker = apiserver.put(ko.pod("big-1", cpu="2"))
    assert _filter(http, marker)["NodeNames"] == []
    until(lambda: len(apiserver.events) == 2, what="the marker's event")
    assert sorted(e["regarding"]["name"] for e in apiserver.events.values()) == ["big-0", "big-1"]


def test_a_filter_of_node_objects_gets_the_same_note(
        apiserver: FakeApiServer, app: tuple[TestClient, Runtime, EventRecorder]) -> None:
    """The per-node path (a `Nodes` request) words the note as the row path does."""
    http, _, _ = app
    nodes = [apiserver.get("Node", "", name) for name in ("n1", "n2", "n3")]
    reply = http.post("/filter", json={"Pod": apiserver.get("Pod", "default", "big-0"),
                                       "Nodes": {"items": nodes}})
    assert reply.status_code == 200 and reply.json()["Nodes"]["items"] == []
    until(lambda: len(apiserver.events) == 1, what="the event")
    (event,) = apiserver.events.values()
    assert event["note"] == NOTE


def test_repeated_rejections_become_a_series(apiserver: FakeApiServer,
                                             app: tuple[TestClient, Runtime, EventRecorder]) -> None:
    http, _, recorder = app
    pod = apiserver.get("Pod", "default", "big-0")
    for _ in range(5):
        _filter(http, pod)
    until(lambda: (next(iter(apiserver.events.values()), {}).get("series") or {}).get("count") == 5,
           what="the series count 5")
    assert len(apiserver.events) == 1  # never posted twice
    assert recorder.counts["deduplicated"] == 4
    counts = [patch["series"]["count"] for _, _, patch in apiserver.event_patches]
    assert counts[0] == 2 and counts[-1] == 5 and len(counts) <= 3  # the first repeat at once
    (event,) = apiserver.events.values()
    assert re.fullmatch(r"\d{4}-.*\.\d{6}Z", event["series"]["lastObservedTime"])


def test_a_large_request_off_the_loop_still_records(apiserver: FakeApiServer,
                                                    app: tuple[TestClient, Runtime, EventRecorder],
                                                    ) -> None:
    http, runtime, _ = app
    runtime.offload = Offloader(threshold=0)  # every body runs in the worker thread
    _filter(http, apiserver.get("Pod", "default", "big-0"))
    until(lambda: len(apiserver.events) == 1, what="the event from the worker thread")


def test_a_failed_bind_is_an_event(apiserver: FakeApiServer,
                                   app: tuple[TestClient, Runtime, EventRecorder]) -> None:
    http, _, recorder = app
    pod = apiserver.get("Pod", "default", "big-0")
    apiserver.update("Pod", "default", "big-0", lambda p: p["spec"].update(nodeName="n3"))
    reply = http.post("/bind", json={"PodName": "big-0", "PodNamespace": "default",
                                     "PodUID": pod["metadata"]["uid"], "Node": "n1"}).json()
    assert reply["Error"] == 'pod default/big-0 is already assigned to node "n3"'
    until(lambda: len(apiserver.events) == 1, what="the bind event")
    (event,) = apiserver.events.values()
    assert (event["reason"], event["action"]) == ("FailedScheduling", "Binding")
    assert event["note"] == f"binding rejected: {reply['Error']}"  # kube-scheduler's wording


def test_api_failures_are_counted_and_never_reach_the_verb(
        apiserver: FakeApiServer, app: tuple[TestClient, Runtime, EventRecorder]) -> None:
    http, _, recorder = app
    apiserver.inject(Fault("status", method="POST", path="/apis/events.k8s.io/", status=500))
    assert _filter(http, apiserver.get("Pod", "default", "big-0"))["Error"] == ""
    until(lambda: recorder.counts["failed"] == 1, what="the failure to be counted")
    assert apiserver.events == {}
    # The failed event is forgotten: the next rejection posts again.
    _filter(http, apiserver.get("Pod", "default", "big-0"))
    until(lambda: len(apiserver.events) == 1, what="the retried event")


@pytest.mark.anyio
async def test_a_burst_of_pods_is_capped_by_the_token_bucket(apiserver: FakeApiServer,
                                                             kube_config: ClusterConfig) -> None:
    now = [100.0]
    rejected = {("Insufficient cpu",): 3}  # three nodes, one reason
    async with KubeClient(kube_config) as client:
        recorder = EventRecorder(client, clock=lambda: now[0])  # burst 25, 1 per second
        await recorder.start()
        try:
            started = time.perf_counter()
            for i in range(500):
                pod = type("Pod", (), {"namespace": "default", "name": f"p{i}", "uid": f"u{i}"})
                recorder.filter_verdict(pod, 3, rejected, None)
            assert time.perf_counter() - started < 0.5  # deciding never waits for the API
            await recorder.drain()
            assert len(apiserver.events) == 25
            assert recorder.counts["rate_limited"] == 475
            now[0] += 10  # ten seconds later: ten more tokens
            for i in range(500, 520):
                pod = type("Pod", (), {"namespace": "default", "name": f"p{i}", "uid": f"u{i}"})
                recorder.filter_verdict(pod, 3, rejected, None)
            await recorder.drain()
            assert len(apiserver.events) == 35
            # One pod cannot use the global budget up: its own bucket holds 5.
            now[0] += 1000
            for i in range(20):
                one = type("Pod", (), {"namespace": "default", "name": "noisy", "uid": "noisy"})
                recorder.filter_verdict(one, 3 + i, rejected, None)  # a new note each time
            await recorder.drain()
            assert sum(e["regarding"]["name"] == "noisy" for e in apiserver.events.values()) == 5
            assert recorder.entries <= recorder.max_entries
        finally:
            await recorder.stop()
    await asyncio.sleep(0)


# ---- notes ---------------------------------------------------------------------------------

def test_notes_follow_fit_error_and_the_api_limit() -> None:
    statuses = {
        "a": Status(Code.UNSCHEDULABLE, ("Insufficient cpu", "Insufficient memory"), "Fit"),
        "b": Status(Code.UNSCHEDULABLE, ("Insufficient cpu",), "Fit"),
        "c": Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    ("node(s) didn't match Pod's node affinity/selector",), "NodeAffinity"),
    }
    assert filter_note(3, Counter(s.reasons for s in statuses.values()), None) == (
        "0/3 nodes are available: 1 Insufficient memory, 1 node(s) didn't match Pod's node "
        "affinity/selector, 2 Insufficient cpu.")
    # A PreFilter rejection: its message once, not counted per node (FitError's PreFilterMsg).
    spread = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    ("node(s) didn't match pod topology spread constraints (missing required "
                     "label)",), "PodTopologySpread")
    assert filter_note(3, {spread.reasons: 3}, spread) == (
        "0/3 nodes are available: node(s) didn't match pod topology spread constraints "
        "(missing required label).")
    long = "x" * 2000
    assert truncate_note(long) == "x" * 1020 + " ..."
    assert len(truncate_note("é" * 1000).encode()) <= 1024
    assert micro_time(0.5) == "1970-01-01T00:00:00.500000Z"


def test_rbac_lets_the_extender_create_and_patch_events() -> None:
    """The recorder POSTs Events and PATCHes their series: the extender's ClusterRole (in
    whichever manifest file holds it) must allow both on events.k8s.io."""
    roles = []
    for path in sorted((ROOT / "manifests").rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "ClusterRole" \
                    and doc.get("metadata", {}).get("name") == "scheduler-extender":
                roles.append((path, doc))
    assert roles, "no ClusterRole scheduler-extender under manifests/"
    for path, role in roles:
        assert any("events.k8s.io" in rule.get("apiGroups", ())
                   and "events" in rule.get("resources", ())
                   and {"create", "patch"} <= set(rule.get("verbs", ()))
                   for rule in role["rules"]), path
