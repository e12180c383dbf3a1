"""Load-generating client for ``bench.run``; runs in its own process, pinned to its own CPU.

    python -m bench.client PLAN.json RESULT.json

A minimal HTTP/1.1 keep-alive client on raw sockets (an ``httpx.Client`` adds ~0.7 ms per
request, more than the server's own time for small bodies). For every case of the plan it
drives the server with 1 connection (latency percentiles and req/s) and with N connections
(req/s), each measurement bounded by a request count and a time budget; it records the
server's peak RSS for the case, and measures the floors for the same body: ``POST /_floor``
(the HTTP floor) and the fastest available JSON decoder (the decode floor).
"""

from __future__ import annotations

import gc
import itertools
import os
import socket
import statistics
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

JSON = dict[str, Any]
MAX_HEAD = 1 << 20
RECV = 1 << 18


class HttpError(Exception):
    """The connection broke or the response could not be parsed."""


class ServerGone(Exception):
    """The server exited or stopped accepting connections; nothing more can be measured."""


def server_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"State:"):
                    return line.split()[1] not in (b"Z", b"X")
    except OSError:
        return False
    return True


# --------------------------------------------------------------------------- HTTP client


def build_request(path: str, host: str, port: int, body: bytes) -> bytes:
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        "User-Agent: kube-scheduler/v1.31.2 (linux/amd64) bench\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("ascii") + body


class FreshVersions(Sequence[bytes]):
    """One request whose node objects carry new resourceVersions every time it is taken.

    Every ``"resourceVersion":"…"`` after ``marker`` (the Nodes-form node list, so not the
    pod's) is rewritten in place to the next counter value, zero-padded to its width: no
    version the server has seen (in its state or in an earlier request) comes back, so a
    server that remembers node versions must still decode every node. The body's length
    never changes. Each thread (connection) rewrites its own copy of the request, which it
    has sent in full before it takes the next one: no 60 MB copy per request (about 3 ms of
    rewriting for 5000 nodes, before the request's clock starts)."""

    KEY = b'"resourceVersion":"'

    def __init__(self, request: bytes, marker: bytes = b'"Nodes":{') -> None:
        self.request = request
        self.spans: list[tuple[int, int]] = []
        start = request.find(marker)
        pos = request.find(self.KEY, max(start, 0))
        while pos >= 0:
            begin = pos + len(self.KEY)
            end = request.index(b'"', begin)
            if end > begin:
                self.spans.append((begin, end - begin))
            pos = request.find(self.KEY, end)
        self.counter = itertools.count(1)
        self.lock = threading.Lock()
        self.local = threading.local()

    def __len__(self) -> int:
        return 1

    def __getitem__(self, index: Any) -> Any:  # every access is a new version of every node
        with self.lock:
            k = next(self.counter)
        buf = getattr(self.local, "buf", None)
        if buf is None:
            buf = self.local.buf = bytearray(self.request)
        widths: dict[int, bytes] = {}
        for begin, width in self.spans:
            digits = widths.get(width)
            if digits is None:
                digits = widths[width] = str(k % 10**width).zfill(width).encode()
            buf[begin:begin + width] = digits
        return buf


