"""The traffic a real kube-scheduler sends, against the Go yardstick and the floor, in one run.

    python -m bench.traffic                      # 100, 500, 1000 and 5000 nodes, 300 cycles each
    python -m bench.traffic --quick              # 100 and 500 nodes, 60 cycles: a smoke test
    python -m bench.traffic --nodes 5000 --cycles 1000 --seed 7
    python -m bench.traffic --block 20           # each server's cycles 20 at a time

Per cluster size, each *cycle* is what kube-scheduler does for one pod with this extender
(`nodeCacheCapable`, filter + prioritize, and bind for ours):

* a **distinct pod** (its own name and UID; the seed is fresh each run unless `--seed` is
  given), a replica of one of 24 workloads whose replicas share their spec, as a cluster's
  ReplicaSets create them: neither the recognised-pod nor the reply cache can answer from a
  previous request (what a workload's replicas share, the engine may);
* **filter** with the `NodeNames` window kube-scheduler would send: `numFeasibleNodesToFind`
  nodes (all up to 100, then `percentageOfNodesToScore`'s adaptive share: 50 − n/125 %, at
  least 5 %, at least 100 nodes) that passed its own filters for the pod (`feasible_nodes`:
  every default plugin on the cluster as generated; about 40 % of the bench's nodes are
  tainted, cordoned or too full for a given pod, so a 5 000-node window of 500 looks at about
  850), from where the previous cycle stopped looking, listed in the order its filter
  goroutines found them (`windows`: chunk by chunk, two at once), so no two lists are alike
  (`--windows sampled`: all but 5 % of the nodes looked at, at random, as before 2026-12-02);
* **prioritize** with the names that passed;
* **bind** (ours only: the Go yardstick does not bind) to the best-scored node, so the state
  changes every cycle.

Where the window is smaller than the cluster, `--full-cycles` more cycles of other distinct pods
then name **every node**, the full list the real-traffic issue measures (kube-scheduler at
`percentageOfNodesToScore: 100` would name every node its filters pass): the same nodes each
time, in the order found, so no two lists alike.

Then `--preempts` **preempt** calls (ours only: the yardstick has no preempt verb), each for a
distinct high-priority pod with a window's worth of candidates as kube-scheduler's dry run
finds them on the cluster each server's own binds left (`proposals.py`: from a random offset
among the nodes where preemption might help, each node's fewest, least important victims,
most important first, with their PDB violations; the preempt row's window is how many nodes
`ours` was sent on average).

The same cycles go, interleaved cycle by cycle so that machine noise falls on all alike (each
cycle starting with the next server, so that none always follows the same one), or with
`--block N` N cycles back to back on one server before the next server's turn, to:
`ours` (`extender serve` with `bench/policy-yardstick.json`, the Go yardstick's work: four
filters and LeastAllocated), `ours-plain` (the same with `--no-anticipate`), `ours-default`
(kube-scheduler's default plugins, spread and affinity included, `bench/policy.json`), `go`
(`../shared/peers/go-extender`, the yardstick) and `floor` (an asyncio endpoint that reads the
request and answers `{}`: what any Python server pays for the connection). One keep-alive
connection each; servers pinned to one CPU, this client to another. Replies are never cached:
each server gets a body it has not seen. `serve` prepares a pod's prioritize reply once its
filter is answered (anticipation); this client sends the prioritize at once, where
kube-scheduler first runs its own PreScore and Score plugins (1.2–1.6 ms median between the
filter's reply and the prioritize in the recorded e2e runs), so here the preparing may still
be running when the prioritize comes: `ours-plain` shows what it gives.

Cycle by cycle, every request of a server comes after the other four servers' work on the
same CPU, which leaves its caches cold: a pessimistic case for the server touching the most
memory per request (Python's, here). An extender on a core of its own gets kube-scheduler's
requests one after another, its caches as its previous request left them: `--block 20`
measures that (the same requests to each server, in the same order; only what ran on the CPU
between two of them differs).

Latencies are measured from writing the request to reading the whole reply. The tables give
p50 and p90 per verb, the cycle's mean (filter + prioritize + bind; Go: filter + prioritize)
and the ratios to Go; the targets of the real-traffic issue are printed met / not met and never
fail the run. Results go to `bench/results/traffic-<UTC>.json` and `.md`.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import math
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from bench import generate, goyardstick, proposals
from bench.run import HOST, Server, _pythonpath, cpu_plan, free_port, spawn, wait_ready
from extender import cliargs

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
RESULTS = BENCH / "results"
POLICIES = {"ours": BENCH / "policy-yardstick.json", "ours-default": BENCH / "policy.json"}
#: Our servers: (name, policy, extra `serve` flags).
OURS = [("ours", POLICIES["ours"], []), ("ours-plain", POLICIES["ours"], ["--no-anticipate"]),
        ("ours-default", POLICIES["ours-default"], [])]
PODS_PER_NODE = 10
#: `--windows sampled`: the share of the nodes looked at left out of a window, at random.
SAMPLED = 0.05
JSON = dict[str, Any]


# --------------------------------------------------------------------------- kube-scheduler's window

def num_feasible_nodes_to_find(num_nodes: int, percentage: int = 0) -> int:
    """kube-scheduler's `numFeasibleNodesToFind` (schedule_one.go): every node up to 100
    (`minFeasibleNodesToFind`); past that, `percentage` (0: adaptive, 50 − n/125, at least 5)
    of them, at least 100."""
    if num_nodes < 100 or percentage >= 100:
        return num_nodes
    if percentage <= 0:
        percentage = max(50 - num_nodes // 125, 5)
    return max(num_nodes * percentage // 100, 100)


#: kube-scheduler's filter goroutines (KubeSchedulerConfiguration `parallelism`, default 16),
#: and how many of them run at once: the CPUs of its machine (this one's two).
PARALLELISM = 16
RUNNING = 2


def chunk_size_for(n: int, parallelism: int = PARALLELISM) -> int:
    """kube-scheduler's `chunkSizeFor` (framework/parallelize): the nodes a goroutine takes at
    a time, √n, at most n/parallelism + 1, at least 1."""
    return max(1, min(math.isqrt(n), n // parallelism + 1))


def windows(names: Sequence[str], cycles: int, seed: int, rejected: float = SAMPLED,
            percentage: int = 0, running: int = RUNNING,
            feasible: Sequence[Sequence[bool]] | None = None) -> list[list[str]]:
    """The `NodeNames` of each cycle, as kube-scheduler's `findNodesThatPassFilters` makes them.

    It hands the nodes from `nextStartNodeIndex` on to its filter goroutines in chunks
    (`chunk_size_for`), and each goroutine appends a node its filters pass as it finds it (an
    atomic counter), until `numFeasibleNodesToFind` have passed; the next cycle starts after the
    nodes it looked at. So a window lists its nodes in the order they were found: each chunk in
    node order, the chunks that ran at once (`running`) interleaved as their goroutines took
    turns (at random here), and no two cycles alike, even where every node is sent. A node is
    sent when kube-scheduler's own filters pass it: `feasible[cycle][i]` for `names[i]`
    (`feasible_nodes`), or, without it, all but a share drawn at random (`rejected`, per node
    and cycle from `seed`; none when every node is sent)."""
    n = len(names)
    size = num_feasible_nodes_to_find(n, percentage)
    chunk = chunk_size_for(n)
    rng = random.Random(f"{seed}:windows")
    out, start = [], 0
    for _ in range(cycles):
        window: list[str] = []
        looked = handed = 0
        taking: list[deque[int]] = []  # the chunks of the goroutines running now
        while len(window) < size:
            while len(taking) < running and handed < n:
                taking.append(deque(range(handed, min(handed + chunk, n))))
                handed += chunk
            if not taking:
                break
            turn = rng.randrange(len(taking))
            offset = taking[turn].popleft()
            if not taking[turn]:
                del taking[turn]
            looked += 1
            node = (start + offset) % n
            if feasible is not None:
                passes = bool(feasible[len(out)][node])
            else:
                passes = size == n or rng.random() >= rejected
            if passes:
                window.append(names[node])
        out.append(window)
        start = (start + looked) % n
    return out


def feasible_nodes(snapshot: Path, pods: Sequence[JSON], names: Sequence[str]) -> list[Any]:
    """For each pod, which of `names` kube-scheduler's own filters pass on the snapshot's
    cluster (every default plugin: `bench/policy.json`, the filters the engine holds to
    kube-scheduler's): the nodes its window may hold, as booleans in `names`' order. A node
    kube-scheduler's filters reject is never sent to an extender, so the filters a window
    meets pass it, as they do where the extender's filters are kube-scheduler's own."""
    # Imported here: this module also runs the floor server, which needs none of the engine.
    from extender import wire
    from extender.engine.policy import load_policy
    from extender.engine.profile import build_profile
    from extender.engine.rows import filter_rows
    from extender.model.pod import PodView
    from extender.state.snapshot import load_snapshot

    state = load_snapshot(snapshot)
    profile = build_profile(load_policy(POLICIES["ours-default"]))
    rows = state.table.rows(list(names))
    if rows is None:
        raise RuntimeError(f"{snapshot}: not every node of the window's cluster is in it")
    return [filter_rows(profile, PodView.from_k8s(wire.decode_pod(generate.encode(pod))), rows,
                        state.table, state).codes == 0 for pod in pods]


WORKLOADS = 24


def pending_pods(seed: int, cycles: int) -> list[JSON]:
    """Distinct pending pods, as a cluster's controllers create them: each its own name
    (its workload's ReplicaSet name and a random suffix) and UID, of one of `WORKLOADS`
    workloads whose replicas share their spec (requests, labels, affinity)."""
    rng = random.Random(f"{seed}:traffic")
    workloads = [(f"svc{w:02d}-{rng.randrange(16**9):09x}", rng.choice([100, 250, 500, 1000]),
                  rng.choice([128, 512, 1024, 2048]),
                  str(uuid.UUID(int=rng.getrandbits(128), version=4))) for w in range(WORKLOADS)]
    pods, seen = [], set()
    while len(pods) < cycles:
        replica_set, cpu_m, memory_mi, owner_uid = rng.choice(workloads)
        name = f"{replica_set}-{''.join(rng.choice('bcdfghjklmnpqrstvwxz2456789') for _ in range(5))}"
        if name in seen:
            continue
        seen.add(name)
        pod = generate.make_pod(seed, name=name, namespace="checkout", cpu_m=cpu_m,
                                memory_mi=memory_mi)
        pod["metadata"]["uid"] = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        pod["metadata"]["ownerReferences"][0]["uid"] = owner_uid  # its ReplicaSet's
        pods.append(pod)
    return pods


# --------------------------------------------------------------------------- the floor

async def _floor(port: int) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                await reader.readexactly(length)
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: 2\r\n\r\n{}")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(handle, HOST, port)
    async with server:
        await server.serve_forever()


def floor_main(port: int) -> int:
    asyncio.run(_floor(port))
    return 0


# --------------------------------------------------------------------------- servers

@dataclass
class Target:
    name: str
    server: Server
    binds: bool
    #: Sent the preempt calls too (ours; a variant differing only in `serve` flags that
    #: preempt does not read would measure the same again).
    preempts: bool = False
    conn: http.client.HTTPConnection = field(init=False)
    #: Each pod this server bound, and where (what the next preempt proposals are found on).
    bound: list[tuple[JSON, str]] = field(default_factory=list)
    times: dict[str, list[float]] = field(default_factory=lambda: {
        "filter": [], "prioritize": [], "bind": [], "cycle": [], "preempt": [],
        **{f"{verb}{FULL}": [] for verb in ("filter", "prioritize", "bind", "cycle")}})
    #: Seconds at least between a reply and the next request to this server (`--gap`).
    gap: float = 0.0
    answered: float = field(init=False, default=0.0)

    def __post_init__(self) -> None:
        self.conn = http.client.HTTPConnection(HOST, self.server.port, timeout=60)

    def post(self, path: str, body: bytes) -> tuple[float, bytes]:
        if self.gap:
            wait = self.answered + self.gap - time.perf_counter()
            if wait > 0:
                time.sleep(wait)  # kube-scheduler's own work between two calls; not timed
        started = time.perf_counter()
        self.conn.request("POST", path, body, {"Content-Type": "application/json"})
        response = self.conn.getresponse()
        data = response.read()
        self.answered = time.perf_counter()
        elapsed = self.answered - started
        if response.status != 200:
            raise RuntimeError(f"{self.name} {path}: HTTP {response.status}: {data[:300]!r}")
        return elapsed, data


def start_ours(snapshot: Path, policy: Path, workdir: Path, cpu: int | None, tag: str,
               flags: Sequence[str] = ()) -> Server:
    port = free_port()
    cmd = [sys.executable, "-m", "extender", "serve", "--host", HOST, "--port", str(port),
           "--snapshot", str(snapshot), "--policy", str(policy), *flags]
    env = {**os.environ, "PYTHONPATH": _pythonpath()}
    return spawn(cmd, snapshot, port, workdir / f"server-{tag}.log", cpu, env)


def start_floor(workdir: Path, cpu: int | None) -> Server:
    port = free_port()
    cmd = [sys.executable, "-m", "bench.traffic", "--floor-server", str(port)]
    env = {**os.environ, "PYTHONPATH": _pythonpath()}
    return spawn(cmd, workdir / "none", port, workdir / "server-floor.log", cpu, env, "/")


# --------------------------------------------------------------------------- one cluster size

_decoder = msgspec.json.Decoder()


def _best(priorities: Any) -> str | None:
    best, node = -1, None
    for entry in priorities or []:
        if entry["Score"] > best:
            best, node = entry["Score"], entry["Host"]
    return node


#: The suffix of the full-list cycles' verbs.
FULL = " (full list)"


def cycle(target: Target, pod: JSON, names: list[str], suffix: str = "") -> None:
    """One pod's filter, prioritize (on what passed) and, for ours, bind; timed as the verbs
    plus `suffix`."""
    filter_time, reply = target.post("/filter", generate.extender_args(pod, None, names))
    if target.name == "floor":
        passed = names
    else:
        passed = _decoder.decode(reply).get("NodeNames") or []
    prioritize_time, reply = target.post("/prioritize", generate.extender_args(pod, None, passed))
    total = filter_time + prioritize_time
    target.times[f"filter{suffix}"].append(filter_time)
    target.times[f"prioritize{suffix}"].append(prioritize_time)
    if target.binds and target.name != "floor":
        node = _best(_decoder.decode(reply))
        if node is not None:
            meta = pod["metadata"]
            bind_time, reply = target.post("/bind", generate.encode({
                "PodName": meta["name"], "PodNamespace": meta["namespace"],
                "PodUID": meta["uid"], "Node": node}))
            error = _decoder.decode(reply).get("Error")
            if error:
                raise RuntimeError(f"{target.name} bind: {error}")
            target.bound.append((pod, node))
            target.times[f"bind{suffix}"].append(bind_time)
            total += bind_time
    target.times[f"cycle{suffix}"].append(total)


def _ms(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 3)


def summary(times: dict[str, list[float]]) -> JSON:
    return {verb: {"p50": _ms(v, 0.5), "p90": _ms(v, 0.9),
                   "mean": round(statistics.fmean(v) * 1000, 3) if v else None, "n": len(v)}
            for verb, v in times.items()}


def run_size(nodes: int, cycles: int, warmup: int, seed: int, workdir: Path,
             go_binary: Path | None, progress: Callable[[str], None], preempts: int = 0,
             full_cycles: int = 0, block: int = 1, gap: float = 0.0,
             sampled: bool = False) -> JSON:
    spec = generate.ClusterSpec(nodes, nodes * PODS_PER_NODE, generate.DEFAULT_SEED)
    snapshot = workdir / f"cluster-{nodes}.json"
    if not snapshot.exists():
        generate.write_cluster(snapshot, spec)
    names = [generate.node_name(i) for i in range(nodes)]
    server_cpu, client_cpu = cpu_plan()
    servers: list[Target] = []
    try:
        for tag, policy, flags in OURS:
            servers.append(Target(tag, start_ours(snapshot, policy, workdir, server_cpu,
                                                  f"{tag}-{nodes}", flags), binds=True,
                                  preempts=not flags))
        if go_binary is not None:
            port = free_port()
            servers.append(Target("go", spawn([str(go_binary), "-snapshot", str(snapshot),
                                               "-addr", f"{HOST}:{port}"], snapshot, port,
                                              workdir / f"server-go-{nodes}.log", server_cpu,
                                              dict(os.environ), "/healthz"), binds=False))
        servers.append(Target("floor", start_floor(workdir, server_cpu), binds=False))
        for target in servers:
            wait_ready(target.server, 900.0)
            target.gap = gap
        if client_cpu is not None:
            os.sched_setaffinity(0, {client_cpu})
        pods = pending_pods(seed + nodes, warmup + cycles)
        feasible = None if sampled else feasible_nodes(snapshot, pods, names)
        plan = windows(names, warmup + cycles, seed + nodes, feasible=feasible)
        window = round(statistics.fmean(len(w) for w in plan))
        progress(f"{nodes} nodes: window {window}, {cycles} cycles (+{warmup} warm-up)")
        _interleaved(servers, pods, plan, warmup, "", block)
        if num_feasible_nodes_to_find(nodes) == nodes:
            full_cycles = 0  # the window names every node it may already
        if full_cycles:
            progress(f"{nodes} nodes: every node named, {full_cycles} cycles (+{FULL_WARMUP} warm-up)")
            full_pods = pending_pods(seed + nodes + FULL_SEED, FULL_WARMUP + full_cycles)
            every = windows(names, len(full_pods), seed + nodes + FULL_SEED, percentage=100)
            _interleaved(servers, full_pods, every, FULL_WARMUP, FULL, block)
        # Preemption, ours only (the Go yardstick has no preempt verb): the same distinct
        # preemptors, each with a window's worth of candidates found on the cluster the
        # server's own binds left.
        candidates = None  # the mean number of candidate nodes `ours` was sent
        if preempts:
            progress(f"{nodes} nodes: {preempts} preempts, finding their candidates")
            bodies = {target.name: proposals.dry_run_bodies(
                snapshot, target.bound, seed + nodes, preempts, num_feasible_nodes_to_find(nodes))
                for target in servers if target.preempts}
            candidates = round(statistics.fmean(
                len(_decoder.decode(body)["NodeNameToMetaVictims"]) for body in bodies["ours"]))
            preempting = [target for target in servers if target.preempts]
            for turn, start in enumerate(range(0, preempts, block)):
                for target in _turn(preempting, turn):
                    for body in bodies[target.name][start:start + block]:
                        elapsed, _ = target.post("/preempt", body)
                        target.times["preempt"].append(elapsed)
        return {"nodes": nodes, "window": window, "cycles": cycles, "block": block,
                "windows": "sampled" if sampled else "feasible",
                "gap_ms": gap * 1000,
                "full_cycles": full_cycles, "preempt_candidates": candidates,
                "servers": {t.name: summary(t.times) for t in servers}}
    finally:
        for target in servers:
            target.conn.close()
            target.server.stop()


#: The full-list cycles' unmeasured first ones, and their pods' seed offset (other pods).
FULL_WARMUP = 5
FULL_SEED = 7919


def _interleaved(servers: list[Target], pods: list[JSON], plan: list[list[str]], warmup: int,
                 suffix: str, block: int = 1) -> None:
    """Each pod's cycle on every server, the first `warmup` cycles not kept; the measured
    ones `block` at a time on one server before the next server takes the same `block`."""
    cycles = list(zip(pods, plan, strict=True))
    _in_turns(servers, cycles[:warmup], 1, suffix)
    for target in servers:
        for verb, values in target.times.items():
            if verb.endswith(suffix):
                values.clear()
    _in_turns(servers, cycles[warmup:], block, suffix)


def _in_turns(servers: list[Target], cycles: list[tuple[JSON, list[str]]], block: int,
              suffix: str) -> None:
    for turn, start in enumerate(range(0, len(cycles), block)):
        for target in _turn(servers, turn):
            for pod, window in cycles[start:start + block]:
                cycle(target, pod, window, suffix)


def _turn(servers: list[Target], turn: int) -> list[Target]:
    # Each turn starts with the next server: the one after another's work (Go's 5 000-name
    # decode, say) finds the CPU's caches cold, ~0.15 ms on a 5 000-node filter, and no
    # server should always be that one.
    shift = turn % len(servers)
    return servers[shift:] + servers[:shift]


# --------------------------------------------------------------------------- report

def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 2) if a is not None and b else None


def targets(row: JSON) -> list[tuple[str, bool | None]]:
    """The real-traffic issue's targets for one cluster size (None: not measured)."""
    s = row["servers"]
    ours, go, default = s.get("ours"), s.get("go"), s.get("ours-default")
    out: list[tuple[str, bool | None]] = []
    if ours and go:
        for verb in ("filter", "prioritize"):
            r = _ratio(ours[verb]["p50"], go[verb]["p50"])
            out.append((f"{verb} p50 ≤ 0.6× Go ({r})", r is not None and r <= 0.6))
        r = _ratio(ours["cycle"]["mean"], go["cycle"]["mean"])  # Go's cycle: filter + prioritize
        out.append((f"cycle mean ≤ 0.8× Go's filter + prioritize ({r})", r is not None and r <= 0.8))
    if ours:
        for verb in ("filter", "prioritize"):
            r = _ratio(ours[verb]["p90"], ours[verb]["p50"])
            out.append((f"{verb} p90 ≤ 2× p50 ({r})", r is not None and r <= 2))
    if ours and ours.get("preempt", {}).get("p50") is not None:
        p50 = ours["preempt"]["p50"]
        out.append((f"preempt, distinct preemptors, p50 ≤ 2 ms ({p50} ms)", p50 <= 2.0))
    if ours and default:
        r = _ratio(default["cycle"]["mean"], ours["cycle"]["mean"])
        out.append((f"default policy cycle ≤ 2× the 4-filter policy ({r})", r is not None and r <= 2))
    full = f"filter{FULL}"
    if row["nodes"] >= 5000 and ours and go and ours.get(full, {}).get("n"):
        r = _ratio(go[full]["p50"], ours[full]["p50"])
        out.append((f"every node named: filter ≥ 4× faster than Go (Go p50 / ours p50: {r})",
                    r is not None and r >= 4))
    return out


def table(rows: list[JSON]) -> str:
    lines = ["| nodes | window | verb | ours p50 / p90 | not anticipating p50 | default policy p50 "
             "| Go p50 / p90 | floor p50 | ours / Go (p50) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        s = row["servers"]
        for verb in ("filter", "prioritize", "bind", "cycle", "preempt", f"filter{FULL}",
                     f"cycle{FULL}"):
            if verb in ("preempt", f"filter{FULL}", f"cycle{FULL}") and not s.get(
                    "ours", {}).get(verb, {}).get("n"):
                continue
            ours, default = s.get("ours", {}).get(verb, {}), s.get("ours-default", {}).get(verb, {})
            plain = s.get("ours-plain", {}).get(verb, {})
            go, floor = s.get("go", {}).get(verb, {}), s.get("floor", {}).get(verb, {})
            stat = "mean" if verb.startswith("cycle") else "p50"

            def cell(d: JSON, both: bool = True, stat: str = stat) -> str:
                if not d or d.get(stat) is None:
                    return "—"
                return f"{d[stat]:.2f}" + (f" / {d['p90']:.2f}" if both and stat == "p50" else "")
            # Go's cycle is its filter + prioritize (it does not bind).
            ratio = _ratio(ours.get(stat), go.get(stat))
            go_text = cell(go) + (" (f+p mean)" if stat == "mean" and go else "")
            label = verb.removesuffix(FULL) + (" (mean)" if stat == "mean" else "") + (
                ", every node named" if verb.endswith(FULL) else "")
            window = row["nodes"] if verb.endswith(FULL) else row["window"]
            if verb == "preempt" and row.get("preempt_candidates") is not None:
                window = row["preempt_candidates"]  # the nodes proposed, on average
            lines.append(f"| {row['nodes']} | {window} | {label} | {cell(ours)} | "
                         f"{cell(plain, False)} | {cell(default, False)} | {go_text} | "
                         f"{cell(floor, False)} | "
                         f"{ratio if ratio is not None else '—'} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.traffic", description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", type=cliargs.sizes, default=None,
                   help="cluster sizes (default 100,500,1000,5000)")
    p.add_argument("--cycles", type=cliargs.positive_int, default=None,
                   help="measured cycles per size (default 300)")
    p.add_argument("--warmup", type=cliargs.count, default=20, help="unmeasured cycles first (default 20)")
    p.add_argument("--seed", type=int, default=None, help="the pods' seed (default: fresh each run)")
    p.add_argument("--preempts", type=cliargs.count, default=None,
                   help="distinct preemptors per size, ours only (default 100; quick 20)")
    p.add_argument("--full-cycles", type=cliargs.count, default=None,
                   help="cycles naming every node, where the window is smaller (default 100; "
                        "quick 20; 0: none)")
    p.add_argument("--block", type=cliargs.positive_int, default=1,
                   help="measured cycles (and preempts) each server answers back to back before "
                        "the next server's turn (default 1: cycle by cycle)")
    p.add_argument("--gap", type=cliargs.non_negative_float, default=0.0, metavar="MS",
                   help="milliseconds at least between a reply and the next request to the same "
                        "server, as kube-scheduler's own plugins take between its calls (default "
                        "0: at once; 1 is about what the recorded e2e runs show, tests/fixtures/"
                        "recorded)")
    p.add_argument("--windows", choices=["feasible", "sampled"], default="feasible",
                   help="feasible (default): a window holds the nodes kube-scheduler's own "
                        "filters pass for its pod; sampled: all but 5 %% of the nodes looked at, "
                        "drawn at random (this bench's windows before 2026-12-02)")
    p.add_argument("--quick", action="store_true", help="100 and 500 nodes, 60 cycles")
    p.add_argument("--no-go", action="store_true", help="skip the Go yardstick")
    p.add_argument("--out-dir", type=Path, default=RESULTS,
                   help="where the result JSON goes (default %(default)s)")
    p.add_argument("--floor-server", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.floor_server:
        return floor_main(args.floor_server)
    sizes = args.nodes or ([100, 500] if args.quick else [100, 500, 1000, 5000])
    cycles = args.cycles or (60 if args.quick else 300)
    preempts = args.preempts if args.preempts is not None else (20 if args.quick else 100)
    full_cycles = args.full_cycles if args.full_cycles is not None else (20 if args.quick else 100)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 30)

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)
    go_binary = None
    if not args.no_go:
        prepared = goyardstick.prepare()
        go_binary = prepared.binary
        if go_binary is None:
            progress(f"Go yardstick skipped: {prepared.reason}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="traffic-") as tmp:
        for nodes in sizes:
            rows.append(run_size(nodes, cycles, args.warmup, seed, Path(tmp), go_binary, progress,
                                 preempts, full_cycles, args.block, args.gap / 1000,
                                 args.windows == "sampled"))
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    report = {"seed": seed, "cycles": cycles, "block": args.block, "gap_ms": args.gap,
              "windows": args.windows,
              "rows": rows,
              "targets": {str(r["nodes"]): [[t, ok] for t, ok in targets(r)] for r in rows}}
    turns = ("cycle by cycle" if args.block == 1 else
             f"{args.block} cycles back to back on each server in its turn")
    waits = (f", at least {args.gap:g} ms between a reply and the server's next request"
             if args.gap else "")
    held = ("the nodes kube-scheduler's filters pass" if args.windows == "feasible" else
            f"all but {SAMPLED * 100:g} % of the nodes looked at, sampled")
    text = [f"Real traffic: distinct pods (seed {seed}), kube-scheduler's node windows ({held}), "
            f"a bind each cycle, {turns}{waits}; milliseconds.", "", table(rows), ""]
    for row in rows:
        for what, ok in targets(row):
            text.append(f"- {row['nodes']} nodes: {what}: {'met' if ok else 'not met'}")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / f"traffic-{stamp}.json").write_text(json.dumps(report, indent=1) + "\n")
    (args.out_dir / f"traffic-{stamp}.md").write_text("\n".join(text) + "\n")
    print("\n".join(text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
