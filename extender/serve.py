"""`extender serve`: build the runtime (policy, state, binder) and run uvicorn."""

from __future__ import annotations

import argparse
import gc
import logging
import sys
from pathlib import Path

from extender.api import metrics
from extender.api.app import create_app
from extender.api.offload import DEFAULT_OFFLOAD_BYTES, Offloader
from extender.api.protocol import (
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS,
    ConnectionLimits,
    guarded_protocol,
)
from extender.api.runtime import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_MAX_BODY,
    DEFAULT_MAX_BODY_NODES_FORM,
    DEFAULT_MAX_CANDIDATES,
    Runtime,
)
from extender.engine.cluster import ClusterState
from extender.engine.policy import ExtenderPolicy, PolicyError, load_policy, parse_policy
from extender.engine.profile import Profile, build_profile
from extender.kube.client import KubeClient
from extender.kube.config import ConfigError, in_cluster_config, load_kubeconfig
from extender.state.binder import ApiBinder, SnapshotBinder
from extender.state.informer import LiveState
from extender.state.snapshot import SnapshotError, load_snapshot

log = logging.getLogger("extender.serve")

DEFAULT_POLICY = Path("config/policy.yaml")
DEFAULT_SNAPSHOT = Path("config/examples/cluster.json")
BUILTIN_POLICY = {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy"}


class StartupError(Exception):
    """A configuration problem that stops the server before it listens."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default: 127.0.0.1; 0.0.0.0 for all)")
    parser.add_argument("--port", type=int, default=8888, help="port to listen on (default: 8888)")
    parser.add_argument("--policy", type=Path, default=None,
                        help="ExtenderPolicy file, JSON or YAML (default: config/policy.yaml if "
                             "present, else kube-scheduler's default plugins, which it spells out)")
    source = parser.add_argument_group("cluster state (pick one; default: the demo snapshot)")
    source.add_argument("--snapshot", type=Path, default=None,
                        help="load the cluster from `kubectl get nodes,pods,poddisruptionbudgets,"
                             "priorityclasses -A -o json|yaml` output (default: "
                             "config/examples/cluster.json)")
    source.add_argument("--kubeconfig", type=Path, default=None,
                        help="watch a live cluster through this kubeconfig file")
    source.add_argument("--context", default=None, help="kubeconfig context (default: current)")
    source.add_argument("--in-cluster", action="store_true",
                        help="watch the cluster this pod runs in (service-account credentials)")
    live = parser.add_argument_group("live state and binding")
    live.add_argument("--max-staleness", type=float, default=60.0,
                      help="seconds without a healthy watch before /readyz fails (default: 60)")
    live.add_argument("--bind-deadline", type=float, default=4.0,
                      help="seconds a bind may spend retrying; keep below the scheduler's "
                           "httpTimeout (default: 4)")
    live.add_argument("--assume-ttl", type=float, default=30.0,
                      help="seconds a bound pod is counted on its node before the watch must "
                           "confirm it (default: 30)")
    limits = parser.add_argument_group("limits (what one client or one request may cost)")
    limits.add_argument("--nodes-form", action="store_true",
                        help="kube-scheduler sends whole Node objects (nodeCacheCapable: false): "
                             f"the default body limit becomes {DEFAULT_MAX_BODY_NODES_FORM} bytes")
    limits.add_argument("--max-body-bytes", type=int, default=None,
                        help=f"largest request body accepted (default: {DEFAULT_MAX_BODY}, "
                             f"or {DEFAULT_MAX_BODY_NODES_FORM} with --nodes-form)")
    limits.add_argument("--max-candidates", type=int, default=DEFAULT_MAX_CANDIDATES,
                        help="most candidate nodes in one filter, prioritize or preempt request "
                             f"(default: {DEFAULT_MAX_CANDIDATES})")
    limits.add_argument("--offload-bytes", type=int, default=DEFAULT_OFFLOAD_BYTES,
                        help="bodies larger than this are decoded and worked on in a worker "
                             "thread, one at a time, so the event loop keeps answering "
                             f"(default: {DEFAULT_OFFLOAD_BYTES})")
    limits.add_argument("--body-timeout", type=float, default=DEFAULT_BODY_TIMEOUT,
                        help="seconds a request body may take to arrive "
                             f"(default: {DEFAULT_BODY_TIMEOUT:g})")
    limits.add_argument("--header-timeout", type=float, default=DEFAULT_HEADER_TIMEOUT,
                        help="seconds a request head may take to arrive; slower connections "
                             f"are closed (default: {DEFAULT_HEADER_TIMEOUT:g})")
    limits.add_argument("--max-connections", type=int, default=DEFAULT_MAX_CONNECTIONS,
                        help="open connections beyond this are refused at once "
                             f"(default: {DEFAULT_MAX_CONNECTIONS})")
    parser.add_argument("--health-port", type=int, default=None,
                        help="also serve /healthz and /readyz over plain HTTP on this port (for "
                             "probes under mutual TLS; never the scheduler verbs)")
    parser.add_argument("--health-host", default=None,
                        help="address of --health-port (default: the same as --host)")
    parser.add_argument("--log-level", default="info",
                        choices=["debug", "info", "warning", "error"], help="log level (default: info)")
    parser.add_argument("--floor-endpoint", action="store_true",
                        help="also serve POST /_floor, a no-op used by bench/ as the HTTP floor")
    tls = parser.add_argument_group("TLS")
    tls.add_argument("--tls-cert-file", type=Path, default=None, help="serve HTTPS with this certificate")
    tls.add_argument("--tls-key-file", type=Path, default=None, help="private key of --tls-cert-file")
    tls.add_argument("--tls-client-ca-file", type=Path, default=None,
                     help="require client certificates signed by this CA (mutual TLS)")


def resolve_policy(path: Path | None) -> tuple[ExtenderPolicy, str]:
    if path is None and DEFAULT_POLICY.is_file():
        path = DEFAULT_POLICY
    if path is None:
        return parse_policy(BUILTIN_POLICY, "<built-in default policy>"), "<built-in defaults>"
    return load_policy(path), str(path)


def build_runtime(args: argparse.Namespace) -> Runtime:
    try:
        policy, policy_source = resolve_policy(args.policy)
    except PolicyError as exc:
        raise StartupError(f"invalid policy:\n{exc}") from None
    profile = build_profile(policy)
    live = args.kubeconfig is not None or args.in_cluster
    if live and args.snapshot is not None:
        raise StartupError("--snapshot cannot be combined with --kubeconfig or --in-cluster")
    if live:
        runtime = live_runtime(args, profile)
    else:
        snapshot = args.snapshot or DEFAULT_SNAPSHOT
        if not snapshot.is_file():
            raise StartupError(f"snapshot {snapshot} not found: pass --snapshot FILE, "
                               "--kubeconfig FILE or --in-cluster")
        try:
            state = load_snapshot(snapshot)
        except SnapshotError as exc:
            raise StartupError(f"cannot load the snapshot: {exc}") from None
        runtime = Runtime(profile, state,
                          SnapshotBinder(state, args.assume_ttl, on_outcome=count_bind),
                          source=f"snapshot {snapshot}")
    configure_limits(runtime, args)
    log.info("extender configured", extra={
        "policy": policy_source, "source": runtime.source, "nodes": len(runtime.state.nodes),
        "pods": len(runtime.state.pods), "filters": list(profile.filter_names),
        "scorers": [p.name for p, _ in profile.scorers]})
    return runtime


def configure_limits(runtime: Runtime, args: argparse.Namespace) -> None:
    """Body, candidate and off-loop limits from the command line."""
    for flag in ("max_candidates", "offload_bytes", "max_connections", "body_timeout",
                 "header_timeout"):
        if getattr(args, flag) <= 0:
            raise StartupError(f"--{flag.replace('_', '-')} must be positive")
    default = DEFAULT_MAX_BODY_NODES_FORM if args.nodes_form else DEFAULT_MAX_BODY
    runtime.max_body = args.max_body_bytes if args.max_body_bytes is not None else default
    runtime.max_candidates = args.max_candidates
    runtime.body_timeout = args.body_timeout
    runtime.offload = Offloader(args.offload_bytes)
    if args.health_port is not None:
        from extender.api.healthport import HealthListener

        listener = HealthListener(runtime, args.health_host or args.host, args.health_port)
        runtime.startup.append(listener.start)
        runtime.shutdown.append(listener.stop)


def count_bind(outcome: str) -> None:
    metrics.BIND.labels(outcome).inc()


def live_runtime(args: argparse.Namespace, profile: Profile) -> Runtime:
    """The runtime for a live cluster (`--kubeconfig`/`--in-cluster`). The informers start in
    the app's lifespan, on uvicorn's loop; readiness is `LiveState.not_ready_reason`."""
    try:
        if args.in_cluster:
            config = in_cluster_config()
            source = "in-cluster"
        else:
            config = load_kubeconfig(args.kubeconfig, args.context)
            source = f"kubeconfig {args.kubeconfig}"
        client = KubeClient(config)
    except ConfigError as exc:
        raise StartupError(f"cannot use the cluster credentials: {exc}") from None
    # httpx logs every request at INFO; the informers' own logs say what matters.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    state = ClusterState()
    live = LiveState(client, state, freeze_gc=True, owns_client=True)
    live.counters.on_event = lambda resource, kind: metrics.INFORMER_EVENTS.labels(resource, kind).inc()
    live.counters.on_synced = lambda resource: metrics.INFORMER_SYNCED.labels(resource).set(1)
    live.counters.on_stale = lambda resource: metrics.INFORMER_STALE_EVENTS.labels(resource).inc()
    for name in live.informers:
        metrics.INFORMER_SYNCED.labels(name).set(0)
    binder = ApiBinder(client, state, deadline=args.bind_deadline, assume_ttl=args.assume_ttl,
                       on_retry=metrics.BIND_RETRIES.inc, on_outcome=count_bind)

    def readiness() -> tuple[bool, str]:
        why = live.not_ready_reason(args.max_staleness)
        return (why is None, why or "cluster state synced")

    async def start() -> None:
        live.start()

    runtime = Runtime(profile, state, binder, readiness=readiness, source=source)
    runtime.startup.append(start)
    runtime.shutdown.append(live.stop)
    return runtime


def tune_gc() -> None:
    # Long-lived state is frozen out of the collector's generations, and large transient
    # request graphs no longer trigger full collections every few thousand allocations.
    gc.collect()
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    # While a large request runs in the worker thread, the event loop waits for the GIL at most
    # this long before the worker must hand it over (CPython's default is 5 ms): probes and
    # small requests stay quick; nothing changes when only one thread runs.
    sys.setswitchinterval(0.001)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    try:
        runtime = build_runtime(args)
    except StartupError as exc:
        log.error(str(exc))
        print(f"extender: {exc}", flush=True)
        return 2
    app = create_app(runtime, floor_endpoint=args.floor_endpoint)
    limits = ConnectionLimits(header_timeout=args.header_timeout,
                              max_connections=args.max_connections)
    config = uvicorn.Config(app, host=args.host, port=args.port, loop="uvloop",
                            http=guarded_protocol(limits), access_log=False, log_config=None,
                            lifespan="on", timeout_keep_alive=75)
    server = uvicorn.Server(config)
    if args.tls_cert_file or args.tls_key_file or args.tls_client_ca_file:
        from extender.ops.tls import configure_server_tls

        try:
            configure_server_tls(server, runtime, args.tls_cert_file, args.tls_key_file,
                                 args.tls_client_ca_file)
        except (ValueError, OSError) as exc:
            print(f"extender: TLS: {exc}", flush=True)
            return 2
    tune_gc()
    server.run()
    return 0
