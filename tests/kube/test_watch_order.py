"""Watch events out of order are ignored; the informer's version never goes back; a relist
reconciles; and while a large request reads the state off the loop, changes wait their turn."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator

import pytest

from extender.api.offload import Offloader
from extender.engine.cluster import ClusterState
from extender.kube.client import KubeClient, WatchEvent
from extender.kube.config import ClusterConfig
from extender.model import k8s
from extender.state.gate import StateGate, gate_for
from extender.state.informer import NODES, PODS, Informer, LiveState, is_newer
from tests.kube import kube_objects as ko
from tests.kube.fake_apiserver import FakeApiServer
from tests.kube.kube_helpers import converged, eventually

pytestmark = pytest.mark.anyio


@contextlib.asynccontextmanager
async def live_state(config: ClusterConfig) -> AsyncIterator[LiveState]:
    async with KubeClient(config) as client:
        live = LiveState(client, ClusterState(), page_limit=50, watch_timeout=30,
                         backoff_initial=0.05, backoff_max=0.2, expire_interval=0.05)
        live.start()
        try:
            yield live
        finally:
            await live.stop()


async def test_an_older_version_after_a_newer_one_is_ignored(apiserver: FakeApiServer,
                                                             kube_config: ClusterConfig) -> None:
    apiserver.put(ko.node("n1", labels={"tier": "old"}))
    apiserver.put(ko.node("n2"))
    async with live_state(kube_config) as live:
        assert await live.wait_synced(5)
        nodes = live.informers["nodes"]
        old = apiserver.get("Node", "", "n1")
        new = apiserver.update("Node", "", "n1", lambda n: n["metadata"]["labels"].update(tier="new"))
        await eventually(lambda: live.state.nodes["n1"].node.labels.get("tier") == "new")
        version = nodes.resource_version
        assert version == new["metadata"]["resourceVersion"]

        # The older object arrives after the newer one (and an old deletion of another node).
        apiserver.deliver_stale({**old, "kind": "Node"})
        stale_n2 = {**apiserver.get("Node", "", "n2"), "kind": "Node"}
        apiserver.deliver_stale(stale_n2, "DELETED")
        await eventually(lambda: live.counters.stale["nodes"] == 2, what="the stale events")

        assert live.state.nodes["n1"].node.labels["tier"] == "new"
        assert live.state.nodes["n1"].node.resource_version == new["metadata"]["resourceVersion"]
        assert "n2" in live.state.nodes
        assert nodes.resource_version == version  # never moved back
        assert live.counters.events[("nodes", "MODIFIED")] == 1

        # Newer events still apply, and a relist reconciles everything.
        apiserver.put(ko.node("n3"))
        await eventually(lambda: "n3" in live.state.nodes)
        apiserver.compact()
        apiserver.drop_watches()
        apiserver.delete("Node", "", "n3")
        await eventually(lambda: converged(live.state, apiserver), what="relist")


def test_version_order() -> None:
    assert is_newer("11", "9") and not is_newer("9", "11") and not is_newer("10", "10")
    assert is_newer("5", "")
    assert is_newer("b", "a") and not is_newer("a", "a")  # not integers: only equality is known


def test_a_stale_bookmark_does_not_move_the_version_back() -> None:
    state = ClusterState()
    informer = Informer(None, state, NODES)  # type: ignore[arg-type]
    node = k8s.convert({"metadata": {"name": "n1", "resourceVersion": "20"}}, k8s.Node)
    informer.handle(WatchEvent("ADDED", node, "20"))
    informer.handle(WatchEvent("BOOKMARK", None, "15"))
    informer.handle(WatchEvent("ADDED", node, "20"))  # a duplicate after a re-watch
    assert informer.resource_version == "20"
    assert informer.counters.stale["nodes"] == 1  # the duplicate; bookmarks are not counted
    assert "n1" in state.nodes


def test_gate_defers_changes_in_order_and_survives_a_failing_one() -> None:
    gate = StateGate()
    applied: list[int] = []
    gate.call(applied.append, 1)
    assert applied == [1]
    gate.enter()
    gate.call(applied.append, 2)
    gate.call(lambda: 1 / 0)
    gate.enter()
    gate.call(applied.append, 3)
    gate.leave()
    assert applied == [1] and gate.pending == 3 and gate.busy
    gate.leave()
    assert applied == [1, 2, 3] and gate.pending == 0 and not gate.busy
    assert gate_for(object) is gate_for(object)


async def test_state_holds_still_while_a_large_request_reads_it(apiserver: FakeApiServer,
                                                                kube_config: ClusterConfig) -> None:
    """The worker thread sees one state from start to end; the watch events that arrive
    meanwhile are applied, in order, as soon as it returns."""
    apiserver.put(ko.node("n1"))
    apiserver.put(ko.pod("p1", node_name="n1", cpu="1"))
    async with live_state(kube_config) as live:
        assert await live.wait_synced(5)
        state = live.state
        offload = Offloader()
        release = threading.Event()
        started = threading.Event()

        async def read_twice() -> tuple[set[str], set[str], int]:
            before = set(state.nodes)
            started.set()
            assert release.wait(10)
            return before, set(state.nodes), state.nodes["n1"].requested.milli_cpu

        running = asyncio.ensure_future(offload.run(gate_for(state), read_twice()))
        await eventually(started.is_set)
        apiserver.put(ko.node("n2"))
        apiserver.put(ko.pod("p2", node_name="n1", cpu="2"))
        apiserver.delete("Pod", "default", "p1")
        pods = live.informers["pods"]
        target = str(apiserver.rv)
        await eventually(lambda: pods.resource_version == target, what="the events received")
        assert "n2" not in state.nodes and state.nodes["n1"].requested.milli_cpu == 1000
        assert gate_for(state).pending >= 3
        release.set()
        before, after, cpu = await running
        assert before == after == {"n1"} and cpu == 1000
        # Applied in order right after: p1 gone, p2 counted, n2 known.
        assert "n2" in state.nodes and state.nodes["n1"].requested.milli_cpu == 2000
        assert converged(state, apiserver)
        offload.close()


def test_events_older_than_a_catch_up_are_skipped_until_the_watch_passes_it() -> None:
    """A catch-up (`state.catchup`) applied a pod as a list at version 20 showed it, bound;
    the watch, behind at 10, then delivers that pod's older events: they must not put it back
    to pending. Events after 20 apply again, and the note is dropped once passed."""
    state = ClusterState()
    state.apply_node(k8s.convert(ko.node("n1"), k8s.Node))
    informer = Informer(None, state, PODS)  # type: ignore[arg-type]  # handle() calls no API
    informer.resource_version = "10"

    def event(kind: str, version: str, **fields: object) -> WatchEvent:
        obj = ko.pod("p", "default", uid="uid-p", **fields)  # type: ignore[arg-type]
        obj["metadata"]["resourceVersion"] = version
        return WatchEvent(type=kind, object=k8s.convert(obj, k8s.Pod), resource_version=version)

    state.apply_pod(event("ADDED", "20", node_name="n1", phase="Running").object)
    informer.caught_up("uid-p", "20")
    informer.caught_up("uid-old", "5")  # not newer than the informer: nothing to shadow
    assert informer.ahead == {"uid-p": "20"}

    informer.handle(event("ADDED", "12"))  # created pending, before the binding
    assert state.pods["uid-p"].node_name == "n1"
    informer.handle(event("MODIFIED", "20", node_name="n1"))
    assert state.pods["uid-p"].node_name == "n1" and informer.ahead == {}
    assert informer.resource_version == "20"
    informer.handle(event("DELETED", "21", node_name="n1"))
    assert "uid-p" not in state.pods
