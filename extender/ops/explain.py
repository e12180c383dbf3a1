"""`extender explain`: why a pod can or cannot go to each node, plugin by plugin.

    extender explain --pod pod.yaml [--snapshot FILE | --kubeconfig FILE] [--policy FILE]
                     [--node NAME ...] [-o table|json]

The same answer as `POST /explain` (`engine.explain`), on the state `serve` would use: the demo
snapshot by default, a snapshot file, or a live cluster listed once (read-only: nothing is
watched, bound or written).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from extender.kube.config import KUBECONFIG_AUTO, kubeconfig_path

if TYPE_CHECKING:
    from extender.engine.cluster import ClusterState
    from extender.engine.explain import Explanation


class ExplainError(Exception):
    """Input the command cannot use; the message says which and why."""


def add_commands(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "explain",
        help="why a pod can or cannot go to each node: every filter's verdict, every score",
        description="Run every filter plugin of the policy on every node for the pod (not only "
                    "up to the first failure), and show each scorer's raw and normalised score, "
                    "weight and weighted score, the total and the 0..10 extender score for the "
                    "nodes that pass. The same answer as POST /explain.")
    p.add_argument("--pod", required=True, type=Path, metavar="FILE",
                   help="the pod, JSON or YAML (kubectl get pod NAME -o yaml), or a filter "
                        "request body (ExtenderArgs: its Pod, and its NodeNames as the nodes)")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--snapshot", type=Path, default=None, metavar="FILE",
                        help="cluster snapshot (kubectl get nodes,pods,... -A -o json|yaml; "
                             "default: the demo snapshot serve uses)")
    source.add_argument("--kubeconfig", type=Path, default=None, nargs="?",
                        const=KUBECONFIG_AUTO, metavar="FILE",
                        help="list a live cluster once through this kubeconfig (read-only); "
                             "without FILE, kubectl's: the $KUBECONFIG list (merged), else "
                             "~/.kube/config")
    p.add_argument("--context", default=None,
                   help="kubeconfig context (default: current); alone, it implies --kubeconfig "
                        "without FILE, as for serve")
    p.add_argument("--policy", type=Path, default=None, metavar="FILE",
                   help="ExtenderPolicy file (default: the one serve uses, kube-scheduler's "
                        "default plugins)")
    p.add_argument("--node", action="extend", nargs="+", default=None, metavar="NAME",
                   dest="nodes", help="explain only these nodes (repeatable; default: all). "
                                      "Scores are over the feasible ones among them")
    p.add_argument("-o", "--output", choices=("table", "json"), default="table",
                   help="a terminal table (default) or the JSON of POST /explain")
    p.add_argument("--log-level", default="warning",
                   choices=["debug", "info", "warning", "error"],
                   help="log level on standard error (default: warning)")
    p.set_defaults(func=run_explain)


def run_explain(args: argparse.Namespace) -> int:
    try:
        explanation, notes = explain_command(args)
    except ExplainError as exc:
        print(f"explain: {exc}", file=sys.stderr)
        return 2
    if args.output == "json":
        json.dump(explanation.to_dict(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        render_table(explanation, notes)
    return 0


def explain_command(args: argparse.Namespace) -> tuple[Explanation, list[str]]:
    import msgspec

    from extender.api.explain import explain_candidates
    from extender.data import default_policy
    from extender.engine.explain import explain_nodes
    from extender.engine.framework import EngineError
    from extender.engine.policy import PolicyError, resolve_policy
    from extender.engine.profile import build_profile
    from extender.model import k8s
    from extender.model.pod import PodView
    from extender.model.quantity import QuantityError

    pod, body = read_pod(args.pod)
    try:
        policy, policy_source = resolve_policy(args.policy, default_policy())
    except PolicyError as exc:
        raise ExplainError(f"invalid policy:\n{exc}") from None
    profile = build_profile(policy)
    state, state_source = load_state(args, profile)
    notes = [f"policy {_shown(policy_source)}; {state_source}"]
    notes.extend(read_load_metrics(profile, state, args))
    try:
        typed = k8s.convert(pod, k8s.Pod)
        running = typed.spec.node_name
        if running:
            # The question is where the scheduler could put it: as if pending again, its own
            # load taken off the node it runs on.
            typed.spec.node_name = ""
            state.delete_pod(typed.metadata.namespace, typed.metadata.name)
            notes.append(f"the pod runs on {running}: explained as if pending (its own "
                         "requests taken off that node)")
        view = PodView.from_k8s(typed)
    except (msgspec.ValidationError, QuantityError) as exc:
        raise ExplainError(f"{args.pod}: invalid Pod: {exc}") from None
    try:
        if args.nodes is None and body is not None:
            # A request body: its candidates as POST /explain reads them (a name the cluster
            # lacks, an invalid Node object: their filter reason, not a refusal).
            return explain_candidates(profile, view, _body_candidates(args.pod, body, state),
                                      state), notes
        if args.nodes is None:
            return explain_nodes(profile, view, list(state.nodes.values()), state), notes
        unknown = [name for name in args.nodes if name not in state.nodes]
        if unknown:
            raise ExplainError(f"unknown node(s): {', '.join(unknown)} (the cluster has "
                               f"{', '.join(sorted(state.nodes)) or 'no nodes'})")
        return explain_nodes(profile, view, [state.nodes[n] for n in args.nodes], state), notes
    except EngineError as exc:
        raise ExplainError(str(exc)) from None


def _body_candidates(path: Path, body: dict[str, Any], state: ClusterState) -> Any:
    import msgspec

    from extender.api.body import BadRequest
    from extender.api.candidates import from_names, from_nodes

    names = body.get("NodeNames")
    if names is not None:
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ExplainError(f"{path}: NodeNames must be a list of node names")
        return from_names(names, state)
    items = (body.get("Nodes") or {}).get("items") if isinstance(body.get("Nodes"), dict) else None
    if not isinstance(items, list):
        raise ExplainError(f"{path}: one of Nodes or NodeNames must be set")
    try:
        return from_nodes([msgspec.Raw(msgspec.json.encode(item)) for item in items], state)
    except BadRequest as exc:
        raise ExplainError(f"{path}: {exc}") from None


def read_pod(path: Path) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The pod's object, and the whole request body when the file is one (else None)."""
    from extender.state.snapshot import SnapshotError, iter_objects, read_documents

    try:
        documents = read_documents(path)
    except SnapshotError as exc:
        raise ExplainError(str(exc)) from None
    if len(documents) == 1 and isinstance(documents[0], dict) and "Pod" in documents[0]:
        body = documents[0]
        if not isinstance(body["Pod"], dict):
            raise ExplainError(f"{path}: Pod must be an object")
        return body["Pod"], body
    objects = list(iter_objects(documents))
    pods = [obj for obj in objects if obj.get("kind", "Pod") == "Pod"]
    if len(pods) != 1:
        others = sorted({str(obj.get("kind")) for obj in objects} - {"Pod"})
        found = f"found {len(pods)}" + (f" (and {', '.join(others)})" if others else "")
        raise ExplainError(f"{path}: expected one Pod, or a filter request body, {found}")
    return pods[0], None


