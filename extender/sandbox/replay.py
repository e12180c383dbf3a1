"""`extender simulate … --on-sandbox`: the simulator's inputs replayed on a real kube-scheduler.

The same files the simulator takes — the cluster snapshot, the workload (pods, workload
controllers, PriorityClasses, PodGroups, ElasticQuotas, SimulationEvents) and `--policy` or
`--config` — run on the sandbox (`controlplane.Sandbox`): its nodes are the snapshot's (the
node agent keeps them Ready, runs the bound pods, finishes `run-for` lifetimes and victims'
deletions), the snapshot's objects and bound pods are created before kube-scheduler starts,
and the workload is submitted at its arrival times (divided by `--time-scale`). Workload
controllers are created as objects: the real kube-controller-manager makes their pods.
kube-scheduler runs the policy's plugins as a profile (`kubeprofile`) or the configuration's
own profiles, at `-v=2` so that its log names every attempt.

What happens is recorded from the API server's watch, the `Preempted` events and the
scheduler's log (`observed`) and written as the simulator writes a run: `--report` (the same
`SimulationReport`, with `inputs.onSandbox`), `--events`, `--html`. The run ends when every
arrival is submitted and nothing has changed for `--settle` (no pod changed, no attempt was
logged, no victim is still terminating), or at `--max-time`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from extender import cliargs
from extender.sandbox.api import Api, ApiError, path
from extender.sandbox.observed import Observations
from extender.sandbox.replayplan import (
    Step,
    cluster_objects,
    plan,
    scale_durations,
    scheduler_names,
)
from extender.sandbox.replayrun import Replay
from extender.simulator.arrivals import parse_duration

#: Flags of `extender simulate` that have no meaning on a real cluster.
NOT_ON_SANDBOX = ("compare", "extender", "serve_api", "utilization", "plot", "follow",
                  "agreement")
#: Quiet time that ends a replay: more than kube-scheduler's 10 s maximum backoff.
DEFAULT_SETTLE = 15.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group(
        "on the real kube-scheduler (the sandbox: extender sandbox build first)")
    g.add_argument("--on-sandbox", action="store_true",
                   help="replay the cluster and workload on a real kube-scheduler, API server "
                        "and controller manager on loopback instead of simulating, and record "
                        "what happens into the same report, events and HTML")
    g.add_argument("--time-scale", type=float, default=1.0, metavar="F",
                   help="submit the workload F times faster than its arrival times, pods' "
                        "run-for lifetimes and termination grace periods shortened alike "
                        "(default 1; kube-scheduler's own timers, such as its backoff, stay "
                        "real)")
    g.add_argument("--kubernetes-version", default=None, metavar="V",
                   help="the sandbox's release (default: extender sandbox's default)")
    g.add_argument("--sandbox-state-dir", type=Path, default=None, metavar="DIR",
                   help="where the replay's sandbox keeps its state and logs (default: "
                        "<sandbox state dir>-replay)")
    g.add_argument("--settle", type=_settle, default=DEFAULT_SETTLE, metavar="DURATION",
                   help=f"the run ends when nothing changed for this long (seconds, or a "
                        f"duration as --max-time takes: 330s, 5m30s; default "
                        f"{DEFAULT_SETTLE:g}s, more than kube-scheduler's 10s max backoff)")
    g.add_argument("--keep-sandbox", action="store_true",
                   help="leave the sandbox running afterwards (extender sandbox down "
                        "--state-dir DIR stops it)")
    g.add_argument("--scheduler-verbosity", type=cliargs.scheduler_verbosity,
                   default=cliargs.MIN_SCHEDULER_VERBOSITY, metavar="N",
                   help=f"kube-scheduler's -v (default {cliargs.MIN_SCHEDULER_VERBOSITY}, what "
                        "the replay reads; "
                        "5 logs every move of its queue, with the event that made it, 10 every "
                        "API call: for finding out why a run went its way; the log is in the "
                        "sandbox's logs/kube-scheduler.log, kept with --keep-sandbox)")
    g.add_argument("--scheduler-plugins", action="store_true",
                   help="run kube-scheduler built with sigs.k8s.io/scheduler-plugins (extender "
                        "sandbox build --scheduler-plugins), for Coscheduling, "
                        "CapacityScheduling and the others")


def _settle(text: str) -> float:
    try:
        value = parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def dispatch(simulate: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """`extender simulate`'s function: the replay with `--on-sandbox`, else `simulate`."""
    def run(args: argparse.Namespace) -> int:
        if getattr(args, "on_sandbox", False):
            return run_on_sandbox(args)
        return simulate(args)
    return run


def extend(simulate: argparse.ArgumentParser) -> None:
    """Add `--on-sandbox` and its flags to `extender simulate` (the simulator does not know
    the sandbox, which is built on it: `extender.cli` calls this)."""
    add_arguments(simulate)
    simulate.set_defaults(func=dispatch(simulate.get_default("func")))


# -- the command ----------------------------------------------------------------------------------

