"""Gangs of real ML size at default settings: kube-scheduler binds each pod of a gang in its own
goroutine, on its own connection, so a PodGroup of N holds N connections at Permit until the
last member arrives. They must all be accepted (the connection cap is for everything else),
bind whole, and leave the other verbs answering meanwhile."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import ROOT
from tests.e2e.test_serve import free_port, wait_ready
from tests.polling import stop_process

GROUP = "scheduling.x-k8s.io/pod-group"
POLICY = """
apiVersion: scheduler-extender/v1
kind: ExtenderPolicy
plugins:
  filter:
    enabled: [{name: NodeResourcesFit}, {name: Coscheduling}]
pluginConfig:
  - name: Coscheduling
    args: {permitWaitingTimeSeconds: 60, podGroupBackoffSeconds: 0}
"""


def _snapshot(path: Path, members: int) -> list[str]:
    nodes = [f"n{i:02d}" for i in range(members // 100 + 1)]
    items: list[dict] = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "uid": f"uid-{n}"},
         "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"}}}
        for n in nodes]
    items.append({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                  "metadata": {"name": "train", "namespace": "ml", "uid": "uid-pg"},
                  "spec": {"minMember": members}})
    for i in range(members):
        items.append({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": f"w{i}", "namespace": "ml", "uid": f"uid-w{i}",
                                   "labels": {GROUP: "train"}},
                      "spec": {"containers": [{"name": "c", "resources": {
                          "requests": {"cpu": "10m", "memory": "16Mi"}}}]}})
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return nodes


async def _post(port: int, path: str, body: bytes, timeout: float = 120.0) -> tuple[int, bytes]:
    """One request on a connection of its own, as each of kube-scheduler's binding goroutines
    makes it; (status, body)."""
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 30)
    try:
        writer.write(b"POST %s HTTP/1.1\r\nHost: extender\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\nConnection: close\r\n\r\n" % (path.encode(),
                                                                           len(body)) + body)
        await writer.drain()
        reply = await asyncio.wait_for(reader.read(), timeout)
    finally:
        writer.close()
    head, _, payload = reply.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), payload


async def _probe(port: int, nodes: list[str], stop: asyncio.Event,
                 opened: asyncio.Event) -> list[float]:
    """Filter calls for an unrelated pod, one every 50 ms, while the gang is held, on a
    keep-alive connection opened before (as kube-scheduler's idle ones are): latencies."""
    body = json.dumps({"Pod": {"metadata": {"name": "web", "namespace": "default",
                                            "uid": "uid-web"},
                               "spec": {"containers": [{"name": "c"}]}},
                       "Nodes": None, "NodeNames": nodes}).encode()
    latencies = []
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10,
                                 limits=httpx.Limits(max_connections=1)) as client:
        while not stop.is_set():
            started = time.monotonic()
            reply = await client.post("/filter", content=body)
            assert reply.status_code == 200 and reply.json()["Error"] == "", reply.content
            latencies.append(time.monotonic() - started)
            opened.set()
            await asyncio.sleep(0.05)  # pacing the probes, not waiting for anything
    return latencies


@pytest.mark.alone  # the filter probes' latency is bounded
@pytest.mark.parametrize("members", [600, pytest.param(2000, marks=pytest.mark.slow)])
def test_a_gang_bigger_than_the_connection_cap_binds_whole(tmp_path: Path, members: int) -> None:
    nodes = _snapshot(tmp_path / "cluster.json", members)
    (tmp_path / "policy.yaml").write_text(POLICY)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "extender", "serve", "--port", str(port),
         "--snapshot", str(tmp_path / "cluster.json"), "--policy", str(tmp_path / "policy.yaml")],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, proc)

        async def run() -> tuple[list[tuple[int, bytes]], list[float], float]:
            stop, opened = asyncio.Event(), asyncio.Event()
            probes = asyncio.create_task(_probe(port, nodes, stop, opened))
            await opened.wait()  # the probe's connection is open first, as kube-scheduler's
            started = time.monotonic()
            binds = [asyncio.create_task(_post(port, "/bind", json.dumps({
                "PodName": f"w{i}", "PodNamespace": "ml", "PodUID": f"uid-w{i}",
                "Node": nodes[i // 100]}).encode())) for i in range(members)]
            replies = await asyncio.gather(*binds)
            held = time.monotonic() - started  # the first bind sent to the last answered
            stop.set()
            return replies, await probes, held
        replies, latencies, held = asyncio.run(run())
    finally:
        stop_process(proc)
    assert [status for status, _ in replies] == [200] * members
    errors = [json.loads(body)["Error"] for _, body in replies]
    assert errors == [""] * members, sorted(set(errors))[:3]
    # The filter probes went on answering while the binds were held: none waited for the
    # group's release, as a probe stalled behind the held binds would (about the whole hold).
    # Measured against the hold of the same run, not the clock: both stretch with the load.
    # (The slowest probe takes 0.4-0.55 of the hold, queued behind the binds' own requests.)
    assert latencies and max(latencies) < 0.75 * held, (max(latencies), held)
    print(f"\n{members} held binds, all bound in {held:.2f} s; filter probes: {len(latencies)}, "
          f"slowest {max(latencies) * 1000:.0f} ms")
