"""`explain`: why a pod can or cannot go to each node, plugin by plugin.

    from extender.engine.explain import explain
    ex = explain(objects, pod, policy=None, nodes=None)
    ex.nodes["b1"].filters      # every filter plugin's verdict on b1, not only the first failure
    ex.nodes["b1"].scores       # each scorer's raw and normalised score, weight and product
    ex.to_dict()                # the JSON shape `POST /explain` and `extender explain` print

The verdicts that count (`verdict`, `feasible`, the scores) come from the same code the filter
and prioritize verbs run (`prepare_filters`, `run_filters`, `run_scores`), so they always equal
`evaluate`'s. The per-plugin detail is a separate loop that judges every plugin on every node
through the plugins' per-node checks (the path preemption uses), after the hot path, which it
never slows down. A diagnostic costs a second PreFilter pass and a second Score pass (for
the raw scores); that is all.

Raw scores: each scorer's `raw_scores` (kube-scheduler's Score, before NormalizeScore), shown
only when its `normalize` gives the plugin's answer, which a property test holds for every
plugin. Plugins without a NormalizeScore step (NodeResourcesFit,
NodeResourcesBalancedAllocation, ImageLocality) score 0..100 directly: raw equals normalised.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from extender.engine.abilities import of as abilities_of
from extender.engine.evaluate import evaluation_inputs, status_dict
from extender.engine.framework import (
    ClusterContext,
    Code,
    CycleState,
    NodeCheck,
    PluginError,
    Profile,
    ScorePlugin,
    Status,
)
from extender.engine.policy import ExtenderPolicy
from extender.engine.runner import (
    extender_scores,
    pre_filter_one,
    prepare_filters,
    run_filters,
    run_scores,
)
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

log = logging.getLogger(__name__)

#: A filter plugin that had nothing to check for the pod (PreFilter Skip): it passes every node.
SKIP = "Skip"
SUCCESS = "Success"
PASSING = frozenset({SUCCESS, SKIP})

Verdict = dict[str, Any]  # {"plugin", "code", "reasons"}


def _verdict(plugin: str, code: str, reasons: Iterable[str] = ()) -> Verdict:
    return {"plugin": plugin, "code": code, "reasons": list(reasons)}


def _status(plugin: str, status: Status) -> Verdict:
    verdict = status_dict(status)
    verdict["plugin"] = status.plugin or plugin
    return verdict


@dataclass
class NodeExplanation:
    """One candidate node. `verdict` is the node's status as the filter verb reports it (the
    first failing plugin in policy order), None when it fits; `filters` has every filter
    plugin's own verdict. Scores are only for feasible nodes (kube-scheduler scores those)."""

    filters: list[Verdict] = field(default_factory=list)
    verdict: Verdict | None = None
    scores: list[dict[str, Any]] = field(default_factory=list)
    total: int | None = None
    extender_score: int | None = None

    @property
    def feasible(self) -> bool:
        return self.verdict is None

    def to_dict(self) -> dict[str, Any]:
        return {"feasible": self.feasible, "verdict": self.verdict, "filters": self.filters,
                "scores": self.scores, "total": self.total, "extenderScore": self.extender_score}


@dataclass
class Explanation:
    pod: str
    #: Each filter plugin's PreFilter: Success, Skip (nothing to check), or a rejection.
    prefilter: list[Verdict] = field(default_factory=list)
    #: The PreFilter status that rejects the pod on every node (as `Evaluation.prefilter`).
    rejection: Verdict | None = None
    #: Each scorer of the policy: {"plugin", "weight", "status": Scored|Skipped|Error, "message"}.
    scorers: list[dict[str, Any]] = field(default_factory=list)
    nodes: dict[str, NodeExplanation] = field(default_factory=dict)

    @property
    def feasible(self) -> list[str]:
        return [name for name, node in self.nodes.items() if node.feasible]

    def to_dict(self) -> dict[str, Any]:
        return {"pod": self.pod, "prefilter": self.prefilter, "rejection": self.rejection,
                "scorers": self.scorers, "feasible": self.feasible,
                "nodes": {name: node.to_dict() for name, node in self.nodes.items()}}


# ---- the engine side -------------------------------------------------------------------------

@dataclass
class _PluginFilter:
    """One filter plugin after its PreFilter, for the all-plugins loop."""

    name: str
    prefilter: Verdict
    checks: list[NodeCheck]  # its node-name restriction first, then its Filter


def _guarded(plugin: str, method: Callable[..., Any], *args: Any) -> Any:
    """`method(*args)`, or an Error status naming the plugin when it raises: the detail loop
    reports a plugin's failure instead of failing the whole explanation."""
    try:
        return method(*args)
    except Exception as exc:
        return Status(Code.ERROR, (f"{type(exc).__name__}: {exc}",), plugin)


def _prefilter_each(profile: Profile, pod: PodView, ctx: ClusterContext) -> list[_PluginFilter]:
    """Every filter plugin's PreFilter on its own (`runner.pre_filter_one`; a plugin that
    raises is an Error status): `prepare_filters` keeps only what the filter verb needs (the
    sequence's rejection and the checks to run)."""
    state = CycleState()  # this pass's own: the scorers read the real cycle's
    plugins = []
    for plugin, abilities in zip(profile.filters, abilities_of(profile).filters, strict=True):
        name = plugin.name
        step = _guarded(name, pre_filter_one, plugin, abilities, pod, state, ctx)
        if isinstance(step, Status):  # it raised
            rejection: Status | None = step
            checks: list[NodeCheck] = []
        else:
            restriction, rejection, check, _ = step
            checks = [c for c in (restriction, check) if c is not None]
        if rejection is not None:
            prefilter = _status(name, rejection)
        else:
            prefilter = _verdict(name, SUCCESS if checks else SKIP)
        plugins.append(_PluginFilter(name, prefilter, checks))
    return plugins


