"""`extender serve`: build the runtime (policy, state, binder) and run uvicorn."""

from __future__ import annotations

import argparse
import asyncio
import errno
import gc
import logging
import os
import socket
import sys
from pathlib import Path

from extender import cliargs
from extender.api import memory, metrics
from extender.api import runtime as runtime_module
from extender.api.app import create_app
from extender.api.bounded import DEFAULT_CACHE_BYTES
from extender.api.health import CheckedReadiness, with_check, with_detail
from extender.api.offload import DEFAULT_OFFLOAD_BYTES, Offloader
from extender.api.protocol import (
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS,
    ConnectionLimits,
    guarded_protocol,
)
from extender.api.rowreply import REPLIES_PER_LIST
from extender.api.runtime import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_MAX_BODY,
    DEFAULT_MAX_BODY_NODES_FORM,
    DEFAULT_MAX_CANDIDATES,
    Runtime,
)
from extender.data import default_policy, demo_snapshot
from extender.engine import policy as policy_module
from extender.engine.cluster import ClusterState
from extender.engine.plugins.capacity_scheduling.store import QuotaStore
from extender.engine.plugins.trimaran.store import TrimaranStore
from extender.engine.policy import ExtenderPolicy, PolicyError
from extender.engine.profile import Profile, build_profile
from extender.kube.client import KubeClient, KubeError
from extender.kube.config import (
    KUBECONFIG_AUTO,
    ConfigError,
    in_cluster_config,
    kubeconfig_path,
    load_kubeconfig,
)
from extender.logs import FORMATS
from extender.state.binder import ApiBinder, SnapshotBinder
from extender.state.events import EventRecorder
from extender.state.informer import LiveState, resources_for
from extender.state.permit import DEFAULT_MAX_HELD, PermitBinder
from extender.state.snapshot import SnapshotError, load_snapshot

SERVICE_ACCOUNT_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
log = logging.getLogger("extender.serve")

# Shipped as package data (extender/data/), so found from any working directory.
DEFAULT_POLICY = default_policy()
DEFAULT_SNAPSHOT = demo_snapshot()


class StartupError(Exception):
    """A configuration problem that stops the server before it listens."""


