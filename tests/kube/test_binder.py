"""Binding through the API (`ApiBinder`) and offline (`SnapshotBinder`)."""

from __future__ import annotations

import asyncio
import time

import pytest

from extender.engine.cluster import ClusterState
from extender.kube.client import KubeClient
from extender.kube.config import ClusterConfig
from extender.model import k8s
from extender.model.pod import PodView
from extender.state.binder import ApiBinder, BindError, SnapshotBinder
from extender.state.informer import LiveState
from tests.kube import kube_objects as ko
from tests.kube.fake_apiserver import FakeApiServer, Fault
from tests.kube.kube_helpers import eventually, truth

pytestmark = pytest.mark.anyio


def _setup(server: FakeApiServer, pods: int = 1) -> list[str]:
    server.put(ko.node("n1"))
    server.put(ko.node("n2"))
    return [server.put(ko.pod(f"p{i}", cpu="1"))["metadata"]["uid"] for i in range(pods)]


async def test_bind_success_assumes_the_pod_at_once(apiserver: FakeApiServer,
                                                    kube_config: ClusterConfig) -> None:
    (uid,) = _setup(apiserver)
    state = truth(apiserver)
    async with KubeClient(kube_config) as client:
        binder = ApiBinder(client, state)
        await binder.bind("default", "p0", uid, "n1")
    assert apiserver.bindings == [("default", "p0", uid, "n1")]
    assert apiserver.get("Pod", "default", "p0")["spec"]["nodeName"] == "n1"
    # No watch ran: the next filter still sees the pod's cpu consumed on n1.
    assert state.nodes["n1"].requested.milli_cpu == 1000
    assert uid in state.assumed
    assert binder.outcomes == {"bound": 1} and binder.retries == 0


async def test_watch_event_confirms_the_assumption(apiserver: FakeApiServer,
                                                   kube_config: ClusterConfig) -> None:
    (uid,) = _setup(apiserver)
    async with KubeClient(kube_config) as client:
        live = LiveState(client, ClusterState(), expire_interval=0.05)
        live.start()
        try:
            assert await live.wait_synced(5)
            binder = ApiBinder(client, live.state, assume_ttl=0.3)
            await binder.bind("default", "p0", uid, "n1")
            assert live.state.nodes["n1"].requested.milli_cpu == 1000
            await eventually(lambda: not live.state.assumed, what="confirmation")
            await asyncio.sleep(0.5)  # past the ttl: a confirmed pod stays
            assert live.state.nodes["n1"].requested.milli_cpu == 1000
            assert live.counters.expired_assumptions == 0
        finally:
            await live.stop()


async def test_retries_after_500_and_429(apiserver: FakeApiServer, kube_config: ClusterConfig) -> None:
    (uid,) = _setup(apiserver)
    apiserver.inject(Fault("status", method="POST", status=500, times=2))
    apiserver.inject(Fault("status", method="POST", status=429))
    retried = []
    async with KubeClient(kube_config) as client:
        binder = ApiBinder(client, truth(apiserver), on_retry=lambda: retried.append(1))
        await binder.bind("default", "p0", uid, "n1")
    assert binder.retries == 3 == len(retried)
    assert apiserver.bindings == [("default", "p0", uid, "n1")]


async def test_lost_response_then_retry_is_success_without_double_binding(
        apiserver: FakeApiServer, kube_config: ClusterConfig) -> None:
    (uid,) = _setup(apiserver)
    apiserver.inject(Fault("lose_response", method="POST"))
    outcomes = []
    async with KubeClient(kube_config) as client:
        binder = ApiBinder(client, truth(apiserver), on_outcome=outcomes.append)
        await binder.bind("default", "p0", uid, "n1")
        # kube-scheduler timed out on our first reply and asks again: still success.
        await binder.bind("default", "p0", uid, "n1")
    assert apiserver.bindings == [("default", "p0", uid, "n1")]
    assert outcomes == ["already_bound", "already_bound"]
    assert binder.retries == 1
    posts = [r for r in apiserver.requests if r.method == "POST"]
    assert [r.status for r in posts] == [201, 409, 409]


