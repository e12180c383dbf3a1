"""Benchmark runner: the real server, driven over loopback from a separate process.

    python -m bench.run                      # full run: 100/500/1000/5000 candidates, both forms,
                                             # every verb, state size 5000 nodes / 150 000 pods
    python -m bench.run --quick              # tiny sizes, few requests (about a minute)
    python -m bench.run --sizes 500 --forms names --verbs filter,prioritize --skip-state

What it does:

1. generates (or reuses, from ``bench/results/cache/``) a deterministic cluster snapshot and the
   request bodies (``bench.generate``); the NodeNames bodies name nodes of that snapshot;
2. starts ``python -m extender serve --snapshot … --policy … --floor-endpoint`` pinned to CPU 0,
   and measures the state size: time from process start until ``/readyz`` answers 200, and the
   server's RSS then (``--state-nodes``/``--state-pods``);
3. runs ``python -m bench.client`` pinned to CPU 1: per verb × form × size, 1 keep-alive
   connection (p50/p90/p99, req/s) and 4 connections (req/s), each bounded by
   ``--max-requests`` and ``--max-seconds``; the server's peak RSS per case; and the floors for
   the same body: ``POST /_floor`` on the same server (HTTP floor) and the fastest JSON decoder
   decoding it into plain objects (decode floor);
4. the load-aware rows (unless ``--no-load-aware``): the NodeNames prioritize body of 500
   candidates (else the largest size) against two more servers, one scoring with
   NodeResourcesFit LeastAllocated alone, one with TargetLoadPacking alone while its refresher
   re-reads every node's load from a loopback load-watcher (``bench.loadwatcher``) every
   ``--load-refresh`` seconds;
5. writes ``bench/results/<timestamp>.json`` and ``.md`` and prints the Markdown table.

Numbers never fail anything: the targets are reported as met / not met.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import http.client
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from bench import generate, report

JSON = dict[str, Any]
HOST = "127.0.0.1"
REPO = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
DEFAULT_OUT = BENCH / "results"
DEFAULT_POLICY = BENCH / "policy.json"
VERBS: tuple[str, ...] = ("filter", "prioritize", "preempt", "bind")
PATHS = {"filter": "/filter", "prioritize": "/prioritize", "preempt": "/preempt", "bind": "/bind"}


# --------------------------------------------------------------------------- options


@dataclass
class Options:
    sizes: list[int]
    forms: list[str]
    verbs: list[str]
    nodes: int
    pods: int
    seed: int
    max_requests: int
    max_seconds: float
    min_requests: int
    warmup: int
    concurrency: list[int]
    state_nodes: int
    state_pods: int
    skip_state: bool
    out_dir: Path
    workdir: Path | None
    policy: Path
    server_module: str
    ready_timeout: float
    decode_runs: int
    decode_seconds: float
    n_bind: int
    no_cache: bool = False
    extra_server_args: list[str] = field(default_factory=list)
    load_aware: bool = True
    load_refresh: float = 0.2


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def _names(text: str, allowed: Sequence[str], what: str) -> list[str]:
    names = [x.strip() for x in text.split(",") if x.strip()]
    bad = [n for n in names if n not in allowed]
    if bad:
        raise SystemExit(f"unknown {what}: {', '.join(bad)} (choose from {', '.join(allowed)})")
    return names


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true",
                   help="tiny sizes and few requests (sizes 10,50; 60-node cluster; state 60/600)")
    p.add_argument("--sizes", help="candidate counts (default 100,500,1000,5000)")
    p.add_argument("--forms", default="names,nodes", help="names (NodeNames / meta victims), nodes (full objects)")
    p.add_argument("--verbs", default=",".join(VERBS), help="filter,prioritize,preempt,bind")
    p.add_argument("--nodes", type=int, help="nodes in the served cluster (default: largest size)")
    p.add_argument("--pods", type=int, help="pods in the served cluster (default: 30 per node)")
    p.add_argument("--seed", type=int, default=generate.DEFAULT_SEED)
    p.add_argument("--max-requests", type=int, help="per measurement (default 2000; quick 40)")
    p.add_argument("--max-seconds", type=float, help="per measurement (default 8; quick 1.5)")
    p.add_argument("--min-requests", type=int, default=3,
                   help="a measurement stops at --max-seconds only after this many requests")
    p.add_argument("--warmup", type=int, default=5, help="unmeasured requests per case and floor")
    p.add_argument("--concurrency", default="1,4", help="connection counts (the first gives percentiles)")
    p.add_argument("--state-nodes", type=int, help="state-size measurement (default 5000; quick 60)")
    p.add_argument("--state-pods", type=int, help="state-size measurement (default 150000; quick 600)")
    p.add_argument("--skip-state", action="store_true", help="skip the state-size measurement")
    p.add_argument("--out-dir", type=Path, default=DEFAULT_OUT, help="where results go (default bench/results)")
    p.add_argument("--workdir", type=Path,
                   help="generated snapshot and bodies (default: bench/results/cache/<generator hash>)")
    p.add_argument("--no-cache", action="store_true",
                   help="generate into a temporary directory and delete it afterwards")
    p.add_argument("--policy", type=Path, default=DEFAULT_POLICY, help="policy file passed to the server")
    p.add_argument("--server-module", default="extender",
                   help="run `python -m MODULE serve …` (default: extender)")
    p.add_argument("--server-arg", action="append", default=[], metavar="ARG",
                   help="extra argument for `serve` (repeatable)")
    p.add_argument("--ready-timeout", type=float, default=900.0, help="seconds to wait for /readyz")
    p.add_argument("--decode-runs", type=int, default=21, help="decode-floor runs per decoder and GC mode")
    p.add_argument("--decode-seconds", type=float, default=3.0, help="decode-floor time budget per decoder and GC mode")
    p.add_argument("--no-load-aware", action="store_true",
                   help="skip the load-aware rows (prioritize: TargetLoadPacking vs LeastAllocated alone)")
    p.add_argument("--load-refresh", type=float, default=0.2,
                   help="seconds between the TargetLoadPacking server's metrics refreshes (default 0.2: several in each measurement)")
    return p


def options_from(args: argparse.Namespace) -> Options:
    quick = bool(args.quick)
    sizes = _ints(args.sizes) if args.sizes else ([10, 50] if quick else list(generate.DEFAULT_SIZES))
    if not sizes or min(sizes) < 1:
        raise SystemExit("--sizes must list positive candidate counts")
    nodes = args.nodes or (60 if quick else max(sizes))
    if nodes < max(sizes):
        raise SystemExit(f"--nodes {nodes} is smaller than the largest size {max(sizes)}")
    max_requests = args.max_requests or (40 if quick else 2000)
    return Options(
        sizes=sizes,
        forms=_names(args.forms, generate.FORMS, "forms"),
        verbs=_names(args.verbs, VERBS, "verbs"),
        nodes=nodes,
        pods=args.pods if args.pods is not None else (10 if quick else 30) * nodes,
        seed=args.seed,
        max_requests=max_requests,
        max_seconds=args.max_seconds or (1.5 if quick else 8.0),
        min_requests=min(args.min_requests, max_requests),
        warmup=min(args.warmup, 2) if quick else args.warmup,
        concurrency=_ints(args.concurrency) or [1],
        state_nodes=args.state_nodes or (60 if quick else 5000),
        state_pods=args.state_pods if args.state_pods is not None else (600 if quick else 150_000),
        skip_state=bool(args.skip_state),
        out_dir=args.out_dir,
        workdir=args.workdir,
        policy=args.policy,
        server_module=args.server_module,
        ready_timeout=args.ready_timeout,
        decode_runs=max(args.decode_runs, 3),
        decode_seconds=args.decode_seconds,
        n_bind=max(max_requests + args.warmup, 1),
        no_cache=bool(args.no_cache),
        extra_server_args=list(args.server_arg),
        load_aware=not args.no_load_aware,
        load_refresh=args.load_refresh,
    )


# --------------------------------------------------------------------------- machine


def cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def total_memory_gib() -> float | None:
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    return None


def _version(module: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(module)
    except metadata.PackageNotFoundError:
        return None


def machine_info() -> JSON:
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    return {
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_available": len(cpus) or os.cpu_count(),
        "memory_gib": total_memory_gib(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "packages": {m: _version(m) for m in ("msgspec", "orjson", "uvicorn", "uvloop", "httptools",
                                              "starlette", "fastapi", "pydantic")},
    }


def cpu_plan() -> tuple[int | None, int | None]:
    """(server CPU, client CPU) when at least two CPUs are available, else no pinning."""
    if not hasattr(os, "sched_getaffinity"):
        return None, None
    cpus = sorted(os.sched_getaffinity(0))
    return (cpus[0], cpus[1]) if len(cpus) >= 2 else (None, None)


# --------------------------------------------------------------------------- server


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _pythonpath() -> str:
    rest = os.environ.get("PYTHONPATH")
    return f"{REPO}{os.pathsep}{rest}" if rest else str(REPO)


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    port: int
    log: Path
    started: float
    snapshot: Path

    @property
    def pid(self) -> int:
        return self.proc.pid

    def status_kib(self, key: str) -> int | None:
        with contextlib.suppress(OSError, ValueError, IndexError):
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith(key + ":"):
                    return int(line.split()[1])
        return None

    def log_tail(self, lines: int = 30) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)


def start_server(opts: Options, snapshot: Path, workdir: Path, cpu: int | None, tag: str,
                 policy: Path | None = None) -> Server:
    port = free_port()
    cmd = [sys.executable, "-m", opts.server_module, "serve", "--host", HOST, "--port", str(port),
           "--snapshot", str(snapshot), "--policy", str(policy or opts.policy), "--floor-endpoint",
           *opts.extra_server_args]
    if "nodes" in opts.forms and opts.server_module == "extender":
        cmd.append("--nodes-form")  # whole Node objects: the larger default body limit
    log = workdir / f"server-{tag}.log"

    def pin() -> None:
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})

    env = {**os.environ, "PYTHONPATH": _pythonpath()}
    with log.open("wb") as out:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, preexec_fn=pin)
    return Server(proc, port, log, started, snapshot)


def _ready(port: int) -> bool:
    conn = http.client.HTTPConnection(HOST, port, timeout=2)
    try:
        conn.request("GET", "/readyz")
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        conn.close()


def wait_ready(server: Server, timeout: float) -> float:
    """Seconds from process start until /readyz answers 200."""
    deadline = server.started + timeout
    while time.perf_counter() < deadline:
        if server.proc.poll() is not None:
            raise RuntimeError(f"server exited with {server.proc.returncode}:\n{server.log_tail()}")
        if _ready(server.port):
            return time.perf_counter() - server.started
        time.sleep(0.02)
    server.stop()
    raise RuntimeError(f"server not ready after {timeout:.0f} s:\n{server.log_tail()}")


def measure_state(server: Server, spec: generate.ClusterSpec, timeout: float) -> JSON:
    load_s = wait_ready(server, timeout)
    return {
        "nodes": spec.n_nodes,
        "pods": spec.n_pods,
        "seed": spec.seed,
        "snapshot_bytes": server.snapshot.stat().st_size,
        "load_seconds": load_s,
        "rss_kib": server.status_kib("VmRSS"),
        "peak_rss_kib": server.status_kib("VmHWM"),
    }


# --------------------------------------------------------------------------- files


def generator_hash() -> str:
    return hashlib.sha256(Path(generate.__file__).read_bytes()).hexdigest()[:12]


def default_workdir(out_dir: Path) -> Path:
    """``<out>/cache/<hash of generate.py>``; caches of other generator versions are removed."""
    cache = out_dir / "cache"
    current = cache / generator_hash()
    if cache.is_dir():
        for old in cache.iterdir():
            if old.is_dir() and old != current:
                shutil.rmtree(old, ignore_errors=True)
    return current


def generate_files(opts: Options, workdir: Path) -> tuple[generate.Generated, generate.Generated | None]:
    spec = generate.ClusterSpec(opts.nodes, opts.pods, opts.seed)
    t0 = time.perf_counter()
    gen = generate.write_bench_files(workdir, spec, opts.sizes, opts.forms, n_bind=opts.n_bind)
    state_gen = None
    if not opts.skip_state:
        state_spec = generate.ClusterSpec(opts.state_nodes, opts.state_pods, opts.seed)
        if state_spec == spec:
            state_gen = gen
        else:
            state_gen = generate.write_bench_files(workdir, state_spec, [], [], n_bind=1)
    log(f"generated / reused payloads in {workdir} ({time.perf_counter() - t0:.1f} s)")
    return gen, state_gen


# --------------------------------------------------------------------------- cases


def plan_cases(opts: Options, gen: generate.Generated) -> list[JSON]:
    """Cases smallest body first; prioritize reuses the filter body; bind runs once."""
    cases: list[JSON] = []
    for form in opts.forms:
        for size in sorted(opts.sizes):
            for verb in opts.verbs:
                if verb == "bind":
                    continue
                key = generate.body_key("preempt" if verb == "preempt" else "filter", form, size)
                cases.append({"id": f"{verb}-{form}-{size}", "verb": verb, "form": form, "size": size,
                              "path": PATHS[verb], "body_key": key, "body_file": str(gen.bodies[key]),
                              "multi": False})
                spread_key = generate.body_key("filter", form, size, "spread")
                if verb in ("filter", "prioritize") and spread_key in gen.bodies:
                    # The same request for a pod with a zone spread constraint and required
                    # anti-affinity: what the cross-node plugins cost.
                    cases.append({"id": f"{verb}-{form}-{size}-spread", "verb": verb, "form": form,
                                  "size": size, "path": PATHS[verb], "body_key": spread_key,
                                  "body_file": str(gen.bodies[spread_key]), "multi": False})
    if "bind" in opts.verbs:
        cases.append({"id": "bind", "verb": "bind", "form": None, "size": None, "path": PATHS["bind"],
                      "body_key": "bind", "body_file": str(gen.bodies["bind"]), "multi": True})
    return cases


def client_plan(opts: Options, server: Server, cases: list[JSON], cpu: int | None) -> JSON:
    return {
        "host": HOST, "port": server.port, "server_pid": server.pid, "cpu": cpu,
        "floor_path": "/_floor", "cases": cases,
        "max_requests": opts.max_requests, "max_seconds": opts.max_seconds,
        "min_requests": opts.min_requests, "warmup": opts.warmup,
        "concurrency": opts.concurrency, "timeout": max(60.0, 3 * opts.max_seconds),
        "decode_runs": opts.decode_runs, "decode_seconds": opts.decode_seconds,
    }


def client_budget(opts: Options, n_cases: int) -> float:
    """Generous upper bound on the client's run time, so a hung client cannot hang us."""
    per_measure = 5 * opts.max_seconds + max(60.0, 3 * opts.max_seconds)
    measures = n_cases * 2 * (len(opts.concurrency) + 1)
    return 300.0 + measures * per_measure + n_cases * 4 * opts.decode_seconds * 4


