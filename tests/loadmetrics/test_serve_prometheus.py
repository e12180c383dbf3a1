"""End to end against a real Prometheus: `extender serve --snapshot … --policy <TargetLoadPacking
reading Prometheus>` as a user runs it. Its prioritize answers follow the backfilled load;
with Prometheus stopped every verb keeps answering, the scores fall back to MinNodeScore once
the data is stale, and `/metrics` and `/readyz?verbose` say so. The backfilled series end at
`newest_sample`, as a stopped exporter's do: the data is as old as that sample."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.loadmetrics.cluster import (
    NODES,
    metric,
    pending_pod,
    prioritize_body,
    prometheus_args,
    target_load_packing,
    trimaran_policy,
    wire_score,
    write_cluster,
    write_policy,
)
from tests.loadmetrics.prom import CPU_RULE, LOAD, PrometheusServer, expected_percent
from tests.polling import free_port, stop_process, until

ROOT = Path(__file__).resolve().parents[2]


def expected_scores() -> dict[str, int]:
    """TargetLoadPacking's score of each node from the backfilled cpu average."""
    return {name: target_load_packing(expected_percent(name, CPU_RULE)[0] if name in LOAD
                                      else None) for name in NODES}


@contextmanager
def extender(tmp_path: Path, policy: dict) -> Iterator[httpx.Client]:
    cluster = write_cluster(tmp_path / "cluster.json")
    policy_file = write_policy(tmp_path / "policy.json", policy)
    port = free_port()
    log_path = tmp_path / "extender.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "extender", "serve", "--snapshot", str(cluster),
             "--policy", str(policy_file), "--port", str(port)],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10)

    def listening() -> bool:
        assert proc.poll() is None, log_path.read_text()
        try:
            return client.get("/healthz").status_code == 200
        except httpx.TransportError:
            return False

    try:
        until(listening, "the extender to listen", 30)
        yield client
    finally:
        client.close()
        stop_process(proc)


def prioritize(client: httpx.Client) -> dict[str, int]:
    reply = client.post("/prioritize", json=prioritize_body())
    assert reply.status_code == 200, reply.text
    return {entry["Host"]: entry["Score"] for entry in reply.json()}


def raw_scores(client: httpx.Client) -> dict[str, int]:
    """TargetLoadPacking's own 0..100 score per node, from /explain."""
    reply = client.post("/explain", json=prioritize_body())
    assert reply.status_code == 200, reply.text
    nodes = reply.json()["nodes"]
    return {name: next(s["raw"] for s in nodes[name]["scores"] if s["plugin"] == "TargetLoadPacking")
            for name in NODES}


def loaded(client: httpx.Client) -> bool:
    return metric(client.get("/metrics").text, "extender_load_metrics_nodes") == len(LOAD)


@pytest.mark.slow
def test_prioritize_follows_the_backfilled_load(prometheus: PrometheusServer,
                                                tmp_path: Path) -> None:
    with extender(tmp_path, trimaran_policy(prometheus_args(prometheus.url))) as client:
        until(lambda: loaded(client), "the first fetch from Prometheus")
        expected = expected_scores()
        # node-a 12.5 % (+25 % for the pod: 37.5 %, under the 40 % target) → 96; node-b
        # 25 % → 50 % → 33; node-c 62.5 % → 87.5 % → 8; node-d has no series → 0.
        assert expected == {"node-a": 96, "node-b": 33, "node-c": 8, "node-d": 0}
        assert raw_scores(client) == expected
        assert prioritize(client) == {name: wire_score(s) for name, s in expected.items()}
        before = time.time()
        text = client.get("/metrics").text
        after = time.time()
        assert metric(text, "extender_load_metrics_fetch_total", source="prometheus",
                      outcome="ok") >= 1
        assert metric(text, "extender_load_metrics_nodes_without_data") == 1  # node-d
        # The data's age is that of its newest sample, not of the read (it was ~0 then).
        age = metric(text, "extender_load_metrics_age_seconds", source="prometheus")
        assert before - prometheus.newest_sample <= age <= after - prometheus.newest_sample
        ready = client.get("/readyz?verbose")
        assert ready.status_code == 200
        assert ("[!]load-metrics warning: 1 of 4 node(s) without fresh metrics "
                "(scored 0 by TargetLoadPacking)") in ready.text
        assert ready.text.endswith("readyz check passed\n")


@pytest.mark.slow
def test_samples_older_than_stale_after_are_not_scored(prometheus: PrometheusServer,
                                                       tmp_path: Path) -> None:
    # Prometheus answers, and its 15-minute averages still hold the series, but their newest
    # sample is more than staleAfterSeconds old (an exporter that stopped): scored 0, said.
    stale_after = 10
    assert time.time() - prometheus.newest_sample > stale_after  # 15 s when backfilled
    policy = trimaran_policy(prometheus_args(prometheus.url, refresh=0.5, stale=stale_after))
    with extender(tmp_path, policy) as client:
        def fetched() -> bool:
            return (metric(client.get("/metrics").text, "extender_load_metrics_fetch_total",
                           source="prometheus", outcome="ok") or 0) >= 2

        until(fetched, "two fetches from Prometheus")
        assert set(raw_scores(client).values()) == {0}
        text = client.get("/metrics").text
        assert metric(text, "extender_load_metrics_nodes") == 0
        assert metric(text, "extender_load_metrics_nodes_without_data") == len(NODES)
        assert metric(text, "extender_load_metrics_age_seconds",
                      source="prometheus") > stale_after
        assert ("[!]load-metrics warning: 4 of 4 node(s) without fresh metrics "
                "(scored 0 by TargetLoadPacking)") in client.get("/readyz?verbose").text


