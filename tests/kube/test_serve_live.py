"""End to end: `extender serve --kubeconfig` against the fake API server, as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.kube import kube_objects as ko
from tests.kube.fake_apiserver import FakeApiServer, Fault
from tests.polling import free_port, stop_process, until

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"






@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[FakeApiServer, Path]]:
    with FakeApiServer(bookmark_interval=0.5) as server:
        server.load(json.loads((FIXTURES / "cluster.json").read_text())["items"])
        pending = json.loads((FIXTURES / "filter-names.request.json").read_text())["Pod"]
        server.put({**pending, "kind": "Pod"})
        yield server, server.write_kubeconfig(tmp_path / "kubeconfig")


@pytest.fixture
def extender(cluster: tuple[FakeApiServer, Path], tmp_path: Path) -> Iterator[httpx.Client]:
    server, kubeconfig = cluster
    # Hold the first pods list for a moment so the not-ready phase is observable.
    server.inject(Fault("hang", path="/api/v1/pods", watch=False, hang_seconds=3))
    port = free_port()
    log = (tmp_path / "extender.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "extender", "serve", "--kubeconfig", str(kubeconfig),
         "--port", str(port), "--policy", str(FIXTURES / "policy-leastallocated.json"),
         "--bind-deadline", "3"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
    )
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10)

    def listening() -> bool:
        assert proc.poll() is None, (tmp_path / "extender.log").read_text()
        try:
            client.get("/healthz")
            return True
        except httpx.TransportError:
            return False

    try:
        until(listening, "the extender to listen", 30)
        yield client
    finally:
        client.close()
        stop_process(proc)
        log.close()


@pytest.mark.slow
def test_serve_live_filters_and_binds(cluster: tuple[FakeApiServer, Path], extender: httpx.Client) -> None:
    server, _ = cluster
    filter_body = (FIXTURES / "filter-names.request.json").read_bytes()

    # Not synced yet: /readyz is 503 and filter answers a clear Error, not a guess.
    ready = extender.get("/readyz")
    assert ready.status_code == 503 and "not synced yet (waiting for" in ready.text
    # Pods are held back by the fake server, so they are still awaited whatever else synced.
    waiting_for = ready.text.split("waiting for ", 1)[1]
    assert "pods" in waiting_for
    early = extender.post("/filter", content=filter_body).json()
    assert early["Error"].startswith("extender is not ready: cluster state not synced yet")
    until(lambda: extender.get("/readyz").status_code == 200, "/readyz 200", 20)

    # NodeNames filter from the live state: exactly the fixture's expected reply.
    reply = extender.post("/filter", content=filter_body).json()
    assert reply == json.loads((FIXTURES / "filter-names.expected.json").read_text())

    # Bind; the API server performs it but the answer is lost: the retry sees 409 on the
    # same node and reports success. kube-scheduler retrying the bind is also success.
    server.inject(Fault("lose_response", method="POST", path="/binding"))
    bind_body = (FIXTURES / "bind.request.json").read_bytes()
    assert extender.post("/bind", content=bind_body).json() == {"Error": ""}
    assert extender.post("/bind", content=bind_body).json() == {"Error": ""}
    assert server.bindings == [("default", "api-7d9f", "uid-default-api-7d9f", "worker-a2")]
    assert server.get("Pod", "default", "api-7d9f")["spec"]["nodeName"] == "worker-a2"

    # A bind for a pod that does not exist is a clear error.
    ghost = {"PodName": "ghost", "PodNamespace": "default", "PodUID": "u", "Node": "worker-a1"}
    assert extender.post("/bind", json=ghost).json() == {"Error": "pod default/ghost not found"}

    # The watch is cut and the cluster changes meanwhile: the state follows.
    server.drop_watches()
    server.put(ko.node("fresh-1", cpu="32", memory="64Gi", labels={"disktype": "ssd"}))
    request = json.loads(filter_body)
    request["NodeNames"] = ["fresh-1"]

    def fresh_node_known() -> bool:
        got = extender.post("/filter", json=request).json()
        return "fresh-1" in (got["NodeNames"] or []) + list(got["FailedAndUnresolvableNodes"] or {})

    until(fresh_node_known, "the new node in the extender's state", 15)
    metrics = extender.get("/metrics").text
    assert 'extender_informer_synced{resource="pods"} 1.0' in metrics