class Connection:
    """One keep-alive connection; ``roundtrip`` sends a prebuilt request, reads one reply."""

    def __init__(self, host: str, port: int, timeout: float) -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self.sock: socket.socket | None = None
        self.buf = b""

    def connect(self) -> None:
        self.close()
        sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock, self.buf = sock, b""

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
        self.sock = None

    def roundtrip(self, request: bytes, keep_body: bool = False) -> tuple[int, bytes | None]:
        try:
            if self.sock is None:
                self.connect()
            assert self.sock is not None
            self.sock.sendall(request)
            status, body, close = self._read_response(keep_body)
        except (OSError, ValueError) as exc:
            self.close()
            raise HttpError(str(exc)) from exc
        if close:
            self.close()
        return status, body

    def _recv(self) -> bytes:
        assert self.sock is not None
        chunk = self.sock.recv(RECV)
        if not chunk:
            raise HttpError("connection closed by server")
        return chunk

    def _read_head(self) -> bytes:
        while (end := self.buf.find(b"\r\n\r\n")) < 0:
            if len(self.buf) > MAX_HEAD:
                raise HttpError("response head too large")
            self.buf += self._recv()
        head, self.buf = self.buf[:end], self.buf[end + 4 :]
        return head

    def _read_exact(self, n: int, keep: bool) -> bytes | None:
        if len(self.buf) >= n:
            data, self.buf = self.buf[:n], self.buf[n:]
            return data if keep else None
        out = bytearray(n)
        view = memoryview(out)
        have = len(self.buf)
        view[:have] = self.buf
        self.buf = b""
        assert self.sock is not None
        while have < n:
            got = self.sock.recv_into(view[have:], min(n - have, 1 << 22))
            if not got:
                raise HttpError("connection closed inside a body")
            have += got
        return bytes(out) if keep else None

    def _read_line(self) -> bytes:
        while (end := self.buf.find(b"\r\n")) < 0:
            if len(self.buf) > MAX_HEAD:
                raise HttpError("chunk header too large")
            self.buf += self._recv()
        line, self.buf = self.buf[:end], self.buf[end + 2 :]
        return line

    def _read_chunked(self, keep: bool) -> bytes | None:
        parts: list[bytes] = []
        for _ in range(1 << 24):  # bounded: one iteration per chunk
            size = int(self._read_line().split(b";")[0], 16)
            if size == 0:
                while self._read_line():  # trailers end with an empty line
                    pass
                return b"".join(parts) if keep else None
            data = self._read_exact(size, True)
            if keep and data is not None:
                parts.append(data)
            self._read_exact(2, False)
        raise HttpError("too many chunks")

    def _read_response(self, keep: bool) -> tuple[int, bytes | None, bool]:
        head = self._read_head()
        lines = head.split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            headers[name.strip().lower()] = value.strip().lower()
        close = headers.get(b"connection") == b"close"
        if b"content-length" in headers:
            body = self._read_exact(int(headers[b"content-length"]), keep)
        elif b"chunked" in headers.get(b"transfer-encoding", b""):
            body = self._read_chunked(keep)
        else:
            raise HttpError("response without a length")
        return status, body, close


# --------------------------------------------------------------------------- statistics


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not sorted_values:
        return float("nan")
    pos = (len(sorted_values) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


@dataclass
class Run:
    """Latencies (ns) and outcome counts of one bounded measurement."""

    latencies: list[int] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self, connections: int) -> JSON:
        lat = sorted(x / 1e6 for x in self.latencies)
        n = len(lat)
        return {
            "connections": connections,
            "requests": n,
            "seconds": round(self.seconds, 4),
            "rps": n / self.seconds if self.seconds > 0 else 0.0,
            "p50_ms": percentile(lat, 0.50),
            "p90_ms": percentile(lat, 0.90),
            "p99_ms": percentile(lat, 0.99),
            "mean_ms": statistics.fmean(lat) if lat else float("nan"),
            "min_ms": lat[0] if lat else float("nan"),
            "max_ms": lat[-1] if lat else float("nan"),
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            "errors": len(self.errors),
            "error_samples": self.errors[:3],
        }


@dataclass(frozen=True)
class Limits:
    max_requests: int
    max_seconds: float
    min_requests: int
    timeout: float


class Tickets:
    """Shared request budget and deadline for the connections of one measurement."""

    def __init__(self, limits: Limits, start: float) -> None:
        self.limits = limits
        self.counter = itertools.count()
        self.deadline = start + limits.max_seconds
        self.hard_deadline = start + 5 * limits.max_seconds + limits.timeout

    def take(self) -> int | None:
        now = time.perf_counter()
        ticket = next(self.counter)
        if ticket >= self.limits.max_requests or now >= self.hard_deadline:
            return None
        if now >= self.deadline and ticket >= self.limits.min_requests:
            return None
        return ticket


def _drive(conn: Connection, requests: Sequence[bytes], tickets: Tickets, run: Run, lock: threading.Lock) -> None:
    """Closed loop on one connection until the shared budget is spent."""
    local: list[int] = []
    statuses: dict[int, int] = {}
    errors: list[str] = []
    for _ in range(tickets.limits.max_requests + 1):  # bounded by the budget
        ticket = tickets.take()
        if ticket is None:
            break
        req = requests[ticket % len(requests)]
        t0 = time.perf_counter_ns()
        try:
            status, _ = conn.roundtrip(req)
        except HttpError as exc:
            errors.append(str(exc))
            if len(errors) > 10 or "refused" in str(exc):
                break
            continue
        local.append(time.perf_counter_ns() - t0)
        statuses[status] = statuses.get(status, 0) + 1
    with lock:
        run.latencies.extend(local)
        run.errors.extend(errors)
        for k, v in statuses.items():
            run.statuses[k] = run.statuses.get(k, 0) + v


