"""`SelectVictimsOnNode` over sums, for a dry run whose filters reduce to NodeResourcesFit.

A preemption dry run that finds candidates examines about a hundred nodes (kube-scheduler's
`numCandidates`), and on each the engine's `select_victims_on_node` clones the node, removes
every pod of lower priority, and offers them back one by one, each time running every filter
on the copy (twice where nominated pods reserve room). When the filters the pod meets are the
leading node-only ones (whose verdict does not change when pods come and go: they read the
node's view) followed by NodeResourcesFit alone (no cross-node state, no host ports or other
check reading the pods, no extended resource requested), each of those runs is one comparison
of the pod's requests with the node's free amounts, so here they are kept as sums:

* the node-only verdict comes from the node view's memo, under the key the filter passes use;
* the node with every lower-priority pod gone has their requests added back to its free
  amounts (and room for as many more pods); with the nominated pods ahead of the pod, their
  requests are taken off again, as `RunFilterPluginsWithNominatedPods` adds them;
* the pod fits where NodeResourcesFit's rule on free amounts (`FitRequest.fits`: one more
  pod, each positive request within what is free) holds, on both;
* offering a pod back takes its requests off the free amounts, and gives them back when the
  pod no longer fits; the order (PDB-violating first, each group most important first), the
  victims' order and the PDB count are the engine's, computed by the engine's functions.

Which pods may go, their summed requests and the order they are offered back in (a `Plan`)
depend on the node, the preemptor's priority and the PDBs only (DefaultPreemption's rule:
lower priority), so the dry runs keep each node's plans until the node changes: in a full
cluster the same node is examined by dry run after dry run of the same priorities.

A node this cannot decide — a node-only or Fit failure, whose Status the engine words, or a
nominated pod that is already on the node — is left to `select_victims_on_node` (None).
`verify` holds every node decided here to the engine's answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from extender.engine.filters.fit_kernel import FitRequest
from extender.engine.framework import Status
from extender.engine.preemption.fastpath import fit_after_node_only
from extender.engine.preemption.ordering import by_importance
from extender.engine.preemption.pdb import PdbIndex
from extender.engine.preemption.victims import (
    NoVictims,
    VictimPredicate,
    Victims,
    no_preemption_victims,
    nominated_ahead,
    select_victims_on_node,
)
from extender.engine.runner import FilterPass, node_fits
from extender.model.node import Signature, signature
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

_MISSING = object()
#: Without NodeResourcesFit nothing is requested of a node's amounts, but the sums still
#: leave a node without a free pod slot to the engine (as they always have).
_NOTHING = FitRequest((0, 0, 0))


def fit_only(filters: FilterPass, pod: PodView) -> tuple[int, bool] | None:
    """(how many leading checks are node-only, whether NodeResourcesFit follows them) when
    the pass is exactly those (`fastpath.fit_after_node_only`); None otherwise."""
    shape = fit_after_node_only(filters, pod)
    return None if shape is None else (shape[0], shape[1] is not None)


def fit_only_key(filters: FilterPass, pod: PodView) -> tuple[object, ...] | None:
    """What a `fit_only` pass's verdict on a node reads of the pod: the checks, the pod's
    placement key (the node-only verdicts' memo key says so) and its requests; None when the
    pass is not `fit_only`."""
    shape = fit_only(filters, pod)
    if shape is None or (shape[0] and not pod.placement_key):
        return None
    requests = pod.requests
    return (tuple(entry.label for entry in filters.entries), pod.placement_key,
            requests.milli_cpu, requests.memory, requests.ephemeral_storage)


@dataclass(frozen=True, slots=True)
class Plan:
    """A node's pods a preemptor of some priority may evict: how many, their summed
    requests, and the order `SelectVictimsOnNode` offers them back in (the PDB-violating ones
    first, each group most important first)."""

    count: int
    cpu: int
    memory: int
    ephemeral: int
    violating: list[PodView]
    non_violating: list[PodView]
    violating_uids: frozenset[str]


#: node -> preemptor priority -> (the node's info, the PDB index, its `Plan` or None when no
#: pod may be evicted), kept while the node does not change (`NodeChanges.watch`).
Plans = dict[str, dict[int, tuple[NodeInfo, PdbIndex, Plan | None]]]


class VictimSums:
    """One dry run's `select_victims_on_node` over sums (see the module's docstring)."""

    __slots__ = ("filters", "pod", "can_preempt", "prefix", "key", "fit", "verify", "decided",
                 "plans")

    def __init__(self, filters: FilterPass, pod: PodView, can_preempt: VictimPredicate,
                 prefix: list, key: Signature | None, fit: FitRequest | None, verify: bool,
                 plans: Plans | None = None) -> None:
        self.filters = filters
        self.pod = pod
        self.can_preempt = can_preempt
        #: The nodes' plans across dry runs, when `can_preempt` is DefaultPreemption's rule
        #: (lower priority: the plan depends on the preemptor's priority only).
        self.plans = plans
        self.prefix = prefix  # the leading node-only checks
        self.key = key  # their memo key on the node view (None: not memoised)
        #: The pod's request under NodeResourcesFit's rule (its check's); None: no such check
        #: (the pod fits whatever runs beside it).
        self.fit = fit
        self.verify = verify
        self.decided = 0  # nodes answered here (the tests check the sums are used)

    @classmethod
    def for_pass(cls, filters: FilterPass, pod: PodView, can_preempt: VictimPredicate, *,
                 verify: bool = False, plans: Plans | None = None) -> VictimSums | None:
        """The sums for this dry run, or None when its filters are not node-only checks then
        NodeResourcesFit alone (or the pod requests an extended resource). `plans`: the
        nodes' plans kept across dry runs (only with the "lower priority" victim rule)."""
        shape = fit_after_node_only(filters, pod)
        if shape is None:
            return None
        count, check = shape
        entries = filters.entries
        key = None
        if count and pod.placement_key:
            # The filter passes' key (`runner.run_filters`): the verdicts are shared.
            key = signature("filters", tuple(entry.label for entry in entries[:count]),
                            pod.placement_key)
        return cls(filters, pod, can_preempt, [entry.check for entry in entries[:count]],
                   key, None if check is None else check.request, verify, plans)

    def _node_only(self, node_info: NodeInfo) -> Status | None:
        prefix = self.prefix
        if not prefix:
            return None
        key = self.key
        if key is None:
            return node_fits(prefix, node_info)
        view = node_info.node
        verdict = view.memo.get(key, _MISSING)
        if verdict is _MISSING:
            verdict = view.remember(key, node_fits(prefix, node_info))
        return verdict  # type: ignore[return-value]  # under `key`: Status | None

    def select(self, node_info: NodeInfo, pdbs: PdbIndex, nominated: Sequence[PodView],
               now: float, no_victims: NoVictims = no_preemption_victims,
               ) -> Victims | Status | None:
        """`select_victims_on_node(filters, pod, node_info, pdbs, nominated, now,
        can_preempt=…, no_victims=…)`, or None when the sums cannot decide this node."""
        plan = self._plan(node_info, pdbs, now)
        if plan is None:
            return no_victims(node_info, self.pod)
        result = self._select(node_info, plan, nominated, now)
        if result is not None:
            self.decided += 1
            if self.verify:
                engine = select_victims_on_node(self.filters, self.pod, node_info, pdbs,
                                                nominated, now, can_preempt=self.can_preempt)
                if engine != result:
                    raise AssertionError(
                        f"victims of {self.pod.key} on {node_info.name} over sums differ from "
                        f"the engine's: {result} vs {engine}")
        return result

    def _plan(self, node_info: NodeInfo, pdbs: PdbIndex, now: float) -> Plan | None:
        """The node's pods the pod may evict, in the order they are offered back; None when
        there is none. From `plans` while the node, the PDBs and the priority are the same."""
        plans, priority, name = self.plans, self.pod.priority, node_info.node.name
        if plans is not None:
            kept = plans.get(name)
            entry = kept.get(priority) if kept is not None else None
            if entry is not None and entry[0] is node_info and entry[1] is pdbs:
                return entry[2]
        can_preempt = self.can_preempt
        potential = [p for p in node_info.pods.values() if can_preempt(p)]
        plan = None
        if potential:
            cpu = memory = ephemeral = 0
            for p in potential:
                requests = p.requests
                cpu += requests.milli_cpu
                memory += requests.memory
                ephemeral += requests.ephemeral_storage
            violating, non_violating = pdbs.split(by_importance(potential, now))
            plan = Plan(len(potential), cpu, memory, ephemeral, violating, non_violating,
                        frozenset(p.uid for p in violating))
        # A pod that has not started counts as started `now`: its order is this moment's.
        if plans is not None and all(p.start_time is not None for p in potential):
            plans.setdefault(name, {})[priority] = (node_info, pdbs, plan)
        return plan

    def _select(self, node_info: NodeInfo, plan: Plan, nominated: Sequence[PodView],
                now: float) -> Victims | None:
        if self._node_only(node_info) is not None:
            return None
        pods = node_info.pods
        ahead = nominated_ahead(self.pod, nominated) if nominated else ()
        ahead_pods = ahead_cpu = ahead_memory = ahead_ephemeral = 0
        if ahead:
            uids = {p.uid for p in ahead}
            if len(uids) < len(ahead) or any(uid in pods for uid in uids):
                return None  # `add_pod` would replace a pod: counts the sums do not follow
            ahead_pods = len(ahead)
            for p in ahead:
                requests = p.requests
                ahead_cpu += requests.milli_cpu
                ahead_memory += requests.memory
                ahead_ephemeral += requests.ephemeral_storage
            if ahead_cpu < 0 or ahead_memory < 0 or ahead_ephemeral < 0:
                return None  # below: fitting with them implies fitting without them
        # Free with every lower-priority pod gone and the nominated pods ahead (if any) added.
        allocatable, requested = node_info.node.allocatable, node_info.requested
        free_pods = allocatable.allowed_pods - len(pods) + plan.count - ahead_pods
        free_cpu = allocatable.milli_cpu - requested.milli_cpu + plan.cpu - ahead_cpu
        free_memory = allocatable.memory - requested.memory + plan.memory - ahead_memory
        free_ephemeral = allocatable.ephemeral_storage - requested.ephemeral_storage \
            + plan.ephemeral - ahead_ephemeral
        fit = self.fit
        fits = (_NOTHING if fit is None else fit).fits
        # The pod must fit on the node with the nominated pods ahead added (when any), then
        # on the node as it is: `_fits`'s two passes.
        if not fits(free_pods, free_cpu, free_memory, free_ephemeral):
            return None  # even without every lower-priority pod: the engine words why
        if fit is None:  # every pod comes back: no victim (the dry run calls that an error)
            return Victims((), 0)
        victims: list[PodView] = []
        # A pod offered back stays when the pod still fits with it: both passes hold while
        # the pod fits beside the nominated pods ahead (their requests are not negative).
        violating = plan.violating
        for group in (violating, plan.non_violating):
            for candidate in group:
                requests = candidate.requests
                c = free_cpu - requests.milli_cpu
                m = free_memory - requests.memory
                e = free_ephemeral - requests.ephemeral_storage
                if fits(free_pods - 1, c, m, e):
                    free_pods -= 1
                    free_cpu, free_memory, free_ephemeral = c, m, e
                else:
                    victims.append(candidate)
        violations = 0
        if violating and victims:
            violating_uids = plan.violating_uids
            violations = sum(1 for v in victims if v.uid in violating_uids)
        if violating and len(victims) > 1:
            # Both groups were walked most important first: merge them as the engine does
            # (without violating pods the victims are in that order already).
            victims = by_importance(victims, now)
        return Victims(tuple(victims), violations)
