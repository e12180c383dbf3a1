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
over no samples), are left out: that node simply has no such metric. A query that names no
node at all is said (`notes`: "cpuStd returned no node (no series with the label 'node')"),
as that metric is then missing everywhere.

Dating (the extender's addition; load-watcher dates every fetch now): besides, each distinct
series the queries average is dated by one more instant query (`promdating`), and a node's
data is as old as its newest sample (`sample_times`), so a node whose exporter stopped goes
stale `staleAfterSeconds` after its last sample, not when its averages leave the window. A
query whose series are not known (not `<fn>_over_time(<selector>[<range>])`, bare or in
`label_replace`) counts as sampled at the read. A dating query that fails does not fail the
fetch: those metrics are dated at the read, and a note says so.

`metricProvider.token` is sent as `Authorization: Bearer <token>`; `insecureSkipVerify`
turns off certificate verification for an `https://` address.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from typing import NamedTuple

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
from extender.state.loadmetrics.promdating import dating_query
from extender.state.loadmetrics.source import (
    WINDOW,
    SourceError,
    SourceHttpError,
    SourceInvalid,
    current_window,
    http_failure,
    one_line,
    prometheus_address,
)

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


class Query(NamedTuple):
    """One configured query."""

    key: str            # its `prometheusQueries` field: cpuAverage, cpuStd, …
    type: str           # CPU or Memory
    operator: str       # AVG or STD
    promql: str         # `{window}` filled in
    dating: str | None  # the query dating its series (`promdating`); None: dated at the read


def queries_of(spec: MetricProviderSpec, window: str = WINDOW) -> list[Query]:
    """The configured queries, `{window}` filled in (an empty one is not run)."""
    q = spec.prometheus_queries
    found = []
    for key, kind, operator, text in (("cpuAverage", CPU, AVERAGE, q.cpu_average),
                                      ("cpuStd", CPU, STD, q.cpu_std),
                                      ("memoryAverage", MEMORY, AVERAGE, q.memory_average),
                                      ("memoryStd", MEMORY, STD, q.memory_std)):
        if text.strip():
            promql = text.replace("{window}", window)
            found.append(Query(key, kind, operator, promql, dating_query(promql)))
    return found


class PrometheusSource:
    kind = "prometheus"
    dated = False

    def __init__(self, spec: MetricProviderSpec, *, timeout: float = 10.0,
                 clock: Callable[[], float] = time.time,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.address = prometheus_address(spec.address)
        self.url = self.address + "/api/v1/query"
        self.description = f"Prometheus at {self.address}"
        self.queries = queries_of(spec)
        #: The distinct dating queries (cpuAverage and cpuStd read the same series).
        self.datings = list(dict.fromkeys(q.dating for q in self.queries if q.dating))
        self.node_label = spec.prometheus_queries.node_label
        self.clock = clock
        self.sample_times: dict[str, float] = {}
        self.notes: tuple[str, ...] = ()
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
            # A proxy's or a wrong path's body may be a page of HTML: its start, on one line.
            detail = (f"{reply.errorType}: {reply.error}" if reply is not None and reply.error
                      else one_line(resp.content[:400].decode("utf-8", "replace"))[:200])
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

    def values(self, series: list[_Series]) -> list[tuple[str, float]]:
        """(node, finite value) of each series naming a node."""
        found = []
        for one in series:
            node = one.metric.get(self.node_label)
            if not node or one.value is None:
                continue
            try:
                value = float(one.value[1])
            except ValueError:
                continue
            if math.isfinite(value):
                found.append((node, value))
        return found

    def gap(self, series: list[_Series]) -> str:
        """Why an answer named no node."""
        if not series:
            return "no series"
        if not any(one.metric.get(self.node_label) for one in series):
            return f"no series with the label {self.node_label!r}"
        return "no finite value"

    def dated_by(self, answers: list[list[_Series] | BaseException]
                 ) -> tuple[dict[str, dict[str, float]], list[str]]:
        """The dating queries' answers: dating query -> node -> time of its newest sample, and
        a note for each that failed."""
        sampled: dict[str, dict[str, float]] = {}
        notes: list[str] = []
        for dating, answer in zip(self.datings, answers, strict=True):
            if isinstance(answer, SourceError):
                # An old Prometheus or a look-alike without subqueries: still scored, but as
                # fresh as the read (as load-watcher does), and said.
                keys = ", ".join(q.key for q in self.queries if q.dating == dating)
                notes.append(f"{keys} not dated by their newest sample, dated at the read "
                             f"instead: {answer}")
                continue
            if isinstance(answer, BaseException):
                raise answer
            times = sampled[dating] = {}
            for node, at in self.values(answer):
                times[node] = max(at, times.get(node, at))
        return sampled, notes

    async def fetch(self) -> WatcherMetrics:
        now = self.clock()
        answers = await asyncio.gather(*(self.query(q.promql, now) for q in self.queries),
                                       *(self.query(d, now) for d in self.datings),
                                       return_exceptions=True)
        values = answers[:len(self.queries)]
        for answer in values:
            if isinstance(answer, BaseException):
                raise answer
        sampled, undated = self.dated_by(answers[len(self.queries):])
        nodes: dict[str, NodeMetrics] = {}
        dates: dict[str, float] = {}
        gaps: dict[str, list[str]] = {}
        for q, series in zip(self.queries, values, strict=True):
            assert not isinstance(series, BaseException)
            found = self.values(series)
            if not found:
                gaps.setdefault(self.gap(series), []).append(q.key)
            times = sampled.get(q.dating or "", {})
            for node, ratio in found:
                nodes.setdefault(node, NodeMetrics()).metrics.append(Metric(
                    name=q.promql, type=q.type, operator=q.operator, rollup=WINDOW,
                    value=ratio * 100))
                # A node's data is as old as its newest sample; a query that cannot be dated
                # counts as sampled now. Never in the future (Prometheus' clock is not ours).
                at = min(times.get(node, now), now)
                dates[node] = max(at, dates.get(node, at))
        self.sample_times = dates
        self.notes = (*(f"{', '.join(keys)} returned no node ({why})"
                        for why, keys in gaps.items()), *undated)
        return WatcherMetrics(timestamp=int(now), window=current_window(now), source=SOURCE_NAME,
                              data=Data(NodeMetricsMap=nodes))

    async def aclose(self) -> None:
        await self._http.aclose()