def measure(host: str, port: int, requests: Sequence[bytes], connections: int, limits: Limits) -> Run:
    """Open ``connections`` keep-alive connections and run them against the shared budget."""
    conns = [Connection(host, port, limits.timeout) for _ in range(connections)]
    for c in conns:
        try:
            c.connect()
        except OSError as exc:
            raise HttpError(f"connect: {exc}") from exc
    run, lock = Run(), threading.Lock()
    start = time.perf_counter()
    tickets = Tickets(limits, start)
    if connections == 1:
        _drive(conns[0], requests, tickets, run, lock)
    else:
        threads = [threading.Thread(target=_drive, args=(c, requests, tickets, run, lock)) for c in conns]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    run.seconds = time.perf_counter() - start
    for c in conns:
        c.close()
    return run


def warm_up(host: str, port: int, requests: Sequence[bytes], count: int, seconds: float, timeout: float) -> tuple[int, bytes | None, float]:
    """Send up to ``count`` requests (at least one) within ``seconds``; returns the first reply."""
    conn = Connection(host, port, timeout)
    first: tuple[int, bytes | None] = (0, None)
    first_ms = float("nan")
    deadline = time.perf_counter() + seconds
    try:
        for k in range(max(count, 1)):
            t0 = time.perf_counter_ns()
            status, body = conn.roundtrip(requests[k % len(requests)], keep_body=(k == 0))
            if k == 0:
                first, first_ms = (status, body), (time.perf_counter_ns() - t0) / 1e6
            if time.perf_counter() >= deadline:
                break
    except HttpError as exc:
        if first[0] == 0:
            return 0, str(exc).encode(), first_ms
    finally:
        conn.close()
    return first[0], first[1], first_ms


# --------------------------------------------------------------------------- scheduling cycles


class _PodOnly(msgspec.Struct):
    Pod: msgspec.Raw


class _FilterNames(msgspec.Struct):
    NodeNames: list[str] | None = None


@dataclass
class Cycles:
    """A closed loop of scheduling cycles on one connection, as kube-scheduler runs its
    extender: filter, then prioritize of the same pod over the nodes the filter passed."""

    host: str
    port: int
    filter_request: bytes
    prioritize_path: str
    pod: msgspec.Raw
    timeout: float
    first: JSON = field(default_factory=dict)

    @classmethod
    def from_body(cls, host: str, port: int, filter_path: str, prioritize_path: str, body: bytes,
                  timeout: float) -> Cycles:
        pod = msgspec.json.decode(body, type=_PodOnly).Pod
        return cls(host, port, build_request(filter_path, host, port, body), prioritize_path, pod, timeout)

    def prioritize_request(self, names: list[str]) -> bytes:
        body = msgspec.json.encode({"Pod": self.pod, "Nodes": None, "NodeNames": names})
        return build_request(self.prioritize_path, self.host, self.port, body)

    def cycle(self, conn: Connection, keep_first: bool = False) -> tuple[int, int, int, int]:
        """(status, filter ns, client ns in between, prioritize ns) of one cycle. The status
        is the filter's when it did not answer 200 (then nothing is prioritized), else the
        prioritize's."""
        t0 = time.perf_counter_ns()
        status, body = conn.roundtrip(self.filter_request, keep_body=True)
        t1 = time.perf_counter_ns()
        if status != 200 or not body:
            if keep_first and not self.first:
                self.first = summarize_reply("filter", status, body)
            return status or 0, t1 - t0, 0, 0
        names = _filter_names.decode(body).NodeNames or []
        request = self.prioritize_request(names)
        t2 = time.perf_counter_ns()
        status2, reply = conn.roundtrip(request, keep_body=keep_first)
        t3 = time.perf_counter_ns()
        if keep_first and not self.first:
            self.first = {**summarize_reply("filter", status, body),
                          "prioritize": summarize_reply("prioritize", status2, reply)}
        return status2, t1 - t0, t2 - t1, t3 - t2

    def warm(self, count: int, seconds: float) -> None:
        conn = Connection(self.host, self.port, self.timeout)
        deadline = time.perf_counter() + seconds
        try:
            for k in range(max(count, 1)):
                self.cycle(conn, keep_first=(k == 0))
                if time.perf_counter() >= deadline:
                    break
        except HttpError as exc:
            self.first = self.first or {"status": 0, "text": str(exc)}
        finally:
            conn.close()

    def measure(self, limits: Limits) -> JSON:
        conn = Connection(self.host, self.port, limits.timeout)
        try:
            conn.connect()
        except OSError as exc:
            raise HttpError(f"connect: {exc}") from exc
        run = Run()
        parts: dict[str, list[int]] = {"filter": [], "client": [], "prioritize": []}
        start = time.perf_counter()
        tickets = Tickets(limits, start)
        for _ in range(limits.max_requests + 1):  # bounded by the budget
            if tickets.take() is None:
                break
            try:
                done = self.cycle(conn)
            except HttpError as exc:
                run.errors.append(str(exc))
                if len(run.errors) > 10 or "refused" in str(exc):
                    break
                continue
            status, *times = done
            run.statuses[status] = run.statuses.get(status, 0) + 1
            run.latencies.append(sum(times))
            for key, ns in zip(parts, times, strict=True):
                parts[key].append(ns)
        run.seconds = time.perf_counter() - start
        conn.close()
        summary = run.summary(1)
        summary["cycles_per_s"] = summary["rps"]
        for key, values in parts.items():
            ms = sorted(x / 1e6 for x in values)
            summary[f"{key}_p50_ms"] = percentile(ms, 0.5)
        return summary


