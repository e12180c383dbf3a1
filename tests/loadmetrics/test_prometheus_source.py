"""The Prometheus source against a real Prometheus (backfilled series, `prom.py`), and its
request shape (bearer token, instant query at the fetch time) against a mock transport."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from extender.engine.args import MetricProviderSpec
from extender.model.loadmetrics import AVERAGE, CPU, MEMORY, STD, WatcherMetrics
from extender.state.loadmetrics.prometheus import PrometheusSource, Query, queries_of
from extender.state.loadmetrics.source import (
    HTTP_ERROR,
    INVALID,
    UNREACHABLE,
    SourceError,
)
from tests.loadmetrics.prom import (
    CPU_RULE,
    LOAD,
    MEMORY_RULE,
    NODE_WITHOUT_SERIES,
    PrometheusServer,
    expected_percent,
)
from tests.polling import free_port

pytestmark = pytest.mark.anyio


def spec(address: str, **queries: str) -> MetricProviderSpec:
    return MetricProviderSpec.model_validate(
        {"type": "Prometheus", "address": address, "prometheusQueries": queries})


async def fetched(source: PrometheusSource) -> WatcherMetrics:
    """One fetch, the source closed after it (answered or raised)."""
    try:
        return await source.fetch()
    finally:
        await source.aclose()


def by_kind(metrics: list) -> dict[tuple[str, str], float]:
    return {(m.type, m.operator): m.value for m in metrics}


async def test_returns_the_backfilled_values_per_node(prometheus: PrometheusServer) -> None:
    source = PrometheusSource(spec(prometheus.url))
    snapshot = await fetched(source)
    nodes = snapshot.data.NodeMetricsMap
    # One entry per node that has series; the series without an `instance` label is left out.
    assert set(nodes) == set(LOAD)
    assert NODE_WITHOUT_SERIES not in nodes
    for node in LOAD:
        cpu_avg, cpu_std = expected_percent(node, CPU_RULE)
        mem_avg, mem_std = expected_percent(node, MEMORY_RULE)
        got = by_kind(nodes[node].metrics)
        assert got == pytest.approx({(CPU, AVERAGE): cpu_avg, (CPU, STD): cpu_std,
                                     (MEMORY, AVERAGE): mem_avg, (MEMORY, STD): mem_std},
                                    abs=1e-9), node
        assert len(nodes[node].metrics) == 4
        assert {m.rollup for m in nodes[node].metrics} == {"15m"}
    # e.g. node-b: cpu alternates 12.5 % and 37.5 %: average 25 %, deviation 12.5 %.
    assert by_kind(nodes["node-b"].metrics)[(CPU, AVERAGE)] == pytest.approx(25.0, abs=1e-9)
    assert by_kind(nodes["node-b"].metrics)[(CPU, STD)] == pytest.approx(12.5, abs=1e-9)
    assert snapshot.source == "Prometheus"
    assert snapshot.window.duration == "15m"
    assert snapshot.window.end - snapshot.window.start == 900
    assert snapshot.timestamp == snapshot.window.end
    # The metric's name is the query that produced it.
    names = {m.name for m in nodes["node-a"].metrics}
    assert "avg_over_time(instance:node_cpu:ratio[15m])" in names


async def test_configured_queries_and_node_label(prometheus: PrometheusServer) -> None:
    # A query of our own (twice the cpu average, by a relabelled node name) and a left-out one.
    read_at = time.time()
    source = PrometheusSource(MetricProviderSpec.model_validate({
        "type": "Prometheus", "address": prometheus.url + "/",
        "prometheusQueries": {
            "cpuAverage": 'label_replace(2 * avg_over_time(instance:node_cpu:ratio[{window}]), '
                          '"node", "$1", "instance", "(.*)")',
            "cpuStd": "", "memoryAverage": "", "memoryStd": "", "nodeLabel": "node"}}),
        clock=lambda: read_at)
    nodes = (await fetched(source)).data.NodeMetricsMap
    assert set(nodes) == set(LOAD)
    for node in LOAD:
        assert [(m.type, m.operator) for m in nodes[node].metrics] == [(CPU, AVERAGE)]
        assert nodes[node].metrics[0].value == pytest.approx(
            2 * expected_percent(node, CPU_RULE)[0], abs=1e-9)
    # Arithmetic hides which series the value comes from: dated at the read.
    assert source.sample_times == dict.fromkeys(LOAD, read_at)
    assert source.notes == ()


@pytest.mark.parametrize("later", [0, 400])
async def test_nodes_are_dated_by_their_newest_sample(prometheus: PrometheusServer,
                                                      later: int) -> None:
    # The backfilled series stop at `newest_sample`, as an exporter's that died then: their
    # averages are still there, but a node's data is as old as its newest sample. 400 s
    # later that sample is beyond Prometheus' 5-minute lookback (`timestamp()` alone finds
    # nothing) and the averages are still in the window.
    read_at = time.time() + later
    source = PrometheusSource(spec(prometheus.url), clock=lambda: read_at)
    nodes = (await fetched(source)).data.NodeMetricsMap
    assert set(nodes) == set(LOAD) and all(len(nodes[n].metrics) == 4 for n in LOAD)
    assert source.sample_times == dict.fromkeys(LOAD, float(prometheus.newest_sample))
    assert source.notes == ()


RELABEL = 'label_replace({query}, "node", "$1", "instance", "(node-.*)")'


async def test_relabelled_queries_are_dated_by_the_same_label(
        prometheus: PrometheusServer) -> None:
    # docs/operations.md's relabelling, of all four queries.
    source = PrometheusSource(spec(prometheus.url, nodeLabel="node", **{
        key: RELABEL.format(query=text) for key, text in queries_as_configured().items()}))
    nodes = (await fetched(source)).data.NodeMetricsMap
    assert set(nodes) == set(LOAD)
    for node in LOAD:
        assert by_kind(nodes[node].metrics) == pytest.approx({
            (CPU, AVERAGE): expected_percent(node, CPU_RULE)[0],
            (CPU, STD): expected_percent(node, CPU_RULE)[1],
            (MEMORY, AVERAGE): expected_percent(node, MEMORY_RULE)[0],
            (MEMORY, STD): expected_percent(node, MEMORY_RULE)[1]}, abs=1e-9)
    assert source.sample_times == dict.fromkeys(LOAD, float(prometheus.newest_sample))


def queries_as_configured() -> dict[str, str]:
    fields = MetricProviderSpec().prometheus_queries
    return {"cpuAverage": fields.cpu_average, "cpuStd": fields.cpu_std,
            "memoryAverage": fields.memory_average, "memoryStd": fields.memory_std}


@pytest.mark.parametrize(("queries", "notes", "kinds"), [
    # Only cpuAverage relabelled (operations.md's old example): the three others' series
    # have no `node` label, so those metrics are missing on every node.
    ({"cpuAverage": RELABEL.format(query="avg_over_time(instance:node_cpu:ratio[{window}])"),
      "nodeLabel": "node"},
     ("cpuStd, memoryAverage, memoryStd returned no node (no series with the label 'node')",),
     [(CPU, AVERAGE)]),
    # A series that does not exist.
    ({"cpuAverage": "avg_over_time(instance:node_cpu_utilisation:rate5m[{window}])"},
     ("cpuAverage returned no node (no series)",), [(CPU, STD), (MEMORY, AVERAGE), (MEMORY, STD)]),
])
async def test_a_query_that_returns_no_node_is_noted(prometheus: PrometheusServer, queries,
                                                     notes, kinds) -> None:
    source = PrometheusSource(spec(prometheus.url, **queries))
    nodes = (await fetched(source)).data.NodeMetricsMap
    assert set(nodes) == set(LOAD)
    assert all([(m.type, m.operator) for m in nodes[n].metrics] == kinds for n in LOAD)
    assert source.notes == notes


async def test_an_error_page_is_one_line(prometheus: PrometheusServer) -> None:
    # Prometheus answers a wrong path with "404 page not found\n": the message went into the
    # readiness line with its newline, which broke the line in two.
    source = PrometheusSource(spec(prometheus.url + "/prom"))
    with pytest.raises(SourceError) as caught:
        await fetched(source)
    assert caught.value.outcome == HTTP_ERROR
    assert str(caught.value) == ("query 'avg_over_time(instance:node_cpu:ratio[15m])': "
                                 "HTTP 404: 404 page not found")


@pytest.mark.parametrize(("queries", "outcome", "words"), [
    ({"cpuAverage": "avg_over_time("}, HTTP_ERROR, "HTTP 400: bad_data"),
    ({"cpuAverage": "scalar(vector(1))"}, INVALID, "returned a scalar, not an instant vector"),
])
async def test_a_failing_query_fails_the_whole_fetch(prometheus: PrometheusServer, queries,
                                                     outcome, words) -> None:
    source = PrometheusSource(spec(prometheus.url, **queries))
    with pytest.raises(SourceError) as caught:
        await fetched(source)
    assert caught.value.outcome == outcome
    assert words in str(caught.value)


async def test_unreachable() -> None:
    source = PrometheusSource(spec(f"http://127.0.0.1:{free_port()}"))
    with pytest.raises(SourceError) as caught:
        await fetched(source)
    assert caught.value.outcome == UNREACHABLE
    assert "ConnectError" in str(caught.value)


def dating(series: str) -> str:
    return f"timestamp({series}) or max_over_time(timestamp({series})[15m:])"


def test_default_queries_are_load_watchers() -> None:
    cpu, memory = "instance:node_cpu:ratio", "instance:node_memory_utilisation:ratio"
    assert queries_of(MetricProviderSpec()) == [
        Query("cpuAverage", CPU, AVERAGE, f"avg_over_time({cpu}[15m])", dating(cpu)),
        Query("cpuStd", CPU, STD, f"stddev_over_time({cpu}[15m])", dating(cpu)),
        Query("memoryAverage", MEMORY, AVERAGE, f"avg_over_time({memory}[15m])", dating(memory)),
        Query("memoryStd", MEMORY, STD, f"stddev_over_time({memory}[15m])", dating(memory)),
    ]
    # load-watcher's default address when none is configured.
    assert PrometheusSource(MetricProviderSpec()).url == "http://prometheus-k8s:9090/api/v1/query"


async def test_request_shape_token_time_and_non_finite_values() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        result = [
            {"metric": {"instance": "n1"}, "value": [1000.0, "0.5"]},
            {"metric": {"instance": "n2"}, "value": [1000.0, "NaN"]},
            {"metric": {"instance": "n3"}, "value": [1000.0, "+Inf"]},
        ]
        return httpx.Response(200, json={"status": "success",
                                         "data": {"resultType": "vector", "result": result}})

    source = PrometheusSource(
        MetricProviderSpec.model_validate({"type": "Prometheus", "address": "https://prom.example:9091",
                                           "token": "s3cret", "insecureSkipVerify": True}),
        clock=lambda: 1_700_000_000.25, transport=httpx.MockTransport(answer))
    snapshot = await fetched(source)
    # The four queries and one dating query per series (cpu, memory).
    assert len(seen) == 6
    for request in seen:
        assert request.url.path == "/api/v1/query"
        assert request.headers["authorization"] == "Bearer s3cret"
        assert request.url.params["time"] == "1700000000.250"
    queries = queries_of(MetricProviderSpec())
    assert {r.url.params["query"] for r in seen} == ({q.promql for q in queries}
                                                      | {q.dating for q in queries})
    # NaN and infinite values are left out: those nodes have no metric.
    assert set(snapshot.data.NodeMetricsMap) == {"n1"}
    assert [m.value for m in snapshot.data.NodeMetricsMap["n1"].metrics] == [50.0] * 4
    assert snapshot.timestamp == 1_700_000_000
    assert json.loads(json.dumps(snapshot.window.end)) == 1_700_000_000


async def test_error_reply_with_a_200_is_invalid() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text="<html>login</html>")

    source = PrometheusSource(spec("http://prom.example"), transport=httpx.MockTransport(answer))
    with pytest.raises(SourceError) as caught:
        await fetched(source)
    assert caught.value.outcome == INVALID
    assert "not a Prometheus API reply" in str(caught.value)


async def test_a_dating_query_that_fails_is_a_note_not_a_failure() -> None:
    # A Prometheus look-alike without subqueries: the node is still scored, dated at the read.
    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.params["query"].startswith("timestamp("):
            return httpx.Response(400, json={"status": "error", "errorType": "bad_data",
                                             "error": "subqueries\nnot supported"})
        return httpx.Response(200, json={"status": "success", "data": {
            "resultType": "vector",
            "result": [{"metric": {"instance": "n1"}, "value": [1000.0, "0.5"]}]}})

    source = PrometheusSource(spec("http://prom.example"), clock=lambda: 1_700_000_000.0,
                              transport=httpx.MockTransport(answer))
    snapshot = await fetched(source)
    assert [m.value for m in snapshot.data.NodeMetricsMap["n1"].metrics] == [50.0] * 4
    assert source.sample_times == {"n1": 1_700_000_000.0}
    cpu, memory = "instance:node_cpu:ratio", "instance:node_memory_utilisation:ratio"
    assert source.notes == tuple(
        f"{keys} not dated by their newest sample, dated at the read instead: query "
        f"{dating(series)!r}: HTTP 400: bad_data: subqueries not supported"
        for keys, series in (("cpuAverage, cpuStd", cpu), ("memoryAverage, memoryStd", memory)))


async def test_an_html_error_body_is_one_line() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(502, text="<html>\n  <body>Bad   gateway</body>\n</html>\n")

    source = PrometheusSource(spec("http://prom.example"), transport=httpx.MockTransport(answer))
    with pytest.raises(SourceError) as caught:
        await fetched(source)
    assert str(caught.value).endswith(": HTTP 502: <html> <body>Bad gateway</body> </html>")
