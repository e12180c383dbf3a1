"""`extender render-config` and `extender check-config`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from extender import cliargs
from extender.engine.args import NEWEST_VERSION, OLDEST_VERSION, parse_version
from extender.ops.kubeversions import format_version
from extender.ops.problems import Collector, Problem
from extender.ops.schedconfig import (
    DEFAULT_LEASE_NAMESPACE,
    DEFAULT_SCHEDULER_NAME,
    DEFAULT_URL,
    VERBS,
    ExtenderTLS,
    check_files,
    render_config,
    summary,
)


class _DefaultsHelp(argparse.HelpFormatter):
    """Each option's help ends with its default where that tells something: not for a switch
    (`--ignorable`, `--no-leader-election`), an option unset by default, or a help that
    already words its default."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if isinstance(action, argparse.BooleanOptionalAction):
            on, off = action.option_strings[:2]
            text = text.replace(" (default: %(default)s)", "")  # Python 3.11 adds its own
            return f"{text} (default: {on if default else off})"
        if (not action.option_strings or default is None or default is False
                or default == [] or default is argparse.SUPPRESS or action.nargs == 0
                or "default" in text):
            return text
        shown = " ".join(map(str, default)) if isinstance(default, list) else "%(default)s"
        return f"{text} (default: {shown})"


