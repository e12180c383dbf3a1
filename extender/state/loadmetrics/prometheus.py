"""Prometheus' HTTP API: instant queries of the configured PromQL, one metric per node and query.

As load-watcher's Prometheus provider (paypal/load-watcher
`pkg/watcher/internal/metricsprovider/prometheus.go`): for each of CPU and Memory, the
average and the standard deviation over the window (15m) of a per-node utilisation ratio,
read with `GET /api/v1/query` at the current time; each result series is a node, named by
its `instance` label; its value (a ratio, 0..1) times 100 is the metric's value in percent,
with operator `AVG` or `STD`, rollup `15m`. Defaults are load-watcher's queries:

    cpuAverage:    avg_over_time(instance:node_cpu:ratio[{window}])
    cpuStd:        stddev_over_time(instance:node_cpu:ratio[{window}])
    memoryAverage: avg_over_time(instance:node_memory_utilisation:ratio[{window}])
    memoryStd:     stddev_over_time(instance:node_memory_utilisation:ratio[{window}])

(`instance:node_cpu:ratio` and `instance:node_memory_utilisation:ratio` are the recording
rules of kube-prometheus / the node-exporter mixin.) `metricProvider.prometheusQueries`
replaces any of them (`{window}` becomes `15m`; an empty query is not run) and `nodeLabel`
the label that names the node. The four queries run concurrently; any failure fails the
whole fetch (load-watcher discards a fetch with an error too), so a half-answered refresh
never replaces good data. Series without the node label, and NaN or infinite values (a ratio
over no samples), are left out: that node simply has no such metric.

`metricProvider.token` is sent as `Authorization: Bearer <token>`; `insecureSkipVerify`
turns off certificate verification for an `https://` address.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable

import httpx
import msgspec

from extender.engine.args import MetricProviderSpec
from extender.model.loadmetrics import (
    AVERAGE,
    CPU,
    MEMORY,
    STD,
    Data,
    Metric,
    NodeMetrics,
    WatcherMetrics,
)
from extender.state.loadmetrics.source import (
    WINDOW,
    SourceHttpError,
    SourceInvalid,
    current_window,
    http_failure,
)

#: load-watcher's `DefaultPromAddress`, used when `metricProvider.address` is empty.
DEFAULT_ADDRESS = "http://prometheus-k8s:9090"
#: load-watcher's `PromClientName`: the snapshot's `source`.
SOURCE_NAME = "Prometheus"
USER_AGENT = "extender/0.1"


class _Series(msgspec.Struct):
    metric: dict[str, str] = msgspec.field(default_factory=dict)
    value: tuple[float, str] | None = None


class _Data(msgspec.Struct):
    resultType: str = ""
    result: msgspec.Raw = msgspec.Raw(b"null")


class _Reply(msgspec.Struct):
    status: str = ""
    data: _Data | None = None
    errorType: str = ""
    error: str = ""


_reply = msgspec.json.Decoder(_Reply)
_vector = msgspec.json.Decoder(list[_Series])


def queries_of(spec: MetricProviderSpec, window: str = WINDOW) -> list[tuple[str, str, str]]:
    """(type, operator, PromQL) for each configured query, `{window}` filled in."""
    q = spec.prometheus_queries
    return [(kind, operator, text.replace("{window}", window))
            for kind, operator, text in ((CPU, AVERAGE, q.cpu_average), (CPU, STD, q.cpu_std),
                                         (MEMORY, AVERAGE, q.memory_average),
                                         (MEMORY, STD, q.memory_std))
            if text.strip()]


class PrometheusSource:
    kind = "prometheus"
    dated = False

    def __init__(self, spec: MetricProviderSpec, *, timeout: float = 10.0,
                 clock: Callable[[], float] = time.time,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.address = (spec.address or DEFAULT_ADDRESS).rstrip("/")
        self.url = self.address + "/api/v1/query"
        self.description = f"Prometheus at {self.address}"
        self.queries = queries_of(spec)
        self.node_label = spec.prometheus_queries.node_label
        self.clock = clock
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        if spec.token:
            headers["Authorization"] = f"Bearer {spec.token}"
        self._http = httpx.AsyncClient(timeout=timeout, transport=transport, headers=headers,
                                       verify=not spec.insecure_skip_verify)

    async def query(self, promql: str, at: float) -> list[_Series]:
        """One instant query; the result series (an instant vector is required)."""
        try:
            resp = await self._http.get(self.url, params={"query": promql, "time": f"{at:.3f}"})
        except httpx.HTTPError as exc:
            raise http_failure(f"query {promql!r}", exc) from None
        try:
            reply = _reply.decode(resp.content)
        except (msgspec.DecodeError, msgspec.ValidationError):
            reply = None
        if resp.status_code != 200 or reply is None or reply.status != "success":
            detail = (f"{reply.errorType}: {reply.error}" if reply is not None and reply.error
                      else resp.content[:200].decode("utf-8", "replace"))
            if resp.status_code == 200:
                raise SourceInvalid(f"query {promql!r}: not a Prometheus API reply: {detail}")
            raise SourceHttpError(f"query {promql!r}: HTTP {resp.status_code}: {detail}",
                                  resp.status_code)
        if reply.data is None or reply.data.resultType != "vector":
            kind = reply.data.resultType if reply.data is not None else "nothing"
            raise SourceInvalid(f"query {promql!r} returned a {kind}, not an instant vector")
        try:
            return _vector.decode(reply.data.result)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise SourceInvalid(f"query {promql!r}: undecodable vector: {exc}") from None

    async def fetch(self) -> WatcherMetrics:
        now = self.clock()
        answers = await asyncio.gather(*(self.query(promql, now) for _, _, promql in self.queries),
                                       return_exceptions=True)
        for answer in answers:
            if isinstance(answer, BaseException):
                raise answer
        nodes: dict[str, NodeMetrics] = {}
        for (kind, operator, promql), series in zip(self.queries, answers, strict=True):
            assert not isinstance(series, BaseException)
            for one in series:
                node = one.metric.get(self.node_label)
                if not node or one.value is None:
                    continue
                try:
                    ratio = float(one.value[1])
                except ValueError:
                    continue
                if not math.isfinite(ratio):
                    continue
                nodes.setdefault(node, NodeMetrics()).metrics.append(Metric(
                    name=promql, type=kind, operator=operator, rollup=WINDOW, value=ratio * 100))
        return WatcherMetrics(timestamp=int(now), window=current_window(now), source=SOURCE_NAME,
                              data=Data(NodeMetricsMap=nodes))

    async def aclose(self) -> None:
        await self._http.aclose()
