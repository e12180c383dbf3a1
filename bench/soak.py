"""Soak: the real server in live mode for N minutes under the four verbs and pod churn; RSS over time.

    python -m bench.soak                          # 30 minutes, 1000 nodes, 4 clients
    python -m bench.soak --duration 120 --warmup 30 --sample-interval 5   # a quick look

Everything stays on loopback and stops by itself after ``--duration`` seconds:

1. a fake Kubernetes API server (``tests/kube/fake_apiserver.py``: list, watch, bookmarks,
   ``pods/binding``) holding ``--nodes`` nodes, ``--pods-per-node`` running pods, PDBs,
   PriorityClasses, namespaces, a Service and ReplicaSets;
2. ``python -m extender serve --kubeconfig …`` against it (informers, binder: live mode), killed
   with this process if this process dies;
3. ``--clients`` threads, each in a loop: create a pending pod in the API server, then
   ``filter`` (NodeNames, a random sample of ``--candidates`` nodes), ``prioritize`` the nodes
   that passed, ``bind`` to the best, and every fourth round ``preempt`` on a few nodes;
4. churn: bound pods of the soak beyond ``--live-pods`` are deleted oldest first, a node's
   labels change every few seconds (new node views, so their memos go), workloads roll to a new
   pod-template-hash every minute (new label sets and pod signatures);
5. every ``--sample-interval`` seconds: the server's RSS (``/proc/PID/status``) and its
   ``extender_cache_entries`` gauges.

The report (stdout, and ``bench/results/soak-<UTC>.json``/``.md``) gives RSS over time, RSS at
the end of the warm-up (``--warmup`` seconds), the growth from there to the end and to the
peak, requests and failures per verb, and the cache sizes at the end. Nothing fails on a
number; a run with failed requests exits 1.
"""

from __future__ import annotations

import argparse
import ctypes
import http.client
import itertools
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from extender import cliargs

# The repository's loopback API server (a test double held to the real API's behaviour).
from tests.kube.fake_apiserver import FakeApiServer

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = Path(__file__).resolve().parent / "results"
HOST = "127.0.0.1"
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
WORKLOADS = 40


# --------------------------------------------------------------------------- options


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__.split("\n")[0])
    p.add_argument("--duration", type=cliargs.positive_float, default=1800.0, help="seconds of load (default: 1800)")
    p.add_argument("--warmup", type=cliargs.non_negative_float, default=300.0,
                   help="seconds after which RSS growth is measured (default: 300)")
    p.add_argument("--sample-interval", type=cliargs.positive_float, default=10.0, help="seconds between samples")
    p.add_argument("--nodes", type=cliargs.positive_int, default=1000,
                   help="nodes of the fake API server's cluster (default 1000)")
    p.add_argument("--pods-per-node", type=cliargs.count, default=10, help="running pods at start per node")
    p.add_argument("--clients", type=cliargs.positive_int, default=4,
                   help="clients sending filter, prioritize and bind at once (default 4)")
    p.add_argument("--candidates", type=cliargs.positive_int, default=300, help="nodes per filter request")
    p.add_argument("--live-pods", type=cliargs.positive_int, default=3000,
                   help="bound soak pods kept before the oldest are deleted")
    p.add_argument("--seed", type=int, default=7, help="the seed (default 7)")
    p.add_argument("--policy", type=Path, default=REPO / "config" / "policy.yaml",
                   help="the served policy (default config/policy.yaml)")
    p.add_argument("--out-dir", type=Path, default=DEFAULT_OUT,
                   help="where the result JSON goes (default %(default)s)")
    p.add_argument("--server-arg", action="append", default=[], metavar="ARG",
                   help="extra argument for `extender serve` (repeatable)")
    return p.parse_args(argv)


# --------------------------------------------------------------------------- cluster


def node(i: int, epoch: int = 0) -> dict[str, Any]:
    name = f"node-{i:05d}"
    spot = i % 7 == 0
    return {
        "kind": "Node",
        "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": ZONES[i % 3],
            "node.kubernetes.io/instance-type": ("m5.xlarge", "m5.2xlarge", "c5.4xlarge")[i % 3],
            "disktype": "ssd" if i % 2 else "hdd", "soak/epoch": str(epoch)}},
        "spec": {"taints": [{"key": "spot", "value": "true", "effect": "PreferNoSchedule"}]
                 if spot else []},
        "status": {
            "allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"},
            "capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"},
            "images": [{"names": [f"registry.example.com/app-{j}:v1"], "sizeBytes": 50_000_000 * (j + 1)}
                       for j in range(i % 5, i % 5 + 6)],
        },
    }


