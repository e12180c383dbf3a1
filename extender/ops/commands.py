"""`extender render-config` and `extender check-config`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from extender.ops.schedconfig import (
    DEFAULT_LEASE_NAMESPACE,
    DEFAULT_SCHEDULER_NAME,
    DEFAULT_URL,
    VERBS,
    ExtenderTLS,
    check_config,
    render_config,
)


def add_commands(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register both sub-commands; each sets `func(args) -> exit code`."""
    render = subparsers.add_parser(
        "render-config",
        help="print a KubeSchedulerConfiguration that registers this extender",
        description="Print a kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration with one "
                    "profile and this extender registered. The output passes check-config.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
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
    render.add_argument("--http-timeout", default="5s", metavar="DURATION",
                        help="httpTimeout per call, a Go duration (5s, 500ms, 1m)")
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
                             "extender started with --tls-client-ca-file (mutual TLS)")
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
                       help="KubeSchedulerConfiguration (v1, v1beta3), legacy Policy (kind: "
                            "Policy) or ExtenderPolicy file; the kind is read from the file")
    check.add_argument("--strict", action="store_true", help="treat warnings as errors")
    check.set_defaults(func=run_check_config)


def run_render_config(args: argparse.Namespace) -> int:
    tls = ExtenderTLS(ca_file=args.tls_ca_file, cert_file=args.tls_cert_file,
                      key_file=args.tls_key_file, server_name=args.tls_server_name)
    try:
        text = render_config(
            args.url, verbs=args.verbs, weight=args.weight, node_cache=args.node_cache,
            managed_resources=args.managed_resources,
            ignored_by_scheduler=args.ignored_by_scheduler, timeout=args.http_timeout, tls=tls,
            ignorable=args.ignorable, scheduler_name=args.scheduler_name,
            leader_election=args.leader_election, lease_namespace=args.lease_namespace,
            kubeconfig=args.kubeconfig)
    except ValueError as exc:
        print(f"render-config: {exc}", file=sys.stderr)
        return 2
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def run_check_config(args: argparse.Namespace) -> int:
    failed = False
    for name in args.files:
        for problem in check_config(name):
            print(problem)
            failed = failed or problem.severity == "error" or args.strict
    return 1 if failed else 0
