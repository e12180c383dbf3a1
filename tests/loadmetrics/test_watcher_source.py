"""load-watcher's `GET /watcher` against a loopback server answering as load-watcher does."""

from __future__ import annotations

import json

import pytest

from extender.model.loadmetrics import AVERAGE, CPU, LATEST, MEMORY, STD
from extender.state.loadmetrics.source import HTTP_ERROR, INVALID, TIMEOUT, UNREACHABLE, SourceError
from extender.state.loadmetrics.watcher import LoadWatcherSource
from tests.loadmetrics.loopback import LoopbackServer
from tests.polling import free_port

pytestmark = pytest.mark.anyio

#: What load-watcher's handler writes (gojay: every key, `tags` {} and `metadata` with
#: `dataCenter`), for a Prometheus-backed watcher.
WATCHER_JSON = {
    "timestamp": 1700000040,
    "window": {"duration": "15m", "start": 1699999140, "end": 1700000040},
    "source": "Prometheus",
    "data": {"NodeMetricsMap": {
        "node-a": {"metrics": [
            {"name": "instance:node_cpu:ratio", "type": "CPU", "operator": "AVG",
             "rollup": "15m", "value": 30.5},
            {"name": "instance:node_cpu:ratio", "type": "CPU", "operator": "STD",
             "rollup": "15m", "value": 4.25},
            {"name": "instance:node_memory_utilisation:ratio", "type": "Memory",
             "operator": "AVG", "rollup": "15m", "value": 61},
        ], "tags": {}, "metadata": {"dataCenter": ""}},
        "node-b": {"metrics": [
            {"name": "", "type": "CPU", "operator": "Latest", "rollup": "", "value": 12},
            {"name": "", "type": "Memory", "operator": "Latest", "rollup": "", "value": 20},
        ], "tags": {}, "metadata": {"dataCenter": "dc-1"}},
    }},
}


async def fetch(address: str, **kwargs) -> object:
    source = LoadWatcherSource(address, **kwargs)
    try:
        return await source.fetch()
    finally:
        await source.aclose()


async def test_decodes_load_watchers_json_exactly() -> None:
    with LoopbackServer() as server:
        server.answer("/watcher", 200, json.dumps(WATCHER_JSON))
        snapshot = await fetch(server.url + "/")  # a trailing slash is not doubled
        assert [path for path, _ in server.requests] == ["/watcher"]
    assert snapshot.timestamp == 1700000040
    assert (snapshot.window.duration, snapshot.window.start, snapshot.window.end) == (
        "15m", 1699999140, 1700000040)
    assert snapshot.source == "Prometheus"
    a = snapshot.data.NodeMetricsMap["node-a"].metrics
    assert [(m.name, m.type, m.operator, m.rollup, m.value) for m in a] == [
        ("instance:node_cpu:ratio", CPU, AVERAGE, "15m", 30.5),
        ("instance:node_cpu:ratio", CPU, STD, "15m", 4.25),
        ("instance:node_memory_utilisation:ratio", MEMORY, AVERAGE, "15m", 61.0)]
    b = snapshot.data.NodeMetricsMap["node-b"]
    assert [(m.type, m.operator, m.value) for m in b.metrics] == [(CPU, LATEST, 12.0),
                                                                 (MEMORY, LATEST, 20.0)]
    assert b.metadata == {"dataCenter": "dc-1"}


@pytest.mark.parametrize(("status", "body", "outcome", "words"), [
    # load-watcher answers 500 with no body before its first fetch, 404 when it has none.
    (500, b"", HTTP_ERROR, "HTTP 500"),
    (404, b"", HTTP_ERROR, "HTTP 404"),
    (200, b"{not json", INVALID, "not load-watcher's JSON"),
    (200, b'{"timestamp": "yesterday"}', INVALID, "not load-watcher's JSON"),
])
async def test_failures(status: int, body: bytes, outcome: str, words: str) -> None:
    with LoopbackServer() as server:
        server.answer("/watcher", status, body)
        with pytest.raises(SourceError) as caught:
            await fetch(server.url)
    assert caught.value.outcome == outcome
    assert words in str(caught.value)
    assert "/watcher" in str(caught.value)


async def test_unreachable_and_timeout() -> None:
    with pytest.raises(SourceError) as caught:
        await fetch(f"http://127.0.0.1:{free_port()}")
    assert caught.value.outcome == UNREACHABLE
    with LoopbackServer() as server:
        server.answer("/watcher", 200, json.dumps(WATCHER_JSON), delay=1.0)
        with pytest.raises(SourceError) as caught:
            await fetch(server.url, timeout=0.2)
    assert caught.value.outcome == TIMEOUT


async def test_an_empty_watcher_answers_null_maps_as_go_marshals_them() -> None:
    empty = {"timestamp": 1700000040,
             "window": {"duration": "15m", "start": 1699999140, "end": 1700000040},
             "source": "Prometheus", "data": {"NodeMetricsMap": None}}
    with LoopbackServer() as server:
        server.answer("/watcher", 200, json.dumps(empty))
        snapshot = await fetch(server.url)
    assert snapshot.data.NodeMetricsMap == {}
    assert snapshot.window.end == 1700000040