def _judge(plugin: _PluginFilter, node: NodeInfo) -> Verdict:
    if plugin.prefilter["code"] not in PASSING:
        return dict(plugin.prefilter)  # rejected at PreFilter: on every node
    if not plugin.checks:
        return _verdict(plugin.name, SKIP)
    for check in plugin.checks:
        status = _guarded(plugin.name, check, node)
        if status is not None:
            return _status(plugin.name, status)
    return _verdict(plugin.name, SUCCESS)


def explain_nodes(profile: Profile, pod: PodView, infos: Sequence[NodeInfo],
                  ctx: ClusterContext) -> Explanation:
    """Explain `pod` over the candidate `infos` (in order; a repeated node counts once in the
    reply, as in the filter verb's maps) of the cluster `ctx`.

    Scores are over the feasible candidates, as kube-scheduler sends prioritize only those:
    `extender_score` is what the prioritize verb answers for them. A scorer's Error (a pod it
    cannot parse) is reported in `scorers` and the others still score, as in prioritize.
    Raises `EngineError` where the filter verb would."""
    ex = Explanation(pod.key)
    # 1. What the verbs answer: the hot path itself.
    cycle = CycleState()
    prepared = prepare_filters(profile, pod, ctx, cycle)
    result = run_filters(profile, pod, infos, ctx, prepared)
    if result.rejection is not None:
        ex.rejection = status_dict(result.rejection)
    # 2. Every filter plugin on every node.
    plugins = _prefilter_each(profile, pod, ctx)
    ex.prefilter = [plugin.prefilter for plugin in plugins]
    for info in infos:
        name = info.node.name
        if name in ex.nodes:
            continue
        status = result.statuses.get(name)
        ex.nodes[name] = NodeExplanation([_judge(plugin, info) for plugin in plugins],
                                         None if status is None else status_dict(status))
    # 3. Scores over the feasible nodes.
    passed = result.passed
    errors: list[PluginError] = []
    scored = run_scores(profile, pod, passed, ctx, cycle, errors)
    by_name = {r.name: r for r in scored}
    failed = {e.plugin: e.message for e in errors}
    for plugin, weight in profile.scorers:
        entry: dict[str, Any] = {"plugin": plugin.name, "weight": weight}
        if plugin.name in by_name:
            entry["status"] = "Scored"
        elif plugin.name in failed:
            entry.update(status="Error", message=failed[plugin.name])
        else:
            entry["status"] = "Skipped"
        ex.scorers.append(entry)
    raws: list[list[int | None]] = []
    for r in scored:
        raw = raw_scores(_scorer(profile, r.name), r.scores, pod, passed, ctx)
        raws.append(list(raw) if raw is not None else [None] * len(passed))
    finals = extender_scores(scored, len(passed))
    for i, info in enumerate(passed):
        node = ex.nodes[info.node.name]
        if node.total is not None:  # a repeated candidate: already scored
            continue
        node.scores = [{"plugin": r.name, "raw": raw[i], "normalized": r.scores[i],
                        "weight": r.weight, "weighted": r.scores[i] * r.weight}
                       for r, raw in zip(scored, raws, strict=True)]
        node.total = sum(s["weighted"] for s in node.scores)
        node.extender_score = finals[i]
    return ex


def explain(objects: Iterable[Mapping[str, Any]], pod: Mapping[str, Any],
            policy: ExtenderPolicy | Mapping[str, Any] | str | Path | None = None,
            nodes: Sequence[str] | None = None) -> Explanation:
    """`evaluate`'s inputs, explained (see `explain_nodes`). Raises `PolicyError` and
    `EvaluationError` as `evaluate` does, but not for a scorer's Error, which it reports."""
    profile, state, view, infos = evaluation_inputs(objects, pod, policy, nodes)
    return explain_nodes(profile, view, infos, state)


# ---- raw scores --------------------------------------------------------------------------------

def _scorer(profile: Profile, name: str) -> ScorePlugin:
    return next(plugin for plugin, _ in profile.scorers if plugin.name == name)


def raw_scores(plugin: ScorePlugin, normalized: list[int], pod: PodView, nodes: Sequence[NodeInfo],
               ctx: ClusterContext) -> list[int] | None:
    """The plugin's Score before NormalizeScore (`plugin.raw_scores`, on a cycle state of its
    own), or None when it cannot be shown: when it fails or skips, or when normalising it does
    not give `normalized` (logged)."""
    state = CycleState()
    try:
        raw = plugin.raw_scores(state, pod, nodes, ctx)
        if raw is None:
            log.warning("raw scores of %s: the plugin skipped; not shown", plugin.name)
            return None
        shown = list(raw)  # `normalize` may work in place
        if plugin.normalize(raw, state) != normalized:
            log.warning("raw scores of %s do not normalise to its scores; not shown",
                        plugin.name)
            return None
    except Exception:
        log.exception("computing the raw scores of %s failed", plugin.name)
        return None
    return shown
