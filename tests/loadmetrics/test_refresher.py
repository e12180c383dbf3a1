"""The refresher: background fetches, per-node staleness, failures kept off the request path,
state changes through the gate, readiness detail and fetch accounting (a scripted source and
a fake clock)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable

import pytest

from extender.engine.cluster import ClusterState
from extender.engine.plugins.trimaran.store import TrimaranStore
from extender.model import k8s
from extender.model.loadmetrics import (
    AVERAGE,
    CPU,
    MEMORY,
    STD,
    Data,
    Metric,
    NodeMetrics,
    WatcherMetrics,
    Window,
)
from extender.state.gate import gate_for
from extender.state.loadmetrics.refresher import LoadMetricsRefresher
from extender.state.loadmetrics.source import SourceHttpError, SourceUnreachable

TRIMARAN = ("TargetLoadPacking", "LoadVariationRiskBalancing", "LowRiskOverCommitment")

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def snapshot(at: float, **cpu: float) -> WatcherMetrics:
    return WatcherMetrics(
        timestamp=int(at), window=Window("15m", int(at) - 900, int(at)), source="Test",
        data=Data(NodeMetricsMap={name: NodeMetrics(metrics=[
            Metric(type=CPU, operator=AVERAGE, value=value)]) for name, value in cpu.items()}))


class ScriptedSource:
    """Each fetch runs the next step: a WatcherMetrics to return, an exception to raise, or
    a callable (async or not) producing either. `sample_times` and `notes` are what a test
    sets them to."""

    kind = "test"
    description = "test source at nowhere"

    def __init__(self, *steps: object, dated: bool = False) -> None:
        self.steps = list(steps)
        self.dated = dated
        self.sample_times: dict[str, float] = {}
        self.notes: tuple[str, ...] = ()
        self.fetches = 0
        self.closed = False

    async def fetch(self) -> WatcherMetrics:
        self.fetches += 1
        step = self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]
        if callable(step):
            step = step()
            if asyncio.iscoroutine(step):
                step = await step
        if isinstance(step, BaseException):
            raise step
        assert isinstance(step, WatcherMetrics)
        return step

    async def aclose(self) -> None:
        self.closed = True


def cluster(*names: str) -> ClusterState:
    state = ClusterState()
    for name in names:
        state.apply_node(k8s.Node(metadata=k8s.ObjectMeta(name=name)))
    return state


def make(source: ScriptedSource, state: ClusterState, clock: Clock, **kwargs
         ) -> tuple[LoadMetricsRefresher, list[tuple[str, str]]]:
    fetches: list[tuple[str, str]] = []
    refresher = LoadMetricsRefresher(
        source, state, refresh_seconds=30, stale_after_seconds=300, clock=clock,
        on_fetch=lambda kind, outcome, seconds: fetches.append((kind, outcome)),
        plugins=("TargetLoadPacking",), **kwargs)
    return refresher, fetches


def cpu_of(state: ClusterState) -> dict[str, float]:
    assert state.store(TrimaranStore).metrics is not None
    return {name: node.metrics[0].value for name, node in state.store(TrimaranStore).metrics.data.NodeMetricsMap.items()}


async def test_first_fetch_publishes_and_counts_nodes_without_data() -> None:
    clock, state = Clock(), cluster("a", "b", "c")
    refresher, fetches = make(ScriptedSource(snapshot(clock.now, a=10, b=20)), state, clock)
    assert state.store(TrimaranStore).metrics is None
    assert refresher.detail() == "test source at nowhere: no metrics fetched yet; 3 of 3 node(s) " \
                                 "without fresh metrics (scored 0 by TargetLoadPacking)"
    assert await refresher.refresh() is True
    assert cpu_of(state) == {"a": 10, "b": 20}
    assert state.store(TrimaranStore).metrics.window.end == int(clock.now)
    assert fetches == [("test", "ok")]
    status = refresher.status()
    assert (status.nodes, status.nodes_with_data, status.nodes_without_data) == (3, 2, 1)
    assert status.age_seconds == 0
    assert refresher.detail() == ("1 of 3 node(s) without fresh metrics "
                                  "(scored 0 by TargetLoadPacking)")
    state.delete_node("c")
    assert refresher.detail() is None  # every node of the state has data


async def test_source_down_keeps_the_snapshot_until_nodes_go_stale() -> None:
    clock, state = Clock(), cluster("a", "b")
    source = ScriptedSource(snapshot(clock.now, a=10, b=20),
                            SourceUnreachable("GET http://x/watcher: ConnectError: refused"))
    refresher, fetches = make(source, state, clock)
    await refresher.refresh()
    published = state.store(TrimaranStore).metrics
    for _ in range(3):
        clock.now += 30
        assert await refresher.refresh() is False  # never raises
    assert state.store(TrimaranStore).metrics is published  # kept while the source is down
    assert fetches == [("test", "ok")] + [("test", "unreachable")] * 3
    assert refresher.detail() == ("test source at nowhere: 3 failed fetch(es) in 60s: "
                                  "GET http://x/watcher: ConnectError: refused")
    assert refresher.status().age_seconds == 90
    # 300 s after the data, not a moment later: still there; past it: gone.
    clock.now = 1_700_000_000.0 + 300
    refresher.publish()
    assert state.store(TrimaranStore).metrics is published
    clock.now += 0.5
    refresher.publish()
    assert state.store(TrimaranStore).metrics is not None and cpu_of(state) == {}
    assert refresher.status().nodes_without_data == 2
    assert "2 of 2 node(s) without fresh metrics" in (refresher.detail() or "")


async def test_a_node_missing_from_a_later_fetch_ages_on_its_own() -> None:
    clock, state = Clock(), cluster("a", "b")
    t0 = clock.now
    source = ScriptedSource(snapshot(t0, a=10, b=20), lambda: snapshot(clock.now, a=11))
    refresher, _ = make(source, state, clock)
    await refresher.refresh()
    clock.now += 200
    await refresher.refresh()
    assert cpu_of(state) == {"a": 11, "b": 20}        # b's older data is still fresh
    assert state.store(TrimaranStore).metrics.window.end == int(t0 + 200)  # the newest fetch's window
    assert refresher.seconds_to_next_expiry() == 100
    clock.now = t0 + 301
    refresher.publish()
    assert cpu_of(state) == {"a": 11}


async def test_load_watchers_own_timestamp_dates_the_data() -> None:
    clock, state = Clock(), cluster("a")
    # A watcher serving a cache fetched 400 s ago: already stale when we read it.
    source = ScriptedSource(snapshot(clock.now - 400, a=10), dated=True)
    refresher, _ = make(source, state, clock)
    await refresher.refresh()
    assert cpu_of(state) == {}
    assert refresher.status().age_seconds == 400
    # A timestamp from the future (clock skew) counts as now.
    source.steps = [snapshot(clock.now + 50, a=12)]
    await refresher.refresh()
    assert cpu_of(state) == {"a": 12} and refresher.status().age_seconds == 0


async def test_changes_wait_for_an_off_loop_reader() -> None:
    clock, state = Clock(), cluster("a")
    refresher, _ = make(ScriptedSource(snapshot(clock.now, a=10)), state, clock)
    gate = gate_for(state)
    gate.enter()  # a large request reads the state in a worker thread
    await refresher.refresh()
    assert state.store(TrimaranStore).metrics is None and gate.pending == 1
    gate.leave()
    assert cpu_of(state) == {"a": 10}


async def test_timeouts_errors_and_bugs_are_counted_not_raised() -> None:
    clock, state = Clock(), cluster("a")

    async def hang() -> WatcherMetrics:
        await asyncio.sleep(10)
        raise AssertionError("unreachable")

    source = ScriptedSource(hang, SourceHttpError("HTTP 503", 503), KeyError("bug"),
                            snapshot(clock.now, a=1))
    refresher, fetches = make(source, state, clock, fetch_timeout=0.05)
    assert await refresher.refresh() is False
    # The source is named once, in front (the message used to name it a second time).
    assert refresher.detail() == ("test source at nowhere: 1 failed fetch(es) in 0s: no answer "
                                  "within 0.05s; 1 of 1 node(s) without fresh metrics (scored 0 "
                                  "by TargetLoadPacking)")
    assert [await refresher.refresh() for _ in range(3)] == [False, False, True]
    assert [outcome for _, outcome in fetches] == ["timeout", "http_error", "error", "ok"]
    assert refresher.consecutive_failures == 0 and refresher.last_error == ""


async def test_runs_in_the_background_and_stops() -> None:
    state = cluster("a")
    values = iter(range(1000))
    source = ScriptedSource(lambda: snapshot(0, a=float(next(values))))
    refresher = LoadMetricsRefresher(source, state, refresh_seconds=0.02, stale_after_seconds=60)
    await refresher.start()
    await refresher.start()  # idempotent
    await wait_for(lambda: source.fetches >= 3)
    assert cpu_of(state)["a"] >= 2
    await refresher.stop()
    seen = source.fetches
    await asyncio.sleep(0.1)
    assert source.fetches == seen and source.closed


async def test_the_background_task_expires_nodes_between_fetches() -> None:
    state = cluster("a")
    refresher = LoadMetricsRefresher(
        ScriptedSource(snapshot(0, a=5), SourceUnreachable("down")), state,
        refresh_seconds=60, stale_after_seconds=0.2)
    await refresher.start()
    try:
        await wait_for(lambda: state.store(TrimaranStore).metrics is not None)
        assert cpu_of(state) == {"a": 5}
        # The next fetch is a minute away: the node still goes stale on time.
        await wait_for(lambda: cpu_of(state) == {}, timeout=2)
    finally:
        await refresher.stop()
    assert math.isfinite(refresher.status().age_seconds)


async def wait_for(check: Callable[[], bool], timeout: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.01)


async def test_a_failed_fetch_says_what_is_kept(caplog: pytest.LogCaptureFixture) -> None:
    # "keeping the last snapshot until its nodes are 300s old" was said with no snapshot yet,
    # and again after every node's data had expired.
    import logging

    clock, state = Clock(), cluster("a")
    down = SourceUnreachable("GET http://x/watcher: ConnectError: refused")
    refresher, _ = make(ScriptedSource(down), state, clock)
    with caplog.at_level(logging.WARNING):
        await refresher.refresh()
    assert "no data yet: every node scored as having none: GET http://x" in caplog.text
    caplog.clear()
    refresher, _ = make(ScriptedSource(snapshot(clock.now, a=10), down), state, clock)
    await refresher.refresh()
    with caplog.at_level(logging.WARNING):
        clock.now += 30
        await refresher.refresh()
    assert "keeping the nodes' last data until it is 300s old" in caplog.text
    caplog.clear()
    clock.now += 301
    refresher.publish()
    refresher._last_failure_log = -math.inf  # the 5-minute repeat
    with caplog.at_level(logging.WARNING):
        await refresher.refresh()
    assert "every node's data has expired: every node scored as having none" in caplog.text


async def test_a_node_is_dated_by_its_newest_sample(caplog: pytest.LogCaptureFixture) -> None:
    # Prometheus still averages a dead exporter's samples over its window: the node is as old
    # as its newest sample (`sample_times`), not as the fetch.
    import logging

    clock, state = Clock(), cluster("a", "b")
    t0 = clock.now
    source = ScriptedSource(lambda: snapshot(clock.now, a=10, b=20))
    source.sample_times = {"a": t0 - 100, "b": t0 - 400}
    refresher, _ = make(source, state, clock)
    with caplog.at_level(logging.INFO):
        await refresher.refresh()
    assert cpu_of(state) == {"a": 10}  # b's newest sample is older than staleAfterSeconds
    assert refresher.status().age_seconds == 100  # the fetch's newest data
    assert refresher.seconds_to_next_expiry() == 200
    assert refresher.detail() == ("1 of 2 node(s) without fresh metrics "
                                  "(scored 0 by TargetLoadPacking)")
    assert caplog.text.count("scored as having none") == 1
    assert "1 node(s) without data for 300s are scored as having none (b)" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.INFO):
        clock.now += 30
        await refresher.refresh()  # b again, as old: not said at every fetch
        clock.now = t0 + 200.5     # a's newest sample is now 300.5 s old
        refresher.publish()
        clock.now += 30
        await refresher.refresh()  # a again, as old: not said again either
    assert cpu_of(state) == {}
    assert "1 node(s) without data for 300s are scored as having none (a)" in caplog.text
    assert caplog.text.count("scored as having none") == 1
    assert refresher.status().age_seconds == 330.5
    source.sample_times = {"a": t0 - 100, "b": clock.now - 5}  # b's exporter is back
    await refresher.refresh()
    assert cpu_of(state) == {"b": 20} and refresher.status().age_seconds == 5


def node_with(*metrics: tuple[str, str, float]) -> NodeMetrics:
    return NodeMetrics(metrics=[Metric(type=kind, operator=op, value=value)
                                for kind, op, value in metrics])


#: a: a CPU average; b: memory only; c: a CPU deviation only; e: no metric; f: another type;
#: d is not reported.
MIXED = WatcherMetrics(timestamp=1_700_000_000, window=Window("15m", 1_699_999_100, 1_700_000_000),
                       source="Test", data=Data(NodeMetricsMap={
                           "a": node_with((CPU, AVERAGE, 20)),
                           "b": node_with((MEMORY, AVERAGE, 30), (MEMORY, STD, 5)),
                           "c": node_with((CPU, STD, 5)),
                           "e": node_with(),
                           "f": node_with(("Bandwidth", AVERAGE, 10))}))


@pytest.mark.parametrize(("plugins", "without", "lines"), [
    (("TargetLoadPacking",), 5,
     ["5 of 6 node(s) without a fresh CPU average (scored 0 by TargetLoadPacking; 3 of them "
      "have other metrics)"]),
    (("LoadVariationRiskBalancing",), 3,
     ["3 of 6 node(s) without a fresh CPU or Memory metric (scored 0 by "
      "LoadVariationRiskBalancing; 1 of them have other metrics)"]),
    (("LowRiskOverCommitment",), 2,
     ["2 of 6 node(s) without fresh metrics (scored 0 by LowRiskOverCommitment)"]),
    (TRIMARAN, 5,
     ["5 of 6 node(s) without a fresh CPU average (scored 0 by TargetLoadPacking; 3 of them "
      "have other metrics)",
      "3 of 6 node(s) without a fresh CPU or Memory metric (scored 0 by "
      "LoadVariationRiskBalancing; 1 of them have other metrics)",
      "2 of 6 node(s) without fresh metrics (scored 0 by LowRiskOverCommitment)"]),
    (("LoadVariationRiskBalancing", "LowRiskOverCommitment"), 3,
     ["3 of 6 node(s) without a fresh CPU or Memory metric (scored 0 by "
      "LoadVariationRiskBalancing; 1 of them have other metrics)",
      "2 of 6 node(s) without fresh metrics (scored 0 by LowRiskOverCommitment)"]),
])
async def test_without_data_is_without_what_the_plugins_read(plugins, without, lines) -> None:
    # A node with memory metrics but no CPU average counted as "with data" while
    # TargetLoadPacking scored it 0 (test_needs.py checks these against the plugins' scores).
    clock, state = Clock(), cluster(*"abcdef")
    refresher = LoadMetricsRefresher(ScriptedSource(MIXED), state, clock=clock, plugins=plugins)
    await refresher.refresh()
    status = refresher.status()
    assert (status.nodes_with_data, status.nodes_without_data) == (6 - without, without)
    assert refresher.detail() == "; ".join(lines)


async def test_plugins_scoring_the_same_nodes_0_share_a_clause() -> None:
    clock, state = Clock(), cluster("a", "b", "c")
    refresher = LoadMetricsRefresher(ScriptedSource(snapshot(clock.now, a=10)), state,
                                     clock=clock, plugins=TRIMARAN)
    await refresher.refresh()
    assert refresher.detail() == ("2 of 3 node(s) without fresh metrics (scored 0 by "
                                  "TargetLoadPacking, LoadVariationRiskBalancing, "
                                  "LowRiskOverCommitment)")


async def test_names_that_are_no_node_are_said() -> None:
    # e.g. FQDNs where the cluster's nodes have short names.
    clock, state = Clock(), cluster("a", "b")
    source = ScriptedSource(snapshot(clock.now, **{"a.example.com": 10, "b.example.com": 20}))
    refresher, _ = make(source, state, clock)
    await refresher.refresh()
    assert refresher.detail() == ("test source at nowhere: the last fetch reported 2 node "
                                  "name(s), none a node of the cluster (e.g. 'a.example.com'); "
                                  "2 of 2 node(s) without fresh metrics (scored 0 by "
                                  "TargetLoadPacking)")


async def test_the_sources_notes_are_shown_and_logged_once(
        caplog: pytest.LogCaptureFixture) -> None:
    import logging

    clock, state = Clock(), cluster("a")
    source = ScriptedSource(lambda: snapshot(clock.now, a=10))
    source.notes = ("cpuStd, memoryAverage returned no node (no series with the label 'node')",)
    refresher, _ = make(source, state, clock)
    with caplog.at_level(logging.WARNING):
        await refresher.refresh()
        await refresher.refresh()
    assert refresher.detail() == ("test source at nowhere: cpuStd, memoryAverage returned no "
                                  "node (no series with the label 'node')")
    assert caplog.text.count("returned no node") == 1
    assert ("load metrics: test source at nowhere: cpuStd, memoryAverage returned no node "
            "(no series with the label 'node')") in caplog.text
    source.notes = ()
    await refresher.refresh()
    assert refresher.detail() is None


@pytest.mark.parametrize("error", [
    SourceHttpError("query 'up': HTTP 404: 404 page not found\n", 404),
    ValueError("a bug\nover two lines"),
])
async def test_a_failure_is_one_line(error: Exception) -> None:
    clock, state = Clock(), cluster("a")
    refresher, _ = make(ScriptedSource(error), state, clock)
    await refresher.refresh()
    detail = refresher.detail()
    assert detail is not None and "\n" not in detail
    assert detail.endswith(("404 page not found; 1 of 1 node(s) without fresh metrics (scored 0 "
                            "by TargetLoadPacking)", "ValueError: a bug over two lines; 1 of 1 "
                            "node(s) without fresh metrics (scored 0 by TargetLoadPacking)"))