def load_state(args: argparse.Namespace, profile: Any) -> tuple[ClusterState, str]:
    if args.kubeconfig is None and args.context is not None and args.snapshot is None:
        args.kubeconfig = KUBECONFIG_AUTO  # `--context` alone, as serve reads it
    if args.kubeconfig is not None:
        return (list_cluster(kubeconfig_path(args.kubeconfig), args.context, profile),
                f"cluster of {args.kubeconfig}")
    from extender.data import demo_snapshot
    from extender.state.snapshot import SnapshotError, load_snapshot

    snapshot = args.snapshot or demo_snapshot()
    if not snapshot.is_file():
        raise ExplainError(f"snapshot {snapshot} not found" + (
            "" if args.snapshot else ": pass --snapshot FILE or --kubeconfig FILE"))
    warnings: list[str] = []  # unknown field names of the snapshot's objects
    try:
        state = load_snapshot(snapshot, warnings=warnings)
    except SnapshotError as exc:
        raise ExplainError(f"cannot load the snapshot: {exc}") from None
    for warning in warnings:
        print(f"explain: warning: {warning}", file=sys.stderr)
    return state, f"snapshot {_shown(str(snapshot))}"


def list_cluster(kubeconfig: Path | None, context: str | None,
                 profile: Any = None) -> ClusterState:
    """The cluster as `serve --kubeconfig` sees it once synced: each informer lists once
    (the custom resources too that the profile's plugins read)."""
    import asyncio
    import logging

    from extender.engine.cluster import ClusterState
    from extender.kube.client import KubeClient, KubeError
    from extender.kube.config import ConfigError, load_kubeconfig
    from extender.state.informer import ALL_RESOURCES, Informer, resources_for

    resources = ALL_RESOURCES if profile is None else resources_for(profile.plugin_names)

    try:
        config = load_kubeconfig(kubeconfig, context)
    except ConfigError as exc:
        raise ExplainError(f"cannot use the cluster credentials: {exc}") from None
    logging.getLogger("httpx").setLevel(logging.WARNING)
    state = ClusterState()

    async def list_all() -> None:
        async with KubeClient(config) as client:
            # A broken exec plugin is named as serve names it, before any request (it read
            # as a 401 from a server nothing had been sent to).
            client.prepare_credentials()
            for spec in resources:
                await Informer(client, state, spec).relist()

    try:
        asyncio.run(list_all())
    except ConfigError as exc:
        raise ExplainError(f"cannot use the cluster credentials: {exc}") from None
    except KubeError as exc:
        raise ExplainError(f"listing the cluster failed: {exc}") from None
    return state


