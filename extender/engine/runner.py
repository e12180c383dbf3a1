"""Run a profile's filters and scorers over candidate nodes.

Filters run in the policy's order, each over the survivors of the previous one, so a node's
status is the first failing plugin's (kube-scheduler's `RunFilterPlugins`). Scorers are
independent: each maps and normalises over the same candidates, then the weighted results are
combined either as kube-scheduler's totals or on the extender wire's 0..10 scale.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from extender.engine.framework import (
    MAX_NODE_SCORE,
    ClusterContext,
    EngineError,
    NodeCheck,
    Status,
)
from extender.engine.profile import Profile
from extender.model.node import Signature, signature
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

log = logging.getLogger(__name__)


@dataclass(slots=True)
class FilterResult:
    passed: list[NodeInfo]
    statuses: dict[str, Status] = field(default_factory=dict)


@dataclass(slots=True)
class _Prepared:
    label: str  # "<plugin>" or "<plugin>/PreFilter"
    node_only: bool
    check: NodeCheck


def _prepared(profile: Profile, pod: PodView) -> list[_Prepared]:
    """PreFilter restrictions first (they act before any Filter), then the filters in order."""
    prepared = []
    for phase in ("pre_filter", "prepare"):
        for plugin in profile.filters:
            method = getattr(plugin, phase, None)
            if method is None:
                continue
            try:
                check = method(pod)
            except Exception as exc:  # a plugin bug must not take the request down with a trace
                raise EngineError(f"filter plugin {plugin.name} failed to prepare: {exc}") from exc
            if check is not None:
                label = plugin.name if phase == "prepare" else f"{plugin.name}/PreFilter"
                prepared.append(_Prepared(label, getattr(plugin, "node_only", False), check))
    return prepared


def prepare_filters(profile: Profile, pod: PodView) -> list[NodeCheck]:
    """The pod's per-node checks, skipping plugins that pass every node for this pod."""
    return [entry.check for entry in _prepared(profile, pod)]


def run_checks(checks: Sequence[NodeCheck], nodes: Sequence[NodeInfo],
               statuses: dict[str, Status]) -> list[NodeInfo]:
    """Apply prepared checks in order; record the first failure per node in `statuses`."""
    survivors = list(nodes)
    for check in checks:
        many = getattr(check, "filter_many", None)
        if many is not None:
            survivors = many(survivors, statuses)
        else:
            kept = []
            append = kept.append
            for node in survivors:
                status = check(node)
                if status is None:
                    append(node)
                else:
                    statuses[node.node.name] = status
            survivors = kept
        if not survivors:
            break
    return survivors


def run_filters(profile: Profile, pod: PodView, nodes: Sequence[NodeInfo]) -> FilterResult:
    """Filter `nodes` for `pod`, recording the first failing plugin's status per node."""
    result = FilterResult([], {})
    try:
        prepared = _prepared(profile, pod)
        count = _node_only_count(prepared)
        checks = [entry.check for entry in prepared]
        if count and pod.placement_key:
            # The key names exactly the checks memoised: which plugins skip depends on the pod.
            labels = tuple(entry.label for entry in prepared[:count])
            key = signature("filters", labels, pod.placement_key)
            nodes = _memoised_checks(checks[:count], key, nodes, result.statuses)
            checks = checks[count:]
        result.passed = run_checks(checks, nodes, result.statuses)
    except EngineError:
        raise
    except Exception as exc:
        raise EngineError(f"filtering failed: {exc}") from exc
    return result


def _node_only_count(prepared: list[_Prepared]) -> int:
    """How many leading prepared checks depend only on the node view and the pod's
    `placement_key` (kube-scheduler's order puts those filters first)."""
    count = 0
    for entry in prepared:
        if not entry.node_only:
            break
        count += 1
    return count


def _memoised_checks(checks: Sequence[NodeCheck], key: Signature, nodes: Sequence[NodeInfo],
                     statuses: dict[str, Status]) -> list[NodeInfo]:
    missing = _MISSING
    kept = []
    for node in nodes:
        view = node.node
        verdict = view.memo.get(key, missing)
        if verdict is missing:
            verdict = view.remember(key, node_fits(checks, node))
        if verdict is None:
            kept.append(node)
        else:
            statuses[view.name] = verdict
    return kept


_MISSING = object()


def node_fits(checks: Sequence[NodeCheck], node: NodeInfo) -> Status | None:
    """The first failing status of prepared checks on one node, or None when it fits."""
    for check in checks:
        status = check(node)
        if status is not None:
            return status
    return None


@dataclass(slots=True)
class PluginScores:
    name: str
    weight: int
    scores: list[int]


def run_scores(profile: Profile, pod: PodView, nodes: Sequence[NodeInfo],
               ctx: ClusterContext) -> list[PluginScores]:
    """Each enabled scorer's normalised 0..100 scores. A scorer that skips or fails is left out
    (logged), so one faulty scorer never fails the request."""
    results = []
    for plugin, weight in profile.scorers:
        try:
            scores = plugin.score(pod, nodes, ctx)
        except Exception:
            log.exception("score plugin %s failed for pod %s/%s; it contributes nothing",
                          plugin.name, pod.namespace, pod.name)
            continue
        if scores is None:
            continue
        if len(scores) != len(nodes):
            log.error("score plugin %s returned %d scores for %d nodes; ignored",
                      plugin.name, len(scores), len(nodes))
            continue
        if scores and (min(scores) < 0 or max(scores) > MAX_NODE_SCORE):
            # kube-scheduler's framework rejects out-of-range normalised scores the same way.
            log.error("score plugin %s returned a score outside [0, %d]; ignored",
                      plugin.name, MAX_NODE_SCORE)
            continue
        results.append(PluginScores(plugin.name, weight, scores))
    return results


def score_totals(results: Sequence[PluginScores], count: int) -> list[int]:
    """kube-scheduler's total per node: Σ score × weight."""
    if not results:
        return [0] * count
    weighted = [r.scores if r.weight == 1 else [score * r.weight for score in r.scores]
                for r in results]
    # One tuple per node summed in C, rather than a new running-total list per scorer. The
    # lengths are equal (`run_scores` checks them), so zip need not check them again.
    return list(map(sum, zip(*weighted, strict=False)))


def extender_scores(results: Sequence[PluginScores], count: int) -> list[int]:
    """The wire's 0..10 scale: the weighted mean Σ wᵢ·sᵢ / Σ wᵢ of the contributing scorers,
    rounded half up to a tenth. All terms are non-negative, so floor division is Go's."""
    weight_sum = sum(r.weight for r in results)
    if weight_sum == 0:
        return [0] * count
    half, scale = 5 * weight_sum, 10 * weight_sum
    return [(total + half) // scale for total in score_totals(results, count)]
