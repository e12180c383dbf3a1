"""`KubeClient` against the fake API server: list, watch, get, bind, auth, TLS."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

import httpcore
import httpx
import pytest

from extender.kube.client import ApiError, GoneError, KubeClient, TransportError, WatchEvent
from extender.kube.config import ClusterConfig, load_kubeconfig
from extender.kube.pool import reclaim_orphans
from extender.model import k8s
from tests.kube import kube_objects as ko
from tests.kube.fake_apiserver import FakeApiServer, Fault

pytestmark = pytest.mark.anyio


@pytest.fixture(params=[True, False], ids=["lean", "httpx"])
def lean(request: pytest.FixtureRequest) -> bool:
    """Both paths of the client's short calls: the lean pool, and httpx (proxies)."""
    return request.param


async def _collect(client: KubeClient, rv: str, limit: int = 100, **kwargs) -> list[WatchEvent]:
    events = []
    async with contextlib.aclosing(
        client.watch("/api/v1/nodes", k8s.Node, resource_version=rv, **kwargs)
    ) as stream:
        async for event in stream:
            events.append(event)
            if len(events) >= limit:
                break
    return events


async def test_paginated_list_is_one_consistent_snapshot(apiserver: FakeApiServer,
                                                         kube_config: ClusterConfig,
        lean: bool) -> None:
    for i in range(5):
        apiserver.put(ko.node(f"n{i}"))
    async with KubeClient(kube_config, lean=lean) as client:
        first = await client.list("/api/v1/nodes", k8s.Node, limit=2)
        assert [n.metadata.name for n in first.items] == ["n0", "n1"]
        assert first.continue_token
        apiserver.put(ko.node("n9"))  # after the first page: not in this list
        apiserver.delete("Node", "", "n4")
        second = await client.list("/api/v1/nodes", k8s.Node, limit=2, continue_token=first.continue_token)
        third = await client.list("/api/v1/nodes", k8s.Node, limit=2, continue_token=second.continue_token)
    assert [n.metadata.name for n in second.items + third.items] == ["n2", "n3", "n4"]
    assert not third.continue_token
    assert first.resource_version == second.resource_version == third.resource_version


async def test_expired_continue_token_is_gone(apiserver: FakeApiServer, kube_config: ClusterConfig,
        lean: bool) -> None:
    for i in range(3):
        apiserver.put(ko.node(f"n{i}"))
    async with KubeClient(kube_config, lean=lean) as client:
        page = await client.list("/api/v1/nodes", k8s.Node, limit=1)
        apiserver.put(ko.node("n3"))
        apiserver.compact()
        with pytest.raises(GoneError) as info:
            await client.list("/api/v1/nodes", k8s.Node, limit=1, continue_token=page.continue_token)
    assert info.value.code == 410 and info.value.reason == "Expired"


async def test_watch_delivers_later_events_in_order_with_bookmarks(apiserver: FakeApiServer,
                                                                   kube_config: ClusterConfig,
        lean: bool) -> None:
    apiserver.put(ko.node("old"))
    start = str(apiserver.rv)
    apiserver.put(ko.node("a"))
    apiserver.update("Node", "", "a", lambda n: n["metadata"]["labels"].update(zone="z1"))
    apiserver.delete("Node", "", "old")
    async with KubeClient(kube_config, lean=lean) as client:
        events = await _collect(client, start, limit=4)
    changes = [(e.type, e.object.metadata.name) for e in events if e.type != "BOOKMARK"]
    assert changes == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "old")]
    versions = [int(e.resource_version) for e in events]
    assert versions == sorted(versions) and versions[0] > int(start)
    assert events[1].object.metadata.labels["zone"] == "z1"
    assert events[3].type == "BOOKMARK" and events[3].object is None


async def test_watch_from_a_compacted_version_is_gone(apiserver: FakeApiServer,
                                                      kube_config: ClusterConfig,
        lean: bool) -> None:
    apiserver.put(ko.node("a"))
    old = str(apiserver.rv - 1)
    apiserver.compact()
    async with KubeClient(kube_config, lean=lean) as client:
        with pytest.raises(GoneError, match="too old resource version"):
            await _collect(client, old)


async def test_watch_ends_cleanly_at_timeout_seconds(apiserver: FakeApiServer,
                                                     kube_config: ClusterConfig,
        lean: bool) -> None:
    opened = []
    async with KubeClient(kube_config, lean=lean) as client:
        events = await _collect(client, str(apiserver.rv), timeout_seconds=1, bookmarks=False,
                                on_open=lambda: opened.append(True))
    assert events == [] and opened == [True]


async def test_dropped_watch_is_a_transport_error(apiserver: FakeApiServer,
                                                  kube_config: ClusterConfig,
        lean: bool) -> None:
    apiserver.inject(Fault("drop", watch=True))
    async with KubeClient(kube_config, lean=lean) as client:
        with pytest.raises(TransportError):
            await _collect(client, str(apiserver.rv))


