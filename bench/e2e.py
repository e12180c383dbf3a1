"""End-to-end throughput: a real kube-scheduler, alone and with an extender, in the sandbox.

    python -m bench.e2e                        # 500 and 5000 nodes, 5000 pods, every configuration
    python -m bench.e2e --quick                # 20 nodes, 100 pods: a smoke test (under a minute)
    python -m bench.e2e --nodes 500 --pods 2000 --configs alone,extender

One control plane (`extender.sandbox`: etcd, kube-apiserver, kube-controller-manager) per run.
For each node count (ascending), the node agent creates the nodes; then each configuration gets
a fresh kube-scheduler (and extender), the pods are created at once by a concurrent creator,
a watch notes when each one is bound, and once all are bound the components' metrics are
scraped, the scheduler and extender stopped and the pods deleted (grace 0) until none is left.

Configurations (`--configs`, in this order):

* ``alone``: kube-scheduler with its default plugins, no extender;
* ``extender``: + this extender (filter, prioritize) with ``bench/policy-yardstick.json``
  (the Go yardstick's work: four filters and LeastAllocated);
* ``extender-bind``: the same, and the extender binds;
* ``go``: + the Go yardstick (filter, prioritize), started on a snapshot of the sandbox's nodes
  taken after the agent created them; it never sees binds;
* ``extender-default``: + this extender (filter, prioritize) with its default policy
  (kube-scheduler's default plugins, ``bench/policy.json``).

Each configuration runs in two start modes (`--modes`), each a measurement of its own:
``at-once`` (kube-scheduler runs while the pods are created; pods/s = pods / (first create
request → last pod seen bound by the watch), the issue's measure) and ``precreated`` (the pods
all exist before kube-scheduler starts; pods/s = (pods − 1) / (first bind → last bind): the
scheduling pace without the API server's pod creations competing for the CPU). Everything is
written to ``bench/results/e2e-<UTC>.json`` and ``.md``; the targets are printed as met / not
met and never fail the run. Progress goes to stderr and the tables to stdout. bench/README.md
says what each figure is.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import ssl
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import msgspec

from bench import goyardstick
from bench.e2e_kube import Binds, RawApi, client_context, create_all, open_watch
from extender import cliargs

JSON = dict[str, Any]
BENCH = Path(__file__).resolve().parent
DEFAULT_OUT = BENCH / "results"
YARDSTICK_POLICY = BENCH / "policy-yardstick.json"
DEFAULT_POLICY = BENCH / "policy.json"
NAMESPACE = "bench-e2e"
PROFILE = "bench-e2e"
NODE_PREFIX = "e2e"
IMAGE = "registry.k8s.io/pause:3.10"


def log(msg: str) -> None:
    print(f"[e2e] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- configurations


@dataclass(frozen=True)
class Config:
    key: str
    label: str
    extender: str | None  # None, "ours" or "go"
    verbs: tuple[str, ...] = ()
    policy: str | None = None  # "yardstick" or "default" (ours only)


CONFIGS: dict[str, Config] = {c.key: c for c in (
    Config("alone", "kube-scheduler alone", None),
    Config("extender", "+ extender (filter, prioritize)", "ours", ("filter", "prioritize"),
           "yardstick"),
    Config("extender-bind", "+ extender (filter, prioritize, bind)", "ours",
           ("filter", "prioritize", "bind"), "yardstick"),
    Config("go", "+ Go yardstick (filter, prioritize)", "go", ("filter", "prioritize")),
    Config("extender-default", "+ extender, default policy (filter, prioritize)", "ours",
           ("filter", "prioritize"), "default"),
)}


#: How the pods meet kube-scheduler (`--modes`).
MODES = {"at-once": "at once", "precreated": "pre-created"}


@dataclass
class Options:
    nodes: list[int]
    pods: int
    configs: list[str]
    modes: list[str] = field(default_factory=lambda: list(MODES))
    qps: float = 5000.0
    burst: int = 5000
    connections: int = 32
    heartbeat: float = 3600.0
    agent: str = "stop"
    apf_exempt: bool = False
    timeout: float = 1800.0
    stall: float = 120.0
    cpu: str = "100m"
    memory: str = "128Mi"
    out_dir: Path = DEFAULT_OUT
    state_dir: Path | None = None
    keep_state: bool = False
    version: str | None = None
    policy: Path = YARDSTICK_POLICY
    default_policy: Path = DEFAULT_POLICY
    #: More `extender serve` flags for our extender (`--extender-arg`).
    extender_args: tuple[str, ...] = ()
    go_src: Path = goyardstick.DEFAULT_SRC
    go_cache: Path = goyardstick.DEFAULT_CACHE
    go_toolchain: Path | None = None
    quick: bool = False


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.e2e", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="20 nodes, 100 pods (a smoke test)")
    p.add_argument("--nodes", type=cliargs.sizes,
                   help="node counts, ascending (default 500,5000; quick 20)")
    p.add_argument("--pods", type=cliargs.positive_int, help="pods created at once per configuration (default 5000; quick 100)")
    p.add_argument("--configs", default=",".join(CONFIGS),
                   help=f"configurations, from {', '.join(CONFIGS)} (default: all)")
    p.add_argument("--no-go", action="store_true", help="leave out the Go yardstick")
    p.add_argument("--modes", default="at-once,precreated",
                   help="at-once: kube-scheduler runs while the pods are created (pods/s from the "
                        "first create); precreated: it starts once they all exist (pods/s from "
                        "its first bind). Default: both, each a measurement of its own")
    p.add_argument("--qps", type=cliargs.positive_float, default=5000.0,
                   help="kube-scheduler's clientConnection.qps, every configuration (default 5000, as scheduler_perf)")
    p.add_argument("--burst", type=cliargs.positive_int, default=5000, help="kube-scheduler's clientConnection.burst (default 5000)")
    p.add_argument("--connections", type=cliargs.positive_int, default=32, help="the pod creator's connections (default 32)")
    p.add_argument("--heartbeat", type=cliargs.positive_float, default=3600.0,
                   help="node agent: seconds between a node's Lease renewals (default 3600: "
                        "nothing renews during a measurement)")
    p.add_argument("--agent", choices=("stop", "keep"), default="stop",
                   help="after creating the nodes, stop the node agent (default) or keep it "
                        "running, marking each bound pod Running (a status PATCH per pod)")
    p.add_argument("--apf-exempt", action="store_true",
                   help="a FlowSchema putting kube-scheduler's and the extender's requests in API "
                        "Priority and Fairness' exempt level (never queued, never rejected)")
    p.add_argument("--timeout", type=cliargs.positive_float, default=1800.0, help="seconds per configuration until every pod is bound")
    p.add_argument("--stall", type=cliargs.positive_float, default=120.0, help="give a configuration up after this many seconds without a new bind")
    p.add_argument("--cpu", default="100m", help="each pod's cpu request")
    p.add_argument("--memory", default="128Mi", help="each pod's memory request")
    p.add_argument("--out-dir", type=Path, default=DEFAULT_OUT,
                   help="where the result JSON goes (default %(default)s)")
    p.add_argument("--state-dir", type=Path, help="the sandbox's state (default: a temporary directory)")
    p.add_argument("--keep-state", action="store_true",
                   help="keep the temporary state directory (logs) afterwards (a --state-dir "
                        "given is always kept)")
    p.add_argument("--kubernetes-version", dest="version", help="the sandbox's Kubernetes (default: the sandbox's default)")
    p.add_argument("--policy", type=Path, default=YARDSTICK_POLICY,
                   help="our extender's policy in extender/extender-bind (default bench/policy-yardstick.json)")
    p.add_argument("--default-policy", type=Path, default=DEFAULT_POLICY,
                   help="our extender's policy in extender-default (default bench/policy.json)")
    p.add_argument("--extender-arg", action="append", default=[], metavar="ARG",
                   help="one more `extender serve` flag for our extender (repeat; write flags "
                        "as --extender-arg=--no-anticipate)")
    goyardstick.add_arguments(p)
    return p


def options_from(args: argparse.Namespace) -> Options:
    nodes = sorted(set(args.nodes)) if args.nodes else ([20] if args.quick else [500, 5000])
    pods = args.pods or (100 if args.quick else 5000)
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    bad = [c for c in configs if c not in CONFIGS]
    if bad:
        raise SystemExit(f"unknown configuration(s) {', '.join(bad)}: choose from {', '.join(CONFIGS)}")
    if args.no_go:
        configs = [c for c in configs if c != "go"]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or any(m not in MODES for m in modes):
        raise SystemExit(f"--modes: choose from {', '.join(MODES)}")
    configs = [c for c in CONFIGS if c in configs]  # the documented order
    return Options(nodes=nodes, pods=pods, configs=configs, modes=modes, qps=args.qps, burst=args.burst,
                   connections=args.connections, heartbeat=args.heartbeat, agent=args.agent,
                   apf_exempt=args.apf_exempt,
                   timeout=args.timeout, stall=args.stall, cpu=args.cpu, memory=args.memory,
                   out_dir=args.out_dir, state_dir=args.state_dir, keep_state=args.keep_state,
                   version=args.version, policy=args.policy, default_policy=args.default_policy,
                   go_src=args.go_src, go_cache=args.go_cache, go_toolchain=args.go_toolchain,
                   quick=args.quick, extender_args=tuple(args.extender_arg))


# --------------------------------------------------------------------------- metrics

_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


@dataclass
class Metrics:
    """Samples of a Prometheus text page: (name, labels, value)."""

    samples: list[tuple[str, dict[str, str], float]] = field(default_factory=list)

    @classmethod
    def parse(cls, text: str, prefixes: Sequence[str]) -> Metrics:
        out = []
        for line in text.splitlines():
            if not line or line[0] == "#" or not line.startswith(tuple(prefixes)):
                continue
            m = _SAMPLE.match(line)
            if m is None:
                continue
            try:
                value = float(m.group(3))
            except ValueError:
                continue
            out.append((m.group(1), dict(_LABEL.findall(m.group(2) or "")), value))
        return cls(out)

    def sum(self, name: str, **match: str) -> float:
        return sum(v for n, labels, v in self.samples
                   if n == name and all(labels.get(k) == want for k, want in match.items()))

    def by(self, name: str, label: str, **match: str) -> dict[str, float]:
        out: dict[str, float] = {}
        for n, labels, v in self.samples:
            if n == name and all(labels.get(k) == want for k, want in match.items()):
                key = labels.get(label, "")
                out[key] = out.get(key, 0.0) + v
        return out


SCHEDULER_PREFIXES = ("scheduler_", "process_cpu_seconds_total", "rest_client_rate_limiter_duration_seconds",
                      "rest_client_requests_total")
EXTENDER_PREFIXES = ("extender_request", "extender_bind_total", "process_cpu_seconds_total",
                     "extender_informer_", "extender_bind_retries_total",
                     "extender_connections_refused_total")
APISERVER_PREFIXES = ("apiserver_flowcontrol_rejected_requests_total",
                      "apiserver_flowcontrol_request_wait_duration_seconds_sum",
                      "apiserver_flowcontrol_request_wait_duration_seconds_count",
                      "apiserver_flowcontrol_nominal_limit_seats",
                      "apiserver_flowcontrol_current_limit_seats")


def scrape(url: str, prefixes: Sequence[str], ctx: ssl.SSLContext | None = None) -> Metrics:
    try:
        resp = httpx.get(url, verify=ctx if ctx is not None else False, timeout=30, trust_env=False)
    except httpx.HTTPError as exc:
        log(f"could not scrape {url}: {exc}")
        return Metrics()
    if resp.status_code != 200:
        log(f"could not scrape {url}: HTTP {resp.status_code}: {resp.text[:200]}")
        return Metrics()
    return Metrics.parse(resp.text, prefixes)


# --------------------------------------------------------------------------- CPU accounting

CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _proc_stat(pid: int) -> tuple[int, float] | None:
    """(session id, user + system CPU seconds) of a process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    # fields[0] is the state (field 3 of stat): session is field 6, utime 14, stime 15.
    return int(fields[3]), (int(fields[11]) + int(fields[12])) / CLK_TCK


