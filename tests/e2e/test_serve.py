"""The `extender serve` command started as a user would, driven over HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import (
    FIXTURE_CASES,
    FIXTURES,
    ROOT,
    fixture_bytes,
    fixture_json,
    scheduler_verb_paths,
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_ready(url: str, proc: subprocess.Popen, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited early:\n{proc.stdout.read() if proc.stdout else ''}")
        try:
            if httpx.get(f"{url}/readyz", timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError("server did not become ready")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    port = free_port()
    # Started from the repository root with no flags but the port: the embedded defaults.
    proc = subprocess.Popen(
        [sys.executable, "-m", "extender", "serve", "--port", str(port),
         "--policy", str(FIXTURES / "policy-leastallocated.json"), "--max-body-bytes", "50000000"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, proc)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.mark.parametrize(("verb", "request_file", "expected_file"), FIXTURE_CASES)
def test_fixture_over_http(server, verb, request_file, expected_file):
    reply = httpx.post(f"{server}/{verb}", content=fixture_bytes(request_file),
                       headers={"Content-Type": "application/json"})
    assert reply.status_code == 200
    assert reply.json() == fixture_json(expected_file)


def test_garbage_then_valid_on_one_connection(server):
    with httpx.Client(base_url=server) as http:
        for body in (b"garbage", b'{"Pod": {"metadata": ', b"{}", b'{"Pod": 3}'):
            reply = http.post("/filter", content=body)
            assert reply.status_code == 400
            assert reply.json()["Error"]
        ok = http.post("/filter", content=fixture_bytes("filter-names.request.json"))
        assert ok.status_code == 200 and ok.json()["Error"] == ""


def test_200_megabyte_body_is_refused_and_server_survives(server):
    chunk = b" " * (1 << 20)

    def body() -> Iterator[bytes]:
        yield b'{"Pod": {}, "NodeNames": ['
        for _ in range(200):
            yield chunk
        yield b"]}"

    try:
        reply = httpx.post(f"{server}/filter", content=body(), timeout=30.0)
        assert reply.status_code == 413
        assert "exceeds the limit" in reply.json()["Error"]
    except httpx.TransportError:
        pass  # the server may close the connection while we are still sending; that is a refusal
    assert httpx.get(f"{server}/healthz").status_code == 200
    ok = httpx.post(f"{server}/filter", content=fixture_bytes("filter-names.request.json"))
    assert ok.status_code == 200


def test_health_version_metrics(server):
    assert httpx.get(f"{server}/healthz").text == "ok"
    version = httpx.get(f"{server}/version").json()
    assert version["filters"][0] == "NodeUnschedulable"
    httpx.post(f"{server}/filter", content=fixture_bytes("filter-names.request.json"))
    metrics = httpx.get(f"{server}/metrics").text
    assert 'extender_requests_total{outcome="ok",verb="filter"}' in metrics
    assert 'extender_filter_rejections_total{reason="Insufficient cpu"}' in metrics


def test_help_documents_every_serve_flag():
    out = subprocess.run([sys.executable, "-m", "extender", "serve", "--help"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    for flag in ("--host", "--port", "--policy", "--snapshot", "--kubeconfig", "--in-cluster",
                 "--max-body-bytes", "--log-level", "--tls-cert-file", "--tls-client-ca-file",
                 "--nodes-form", "--max-candidates", "--offload-bytes", "--body-timeout",
                 "--header-timeout", "--max-connections", "--health-port", "--health-host"):
        assert flag in out


def test_scheduler_config_reaches_every_verb(server):
    """The paths kube-scheduler would call with config/scheduler-config.yaml are served."""
    paths = scheduler_verb_paths("scheduler-config.yaml")
    assert set(paths) == {"filter", "prioritize", "preempt", "bind"}
    # The module's server has bound the fixture pod by now, so compare shapes, not scores.
    for verb, request_file, expected_file in FIXTURE_CASES:
        reply = httpx.post(f"{server}{paths[verb]}", content=fixture_bytes(request_file))
        expected = fixture_json(expected_file)
        assert reply.status_code == 200
        body = reply.json()
        assert type(body) is type(expected)
        if isinstance(expected, dict):
            assert set(body) == set(expected) and body.get("Error", "") == ""
        else:
            assert [entry["Host"] for entry in body] == [entry["Host"] for entry in expected]
