"""The sub-commands of `extender sandbox`: build, up, down, status."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from extender.sandbox.build import DEFAULT_VERSION, BuildError, binaries, build, resolve_version
from extender.sandbox.controlplane import (
    Sandbox,
    SandboxError,
    SchedulerOptions,
    default_state_dir,
)


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _quiet() -> None:
    # httpx logs every request at INFO; the progress lines say what matters.
    logging.getLogger("httpx").setLevel(logging.WARNING)


def add_subcommands(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="sandbox_command", metavar="SUBCOMMAND", required=True)
    version_help = (f"Kubernetes release, 1.N.P or 1.N for its newest patch (default: "
                    f"{DEFAULT_VERSION})")

    b = sub.add_parser("build", help="build the control plane's programs from Go modules",
                       description="Build kube-apiserver, kube-scheduler, kube-controller-manager "
                                   "(k8s.io/kubernetes) and etcd (go.etcd.io/etcd/server/v3) into "
                                   "a cache ($EXTENDER_SANDBOX_CACHE, else ~/.cache/extender/"
                                   "sandbox/<version>/); reused when present.")
    b.add_argument("--kubernetes-version", default=DEFAULT_VERSION, metavar="V", help=version_help)
    b.add_argument("--force", action="store_true", help="build again even if cached")
    b.add_argument("--scheduler-plugins", action="store_true",
                   help="instead: kube-scheduler built with sigs.k8s.io/scheduler-plugins (and "
                        "the control plane of the release it is built at), for `extender "
                        "simulate --on-sandbox --scheduler-plugins`")
    b.set_defaults(func=run_build)

    state_help = f"where the sandbox keeps its state and logs (default: {default_state_dir()})"
    u = sub.add_parser("up", help="start a control plane, nodes, this extender and kube-scheduler",
                       description="Start etcd, kube-apiserver, kube-controller-manager, a node "
                                   "agent with the nodes, this extender (serve --kubeconfig) and "
                                   "kube-scheduler configured as render-config writes it; print "
                                   "KUBECONFIG=<path> when all are ready and return, leaving them "
                                   "running until `extender sandbox down`.")
    nodes = u.add_mutually_exclusive_group()
    nodes.add_argument("--nodes", type=int, default=3, metavar="N",
                       help="N identical nodes (8 cpu, 32Gi, 110 pods; zones a, b, c in turn)")
    nodes.add_argument("--nodes-file", type=Path, default=None, metavar="FILE",
                       help="Node objects as `kubectl get nodes -o yaml|json` prints them")
    u.add_argument("--policy", type=Path, default=None, metavar="FILE",
                   help="the extender's ExtenderPolicy (default: its packaged default)")
    u.add_argument("--state-dir", type=Path, default=None, metavar="DIR", help=state_help)
    u.add_argument("--kubernetes-version", default=DEFAULT_VERSION, metavar="V", help=version_help)
    u.add_argument("--extender-arg", action="append", default=[], metavar="ARG",
                   help="one more argument for `extender serve` (repeat; write flags as "
                        "--extender-arg=--reply-cache=0)")
    u.add_argument("--no-extender", action="store_true",
                   help="kube-scheduler alone, without this extender")
    u.add_argument("--scheduler-qps", type=float, default=50.0,
                   help="kube-scheduler's clientConnection.qps (burst: twice it; default: 50, "
                        "kube-scheduler's own)")
    u.add_argument("--heartbeat", type=float, default=60.0, metavar="SECONDS",
                   help="how often the node agent renews each node's Lease")
    u.set_defaults(func=run_up)

    d = sub.add_parser("down", help="stop every process of a sandbox",
                       description="Stop every process `up` started in the state directory "
                                   "(newest first: SIGTERM, then SIGKILL after 10 s).")
    d.add_argument("--state-dir", type=Path, default=None, metavar="DIR", help=state_help)
    d.set_defaults(func=run_down)

    s = sub.add_parser("status", help="what runs in a sandbox, and its kubeconfig")
    s.add_argument("--state-dir", type=Path, default=None, metavar="DIR", help=state_help)
    s.set_defaults(func=run_status)


def run_build(args: argparse.Namespace) -> int:
    try:
        if args.scheduler_plugins:
            from extender.sandbox.build import (
                build_scheduler_plugins,
                scheduler_plugins_kubernetes_version,
            )

            build_scheduler_plugins(progress=_progress, force=args.force)
            build(scheduler_plugins_kubernetes_version(), progress=_progress)
            return 0
        build(args.kubernetes_version, progress=_progress, force=args.force)
    except BuildError as exc:
        print(f"sandbox build: {exc}", file=sys.stderr)
        return 1
    return 0


def _check_policy(path: Path) -> None:
    """The policy read and its start-up rules checked before anything starts (the extender
    would refuse it only after the control plane and the nodes were up)."""
    from extender.engine.policy import load_policy
    from extender.engine.profile import build_profile
    from extender.state.loadmetrics.config import one_source

    if not path.is_file():
        raise SandboxError(f"--policy {path}: no such file")
    try:
        one_source(build_profile(load_policy(path)))
    except ValueError as exc:  # PolicyError, LoadSourceConfigError
        raise SandboxError(f"--policy {path}: {exc}") from None


def run_up(args: argparse.Namespace) -> int:
    from extender.sandbox import nodes as node_objects

    _quiet()
    try:
        version = resolve_version(args.kubernetes_version)
        built = binaries(version)
        if not built.present():
            raise BuildError(f"Kubernetes {version} is not built: run `extender sandbox build "
                             f"--kubernetes-version {version}` first")
        if args.nodes_file is not None:
            nodes = node_objects.from_file(args.nodes_file)
        else:
            nodes = node_objects.identical(args.nodes)
        if args.policy is not None:
            _check_policy(args.policy)
        for flag, value in (("--scheduler-qps", args.scheduler_qps),
                            ("--heartbeat", args.heartbeat)):
            if not value > 0:
                raise SandboxError(f"{flag} {value:g}: must be positive")
        sandbox = Sandbox(args.state_dir or default_state_dir(), built, progress=_progress)
        # Refused before anything starts: the failure path below stops what it finds in the
        # state directory, and those would be another `up`'s, still in use.
        sandbox.refuse_if_running()
    except (BuildError, SandboxError, ValueError) as exc:
        print(f"sandbox up: {exc}", file=sys.stderr)
        return 1
    try:
        sandbox.start_control_plane()
        sandbox.start_agent(nodes, heartbeat=args.heartbeat)
        extender = None
        if not args.no_extender:
            extender = sandbox.start_extender(policy=args.policy, args=args.extender_arg)
            _progress(f"extender ready at {extender.url}")
        options = SchedulerOptions(qps=args.scheduler_qps, burst=int(args.scheduler_qps * 2))
        config = sandbox.start_scheduler(extender, options, policy=args.policy)
        _progress(f"kube-scheduler {version} ready ({config}); logs in "
                  f"{sandbox.registry.logs}")
    except (SandboxError, BuildError, OSError, TimeoutError) as exc:
        print(f"sandbox up: {exc}", file=sys.stderr)
        stopped = sandbox.down()
        if stopped:
            print(f"sandbox up: stopped {', '.join(stopped)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        sandbox.down()
        return 130
    print(f"KUBECONFIG={sandbox.kubeconfig}", flush=True)
    return 0


def run_down(args: argparse.Namespace) -> int:
    sandbox = Sandbox(args.state_dir or default_state_dir())
    stopped = sandbox.down()
    if stopped:
        print(f"stopped {', '.join(stopped)} ({sandbox.state_dir})")
    else:
        print(f"nothing was running in {sandbox.state_dir}")
    return 0


def run_status(args: argparse.Namespace) -> int:
    sandbox = Sandbox(args.state_dir or default_state_dir())
    procs = sandbox.registry.load()
    if not procs:
        print(f"no sandbox in {sandbox.state_dir}")
        return 1
    for proc in procs:
        state = "running" if proc.alive() else "exited"
        print(f"{proc.name:<24} {state:<8} pid {proc.pid:<8} {proc.log}")
    print(f"KUBECONFIG={sandbox.kubeconfig}")
    return 0 if all(p.alive() for p in procs) else 1
