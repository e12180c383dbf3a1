"""`serve --kubeconfig` with TargetLoadPacking on its default source, metrics.k8s.io, against
the fake API server: capacity from the informers' nodes, readiness lines side by side."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from extender import serve
from extender.api.app import create_app
from extender.cli import build_parser
from tests.kube.fake_apiserver import FakeApiServer, Fault
from tests.loadmetrics.cluster import (
    NODES,
    metric,
    node,
    prioritize_body,
    target_load_packing,
    trimaran_policy,
    wire_score,
    write_policy,
)
from tests.polling import until

#: node -> metrics-server's cpu usage (of 4 cpu)
USAGE = {"node-a": "500m", "node-b": "1", "node-c": "2500m"}


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[FakeApiServer, TestClient]]:
    with FakeApiServer(bookmark_interval=0.2) as server:
        for name in NODES:
            server.put(node(name))
        for name, cpu in USAGE.items():
            server.set_node_metrics(name, cpu, "2Gi")
        policy = trimaran_policy({"metricProvider": {"refreshSeconds": 0.2,
                                                     "staleAfterSeconds": 3}})
        args = build_parser("serve").parse_args(
            ["serve", "--kubeconfig", str(server.write_kubeconfig(tmp_path / "kubeconfig")),
             "--policy", str(write_policy(tmp_path / "policy.json", policy))])
        runtime = serve.build_runtime(args)
        with TestClient(create_app(runtime)) as client:
            until(lambda: client.get("/readyz").status_code == 200, "/readyz 200")
            yield server, client


def scores(client: TestClient) -> dict[str, int]:
    reply = client.post("/prioritize", json=prioritize_body())
    assert reply.status_code == 200, reply.text
    return {entry["Host"]: entry["Score"] for entry in reply.json()}


@pytest.mark.slow
def test_scores_from_metrics_server_and_fallback(live) -> None:
    server, client = live
    until(lambda: metric(client.get("/metrics").text, "extender_load_metrics_nodes") == 3,
          "node metrics of three nodes")
    # 500m of 4 cpu is 12.5 %, 1 cpu 25 %, 2.5 cpu 62.5 % (Latest); node-d has none.
    expected = {"node-a": 96, "node-b": 33, "node-c": 8, "node-d": 0}
    assert expected == {n: target_load_packing({"node-a": 12.5, "node-b": 25.0,
                                                "node-c": 62.5}.get(n)) for n in NODES}
    # (A node that held the pod since the window closed would count it: none here.)
    until(lambda: scores(client) == {n: wire_score(s) for n, s in expected.items()},
          "scores from metrics-server")
    verbose = client.get("/readyz?verbose").text.splitlines()
    assert "[+]informer-nodes ok" in verbose
    assert ("[!]load-metrics warning: 1 of 4 node(s) without fresh metrics (scored 0 by "
            "TargetLoadPacking)") in verbose
    assert verbose[-1] == "readyz check passed"

    # metrics-server stops reporting node-a: it keeps its data until it is 3 s old.
    server.remove_node_metrics("node-a")
    until(lambda: scores(client)["node-a"] == 0, "node-a to fall back", timeout=15)
    assert scores(client)["node-b"] == wire_score(33)

    # The metrics API fails: counted, never a request error; the others fall back in turn.
    server.inject(Fault("status", path="/apis/metrics.k8s.io", status=503, times=10_000))
    until(lambda: (metric(client.get("/metrics").text, "extender_load_metrics_fetch_total",
                          source="metrics-server", outcome="http_error") or 0) >= 1,
          "a failed fetch to be counted")
    until(lambda: set(scores(client).values()) == {0}, "every node to fall back", timeout=15)
    assert client.get("/readyz").status_code == 200
    assert "is metrics-server installed?" in client.get("/readyz?verbose").text
    server.clear_faults()
    until(lambda: scores(client)["node-b"] == wire_score(33), "recovery", timeout=15)
