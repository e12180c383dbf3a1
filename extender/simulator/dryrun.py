"""DefaultPreemption's dry runs for the simulation: those that cannot find a candidate
answered without running them, the others run here with victims over sums.

DefaultPreemption's dry run (`engine.preemption.evaluator.preempt`) looks at the potential
nodes from a random offset and stops once it has enough candidates. When it finds none it has
looked at every potential node, so its answer — Unschedulable, the histogram of every potential
node's status, the nomination cleared — does not depend on the offset, only on each node's
status; the random offset is still drawn. A node's status there depends on the node, the pods
nominated to it and the preemptor's spec, as long as the preemptor's filters are node-local
(`filtermemo.node_local`) and DefaultPreemption picks victims (any pod of lower priority; no
clock, no quota guard, no PodDisruptionBudget in a non-candidate status). So:

- a node where nothing runs below the preemptor's priority has "No preemption victims found
  for incoming pod" (`select_victims_on_node`'s first answer) without looking at its pods;
- a node that did not change since the pod's last dry run that found no candidate (or one of
  a pod of the same content: `podmemo`) has the status it had then (`changes.NodeChanges`),
  and is a potential node again;
- any other node is judged as the dry run judges it, and as soon as one is a candidate the
  whole dry run runs (the random offset decides which candidates it keeps).

Pods that fail in a full cluster retry on every pod deletion; this keeps those retries from
repeating a dry run over every node each time.

The whole dry run is `preempt`'s, run here: the same potential nodes, offset, window of
`numCandidates` and stopping rule (kube-scheduler's `DryRunPreemption`: from the offset until
enough candidates, at least one respecting PDBs), `pick_one_node_for_preemption` on the
candidates. Each node's victims come from sums where the filters allow it (`victimsums`: in a
full cluster a hundred candidate nodes per dry run, each of which the engine would clone and
filter pod by pod), else from the engine's `select_victims_on_node`; nodes whose answer is
already known in this cycle, or unchanged since a dry run that judged them, are not judged
again. The result is the engine's, field by field (`verify` runs the engine's as well, from
the same random state, and compares).
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from extender.engine.framework import ClusterContext, Code, Profile, Status
from extender.engine.preemption.evaluator import (
    ABSENT,
    NOT_HELPFUL,
    ExtenderStep,
    PreemptionResult,
    fit_error_message,
    nodes_where_preemption_might_help,
)
from extender.engine.preemption.pdb import PdbIndex
from extender.engine.preemption.pick import pick_one_node_for_preemption
from extender.engine.preemption.plugins import DefaultPreemption
from extender.engine.preemption.victims import (
    VictimPredicate,
    Victims,
    select_victims_on_node,
)
from extender.engine.runner import FilterPass
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.simulator.changes import NodeChanges
from extender.simulator.podmemo import PodMemo
from extender.simulator.victimsums import Plans, VictimSums

#: A node's answer in a dry run: its victims, or why it cannot help.
Answer = Victims | Status
#: The dry run's status for every node it did not examine (`preempt`'s `absent`).
NOT_HELPFUL_STATUS = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NOT_HELPFUL,))


def _same(found: Mapping[str, Status | None], known: Mapping[str, Status],
          names: list[str]) -> bool:
    """Whether `found` has `known`'s statuses on `names` (mostly the same objects)."""
    get = known.get
    for name in names:
        status = found[name]
        before = get(name)
        if status is not before and status != before:
            return False
    return True