def add_commands(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register `extender serve` (see `extender.cli`)."""
    parser = subparsers.add_parser(
        "serve", help="run the extender HTTP service",
        description="Serve filter, prioritize, preempt and bind for kube-scheduler. Flags "
                    "follow kube-scheduler's component flags (--bind-address, --secure-port, "
                    "--tls-*-file, --client-ca-file, -v, --logging-format); the older names "
                    "remain as aliases.")
    add_arguments(parser)
    parser.set_defaults(func=run)


def _duration(text: str) -> float:
    """Seconds from a Go duration ("15s", "1m30s") or a number, as kube-scheduler's flags."""
    from extender.ops.fields import parse_go_duration

    try:
        return float(text)
    except ValueError:
        pass
    try:
        return parse_go_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bind-address", "--host", dest="host", default="127.0.0.1",
                        metavar="ADDRESS",
                        help="address to listen on (default: 127.0.0.1; 0.0.0.0 for all). "
                             "--host is an alias")
    parser.add_argument("--secure-port", "--port", dest="port", type=cliargs.port, default=8888,
                        metavar="PORT",
                        help="port to listen on, HTTPS with --tls-cert-file, else plain HTTP "
                             "(default: 8888). --port is an alias")
    parser.add_argument("--policy", type=Path, default=None,
                        help="ExtenderPolicy file, JSON or YAML (default: the packaged extender/data/"
                             "policy.yaml if present, else kube-scheduler's default plugins, which it spells out)")
    source = parser.add_argument_group("cluster state (pick one; default: the demo snapshot)")
    source.add_argument("--snapshot", type=Path, default=None,
                        help="load the cluster from `kubectl get nodes,pods,poddisruptionbudgets,"
                             "priorityclasses,namespaces,services,replicasets,statefulsets,"
                             "replicationcontrollers -A -o json|yaml` output, plus podgroups and "
                             "elasticquotas for Coscheduling/CapacityScheduling (default: the "
                             "packaged demo cluster, extender/data/cluster.json)")
    source.add_argument("--kubeconfig", type=Path, default=None, nargs="?", const=KUBECONFIG_AUTO,
                        metavar="FILE",
                        help="watch a live cluster through this kubeconfig file; without FILE, "
                             "kubectl's: the $KUBECONFIG list (merged), else ~/.kube/config. Exec "
                             "credential plugins run as kubectl runs them")
    source.add_argument("--context", default=None,
                        help="kubeconfig context (default: current); alone, it implies "
                             "--kubeconfig without FILE")
    source.add_argument("--in-cluster", action="store_true",
                        help="watch the cluster this pod runs in (service-account credentials)")
    live = parser.add_argument_group("live state and binding")
    live.add_argument("--max-staleness", type=float, default=60.0,
                      help="seconds without a healthy watch before /readyz fails (default: 60)")
    live.add_argument("--bind-deadline", type=float, default=4.0,
                      help="seconds a bind may spend retrying; keep below the scheduler's "
                           "httpTimeout (default: 4)")
    live.add_argument("--scheduler-http-timeout", type=float, default=None, metavar="SECONDS",
                      help="the httpTimeout of the extender's entry in kube-scheduler's "
                           "configuration: binds held at Coscheduling's Permit answer before it "
                           "(default: what render-config --policy writes: the permit wait + "
                           "--bind-deadline + 2s)")
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
    limits.add_argument("--reply-cache", type=int, default=REPLIES_PER_LIST, metavar="N",
                        help="filter and prioritize replies kept per candidate list, reused "
                             "for the same pod spec while the nodes they read are unchanged; "
                             f"0 turns reuse off (default: {REPLIES_PER_LIST})")
    limits.add_argument("--no-anticipate", dest="anticipate", action="store_false",
                        help="do not prepare a pod's prioritize reply as soon as its filter is "
                             "answered (done by default while kube-scheduler follows each "
                             "filter with a prioritize of the nodes that passed; it needs "
                             "--reply-cache)")
    limits.add_argument("--body-timeout", type=float, default=DEFAULT_BODY_TIMEOUT,
                        help="seconds a request body may take to arrive "
                             f"(default: {DEFAULT_BODY_TIMEOUT:g})")
    limits.add_argument("--header-timeout", type=float, default=DEFAULT_HEADER_TIMEOUT,
                        help="seconds a request head may take to arrive; slower connections "
                             f"are closed (default: {DEFAULT_HEADER_TIMEOUT:g})")
    limits.add_argument("--max-connections", type=int, default=DEFAULT_MAX_CONNECTIONS,
                        help="open connections beyond this are refused at once; those whose "
                             "bind is held at Coscheduling's Permit do not count "
                             f"(default: {DEFAULT_MAX_CONNECTIONS})")
    limits.add_argument("--cache-bytes", type=int, default=DEFAULT_CACHE_BYTES, metavar="BYTES",
                        help="what the caches that keep what requests bring (recent pods, "
                             "candidate lists and their replies) may hold in all; an entry "
                             "over a sixteenth of its cache's share is not kept (default: "
                             f"{DEFAULT_CACHE_BYTES // (1 << 20)} MiB)")
    limits.add_argument("--max-held-binds", type=int, default=DEFAULT_MAX_HELD,
                        help="binds held at Coscheduling's Permit at once (a gang's pods wait "
                             "there, each on its own connection); a bind past it is refused and "
                             f"retried by kube-scheduler (default: {DEFAULT_MAX_HELD})")
    election = parser.add_argument_group(
        "leader election (several replicas: only the lease holder is Ready and answers)")
    election.add_argument("--leader-elect", action="store_true",
                          help="elect a leader among replicas with a coordination.k8s.io Lease "
                               "(needs --kubeconfig or --in-cluster)")
    election.add_argument("--leader-elect-lease-duration", type=_duration, default=15.0,
                          metavar="DURATION",
                          help="how long a standby waits after the leader's last renewal "
                               "before taking over (default: 15s)")
    election.add_argument("--leader-elect-renew-deadline", type=_duration, default=10.0,
                          metavar="DURATION",
                          help="how long the leader keeps trying to renew before it stops "
                               "leading (default: 10s)")
    election.add_argument("--leader-elect-retry-period", type=_duration, default=2.0,
                          metavar="DURATION",
                          help="between attempts to acquire or renew (default: 2s)")
    election.add_argument("--leader-elect-resource-name", default="scheduler-extender",
                          help="the Lease's name (default: scheduler-extender)")
    election.add_argument("--leader-elect-resource-namespace", default=None,
                          help="the Lease's namespace (default: the pod's own, else default)")
    parser.add_argument("--health-port", type=cliargs.port, default=None,
                        help="also serve /healthz, /livez and /readyz over plain HTTP on this port "
                             "(for probes under mutual TLS), and /metrics unless --client-ca-file "
                             "is given; never the scheduler verbs")
    parser.add_argument("--health-host", default=None,
                        help="address of --health-port (default: the same as --bind-address)")
    logs = parser.add_argument_group("logging")
    logs.add_argument("-v", "--v", dest="verbosity", type=cliargs.count, default=None,
                      metavar="LEVEL",
                      help="log verbosity, as klog's: 0 start-up, sync and failures; 4 also one "
                           "line per scheduler request; 10 everything (default: 0)")
    logs.add_argument("--logging-format", default="text", choices=FORMATS,
                      help="text (klog's text lines) or json (klog's JSON layout: ts, v, msg, "
                           "err, key/value pairs) (default: text)")
    logs.add_argument("--log-level", default=None,
                      choices=["debug", "info", "warning", "error"],
                      help="alias kept for compatibility: debug is -v 10, info is -v 0, "
                           "warning and error write only warnings and errors (-v wins when "
                           "both are given)")
    parser.add_argument("--record", type=Path, default=None, metavar="DIR",
                        help="record every exchange (request and reply bytes) and every change "
                             "the cluster state receives from outside them into DIR/recording-"
                             "<n>.jsonl, for `extender replay` and contract tests (docs/"
                             "operations.md, \"Recording\"); off by default")
    parser.add_argument("--floor-endpoint", action="store_true",
                        help="also serve POST /_floor, a no-op used by bench/ as the HTTP floor")
    tls = parser.add_argument_group("TLS")
    tls.add_argument("--tls-cert-file", type=Path, default=None, metavar="FILE",
                     help="serve HTTPS with this certificate")
    tls.add_argument("--tls-private-key-file", "--tls-key-file", dest="tls_key_file", type=Path,
                     default=None, metavar="FILE",
                     help="private key of --tls-cert-file. --tls-key-file is an alias")
    tls.add_argument("--client-ca-file", "--tls-client-ca-file", dest="tls_client_ca_file",
                     type=Path, default=None, metavar="FILE",
                     help="require client certificates signed by this CA (mutual TLS). "
                          "--tls-client-ca-file is an alias")