async def test_hung_server_is_abandoned_and_retried_within_the_deadline(
        apiserver: FakeApiServer, kube_config: ClusterConfig) -> None:
    (uid,) = _setup(apiserver)
    apiserver.inject(Fault("hang", method="POST", hang_seconds=10))
    async with KubeClient(kube_config) as client:
        binder = ApiBinder(client, truth(apiserver), deadline=2.0, attempt_timeout=0.3)
        started = time.monotonic()
        await binder.bind("default", "p0", uid, "n1")
    assert time.monotonic() - started < 2.0
    assert binder.retries == 1 and apiserver.bindings == [("default", "p0", uid, "n1")]


async def test_persistent_failure_gives_up_at_the_deadline(apiserver: FakeApiServer,
                                                           kube_config: ClusterConfig) -> None:
    (uid,) = _setup(apiserver)
    apiserver.inject(Fault("status", method="POST", status=503, times=10_000))
    async with KubeClient(kube_config) as client:
        binder = ApiBinder(client, truth(apiserver), deadline=0.5)
        started = time.monotonic()
        with pytest.raises(BindError, match=r"gave up after 0.5s: 503") as info:
            await binder.bind("default", "p0", uid, "n1")
    assert time.monotonic() - started < 1.2  # the deadline, plus slack for a loaded machine
    assert info.value.outcome == "timeout" and binder.retries >= 2


async def test_server_unreachable_gives_up_at_the_deadline(kube_config: ClusterConfig,
                                                           apiserver: FakeApiServer) -> None:
    apiserver.stop()
    async with KubeClient(kube_config) as client:
        binder = ApiBinder(client, ClusterState(), deadline=0.4)
        with pytest.raises(BindError, match="gave up") as info:
            await binder.bind("default", "p0", "uid", "n1")
    assert info.value.outcome == "timeout"


async def test_pod_gone(apiserver: FakeApiServer, kube_config: ClusterConfig) -> None:
    _setup(apiserver, pods=0)
    async with KubeClient(kube_config) as client:
        binder = ApiBinder(client, ClusterState())
        with pytest.raises(BindError, match="pod default/ghost not found") as info:
            await binder.bind("default", "ghost", "uid-1", "n1")
    assert info.value.outcome == "not_found" and binder.retries == 0


async def test_recreated_pod_with_a_new_uid_is_never_bound(apiserver: FakeApiServer,
                                                           kube_config: ClusterConfig) -> None:
    (old_uid,) = _setup(apiserver)
    apiserver.delete("Pod", "default", "p0")
    new_uid = apiserver.put(ko.pod("p0"))["metadata"]["uid"]
    async with KubeClient(kube_config) as client:
        binder = ApiBinder(client, ClusterState())
        with pytest.raises(BindError, match=f"was recreated: its UID is {new_uid}, not {old_uid}") as info:
            await binder.bind("default", "p0", old_uid, "n1")
    assert info.value.outcome == "uid_mismatch"
    assert apiserver.bindings == [] and "nodeName" not in apiserver.get("Pod", "default", "p0")["spec"]


async def test_recreated_and_already_bound_pod_is_still_a_uid_error(
        apiserver: FakeApiServer, kube_config: ClusterConfig) -> None:
    (old_uid,) = _setup(apiserver)
    apiserver.delete("Pod", "default", "p0")
    apiserver.put(ko.pod("p0", node_name="n1"))  # same name, same node, another pod
    async with KubeClient(kube_config) as client:
        with pytest.raises(BindError) as info:
            await ApiBinder(client, ClusterState()).bind("default", "p0", old_uid, "n1")
    assert info.value.outcome == "uid_mismatch"


