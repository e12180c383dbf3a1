"""`KubeClient` against the fake API server: list, watch, get, bind, auth, TLS."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from extender.kube.client import ApiError, GoneError, KubeClient, TransportError, WatchEvent
from extender.kube.config import ClusterConfig, load_kubeconfig
from extender.model import k8s
from tests.kube import kube_objects as ko
from tests.kube.fake_apiserver import FakeApiServer, Fault

pytestmark = pytest.mark.anyio


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
                                                         kube_config: ClusterConfig) -> None:
    for i in range(5):
        apiserver.put(ko.node(f"n{i}"))
    async with KubeClient(kube_config) as client:
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


async def test_expired_continue_token_is_gone(apiserver: FakeApiServer, kube_config: ClusterConfig) -> None:
    for i in range(3):
        apiserver.put(ko.node(f"n{i}"))
    async with KubeClient(kube_config) as client:
        page = await client.list("/api/v1/nodes", k8s.Node, limit=1)
        apiserver.put(ko.node("n3"))
        apiserver.compact()
        with pytest.raises(GoneError) as info:
            await client.list("/api/v1/nodes", k8s.Node, limit=1, continue_token=page.continue_token)
    assert info.value.code == 410 and info.value.reason == "Expired"


async def test_watch_delivers_later_events_in_order_with_bookmarks(apiserver: FakeApiServer,
                                                                   kube_config: ClusterConfig) -> None:
    apiserver.put(ko.node("old"))
    start = str(apiserver.rv)
    apiserver.put(ko.node("a"))
    apiserver.update("Node", "", "a", lambda n: n["metadata"]["labels"].update(zone="z1"))
    apiserver.delete("Node", "", "old")
    async with KubeClient(kube_config) as client:
        events = await _collect(client, start, limit=4)
    changes = [(e.type, e.object.metadata.name) for e in events if e.type != "BOOKMARK"]
    assert changes == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "old")]
    versions = [int(e.resource_version) for e in events]
    assert versions == sorted(versions) and versions[0] > int(start)
    assert events[1].object.metadata.labels["zone"] == "z1"
    assert events[3].type == "BOOKMARK" and events[3].object is None


async def test_watch_from_a_compacted_version_is_gone(apiserver: FakeApiServer,
                                                      kube_config: ClusterConfig) -> None:
    apiserver.put(ko.node("a"))
    old = str(apiserver.rv - 1)
    apiserver.compact()
    async with KubeClient(kube_config) as client:
        with pytest.raises(GoneError, match="too old resource version"):
            await _collect(client, old)


async def test_watch_ends_cleanly_at_timeout_seconds(apiserver: FakeApiServer,
                                                     kube_config: ClusterConfig) -> None:
    opened = []
    async with KubeClient(kube_config) as client:
        events = await _collect(client, str(apiserver.rv), timeout_seconds=1, bookmarks=False,
                                on_open=lambda: opened.append(True))
    assert events == [] and opened == [True]


async def test_dropped_watch_is_a_transport_error(apiserver: FakeApiServer,
                                                  kube_config: ClusterConfig) -> None:
    apiserver.inject(Fault("drop", watch=True))
    async with KubeClient(kube_config) as client:
        with pytest.raises(TransportError):
            await _collect(client, str(apiserver.rv))


async def test_get_and_binding(apiserver: FakeApiServer, kube_config: ClusterConfig) -> None:
    stored = apiserver.put(ko.pod("p", cpu="250m"))
    uid = stored["metadata"]["uid"]
    async with KubeClient(kube_config) as client:
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


async def test_bad_token_is_401(apiserver: FakeApiServer, tmp_path: Path) -> None:
    cfg = load_kubeconfig(apiserver.write_kubeconfig(tmp_path / "kc", token="wrong"))
    async with KubeClient(cfg) as client:
        with pytest.raises(ApiError) as info:
            await client.list("/api/v1/nodes", k8s.Node)
    assert info.value.code == 401


async def test_rotated_token_file_is_used(apiserver: FakeApiServer, tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("test-token")
    cfg = load_kubeconfig(apiserver.write_kubeconfig(tmp_path / "kc", token_file=str(token)))
    async with KubeClient(cfg) as client:
        await client.list("/api/v1/nodes", k8s.Node)
        apiserver.tokens = {"rotated"}  # the old token is no longer accepted
        fresh = tmp_path / "token.new"
        fresh.write_text("rotated")
        os.replace(fresh, token)
        await client.list("/api/v1/nodes", k8s.Node)
    auth_ok = [r.status for r in apiserver.requests]
    assert auth_ok == [200, 200]


async def test_server_down_is_a_transport_error(kube_config: ClusterConfig, apiserver: FakeApiServer) -> None:
    apiserver.stop()
    async with KubeClient(kube_config, timeout=2) as client:
        with pytest.raises(TransportError):
            await client.list("/api/v1/nodes", k8s.Node)


@pytest.mark.parametrize("client_cert", [False, True], ids=["token", "client-cert"])
async def test_tls_with_ca_data(tmp_path: Path, client_cert: bool) -> None:
    with FakeApiServer(tls=True, client_certs=True, token="tls-token") as server:
        server.put(ko.node("n1"))
        cfg = load_kubeconfig(server.write_kubeconfig(tmp_path / "kc", client_cert=client_cert))
        assert cfg.server.startswith("https://")
        async with KubeClient(cfg) as client:
            page = await client.list("/api/v1/nodes", k8s.Node)
        assert [n.metadata.name for n in page.items] == ["n1"]


async def test_tls_rejects_an_unknown_ca(tmp_path: Path) -> None:
    with FakeApiServer(tls=True) as server:
        doc = server.kubeconfig()
        del doc["clusters"][0]["cluster"]["certificate-authority-data"]
        import yaml

        (tmp_path / "kc").write_text(yaml.safe_dump(doc))
        async with KubeClient(load_kubeconfig(tmp_path / "kc")) as client:
            with pytest.raises(TransportError, match="CERTIFICATE_VERIFY_FAILED"):
                await client.list("/api/v1/nodes", k8s.Node)