def resolve_policy(path: Path | None) -> tuple[ExtenderPolicy, str]:
    """`--policy`, else the packaged default policy."""
    return policy_module.resolve_policy(path, DEFAULT_POLICY)


def build_runtime(args: argparse.Namespace) -> Runtime:
    try:
        policy, policy_source = resolve_policy(args.policy)
    except PolicyError as exc:
        raise StartupError(f"invalid policy:\n{exc}") from None
    profile = build_profile(policy)
    if args.kubeconfig is None and args.context is not None and not args.in_cluster:
        args.kubeconfig = KUBECONFIG_AUTO
    live = args.kubeconfig is not None or args.in_cluster
    if live and args.snapshot is not None:
        raise StartupError("--snapshot cannot be combined with --kubeconfig or --in-cluster")
    snapshot = None
    if live:
        runtime = live_runtime(args, profile)
    else:
        snapshot = args.snapshot or DEFAULT_SNAPSHOT
        if not snapshot.is_file():
            what = "is a directory, not a file" if snapshot.is_dir() else "not found"
            raise StartupError(f"snapshot {snapshot} {what}: pass --snapshot FILE, "
                               "--kubeconfig FILE or --in-cluster")
        warnings: list[str] = []  # unknown field names of the snapshot's objects
        try:
            state = load_snapshot(snapshot, warnings=warnings)
        except SnapshotError as exc:
            raise StartupError(f"cannot load the snapshot: {exc}") from None
        for warning in warnings:
            log.warning("snapshot: %s", warning)
        runtime = Runtime(profile, state,
                          SnapshotBinder(state, args.assume_ttl, on_outcome=count_bind),
                          source=f"snapshot {snapshot}")
    configure_limits(runtime, args)
    if getattr(args, "record", None) is not None:
        start_recording(runtime, args, policy_source, snapshot)
    configure_load_metrics(runtime, runtime.live.client if runtime.live is not None else None)
    if runtime.live is not None:
        configure_topology_cache(runtime)
    configure_gang_and_quota(runtime, args)
    configure_leader_election(runtime, args)
    log.info("extender configured", extra={
        "policy": policy_source, "source": runtime.source, "nodes": len(runtime.state.nodes),
        "pods": len(runtime.state.pods), "filters": list(profile.filter_names),
        "scorers": [p.name for p, _ in profile.scorers]})
    return runtime