async def test_get_and_binding(apiserver: FakeApiServer, kube_config: ClusterConfig,
                               lean: bool) -> None:
    stored = apiserver.put(ko.pod("p", cpu="250m"))
    uid = stored["metadata"]["uid"]
    async with KubeClient(kube_config, lean=lean) as client:
        pod = await client.get_pod("default", "p")
        assert pod.metadata.uid == uid and pod.spec.node_name == ""
        await client.create_binding("default", "p", uid, "n1")
        assert (await client.get_pod("default", "p")).spec.node_name == "n1"
        with pytest.raises(ApiError) as info:
            await client.create_binding("default", "p", uid, "n2")
        assert info.value.code == 409
        assert 'pod p is already assigned to node "n1"' in info.value.message
        with pytest.raises(ApiError) as info:
            await client.get_pod("default", "ghost")
        assert info.value.code == 404 and info.value.reason == "NotFound"
    assert apiserver.bindings == [("default", "p", uid, "n1")]


async def test_bad_token_is_401(apiserver: FakeApiServer, tmp_path: Path, lean: bool) -> None:
    cfg = load_kubeconfig(apiserver.write_kubeconfig(tmp_path / "kc", token="wrong"))
    async with KubeClient(cfg, lean=lean) as client:
        with pytest.raises(ApiError) as info:
            await client.list("/api/v1/nodes", k8s.Node)
        with pytest.raises(ApiError) as watched:
            await _collect(client, str(apiserver.rv))
    assert info.value.code == 401 and watched.value.code == 401


async def test_rotated_token_file_is_used(apiserver: FakeApiServer, tmp_path: Path,
                                          lean: bool) -> None:
    token = tmp_path / "token"
    token.write_text("test-token")
    cfg = load_kubeconfig(apiserver.write_kubeconfig(tmp_path / "kc", token_file=str(token)))
    async with KubeClient(cfg, lean=lean) as client:
        await client.list("/api/v1/nodes", k8s.Node)
        apiserver.tokens = {"rotated"}  # the old token is no longer accepted
        fresh = tmp_path / "token.new"
        fresh.write_text("rotated")
        os.replace(fresh, token)
        await client.list("/api/v1/nodes", k8s.Node)
        apiserver.tokens = {"again"}  # and a watch finds the token rotated again
        fresh.write_text("again")
        os.replace(fresh, token)
        events = await _collect(client, str(apiserver.rv), timeout_seconds=1, bookmarks=False)
    auth_ok = [r.status for r in apiserver.requests]
    assert auth_ok == [200, 200, 200] and events == []


async def test_server_down_is_a_transport_error(kube_config: ClusterConfig,
                                               apiserver: FakeApiServer, lean: bool) -> None:
    apiserver.stop()
    async with KubeClient(kube_config, timeout=2, lean=lean) as client:
        with pytest.raises(TransportError):
            await client.list("/api/v1/nodes", k8s.Node)


@pytest.mark.parametrize("client_cert", [False, True], ids=["token", "client-cert"])
async def test_tls_with_ca_data(tmp_path: Path, client_cert: bool, lean: bool) -> None:
    with FakeApiServer(tls=True, client_certs=True, token="tls-token") as server:
        server.put(ko.node("n1"))
        cfg = load_kubeconfig(server.write_kubeconfig(tmp_path / "kc", client_cert=client_cert))
        assert cfg.server.startswith("https://")
        async with KubeClient(cfg, lean=lean) as client:
            page = await client.list("/api/v1/nodes", k8s.Node)
        assert [n.metadata.name for n in page.items] == ["n1"]


async def test_tls_rejects_an_unknown_ca(tmp_path: Path, lean: bool) -> None:
    with FakeApiServer(tls=True) as server:
        doc = server.kubeconfig()
        del doc["clusters"][0]["cluster"]["certificate-authority-data"]
        import yaml

        (tmp_path / "kc").write_text(yaml.safe_dump(doc))
        async with KubeClient(load_kubeconfig(tmp_path / "kc"), lean=lean) as client:
            with pytest.raises(TransportError, match="CERTIFICATE_VERIFY_FAILED"):
                await client.list("/api/v1/nodes", k8s.Node)


@pytest.mark.slow  # a second or two of a slow server
@pytest.mark.parametrize("lean", [True, False], ids=["lean", "httpx"])
async def test_calls_given_up_while_the_pool_is_full_leave_it_usable(
        apiserver: FakeApiServer, kube_config: ClusterConfig, lean: bool) -> None:
    """Callers that stop waiting (a bind's deadline) while the server is slow and the client's
    64 connections are busy must not take connections with them: httpcore leaves one behind,
    neither open nor closed, when a request it was made for is cancelled before using it
    (encode/httpcore#1093), and a response whose close a second cancellation interrupts keeps
    its connection busy. Cancelled so, these 300 calls left all 64 connections held (the pool
    then showed 0 requests and 64 active connections) and the last call waited for one that
    never came; the extender's binds stopped for good (bench.e2e, the binding row's stall).
    Now the calls go on, each to its own timeout, and the pool is whole again after them:
    httpx's (watches, proxies) and the lean one the short calls take."""
    apiserver.put(ko.pod("p"))
    apiserver.inject(Fault("hang", method="GET", path="/pods/p", times=10_000, hang_seconds=0.6))
    async with KubeClient(kube_config, lean=lean) as client:
        async def give_up(arrival: float) -> None:
            await asyncio.sleep(arrival)  # arriving one after another, as binds of a burst do
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.3):
                    await client.get_pod("default", "p")

        await asyncio.gather(*(give_up(i * 0.002) for i in range(300)))
        assert client.abandoned > 0  # still running, to end on their own timeouts
        apiserver.clear_faults()
        async with asyncio.timeout(10):
            pod = await client.get_pod("default", "p", timeout=5)
            while client.abandoned:  # the calls still hanging end (0.6 s), and free theirs
                await asyncio.sleep(0.02)
        assert _leftovers(client) == []
    assert pod.metadata.name == "p"