@pytest.mark.slow
def test_a_cpu_query_without_series(prometheus: PrometheusServer, tmp_path: Path) -> None:
    # cpuAverage names a series that does not exist, the memory queries are the defaults:
    # every node has memory metrics, and TargetLoadPacking scores every node 0. Readiness
    # and the gauge said 1 node without data (node-d, which has nothing).
    args = prometheus_args(prometheus.url, refresh=0.5)
    args["metricProvider"]["prometheusQueries"] = {
        "cpuAverage": "avg_over_time(instance:node_cpu_utilisation:rate5m[{window}])"}
    with extender(tmp_path, trimaran_policy(args)) as client:
        until(lambda: (metric(client.get("/metrics").text, "extender_load_metrics_fetch_total",
                              source="prometheus", outcome="ok") or 0) >= 1,
              "a fetch from Prometheus")
        assert set(raw_scores(client).values()) == {0}
        text = client.get("/metrics").text
        assert metric(text, "extender_load_metrics_nodes_without_data") == len(NODES)
        assert metric(text, "extender_load_metrics_nodes") == 0
        lines = client.get("/readyz?verbose").text.splitlines()
        assert lines[2] == (
            f"[!]load-metrics warning: Prometheus at {prometheus.url}: cpuAverage returned no "
            "node (no series); 4 of 4 node(s) without a fresh CPU average (scored 0 by "
            "TargetLoadPacking; 3 of them have other metrics)")
        assert lines[3] == "readyz check passed"


@pytest.mark.slow
def test_prometheus_stopped_mid_run(tmp_path: Path) -> None:
    # Newest sample at the backfill: fresh for staleAfterSeconds from then, which must outlast
    # Prometheus' and the extender's start and the first fetch (5-7 s here, twice that in the
    # VM's slow spells) and the wait for a failed fetch.
    prometheus = PrometheusServer(tmp_path / "prometheus", newest_age=0).start()
    stale_after = 20.0
    try:
        policy = trimaran_policy(prometheus_args(prometheus.url, refresh=0.5, stale=stale_after))
        with extender(tmp_path, policy) as client:
            until(lambda: loaded(client), "the first fetch from Prometheus")
            before = prioritize(client)
            assert before == {name: wire_score(s) for name, s in expected_scores().items()}

            prometheus.stop()

            def failing() -> bool:
                return (metric(client.get("/metrics").text, "extender_load_metrics_fetch_total",
                               source="prometheus", outcome="unreachable") or 0) >= 1

            until(failing, "a failed fetch to be counted")
            # The source is down but the data is younger than staleAfterSeconds: kept.
            age = metric(client.get("/metrics").text, "extender_load_metrics_age_seconds",
                         source="prometheus")
            assert age is not None and age < stale_after - 1
            assert prioritize(client) == before
            ready = client.get("/readyz?verbose")
            assert ready.status_code == 200
            assert "[!]load-metrics warning: Prometheus at " in ready.text
            assert "failed fetch(es)" in ready.text and "ConnectError" in ready.text

            # Once stale, every node scores MinNodeScore, and every verb still answers 200.
            until(lambda: set(prioritize(client).values()) == {0},
                  "the scores to fall back", timeout=stale_after + 15)
            assert set(raw_scores(client).values()) == {0}
            filtered = client.post("/filter", json=prioritize_body())
            assert filtered.status_code == 200 and filtered.json()["Error"] == ""
            assert sorted(filtered.json()["NodeNames"]) == list(NODES)
            preempt = client.post("/preempt", json={
                "Pod": pending_pod(), "NodeNameToVictims": None,
                "NodeNameToMetaVictims": {"node-a": {"Pods": [], "NumPDBViolations": 0}}})
            assert preempt.status_code == 200, preempt.text
            bound = client.post("/bind", json={"PodName": "web-1", "PodNamespace": "default",
                                               "PodUID": "uid-web-1", "Node": "node-a"})
            assert bound.status_code == 200 and bound.json() == {"Error": ""}
            assert client.get("/readyz").status_code == 200
            text = client.get("/metrics").text
            assert metric(text, "extender_load_metrics_nodes_without_data") == len(NODES)
            assert metric(text, "extender_load_metrics_nodes") == 0
            assert metric(text, "extender_load_metrics_fetch_total", source="prometheus",
                          outcome="unreachable") >= 2
            assert metric(text, "extender_load_metrics_age_seconds",
                          source="prometheus") > stale_after
            assert 'extender_requests_total{outcome="ok",verb="prioritize"}' in text
            assert "4 of 4 node(s) without fresh metrics" in client.get("/readyz?verbose").text
    finally:
        prometheus.stop()