def configure_limits(runtime: Runtime, args: argparse.Namespace) -> None:
    """Body, candidate, cache and off-loop limits from the command line."""
    from extender.api.caches import configure_cache_bytes

    for flag in ("max_candidates", "offload_bytes", "max_connections", "body_timeout",
                 "header_timeout", "cache_bytes", "max_held_binds", "bind_deadline",
                 "max_staleness", "assume_ttl", "max_body_bytes", "scheduler_http_timeout"):
        value = getattr(args, flag)
        if value is not None and not value > 0:  # the last two are None when not given
            raise StartupError(f"--{flag.replace('_', '-')} must be positive, got {value:g}")
    default = DEFAULT_MAX_BODY_NODES_FORM if args.nodes_form else DEFAULT_MAX_BODY
    runtime.max_body = args.max_body_bytes if args.max_body_bytes is not None else default
    runtime.max_candidates = args.max_candidates
    if args.reply_cache < 0:
        raise StartupError("--reply-cache must be 0 or more")
    runtime.reply_reuse = args.reply_cache
    runtime.anticipate = args.anticipate
    configure_cache_bytes(args.cache_bytes)
    runtime.body_timeout = args.body_timeout
    runtime.offload = Offloader(args.offload_bytes)
    if args.health_port is not None:
        from extender.api.healthport import HealthListener

        # Under mutual TLS /metrics stays behind the client certificate (see api.healthport).
        listener = HealthListener(runtime, args.health_host or args.host, args.health_port,
                                  metrics=not args.tls_client_ca_file)
        runtime.startup.append(listener.start)
        runtime.shutdown.append(listener.stop)


def start_recording(runtime: Runtime, args: argparse.Namespace, policy_source: str,
                    snapshot: Path | None) -> None:
    """`--record DIR`: a new recording file with its header (what affects replies), the
    snapshot's objects, and the hooks that record the informers' changes, expiries and the
    binder's answers (`extender.state.recorder`, `extender.api.record`)."""
    from datetime import UTC, datetime

    from extender import __version__
    from extender.state import recording
    from extender.state.recorder import (
        Recorder,
        RecordingBinder,
        record_informers,
        record_snapshot,
    )

    policy_text = None
    if policy_source != "<built-in defaults>":
        try:
            policy_text = Path(policy_source).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise StartupError(f"--record: cannot keep the policy's text: {exc}") from None
    try:
        recorder = Recorder.create(args.record, runtime.state)
    except OSError as exc:
        raise StartupError(f"--record: {exc}") from None
    t, w = recorder.now()
    recorder.write_now(recording.Header(
        format=recording.FORMAT, extender=__version__,
        mode="live" if runtime.live is not None else "snapshot",
        source=runtime.source, policy=policy_text, policy_source=policy_source,
        flags=recording.Flags(
            nodes_form=args.nodes_form, max_body_bytes=runtime.max_body,
            max_candidates=runtime.max_candidates, offload_bytes=runtime.offload.threshold,
            reply_cache=runtime.reply_reuse, bind_deadline=args.bind_deadline,
            assume_ttl=args.assume_ttl, scheduler_http_timeout=args.scheduler_http_timeout),
        started=datetime.fromtimestamp(w, UTC).isoformat(timespec="milliseconds"), t=t, w=w,
        assignments_since=runtime.state.store(TrimaranStore).since))
    if snapshot is not None:
        record_snapshot(snapshot, recorder)
    if runtime.live is not None:
        record_informers(runtime.live, recorder)
    runtime.binder = RecordingBinder(runtime.binder, recorder)
    runtime.recorder = recorder
    log.info("recording", extra={"fields": {"file": str(recorder.path)}})