_filter_names = msgspec.json.Decoder(_FilterNames)


def write_results(path: Path, cases: list[JSON], client: Client) -> None:
    path.write_bytes(msgspec.json.encode({"cases": cases, "floors": client.floors,
                                          "rss_mode": client.probe.mode}))


# --------------------------------------------------------------------------- replies


def summarize_reply(verb: str, status: int, body: bytes | None) -> JSON:
    """What the server answered to the first request of a case (sanity, not timing)."""
    out: JSON = {"status": status, "bytes": len(body or b"")}
    if status != 200 or not body:
        out["text"] = (body or b"")[:300].decode("utf-8", "replace")
        return out
    try:
        reply = msgspec.json.decode(body)
    except msgspec.DecodeError as exc:
        out["text"] = f"undecodable reply: {exc}"
        return out
    out.update(_reply_fields(verb, reply))
    return out


def _reply_fields(verb: str, reply: Any) -> JSON:
    if verb == "filter" and isinstance(reply, dict):
        nodes = reply.get("Nodes") or {}
        passed = reply.get("NodeNames")
        n_passed = len(passed) if passed is not None else len(nodes.get("items") or [])
        return {"passed": n_passed, "failed": len(reply.get("FailedNodes") or {}),
                "unresolvable": len(reply.get("FailedAndUnresolvableNodes") or {}),
                "error": reply.get("Error", "")}
    if verb == "prioritize" and isinstance(reply, list):
        scores = [h.get("Score", 0) for h in reply if isinstance(h, dict)]
        return {"scored": len(scores), "max_score": max(scores, default=None)}
    if verb == "preempt" and isinstance(reply, dict):
        victims = reply.get("NodeNameToMetaVictims") or {}
        return {"nodes": len(victims), "error": reply.get("Error", "")}
    if isinstance(reply, dict):
        return {"error": reply.get("Error", "")}
    return {"shape": type(reply).__name__}


# --------------------------------------------------------------------------- RSS