@pytest.mark.slow  # a second or two of a slow server
@pytest.mark.parametrize("lean", [True, False], ids=["lean", "httpx"])
async def test_a_pool_timeout_leaves_no_connection_behind(
        apiserver: FakeApiServer, kube_config: ClusterConfig, lean: bool) -> None:
    """The same leak from httpx's own pool timeout, with no caller giving up: requests that
    waited their whole pool timeout while a slow server held every connection; the client
    takes such connections back (`reclaim_orphans`). The lean pool never leaves one: a call
    that times out closes the connection it holds, and one waiting for a slot holds none."""
    apiserver.put(ko.pod("p"))
    apiserver.inject(Fault("hang", method="GET", path="/pods/p", times=10_000, hang_seconds=0.4))
    async with KubeClient(kube_config, lean=lean) as client:
        told: list[int] = []
        client.on_reclaim = told.append  # serve: extender_api_connections_reclaimed_total
        failed: list[TransportError] = []

        async def wait_out(arrival: float) -> None:
            await asyncio.sleep(arrival)
            try:
                await client.get_pod("default", "p", timeout=0.3)
            except TransportError as exc:
                failed.append(exc)

        # httpcore leaves a connection behind in most bursts, not every one (it depends on
        # which waiter its pool timeout wakes when): up to three bursts for it to happen. The
        # lean pool must leave none in one.
        for burst in range(1, 4):
            await asyncio.gather(*(wait_out(i * 0.002) for i in range(300)))
            # Every call waited on the hanging server past its timeout.
            assert len(failed) == 300 * burst
            if lean or client.reclaimed:
                break
        if lean:
            assert all("timed out after 0.3s" in str(exc) for exc in failed)
            assert client.reclaimed == 0 and told == []
        else:
            assert client.reclaimed > 0  # the leak happened, and was undone
            assert sum(told) == client.reclaimed
        apiserver.clear_faults()
        async with asyncio.timeout(10):
            pod = await client.get_pod("default", "p", timeout=5)
        assert _leftovers(client) == []
    assert pod.metadata.name == "p"


def _leftovers(client: KubeClient) -> list[object]:
    """The connections that no call holds and that are neither idle nor closed: in httpx's
    pool, or in the lean one (where, no call running, every open connection must be idle)."""
    if client._lean is not None:
        return ["busy"] * (client._lean.open_connections - client._lean.idle_connections)
    pool = client._http._transport._pool  # type: ignore[attr-defined]
    held = {id(request.connection) for request in pool._requests}
    return [connection for connection in pool._connections
            if id(connection) not in held and not connection.is_idle()
            and not connection.is_closed() and not connection.has_expired()]


class _Socket(httpcore.AsyncMockStream):
    closed = False

    async def aclose(self) -> None:
        self.closed = True


async def test_only_connections_no_request_can_use_are_taken_back() -> None:
    """`reclaim_orphans` on a pool as httpcore leaves it: a connection made for a request that
    then failed, never connected or connected but still new (its socket closed), goes; one a
    queued request holds, and an idle one, stay."""
    http = httpx.AsyncClient()
    pool = http._transport._pool  # type: ignore[attr-defined]
    origin = httpcore.Origin(b"https", b"api.invalid", 443)

    def connected(state: str, socket: _Socket) -> httpcore.AsyncHTTPConnection:
        connection = httpcore.AsyncHTTPConnection(origin)
        inner = httpcore.AsyncHTTP11Connection(origin, socket)
        if state == "idle":
            inner._state = type(inner._state).IDLE
        connection._connection = inner
        return connection

    never, new_socket, idle_socket = httpcore.AsyncHTTPConnection(origin), _Socket([]), _Socket([])
    new, idle = connected("new", new_socket), connected("idle", idle_socket)
    waiting = httpcore.AsyncHTTPConnection(origin)  # made for a request still queued
    queued = httpcore._async.connection_pool.AsyncPoolRequest(
        httpcore.Request("GET", "https://api.invalid/"))
    queued.assign_to_connection(waiting)
    pool._connections[:] = [never, new, idle, waiting]
    pool._requests[:] = [queued]

    assert reclaim_orphans(http) == 2
    assert pool._connections == [idle, waiting]
    await asyncio.sleep(0.01)  # the closes run on the loop
    assert new_socket.closed and not idle_socket.closed
    pool._connections.clear()
    pool._requests.clear()
    await http.aclose()