def configure_gang_and_quota(runtime: Runtime, args: argparse.Namespace) -> None:
    """Coscheduling's Permit in the bind verb; CapacityScheduling's reservations on filter.
    A recording records which held binds time out (`Recorder.permit_wait`)."""
    if args.scheduler_http_timeout is not None:
        from extender.engine.plugins.coscheduling import permit_wait
        from extender.state.permit import MARGIN, http_timeout_for

        wait = permit_wait(runtime.profile)
        if wait is not None and args.scheduler_http_timeout < http_timeout_for(
                wait, args.bind_deadline):
            raise StartupError(
                f"--scheduler-http-timeout {args.scheduler_http_timeout:g}s is shorter than a "
                f"bind held at Coscheduling's Permit can take: at least "
                f"{http_timeout_for(wait, args.bind_deadline):g}s (permitWaitingTimeSeconds "
                f"{wait:g} + --bind-deadline {args.bind_deadline:g}s + {2 * MARGIN:g}s); raise "
                "httpTimeout in kube-scheduler's configuration and this flag together")
    extra = {"wait": runtime.recorder.permit_wait} if runtime.recorder is not None else {}
    runtime_module.configure_gang_and_quota(
        runtime, bind_deadline=args.bind_deadline,
        scheduler_http_timeout=args.scheduler_http_timeout, on_outcome=count_bind,
        max_held=args.max_held_binds, **extra)


def configure_leader_election(runtime: Runtime, args: argparse.Namespace) -> None:
    """`--leader-elect`: only the Lease holder is Ready and answers; a replica that stops
    leading rejects its held binds (kube-scheduler retries them against the new leader) and
    forgets its quota reservations. The informers run on every replica, so a new leader starts
    from the API server's truth, already synced."""
    if not args.leader_elect:
        refuse_replicas_without_election(runtime, args.host)
        return
    if runtime.live is None:
        raise StartupError("--leader-elect needs a cluster (--kubeconfig or --in-cluster): "
                           "the lease lives in its API server")
    from extender.state.leader import ElectionConfig, LeaderElector

    config = ElectionConfig(
        namespace=args.leader_elect_resource_namespace or _own_namespace(),
        name=args.leader_elect_resource_name, lease_duration=args.leader_elect_lease_duration,
        renew_deadline=args.leader_elect_renew_deadline,
        retry_period=args.leader_elect_retry_period)
    problems = config.problems()
    if problems:
        raise StartupError("; ".join(problems))

    def started_leading() -> None:
        metrics.LEADER.set(1)

    elector = LeaderElector(runtime.live.client, config, on_started_leading=started_leading,
                            on_stopped_leading=lambda: stopped_leading(runtime))
    metrics.LEADER.set(0)
    runtime.not_leading = elector.not_leader_reason
    runtime.readiness = with_check(runtime.readiness, "leader-election",
                                   elector.not_leader_reason)

    async def start() -> None:
        elector.start()

    runtime.startup.append(start)
    runtime.shutdown.insert(0, elector.stop)  # release the lease before the client closes


