"""A stand-in load-watcher for the load-aware rows: `GET /watcher` on loopback.

It answers as paypal/load-watcher's service does (`watcher.WatcherMetrics` JSON: the newest
15-minute window, CPU and Memory `AVG`/`STD` per node, percentages), for every node of the
generated cluster, with deterministic per-node values and a fresh `timestamp` on each request,
so the extender's refresher keeps re-reading and replacing a full snapshot while the client
measures.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import msgspec

from bench import generate


def node_loads(names: Sequence[str], seed: int) -> list[tuple[str, float, float, float, float]]:
    """(node, cpu avg %, cpu std %, memory avg %, memory std %) per node, deterministic."""
    rng = random.Random(seed)
    return [(name, round(rng.uniform(5, 90), 2), round(rng.uniform(0, 15), 2),
             round(rng.uniform(10, 85), 2), round(rng.uniform(0, 10), 2)) for name in names]


def watcher_body(loads: Sequence[tuple[str, float, float, float, float]], now: float) -> bytes:
    end = int(now)

    def metric(name: str, kind: str, operator: str, value: float) -> dict[str, Any]:
        return {"name": name, "type": kind, "operator": operator, "rollup": "15m", "value": value}

    return msgspec.json.encode({
        "timestamp": end, "window": {"duration": "15m", "start": end - 900, "end": end},
        "source": "Prometheus",
        "data": {"NodeMetricsMap": {name: {"metrics": [
            metric("cpu_running_avg", "CPU", "AVG", cpu),
            metric("cpu_running_std", "CPU", "STD", cpu_std),
            metric("mem_running_avg", "Memory", "AVG", mem),
            metric("mem_running_std", "Memory", "STD", mem_std)]}
            for name, cpu, cpu_std, mem, mem_std in loads}}})


class FakeLoadWatcher:
    """`with FakeLoadWatcher(spec) as watcher:` serves on `watcher.address` until the block ends."""

    def __init__(self, spec: generate.ClusterSpec, host: str = "127.0.0.1") -> None:
        loads = node_loads([generate.node_name(i) for i in range(spec.n_nodes)], spec.seed)
        self.requests = 0
        outer = self
        # One body per second (its timestamp): the watcher itself stays cheap beside the
        # server and the client sharing the machine.
        cached: list[Any] = [None, b""]

        def body_now() -> bytes:
            second = int(time.time())
            if cached[0] != second:
                cached[:] = [second, watcher_body(loads, second)]
            return cached[1]

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                if self.path.split("?", 1)[0] != "/watcher":
                    self.send_error(404)
                    return
                body = body_now()
                outer.requests += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer((host, 0), Handler)
        self._server.daemon_threads = True
        self.address = f"http://{host}:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-load-watcher",
                                        daemon=True)

    def __enter__(self) -> FakeLoadWatcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
