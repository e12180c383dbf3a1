"""`extender serve` under abuse, over real sockets: slow or oversized request heads and bodies
are cut off, connections are capped, and one large request does not stall anything else."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from tests.conftest import FIXTURES, ROOT, fixture_bytes
from tests.e2e.test_serve import free_port, wait_ready
from tests.polling import stop_process

MAX_CONNECTIONS = 24
HEADER_TIMEOUT = 1.0
BODY_TIMEOUT = 1.0


@dataclass
class Server:
    url: str
    port: int
    health_port: int


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    port, health_port = free_port(), free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "extender", "serve", "--port", str(port),
         "--policy", str(FIXTURES / "policy-leastallocated.json"), "--nodes-form",
         "--max-candidates", "20000", "--header-timeout", str(HEADER_TIMEOUT),
         "--body-timeout", str(BODY_TIMEOUT), "--max-connections", str(MAX_CONNECTIONS),
         "--health-port", str(health_port)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, proc)
        yield Server(url, port, health_port)
    finally:
        stop_process(proc)


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.settimeout(10)  # every wait below is bounded
    return sock


def _read_until_closed(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


@pytest.mark.slow
def test_a_request_head_that_never_completes_is_closed(server: Server) -> None:
    with _connect(server.port) as sock:
        sock.sendall(b"POST /filter HTTP/1.1\r\nHost: extender\r\nContent-Type: appl")
        reply = _read_until_closed(sock)  # returns only once the server closed it
    assert reply.startswith(b"HTTP/1.1 408 ")
    assert b"request head not received within 1s" in reply


def _exchange(sock: socket.socket, request: bytes) -> bytes:
    """Send one keep-alive request and read its whole response (its content-length body)."""
    sock.sendall(request)
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
    while len(body) < length:
        body += sock.recv(65536)
    return head


@pytest.mark.slow
def test_a_keep_alive_connections_head_deadline_counts_from_each_heads_first_byte(
        server: Server) -> None:
    # The connection's one head timer comes due while requests keep arriving on it (armed at
    # connection open, then for later heads): none of them is cut off for an earlier head's
    # deadline, and a head that stalls still gets its 408 a whole timeout after its first byte.
    request = b"GET /healthz HTTP/1.1\r\nHost: extender\r\n\r\n"
    with _connect(server.port) as sock:
        started = time.monotonic()
        answered = 0
        while time.monotonic() - started < 2.5 * HEADER_TIMEOUT:
            assert _exchange(sock, request).startswith(b"HTTP/1.1 200 "), answered
            answered += 1
        stalled = time.monotonic()
        sock.sendall(b"POST /filter HTTP/1.1\r\nHost: extender\r\nContent-Type: appl")
        reply = _read_until_closed(sock)
        waited = time.monotonic() - stalled
    assert answered > 10
    assert reply.startswith(b"HTTP/1.1 408 ")
    assert 0.9 * HEADER_TIMEOUT < waited < 3 * HEADER_TIMEOUT, waited


@pytest.mark.slow
def test_a_silent_connection_is_closed(server: Server) -> None:
    with _connect(server.port) as sock:
        assert _read_until_closed(sock).startswith(b"HTTP/1.1 408 ")


def test_a_trickled_request_head_is_closed(server: Server) -> None:
    with _connect(server.port) as sock:
        head = b"GET /healthz HTTP/1.1\r\nHost: extender\r\nX-Slow: " + b"a" * 100
        closed = False
        for byte in head:  # one byte every 50 ms: 7 s in all, were it let through
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                closed = True
                break
            time.sleep(0.05)
            sock.setblocking(False)
            try:
                if sock.recv(65536, socket.MSG_PEEK):
                    closed = True
                    break
            except BlockingIOError:
                pass
            finally:
                sock.setblocking(True)
                sock.settimeout(10)
        assert closed
        assert _read_until_closed(sock).startswith(b"HTTP/1.1 408 ")


OVERSIZED_HEADS = {
    # 70 KB of headers in one write, the head not ended: the server answers before the end.
    "unfinished": (b"GET /healthz HTTP/1.1\r\nHost: extender\r\n"
                   + (b"X-Filler: " + b"f" * 1000 + b"\r\n") * 70,),
    # The same head, complete, in the same write as its end and a body.
    "complete in one write": (b"POST /filter HTTP/1.1\r\nHost: extender\r\nContent-Length: 2\r\n"
                              + (b"X-Filler: " + b"f" * 1000 + b"\r\n") * 70 + b"\r\n{}",),
    # One 70 KB header, split over two writes, the second ending the head.
    "one header over two writes": (
        b"GET /healthz HTTP/1.1\r\nHost: extender\r\nX-Big: " + b"b" * 40_000,
        b"b" * 30_000 + b"\r\n\r\n"),
    # Many small writes of small headers.
    "many small writes": tuple(b"X-Filler-%d: " % i + b"f" * 500 + b"\r\n" for i in range(140)),
}


@pytest.mark.parametrize("chunks", OVERSIZED_HEADS.values(), ids=OVERSIZED_HEADS.keys())
def test_an_oversized_request_head_is_431(server: Server, chunks: tuple[bytes, ...]) -> None:
    with _connect(server.port) as sock:
        if not chunks[0].startswith((b"GET", b"POST")):
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: extender\r\n")
        try:
            for chunk in chunks:
                sock.sendall(chunk)
            if chunks[-1].endswith(b"\r\n") and not chunks[-1].endswith(b"\r\n\r\n"):
                sock.sendall(b"\r\n")
        except OSError:
            pass  # closed by the server before everything was sent: its answer is below
        reply = _read_until_closed(sock)
    assert reply.startswith(b"HTTP/1.1 431 "), reply[:80]


def test_a_head_just_under_the_bound_is_served(server: Server) -> None:
    with _connect(server.port) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: extender\r\nConnection: close\r\n"
                     + (b"X-Filler: " + b"f" * 1000 + b"\r\n") * 60 + b"\r\n")
        assert _read_until_closed(sock).startswith(b"HTTP/1.1 200 ")


def test_a_slow_body_is_408_and_the_connection_closed(server: Server) -> None:
    with _connect(server.port) as sock:
        sock.sendall(b"POST /filter HTTP/1.1\r\nHost: extender\r\nContent-Length: 5000\r\n\r\n"
                     b'{"Pod": {')
        reply = _read_until_closed(sock)
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 ") and b"connection: close" in head.lower()
    assert json.loads(body)["Error"].startswith("request body not received within 1s")


def test_connections_beyond_the_cap_are_refused_and_the_others_keep_working(
        server: Server) -> None:
    with httpx.Client(base_url=server.url, timeout=10) as keep_alive:
        assert keep_alive.get("/healthz").status_code == 200  # an established connection
        idle = [_connect(server.port) for _ in range(MAX_CONNECTIONS - 1)]
        try:
            with _connect(server.port) as extra:
                reply = _read_until_closed(extra)
            assert reply.startswith(b"HTTP/1.1 503 ") and b"too many open connections" in reply
            # The connection that was already open is not disturbed.
            assert keep_alive.get("/healthz").status_code == 200
        finally:
            for sock in idle:
                sock.close()
    _until(lambda: httpx.get(f"{server.url}/healthz", timeout=5).status_code == 200)


def _until(check, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if check():
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_health_port_serves_health_and_metrics_only(server: Server) -> None:
    """Probes and Prometheus reach the pod IP's health port; the verbs are not there."""
    health = f"http://127.0.0.1:{server.health_port}"
    assert httpx.get(f"{health}/healthz", timeout=5).text == "ok"
    assert httpx.get(f"{health}/livez", timeout=5).text == "ok"
    assert httpx.get(f"{health}/readyz", timeout=5).status_code == 200
    assert httpx.get(f"{health}/readyz?verbose", timeout=5).text == (
        "[+]ping ok\n[+]cluster-state ok\nreadyz check passed\n")
    assert httpx.post(f"{health}/filter", content=fixture_bytes("filter-names.request.json"),
                      timeout=5).status_code == 404
    metrics = httpx.get(f"{health}/metrics", timeout=5)
    assert metrics.status_code == 200 and "extender_build_info" in metrics.text