def _fail(message: str) -> int:
    print(f"extender simulate --on-sandbox: {message}", file=sys.stderr)
    return 2


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run_on_sandbox(args: argparse.Namespace) -> int:
    from extender.engine.policy import PolicyError, load_policy
    from extender.engine.profile import build_profile
    from extender.sandbox import kubeprofile
    from extender.sandbox.build import DEFAULT_VERSION, BuildError, binaries, resolve_version
    from extender.sandbox.controlplane import Sandbox, SandboxError, default_state_dir
    from extender.sandbox.nodes import NodesError, from_objects
    from extender.simulator.cli import check_output
    from extender.simulator.workload import WorkloadError, load_workload
    from extender.state.snapshot import iter_objects, read_documents

    used = [f"--{name.replace('_', '-')}" for name in NOT_ON_SANDBOX if getattr(args, name, None)]
    if used:
        return _fail(f"{', '.join(used)} does not combine with --on-sandbox")
    if not args.cluster or not args.workload or not (args.policy or args.config):
        return _fail("--cluster, --workload and one of --policy, --config are required")
    if args.time_scale <= 0:
        return _fail(f"--time-scale {args.time_scale:g}: must be more than 0")
    for flag, target in (("--report", args.report), ("--events", args.events),
                         ("--html", args.html)):
        problem = check_output(flag, target)
        if problem:
            return _fail(problem)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    try:
        if args.config:
            from extender.simulator.schedulerconfig import load_for_cli

            _, policy = load_for_cli(args)
            with open(args.config, encoding="utf-8") as f:
                settings = kubeprofile.config_settings(yaml.safe_load(f) or {},
                                                       scheduler_plugins=args.scheduler_plugins)
        else:
            policy = load_policy(args.policy)
            settings = {}
        profile = build_profile(policy)
        workload = load_workload(args.workload)
        cluster = list(iter_objects(read_documents(args.cluster)))
        workload_docs = read_documents(args.workload)
        nodes = from_objects([o for o in cluster if o.get("kind") == "Node"], args.cluster)
        steps = plan(workload, workload_docs, args.time_scale)
        if not args.config:
            names = scheduler_names([s.obj for s in steps] + cluster)
            settings["profiles"] = [kubeprofile.policy_profile(
                policy, n, scheduler_plugins=args.scheduler_plugins) for n in names]
            if args.percentage_of_nodes_to_score is not None:
                settings["percentageOfNodesToScore"] = args.percentage_of_nodes_to_score
        if args.pod_initial_backoff is not None:
            settings["podInitialBackoffSeconds"] = max(1, round(args.pod_initial_backoff / 1e9))
        if args.pod_max_backoff is not None:
            settings["podMaxBackoffSeconds"] = max(1, round(args.pod_max_backoff / 1e9))
        scheduler_binary = None
        wanted = args.kubernetes_version
        if args.scheduler_plugins:
            from extender.sandbox.build import (
                scheduler_plugins_binary,
                scheduler_plugins_kubernetes_version,
            )

            scheduler_binary = scheduler_plugins_binary()
            # Its control plane: the release the scheduler is built at.
            wanted = wanted or scheduler_plugins_kubernetes_version()
        version = resolve_version(wanted or DEFAULT_VERSION)
        built = binaries(version)
        if not built.present():
            raise BuildError(f"Kubernetes {version} is not built: run `extender sandbox build "
                             f"--kubernetes-version {version}` first")
    except (PolicyError, WorkloadError, NodesError, kubeprofile.ProfileError, BuildError,
            SandboxError, OSError, ValueError) as exc:
        return _fail(str(exc))

    state_dir = args.sandbox_state_dir or default_state_dir().with_name("sandbox-replay")
    sandbox = Sandbox(state_dir, built, progress=_progress)
    try:  # another replay's, or one kept with --keep-sandbox: not ours to stop
        sandbox.refuse_if_running("--sandbox-state-dir")
    except SandboxError as exc:
        return _fail(str(exc))
    try:
        return _replay(args, sandbox, nodes, cluster, steps, settings, profile, policy,
                       version, scheduler_binary)
    except (SandboxError, BuildError, TimeoutError, ApiError, OSError) as exc:
        return _fail(f"{exc}" + (f" (logs in {sandbox.registry.logs})" if args.keep_sandbox
                                 else ""))
    except KeyboardInterrupt:
        return 130
    finally:
        if not args.keep_sandbox:
            sandbox.down()