def component(name: str) -> str:
    """A registry name as the role it plays (kube-scheduler-500-alone -> kube-scheduler)."""
    for role in ("kube-scheduler", "kube-apiserver", "kube-controller-manager", "etcd",
                 "node-agent", "go-extender", "extender"):
        if name.startswith(role):
            return role
    return name


def cpu_snapshot(sandbox: Any) -> dict[str, float]:
    """CPU seconds used so far by each sandbox process (its whole session: threads and
    children), by role; `bench` is this process (creator and watch); `machine` is every CPU's
    busy time (/proc/stat), so `machine` minus the rest is everything else on the host."""
    sessions = {p.pid: component(p.name) for p in sandbox.registry.load()}
    out: dict[str, float] = dict.fromkeys(sessions.values(), 0.0)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        stat = _proc_stat(int(entry))
        if stat is not None and stat[0] in sessions:
            role = sessions[stat[0]]
            out[role] = out.get(role, 0.0) + stat[1]
    t = os.times()
    out["bench"] = t.user + t.system
    with contextlib.suppress(OSError, ValueError, IndexError):
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
        ticks = [int(x) for x in fields]
        idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
        out["machine"] = (sum(ticks[:8]) - idle) / CLK_TCK
    return out


def cpu_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {k: round(after[k] - before.get(k, 0.0), 3) for k in after}


