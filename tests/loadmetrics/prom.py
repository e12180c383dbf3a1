"""A real Prometheus server for the tests, on loopback, with deterministic per-node series.

`PrometheusServer` writes OpenMetrics samples of load-watcher's two recording rules
(`instance:node_cpu:ratio`, `instance:node_memory_utilisation:ratio`) for each node of
`LOAD`, every 15 s over the last five minutes, the newest `newest_age` seconds (15) before the
backfill (`newest_sample`; a `[15m]` window holds all of them for the next ten minutes, and
no sample comes after: to the extender the series look like those of an exporter that
stopped at `newest_sample`), backfills them with `promtool tsdb create-blocks-from openmetrics`, and starts
`prometheus` on a free loopback port with a configuration that scrapes nothing. Each node's
samples alternate between two values, so over the window the average is their mean and the
(population) standard deviation half their difference, exactly: the values are dyadic.

Needs the `prometheus` and `promtool` binaries (Debian's `prometheus` package; `.ci/run`
installs it); `require_prometheus()` skips, naming the package, where they are missing.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.polling import free_port, stop_process, until

CPU_RULE = "instance:node_cpu:ratio"
MEMORY_RULE = "instance:node_memory_utilisation:ratio"

#: node -> {rule: (low, high)}: the samples alternate low, high, low, ...
LOAD: dict[str, dict[str, tuple[float, float]]] = {
    "node-a": {CPU_RULE: (0.0625, 0.1875), MEMORY_RULE: (0.5, 0.5)},
    "node-b": {CPU_RULE: (0.125, 0.375), MEMORY_RULE: (0.25, 0.75)},
    "node-c": {CPU_RULE: (0.5, 0.75), MEMORY_RULE: (0.875, 0.875)},
}
#: In the cluster, but Prometheus has no series for it.
NODE_WITHOUT_SERIES = "node-d"
SAMPLES = 20        # even: as many lows as highs
STEP_SECONDS = 15


def expected_percent(node: str, rule: str) -> tuple[float, float]:
    """(average %, standard deviation %) of `rule` for `node` over the window."""
    low, high = LOAD[node][rule]
    return (low + high) / 2 * 100, (high - low) / 2 * 100


def require_prometheus() -> tuple[str, str]:
    prometheus, promtool = shutil.which("prometheus"), shutil.which("promtool")
    if prometheus is None or promtool is None:
        pytest.skip("the Prometheus tests need the prometheus and promtool binaries: install "
                    "Debian's `prometheus` package (apt-get install prometheus; .ci/run does)")
    return prometheus, promtool


def openmetrics(end: int) -> str:
    """The samples, the newest at `end` (Unix seconds)."""
    lines: list[str] = []
    for rule in (CPU_RULE, MEMORY_RULE):
        lines.append(f"# TYPE {rule} gauge")
        for node, rules in LOAD.items():
            low, high = rules[rule]
            for i in range(SAMPLES):
                at = end - (SAMPLES - 1 - i) * STEP_SECONDS
                lines.append(f'{rule}{{instance="{node}"}} {high if i % 2 else low} {at}')
        # A series that names no node: left out by the source.
        for i in range(SAMPLES):
            at = end - (SAMPLES - 1 - i) * STEP_SECONDS
            lines.append(f'{rule}{{job="orphan"}} 0.5 {at}')
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


class PrometheusServer:
    """`prometheus` over a backfilled TSDB in `workdir`; `start()`, `stop()`, `url`."""

    def __init__(self, workdir: Path, newest_age: int = STEP_SECONDS) -> None:
        self.prometheus, self.promtool = require_prometheus()
        self.workdir = workdir
        #: Unix time of every series' newest sample.
        self.newest_sample = int(time.time()) - newest_age
        self.data = workdir / "data"
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = workdir / "prometheus.log"
        self._backfill()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _backfill(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        source = self.workdir / "load.om"
        source.write_text(openmetrics(self.newest_sample))
        done = subprocess.run([self.promtool, "tsdb", "create-blocks-from", "openmetrics",
                               str(source), str(self.data)], capture_output=True, text=True,
                              timeout=120, check=False)
        assert done.returncode == 0, f"promtool failed:\n{done.stdout}{done.stderr}"
        (self.workdir / "prometheus.yml").write_text("global:\n  scrape_interval: 1h\n")

    def start(self) -> PrometheusServer:
        self.port = free_port()
        log = self.log.open("ab")
        self.proc = subprocess.Popen(
            [self.prometheus, f"--storage.tsdb.path={self.data}",
             f"--web.listen-address=127.0.0.1:{self.port}",
             f"--config.file={self.workdir / 'prometheus.yml'}"],
            stdout=log, stderr=subprocess.STDOUT, cwd=self.workdir)
        log.close()

        def ready() -> bool:
            assert self.proc is not None and self.proc.poll() is None, self.log.read_text()
            try:
                return httpx.get(f"{self.url}/-/ready", timeout=2).status_code == 200
            except httpx.TransportError:
                return False

        until(ready, "Prometheus to be ready", timeout=60, interval=0.1)
        return self

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        stop_process(proc, 15)