def add_commands(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register both sub-commands; each sets `func(args) -> exit code`."""
    render = subparsers.add_parser(
        "render-config",
        help="print a KubeSchedulerConfiguration that registers this extender",
        description="Print a kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration with one "
                    "profile and this extender registered. The output passes check-config.",
        formatter_class=_DefaultsHelp,
    )
    render.add_argument("--url", default=DEFAULT_URL,
                        help="urlPrefix kube-scheduler calls; its scheme decides http or https "
                             "(enableHTTPS follows it)")
    render.add_argument("--verbs", nargs="+", choices=VERBS, default=list(VERBS), metavar="VERB",
                        help=f"verbs to register, any of: {' '.join(VERBS)}")
    render.add_argument("--weight", type=int, default=1,
                        help="multiplier for prioritize scores (0..10 each, times 10 in "
                             "kube-scheduler); must be positive when prioritize is registered")
    render.add_argument("--node-cache", action=argparse.BooleanOptionalAction, default=True,
                        help="nodeCacheCapable: kube-scheduler sends node names instead of whole "
                             "Node objects (the extender keeps its own node cache)")
    render.add_argument("--managed-resource", action="append", default=[], metavar="NAME",
                        dest="managed_resources",
                        help="extended resource (e.g. example.com/gpu) that makes a pod "
                             "interesting to the extender; repeat for several. Without any, "
                             "every pod of the profile is sent")
    render.add_argument("--ignored-by-scheduler", action="store_true",
                        help="mark the managed resources ignoredByScheduler, so kube-scheduler's "
                             "NodeResourcesFit leaves them to the extender")
    render.add_argument("--http-timeout", default=None, metavar="DURATION",
                        help="httpTimeout per call, a Go duration (5s, 500ms, 1m); default 5s, "
                             "or, when --policy enables Coscheduling, long enough for a bind "
                             "held at Permit (permitWaitingTimeSeconds + --bind-deadline + 2s)")
    render.add_argument("--policy", default=None, metavar="FILE",
                        help="the extender's ExtenderPolicy: with Coscheduling enabled, the "
                             "default httpTimeout leaves room for its Permit wait")
    render.add_argument("--bind-deadline", type=cliargs.positive_float, default=4.0,
                        metavar="SECONDS",
                        help="the extender's --bind-deadline (default: 4), for that httpTimeout")
    render.add_argument("--ignorable", action="store_true",
                        help="let scheduling go on without the extender when it fails or is down")
    render.add_argument("--scheduler-name", default=DEFAULT_SCHEDULER_NAME,
                        help="profile schedulerName that pods select with spec.schedulerName; "
                             "also the leader-election lease name")
    render.add_argument("--lease-namespace", default=DEFAULT_LEASE_NAMESPACE,
                        help="namespace of the leader-election lease")
    render.add_argument("--no-leader-election", dest="leader_election", action="store_false",
                        help="run without leader election (a single scheduler replica)")
    render.add_argument("--kubeconfig", default=None, metavar="FILE",
                        help="clientConnection.kubeconfig for kube-scheduler (omit in a pod "
                             "with a ServiceAccount)")
    render.add_argument("--tls-ca-file", default=None, metavar="FILE",
                        help="tlsConfig.caFile: CA that signed the extender's serving certificate "
                             "(without it kube-scheduler skips verification)")
    render.add_argument("--tls-cert-file", default=None, metavar="FILE",
                        help="tlsConfig.certFile: kube-scheduler's client certificate, for an "
                             "extender started with --client-ca-file (mutual TLS)")
    render.add_argument("--tls-key-file", default=None, metavar="FILE",
                        help="tlsConfig.keyFile: the key of --tls-cert-file")
    render.add_argument("--tls-server-name", default=None, metavar="NAME",
                        help="tlsConfig.serverName: name to verify in the extender's certificate "
                             "when it differs from the URL host")
    render.add_argument("-o", "--output", default=None, metavar="FILE",
                        help="write to FILE instead of standard output")
    render.set_defaults(func=run_render_config)

    check = subparsers.add_parser(
        "check-config",
        help="check KubeSchedulerConfiguration, legacy Policy and ExtenderPolicy files",
        description="Check each file as kube-scheduler (or the extender) would read it: strict "
                    "keys, types, durations and the extenders rules. Prints one line per "
                    "problem as '<file>: <path>: <message>'. Exit 0 when no errors (warnings "
                    "are printed but pass unless --strict), 1 otherwise.",
    )
    check.add_argument("files", nargs="+", metavar="FILE",
                       help="KubeSchedulerConfiguration (v1; v1beta3 and v1beta2 for the "
                            "releases that read them), legacy Policy (kind: Policy) or "
                            "ExtenderPolicy file, or rendered manifests (kubectl kustomize "
                            "OVERLAY | extender check-config -: each file they carry, and the "
                            "extender's replicas against its policy); the kind is read from "
                            "the file; - reads standard input")
    check.add_argument("--strict", action="store_true", help="treat warnings as errors")
    check.add_argument("--kubernetes-version", default=None, metavar="1.N",
                       help="judge a KubeSchedulerConfiguration as this kube-scheduler release "
                            "reads it: which apiVersions it decodes and which plugins it has "
                            f"({format_version(OLDEST_VERSION)}..{format_version(NEWEST_VERSION)}; "
                            f"default: {format_version(NEWEST_VERSION)})")
    check.set_defaults(func=run_check_config)


def _http_timeout(args: argparse.Namespace) -> str | float:
    """The httpTimeout to render: the flag, else what the policy's Permit wait needs, else 5s."""
    if args.http_timeout is not None:
        return str(args.http_timeout)
    return policy_http_timeout(args.policy, args.bind_deadline)


def policy_http_timeout(policy: str | Path | None, bind_deadline: float = 4.0) -> str | float:
    """The httpTimeout kube-scheduler needs for an extender serving `policy`: long enough for
    a bind held at Coscheduling's Permit when the policy enables it, else 5s."""
    if policy is None:
        return "5s"
    from extender.engine.plugins.coscheduling import permit_wait
    from extender.engine.policy import load_policy
    from extender.engine.profile import build_profile
    from extender.state.permit import http_timeout_for

    wait = permit_wait(build_profile(load_policy(policy)))
    if wait is None:
        return "5s"
    return max(5.0, http_timeout_for(wait, bind_deadline))


def run_render_config(args: argparse.Namespace) -> int:
    tls = ExtenderTLS(ca_file=args.tls_ca_file, cert_file=args.tls_cert_file,
                      key_file=args.tls_key_file, server_name=args.tls_server_name)
    try:
        text = render_config(
            args.url, verbs=args.verbs, weight=args.weight, node_cache=args.node_cache,
            managed_resources=args.managed_resources,
            ignored_by_scheduler=args.ignored_by_scheduler, timeout=_http_timeout(args), tls=tls,
            ignorable=args.ignorable, scheduler_name=args.scheduler_name,
            leader_election=args.leader_election, lease_namespace=args.lease_namespace,
            kubeconfig=args.kubeconfig)
    except ValueError as exc:
        print(f"render-config: {exc}", file=sys.stderr)
        return 2
    if args.policy:  # what check-config would say of the pair, said before anything is written
        problems = _pair_problems(text, args.policy, args.bind_deadline)
        if problems:
            for problem in problems:
                print(f"render-config: {problem.path}: {problem.message}", file=sys.stderr)
            return 2
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            print(f"render-config: cannot write {args.output}: {exc.strerror or exc}",
                  file=sys.stderr)
            return 2
    else:
        sys.stdout.write(text)
    return 0


def _pair_problems(text: str, policy_path: str, bind_deadline: float) -> list[Problem]:
    """The errors of the rendered configuration against the extender's policy (flags such as
    --verbs or --http-timeout can leave Coscheduling's Permit no bind verb or too short a
    timeout)."""
    import yaml

    from extender.engine.policy import load_policy
    from extender.ops.crosscheck import check_pair

    out = Collector("-")
    check_pair(yaml.safe_load(text), load_policy(policy_path), out, bind_deadline=bind_deadline)
    return [p for p in out.problems if p.severity == "error"]


def run_check_config(args: argparse.Namespace) -> int:
    try:
        version = parse_version(args.kubernetes_version)
    except ValueError as exc:
        hint = ""
        if "outside the supported" in str(exc):  # an older cluster's file is the legacy Policy
            hint = ("; a legacy Policy file (kube-scheduler before 1.23, as "
                    "config/scheduler-policy.json) is checked without --kubernetes-version")
        print(f"check-config: --kubernetes-version: {exc}{hint}", file=sys.stderr)
        return 2
    # Standard input read once: each check, the summary and the cross-check read it again.
    stdin = sys.stdin.read() if "-" in args.files else None
    notes: list[str] = []
    problems = check_files(args.files, version, stdin, notes,
                           release_given=args.kubernetes_version is not None)
    for note in notes:
        print(f"check-config: {note}", file=sys.stderr)
    failed = False
    for name in args.files:
        mine = [p for p in problems if p.file == name]
        for problem in mine:
            print(problem)
        errors = [p for p in mine if p.severity == "error" or args.strict]
        failed = failed or bool(errors)
        if not errors:
            warnings = f"; {len(mine)} warning(s)" if mine else ""
            print(f"ok: {name} ({summary(name, version, stdin)}{warnings})")
    return 1 if failed else 0
