"""Run a profile's filters and scorers over candidate nodes.

Filters run in the policy's order, each over the survivors of the previous one, so a node's
status is the first failing plugin's (kube-scheduler's `RunFilterPlugins`). Scorers are
independent: each maps and normalises over the same candidates, then the weighted results are
combined either as kube-scheduler's totals or on the extender wire's 0..10 scale.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from extender.engine.abilities import PluginAbilities, filters_many
from extender.engine.abilities import of as abilities_of
from extender.engine.framework import (
    MAX_NODE_SCORE,
    ClusterContext,
    Code,
    CrossNodeFilterPlugin,
    CycleState,
    EngineError,
    FilterPlugin,
    NodeCheck,
    PluginError,
    Profile,
    Status,
    is_cross_node,
)
from extender.model.node import Signature, signature
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

log = logging.getLogger(__name__)


#: What a node-name restriction's label ends with (the plugin's name before it).
PRE_FILTER_SUFFIX = "/PreFilter"


@dataclass(slots=True)
class FilterResult:
    passed: list[NodeInfo]
    statuses: dict[str, Status] = field(default_factory=dict)
    #: A PreFilter status that rejected the pod on every node (also in `statuses`).
    rejection: Status | None = None


@dataclass(slots=True)
class _Prepared:
    label: str  # "<plugin>" or "<plugin>/PreFilter"
    node_only: bool
    check: NodeCheck
    stateful: bool = False  # a FilterState kept in the cycle state under `label`


class FilterPass:
    """One pod's filters after PreFilter, for one scheduling cycle.

    `checks` are the per-node checks in the order they run (PreFilter node-name restrictions
    first, as kube-scheduler applies a PreFilterResult before any Filter); `rejection` is a
    PreFilter status that rejects the pod everywhere. `clone`, `add_pod` and `remove_pod` give
    preemption and the nominated-pods pass their own copy of the cycle state, as
    `SelectVictimsOnNode` and `RunFilterPluginsWithNominatedPods` do. `pre_filter_ran` are
    the filter plugins whose PreFilter ran, in order (kube-scheduler runs none after an
    UnschedulableAndUnresolvable); `pre_filtered` their names."""

    __slots__ = ("pod", "state", "entries", "rejection", "pre_filter_ran", "_extensions")

    def __init__(self, pod: PodView, state: CycleState, entries: list[_Prepared],
                 rejection: Status | None = None,
                 pre_filter_ran: tuple[FilterPlugin | CrossNodeFilterPlugin, ...] = ()) -> None:
        self.pod = pod
        self.state = state
        self.entries = entries
        self.rejection = rejection
        self.pre_filter_ran = pre_filter_ran
        self._extensions = [e for e in entries if e.stateful]

    @property
    def pre_filtered(self) -> frozenset[str]:
        """The names of the filter plugins whose PreFilter ran."""
        return frozenset(plugin.name for plugin in self.pre_filter_ran)

    @property
    def checks(self) -> list[NodeCheck]:
        if self.rejection is not None:
            rejection = self.rejection
            return [lambda node: rejection]
        return [entry.check for entry in self.entries]

    @property
    def has_extensions(self) -> bool:
        return bool(self._extensions)

    def node_fits(self, node: NodeInfo) -> Status | None:
        return node_fits(self.checks, node)

    def clone(self) -> FilterPass:
        """A copy whose cross-node plugin data can change without touching this one."""
        if not self._extensions:
            return self
        state = self.state.clone()
        entries = [_Prepared(e.label, e.node_only, state.read(e.label), True) if e.stateful else e
                   for e in self.entries]
        return FilterPass(self.pod, state, entries, self.rejection, self.pre_filter_ran)

    def add_pod(self, pod: PodView, node: NodeInfo) -> None:
        """`RunPreFilterExtensionAddPod` (call it after adding `pod` to `node`)."""
        for entry in self._extensions:
            entry.check.add_pod(pod, node)  # type: ignore[attr-defined]

    def remove_pod(self, pod: PodView, node: NodeInfo) -> None:
        """`RunPreFilterExtensionRemovePod` (call it after removing `pod` from `node`)."""
        for entry in self._extensions:
            entry.check.remove_pod(pod, node)  # type: ignore[attr-defined]


def _context(ctx: ClusterContext | None, plugin: object) -> ClusterContext:
    if ctx is None:
        name = getattr(plugin, "name", type(plugin).__name__)
        raise EngineError(f"filter plugin {name} reads the cluster: pass its ClusterState")
    return ctx


def prepare_filters(profile: Profile, pod: PodView, ctx: ClusterContext | None = None,
                    state: CycleState | None = None) -> FilterPass:
    """PreFilter for every filter plugin, in the profile's order, as kube-scheduler's
    `RunPreFilterPlugins`: a plugin answering UnschedulableAndUnresolvable ends it (the
    plugins after it do not run, and keep no state); after an Unschedulable the others still
    run, and the last Unschedulable is the pod's. Node-name restrictions (a PreFilterResult)
    are judged first, as kube-scheduler applies them before any Filter; then the per-node
    checks in the profile's order, skipping plugins that pass every node for this pod.
    `ctx` is the cluster cross-node plugins read (None: only node-local plugins may run)."""
    state = state if state is not None else CycleState()
    restrictions: list[_Prepared] = []
    entries: list[_Prepared] = []
    rejection: Status | None = None
    ran = filters = profile.filters
    memoised = profile.memoised  # `profile.node_only`, inline
    for plugin, abilities in zip(filters, abilities_of(profile).filters, strict=False):  # equal lengths
        name = plugin.name
        try:
            restriction, rejected, check, stateful = pre_filter_one(plugin, abilities, pod, state,
                                                                    ctx)
        except EngineError:
            raise
        except Exception as exc:  # a plugin bug must not take the request down with a trace
            raise EngineError(f"filter plugin {name} failed in PreFilter: {exc}") from exc
        if restriction is not None:
            restrictions.append(_Prepared(name + PRE_FILTER_SUFFIX, name in memoised, restriction))
        if rejected is not None:
            rejection = rejected
            if rejected.code != Code.UNSCHEDULABLE:
                ran = filters[:filters.index(plugin) + 1]  # the plugins after it do not run
                break
        if check is None:
            continue
        if stateful:
            state.write(name, check)
            entries.append(_Prepared(name, False, check, True))
        else:
            # A memoised verdict's key names the plugin and what configures it.
            entries.append(_Prepared(abilities.memo_label, name in memoised, check))
    return FilterPass(pod, state, restrictions + entries, rejection, ran)


#: One filter plugin's PreFilter for a pod (`pre_filter_one`): (its node-name restriction, a
#: PreFilterResult judged before any Filter; a status rejecting the pod on every node; its
#: Filter for the pod, None: Skip; whether that check is a cross-node `FilterState`, which
#: the cycle state keeps under the plugin's name). A plain tuple: it is made per plugin and
#: request.
PreFilterStep = tuple[NodeCheck | None, Status | None, NodeCheck | None, bool]


def pre_filter_one(plugin: FilterPlugin | CrossNodeFilterPlugin, abilities: PluginAbilities,
                   pod: PodView, state: CycleState, ctx: ClusterContext | None) -> PreFilterStep:
    """One filter plugin's PreFilter: its node-name restriction (`restrict`) when it has one,
    then its `pre_filter` (cross-node; `ctx` None: an empty cluster) or `prepare`. A
    restriction rejecting the pod other than Unschedulable is the plugin's answer: the rest
    does not run. The cycle state is the caller's to write (`prepare_filters`), and so is
    what a plugin raises (`prepare_filters`: an `EngineError`; `explain`: an Error status)."""
    restriction: NodeCheck | None = None
    rejection: Status | None = None
    restricts = abilities.restricts
    if restricts is not None:
        found = restricts.restrict(pod)
        if isinstance(found, Status):
            rejection = found
            if found.code != Code.UNSCHEDULABLE:
                return None, rejection, None, False
        else:
            restriction = found
    if is_cross_node(plugin):
        result = plugin.pre_filter(state, pod, _context(ctx, plugin))
        if result is None:
            return restriction, rejection, None, False
        if isinstance(result, Status):
            return restriction, result, None, False
        return restriction, rejection, result, True
    return restriction, rejection, plugin.prepare(pod), False


def run_checks(checks: Sequence[NodeCheck] | FilterPass, nodes: Sequence[NodeInfo],
               statuses: dict[str, Status]) -> list[NodeInfo]:
    """Apply prepared checks in order; record the first failure per node in `statuses`."""
    if isinstance(checks, FilterPass):
        checks = checks.checks
    survivors = list(nodes)
    for check in checks:
        if filters_many(check):
            survivors = check.filter_many(survivors, statuses)
        else:
            kept: list[NodeInfo] = []
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


def run_filters(profile: Profile, pod: PodView, nodes: Sequence[NodeInfo],
                ctx: ClusterContext | None = None,
                prepared: FilterPass | None = None) -> FilterResult:
    """Filter `nodes` for `pod`, recording the first failing plugin's status per node."""
    result = FilterResult([], {})
    try:
        if prepared is None:
            prepared = prepare_filters(profile, pod, ctx)
        if prepared.rejection is not None:
            rejection = result.rejection = prepared.rejection
            result.statuses = {node.node.name: rejection for node in nodes}
            return result
        entries = prepared.entries
        count = _node_only_count(entries)
        checks = [entry.check for entry in entries]
        if count and pod.placement_key:
            # The key names exactly the checks memoised: which plugins skip depends on the pod.
            labels = tuple(entry.label for entry in entries[:count])
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
            # The memo holds `object`s; under `key`, this function's verdicts (Status | None).
            statuses[view.name] = verdict  # type: ignore[assignment]
    return kept