def _big_nodes_form_request(count: int) -> bytes:
    """`count` Node objects the extender has never seen (each decoded and built), in a zone
    the pod's required node affinity excludes: a short reply, so the clients stay idle."""
    pod = json.loads(fixture_bytes("filter-names.request.json"))["Pod"]
    items = []
    for i in range(count):
        name = f"big-{i:05d}"
        items.append({
            "metadata": {"name": name, "uid": f"uid-{name}", "resourceVersion": str(900_000 + i),
                         "labels": {"kubernetes.io/hostname": name, "disktype": "ssd",
                                    "topology.kubernetes.io/zone": "us-east-1c",
                                    # Labels are what a request node's slim decode still builds
                                    # (images are read only by ImageLocality, on demand).
                                    **{f"example.com/label-{j}": f"value-{i}-{j}"
                                       for j in range(24)}}},
            "spec": {},
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                       "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                       "images": [{"names": [f"registry.example.com/app-{j}:v{i % 7}"],
                                   "sizeBytes": 10_000_000 * (j + 1)} for j in range(8)]},
        })
    return json.dumps({"Pod": pod, "Nodes": {"items": items}, "NodeNames": None}).encode()


_SEND_BIG = """
import json, sys, time, httpx
url, path, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
body = open(path, "rb").read()
runs = []
with httpx.Client(base_url=url, timeout=60) as client:
    for _ in range(3):  # back to back, for a long enough window
        started = time.monotonic()
        reply = client.post("/filter", content=body)
        runs.append((started, time.monotonic(), reply))
out = []
for started, ended, reply in runs:  # read the replies afterwards: no work during the window
    answer = reply.json() if reply.status_code == 200 else {}
    judged = sum(len(answer.get(key) or {}) for key in ("FailedNodes", "FailedAndUnresolvableNodes"))
    judged += len((answer.get("Nodes") or {}).get("items") or [])
    out.append([started, ended, reply.status_code, answer.get("Error"), judged])
print(json.dumps(out))
"""