# --------------------------------------------------------------------------- pods


def pod_body(name: str, opts: Options) -> bytes:
    return msgspec.json.encode({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"schedulerName": PROFILE, "terminationGracePeriodSeconds": 0,
                 "automountServiceAccountToken": False,
                 "containers": [{"name": "main", "image": IMAGE, "resources": {
                     "requests": {"cpu": opts.cpu, "memory": opts.memory}}}]}})


def pod_names(config: str, count: int) -> list[str]:
    width = max(4, len(str(count)))
    return [f"{config}-{i:0{width}d}" for i in range(count)]


def percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


POD_COLLECTION = f"/api/v1/namespaces/{NAMESPACE}/pods"


async def clear_pods(api: RawApi, timeout: float = 600.0) -> float:
    """Delete every pod of the namespace (grace 0) and poll until none is left; seconds."""
    async def any_pod() -> bool:
        return bool((await api.get(POD_COLLECTION, limit="1")).get("items"))

    t0 = time.monotonic()
    if await any_pod():
        await api.delete_collection(POD_COLLECTION, grace=0)
    while await any_pod():
        if time.monotonic() - t0 > timeout:
            raise RuntimeError(f"pods of {NAMESPACE} still there after {timeout:.0f}s")
        await asyncio.sleep(0.2)
    return time.monotonic() - t0


@dataclass
class Measured:
    names: list[str]
    created: Any
    binds: Binds
    ended: float
    cpu: dict[str, float]
    outcome: str  # "all bound", "stalled", "timed out", "watch failed: ..."
    listed: list[dict[str, Any]]
    cpu_started: float
    precreated: bool = False