async def test_bound_elsewhere_is_an_error(apiserver: FakeApiServer, kube_config: ClusterConfig) -> None:
    (uid,) = _setup(apiserver)
    apiserver.update("Pod", "default", "p0", lambda p: p["spec"].update(nodeName="n2"))
    async with KubeClient(kube_config) as client:
        with pytest.raises(BindError, match='already assigned to node "n2"') as info:
            await ApiBinder(client, ClusterState()).bind("default", "p0", uid, "n1")
    assert info.value.outcome == "bound_elsewhere"


async def test_concurrent_binds_of_different_pods(apiserver: FakeApiServer,
                                                  kube_config: ClusterConfig) -> None:
    uids = _setup(apiserver, pods=30)
    state = truth(apiserver)
    apiserver.inject(Fault("status", method="POST", status=500, times=5))
    async with KubeClient(kube_config) as client:
        binder = ApiBinder(client, state)
        await asyncio.gather(*(binder.bind("default", f"p{i}", uid, "n1" if i % 2 else "n2")
                               for i, uid in enumerate(uids)))
    assert sorted(apiserver.bindings) == sorted(
        ("default", f"p{i}", uid, "n1" if i % 2 else "n2") for i, uid in enumerate(uids))
    assert state.nodes["n1"].requested.milli_cpu == 15_000
    assert state.nodes["n2"].requested.milli_cpu == 15_000
    assert binder.outcomes["bound"] == 30


async def test_concurrent_binds_of_the_same_pod_share_one_call(apiserver: FakeApiServer,
                                                               kube_config: ClusterConfig) -> None:
    (uid,) = _setup(apiserver)
    apiserver.inject(Fault("status", method="POST", status=500))  # make the first one linger
    async with KubeClient(kube_config) as client:
        binder = ApiBinder(client, truth(apiserver))
        await asyncio.gather(*(binder.bind("default", "p0", uid, "n1") for _ in range(3)))
    posts = [r for r in apiserver.requests if r.method == "POST"]
    assert [r.status for r in posts] == [500, 201]


async def test_unknown_pod_is_read_and_assumed(apiserver: FakeApiServer, kube_config: ClusterConfig) -> None:
    (uid,) = _setup(apiserver)
    state = ClusterState()
    state.apply_node(k8s.convert(apiserver.get("Node", "", "n1"), k8s.Node))
    async with KubeClient(kube_config) as client:
        await ApiBinder(client, state).bind("default", "p0", uid, "n1")
    assert uid in state.assumed and state.nodes["n1"].requested.milli_cpu == 1000


# ---- offline -------------------------------------------------------------------------------
def _offline_state() -> tuple[ClusterState, PodView]:
    state = ClusterState()
    state.apply_node(k8s.convert(ko.node("n1"), k8s.Node))
    pending = k8s.convert(ko.pod("p", uid="uid-p"), k8s.Pod)
    state.apply_pod(pending)
    state.apply_pod(k8s.convert(ko.pod("q", uid="uid-q", node_name="n1", phase="Running"), k8s.Pod))
    return state, PodView.from_k8s(pending)


async def test_snapshot_binder_assumes_a_known_pod() -> None:
    state, _ = _offline_state()
    binder = SnapshotBinder(state, ttl=30)
    await binder.bind("default", "p", "uid-p", "n1")
    assert "uid-p" in state.assumed and state.nodes["n1"].requested.milli_cpu == 2000
    await binder.bind("default", "q", "uid-q", "n1")  # already there: success
    assert binder.outcomes == {"bound": 1, "already_bound": 1}


async def test_snapshot_binder_errors() -> None:
    state, _ = _offline_state()
    binder = SnapshotBinder(state)
    with pytest.raises(BindError, match='node "n9" not found'):
        await binder.bind("default", "p", "uid-p", "n9")
    state.apply_node(k8s.convert(ko.node("n2"), k8s.Node))
    with pytest.raises(BindError, match='already assigned to node "n1"'):
        await binder.bind("default", "q", "uid-q", "n2")


async def test_snapshot_binder_accepts_an_unknown_pod() -> None:
    state, _ = _offline_state()
    await SnapshotBinder(state).bind("default", "stranger", "uid-x", "n1")
    assert "uid-x" not in state.pods
