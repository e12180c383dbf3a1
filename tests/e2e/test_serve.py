"""The `extender serve` command started as a user would, driven over HTTP."""

from __future__ import annotations

import json
import os
import re
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
from tests.polling import free_port, stop_process


def wait_ready(url: str, proc: subprocess.Popen, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited early:\n{proc.stdout.read() if proc.stdout else ''}")
        try:
            # Plain http: verify=False reads no TLS roots (~20 ms of CPU a poll otherwise).
            if httpx.get(f"{url}/readyz", timeout=1.0, verify=False).status_code == 200:
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
        stop_process(proc)


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
    # By plugin and status code, never by the reason text.
    assert ('extender_filter_rejections_total{code="Unschedulable",plugin="NodeResourcesFit"}'
            in metrics)
    assert not re.search(r"extender_filter_rejections_total\{[^}]*reason=", metrics)
    assert "_created" not in metrics and "extender_build_info{" in metrics
    assert httpx.get(f"{server}/livez").text == "ok"
    assert httpx.get(f"{server}/readyz?verbose").text.endswith("readyz check passed\n")


def test_help_documents_every_serve_flag():
    out = subprocess.run([sys.executable, "-m", "extender", "serve", "--help"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    for flag in ("--host", "--port", "--policy", "--snapshot", "--kubeconfig", "--in-cluster",
                 "--max-body-bytes", "--log-level", "--tls-cert-file", "--tls-client-ca-file",
                 "--nodes-form", "--max-candidates", "--offload-bytes", "--body-timeout",
                 "--header-timeout", "--max-connections", "--health-port", "--health-host",
                 "--bind-address", "--secure-port", "--tls-private-key-file", "--client-ca-file",
                 "--tls-key-file", "--v", "--logging-format"):
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


def _serve_logs(*flags: str) -> tuple[str, int]:
    """Start serve with `flags`, send one filter, stop it; its standard error and port."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "extender", "serve", "--secure-port", str(port), *flags,
         "--policy", str(FIXTURES / "policy-leastallocated.json")],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "FORCE_COLOR": "1", "TERM": "xterm-256color"})
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, proc)
        assert httpx.post(f"{url}/filter",
                          content=fixture_bytes("filter-names.request.json")).status_code == 200
    finally:
        proc.terminate()
        try:
            _, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
    return err, port


@pytest.mark.slow
def test_kube_scheduler_flags_json_logs_at_v4():
    err, port = _serve_logs("--bind-address", "127.0.0.1", "--logging-format=json", "--v=4")
    assert "\x1b" not in err
    entries = [json.loads(line) for line in err.splitlines()]  # every line is one JSON object
    assert all(isinstance(e["ts"], float) and "msg" in e and ("v" in e or "err" in e)
               for e in entries)
    requests = [e for e in entries if e.get("verb") == "filter"]
    assert len(requests) == 1 and requests[0]["v"] == 4 and requests[0]["outcome"] == "ok"
    assert any(f"127.0.0.1:{port}" in e["msg"] for e in entries)  # uvicorn's line, uncoloured


def test_default_logs_are_klog_text_without_request_lines():
    err, _ = _serve_logs("--host", "127.0.0.1")
    lines = err.splitlines()
    assert lines and all(re.match(r"[IWE]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ \S+:\d+\] ", line)
                         or line.startswith(("\t", " >")) for line in lines), err
    assert any('"extender configured"' in line for line in lines)
    assert not any("verb=" in line for line in lines)  # request lines need -v 4
    assert "\x1b" not in err
