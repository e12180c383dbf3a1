"""Preemption dry runs that cannot find a candidate, answered without running them.

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
  engine's own `preempt` runs (the random offset decides which candidates it keeps).

Pods that fail in a full cluster retry on every pod deletion; this keeps those retries from
repeating a dry run over every node each time. The result is the engine's, field by field.
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
from extender.engine.preemption.plugins import DefaultPreemption
from extender.engine.preemption.victims import (
    NO_VICTIMS,
    VictimPredicate,
    Victims,
    select_victims_on_node,
)
from extender.engine.runner import FilterPass
from extender.model.pod import PodView
from extender.simulator.changes import NodeChanges
from extender.simulator.podmemo import PodMemo

#: `select_victims_on_node`'s answer for a node with no pod the preemptor may evict.
NO_VICTIMS_STATUS = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_VICTIMS,))
#: The dry run's status for every node it did not examine (`preempt`'s `absent`).
NOT_HELPFUL_STATUS = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NOT_HELPFUL,))


class DryRunMemo:
    """DefaultPreemption's PostFilter for the simulation, skipping dry runs that cannot find a
    candidate. `verify`: run the engine's as well each time one is skipped, and raise if the
    results differ."""

    __slots__ = ("changes", "verify", "_memo", "_floors")

    def __init__(self, changes: NodeChanges, *, verify: bool = False) -> None:
        self.changes = changes
        self.verify = verify
        #: The last answer without a candidate (its `node_statuses` name every potential
        #: node), by pod and by shape (`podmemo`).
        self._memo: PodMemo[PreemptionResult] = PodMemo()
        #: node -> (stamp, lowest priority of its pods), while the node has not changed.
        self._floors: dict[str, tuple[int, float]] = {}

    def post_filter(self, profile: Profile, pod: PodView, statuses: Mapping[str, Status],
                    ctx: ClusterContext, now: float, rng: random.Random, *,
                    filters: FilterPass | None, nominated: bool,
                    call_extenders: ExtenderStep | None = None) -> PreemptionResult:
        """The profile's PostFilter (`plugin.post_filter`). `filters`: the cycle's prepared
        filters when each reads one node (`filtermemo.node_local`), else None; `nominated`:
        the pod is nominated to a node (`podmemo`)."""
        plugin = profile.post_filter
        assert plugin is not None
        # Only DefaultPreemption itself: its subclasses read the clock or quotas to pick victims.
        ours = type(plugin) is DefaultPreemption and filters is not None
        if ours:
            assert isinstance(plugin, DefaultPreemption) and filters is not None
            state = rng.getstate() if self.verify else None
            result = self._without_candidates(plugin, filters, pod, statuses, ctx, now, rng,
                                              nominated)
            if result is not None:
                if state is not None:
                    self._check(result, rng, state, profile, pod, statuses, ctx, now)
                return result
        result = plugin.post_filter(profile, pod, statuses, ctx, now, rng,
                                    call_extenders=call_extenders)
        if ours and result.clear_nomination and result.status.code == Code.UNSCHEDULABLE:
            # Only the dry run that found no candidate clears the nomination.
            self._memo.put(pod, nominated, self.changes.stamp, result)
        else:
            self._memo.forget(pod.uid)
        return result

    def forget(self, uid: str) -> None:
        self._memo.forget(uid)

    def _without_candidates(self, plugin: DefaultPreemption, filters: FilterPass,
                            pod: PodView, statuses: Mapping[str, Status], ctx: ClusterContext,
                            now: float, rng: random.Random,
                            nominated: bool) -> PreemptionResult | None:
        """`preempt`'s answer when its dry run would find no candidate; None otherwise (or
        when that cannot be known without the dry run)."""
        can_preempt = plugin.can_preempt(pod, ctx, now)
        nominated_node = pod.nominated_node_name
        nodes = ctx.nodes
        eligible, _ = plugin.pod_eligible_to_preempt_others(
            pod, statuses.get(nominated_node) if nominated_node else None,
            nodes.get(nominated_node) if nominated_node else None, can_preempt, ctx)
        if not eligible or not nodes:
            return None  # the engine answers these without a dry run
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
        if found:
            # `preempt` prepares the filters again; with node-local checks and no PreFilter
            # keeping state of its own (Coscheduling's, whose profiles do not come here),
            # those are the cycle's own.
            if plugin.victim_guard is not None:
                return None
            if not self._judge(filters, pod, found, todo, ctx, now, can_preempt):
                return None
            plugin.offset_and_num_candidates(len(found), rng)  # the offset it draws
        if last is not None and len(found) == len(known) and all(
                found[name] == known.get(name) for name in todo):
            result = last  # the same statuses: the same answer
        else:
            judged: Mapping[str, Status] = found  # type: ignore[assignment]  # all judged
            message = fit_error_message(len(nodes), judged, NOT_HELPFUL_STATUS)
            result = PreemptionResult(
                Status(Code.UNSCHEDULABLE, (plugin.message_prefix + message,), plugin.name),
                clear_nomination=True, node_statuses=judged)
        self._memo.put(pod, nominated, self.changes.stamp, result)
        return result

    def _judge(self, filters: FilterPass, pod: PodView, found: dict[str, Status | None],
               todo: list[str], ctx: ClusterContext, now: float,
               can_preempt: VictimPredicate) -> bool:
        """Fill in the dry-run status of the `todo` nodes; False when one is a candidate (or
        an error, whose message depends on the search order)."""
        priority, nodes = pod.priority, ctx.nodes
        pdbs: PdbIndex | None = None
        for name in todo:
            if self._floor(name, ctx) >= priority:
                found[name] = NO_VICTIMS_STATUS
                continue
            pdbs = pdbs or PdbIndex(ctx.pdb_list())
            result = select_victims_on_node(filters, pod, nodes[name], pdbs,
                                            ctx.nominated_pods(name), now,
                                            can_preempt=can_preempt)
            if isinstance(result, Victims) or result.code == Code.ERROR:
                return False
            found[name] = result
        return True

    def _floor(self, name: str, ctx: ClusterContext) -> float:
        """The lowest priority among the node's pods (infinite without pods)."""
        floor = self._floors.get(name)
        if floor is None or self.changes.last_change(name) > floor[0]:
            pods = ctx.nodes[name].pods
            floor = (self.changes.stamp,
                     min((p.priority for p in pods.values()), default=float("inf")))
            self._floors[name] = floor
        return floor[1]

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
        ours = (result.status, result.clear_nomination, dict(result.node_statuses))
        theirs = (full.status, full.clear_nomination, dict(full.node_statuses))
        if ours != theirs or replay.getstate() != after:
            raise AssertionError(f"skipped dry run of {pod.key} differs from the engine's: "
                                 f"{ours[0]} vs {theirs[0]}")