class DryRunMemo:
    """DefaultPreemption's PostFilter for the simulation: dry runs that cannot find a
    candidate skipped, the others run with victims over sums. `verify`: run the engine's as
    well each time, and raise if the results differ."""

    __slots__ = ("changes", "verify", "_memo", "_floors", "_plans", "_pdbs")

    def __init__(self, changes: NodeChanges, *, verify: bool = False) -> None:
        self.changes = changes
        self.verify = verify
        #: The last answer without a candidate (its `node_statuses` name every potential
        #: node), by pod and by shape (`podmemo`).
        self._memo: PodMemo[PreemptionResult] = PodMemo()
        #: node -> lowest priority of its pods, while the node has not changed.
        self._floors: dict[str, float] = {}
        changes.watch(self._floors)
        #: Each node's victims in the order they are offered back (`victimsums.Plan`).
        self._plans: Plans = {}
        changes.watch(self._plans)
        #: The PDB index of the cluster's PDBs, while they are the same objects.
        self._pdbs: tuple[tuple[object, ...], PdbIndex] | None = None

    def post_filter(self, profile: Profile, pod: PodView, statuses: Mapping[str, Status],
                    ctx: ClusterContext, now: float, rng: random.Random, *,
                    filters: FilterPass | None, nominated: bool,
                    call_extenders: ExtenderStep | None = None) -> PreemptionResult:
        """The profile's PostFilter (`plugin.post_filter`). `filters`: the cycle's prepared
        filters when each reads one node (`filtermemo.node_local`), else None; `nominated`:
        the pod is nominated to a node (`podmemo`)."""
        plugin = profile.post_filter
        assert plugin is not None
        # Only DefaultPreemption itself: its subclasses read the clock or quotas to pick
        # victims; and without extenders, whose preempt verb may change the candidates.
        ours = type(plugin) is DefaultPreemption and filters is not None \
            and call_extenders is None
        if ours:
            assert isinstance(plugin, DefaultPreemption) and filters is not None
            state = rng.getstate() if self.verify else None
            result = self._preempt(plugin, filters, pod, statuses, ctx, now, rng, nominated)
            if result is not None:
                if state is not None:
                    self._check(result, rng, state, profile, pod, statuses, ctx, now)
                return result
        result = plugin.post_filter(profile, pod, statuses, ctx, now, rng,
                                    call_extenders=call_extenders)
        self._keep(ours, pod, nominated, result)
        return result

    def forget(self, uid: str) -> None:
        self._memo.forget(uid)

    def _keep(self, ours: bool, pod: PodView, nominated: bool,
              result: PreemptionResult) -> None:
        if ours and result.clear_nomination and result.status.code == Code.UNSCHEDULABLE:
            # Only the dry run that found no candidate clears the nomination.
            self._memo.put(pod, nominated, self.changes.stamp, result)
        else:
            self._memo.forget(pod.uid)

    def _preempt(self, plugin: DefaultPreemption, filters: FilterPass, pod: PodView,
                 statuses: Mapping[str, Status], ctx: ClusterContext, now: float,
                 rng: random.Random, nominated: bool) -> PreemptionResult | None:
        """`preempt`'s answer; None when the engine must answer (it does so without a dry run,
        or the plugin has a victim guard)."""
        can_preempt = plugin.can_preempt(pod, ctx, now)
        nominated_node = pod.nominated_node_name
        nodes = ctx.nodes
        eligible, _ = plugin.pod_eligible_to_preempt_others(
            pod, statuses.get(nominated_node) if nominated_node else None,
            nodes.get(nominated_node) if nominated_node else None, can_preempt, ctx)
        if not eligible or not nodes or plugin.victim_guard is not None:
            return None  # the engine answers the first two without a dry run
        sums = VictimSums.for_pass(filters, pod, can_preempt, verify=self.verify,
                                   plans=self._plans)
        entry = self._memo.get(pod, nominated)
        changed = self.changes.since(entry.stamp) if entry is not None else None
        last = entry.value if entry is not None and changed is not None else None
        # The potential nodes (Unschedulable in this cycle's pass; the others cannot help) and
        # their statuses where still known; those to judge again are `todo`.
        found: dict[str, Status | None]
        if last is not None:
            assert changed is not None
            known = last.node_statuses
            found, todo = dict(known), []
            for name in changed:
                if statuses.get(name, ABSENT).code == Code.UNSCHEDULABLE and name in nodes:
                    found[name] = None
                    todo.append(name)
                else:
                    found.pop(name, None)
        else:
            known = {}
            todo = nodes_where_preemption_might_help(nodes, statuses)
            found = dict.fromkeys(todo)
        # `preempt` prepares the filters again; with node-local checks and no PreFilter
        # keeping state of its own (Coscheduling's, whose profiles do not come here), those
        # are the cycle's own.
        pdbs: PdbIndex | None = None
        for name in todo:
            if self._floor(name, ctx) >= pod.priority:
                found[name] = plugin.no_victims(nodes[name], pod)
                continue
            pdbs = pdbs or self._pdb_index(ctx)
            answer = self._select(plugin, filters, sums, pod, nodes[name], pdbs, ctx, now,
                                  can_preempt)
            if isinstance(answer, Victims) or answer.code == Code.ERROR:
                # A candidate (or an error, whose message depends on the search order):
                # the whole dry run, from its random offset, with the statuses known.
                answers: dict[str, Answer] = {
                    node: status for node, status in found.items() if status is not None}
                answers[name] = answer
                result = self._dry_run(plugin, filters, sums, pod, statuses, ctx, now, rng,
                                       can_preempt, pdbs, answers)
                self._keep(True, pod, nominated, result)
                return result
            found[name] = answer
        if found:
            plugin.offset_and_num_candidates(len(found), rng)  # the offset it draws
        if last is not None and len(found) == len(known) and _same(found, known, todo):
            result = last  # the same statuses: the same answer
        else:
            judged: Mapping[str, Status] = found  # type: ignore[assignment]  # all judged
            message = fit_error_message(len(nodes), judged, NOT_HELPFUL_STATUS)
            result = PreemptionResult(
                Status(Code.UNSCHEDULABLE, (plugin.message_prefix + message,), plugin.name),
                clear_nomination=True, node_statuses=judged)
        self._memo.put(pod, nominated, self.changes.stamp, result)
        return result

    def _select(self, plugin: DefaultPreemption, filters: FilterPass, sums: VictimSums | None,
                pod: PodView, node_info: NodeInfo, pdbs: PdbIndex, ctx: ClusterContext,
                now: float, can_preempt: VictimPredicate) -> Answer:
        """`select_victims_on_node` for one node: over sums where they decide it."""
        nominated = ctx.nominated_pods(node_info.name)
        if sums is not None:
            answer = sums.select(node_info, pdbs, nominated, now, plugin.no_victims)
            if answer is not None:
                return answer
        return select_victims_on_node(filters, pod, node_info, pdbs, nominated, now,
                                      can_preempt=can_preempt, no_victims=plugin.no_victims)

    def _dry_run(self, plugin: DefaultPreemption, filters: FilterPass, sums: VictimSums | None,
                 pod: PodView, statuses: Mapping[str, Status], ctx: ClusterContext,
                 now: float, rng: random.Random, can_preempt: VictimPredicate, pdbs: PdbIndex,
                 answers: Mapping[str, Answer]) -> PreemptionResult:
        """`preempt` from its potential nodes on, for a pod eligible to preempt whose dry run
        finds a candidate or an error (`dry_run_preemption` then `pick_one_node_for_preemption`;
        `answers`: nodes whose answer is known, judged in this cycle or unchanged since a
        dry run that judged them). No extenders here."""
        nodes = ctx.nodes
        potential = nodes_where_preemption_might_help(nodes, statuses)
        offset, wanted = plugin.offset_and_num_candidates(len(potential), rng)
        clean: dict[str, Victims] = {}
        violating: dict[str, Victims] = {}
        node_statuses: dict[str, Status] = {}
        errors: list[str] = []
        n = len(potential)
        priority = pod.priority
        for i in range(n):
            name = potential[(offset + i) % n]
            answer = answers.get(name)
            if answer is None:
                answer = plugin.no_victims(nodes[name], pod) if self._floor(name, ctx) >= \
                    priority else self._select(plugin, filters, sums, pod, nodes[name], pdbs,
                                               ctx, now, can_preempt)
            if isinstance(answer, Victims) and answer.pods:
                group = violating if answer.num_pdb_violations else clean
                if len(group) < wanted:  # upstream's candidateList holds `wanted`
                    group[name] = answer
                if clean and len(clean) + len(violating) >= wanted:
                    break
                continue
            if isinstance(answer, Victims):  # fits without evicting anything: an error upstream
                answer = Status(Code.ERROR,
                                (f'expected at least one victim pod on node "{name}"',))
            if answer.code == Code.ERROR:
                errors.append(answer.message)
            node_statuses[name] = answer
        prefix, plugin_name = plugin.message_prefix, plugin.name
        candidates = {**clean, **violating}
        if not candidates:
            if errors:
                message = errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"
                return PreemptionResult(Status(Code.ERROR, (prefix + message,), plugin_name),
                                        node_statuses=node_statuses)
            message = fit_error_message(len(nodes), node_statuses, NOT_HELPFUL_STATUS)
            return PreemptionResult(Status(Code.UNSCHEDULABLE, (prefix + message,), plugin_name),
                                    clear_nomination=True, node_statuses=node_statuses)
        best = pick_one_node_for_preemption(candidates, now)
        assert best is not None
        return PreemptionResult(Status(Code.SUCCESS, (), plugin_name), best, candidates[best],
                                candidates=candidates, node_statuses=node_statuses)

    def _pdb_index(self, ctx: ClusterContext) -> PdbIndex:
        """An index of the cluster's PDBs: the last one while they are the same objects (a
        PDB that changes is a new object; its index answers for the PDBs it was built from)."""
        pdbs = tuple(ctx.pdb_list())
        kept = self._pdbs
        if kept is None or len(kept[0]) != len(pdbs) or any(
                a is not b for a, b in zip(kept[0], pdbs, strict=True)):
            kept = self._pdbs = (pdbs, PdbIndex(pdbs))
        return kept[1]

    def _floor(self, name: str, ctx: ClusterContext) -> float:
        """The lowest priority among the node's pods (infinite without pods)."""
        floor = self._floors.get(name)
        if floor is None:
            pods = ctx.nodes[name].pods
            floor = self._floors[name] = min((p.priority for p in pods.values()),
                                             default=float("inf"))
        return floor

    def _check(self, result: PreemptionResult, rng: random.Random, state: object,
               profile: Profile, pod: PodView, statuses: Mapping[str, Status],
               ctx: ClusterContext, now: float) -> None:
        """`verify`: the engine's own answer, from the same random state, must be the same."""
        plugin = profile.post_filter
        assert plugin is not None
        after = rng.getstate()
        replay = random.Random()
        replay.setstate(state)  # type: ignore[arg-type]
        full = plugin.post_filter(profile, pod, statuses, ctx, now, replay)
        ours = (result.status, result.clear_nomination, result.node_name, result.victims,
                dict(result.candidates), dict(result.node_statuses))
        theirs = (full.status, full.clear_nomination, full.node_name, full.victims,
                  dict(full.candidates), dict(full.node_statuses))
        if ours != theirs or replay.getstate() != after:
            raise AssertionError(f"dry run of {pod.key} differs from the engine's: "
                                 f"{ours[:3]} vs {theirs[:3]}")