def pod(name: str, workload: int, revision: int, node_name: str = "", priority: int = 0,
        rng: random.Random | None = None) -> dict[str, Any]:
    rng = rng or random.Random(name)
    cpu = ("100m", "250m", "500m")[workload % 3]
    memory = ("128Mi", "512Mi", "1Gi")[workload % 3]
    spec: dict[str, Any] = {
        "schedulerName": "extender-scheduler",
        "priority": priority,
        "containers": [{"name": "app", "image": f"registry.example.com/app-{workload % 9}:v1",
                        "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
    }
    if workload % 4 == 0:
        spec["tolerations"] = [{"key": "spot", "operator": "Exists", "effect": "PreferNoSchedule"}]
    if workload % 5 == 0:
        spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "preference": {"matchExpressions": [
                {"key": "disktype", "operator": "In", "values": ["ssd"]}]}}]}}
    if node_name:
        spec["nodeName"] = node_name
    return {"kind": "Pod",
            "metadata": {"name": name, "namespace": f"team-{workload % 4}",
                         "labels": {"app": f"w{workload}", "pod-template-hash": f"r{revision}"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                              "name": f"w{workload}-r{revision}", "uid": f"rs-{workload}",
                                              "controller": True}]},
            "spec": spec, "status": {"phase": "Running" if node_name else "Pending"}}


def populate(server: FakeApiServer, opts: argparse.Namespace) -> dict[str, list[str]]:
    """The starting cluster; returns node name -> uids of the pods running there."""
    rng = random.Random(opts.seed)
    for name, value in (("low", 0), ("default", 1000), ("high", 100_000)):
        server.put({"kind": "PriorityClass", "metadata": {"name": name}, "value": value})
    for team in range(4):
        server.put({"kind": "Namespace", "metadata": {"name": f"team-{team}",
                                                      "labels": {"team": str(team)}}})
        server.put({"kind": "Service", "metadata": {"name": "web", "namespace": f"team-{team}"},
                    "spec": {"selector": {"app": f"w{team}"}}})
    for w in range(WORKLOADS):
        server.put({"kind": "ReplicaSet", "metadata": {"name": f"w{w}-r0", "namespace": f"team-{w % 4}"},
                    "spec": {"selector": {"matchLabels": {"app": f"w{w}"}}}})
        if w % 3 == 0:
            server.put({"kind": "PodDisruptionBudget",
                        "metadata": {"name": f"w{w}", "namespace": f"team-{w % 4}"},
                        "spec": {"selector": {"matchLabels": {"app": f"w{w}"}}, "minAvailable": 1},
                        "status": {"disruptionsAllowed": w % 2}})
    on_node: dict[str, list[str]] = {}
    for i in range(opts.nodes):
        server.put(node(i))
    for i in range(opts.nodes):
        name = f"node-{i:05d}"
        for k in range(opts.pods_per_node):
            stored = server.put(pod(f"run-{i}-{k}", rng.randrange(WORKLOADS), 0, name, rng=rng))
            on_node.setdefault(name, []).append(stored["metadata"]["uid"])
    return on_node


# --------------------------------------------------------------------------- server


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:
    # The server must not outlive the soak, even if the soak is killed.
    with_prctl = ctypes.CDLL(None, use_errno=True)
    with_prctl.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def start_server(kubeconfig: Path, port: int, opts: argparse.Namespace, log: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "extender", "serve", "--host", HOST, "--port", str(port),
           "--kubeconfig", str(kubeconfig), "--policy", str(opts.policy), "--log-level", "warning",
           *opts.server_arg]
    with log.open("wb") as out:
        return subprocess.Popen(cmd, cwd=REPO, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)


def status_kib(pid: int, field_name: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field_name + ":"):
                return int(line.split()[1])
    return 0


_CACHE_LINE = re.compile(r'^extender_cache_entries\{cache="([^"]+)"\} ([0-9.e+]+)$', re.M)


def scrape(port: int) -> tuple[dict[str, int], str]:
    conn = http.client.HTTPConnection(HOST, port, timeout=10)
    try:
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode()
    finally:
        conn.close()
    return {name: int(float(value)) for name, value in _CACHE_LINE.findall(text)}, text


def wait_ready(port: int, proc: subprocess.Popen, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode}")
        try:
            conn = http.client.HTTPConnection(HOST, port, timeout=2)
            conn.request("GET", "/readyz")
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit("the server did not become ready")


# --------------------------------------------------------------------------- load


@dataclass
class Shared:
    server: FakeApiServer
    port: int
    opts: argparse.Namespace
    nodes: list[str]
    on_node: dict[str, list[str]]
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    bound: deque[tuple[str, str]] = field(default_factory=deque)  # (namespace, name), oldest first
    revision: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)
    failure_samples: list[str] = field(default_factory=list)
    names: itertools.count = field(default_factory=itertools.count)