_MISSING = object()


def node_fits(checks: Sequence[NodeCheck] | FilterPass, node: NodeInfo) -> Status | None:
    """The first failing status of prepared checks on one node, or None when it fits."""
    if isinstance(checks, FilterPass):
        checks = checks.checks
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
               ctx: ClusterContext, state: CycleState | None = None,
               errors: list[PluginError] | None = None) -> list[PluginScores]:
    """Each enabled scorer's normalised 0..100 scores. A scorer that skips or fails is left out
    (logged), so one faulty scorer never fails the request; a plugin's Error status (a pod it
    cannot parse) also goes to `errors` when given."""
    results = []
    state = state if state is not None else CycleState()
    for plugin, weight in profile.scorers:
        scores = guarded_scores(plugin, pod, len(nodes), errors,
                                lambda: plugin.score(state, pod, nodes, ctx))  # noqa: B023
        if scores is not None:
            results.append(PluginScores(plugin.name, weight, scores))  # type: ignore[arg-type]
    return results


def guarded_scores(plugin: Any, pod: PodView, count: int, errors: list[PluginError] | None,
                   compute: Callable[[], Sequence[int] | None]) -> Sequence[int] | None:
    """`compute()`, a scorer's scores for `count` nodes, or None when it skips, fails (logged;
    a PluginError also goes to `errors`) or answers out of shape or range, as kube-scheduler's
    framework rejects out-of-range normalised scores."""
    try:
        scores = compute()
    except PluginError as exc:
        log.warning("score plugin %s: %s (pod %s/%s)", plugin.name, exc.message,
                    pod.namespace, pod.name)
        if errors is not None:
            errors.append(exc)
        return None
    except Exception:
        log.exception("score plugin %s failed for pod %s/%s; it contributes nothing",
                      plugin.name, pod.namespace, pod.name)
        return None
    if scores is None:
        return None
    if len(scores) != count:
        log.error("score plugin %s returned %d scores for %d nodes; ignored",
                  plugin.name, len(scores), count)
        return None
    if count:
        array_min = getattr(scores, "min", None)  # a numpy array's, at C speed
        low, high = ((array_min(), scores.max()) if array_min is not None  # type: ignore[attr-defined]
                     else (min(scores), max(scores)))
        if low < 0 or high > MAX_NODE_SCORE:
            log.error("score plugin %s returned a score outside [0, %d]; ignored",
                      plugin.name, MAX_NODE_SCORE)
            return None
    return scores


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
