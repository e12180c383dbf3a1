"""`extender simulate`: replay a cluster and a workload through the scheduler loop."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

from extender.simulator.clock import MILLISECOND, SECOND, seconds
from extender.simulator.workload import parse_duration

PROGRESS_THRESHOLD = 1000  # pods: below this a run is too short for a progress bar


def _duration(text: str) -> int:
    try:
        return seconds(parse_duration(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _percentage(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError("must be 0 (adaptive) to 100")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cluster", required=True, metavar="CLUSTER",
                   help="snapshot: kubectl get nodes,pods,pdb,priorityclasses -A -o yaml|json "
                        "(podgroups,elasticquotas too for Coscheduling/CapacityScheduling)")
    p.add_argument("--workload", required=True, metavar="PODS",
                   help="pending pods (List or multi-document YAML) and SimulationEvents")
    p.add_argument("--policy", required=True, metavar="POLICY", help="ExtenderPolicy file")
    p.add_argument("--seed", type=int, default=0, help="seed for tie-breaks and preemption offsets")
    p.add_argument("--report", metavar="FILE", help="write the JSON report here ('-': stdout)")
    p.add_argument("--plot", metavar="PNG", help="write a per-node allocation chart here")
    p.add_argument("--utilization", metavar="FILE",
                   help="replay node utilization (a time series per node, YAML or JSON) into "
                        "the load-aware scorers' metrics; see extender/simulator/utilization.py")
    p.add_argument("--percentage-of-nodes-to-score", type=_percentage, metavar="P",
                   help="sample nodes as kube-scheduler does (0: adaptive); default: all nodes")
    p.add_argument("--cycle-cost", type=_duration, default=MILLISECOND, metavar="DURATION",
                   help="virtual time one scheduling cycle takes (default 1ms)")
    p.add_argument("--pod-initial-backoff", type=_duration, default=1 * SECOND, metavar="DURATION")
    p.add_argument("--pod-max-backoff", type=_duration, default=10 * SECOND, metavar="DURATION",
                   help="0 disables backoff")
    p.add_argument("--pod-max-in-unschedulable-pods", type=_duration, default=300 * SECOND,
                   metavar="DURATION", help="default 5m; 60s for releases before 1.24")
    p.add_argument("--victim-grace-period", type=_duration, default=0, metavar="DURATION",
                   help="how long preempted pods keep their room (default 0s)")
    p.add_argument("--max-time", type=_duration, default=24 * 3600 * SECOND, metavar="DURATION",
                   help="stop after this much virtual time (default 24h; 0: no limit)")
    ext = p.add_argument_group("extender in the loop")
    ext.add_argument("--extender", metavar="URL", help="URL prefix of a running extender")
    ext.add_argument("--extender-weight", type=int, default=1)
    ext.add_argument("--extender-filter-verb", default="filter")
    ext.add_argument("--extender-prioritize-verb", default="prioritize")
    ext.add_argument("--extender-preempt-verb", default="preempt")
    ext.add_argument("--extender-bind-verb", default="bind")
    ext.add_argument("--extender-bind", action="store_true",
                     help="also call the bind verb (keeps an offline extender in step)")
    ext.add_argument("--extender-nodes", action="store_true",
                     help="send full Nodes (nodeCacheCapable: false) instead of NodeNames")
    ext.add_argument("--extender-ignorable", action="store_true")
    ext.add_argument("--extender-timeout", type=_duration, default=5 * SECOND, metavar="DURATION")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar (default: on for long runs on a terminal)")


def add_commands(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "simulate", help="replay a cluster and workload through kube-scheduler's loop",
        description="Replay a cluster snapshot and a workload through a faithful copy of "
                    "kube-scheduler's scheduling queue and loop, on virtual time.")
    add_arguments(p)
    p.set_defaults(func=run)


def _raw_objects(path: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(pods by uid, nodes by name) as written, for the extender wire."""
    from extender.state.snapshot import iter_objects, read_documents

    pods: dict[str, Any] = {}
    nodes: dict[str, Any] = {}
    for obj in iter_objects(read_documents(path)):
        meta = obj.get("metadata") or {}
        if obj.get("kind") == "Pod" and meta.get("uid"):
            pods[meta["uid"]] = obj
        elif obj.get("kind") == "Node" and meta.get("name"):
            nodes[meta["name"]] = obj
    return pods, nodes