def refuse_replicas_without_election(runtime: Runtime, host: str) -> None:
    """Without `--leader-elect`, a policy with Coscheduling, CapacityScheduling or
    NodeResourceTopologyMatch's overreserve cache must run as one replica: several would split
    a gang's held binds and a quota's or a node's reservations between processes. Not for a
    sidecar (`host` on loopback: only its own pod's kube-scheduler calls it). Checked in a
    cluster, where the pod can find itself (`POD_NAME`, else its hostname) and its controller;
    an API error is logged, not fatal."""
    from extender.ops.crosscheck import sidecar, stateful_plugins
    from extender.state.replicas import replica_count

    live = runtime.live
    stateful = stateful_plugins(runtime.profile)
    pod = os.environ.get("POD_NAME") or (socket.gethostname() if _in_a_pod() else "")
    if live is None or not stateful or not pod or sidecar(host):
        return
    namespace = os.environ.get("POD_NAMESPACE") or _own_namespace()

    async def count() -> tuple[str, int] | None:
        async with KubeClient(live.client.config) as client:
            return await replica_count(client, namespace, pod)

    try:
        found = asyncio.run(count())
    except KubeError as exc:
        log.warning("could not count this extender's replicas", extra={"fields": {
            "pod": f"{namespace}/{pod}", "error": str(exc)}})
        return
    if found is not None and found[1] > 1:
        controller, replicas = found
        raise StartupError(
            f"{controller} runs {replicas} replicas of this extender (pod {namespace}/{pod}) "
            f"and its policy enables {' and '.join(stateful)}: without --leader-elect they "
            "would split held binds and reservations between processes that cannot see "
            "each other's; add --leader-elect (manifests/components/ha does) or run one replica")


def _in_a_pod() -> bool:
    return Path(SERVICE_ACCOUNT_NAMESPACE).is_file()


def _own_namespace() -> str:
    """The pod's namespace in a cluster (its service account's), else `default`."""
    try:
        return Path(SERVICE_ACCOUNT_NAMESPACE).read_text().strip()
    except OSError:
        return "default"


def count_bind(outcome: str) -> None:
    metrics.labelled(metrics.BIND, outcome).inc()


def live_runtime(args: argparse.Namespace, profile: Profile) -> Runtime:
    """The runtime for a live cluster (`--kubeconfig`/`--in-cluster`). The informers start in
    the app's lifespan, on uvicorn's loop; readiness is `LiveState.not_ready_reason`."""
    try:
        if args.in_cluster:
            config = in_cluster_config()
            source = "in-cluster"
        else:
            path = kubeconfig_path(args.kubeconfig)
            config = load_kubeconfig(path, args.context)
            source = f"kubeconfig {config.source if path is None else path}"
        client = KubeClient(config)
        client.on_reclaim = metrics.API_CONNECTIONS_RECLAIMED.inc
        client.prepare_credentials()  # a broken exec plugin stops the start, with its message
    except ConfigError as exc:
        raise StartupError(f"cannot use the cluster credentials: {exc}") from None
    # httpx logs every request at INFO; the informers' own logs say what matters.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    state = ClusterState()
    # Custom resources (PodGroups, ElasticQuotas, NodeResourceTopologies, …) are watched only
    # when a plugin reads them: a cluster without those CRDs must not wait for them.
    live = LiveState(client, state, resources=resources_for(profile.plugin_names),
                     freeze_gc=True, owns_client=True)
    export_informer_metrics(live)
    binder = ApiBinder(client, state, deadline=args.bind_deadline, assume_ttl=args.assume_ttl,
                       on_retry=metrics.BIND_RETRIES.inc, on_outcome=count_bind)
    readiness = CheckedReadiness(lambda: live.not_ready_reason(args.max_staleness),
                                 lambda: informer_checks(live, args.max_staleness))

    async def start() -> None:
        live.start()

    runtime = Runtime(profile, state, binder, readiness=readiness, source=source, live=live)
    runtime.startup.append(start)
    # FailedScheduling Events on pods the extender rejects (read by the filter and bind routes).
    events = EventRecorder(client, on_outcome=lambda outcome: metrics.EVENTS.labels(outcome).inc())
    runtime.events = events
    runtime.startup.append(events.start)
    runtime.shutdown.append(events.stop)  # before live.stop closes the client
    runtime.shutdown.append(live.stop)
    return runtime