def run_client(opts: Options, server: Server, cases: list[JSON], workdir: Path, cpu: int | None) -> JSON:
    """Run the client on ``cases``; returns what it finished (possibly fewer cases)."""
    plan_path, result_path = workdir / "client-plan.json", workdir / "client-result.json"
    plan_path.write_bytes(msgspec.json.encode(client_plan(opts, server, cases, cpu)))
    result_path.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "bench.client", str(plan_path), str(result_path)]
    env = {**os.environ, "PYTHONPATH": _pythonpath()}
    try:
        proc = subprocess.run(cmd, cwd=REPO, env=env, timeout=client_budget(opts, len(cases)), check=False)
    except subprocess.TimeoutExpired:
        log("client timed out; reporting the cases it finished")
    else:
        if proc.returncode != 0:
            log(f"client exited with {proc.returncode}; reporting the cases it finished")
    if not result_path.exists():
        return {"cases": [], "floors": {}, "rss_mode": None}
    return msgspec.json.decode(result_path.read_bytes())


@dataclass
class Measured:
    """Client results merged over server restarts."""

    cases: list[JSON] = field(default_factory=list)
    floors: dict[str, JSON] = field(default_factory=dict)
    rss_mode: str | None = None
    restarts: list[JSON] = field(default_factory=list)
    idle_rss_kib: int | None = None

    def merge(self, client: JSON) -> None:
        self.cases.extend(client["cases"])
        self.floors.update(client["floors"])
        self.rss_mode = self.rss_mode or client.get("rss_mode")


