"""`evaluate`: what every plugin of a policy says about a pod, for tests and notebooks.

    from extender.engine import evaluate
    ev = evaluate(objects, pod, policy=None, nodes=None, metrics=None)
    ev.prefilter, ev.filter[node], ev.scores[plugin][node], ev.total[node], ev.extender_scores[node]

Unlike a scheduling cycle it picks no node: every node that passes the filters is scored, even
when only one does (kube-scheduler's one-feasible-node shortcut does not apply).

`metrics` is a node load snapshot in load-watcher's JSON shape (`GET /watcher`: a dict, or
its JSON text as str or bytes; `extender.model.loadmetrics`), what the load-aware scorers
(TargetLoadPacking, LoadVariationRiskBalancing, LowRiskOverCommitment) read instead of a live
metrics source. Without it they find no metrics and score every node 0, as upstream does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from extender.engine import registry
from extender.engine.cluster import ClusterState
from extender.engine.framework import Code, CycleState, PluginError, Status
from extender.engine.plugins.trimaran.store import TrimaranStore
from extender.engine.policy import BUILTIN_POLICY, ExtenderPolicy, load_policy, parse_policy
from extender.engine.profile import Profile, build_profile
from extender.engine.rows import filter_rows, row_extender_scores, row_totals, score_rows
from extender.engine.runner import prepare_filters
from extender.model import k8s
from extender.model.loadmetrics import WatcherMetrics, decode_watcher_metrics, watcher_metrics
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.model.quantity import QuantityError

#: kube-scheduler's defaults: every phase left out of the policy.
DEFAULT_POLICY = BUILTIN_POLICY

_CODES = {
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.ERROR: "Error",
}


class EvaluationError(ValueError):
    """Input `evaluate` cannot read: the message names the object."""


@dataclass
class Evaluation:
    """What each plugin said. Statuses are `{"plugin", "code", "reasons"}` dicts."""

    prefilter: dict[str, Any] | None = None
    filter: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    scores: dict[str, dict[str, int]] = field(default_factory=dict)
    total: dict[str, int] = field(default_factory=dict)
    extender_scores: dict[str, int] = field(default_factory=dict)

    @property
    def feasible(self) -> list[str]:
        """The candidates every filter passed, in candidate order."""
        return [name for name, status in self.filter.items() if status is None]


def status_dict(status: Status) -> dict[str, Any]:
    return {"plugin": status.plugin, "code": _CODES.get(status.code, status.code.name.title()),
            "reasons": list(status.reasons)}


def cluster_from_objects(objects: Iterable[Mapping[str, Any]]) -> ClusterState:
    """A cluster state holding the objects (dicts as `kubectl get -o json` prints them)."""
    state = ClusterState()
    for i, obj in enumerate(objects):
        kind = obj.get("kind") if isinstance(obj, Mapping) else None
        if kind not in registry.KINDS:
            raise EvaluationError(f"objects[{i}]: kind {kind!r} is not one the engine reads "
                                  f"(known: {', '.join(registry.KINDS)})")
        name = obj.get("metadata", {}).get("name", "?")
        try:
            state.apply(kind, k8s.convert(obj, registry.KINDS[kind]))
        except (msgspec.ValidationError, QuantityError) as exc:
            raise EvaluationError(f"objects[{i}] ({kind} {name!r}): {exc}") from None
    return state


def _policy(policy: ExtenderPolicy | Mapping[str, Any] | str | Path | None) -> ExtenderPolicy:
    if policy is None:
        return parse_policy(DEFAULT_POLICY, "<default policy>")
    if isinstance(policy, ExtenderPolicy):
        return policy
    if isinstance(policy, Mapping):
        return parse_policy(dict(policy), "<policy>")
    return load_policy(policy)


MetricsLike = WatcherMetrics | Mapping[str, Any] | str | bytes


def read_metrics(metrics: MetricsLike) -> WatcherMetrics:
    """A node load snapshot in load-watcher's JSON shape, from a dict, its JSON text or an
    already decoded `WatcherMetrics`; `EvaluationError` naming what is wrong otherwise."""
    try:
        if isinstance(metrics, WatcherMetrics):
            return metrics
        if isinstance(metrics, str | bytes | bytearray | memoryview):
            raw = metrics if isinstance(metrics, str) else bytes(metrics)
            return decode_watcher_metrics(raw)
        if isinstance(metrics, Mapping):
            return watcher_metrics(dict(metrics))
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise EvaluationError(f"metrics: not in load-watcher's shape: {exc}") from None
    raise EvaluationError(f"metrics: expected load-watcher's JSON as a dict, str or bytes, "
                          f"got {type(metrics).__name__}")


def evaluation_inputs(objects: Iterable[Mapping[str, Any]], pod: Mapping[str, Any],
                      policy: ExtenderPolicy | Mapping[str, Any] | str | Path | None = None,
                      nodes: Sequence[str] | None = None, metrics: MetricsLike | None = None,
                      ) -> tuple[Profile, ClusterState, PodView, list[NodeInfo]]:
    """`evaluate`'s arguments read: the profile, the cluster (with the load metrics, when
    given), the pod's view and the candidate nodes in order (`engine.explain` reads the same
    arguments the same way)."""
    profile = build_profile(_policy(policy))
    state = cluster_from_objects(objects)
    if metrics is not None:
        state.store(TrimaranStore).set_metrics(read_metrics(metrics))
    try:
        view = PodView.from_k8s(k8s.convert(dict(pod), k8s.Pod))
    except (msgspec.ValidationError, QuantityError) as exc:
        raise EvaluationError(f"pod: {exc}") from None
    names = list(state.nodes) if nodes is None else list(nodes)
    unknown = [name for name in names if name not in state.nodes]
    if unknown:
        raise EvaluationError(f"nodes: {', '.join(unknown)} not among the objects' nodes")
    return profile, state, view, [state.nodes[name] for name in names]


def evaluate(objects: Iterable[Mapping[str, Any]], pod: Mapping[str, Any],
             policy: ExtenderPolicy | Mapping[str, Any] | str | Path | None = None,
             nodes: Sequence[str] | None = None,
             metrics: MetricsLike | None = None) -> Evaluation:
    """Run the policy's filters and scorers for `pod` over `nodes` (None: every node) of the
    cluster `objects` describe, with `metrics` (load-watcher's JSON shape) as the node load
    metrics. Raises `PolicyError` for an invalid policy or plugin arguments and
    `EvaluationError` for objects or metrics it cannot read."""
    profile, state, view, infos = evaluation_inputs(objects, pod, policy, nodes, metrics)
    names = [info.node.name for info in infos]
    # The row path, as the server's NodeNames requests run it (`engine.rows`).
    rows = state.table.rows(names)
    assert rows is not None  # the candidates are the state's own nodes
    cycle = CycleState()
    prepared = prepare_filters(profile, view, state, cycle)
    verdicts = filter_rows(profile, view, rows, state.table, state, prepared)
    ev = Evaluation()
    if verdicts.rejection is not None:
        ev.prefilter = status_dict(verdicts.rejection)
    codes = verdicts.codes.tolist()
    for name, code in zip(names, codes, strict=True):
        status = verdicts.statuses[code]
        ev.filter[name] = None if status is None else status_dict(status)
    passed_names = [name for name, code in zip(names, codes, strict=True) if code == 0]
    passed = rows[verdicts.codes == 0]
    errors: list[PluginError] = []
    results = score_rows(profile, view, passed, state.table, state, cycle, errors)
    if errors:
        # A PreScore Error fails kube-scheduler's whole cycle for the pod: there are no scores.
        raise EvaluationError("; ".join(f"score plugin {e.plugin} failed: {e.message}"
                                        for e in errors))
    for plugin in results:
        ev.scores[plugin.name] = dict(zip(passed_names, plugin.scores.tolist(), strict=True))
    ev.total = dict(zip(passed_names, row_totals(results, len(passed)).tolist(), strict=True))
    ev.extender_scores = dict(zip(passed_names,
                                  row_extender_scores(results, len(passed)).tolist(), strict=True))
    return ev