def configure_load_metrics(runtime: Runtime, client: KubeClient | None) -> None:
    """Trimaran's node-metrics source, refreshed in the background from the app's lifespan
    (`extender.state.loadmetrics`); nothing when no enabled plugin reads node load."""
    from extender.state.loadmetrics import LoadSourceConfigError, build_refresher

    try:
        refresher = build_refresher(runtime.profile, runtime.state, kube_client=client,
                                    on_fetch=metrics.count_load_fetch)
    except LoadSourceConfigError as exc:
        raise StartupError(f"node load metrics: {exc}") from None
    if refresher is None:
        return
    if runtime.recorder is not None:
        from extender.state.recorder import record_refresher

        record_refresher(refresher, runtime.recorder)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # not one INFO line per fetch
    metrics.export_load_metrics(refresher)
    runtime.readiness = with_detail(runtime.readiness, "load-metrics", refresher.detail)
    runtime.startup.append(refresher.start)
    runtime.shutdown.insert(0, refresher.stop)  # before the Kubernetes client closes


def configure_topology_cache(runtime: Runtime) -> None:
    """NodeResourceTopologyMatch's overreserve cache against a live cluster: its pod lister
    and resync loop (`extender.state.nrtresync`); nothing without the cache. Offline no report
    ever arrives, so the reservations of its binds last."""
    from extender.state.nrtresync import enable_cache

    recorder = runtime.recorder

    def flushed(nodes: list[str]) -> None:
        metrics.NRT_CACHE_FLUSHES.inc(len(nodes))
        if recorder is not None:
            recorder.nrt_resync(nodes)

    resync = enable_cache(runtime.profile, runtime.state, on_flush=flushed,
                          on_round=metrics.NRT_CACHE_RESYNCS.inc)
    if resync is not None:
        runtime.startup.append(resync.start)
        runtime.shutdown.insert(0, resync.stop)


def export_informer_metrics(live: LiveState) -> None:
    """Feed the informers' counters and sync age to Prometheus."""
    counters = live.counters
    counters.on_event = lambda resource, kind: metrics.INFORMER_EVENTS.labels(resource, kind).inc()
    counters.on_synced = lambda resource: metrics.INFORMER_SYNCED.labels(resource).set(1)
    counters.on_stale = lambda resource: metrics.INFORMER_STALE_EVENTS.labels(resource).inc()
    counters.on_watch = lambda resource: metrics.INFORMER_WATCHES.labels(resource).inc()
    counters.on_error = lambda resource: metrics.INFORMER_ERRORS.labels(resource).inc()

    def listed(resource: str, relist: bool) -> None:
        metrics.INFORMER_LISTS.labels(resource).inc()
        if relist:
            metrics.INFORMER_RELISTS.labels(resource).inc()

    counters.on_list = listed
    for name, informer in live.informers.items():
        metrics.INFORMER_SYNCED.labels(name).set(0)
        for family in (metrics.INFORMER_LISTS, metrics.INFORMER_RELISTS,
                       metrics.INFORMER_WATCHES, metrics.INFORMER_ERRORS,
                       metrics.INFORMER_STALE_EVENTS):
            family.labels(name)  # present at 0 from the start
        metrics.INFORMER_SYNC_AGE.labels(name).set_function(
            lambda informer=informer: informer.sync_age_seconds)


def informer_checks(live: LiveState, max_staleness: float) -> list[tuple[str, str | None]]:
    """One readiness check per informer, for `/readyz?verbose`: `informer-<resource>`."""
    checks: list[tuple[str, str | None]] = []
    for name, informer in live.informers.items():
        why: str | None = None
        if not informer.synced:
            why = "not synced yet"
        elif informer.stale_seconds > max_staleness:
            why = (f"watch down for {informer.stale_seconds:.0f}s "
                   f"(bound {max_staleness:g}s)")
        if why is not None and informer.last_error:
            why += f"; last error: {informer.last_error}"
        checks.append((f"informer-{name}", why))
    return checks