def post(conn: http.client.HTTPConnection, path: str, body: bytes) -> tuple[int, Any]:
    conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
    reply = conn.getresponse()
    return reply.status, json.loads(reply.read())


def client(shared: Shared, seed: int) -> None:
    rng = random.Random(seed)
    conn = http.client.HTTPConnection(HOST, shared.port, timeout=30)
    rounds = 0
    while not shared.stop.is_set():
        rounds += 1
        try:
            one_round(shared, conn, rng, preempt=rounds % 4 == 0)
        except (OSError, http.client.HTTPException, ValueError) as exc:
            shared.failures["transport"] += 1
            note(shared, f"transport: {type(exc).__name__}: {exc}")
            conn.close()
            conn = http.client.HTTPConnection(HOST, shared.port, timeout=30)
            time.sleep(0.1)
    conn.close()


def note(shared: Shared, text: str) -> None:
    with shared.lock:
        if len(shared.failure_samples) < 20:
            shared.failure_samples.append(text[:300])


def one_round(shared: Shared, conn: http.client.HTTPConnection, rng: random.Random,
              preempt: bool) -> None:
    server = shared.server
    name = f"soak-{next(shared.names)}"
    workload = rng.randrange(WORKLOADS)
    stored = server.put(pod(name, workload, shared.revision, priority=rng.choice((0, 1000)), rng=rng))
    wire_pod = {k: v for k, v in stored.items() if k not in ("kind", "apiVersion")}
    candidates = rng.sample(shared.nodes, min(shared.opts.candidates, len(shared.nodes)))
    args = json.dumps({"Pod": wire_pod, "Nodes": None, "NodeNames": candidates}).encode()

    status, reply = post(conn, "/filter", args)
    count(shared, "filter", status, reply)
    passed = (reply.get("NodeNames") or []) if isinstance(reply, dict) else []
    status, scores = post(conn, "/prioritize", json.dumps(
        {"Pod": wire_pod, "Nodes": None, "NodeNames": passed or candidates[:10]}).encode())
    count(shared, "prioritize", status, scores if isinstance(scores, dict) else {})
    if preempt:
        victims = {}
        for node_name in rng.sample(shared.nodes, 5):
            uids = shared.on_node.get(node_name, [])[:2]
            victims[node_name] = {"Pods": [{"UID": u} for u in uids], "NumPDBViolations": 0}
        status, reply = post(conn, "/preempt", json.dumps(
            {"Pod": {**wire_pod, "spec": {**wire_pod["spec"], "priority": 100_000}},
             "NodeNameToVictims": None, "NodeNameToMetaVictims": victims}).encode())
        count(shared, "preempt", status, reply)
    if isinstance(scores, list) and scores:
        target = max(scores, key=lambda s: s["Score"])["Host"]
        status, reply = post(conn, "/bind", json.dumps({
            "PodName": name, "PodNamespace": stored["metadata"]["namespace"],
            "PodUID": stored["metadata"]["uid"], "Node": target}).encode())
        count(shared, "bind", status, reply)
        with shared.lock:
            shared.bound.append((stored["metadata"]["namespace"], name))
    else:
        server.delete("Pod", stored["metadata"]["namespace"], name)


def count(shared: Shared, verb: str, status: int, reply: Any) -> None:
    with shared.lock:
        shared.counts[verb] += 1
        error = reply.get("Error") if isinstance(reply, dict) else None
        if status != 200 or error:
            shared.failures[verb] += 1
            if len(shared.failure_samples) < 20:
                shared.failure_samples.append(f"{verb} {status}: {str(reply)[:200]}")


def churn(shared: Shared, rng: random.Random) -> None:
    """Delete the oldest bound soak pods, change node labels, roll workloads."""
    server, opts = shared.server, shared.opts
    epoch = itertools.count(1)
    next_node_change = next_roll = time.monotonic()
    while not shared.stop.wait(0.05):
        with shared.lock:
            gone = [shared.bound.popleft() for _ in range(max(0, len(shared.bound) - opts.live_pods))]
        for namespace, name in gone:
            server.delete("Pod", namespace, name)
        now = time.monotonic()
        if now >= next_node_change:
            i = rng.randrange(len(shared.nodes))
            server.put(node(i, next(epoch)))
            next_node_change = now + 2.0
        if now >= next_roll:
            shared.revision += 1
            next_roll = now + 60.0


# --------------------------------------------------------------------------- report


