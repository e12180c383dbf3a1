"""`extender serve`'s resident memory under legal but huge inputs and under fuzzing, measured
on the real process (`/proc/<pid>/status`): caches are bounded in bytes, not only in
entries, and what a burst of requests allocated goes back."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import httpx
import pytest

from tests.conftest import FIXTURES, ROOT, fixture_bytes
from tests.contract.fuzz import Mutator
from tests.e2e.test_serve import free_port, wait_ready
from tests.polling import stop_process

pytestmark = pytest.mark.slow

SEEDS = {
    "filter": ["filter-names.request.json", "filter-nodes.request.json"],
    "prioritize": ["prioritize-names.request.json"],
    "preempt": ["preempt-meta.request.json", "preempt-full.request.json"],
    "bind": ["bind.request.json"],
}
#: Fuzzed payloads per verb and round (four verbs, three rounds).
PER_VERB = 800


@dataclass
class Served:
    url: str
    pid: int

    def rss_mib(self) -> float:
        with open(f"/proc/{self.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        raise AssertionError("no VmRSS")


@pytest.fixture
def served() -> Iterator[Served]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "extender", "serve", "--port", str(port), "--nodes-form",
         "--policy", str(FIXTURES / "policy-leastallocated.json")],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, proc)
        with httpx.Client(base_url=url, timeout=30) as client:  # warm every verb up
            for verb, names in SEEDS.items():
                for name in names:
                    assert client.post(f"/{verb}", content=fixture_bytes(name)).status_code == 200
        yield Served(url, proc.pid)
    finally:
        stop_process(proc)


def test_huge_legal_pods_are_not_kept(served: Served) -> None:
    # etcd takes objects up to ~1.5 MB: 300 distinct pods carrying a 1.4 MB annotation, each
    # filtered and prioritized. Nothing the engine reads is large, and no cache keeps them.
    base = json.loads(fixture_bytes("filter-names.request.json"))
    before = served.rss_mib()
    with httpx.Client(base_url=served.url, timeout=30) as client:
        for i in range(300):
            meta = base["Pod"]["metadata"]
            body = json.dumps({**base, "Pod": {**base["Pod"], "metadata": {
                **meta, "name": f"big-{i}", "uid": f"uid-big-{i}",
                "annotations": {"blob": f"{i:05d}" + "x" * 1_400_000}}}}).encode()
            for verb in ("filter", "prioritize"):
                assert client.post(f"/{verb}", content=body).status_code == 200
    grown = served.rss_mib() - before
    assert grown < 200, f"RSS grew by {grown:.0f} MiB"
    print(f"\n300 pods of 1.4 MB: RSS {before:.0f} -> {before + grown:.0f} MiB")


def test_memory_comes_back_after_fuzz_rounds(served: Served) -> None:
    before = served.rss_mib()
    rounds = []
    # A plain http.client connection per sending thread: httpx's own work per request was
    # three times the server's here, and only the server's memory is measured.
    local = threading.local()
    port = int(served.url.rsplit(":", 1)[1])
    connections: list[http.client.HTTPConnection] = []

    def send(job: tuple[str, bytes]) -> int:
        verb, body = job
        if getattr(local, "conn", None) is None:
            local.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            connections.append(local.conn)
        try:
            local.conn.request("POST", f"/{verb}", body, {"Content-Type": "application/json"})
            response = local.conn.getresponse()
            response.read()
            return response.status
        except (OSError, http.client.HTTPException):
            local.conn.close()  # a cut connection is an answer too; health is checked below
            return 0

    answered = 0
    try:
        for r in range(3):
            jobs = []
            for verb, names in SEEDS.items():
                mutator = Mutator([fixture_bytes(n) for n in names], seed=r * 10 + len(verb))
                jobs += [(verb, body) for _, body in zip(range(PER_VERB), mutator, strict=False)]
            with ThreadPoolExecutor(8) as pool:
                answered += sum(status > 0 for status in pool.map(send, jobs))
            rounds.append(served.rss_mib())
    finally:
        for conn in connections:
            conn.close()
    assert answered > 0.9 * 3 * PER_VERB * len(SEEDS), answered
    assert httpx.get(f"{served.url}/healthz", timeout=10).status_code == 200
    assert rounds[-1] <= 1.5 * before, f"RSS {before:.0f} MiB before, {rounds} after rounds"
    print(f"\nRSS {before:.0f} MiB, after three fuzz rounds of {PER_VERB * len(SEEDS)}: "
          f"{', '.join(f'{r:.0f}' for r in rounds)} MiB")