def read_load_metrics(profile: Any, state: ClusterState, args: argparse.Namespace) -> list[str]:
    """One read of the node-metrics source the profile's load-aware plugins name, taken as the
    server's refresher takes it (the same dating, staleness and per-plugin needs), into the
    state; notes for the reader."""
    import asyncio
    import logging

    from extender.state.loadmetrics.config import (
        LoadSourceConfigError,
        build_refresher,
        describe,
        trimaran_specs,
    )
    from extender.state.loadmetrics.source import SourceError

    uses = trimaran_specs(profile)
    if not uses:
        return []
    _, spec = uses[0]
    logging.getLogger("httpx").setLevel(logging.WARNING)

    async def fetch() -> tuple[str, str | None]:
        from extender.kube.client import KubeClient
        from extender.kube.config import load_kubeconfig

        client = None
        if args.kubeconfig is not None and not spec.watcher_address \
                and spec.metric_provider.type == "KubernetesMetricsServer":
            client = KubeClient(load_kubeconfig(kubeconfig_path(args.kubeconfig), args.context))
        try:
            refresher = build_refresher(profile, state, kube_client=client)
            if refresher is None:
                return "", None
            try:
                if not await refresher.refresh():
                    raise SourceError(refresher.last_error)
                return describe(spec), refresher.detail()
            finally:
                await refresher.source.aclose()
        finally:
            if client is not None:
                await client.aclose()

    # The refresher's own log lines would repeat what the notes say; its logger is the
    # process's, so it is given back as it was (a test process goes on logging with it).
    refresher_log = logging.getLogger("extender.state.loadmetrics")
    level = refresher_log.level
    refresher_log.setLevel(logging.ERROR)
    try:
        source, detail = asyncio.run(fetch())
    except (LoadSourceConfigError, SourceError, OSError) as exc:
        return [f"node metrics from {describe(spec)} could not be read ({exc}): the load-aware "
                "scores treat every node as having no metrics"]
    finally:
        refresher_log.setLevel(level)
    if not source:
        return []
    # What the server's readiness line would say of the same read (stale nodes, nodes without
    # a plugin's metric), so the scores shown are explained.
    return [f"node metrics read once from {source}" + (f": {detail}" if detail else "")]


def _shown(path: str) -> str:
    """A path as the user would type it: relative to the working directory when inside it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except (ValueError, OSError):
        return path


# ---- the table ------------------------------------------------------------------------------

def _reasons(verdict: dict[str, Any]) -> str:
    return ", ".join(verdict["reasons"]) or verdict["code"]


def render_table(explanation: Explanation, notes: list[str]) -> None:
    """The explanation as tables on standard output, each line without the spaces rich pads
    it with to the terminal's width (they made every line differ from a copy in a file)."""
    from rich.console import Console

    console = Console(highlight=False)
    with console.capture() as captured:
        _render(console, explanation, notes)
    sys.stdout.write("".join(line.rstrip(" ") + "\n"
                             for line in captured.get().splitlines()))


