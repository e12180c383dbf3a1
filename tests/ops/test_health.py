"""`/livez`, `/healthz` and `/readyz` (with `?verbose`, one line per check as kube-apiserver
answers), on the main app and on the `--health-port` app, for a snapshot and a live cluster."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from extender import serve
from extender.api.app import create_app
from extender.api.healthport import health_app
from extender.cli import build_parser
from tests.conftest import FIXTURES, fixture_json
from tests.kube.fake_apiserver import FakeApiServer, Fault
from tests.polling import until

INFORMERS = ("nodes", "pods", "poddisruptionbudgets", "priorityclasses", "namespaces",
             "services", "replicasets", "statefulsets", "replicationcontrollers")




def test_snapshot_health_on_the_main_port(client):
    for path in ("/livez", "/healthz"):
        assert client.get(path).text == "ok"
    assert client.get("/livez?verbose").text == "[+]ping ok\nlivez check passed\n"
    assert client.get("/healthz?verbose").text == "[+]ping ok\nhealthz check passed\n"
    plain = client.get("/readyz")
    assert (plain.status_code, plain.text) == (200, "ok")  # not "ok: ok"
    ready = client.get("/readyz?verbose")
    assert ready.status_code == 200
    assert ready.text == "[+]ping ok\n[+]cluster-state ok\nreadyz check passed\n"


def test_snapshot_health_on_the_health_port(runtime):
    with TestClient(health_app(runtime)) as health:
        assert health.get("/livez").text == "ok"
        assert health.get("/livez?verbose").text.endswith("livez check passed\n")
        assert health.get("/healthz").text == "ok"
        assert health.get("/readyz?verbose").text.endswith("readyz check passed\n")
        # /metrics too (the sidecar's verbs are on loopback: Prometheus scrapes this port),
        # never a verb.
        metrics = health.get("/metrics")
        assert metrics.status_code == 200 and "extender_state_nodes 6.0" in metrics.text
        assert 'extender_cache_bytes{cache="recent_pod_views"}' in metrics.text
        for verb in ("filter", "prioritize", "preempt", "bind"):
            assert health.post(f"/{verb}", content=b"{}").status_code in (404, 405)


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[FakeApiServer, TestClient, TestClient]]:
    with FakeApiServer(bookmark_interval=0.2) as server:
        server.load(json.loads((FIXTURES / "cluster.json").read_text())["items"])
        server.put({**fixture_json("filter-names.request.json")["Pod"], "kind": "Pod"})
        # Hold the first pods list so the not-ready phase can be read.
        server.inject(Fault("hang", path="/api/v1/pods", watch=False, hang_seconds=3))
        args = build_parser("serve").parse_args(
            ["serve", "--kubeconfig", str(server.write_kubeconfig(tmp_path / "kubeconfig")),
             "--policy", str(FIXTURES / "policy-leastallocated.json")])
        runtime = serve.build_runtime(args)
        with TestClient(create_app(runtime)) as main, TestClient(health_app(runtime)) as health:
            yield server, main, health


@pytest.mark.slow
def test_live_readyz_verbose_names_each_informer(live):
    _, main, health = live

    def others_synced() -> bool:
        text = main.get("/readyz?verbose").text
        return all(f"[+]informer-{name} ok" in text for name in INFORMERS if name != "pods")

    until(others_synced, "every informer but pods to sync")
    for client in (main, health):
        reply = client.get("/readyz?verbose")
        lines = reply.text.splitlines()
        assert reply.status_code == 503
        assert lines[0] == "[+]ping ok"
        assert lines[1:-1] == [f"[-]informer-{name} failed: not synced yet" if name == "pods"
                               else f"[+]informer-{name} ok" for name in INFORMERS]
        assert lines[-1] == "readyz check failed"
        # Not verbose: as before, the reason the verbs answer with.
        plain = client.get("/readyz")
        assert plain.status_code == 503 and "waiting for pods" in plain.text
        # Liveness does not depend on the cluster state.
        assert client.get("/livez").status_code == 200

    until(lambda: main.get("/readyz").status_code == 200, "/readyz 200")
    for client in (main, health):
        reply = client.get("/readyz?verbose")
        assert reply.status_code == 200
        assert reply.text.splitlines() == ["[+]ping ok", *(f"[+]informer-{n} ok" for n in INFORMERS),
                                           "readyz check passed"]