MAX_RESTARTS = 2


def drive(opts: Options, server: Server, gen: generate.Generated, workdir: Path,
          cpus: tuple[int | None, int | None]) -> Measured:
    """Run every case; if the server dies (another process may signal it), restart it and
    go on with the cases left, at most MAX_RESTARTS times. Stops the last server."""
    pending = plan_cases(opts, gen)
    measured = Measured(idle_rss_kib=server.status_kib("VmRSS"))
    try:
        for attempt in range(MAX_RESTARTS + 1):
            log(f"driving {len(pending)} cases against pid {server.pid} on port {server.port}")
            measured.merge(run_client(opts, server, pending, workdir, cpus[1]))
            done = {c["id"] for c in measured.cases}
            pending = [c for c in pending if c["id"] not in done]
            if not pending:
                break
            try:
                server.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            alive = server.proc.poll() is None
            measured.restarts.append({"before_case": pending[0]["id"], "server_alive": alive,
                                      "returncode": server.proc.returncode, "log_tail": server.log_tail(10)})
            server.stop()
            if attempt == MAX_RESTARTS:
                log(f"giving up with {len(pending)} cases not measured")
                break
            log(f"server {'stalled' if alive else 'exited'} before {pending[0]['id']}; restarting it")
            server = start_server(opts, gen.cluster, workdir, cpus[0], f"latency-{attempt + 1}")
            wait_ready(server, opts.ready_timeout)
    finally:
        server.stop()
    return measured


