"""`extender simulate`: replay a cluster and a workload through the scheduler loop."""

from __future__ import annotations

import argparse
import io
import logging
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from extender import cliargs
from extender.simulator.clock import MILLISECOND, SECOND, seconds
from extender.simulator.flagchecks import (
    DEFAULT_INITIAL_BACKOFF,
    DEFAULT_MAX_BACKOFF,
    backoff_problem,
    sandbox_only,
)
from extender.simulator.outcomes import outcome_text
from extender.simulator.workload import parse_duration

if TYPE_CHECKING:
    from extender.simulator.follow import Follow

PROGRESS_THRESHOLD = 1000  # pods: below this a run is too short for a progress bar
#: Wall seconds between the plain progress lines written when stderr is not a terminal.
PROGRESS_INTERVAL = 10.0


def _duration(text: str) -> int:
    try:
        value = seconds(parse_duration(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if value < 0:  # a cost, backoff, grace period, timeout or horizon: never before now
        raise argparse.ArgumentTypeError(f"must not be negative: {text!r}")
    return value


def _horizon(given: int | None, follow: Follow | None) -> tuple[int | None, str]:
    """The horizon, and what the summary says cut the run there: as given (0: none), else,
    following a real run, where that run stopped watching (so both are compared over the same
    time: a pod the real run left pending is not placed by a retry the simulation alone
    reaches), else 24 h."""
    if given is None and follow is not None and follow.end is not None:
        return follow.end, "truncated where the followed run ended"
    if given is None:
        given = 24 * 3600 * SECOND
    return given or None, "truncated by --max-time"


def _measured(given: int | None, follow: Follow | None, kind: str) -> int | None:
    """A cycle cost: as given, else what the followed real run's cycles of that kind took."""
    if given is not None or follow is None:
        return given
    measured = follow.cycle_seconds.get(kind)
    return None if measured is None else round(measured * SECOND)


def _costs(kind: str, given: int | None, per_nominated: int | None,
           follow: Follow | None) -> dict[str, Any]:
    """A failed or preempting cycle's cost (`kind`) and what it takes more for each pod
    nominated: as given; else, following a real run that measured how those cycles grew
    with the pods nominated (`<kind>Base`, `<kind>PerNominated`), that line; else its
    median."""
    measured = follow.cycle_seconds if follow is not None else {}
    if given is None and per_nominated is None and \
            {f"{kind}Base", f"{kind}PerNominated"} <= measured.keys():
        return {f"{kind}_cost": round(measured[f"{kind}Base"] * SECOND),
                f"{kind}_cost_per_nominated": round(measured[f"{kind}PerNominated"] * SECOND)}
    return {f"{kind}_cost": _measured(given, follow, kind),
            f"{kind}_cost_per_nominated": per_nominated}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cluster", metavar="CLUSTER",
                   help="snapshot, as `extender serve --snapshot` reads one: kubectl get "
                        "nodes,pods,poddisruptionbudgets,priorityclasses,namespaces,services,"
                        "replicasets,statefulsets,replicationcontrollers -A -o json|yaml (the "
                        "last five for spread and affinity; add podgroups,elasticquotas, "
                        "noderesourcetopologies or appgroups,networktopologies for the plugins "
                        "that read them)")
    p.add_argument("--workload", metavar="PODS",
                   help="pending pods (List or multi-document YAML) and SimulationEvents")
    policy = p.add_mutually_exclusive_group()
    policy.add_argument("--policy", metavar="POLICY", help="ExtenderPolicy file")
    policy.add_argument("--compare", nargs=2, metavar=("POLICY_A", "POLICY_B"),
                        help="run the same cluster, workload and seed through two policies and "
                             "print the differences (with --report: both reports and the "
                             "differences; with --html: both runs on one page)")
    policy.add_argument("--config", metavar="FILE",
                        help="a KubeSchedulerConfiguration instead of a policy: its profile's "
                             "plugins and pluginConfig, percentageOfNodesToScore, pod backoff "
                             "and extenders[] (see extender/simulator/schedulerconfig.py); "
                             "explicit --percentage-of-nodes-to-score/--pod-*-backoff win")
    policy.add_argument("--agreement", nargs=2, metavar=("SIM.json", "REAL.json"),
                        help="compare a simulated run's report with a real one's (--on-sandbox "
                             "--report) pod by pod: outcome, node (the real node among the "
                             "simulator's tied best agrees), victims, attempts; the last line is "
                             "`agreement: A/N pods` (--report: the comparison as JSON; --html: "
                             "the divergences first, then both runs)")
    p.add_argument("--agreement-events", nargs=2, metavar=("SIM.jsonl", "REAL.jsonl"),
                   help="with --agreement: both runs' --events logs: divergences the second "
                        "log shows a race inside the real scheduler caused are explained, and "
                        "--html draws the runs' timelines from them")
    p.add_argument("--follow", metavar="REAL.json",
                   help="break ties toward a real run's report: where the real node of a pod "
                        "is among the nodes tied for the top score, take it, so the two runs "
                        "stay comparable pod by pod (see --agreement); and run failed and "
                        "preempting cycles as long as the real run's took")
    p.add_argument("--seed", type=int, default=0, help="seed for tie-breaks and preemption offsets")
    p.add_argument("--report", metavar="FILE", help="write the JSON report here ('-': stdout)")
    p.add_argument("--events", metavar="FILE",
                   help="write what happened, one JSON object per line in virtual-time order "
                        "(arrivals, attempts with per-plugin rejections, queue moves, binds, "
                        "preemptions, queue sizes, the end); see extender/simulator/README.md")
    p.add_argument("--plot", metavar="PNG", help="write a per-node allocation chart here")
    p.add_argument("--html", metavar="FILE",
                   help="write a self-contained HTML report here: timeline, rejections by "
                        "plugin, every pod's attempts (see extender/simulator/htmlreport.py)")
    p.add_argument("--utilization", metavar="FILE",
                   help="replay node utilization (a time series per node, YAML or JSON) into "
                        "the load-aware scorers' metrics; see extender/simulator/utilization.py")
    p.add_argument("--percentage-of-nodes-to-score", type=cliargs.percentage, metavar="P",
                   help="the share of nodes to find feasible before scoring, as kube-scheduler's "
                        "percentageOfNodesToScore: 0 (the default, as kube-scheduler's) is its "
                        "adaptive share (50%% - nodes/125, at least 5%%; every node below 100 "
                        "nodes), 100 every node")
    p.add_argument("--cycle-cost", type=_duration, default=MILLISECOND, metavar="DURATION",
                   help="virtual time a scheduling cycle that places its pod takes (default 1ms)")
    p.add_argument("--failure-cost", type=_duration, default=None, metavar="DURATION",
                   help="virtual time a cycle that finds no node takes (every node filtered, a "
                        "preemption dry run that found nothing; default --cycle-cost, or with "
                        "--follow what the real run's took)")
    p.add_argument("--preemption-cost", type=_duration, default=None, metavar="DURATION",
                   help="virtual time a cycle whose preemption nominates a node takes (default "
                        "--failure-cost, or with --follow what the real run's took)")
    p.add_argument("--failure-cost-per-nominated", type=_duration, default=None,
                   metavar="DURATION",
                   help="virtual time a cycle that finds no node takes more for each pod "
                        "nominated at the time (default 0, or with --follow what the real "
                        "run's took, when --failure-cost is not given)")
    p.add_argument("--preemption-cost-per-nominated", type=_duration, default=None,
                   metavar="DURATION",
                   help="the same for a cycle whose preemption nominates a node (default "
                        "--failure-cost-per-nominated when --preemption-cost is not given, "
                        "else 0; or with --follow what the real run's took)")
    p.add_argument("--pod-initial-backoff", type=_duration, default=None, metavar="DURATION",
                   help="default 1s (or --config's podInitialBackoffSeconds); more than 0")
    p.add_argument("--pod-max-backoff", type=_duration, default=None, metavar="DURATION",
                   help="default 10s (or --config's podMaxBackoffSeconds); at least the "
                        "initial backoff")
    p.add_argument("--pod-max-in-unschedulable-pods", type=_duration, default=300 * SECOND,
                   metavar="DURATION", help="default 5m; 60s for releases before 1.24")
    p.add_argument("--victim-grace-period", type=_duration, default=None, metavar="DURATION",
                   help="how long every preempted pod keeps its room (default: each victim's "
                        "own terminationGracePeriodSeconds, 30s when unset)")
    p.add_argument("--max-time", type=_duration, default=None, metavar="DURATION",
                   help="stop after this much virtual time (default 24h, or with --follow where "
                        "the real run stopped watching; 0: no limit)")
    ext = p.add_argument_group("extender in the loop")
    ext.add_argument("--extender", metavar="URL", help="URL prefix of a running extender")
    ext.add_argument("--extender-weight", type=cliargs.positive_int, default=1, metavar="N",
                     help="extenders[].weight: its 0..10 scores times this (default 1)")
    for verb in ("filter", "prioritize", "preempt", "bind"):
        ext.add_argument(f"--extender-{verb}-verb", default=verb, metavar="PATH",
                         help=f"extenders[].{verb}Verb: the path called under --extender "
                              f"(default {verb})")
    ext.add_argument("--extender-bind", action="store_true",
                     help="also call the bind verb (keeps an offline extender in step)")
    ext.add_argument("--extender-nodes", action="store_true",
                     help="send full Nodes (nodeCacheCapable: false) instead of NodeNames")
    ext.add_argument("--extender-ignorable", action="store_true",
                     help="extenders[].ignorable: a failed call is skipped, as kube-scheduler "
                          "skips an ignorable extender, instead of failing the cycle")
    ext.add_argument("--extender-timeout", type=_duration, default=5 * SECOND, metavar="DURATION",
                     help="extenders[].httpTimeout of each call (default 5s)")
    # -- extenders kept in sync (apisync.py) ---------------------------------------------------
    ext.add_argument("--serve-api", metavar="KUBECONFIG",
                     help="serve the simulated cluster as a Kubernetes API on 127.0.0.1 and "
                          "write a kubeconfig for it here; run the extender with "
                          "`extender serve --kubeconfig KUBECONFIG`: before each cycle the "
                          "simulator waits until it observed the cluster (its sync query, "
                          "GET /readyz?resourceVersion=N)")
    ext.add_argument("--serve-api-port", type=int, default=0, metavar="PORT",
                     help="port of --serve-api (default: any free port)")
    ext.add_argument("--extender-start-timeout", type=_duration, default=120 * SECOND,
                     metavar="DURATION",
                     help="with --serve-api, how long to wait for the extender's first sync, "
                          "the time to start it (default 2m)")
    ext.add_argument("--extender-sync-timeout", type=_duration, default=30 * SECOND,
                     metavar="DURATION",
                     help="with --serve-api, how long each later sync may take (default 30s)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress on stderr: on a terminal a bar (by default only for runs of "
                        "1000 pods or more; --progress: always), elsewhere a plain line every "
                        "10s of wall time; --no-progress: none")


def add_commands(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "simulate", help="replay a cluster and workload through kube-scheduler's loop",
        description="Replay a cluster snapshot and a workload through a faithful copy of "
                    "kube-scheduler's scheduling queue and loop, on virtual time.")
    add_arguments(p)
    p.set_defaults(func=partial(run, flag_defaults=p.get_default))


def _raw_objects(path: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(pods by uid, nodes by name) as written, for the extender wire; a pod without a uid
    gets the one the snapshot's loader gives it, so that the extender is sent its spec."""
    from extender.state.snapshot import iter_objects, pod_uid, read_documents

    pods: dict[str, Any] = {}
    nodes: dict[str, Any] = {}
    for obj in iter_objects(read_documents(path)):
        meta = obj.get("metadata") or {}
        if obj.get("kind") == "Pod" and meta.get("name"):
            uid = pod_uid(meta.get("namespace"), meta["name"], meta.get("uid"))
            pods[uid] = obj if meta.get("uid") else {**obj, "metadata": {**meta, "uid": uid}}
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


def _thousands(n: int) -> str:
    return f"{n:,}".replace(",", " ")


def _progress_lines(stream: TextIO, interval: float) -> Callable[[int, int, int], None]:
    """Plain progress lines (for logs and CI, where a bar would not render), at most one per
    `interval` seconds of wall time: `simulating: 4200/10000 pods settled, 51 000 cycles, 12 s`."""
    started = time.monotonic()
    last = [started]

    def update(settled: int, total: int, cycles: int) -> None:
        now = time.monotonic()
        if now - last[0] >= interval:
            last[0] = now
            print(f"simulating: {settled}/{total} pods settled, {_thousands(cycles)} cycles, "
                  f"{now - started:.0f} s", file=stream, flush=True)

    return update


def check_output(flag: str, path: str | None) -> str | None:
    """Why `path` cannot be written (checked before the run, not after it), or None."""
    if not path or (flag == "--report" and path == "-"):
        return None
    target = Path(path)
    if target.is_dir():
        return f"{flag}: {path} is a directory"
    parent = target.parent
    if not parent.exists():
        return f"{flag}: cannot write {path}: directory {parent} does not exist"
    if not parent.is_dir():
        return f"{flag}: cannot write {path}: {parent} is not a directory"
    return None


def summary_line(totals: dict[str, Any], failures: dict[str, int], *,
                 horizon: str = "truncated by --max-time") -> str:
    """The run in one line: outcomes, virtual time and why the run ended (`horizon`: what cut
    it, when something did), extender failures."""
    outcome = outcome_text(totals)
    reason = totals.get("endReason") or ("horizon" if totals["truncated"] else "settled")
    why = "settled" if reason == "settled" else f"horizon: {horizon}"
    line = (f"{outcome}; {totals['cycles']} cycles over {totals['virtualTimeSeconds']:.3f}s "
            f"virtual ({why})")
    if failures:
        per_extender: dict[str, dict[str, int]] = {}
        for key, n in sorted(failures.items()):
            name, _, verb = key.rpartition("/")
            per_extender.setdefault(name, {})[verb] = n
        line += "; extender failures: " + ", ".join(
            f"{name} {sum(verbs.values())} ("
            + ", ".join(f"{verb} {n}" for verb, n in verbs.items()) + ")"
            for name, verbs in per_extender.items())
    return line


def wall_line(wall: float, pods: Sequence[Mapping[str, Any]]) -> str:
    """`1.80s wall, 3 pods/s`: the pods placed (whatever became of them since: a run's
    pods may all have finished) per wall second; without the rate when none was placed."""
    placed = sum(1 for p in pods if p.get("scheduledAtSeconds") is not None)
    if not placed or wall <= 0:
        return f"{wall:.2f}s wall"
    rate = placed / wall
    return f"{wall:.2f}s wall, {rate:.0f} pods/s" if rate >= 1 else \
        f"{wall:.2f}s wall, {rate:.2g} pods/s"


def _follow(path: str) -> Any:
    """`--follow REAL.json`: the real run's report, refused (a ValueError naming the flag)
    when it is not one."""
    from extender.simulator.agreement import AgreementError, load_report, source
    from extender.simulator.follow import Follow

    try:
        report = load_report(path)
    except AgreementError as exc:
        raise ValueError(f"--follow: {exc}") from None
    if source(report) == "simulated":
        raise ValueError(f"--follow: {path} is a simulated run's report: --follow takes a real "
                         "run's (extender simulate --on-sandbox --report)")
    return Follow(report)


def run(args: argparse.Namespace, flag_defaults: Callable[[str], Any] | None = None) -> int:
    """`extender simulate` without `--on-sandbox`; `flag_defaults` (the parser's
    `get_default`) tells the flags given from those left at their default."""
    from extender.engine.policy import PolicyError, load_policy
    from extender.engine.profile import build_profile
    from extender.simulator.extenders import HttpExtender
    from extender.simulator.loop import Simulation, SimulationConfig
    from extender.simulator.report import build_report, write_report_to
    from extender.simulator.schedulerconfig import SchedulerConfigError
    from extender.simulator.utilization import UtilizationError, load_utilization
    from extender.simulator.workload import WorkloadError, load_workload
    from extender.state.snapshot import SnapshotError, load_snapshot

    refused = sandbox_only(args, flag_defaults) if flag_defaults is not None else None
    if refused:
        print(f"extender simulate: {refused}", file=sys.stderr)
        return 2
    if args.plot:
        from extender.simulator.plot import PlotUnavailable, require_plotting

        try:  # before the run, not after it
            require_plotting()
        except PlotUnavailable as exc:
            print(f"extender simulate: --plot: {exc}", file=sys.stderr)
            return 2
    for flag, path in (("--report", args.report), ("--events", getattr(args, "events", None)),
                       ("--plot", args.plot), ("--html", args.html)):
        problem = check_output(flag, path)
        if problem:  # before the run, not after it with a traceback
            print(f"extender simulate: {problem}", file=sys.stderr)
            return 2
    if getattr(args, "agreement", None):
        return run_agreement(args)
    missing = [flag for flag, value in (("--cluster", args.cluster), ("--workload", args.workload))
               if not value]
    if not (args.policy or args.compare or getattr(args, "config", None)):
        missing.append("one of --policy, --config, --compare, --agreement")
    if missing:
        print(f"extender simulate: the following arguments are required: {', '.join(missing)}",
              file=sys.stderr)
        return 2
    if args.compare:  # each policy through this function, then the differences
        from extender.simulator.compare import run_compare

        return run_compare(args, run)
    setup = None
    try:
        if getattr(args, "config", None):
            from extender.simulator.schedulerconfig import load_for_cli

            setup, policy = load_for_cli(args)
        else:
            policy = load_policy(args.policy)
        refused = backoff_problem(args.pod_initial_backoff, args.pod_max_backoff, setup)
        if refused:  # before the snapshot is read: --config's own are checked with the file
            raise ValueError(refused)
        profile = build_profile(policy)
        snapshot_warnings: list[str] = []  # unknown field names of the cluster's objects
        state = load_snapshot(args.cluster, warnings=snapshot_warnings)
        workload = load_workload(args.workload)
        workload.warnings[:0] = snapshot_warnings
        utilization = None
        if args.utilization:  # after the workload: its time 0 places RFC 3339 sample times
            utilization = load_utilization(args.utilization, epoch_ns=workload.epoch_ns)
        follow = None
        if getattr(args, "follow", None):
            follow = _follow(args.follow)
    except (PolicyError, SchedulerConfigError, SnapshotError, WorkloadError,
            UtilizationError, ValueError) as exc:
        print(f"extender simulate: {exc}", file=sys.stderr)
        return 2

    extenders = [spec.build() for spec in setup.extenders] if setup is not None else []
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
    profiles = None
    if setup is not None:
        from extender.simulator.schedulerconfig import config_overrides, simulation_profiles

        # Each pod goes to the profile of its schedulerName; an explicit
        # --percentage-of-nodes-to-score wins over every profile's.
        profiles = simulation_profiles(setup, profile, args.percentage_of_nodes_to_score)
        if extenders:
            logging.getLogger("httpx").setLevel(logging.WARNING)
            raw_pods, raw_nodes = _raw_objects(args.cluster)
        config_overrides(args, setup, workload)
    percentage = args.percentage_of_nodes_to_score
    if percentage is None and setup is None:
        percentage = 0  # kube-scheduler's default: adaptive sampling
    max_time, horizon = _horizon(args.max_time, follow)
    config = SimulationConfig(
        seed=args.seed, percentage_of_nodes_to_score=percentage,
        cycle_cost=args.cycle_cost,
        **_costs("failure", args.failure_cost, args.failure_cost_per_nominated, follow),
        **_costs("preemption", args.preemption_cost, args.preemption_cost_per_nominated, follow),
        pod_initial_backoff=DEFAULT_INITIAL_BACKOFF if args.pod_initial_backoff is None
        else args.pod_initial_backoff,
        pod_max_backoff=DEFAULT_MAX_BACKOFF if args.pod_max_backoff is None else args.pod_max_backoff,
        pod_max_in_unschedulable_pods=args.pod_max_in_unschedulable_pods,
        victim_grace_period=args.victim_grace_period, max_time=max_time,
        extenders=extenders, utilization=utilization, follow=follow,
        extender_bind=args.extender_bind or (setup is not None and setup.extender_bind))

    with ExitStack() as stack:
        for ext in extenders:
            stack.callback(ext.close)
        events = None
        if getattr(args, "events", None):
            from extender.simulator.eventlog import EventLog

            try:
                stream = stack.enter_context(open(args.events, "w", encoding="utf-8", newline="\n"))
            except OSError as exc:
                print(f"extender simulate: --events: {exc}", file=sys.stderr)
                return 2
            events = EventLog(stream)
        elif args.html:  # the page shows the run's events: keep them in memory
            from extender.simulator.eventlog import EventLog

            events_buffer = io.StringIO()
            events = EventLog(events_buffer)
        pending = sum(1 for p in state.pods.values() if not p.node_name) + len(workload.arrivals)
        progress = None
        if args.progress is not False:
            if sys.stderr.isatty():
                if args.progress or pending >= PROGRESS_THRESHOLD:
                    progress = _progress_bar(stack, pending)
            else:  # logs, CI: a plain line now and then
                progress = _progress_lines(sys.stderr, PROGRESS_INTERVAL)
        # -- extenders kept in sync (apisync.py) -----------------------------------------------
        served: Any = None
        sync_errors: tuple[type[Exception], ...] = ()
        if args.serve_api:
            from extender.simulator.apiserver import SyncError
            from extender.simulator.apisync import serve_for_cli

            served = serve_for_cli(stack, args, config, [e.url_prefix for e in extenders])
            if served is None:
                return 2
            sync_errors = (SyncError,)
        sim = Simulation(state, profile, workload, config, raw_pods=raw_pods, raw_nodes=raw_nodes,
                         progress=progress, events=events, profiles=profiles)
        started = time.perf_counter()
        try:
            result = sim.run()
        except sync_errors as exc:
            print(f"extender simulate: {exc}", file=sys.stderr)
            return 3
        wall = time.perf_counter() - started
        if served is not None:
            served.publish(sim)  # the final cluster, for whoever still watches
        elif extenders:
            from extender.simulator.apisync import unsynced_warning

            result.warnings.extend(unsynced_warning(e.url_prefix) for e in extenders)

    report = build_report(result, profile)
    if args.report:
        write_report_to(report, args.report)
    if args.plot:
        from extender.simulator.plot import plot_utilization

        plot_utilization(report, args.plot)
    if args.html:
        from extender.simulator.htmlreport import read_events, render_html, write_html

        source = args.events or io.StringIO(events_buffer.getvalue())
        write_html(render_html(report, read_events(source), title=(
            f"extender simulate: {Path(args.policy or args.config).name} on "
            f"{Path(args.cluster).name} + "
            f"{Path(args.workload).name}")), args.html)
    totals = report["totals"]
    out = sys.stderr if args.report == "-" else sys.stdout
    print(f"{summary_line(totals, result.extender_failures, horizon=horizon)}; "
          f"{wall_line(wall, report['pods'])}", file=out)
    if "utilization" in report:
        replay = report["utilization"]
        print(f"utilization: {replay['samplesApplied']} of {replay['samples']} samples replayed "
              f"({replay['snapshots']} snapshots) from {args.utilization}", file=out)
    for warning in report["warnings"]:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def run_agreement(args: argparse.Namespace) -> int:
    """`--agreement SIM.json REAL.json`: the text on stdout (stderr with `--report -`),
    `--report` the comparison as JSON, `--html` a page with the divergences first."""
    from extender.simulator.agreement import (
        AgreementError,
        agreement,
        format_agreement,
        load_report,
    )
    from extender.simulator.report import write_report_to

    sim_path, real_path = args.agreement
    try:
        sim, real = load_report(sim_path), load_report(real_path)
    except AgreementError as exc:
        print(f"extender simulate: --agreement: {exc}", file=sys.stderr)
        return 2
    events = None
    if getattr(args, "agreement_events", None):
        from extender.simulator.runview import EventsError, read_events

        try:
            events = tuple(list(read_events(path)) for path in args.agreement_events)
        except OSError as exc:  # worded as --agreement words a missing report
            print(f"extender simulate: --agreement-events: {exc.filename}: "
                  f"{exc.strerror or exc}", file=sys.stderr)
            return 2
        except EventsError as exc:
            print(f"extender simulate: --agreement-events: {exc}", file=sys.stderr)
            return 2
        # The simulator samples its queues; a real run's log has no such line.
        sampled = [any(e.get("action") == "queues" for e in log) for log in events]
        if sampled == [False, True]:
            print("extender simulate: --agreement-events: the first log is a real run's and "
                  "the second a simulated one's: give the simulated run's first, as with "
                  "--agreement", file=sys.stderr)
            return 2
    result = agreement(sim, real, events[1] if events is not None else None)
    out = sys.stderr if args.report == "-" else sys.stdout
    out.write(format_agreement(result))
    if args.report:
        write_report_to(result, args.report)
    if args.html:
        from extender.simulator.agreementhtml import render_agreement_html
        from extender.simulator.compare import file_labels
        from extender.simulator.htmlreport import write_html

        first, second = result["sides"]
        sim_name, real_name = file_labels([sim_path, real_path])
        write_html(render_agreement_html(sim, real, result, names=(
            f"{first}: {sim_name}", f"{second}: {real_name}"), events=events), args.html)
    return 0