def _replay(args: argparse.Namespace, sandbox: Any, nodes: list[dict[str, Any]],
            cluster: list[dict[str, Any]], steps: list[Step], settings: dict[str, Any],
            profile: Any, policy: Any, version: str, scheduler_binary: Path | None) -> int:
    from extender.sandbox.controlplane import SchedulerOptions, wait_default_service_account
    from extender.sandbox.observed import build_result, cycle_seconds, event_lines, usage
    from extender.simulator.cli import summary_line
    from extender.simulator.records import SimulationConfig
    from extender.simulator.report import build_report, write_report_to

    wall_started = time.monotonic()
    sandbox.start_control_plane()
    sandbox.start_agent(nodes)
    namespaces, before, pending = cluster_objects(cluster, steps)
    if args.time_scale != 1.0:
        for obj in before + pending:
            scale_durations(obj, args.time_scale)
    steps = [Step(0.0, 1, "create", p) for p in pending] + steps
    steps.sort(key=lambda s: (s.t, s.order))

    async def prepare(api: Api) -> set[str]:
        for ns in namespaces:
            await api.create(ns, exist_ok=True)
        for ns in namespaces:
            await wait_default_service_account(api, ns["metadata"]["name"])
        uids = set()
        for obj in before:
            created = await api.create(obj, exist_ok=True)
            if obj["kind"] == "Pod" and created:
                uids.add(created["metadata"]["uid"])
        return uids

    cluster_uids = sandbox.run(prepare)
    if scheduler_binary is not None:
        sandbox.run(_grant_scheduler_plugins)
    names = [p["schedulerName"] for p in settings.get("profiles") or []] or ["default-scheduler"]
    options = SchedulerOptions(qps=500.0, burst=1000, extra=settings,
                               args=(f"-v={args.scheduler_verbosity}",),
                               scheduler_names=names)
    if scheduler_binary is not None:
        sandbox.scheduler_binary = scheduler_binary
    sandbox.start_scheduler(None, options)
    scheduler_log = sandbox.registry.logs / "kube-scheduler.log"
    _progress(f"kube-scheduler {version} ready; replaying {len(steps)} step(s) at "
              f"{args.time_scale:g}x")
    obs = Observations(start=time.time(), scale=args.time_scale)
    deadline = None if not args.max_time else args.max_time / 1e9 / args.time_scale

    async def replay(api: Api) -> tuple[float, bool, list[dict[str, Any]], list[dict[str, Any]]]:
        run = Replay(api, steps, obs, scale=args.time_scale, settle=args.settle,
                     deadline=deadline, scheduler_log=scheduler_log, progress=_progress)
        end = await run.run(cluster_uids)
        final_nodes = await api.list(path("Node"))
        final_pods = await api.list(path("Pod"))
        return end, run.truncated, final_nodes, final_pods

    end, truncated, final_nodes, final_pods = sandbox.run(replay)
    obs.read_log(scheduler_log, datetime.date.today().year)
    nodes_before = usage(nodes, [o for o in before if o.get("kind") == "Pod"])
    nodes_after = usage(final_nodes, final_pods)
    config = SimulationConfig(
        seed=args.seed, percentage_of_nodes_to_score=settings.get("percentageOfNodesToScore", 0),
        pod_initial_backoff=int(settings.get("podInitialBackoffSeconds", 1) * 1e9),
        pod_max_backoff=int(settings.get("podMaxBackoffSeconds", 10) * 1e9),
        max_time=args.max_time or None)
    result = build_result(obs, config, end=end, nodes_before=nodes_before,
                          nodes_after=nodes_after, truncated=truncated,
                          warnings=list(obs.warnings))
    report = build_report(result, profile)
    report["inputs"]["onSandbox"] = {
        "kubernetesVersion": version, "timeScale": args.time_scale,
        "settleSeconds": args.settle, "schedulerVerbosity": args.scheduler_verbosity,
        "scheduler": "scheduler-plugins" if scheduler_binary is not None else "kube-scheduler",
        "configuration": settings, "cycleSeconds": cycle_seconds(obs)}
    lines = event_lines(obs, end, truncated)
    if args.report:
        write_report_to(report, args.report)
    if args.events:
        Path(args.events).write_text("".join(json.dumps(e, ensure_ascii=False,
                                                        separators=(",", ":")) + "\n"
                                             for e in lines), encoding="utf-8")
    if args.html:
        from extender.simulator.htmlreport import render_html, write_html

        source = args.policy or args.config
        write_html(render_html(report, lines, title=(
            f"extender simulate --on-sandbox: {Path(source).name} on {Path(args.cluster).name} "
            f"+ {Path(args.workload).name} (kube-scheduler {version})")), args.html)
    out = sys.stderr if args.report == "-" else sys.stdout
    wall = time.monotonic() - wall_started
    print(f"{summary_line(report['totals'], {})}; on kube-scheduler {version}, "
          f"{wall:.1f}s wall", file=out)
    for warning in report["warnings"]:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


#: What scheduler-plugins' kube-scheduler reads beyond kube-scheduler's own role.
SCHEDULER_PLUGINS_RULES = [
    {"apiGroups": ["scheduling.x-k8s.io"], "resources": ["podgroups", "elasticquotas",
                                                          "podgroups/status",
                                                          "elasticquotas/status"],
     "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]},
    {"apiGroups": ["topology.node.k8s.io"], "resources": ["noderesourcetopologies"],
     "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["appgroup.diktyo.x-k8s.io", "networktopology.diktyo.x-k8s.io"],
     "resources": ["appgroups", "networktopologies"], "verbs": ["get", "list", "watch"]},
]


async def _grant_scheduler_plugins(api: Api) -> None:
    name = "extender-replay:scheduler-plugins"
    await api.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                     "metadata": {"name": name}, "rules": SCHEDULER_PLUGINS_RULES})
    await api.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                     "metadata": {"name": name},
                     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                 "name": name},
                     "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                                   "name": "system:kube-scheduler"}]})