# --------------------------------------------------------------------------- load-aware rows

#: The load-aware rows' variants: (case id suffix, label, the score phase of the policy).
LOAD_AWARE = (
    ("leastallocated", "LeastAllocated alone", [{"name": "NodeResourcesFit", "weight": 1}]),
    ("targetloadpacking", "TargetLoadPacking", [{"name": "TargetLoadPacking", "weight": 1}]),
)


def load_aware_size(opts: Options) -> int | None:
    """The NodeNames size the load-aware rows use: 500, else the largest measured."""
    if not opts.load_aware or "names" not in opts.forms or "prioritize" not in opts.verbs:
        return None
    return 500 if 500 in opts.sizes else max(opts.sizes)


def load_aware_policy(scores: list[JSON], watcher: str, refresh: float) -> JSON:
    """kube-scheduler's default filters, and only `scores`: NodeResourcesFit scores
    LeastAllocated (its default); TargetLoadPacking reads the loopback load-watcher."""
    return {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
            "plugins": {"score": {"enabled": scores}},
            "pluginConfig": [
                {"name": "NodeResourcesFit", "args": {"scoringStrategy": {
                    "type": "LeastAllocated",
                    "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}}},
                {"name": "TargetLoadPacking", "args": {
                    "watcherAddress": watcher,
                    "metricProvider": {"refreshSeconds": refresh, "staleAfterSeconds": 300}}}]}


def load_aware_cases(size: int, gen: generate.Generated) -> list[JSON]:
    key = generate.body_key("filter", "names", size)
    return [{"id": f"prioritize-names-{size}-{suffix}", "verb": "prioritize", "form": "names",
             "size": size, "path": PATHS["prioritize"], "body_key": key,
             "body_file": str(gen.bodies[key]), "multi": False, "variant": label}
            for suffix, label, _ in LOAD_AWARE]


def drive_load_aware(opts: Options, gen: generate.Generated, workdir: Path,
                     cpus: tuple[int | None, int | None], measured: Measured) -> JSON | None:
    """The same prioritize body against a LeastAllocated-only server and a TargetLoadPacking
    server whose metrics refresh runs meanwhile; returns what the watcher served."""
    from bench.loadwatcher import FakeLoadWatcher

    size = load_aware_size(opts)
    if size is None:
        return None
    spec = generate.ClusterSpec(opts.nodes, opts.pods, opts.seed)
    with FakeLoadWatcher(spec, HOST) as watcher:
        for (suffix, label, scores), case in zip(LOAD_AWARE, load_aware_cases(size, gen), strict=True):
            policy = workdir / f"policy-{suffix}.json"
            policy.write_bytes(msgspec.json.encode(load_aware_policy(scores, watcher.address,
                                                                     opts.load_refresh)))
            log(f"load-aware: {label} on prioritize NodeNames {size}")
            server = start_server(opts, gen.cluster, workdir, cpus[0], suffix, policy)
            try:
                wait_ready(server, opts.ready_timeout)
                before = watcher.requests
                measured.merge(run_client(opts, server, [case], workdir, cpus[1]))
                case_done = next((c for c in measured.cases if c["id"] == case["id"]), None)
                if case_done is not None:
                    case_done["variant"] = label
                    case_done["watcher_fetches"] = watcher.requests - before
            finally:
                server.stop()
        return {"size": size, "refresh_seconds": opts.load_refresh, "nodes": spec.n_nodes,
                "fetches": watcher.requests}


# --------------------------------------------------------------------------- main


def log(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def run(opts: Options) -> JSON:
    cpus = cpu_plan()
    started = datetime.now(UTC)
    workdir = opts.workdir or default_workdir(opts.out_dir)
    workdir.mkdir(parents=True, exist_ok=True)
    gen, state_gen = generate_files(opts, workdir)
    spec = generate.ClusterSpec(opts.nodes, opts.pods, opts.seed)
    state: JSON | None = None
    server: Server | None = None
    t0 = time.perf_counter()
    try:
        if state_gen is not None:
            state_spec = generate.ClusterSpec(opts.state_nodes, opts.state_pods, opts.seed)
            log(f"state: loading {state_spec.n_nodes} nodes / {state_spec.n_pods} pods")
            server = start_server(opts, state_gen.cluster, workdir, cpus[0], "state")
            state = measure_state(server, state_spec, opts.ready_timeout)
            log(f"state: ready in {state['load_seconds']:.2f} s, RSS {(state['rss_kib'] or 0) / 1024:.0f} MiB")
            if state_gen is not gen:
                server.stop()
                server = None
        if server is None:
            server = start_server(opts, gen.cluster, workdir, cpus[0], "latency")
            wait_ready(server, opts.ready_timeout)
    except BaseException:
        if server is not None:
            server.stop()
        raise
    measured = drive(opts, server, gen, workdir, cpus)
    load_aware = drive_load_aware(opts, gen, workdir, cpus, measured)
    server_cpu, client_cpu = cpus
    return {
        "started": started.isoformat(timespec="seconds"),
        "seconds": round(time.perf_counter() - t0, 1),
        "machine": machine_info(),
        "pinning": {"server_cpu": server_cpu, "client_cpu": client_cpu},
        "command": [Path(sys.executable).name, "-m", "bench.run", *sys.argv[1:]],
        "config": {
            "cluster": {"nodes": spec.n_nodes, "pods": spec.n_pods, "seed": spec.seed,
                        "snapshot_bytes": gen.cluster_bytes},
            "sizes": opts.sizes, "forms": opts.forms, "verbs": opts.verbs,
            "max_requests": opts.max_requests, "max_seconds": opts.max_seconds,
            "min_requests": opts.min_requests, "warmup": opts.warmup,
            "concurrency": opts.concurrency, "policy": str(opts.policy),
            "server_module": opts.server_module, "generator": generator_hash(),
        },
        "server_idle_rss_kib": measured.idle_rss_kib,
        "server_restarts": measured.restarts,
        "planned_cases": [c["id"] for c in plan_cases(opts, gen)]
                         + ([c["id"] for c in load_aware_cases(load_aware["size"], gen)]
                            if load_aware else []),
        "load_aware": load_aware,
        "rss_mode": measured.rss_mode,
        "state": state,
        "cases": measured.cases,
        "floors": measured.floors,
    }


def write_results(result: JSON, out_dir: Path) -> tuple[Path, Path, str]:
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = result["started"].replace(":", "").replace("-", "").replace("+0000", "Z")
    for k in range(1000):  # bounded: a free name within the same second
        name = stamp if k == 0 else f"{stamp}-{k}"
        json_path, md_path = out_dir / f"{name}.json", out_dir / f"{name}.md"
        if not json_path.exists():
            break
    report.add_ratios(result)
    json_path.write_bytes(msgspec.json.format(msgspec.json.encode(result), indent=1))
    table = report.markdown(result)
    md_path.write_text(table)
    return json_path, md_path, table


def main(argv: Sequence[str] | None = None) -> int:
    opts = options_from(build_parser().parse_args(argv))
    own_workdir = None
    if opts.workdir is None and opts.no_cache:
        own_workdir = Path(tempfile.mkdtemp(prefix="extender-bench-"))
        opts.workdir = own_workdir
    try:
        result = run(opts)
    finally:
        if own_workdir is not None:
            shutil.rmtree(own_workdir, ignore_errors=True)
    json_path, md_path, table = write_results(result, opts.out_dir)
    print(table)
    log(f"wrote {json_path} and {md_path} ({result['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
