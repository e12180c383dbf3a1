"""The sandbox's untyped `Api` on the lean connections, against the fake API server (over TLS
with a client certificate, as the sandbox's own kubeconfigs): objects and pages as JSON,
watch events, a failure's Status, and no answer at all."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from extender.sandbox.api import Api, ApiError, TransportError, path
from tests.kube import kube_objects as ko
from tests.kube.fake_apiserver import FakeApiServer


@pytest.fixture
def server() -> Iterator[FakeApiServer]:
    with FakeApiServer(tls=True, client_certs=True, bookmark_interval=0.2) as fake:
        yield fake


def test_objects_pages_and_watch_events_as_json(server: FakeApiServer, tmp_path: Path) -> None:
    for name in ("n1", "n2", "n3"):
        server.put(ko.node(name))
    kubeconfig = str(server.write_kubeconfig(tmp_path / "kc", client_cert=True))

    async def scenario() -> tuple[dict, list[dict], list[tuple[str, str]]]:
        async with Api(kubeconfig) as api:
            node = await api.get(path("Node", name="n2"))
            nodes = await api.list(path("Node"), limit="2")  # two pages
            start = str(server.rv)
            server.put(ko.node("n4"))
            seen: list[tuple[str, str]] = []
            async with asyncio.timeout(10):
                async with contextlib.aclosing(api.watch(path("Node"), start)) as events:
                    async for kind, obj in events:
                        if kind != "BOOKMARK":
                            seen.append((kind, obj["metadata"]["name"]))
                            break
            return node, nodes, seen

    node, nodes, seen = asyncio.run(scenario())
    assert node["kind"] == "Node" and node["metadata"]["name"] == "n2"
    assert [n["metadata"]["name"] for n in nodes] == ["n1", "n2", "n3"]
    assert seen == [("ADDED", "n4")]


def test_a_failure_is_its_status_and_no_answer_a_transport_error(
        server: FakeApiServer, tmp_path: Path) -> None:
    kubeconfig = str(server.write_kubeconfig(tmp_path / "kc", client_cert=True))

    async def missing() -> None:
        async with Api(kubeconfig) as api:
            assert not await api.exists(path("Pod", "default", "ghost"))
            await api.get(path("Pod", "default", "ghost"))

    with pytest.raises(ApiError) as info:
        asyncio.run(missing())
    assert info.value.code == 404 and info.value.reason == "NotFound"

    server.stop()

    async def down() -> None:
        async with Api(kubeconfig, timeout=2) as api:
            await api.get(path("Node"))

    with pytest.raises(TransportError, match="GET /api/v1/nodes: "):
        asyncio.run(down())