def growth(samples: list[dict[str, Any]], warmup: float) -> dict[str, Any]:
    after = [s for s in samples if s["t"] >= warmup]
    if not after:
        return {}
    base = after[0]["rss_mib"]
    return {"warmup_rss_mib": base, "final_rss_mib": after[-1]["rss_mib"],
            "peak_rss_mib": max(s["rss_mib"] for s in after),
            "growth_percent": round(100 * (after[-1]["rss_mib"] - base) / base, 2),
            "peak_growth_percent": round(100 * (max(s["rss_mib"] for s in after) - base) / base, 2)}


def markdown(result: dict[str, Any]) -> str:
    opts = result["options"]
    g = result["growth"]
    lines = [
        f"Soak: {opts['duration']:g} s, {opts['nodes']} nodes, {opts['clients']} clients, "
        f"warm-up {opts['warmup']:g} s; {result['python']}",
        "",
        "| minute | RSS MiB | requests so far |",
        "| --- | --- | --- |",
    ]
    step = max(1, round(60 / opts["sample_interval"]))
    for s in result["samples"][::step] + result["samples"][-1:]:
        lines.append(f"| {s['t'] / 60:.1f} | {s['rss_mib']:.1f} | {s['requests']} |")
    lines += ["", f"RSS after warm-up: {g.get('warmup_rss_mib', 0):.1f} MiB; at the end "
              f"{g.get('final_rss_mib', 0):.1f} MiB ({g.get('growth_percent', 0):+.2f} %); peak "
              f"{g.get('peak_rss_mib', 0):.1f} MiB ({g.get('peak_growth_percent', 0):+.2f} %).",
              f"Requests: {dict(result['requests'])}; failures: {dict(result['failures'])}.",
              f"Caches at the end: {result['caches_end']}"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    rng = random.Random(opts.seed)
    opts.out_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="soak-"))
    samples: list[dict[str, Any]] = []
    with FakeApiServer(history=5_000, bookmark_interval=2.0) as api:
        print(f"populating {opts.nodes} nodes ...", file=sys.stderr, flush=True)
        on_node = populate(api, opts)
        kubeconfig = api.write_kubeconfig(work / "kubeconfig")
        port = free_port()
        proc = start_server(kubeconfig, port, opts, work / "server.log")
        shared = Shared(api, port, opts, [f"node-{i:05d}" for i in range(opts.nodes)], on_node)
        threads: list[threading.Thread] = []
        try:
            wait_ready(port, proc)
            print(f"server ready (pid {proc.pid}); load for {opts.duration:g} s", file=sys.stderr,
                  flush=True)
            threads = [threading.Thread(target=client, args=(shared, opts.seed * 100 + i), daemon=True)
                       for i in range(opts.clients)]
            threads.append(threading.Thread(target=churn, args=(shared, rng), daemon=True))
            for thread in threads:
                thread.start()
            started = time.monotonic()
            while (elapsed := time.monotonic() - started) < opts.duration:
                if proc.poll() is not None:
                    raise SystemExit(f"the server exited with {proc.returncode}")
                caches, _ = scrape(port)
                with shared.lock:
                    requests = sum(shared.counts.values())
                samples.append({"t": round(elapsed, 1), "rss_mib": status_kib(proc.pid, "VmRSS") / 1024,
                                "requests": requests, "caches": caches})
                print(f"  {elapsed:7.0f} s  RSS {samples[-1]['rss_mib']:7.1f} MiB  "
                      f"{requests} requests", file=sys.stderr, flush=True)
                time.sleep(min(opts.sample_interval, max(0.0, opts.duration - elapsed)))
            shared.stop.set()
            for thread in threads:
                thread.join(30)
            caches_end, _ = scrape(port)
            samples.append({"t": round(time.monotonic() - started, 1),
                            "rss_mib": status_kib(proc.pid, "VmRSS") / 1024,
                            "requests": sum(shared.counts.values()), "caches": caches_end})
            peak = status_kib(proc.pid, "VmHWM") / 1024
        finally:
            shared.stop.set()
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
    result = {
        "options": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(opts).items()},
        "python": sys.version.split()[0], "platform": os.uname().release,
        "samples": samples, "growth": growth(samples, opts.warmup), "peak_rss_mib": peak,
        "requests": dict(shared.counts), "failures": dict(shared.failures),
        "failure_samples": shared.failure_samples, "caches_end": caches_end,
    }
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = opts.out_dir / f"soak-{stamp}"
    out.with_suffix(".json").write_text(json.dumps(result, indent=1))
    text = markdown(result)
    out.with_suffix(".md").write_text(text)
    print(text)
    print(f"written: {out}.json, {out}.md", file=sys.stderr)
    return 1 if shared.failures else 0


if __name__ == "__main__":
    sys.exit(main())