class RssProbe:
    """Peak RSS of the server per case: VmHWM reset through /proc/PID/clear_refs, or, where
    that is not allowed, VmRSS sampled every 5 ms by a thread."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.mode = "VmHWM" if self._try_reset() else "sampled VmRSS"
        self._peak = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _status_kib(self, key: str) -> int:
        try:
            with open(f"/proc/{self.pid}/status", "rb") as f:
                for line in f:
                    if line.startswith(key.encode() + b":"):
                        return int(line.split()[1])
        except OSError:
            return 0
        return 0

    def _try_reset(self) -> bool:
        try:
            with open(f"/proc/{self.pid}/clear_refs", "w") as f:
                f.write("5")
            return True
        except OSError:
            return False

    def rss_kib(self) -> int:
        return self._status_kib("VmRSS")

    def start(self) -> None:
        if self.mode == "VmHWM":
            self._try_reset()
            return
        self._peak = self.rss_kib()
        self._stop.clear()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.005):
            self._peak = max(self._peak, self.rss_kib())

    def peak_kib(self) -> int:
        if self.mode == "VmHWM":
            return self._status_kib("VmHWM")
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        return max(self._peak, self.rss_kib())


# --------------------------------------------------------------------------- decode floor


def _decoders() -> dict[str, Callable[[bytes], Any]]:
    found: dict[str, Callable[[bytes], Any]] = {"msgspec": msgspec.json.decode}
    try:
        import orjson  # type: ignore[import-not-found]
    except ImportError:
        pass
    else:
        found["orjson"] = orjson.loads
    return found


def _time_decode(decode: Callable[[bytes], Any], body: bytes, pause_gc: bool) -> tuple[float, float]:
    """(decode ms, free ms) of one run; GC paused during the decode when ``pause_gc``."""
    if pause_gc:
        gc.disable()
    try:
        t0 = time.perf_counter_ns()
        obj = decode(body)
        t1 = time.perf_counter_ns()
    finally:
        if pause_gc:
            gc.enable()
    del obj
    t2 = time.perf_counter_ns()
    return (t1 - t0) / 1e6, (t2 - t1) / 1e6


def decode_floor(body: bytes, runs: int, seconds: float) -> JSON:
    """Median decode time of every available decoder, with the GC on (CPython defaults,
    start-up state frozen as a tuned server does) and paused around the call. The floor is
    the fastest of these medians."""
    results: list[JSON] = []
    for name, decode in _decoders().items():
        for pause in (False, True):
            _time_decode(decode, body, pause)  # warm-up
            times: list[tuple[float, float]] = []
            deadline = time.perf_counter() + seconds
            for k in range(runs):
                if k >= 3 and time.perf_counter() > deadline:
                    break
                times.append(_time_decode(decode, body, pause))
            results.append({
                "decoder": name, "gc": "paused" if pause else "on", "runs": len(times),
                "decode_ms": statistics.median(t for t, _ in times),
                "free_ms": statistics.median(f for _, f in times),
            })
    best = min(results, key=lambda r: r["decode_ms"])
    return {"ms": best["decode_ms"], "decoder": best["decoder"], "gc": best["gc"], "all": results}


# --------------------------------------------------------------------------- plan


@dataclass
class Client:
    plan: JSON
    limits: Limits
    probe: RssProbe
    floors: dict[str, JSON] = field(default_factory=dict)

    @property
    def host(self) -> str:
        return str(self.plan["host"])

    @property
    def port(self) -> int:
        return int(self.plan["port"])

    def requests_for(self, path: str, bodies: Sequence[bytes]) -> list[bytes]:
        return [build_request(path, self.host, self.port, b) for b in bodies]

    def load_and_measure(self, requests: Sequence[bytes]) -> JSON:
        return {f"c{c}": measure(self.host, self.port, requests, c, self.limits).summary(c)
                for c in self.plan["concurrency"]}

    def floor_for(self, key: str, bodies: Sequence[bytes], decode: bool = True) -> JSON:
        """The HTTP floor (``POST /_floor``) of these bodies and, with ``decode``, their decode floor."""
        if key not in self.floors:
            requests = self.requests_for(self.plan["floor_path"], bodies)
            self._warm(requests)
            http = self.load_and_measure(requests)
            dec = (decode_floor(bodies[0], int(self.plan["decode_runs"]), float(self.plan["decode_seconds"]))
                   if decode else None)
            self.floors[key] = {"http": http, "decode": dec}
        return self.floors[key]

    def _warm(self, requests: Sequence[bytes]) -> tuple[int, bytes | None, float]:
        return warm_up(self.host, self.port, requests, int(self.plan["warmup"]),
                       max(1.0, self.limits.max_seconds / 4), self.limits.timeout)

    def run_case(self, case: JSON) -> JSON:
        """Measure one case. Optional case keys: ``kind`` ("cycle": filter then prioritize,
        see `Cycles`), ``fresh_versions`` (new node resourceVersions in every request, see
        `FreshVersions`), ``floor`` ("full": HTTP and decode floors, the default; "http";
        "none": a server without ``/_floor``) and ``floor_key`` (default: ``body_key``)."""
        if case.get("kind") == "cycle":
            return self.run_cycles(case)
        bodies = load_bodies(Path(case["body_file"]), bool(case.get("multi")))
        requests: Sequence[bytes] = self.requests_for(case["path"], bodies)
        if case.get("fresh_versions"):
            requests = FreshVersions(requests[0])
        self.probe.start()
        rss_before = self.probe.rss_kib()
        status, reply, first_ms = self._warm(requests)
        try:
            server = self.load_and_measure(requests)
        except HttpError as exc:  # only a failed connect escapes a measurement
            raise ServerGone(f"server unreachable during {case['id']}: {exc}") from exc
        peak = self.probe.peak_kib()
        if not server_alive(self.probe.pid):
            raise ServerGone(f"server pid {self.probe.pid} exited during {case['id']}")
        del requests
        floor_key = self._floor(case, bodies)
        return {
            **case,
            "body_bytes": len(bodies[0]),
            "first_request_ms": first_ms,
            "reply": summarize_reply(case["verb"], status, reply),
            "server": server,
            "rss_before_kib": rss_before,
            "peak_rss_kib": peak,
            "rss_mode": self.probe.mode,
            "floor_key": floor_key,
        }

    def _floor(self, case: JSON, bodies: Sequence[bytes]) -> str | None:
        mode = case.get("floor", "full")
        if mode == "none":
            return None
        key = str(case.get("floor_key") or case["body_key"])
        self.floor_for(key, bodies, decode=(mode == "full"))
        return key

    def run_cycles(self, case: JSON) -> JSON:
        """Scheduling cycles (filter → prioritize over the passing nodes) on 1 connection."""
        body = Path(case["body_file"]).read_bytes()
        cycles = Cycles.from_body(self.host, self.port, case["path"], case["path2"], body, self.limits.timeout)
        self.probe.start()
        rss_before = self.probe.rss_kib()
        cycles.warm(int(self.plan["warmup"]), max(1.0, self.limits.max_seconds / 4))
        try:
            server = {"c1": cycles.measure(self.limits)}
        except HttpError as exc:
            raise ServerGone(f"server unreachable during {case['id']}: {exc}") from exc
        peak = self.probe.peak_kib()
        if not server_alive(self.probe.pid):
            raise ServerGone(f"server pid {self.probe.pid} exited during {case['id']}")
        return {
            **case,
            "body_bytes": len(body),
            "reply": cycles.first,
            "server": server,
            "rss_before_kib": rss_before,
            "peak_rss_kib": peak,
            "rss_mode": self.probe.mode,
            "floor_key": None,
        }


def load_bodies(path: Path, multi: bool) -> list[bytes]:
    data = path.read_bytes()
    if not multi:
        return [data]
    return [b for b in data.split(b"\n") if b]


def pin_to(cpu: int | None) -> None:
    if cpu is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {cpu})


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        print("usage: python -m bench.client PLAN.json RESULT.json", file=sys.stderr)
        return 2
    plan = msgspec.json.decode(Path(args[0]).read_bytes())
    pin_to(plan.get("cpu"))
    limits = Limits(int(plan["max_requests"]), float(plan["max_seconds"]),
                    int(plan["min_requests"]), float(plan["timeout"]))
    client = Client(plan, limits, RssProbe(int(plan["server_pid"])))
    gc.collect()
    gc.freeze()
    cases: list[JSON] = []
    for case in plan["cases"]:
        try:
            result = client.run_case(case)
        except ServerGone as exc:
            print(f"  {exc}", file=sys.stderr, flush=True)
            write_results(Path(args[1]), cases, client)
            return 3
        cases.append(result)
        c1 = result["server"].get("c1", {})
        print(f"  {case['id']}: p50 {c1.get('p50_ms', float('nan')):.3f} ms, "
              f"{c1.get('rps', 0):.0f} req/s, reply {result['reply']}", file=sys.stderr, flush=True)
        write_results(Path(args[1]), cases, client)
    write_results(Path(args[1]), cases, client)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