def _render(console: Any, explanation: Explanation, notes: list[str]) -> None:
    from rich.table import Table

    data = explanation.to_dict()
    nodes = data["nodes"]
    console.print(f"[bold]Pod {data['pod']}[/]: {len(data['feasible'])} of {len(nodes)} "
                  "nodes feasible")
    for note in notes:
        console.print(f"[dim]{note}[/]")
    if data["rejection"] is not None:
        rejection = data["rejection"]
        console.print(f"[red]PreFilter {rejection['plugin']} rejects the pod on every node: "
                      f"{_reasons(rejection)}[/]")
    skipped = [v["plugin"] for v in data["prefilter"] if v["code"] == "Skip"]
    if skipped:
        console.print(f"Filters with nothing to check for this pod: {', '.join(skipped)}")
    idle = [s for s in data["scorers"] if s["status"] != "Scored"]
    for scorer in idle:
        why = f": {scorer['message']}" if scorer.get("message") else ""
        console.print(f"Scorer {scorer['plugin']} {scorer['status'].lower()}{why}")

    filters = Table(title="Filters (every plugin, in policy order)", title_justify="left",
                    caption_justify="left")
    filters.add_column("Node", no_wrap=True)
    filters.add_column("Fits", no_wrap=True)
    filters.add_column("Failing filters")
    filters.add_column("Score", justify="right", no_wrap=True)
    for name, node in nodes.items():
        failing = [f"{v['plugin'] or 'extender'}: {_reasons(v)}" for v in node["filters"]
                   if v["code"] not in ("Success", "Skip")]
        if not node["filters"] and node["verdict"] is not None:  # not in the extender's state
            failing = [f"extender: {_reasons(node['verdict'])}"]
        score = "" if node["extenderScore"] is None else str(node["extenderScore"])
        if node["feasible"]:
            fits = "[green]yes[/]"
        else:
            codes = {v["code"] for v in node["filters"] if v["code"] not in ("Success", "Skip")}
            fits = "[red]no*[/]" if codes == {"Unschedulable"} else "[red]no[/]"
            if codes == {"Unschedulable"}:  # the legend only where a row needs it
                filters.caption = "no*: every failure is Unschedulable, which preemption may resolve"
        filters.add_row(name, fits, "\n".join(failing), score)
    console.print(filters)  # only its reasons' column wraps in a narrow terminal

    scored = {name: node for name, node in nodes.items() if node["feasible"]}
    if not scored:
        return
    scores = Table(title="Scores (feasible nodes; Σ weighted = total; 0..10 = extender score)",
                   title_justify="left")
    for column in ("Node", "Scorer"):
        scores.add_column(column, no_wrap=True)
    for column in ("Raw", "Normalized", "Weight", "Weighted", "0..10"):
        scores.add_column(column, justify="right", no_wrap=True)
    for name, node in scored.items():
        first = True
        for s in node["scores"]:
            raw = "?" if s["raw"] is None else str(s["raw"])
            scores.add_row(name if first else "", s["plugin"], raw, str(s["normalized"]),
                           str(s["weight"]), str(s["weighted"]), "")
            first = False
        scores.add_row(name if first else "", "[bold]total[/]", "", "", "",
                       f"[bold]{node['total']}[/]", f"[bold]{node['extenderScore']}[/]",
                       end_section=True)
    _print_whole(console, scores)


def _print_whole(console: Any, table: Any) -> None:
    """A table of unwrapped cells at the console's width, or wider when it does not fit there
    (rich would cut names and figures short with `…`): a narrow terminal wraps the lines,
    nothing is lost."""
    from rich.measure import Measurement

    needed = Measurement.get(console, console.options.update(width=1 << 16), table).maximum
    width = console.width
    console.width = max(width, needed)  # print(width=) alone is capped at the console's
    try:
        console.print(table)
    finally:
        console.width = width