def raise_open_files_limit(wanted: int) -> None:
    """Raise the soft limit on open files towards `wanted` (every connection is one; a gang's
    held binds are many), as far as the hard limit allows — Go programs do the same."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError) as exc:
            log.warning("cannot raise the open files limit", extra={"fields": {
                "soft": soft, "wanted": target, "err": str(exc)}})
    if hard != resource.RLIM_INFINITY and hard < wanted:
        log.warning("open files limit below what the connection bounds need", extra={
            "fields": {"hard": hard, "wanted": wanted}})


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


def stopped_leading(runtime: Runtime) -> None:
    """A replica that stopped leading: its held binds are rejected (kube-scheduler retries
    them against the new leader) and its quota reservations forgotten."""
    rejected = reject_held(runtime, "this extender replica stopped leading", stop=False)
    quota = runtime.state.store(QuotaStore)
    reservations = len(quota.reservations)
    quota.reservations.clear()
    metrics.LEADER.set(0)
    log.warning("no longer the leader", extra={"fields": {
        "held_binds_rejected": rejected, "quota_reservations_dropped": reservations}})


def stop_holding(runtime: Runtime) -> None:
    """As the server shuts down: answer every bind held at Permit with an error and hold no
    more, so their open connections do not keep the process up until each group's wait runs
    out (kube-scheduler retries those binds, against the process that follows)."""
    rejected = reject_held(runtime, "this extender is shutting down", stop=True)
    if rejected:
        log.warning("held binds rejected at shutdown", extra={"fields": {
            "held_binds_rejected": rejected}})


def reject_held(runtime: Runtime, reason: str, *, stop: bool) -> int:
    """Answer every bind held at Permit with `reason` (`stop`: and hold none after); how many
    were held."""
    binder = runtime.binder
    if not isinstance(binder, PermitBinder):
        return 0
    if runtime.recorder is not None:
        # Nothing else in a recording says the holds ended: without this the replay would
        # still hold those binds where the recording has their replies.
        runtime.recorder.held_rejected(reason, stop=stop)
    return binder.stop_holding(reason) if stop else binder.reject_all(reason)


def port_problem(host: str, port: int) -> str | None:
    """Why the server could not listen at host:port (checked before the state is read, which
    live can take a while), or None."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind((host, port))
        except OSError as exc:
            hint = ("another process listens there (an earlier `extender serve`?): stop it, or "
                    "give --secure-port (--port) another port"
                    if exc.errno == errno.EADDRINUSE else "give another --bind-address or port")
            return f"cannot listen on {host}:{port}: {exc.strerror or exc}; {hint}"
    return None


def _cannot_start(problem: str) -> int:
    # Once, as kube-scheduler reports a failed start: one error in the logs' own format.
    log.error("cannot start", extra={"fields": {"err": problem}})
    return 2


def run(args: argparse.Namespace) -> int:
    import uvicorn

    problem = port_problem(args.host, args.port)
    if problem:
        return _cannot_start(problem)
    try:
        runtime = build_runtime(args)
    except StartupError as exc:
        return _cannot_start(str(exc))
    app = create_app(runtime, floor_endpoint=args.floor_endpoint)
    limits = ConnectionLimits(header_timeout=args.header_timeout,
                              max_connections=args.max_connections, parked=runtime.held_binds,
                              max_parked=args.max_held_binds
                              if isinstance(runtime.binder, PermitBinder) else 0)
    raise_open_files_limit(args.max_connections + args.max_held_binds + 256)
    # No proxy headers: nothing reads the client's address, and kube-scheduler calls directly.
    config = uvicorn.Config(app, host=args.host, port=args.port, loop="uvloop",
                            http=guarded_protocol(limits), access_log=False, log_config=None,
                            use_colors=False, lifespan="on", timeout_keep_alive=75,
                            proxy_headers=False)

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            stop_holding(runtime)
            await super().shutdown(sockets)

    server = Server(config)
    if args.tls_cert_file or args.tls_key_file or args.tls_client_ca_file:
        from extender.ops.tls import configure_server_tls

        try:
            configure_server_tls(server, runtime, args.tls_cert_file, args.tls_key_file,
                                 args.tls_client_ca_file)
        except (ValueError, OSError) as exc:
            return _cannot_start(f"TLS: {exc}")
    tune_gc()
    memory.limit_arenas()
    server.run()
    return 0