@pytest.mark.alone  # latencies bounded at 0.1 s
@pytest.mark.slow
def test_health_and_small_requests_answer_within_100ms_while_a_large_one_runs(
        server: Server, tmp_path) -> None:
    count = 16_000
    big = tmp_path / "big.json"
    big.write_bytes(_big_nodes_form_request(count))  # about 40 MB, decoded node by node
    small = fixture_bytes("filter-names.request.json")
    with httpx.Client(base_url=server.url, timeout=10) as client:
        assert client.post("/filter", content=small).status_code == 200  # warm
        # The large requests come from another process, so this one only measures.
        sender = subprocess.Popen([sys.executable, "-c", _SEND_BIG, server.url, str(big),
                                   str(count)], stdout=subprocess.PIPE, text=True)
        probes: list[tuple[float, float, str]] = []
        while sender.poll() is None:
            for path in ("/healthz", "/filter"):
                started = time.monotonic()
                if path == "/healthz":
                    reply = client.get(path)
                else:
                    reply = client.post(path, content=small)
                ended = time.monotonic()
                assert reply.status_code == 200, reply.text
                probes.append((started, ended, path))
            time.sleep(0.02)
        out, _ = sender.communicate(timeout=60)
    big_runs = json.loads(out)  # CLOCK_MONOTONIC is one clock for every process
    assert len(big_runs) == 3
    for started, ended, status, error, judged in big_runs:
        assert (status, error, judged) == (200, "", count)
        # Large enough to matter: run on the loop, it would hold the probes back well past
        # their 0.1 s bound (1.5x of it at least).
        assert ended - started > 0.15
    during = [(s, e, p) for s, e, p in probes
              if any(bs < s and e < be for bs, be, *_ in big_runs)]
    assert len([p for p in during if p[2] == "/healthz"]) >= 10, probes
    assert len([p for p in during if p[2] == "/filter"]) >= 10, probes
    shortest_large = min(ended - started for started, ended, *_ in big_runs)
    for path in ("/healthz", "/filter"):
        took = sorted(e - s for s, e, p in during if p == path)
        # Every probe but the slowest within 0.1 s, and that one still well short of a large
        # request: run on the loop, a large one would hold a probe for most of its length.
        # (One probe is let past 0.1 s because a control plane another test left running can
        # take the CPU for that long on this 2-core machine: 102 ms once in a whole suite,
        # 7-34 ms alone.)
        assert took[-2] < 0.1 and took[-1] < shortest_large / 2, (path, took, shortest_large)