def _progress_bar(stack: ExitStack, total: int) -> Callable[[int, int, int], None]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    progress = stack.enter_context(Progress(
        TextColumn("simulating"), BarColumn(), MofNCompleteColumn(),
        TextColumn("{task.fields[cycles]} cycles"), TimeElapsedColumn(),
        transient=True))
    task = progress.add_task("simulate", total=total, cycles=0)
    last = [0.0]

    def update(settled: int, total: int, cycles: int) -> None:
        now = time.monotonic()
        if now - last[0] >= 0.1 or settled >= total:
            last[0] = now
            progress.update(task, completed=settled, cycles=cycles)

    return update


def run(args: argparse.Namespace) -> int:
    from extender.engine.policy import PolicyError, load_policy
    from extender.engine.profile import build_profile
    from extender.simulator.extenders import HttpExtender
    from extender.simulator.loop import Simulation, SimulationConfig
    from extender.simulator.report import build_report, dumps, write_report
    from extender.simulator.utilization import UtilizationError, load_utilization
    from extender.simulator.workload import WorkloadError, load_workload
    from extender.state.snapshot import SnapshotError, load_snapshot

    if args.plot:
        from extender.simulator.plot import PlotUnavailable, require_plotting

        try:  # before the run, not after it
            require_plotting()
        except PlotUnavailable as exc:
            print(f"extender simulate: --plot: {exc}", file=sys.stderr)
            return 2
    try:
        profile = build_profile(load_policy(args.policy))
        state = load_snapshot(args.cluster)
        workload = load_workload(args.workload)
        utilization = None
        if args.utilization:  # after the workload: its time 0 places RFC 3339 sample times
            utilization = load_utilization(args.utilization, epoch_ns=workload.epoch_ns)
    except (PolicyError, SnapshotError, WorkloadError, UtilizationError) as exc:
        print(f"extender simulate: {exc}", file=sys.stderr)
        return 2

    extenders = []
    raw_pods: dict[str, Any] = {}
    raw_nodes: dict[str, Any] = {}
    if args.extender:
        # One line per HTTP call would drown the summary.
        logging.getLogger("httpx").setLevel(logging.WARNING)
        extenders.append(HttpExtender(
            args.extender, filter_verb=args.extender_filter_verb,
            prioritize_verb=args.extender_prioritize_verb, preempt_verb=args.extender_preempt_verb,
            bind_verb=args.extender_bind_verb, weight=args.extender_weight,
            node_cache_capable=not args.extender_nodes, ignorable=args.extender_ignorable,
            timeout=args.extender_timeout / SECOND))
        raw_pods, raw_nodes = _raw_objects(args.cluster)
    config = SimulationConfig(
        seed=args.seed, percentage_of_nodes_to_score=args.percentage_of_nodes_to_score,
        cycle_cost=args.cycle_cost, pod_initial_backoff=args.pod_initial_backoff,
        pod_max_backoff=args.pod_max_backoff,
        pod_max_in_unschedulable_pods=args.pod_max_in_unschedulable_pods,
        victim_grace_period=args.victim_grace_period, max_time=args.max_time or None,
        extenders=extenders, extender_bind=args.extender_bind, utilization=utilization)

    with ExitStack() as stack:
        for ext in extenders:
            stack.callback(ext.close)
        pending = sum(1 for p in state.pods.values() if not p.node_name) + len(workload.arrivals)
        show = args.progress
        if show is None:
            show = sys.stderr.isatty() and pending >= PROGRESS_THRESHOLD
        progress = _progress_bar(stack, pending) if show else None
        sim = Simulation(state, profile, workload, config, raw_pods=raw_pods, raw_nodes=raw_nodes,
                         progress=progress)
        started = time.perf_counter()
        result = sim.run()
        wall = time.perf_counter() - started

    report = build_report(result, profile)
    if args.report == "-":
        sys.stdout.write(dumps(report))
    elif args.report:
        write_report(report, args.report)
    if args.plot:
        from extender.simulator.plot import plot_utilization

        plot_utilization(report, args.plot)
    totals = report["totals"]
    out = sys.stderr if args.report == "-" else sys.stdout
    rate = totals["scheduled"] / wall if wall > 0 else 0.0
    print(f"{totals['scheduled']} scheduled, {totals['pending']} pending, "
          f"{totals['preempted']} preempted, {totals['deleted']} deleted; "
          f"{totals['cycles']} cycles over {totals['virtualTimeSeconds']:.3f}s virtual"
          f"{' (truncated)' if totals['truncated'] else ''}; "
          f"{wall:.2f}s wall, {rate:.0f} pods/s", file=out)
    if "utilization" in report:
        replay = report["utilization"]
        print(f"utilization: {replay['samplesApplied']} of {replay['samples']} samples replayed "
              f"({replay['snapshots']} snapshots) from {args.utilization}", file=out)
    for warning in report["warnings"]:
        print(f"warning: {warning}", file=sys.stderr)
    return 0