async def measure(kubeconfig: str, sandbox: Any, config: str, opts: Options,
                  is_alive: Callable[[], bool],
                  start_scheduler: Callable[[], Any] | None = None) -> Measured:
    """Create the pods at once, and follow them until every one is bound (or no bind for
    `opts.stall` seconds, or `opts.timeout`). With `start_scheduler` (the pre-created mode),
    the pods are all created first and kube-scheduler is started afterwards (in a thread, so
    the watch keeps reading); the CPU window then starts at the first bind."""
    api = RawApi(kubeconfig)
    names = pod_names(config, opts.pods)
    bodies = [pod_body(n, opts) for n in names]
    binds = Binds(expected=len(names))
    watch = await open_watch(api, NAMESPACE, binds)
    cpu_before: dict[str, float] = {}
    cpu_t0 = [0.0]

    def start() -> None:
        cpu_t0[0] = time.monotonic()
        cpu_before.update(cpu_snapshot(sandbox))

    outcome = "all bound"
    try:
        created = await create_all(api, POD_COLLECTION, bodies, opts.connections,
                                   on_start=start if start_scheduler is None else None)
        log(f"  created {len(names) - len(created.failures)} pods in "
            f"{created.last_done - created.first_sent:.2f}s; {len(binds.bound)} bound so far")
        if start_scheduler is not None:
            # The CPU window starts with the first bind (kube-scheduler's start-up is not in it).
            binds.on_first = start
            await asyncio.to_thread(start_scheduler)
        deadline = time.monotonic() + opts.timeout
        seen, progressed = len(binds.bound), time.monotonic()
        while not binds.all_bound.is_set():
            now = time.monotonic()
            if watch.done():
                outcome = f"watch failed: {watch.exception()}"
                break
            if now > deadline:
                outcome = f"timed out after {opts.timeout:.0f}s"
                break
            if now - progressed > opts.stall:
                outcome = f"stalled: no bind for {opts.stall:.0f}s"
                break
            if not is_alive():
                outcome = "kube-scheduler or the extender exited"
                break
            # Woken at once by the last bind (or a failed watch); otherwise every second to
            # check the deadlines and that the components still run.
            waiter = asyncio.ensure_future(binds.all_bound.wait())
            await asyncio.wait({waiter, watch}, timeout=1.0, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
            if len(binds.bound) != seen:
                seen, progressed = len(binds.bound), time.monotonic()
        ended = time.monotonic()
        cpu = cpu_delta(cpu_before, cpu_snapshot(sandbox)) if cpu_before else {}
        if not cpu_before:  # nothing was bound: no window
            cpu_t0[0] = ended
    finally:
        watch.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await watch
    listed = await api.list(POD_COLLECTION)
    api.close()
    return Measured(names, created, binds, ended, cpu, outcome, listed, cpu_t0[0],
                    precreated=start_scheduler is not None)


def summarise(m: Measured) -> JSON:
    created, binds = m.created, m.binds
    index = {n: i for i, n in enumerate(m.names)}
    first = created.first_sent
    bound_times = [t for _, t in binds.bound.values()]
    last_bound = max(bound_times) if bound_times else None
    latencies = [(t - created.sent[index[name]]) * 1000 for name, (_, t) in binds.bound.items()
                 if name in index]
    listed = {p["metadata"]["name"]: (p.get("spec") or {}).get("nodeName") or "" for p in m.listed}
    mismatched = [f"{name}: watch {node}, list {listed.get(name) or '-'}"
                  for name, (node, _) in binds.bound.items() if listed.get(name) != node]
    unbound = sorted(n for n in m.names if not listed.get(n))
    all_bound = (len(binds.bound) == len(m.names) and not unbound and not mismatched
                 and not binds.rebound and not created.failures)
    window = (last_bound - first) if last_bound is not None else None
    pods_per_second = round(len(m.names) / window, 1) if window and all_bound else None
    # The backlog when the creator finished, and how fast kube-scheduler drained it with
    # nothing being created any more: its own pace, without the creator's load.
    created_end = created.last_done
    after = [t for t in bound_times if t > created_end]
    drain = None
    if all_bound and len(after) >= max(10, len(m.names) // 10) and last_bound is not None:
        drain = round(len(after) / max(last_bound - created_end, 1e-9), 1)
    if m.precreated:
        # Every pod was there before kube-scheduler started: from its first bind to its last.
        first_bound = min(bound_times) if bound_times else None
        window = (last_bound - first_bound) if first_bound is not None and last_bound else None
        pods_per_second = (round((len(bound_times) - 1) / window, 1)
                           if window and all_bound and len(bound_times) > 1 else None)
        latencies, drain, after = [], None, bound_times
    return {
        "pods": len(m.names),
        "bound": len(binds.bound),
        "outcome": m.outcome,
        "create_seconds": round(created.last_done - first, 3),
        "create_per_second": round(len(m.names) / max(created.last_done - first, 1e-9), 1),
        "create_failures": created.failures[:20],
        "creator_cpu_seconds": round(created.cpu_seconds, 3),
        "mode": "precreated" if m.precreated else "at-once",
        "all_bound_seconds": round(window, 3) if window is not None and all_bound else None,
        "last_bound_seconds": round(window, 3) if window is not None else None,
        "pods_per_second": pods_per_second,
        "backlog_at_created": len(after),
        "drain_pods_per_second": drain,
        "latency_ms": {f"p{q}": round(v, 1) if (v := percentile(latencies, q)) is not None else None
                       for q in (50, 90, 99, 100)},
        "verified": {
            "every_pod_bound_once": all_bound,
            "listed": len(listed), "listed_bound": sum(1 for v in listed.values() if v),
            "unbound": unbound[:20], "unbound_count": len(unbound),
            "watch_list_mismatch": mismatched[:20], "rebound": binds.rebound[:20],
            "watch_events": binds.events, "watch_restarts": binds.restarts,
        },
        "window_seconds": round(m.ended - m.cpu_started, 3),
        "cpu_seconds": m.cpu,
    }


# --------------------------------------------------------------------------- one configuration


@dataclass
class Context:
    sandbox: Any
    opts: Options
    admin_ctx: ssl.SSLContext
    go_binary: Path | None
    go_reason: str


def _wait(what: str, check: Callable[[], bool], alive: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if not alive():
            raise RuntimeError(f"{what} exited during start-up")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} not ready after {timeout:.0f}s")
        time.sleep(0.1)


def start_go(ctx: Context, snapshot: Path, name: str) -> Any:
    from extender.sandbox.controlplane import ExtenderEndpoint
    from extender.sandbox.processes import free_port

    assert ctx.go_binary is not None
    port = free_port()
    proc = ctx.sandbox.registry.spawn(name, [str(ctx.go_binary), "-snapshot", str(snapshot),
                                             "-addr", f"127.0.0.1:{port}"])
    url = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        try:
            return httpx.get(f"{url}/healthz", timeout=2, trust_env=False).status_code == 200
        except httpx.HTTPError:
            return False
    _wait(name, healthy, proc.alive, 120)
    return ExtenderEndpoint(url, url, name, False, port)


def run_config(ctx: Context, config: Config, n_nodes: int, go_snapshot: Path | None,
               alone: JSON | None, mode: str) -> JSON:
    """One measurement: a fresh kube-scheduler (and extender), the pods, the figures, and
    everything stopped and deleted again. `mode` `at-once`: kube-scheduler runs when the
    pods are created; `precreated`: it starts once they all exist."""
    from extender.sandbox.controlplane import SchedulerOptions

    box, opts = ctx.sandbox, ctx.opts
    row: JSON = {"nodes": n_nodes, "config": config.key, "label": config.label, "mode": mode,
                 "verbs": list(config.verbs), "extender": config.extender}
    tag = f"{n_nodes}-{config.key}-{mode}"
    sched_name = f"kube-scheduler-{tag}"
    ext_name = f"{'go-extender' if config.extender == 'go' else 'extender'}-{tag}"
    started: list[str] = []
    endpoint = None
    policy: Path | None = None
    try:
        if config.extender == "ours":
            policy = opts.policy if config.policy == "yardstick" else opts.default_policy
            row["policy"] = str(policy)
            endpoint = box.start_extender(policy=policy, name=ext_name, args=opts.extender_args)
            row["extender_args"] = list(opts.extender_args)
            started.append(ext_name)
        elif config.extender == "go":
            if ctx.go_binary is None or go_snapshot is None:
                row["skipped"] = ctx.go_reason or "no Go yardstick"
                return row
            endpoint = start_go(ctx, go_snapshot, ext_name)
            started.append(ext_name)
            row["go_snapshot"] = str(go_snapshot)
        # (The sandbox lets its admin certificate read kube-scheduler's /metrics and /configz.)
        options = SchedulerOptions(verbs=config.verbs or ("filter",), node_cache=True,
                                   scheduler_names=(PROFILE,), qps=opts.qps, burst=opts.burst)
        api_url = box.settings()["apiserver"]

        def start_scheduler() -> None:
            box.start_scheduler(endpoint, options, policy=policy, name=sched_name)
            started.append(sched_name)

        def alive() -> bool:
            return all((p := box.registry.get(name)) is not None and p.alive() for name in started)

        if mode == "at-once":
            start_scheduler()
        api_before = scrape(f"{api_url}/metrics", APISERVER_PREFIXES, ctx.admin_ctx)
        log(f"{n_nodes} nodes, {config.label}, {MODES[mode]}: creating {opts.pods} pods")
        measured = _run_async(measure(
            str(box.kubeconfig), box, f"{config.key}-{mode[0]}", opts, alive,
            start_scheduler if mode == "precreated" else None))
        row.update(summarise(measured))
        sched_url = f"https://127.0.0.1:{box.settings()[sched_name]['port']}"
        row["scheduler_config"] = _configz(sched_url, ctx.admin_ctx)
        sched = scrape_scheduler(sched_url, ctx.admin_ctx, row["bound"])
        row["scheduler"] = scheduler_figures(sched, row["pods"])
        if endpoint is not None and config.extender == "ours":
            ext = scrape(f"{endpoint.url}/metrics", EXTENDER_PREFIXES)
            row["extender_figures"] = extender_figures(ext, row["pods"])
        api_after = scrape(f"{api_url}/metrics", APISERVER_PREFIXES, ctx.admin_ctx)
        row["apiserver"] = apiserver_figures(api_before, api_after)
        if alone is not None and alone.get("pods_per_second") and row.get("pods_per_second"):
            row["ratio_to_alone"] = round(row["pods_per_second"] / alone["pods_per_second"], 3)
        elif config.key == "alone" and row.get("pods_per_second"):
            row["ratio_to_alone"] = 1.0
        log(f"  {row['outcome']}: {row['bound']}/{row['pods']} bound, "
            f"{row.get('pods_per_second')} pods/s")
    except Exception as exc:  # a configuration that fails leaves the others to run
        row["error"] = f"{type(exc).__name__}: {exc}"
        log(f"  failed: {row['error']}")
        for name in started:
            tail = box.log_tail(name, 10)
            if tail:
                row.setdefault("logs", {})[name] = tail
    finally:
        for name in reversed(started):
            box.stop(name)
        seconds = _run_async(_clear(str(box.kubeconfig)))
        row["cleanup_seconds"] = round(seconds, 2)
    return row


async def _clear(kubeconfig: str) -> float:
    api = RawApi(kubeconfig)
    try:
        return await clear_pods(api)
    finally:
        api.close()


def _run_async(coro: Any) -> Any:
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    return uvloop.run(coro)


def _configz(url: str, ctx: ssl.SSLContext) -> JSON:
    """What kube-scheduler runs with (its /configz): percentageOfNodesToScore (0: adaptive),
    parallelism, the client's qps and burst, the profile's own percentage."""
    try:
        conf = httpx.get(f"{url}/configz", verify=ctx, timeout=10, trust_env=False).json()
    except (httpx.HTTPError, ValueError) as exc:
        return {"error": str(exc)}
    c = conf.get("componentconfig") or {}
    profiles = c.get("profiles") or [{}]
    return {"percentageOfNodesToScore": c.get("percentageOfNodesToScore"),
            "profilePercentageOfNodesToScore": profiles[0].get("percentageOfNodesToScore"),
            "parallelism": c.get("parallelism"),
            "qps": (c.get("clientConnection") or {}).get("qps"),
            "burst": (c.get("clientConnection") or {}).get("burst"),
            "extenders": [{k: e.get(k) for k in ("urlPrefix", "filterVerb", "prioritizeVerb",
                                                   "bindVerb", "nodeCacheCapable", "weight",
                                                   "httpTimeout")}
                          for e in c.get("extenders") or []]}


def scrape_scheduler(url: str, ctx: ssl.SSLContext, bound: int, timeout: float = 15.0) -> Metrics:
    """kube-scheduler's metrics once it has counted every bound pod: the watch can see a pod
    bound a moment before kube-scheduler's binding cycle (waiting for the API server's or the
    extender's reply) records it. Polls until `scheduled` reaches `bound` or `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        metrics = scrape(f"{url}/metrics", SCHEDULER_PREFIXES, ctx)
        scheduled = metrics.sum("scheduler_schedule_attempts_total", result="scheduled", profile=PROFILE)
        if scheduled >= bound or time.monotonic() > deadline:
            return metrics
        time.sleep(0.2)


def adaptive_nodes(n: int) -> int:
    """kube-scheduler's numFeasibleNodesToFind with percentageOfNodesToScore 0 (adaptive)."""
    if n < 100:
        return n
    percentage = max(5, 50 - n // 125)
    return max(100, n * percentage // 100)


def _ms(seconds: float, pods: int) -> float | None:
    return round(seconds * 1000 / pods, 3) if pods else None


def scheduler_figures(m: Metrics, pods: int) -> JSON:
    prof = {"profile": PROFILE}
    attempts = m.by("scheduler_schedule_attempts_total", "result", **prof)
    scheduled = attempts.get("scheduled", 0.0)
    per_attempt = m.sum("scheduler_scheduling_attempt_duration_seconds_count", **prof)
    points = m.by("scheduler_framework_extension_point_duration_seconds_sum", "extension_point",
                  **prof)
    filter_evals = m.by("scheduler_plugin_evaluation_total", "plugin", extension_point="Filter", **prof)
    score_evals = m.by("scheduler_plugin_evaluation_total", "plugin", extension_point="Score", **prof)
    algo_n = m.sum("scheduler_scheduling_algorithm_duration_seconds_count")
    return {
        "attempts": attempts,
        "attempts_measured": per_attempt,
        # scheduleOne from pop to the end of Permit (the serial part), per pod bound.
        "cycle_ms_per_pod": _ms(m.sum("scheduler_scheduling_attempt_duration_seconds_sum", **prof), pods),
        # Filter and Score, the extender calls included.
        "algorithm_ms_per_pod": _ms(m.sum("scheduler_scheduling_algorithm_duration_seconds_sum"), pods),
        "algorithm_count": algo_n,
        # Summed over the calls: Filter is observed once per node checked (in parallel), the
        # others once per pod.
        "extension_points_ms_per_pod": {k: _ms(v, pods) for k, v in sorted(points.items())},
        "nodes_filtered_per_pod": round(max(filter_evals.values(), default=0.0) / scheduled, 1) if scheduled else None,
        "nodes_scored_per_pod": round(max(score_evals.values(), default=0.0) / scheduled, 1) if scheduled else None,
        "sli_ms_mean": _ms(m.sum("scheduler_pod_scheduling_sli_duration_seconds_sum"), pods),
        "batch_attempts": m.by("scheduler_batch_attempts_total", "result"),
        "client_throttle_ms_total": round(m.sum("rest_client_rate_limiter_duration_seconds_sum") * 1000, 1),
        "api_requests": m.by("rest_client_requests_total", "code"),
        "cpu_seconds": m.sum("process_cpu_seconds_total"),
    }


def extender_figures(m: Metrics, pods: int) -> JSON:
    seconds = m.by("extender_request_duration_seconds_sum", "verb")
    counts = m.by("extender_request_duration_seconds_count", "verb")
    return {
        "ms_per_pod": {v: _ms(s, pods) for v, s in sorted(seconds.items())},
        "ms_per_request": {v: round(s * 1000 / counts[v], 3) for v, s in sorted(seconds.items()) if counts.get(v)},
        "requests": {v: int(c) for v, c in sorted(counts.items())},
        "outcomes": {f"{labels.get('verb')}/{labels.get('outcome')}": int(v)
                     for n, labels, v in m.samples if n == "extender_requests_total"},
        "binds": {k: int(v) for k, v in m.by("extender_bind_total", "outcome").items()},
        "informer_events": {k: int(v) for k, v in m.by("extender_informer_events_total", "resource").items()},
        "informer_relists": {k: int(v) for k, v in m.by("extender_informer_relists_total", "resource").items() if v},
        "informer_watches": {k: int(v) for k, v in m.by("extender_informer_watches_total", "resource").items()},
        "bind_retries": int(m.sum("extender_bind_retries_total")),
        "connections_refused": int(m.sum("extender_connections_refused_total")),
        "cpu_seconds": m.sum("process_cpu_seconds_total"),
    }


def apiserver_figures(before: Metrics, after: Metrics) -> JSON:
    def delta(name: str) -> dict[str, float]:
        a, b = after.by(name, "priority_level"), before.by(name, "priority_level")
        return {k: v - b.get(k, 0.0) for k, v in a.items() if v - b.get(k, 0.0)}
    rejected = delta("apiserver_flowcontrol_rejected_requests_total")
    wait_s = delta("apiserver_flowcontrol_request_wait_duration_seconds_sum")
    wait_n = delta("apiserver_flowcontrol_request_wait_duration_seconds_count")
    reasons: dict[str, int] = {}
    old = {(labels.get("priority_level"), labels.get("reason")): v for n, labels, v in before.samples
           if n == "apiserver_flowcontrol_rejected_requests_total"}
    for n, labels, v in after.samples:
        if n == "apiserver_flowcontrol_rejected_requests_total":
            key = (labels.get("priority_level"), labels.get("reason"))
            if v - old.get(key, 0.0):
                reasons[f"{key[0]}/{key[1]}"] = int(v - old.get(key, 0.0))
    levels = ("workload-high", "global-default")
    return {"flowcontrol_rejected": {k: int(v) for k, v in rejected.items()},
            "flowcontrol_rejected_by_reason": reasons,
            "flowcontrol_seats": {lvl: {
                "nominal": after.sum("apiserver_flowcontrol_nominal_limit_seats", priority_level=lvl),
                "current": after.sum("apiserver_flowcontrol_current_limit_seats", priority_level=lvl)}
                for lvl in levels},
            "flowcontrol_requests": {k: int(v) for k, v in wait_n.items()},
            "flowcontrol_wait_ms_mean": {k: round(wait_s.get(k, 0.0) * 1000 / v, 3)
                                         for k, v in wait_n.items() if v}}


# --------------------------------------------------------------------------- nodes


def ensure_nodes(box: Any, nodes: list[JSON], opts: Options) -> float:
    """The agent creates `nodes` (those already there stay); then it is stopped, or kept with
    its long heartbeat. Seconds."""
    t0 = time.monotonic()
    box.stop("node-agent")
    box.start_agent(nodes, heartbeat=opts.heartbeat)
    if opts.agent == "stop":
        box.stop("node-agent")
    return time.monotonic() - t0


async def _nodes_snapshot(kubeconfig: str, names: set[str], target: Path) -> int:
    api = RawApi(kubeconfig)
    try:
        nodes = [n for n in await api.list("/api/v1/nodes") if n["metadata"]["name"] in names]
    finally:
        api.close()
    items = [{"apiVersion": "v1", "kind": "Node", **n} for n in nodes]
    target.write_bytes(msgspec.json.encode({"apiVersion": "v1", "kind": "List", "items": items}))
    return len(items)


#: `--apf-exempt`: kube-scheduler's and the extender's users in the exempt priority level.
EXEMPT_FLOWSCHEMA = {
    "apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
    "metadata": {"name": "bench-e2e-exempt"},
    "spec": {"matchingPrecedence": 100, "priorityLevelConfiguration": {"name": "exempt"},
             "rules": [{"subjects": [{"kind": "User", "user": {"name": name}}
                                     for name in ("system:kube-scheduler", "scheduler-extender")],
                        "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                           "namespaces": ["*"], "clusterScope": True}]}]}}


async def _exempt(kubeconfig: str) -> None:
    api = RawApi(kubeconfig)
    try:
        await api.request("POST", "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas", EXEMPT_FLOWSCHEMA)
    finally:
        api.close()


async def _namespace(kubeconfig: str) -> None:
    api = RawApi(kubeconfig)
    try:
        try:
            await api.request("POST", "/api/v1/namespaces",
                              {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        except Exception as exc:
            if getattr(exc, "status", 0) != 409:
                raise
        # The ServiceAccount admission plugin wants the namespace's default ServiceAccount.
        deadline = time.monotonic() + 60
        while True:
            try:
                await api.get(f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts/default")
                return
            except Exception:
                if time.monotonic() > deadline:
                    raise
            await asyncio.sleep(0.2)
    finally:
        api.close()


# --------------------------------------------------------------------------- the run


def machine_info() -> JSON:
    from bench.run import machine_info as base

    return base()


def run(opts: Options) -> JSON:
    from extender.sandbox import nodes as sandbox_nodes
    from extender.sandbox.build import BuildError, build
    from extender.sandbox.controlplane import Sandbox

    started = datetime.now(UTC)
    t0 = time.monotonic()
    try:
        binaries = build(opts.version, progress=log)
    except BuildError as exc:
        raise SystemExit(f"the sandbox's programs: {exc}") from None
    go_binary, go_reason, go_info = None, "", None
    if "go" in opts.configs:
        prepared = goyardstick.prepare(opts.go_src, opts.go_cache, opts.go_toolchain)
        go_info = prepared.to_json()
        go_binary, go_reason = prepared.binary, prepared.reason
        if go_binary is None:
            log(f"Go yardstick: skipped ({go_reason})")
    own_state = opts.state_dir is None
    state = opts.state_dir or Path(tempfile.mkdtemp(prefix="extender-e2e-"))
    box = Sandbox(state, binaries, progress=log)
    rows: list[JSON] = []
    node_setup: list[JSON] = []
    try:
        box.start_control_plane()
        _run_async(_namespace(str(box.kubeconfig)))
        if opts.apf_exempt:
            _run_async(_exempt(str(box.kubeconfig)))
        ctx = Context(box, opts, client_context(str(box.pki_dir / "admin.crt"),
                                                str(box.pki_dir / "admin.key")),
                      go_binary, go_reason)
        every = sandbox_nodes.identical(max(opts.nodes), prefix=NODE_PREFIX)
        for n in opts.nodes:
            nodes = every[:n]
            seconds = ensure_nodes(box, nodes, opts)
            setup: JSON = {"nodes": n, "seconds": round(seconds, 1)}
            snapshot = None
            if go_binary is not None:
                snapshot = state / f"go-snapshot-{n}.json"
                setup["go_snapshot_nodes"] = _run_async(_nodes_snapshot(
                    str(box.kubeconfig), {x["metadata"]["name"] for x in nodes}, snapshot))
            node_setup.append(setup)
            log(f"{n} nodes ready in {seconds:.1f}s")
            alone: dict[str, JSON] = {}
            for key in opts.configs:
                for mode in opts.modes:
                    row = run_config(ctx, CONFIGS[key], n, snapshot, alone.get(mode), mode)
                    if key == "alone":
                        alone[mode] = row
                    rows.append(row)
    finally:
        box.down()
        if own_state and not opts.keep_state:
            shutil.rmtree(state, ignore_errors=True)
        elif opts.keep_state:
            log(f"state (logs) kept in {state}")
    result: JSON = {
        "started": started.isoformat(timespec="seconds"),
        "seconds": round(time.monotonic() - t0, 1),
        "machine": machine_info(),
        "command": [Path(sys.executable).name, "-m", "bench.e2e", *sys.argv[1:]],
        "kubernetes": binaries.version,
        "settings": {
            "nodes": opts.nodes, "pods": opts.pods, "configs": opts.configs, "modes": opts.modes,
            "scheduler_qps": opts.qps, "scheduler_burst": opts.burst,
            "creator_connections": opts.connections, "agent": opts.agent, "apf_exempt": opts.apf_exempt,
            "heartbeat_seconds": opts.heartbeat, "pod_requests": {"cpu": opts.cpu, "memory": opts.memory},
            "policy": str(opts.policy), "default_policy": str(opts.default_policy),
            "profile": PROFILE, "adaptive_nodes_to_find": {str(n): adaptive_nodes(n) for n in opts.nodes},
        },
        "node_setup": node_setup,
        "go": go_info,
        "rows": rows,
    }
    result["targets"] = targets(result)
    return result


# --------------------------------------------------------------------------- report

#: (configuration, node count, minimum ratio to kube-scheduler alone)
RATIO_TARGETS = (("extender", 500, 0.8), ("extender", 5000, 0.5),
                 ("extender-bind", 500, 0.8), ("extender-bind", 5000, 0.5))


def _row(result: JSON, nodes: int, config: str, mode: str) -> JSON | None:
    return next((r for r in result["rows"] if r["nodes"] == nodes and r["config"] == config
                 and r.get("mode") == mode), None)


def targets(result: JSON) -> list[JSON]:
    """The issue's targets, per start mode measured (the issue's own measure is `at-once`)."""
    out: list[JSON] = []
    for mode in result["settings"]["modes"]:
        for config, nodes, floor in RATIO_TARGETS:
            if config not in result["settings"]["configs"]:
                continue
            what = (f"{CONFIGS[config].label} at {nodes} nodes ≥ {floor}× kube-scheduler alone "
                    f"({MODES[mode]})")
            row = _row(result, nodes, config, mode)
            ratio = row.get("ratio_to_alone") if row else None
            if ratio is None:
                out.append({"target": what, "mode": mode, "status": "not measured"})
            else:
                out.append({"target": what, "mode": mode, "value": ratio,
                            "status": "met" if ratio >= floor else "not met"})
        for nodes in result["settings"]["nodes"]:
            for config in ("extender", "extender-bind"):
                if config not in result["settings"]["configs"]:
                    continue
                what = (f"{CONFIGS[config].label} ahead of the Go yardstick at {nodes} nodes "
                        f"({MODES[mode]})")
                ours, go = _row(result, nodes, config, mode), _row(result, nodes, "go", mode)
                a = ours.get("pods_per_second") if ours else None
                b = go.get("pods_per_second") if go else None
                if a is None or b is None:
                    out.append({"target": what, "mode": mode, "status": "not measured"})
                else:
                    out.append({"target": what, "mode": mode, "value": round(a / b, 3),
                                "status": "met" if a > b else "not met"})
    return out


def _fmt(v: Any, digits: int = 1) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def _cores(row: JSON, role: str) -> str:
    """CPU seconds of `role` over the row's window: cores used on average."""
    cpu = dict(row.get("cpu_seconds") or {})
    window = row.get("window_seconds") or 0
    if "machine" in cpu:
        cpu["other"] = max(0.0, cpu["machine"] - sum(v for k, v in cpu.items() if k != "machine"))
    if role not in cpu or not window:
        return "–"
    return f"{cpu[role] / window:.2f}"


def _measured(r: JSON) -> bool:
    return "pods" in r and not r.get("skipped")


def markdown(result: JSON) -> str:
    s = result["settings"]
    lines = [
        f"## End-to-end throughput: kube-scheduler {result['kubernetes']} in the sandbox",
        "",
        f"{s['pods']} pods per row ({s['creator_connections']} creator connections), each "
        f"requesting {s['pod_requests']['cpu']} cpu / {s['pod_requests']['memory']}. kube-scheduler: "
        "one profile, its default plugins, clientConnection "
        f"qps {s['scheduler_qps']:g} / burst {s['scheduler_burst']} in every row, "
        "percentageOfNodesToScore adaptive (its default); a fresh kube-scheduler (and extender) "
        "per row, the pods deleted between rows.",
        "",
        "* **at once**: kube-scheduler runs while the pods are created at once; pods/s = pods / "
        "(first create request → last pod bound, as a watch saw it). `drain` = the pods still "
        "unbound when the last create was answered (the backlog, in brackets) / the time from "
        "then to the last bind: kube-scheduler's pace once nothing is being created (– when the "
        "backlog was under a tenth of the pods). Latency = create request → bound.",
        "* **pre-created**: every pod exists before kube-scheduler starts; pods/s = (pods − 1) / "
        "(first bind → last bind): the scheduling pace alone, no creation beside it.",
        "",
        "| nodes | configuration | start | create s | all bound s | pods/s | × alone | drain pods/s (backlog) "
        "| p50 ms | p99 ms | extender ms/pod filter / prioritize / bind | nodes scored/pod |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for r in result["rows"]:
        start = MODES.get(r.get("mode", ""), "–")
        if r.get("skipped"):
            lines.append(f"| {r['nodes']} | {r['label']} | {start} | – | – | skipped: {r['skipped']} | | | | | | |")
            continue
        if not _measured(r):
            lines.append(f"| {r['nodes']} | {r['label']} | {start} | – | – | failed: {r.get('error', '')[:80]} | | | | | | |")
            continue
        ext = (r.get("extender_figures") or {}).get("ms_per_pod") or {}
        ext_cell = " / ".join(_fmt(ext.get(v), 3) for v in ("filter", "prioritize", "bind")) if ext else "–"
        lat = r.get("latency_ms") or {}
        pps = _fmt(r.get("pods_per_second"))
        if r.get("pods_per_second") is None:
            pps = f"{r.get('outcome')} ({r.get('bound')}/{r.get('pods')})"
        sched = r.get("scheduler") or {}
        drain = "–" if r.get("mode") == "precreated" else \
            f"{_fmt(r.get('drain_pods_per_second'))} ({r.get('backlog_at_created', '–')})"
        lines.append(
            f"| {r['nodes']} | {r['label']} | {start} | {_fmt(r.get('create_seconds'), 2)} "
            f"| {_fmt(r.get('all_bound_seconds'), 2)} | {pps} | {_fmt(r.get('ratio_to_alone'), 2)} "
            f"| {drain} | {_fmt(lat.get('p50'), 0)} | {_fmt(lat.get('p99'), 0)} | {ext_cell} "
            f"| {_fmt(sched.get('nodes_scored_per_pod'), 0)} |")
    lines += [
        "",
        "### Where the time goes (per pod bound)",
        "",
        "`wall` = 1000 / pods/s. `algorithm` = kube-scheduler's Filter and Score with the extender "
        "calls (`scheduler_scheduling_algorithm_duration_seconds`), the serial part of its cycle "
        "(binding runs beside it); kube-scheduler has no metric of its own for an extender call, so "
        "`ext. seen` = algorithm − the same node count's and start's `alone` algorithm. `extender f+p` "
        "/ `bind` = the extender's own handler time (`extender_request_duration_seconds`; a bind's "
        "includes its wait for the API server); `extender CPU` = its process's CPU per pod (requests, "
        "informer events, binds). Then the cores each component used on average over the window "
        "(CPU seconds / window seconds; the window starts at the first create, or, pre-created, at "
        "the first bind): `other` = the host's busy time (/proc/stat) minus the "
        "components listed (kube-controller-manager, and anything else running on the host), "
        "`machine` = all of it.",
        "",
        "| nodes | configuration | start | wall ms | algorithm ms | ext. seen ms | extender f+p ms | bind ms "
        "| extender CPU ms | kube-scheduler | extender | apiserver | etcd | agent | bench | other | machine |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        if not _measured(r):
            continue
        sched = r.get("scheduler") or {}
        alone = _row(result, r["nodes"], "alone", r.get("mode", ""))
        alone_algo = ((alone or {}).get("scheduler") or {}).get("algorithm_ms_per_pod")
        algo = sched.get("algorithm_ms_per_pod")
        seen = round(algo - alone_algo, 3) if (algo is not None and alone_algo is not None
                                               and r["config"] != "alone") else None
        ext = (r.get("extender_figures") or {}).get("ms_per_pod") or {}
        fp = (ext.get("filter") or 0) + (ext.get("prioritize") or 0) if ext else None
        role = "go-extender" if r.get("extender") == "go" else "extender"
        ext_cpu = (r.get("cpu_seconds") or {}).get(role)
        ext_cpu_ms = round(ext_cpu * 1000 / r["pods"], 3) if ext_cpu is not None and r["pods"] else None
        wall = round(1000 / r["pods_per_second"], 3) if r.get("pods_per_second") else None
        lines.append(
            f"| {r['nodes']} | {r['label']} | {MODES.get(r.get('mode', ''), '–')} | {_fmt(wall, 2)} "
            f"| {_fmt(algo, 2)} | {_fmt(seen, 2)} "
            f"| {_fmt(fp, 2)} | {_fmt(ext.get('bind'), 2)} | {_fmt(ext_cpu_ms, 2)} "
            f"| {_cores(r, 'kube-scheduler')} | {_cores(r, role)} | {_cores(r, 'kube-apiserver')} "
            f"| {_cores(r, 'etcd')} | {_cores(r, 'node-agent')} | {_cores(r, 'bench')} "
            f"| {_cores(r, 'other')} | {_cores(r, 'machine')} |")
    lines += ["", "### Targets (informational; the issue measures *at once*)", ""]
    for t in result["targets"]:
        value = f" ({t['value']:.2f}×)" if t.get("value") is not None else ""
        lines.append(f"* {t['target']}: **{t['status']}**{value}")
    lines += ["", "### Checks and notes", ""]
    clean, problems = 0, []
    for r in result["rows"]:
        where = f"{r['nodes']} nodes, {r['label']}, {MODES.get(r.get('mode', ''), '–')}"
        if not _measured(r):
            if r.get("error"):
                problems.append(f"* {where}: failed: {r['error']}")
            continue
        v = r.get("verified") or {}
        attempts = {k: int(x) for k, x in ((r.get("scheduler") or {}).get("attempts") or {}).items()}
        binds = (r.get("extender_figures") or {}).get("binds") or {}
        rejected = (r.get("apiserver") or {}).get("flowcontrol_rejected")
        notes = []
        if not v.get("every_pod_bound_once"):
            notes.append(f"NOT every pod bound once ({r.get('outcome')}; unbound {v.get('unbound_count')}, "
                         f"watch/list mismatches {len(v.get('watch_list_mismatch') or [])}, "
                         f"rebound {len(v.get('rebound') or [])}, create failures "
                         f"{len(r.get('create_failures') or [])})")
        if set(attempts) != {"scheduled"} or attempts.get("scheduled") != r["pods"]:
            notes.append(f"kube-scheduler attempts {attempts}")
        if binds and set(binds) != {"bound"}:
            notes.append(f"extender binds {binds}")
        if rejected:
            notes.append(f"API server rejected (APF) {rejected}")
        if r.get("error"):
            notes.append(f"error: {r['error']}")
        if notes:
            problems.append(f"* {where}: " + "; ".join(notes) + ".")
        else:
            clean += 1
    lines.append(f"* {clean} of {sum(1 for r in result['rows'] if _measured(r))} measured rows: every pod "
                 "bound exactly once (the watch saw one node per pod, the final list has every pod "
                 "on that node), kube-scheduler scheduled each in one attempt, every extender bind "
                 "`bound`, no API server (APF) rejection.")
    lines += problems
    pct = sorted({json.dumps((r.get("scheduler_config") or {}).get("percentageOfNodesToScore"))
                  for r in result["rows"] if r.get("scheduler_config")})
    adaptive = ", ".join(f"{n} nodes → {k}" for n, k in s["adaptive_nodes_to_find"].items())
    agent = ("stopped once they were Ready (no pod status patches, no heartbeats during the "
             "measurements)" if s["agent"] == "stop" else
             "kept running: it marks each bound pod Running (a status PATCH per pod)")
    lines += [
        f"* kube-scheduler's percentageOfNodesToScore (its /configz): {', '.join(pct) or '–'} "
        f"(0 = adaptive: {adaptive} feasible nodes to find); `nodes scored/pod` above is what it "
        "actually scored (scheduler_plugin_evaluation_total of NodeResourcesFit at Score / pods), "
        "which is also how many nodes each extender call carried.",
        f"* Node agent: created the nodes, then {agent}; heartbeat {s['heartbeat_seconds']:g} s "
        "(a node's Lease renewal once per heartbeat, its Ready condition every fifth), so "
        "renewals do not load the API server during a measurement.",
        "* The Go yardstick reads a snapshot of the nodes taken after the agent created them and "
        "never sees binds: its filter and LeastAllocated scores stay those of empty nodes.",
        f"* Our extender's policy in the filter/prioritize rows: `{Path(s['policy']).name}` (the Go "
        "yardstick's work: NodeUnschedulable, TaintToleration, NodeAffinity, NodeResourcesFit; "
        f"score LeastAllocated cpu+memory); `extender, default policy`: `{Path(s['default_policy']).name}`.",
        f"* Wall time of the run: {result['seconds']:.0f} s.",
    ]
    return "\n".join(lines) + "\n"


def write_results(result: JSON, out_dir: Path) -> tuple[Path, Path, str]:
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.fromisoformat(result["started"]).strftime("%Y%m%dT%H%M%SZ")
    for k in range(1000):
        name = f"e2e-{stamp}" if k == 0 else f"e2e-{stamp}-{k}"
        json_path, md_path = out_dir / f"{name}.json", out_dir / f"{name}.md"
        if not json_path.exists():
            break
    json_path.write_bytes(msgspec.json.format(msgspec.json.encode(result), indent=1))
    table = markdown(result)
    md_path.write_text(table)
    return json_path, md_path, table


def main(argv: Sequence[str] | None = None) -> int:
    opts = options_from(build_parser().parse_args(argv))
    result = run(opts)
    json_path, md_path, table = write_results(result, opts.out_dir)
    print(table)
    log(f"wrote {json_path} and {md_path} ({result['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
