"""The preempt verb's fast path: vet a proposed node with sums instead of a cloned node.

`process.py`'s straightforward path clones each node, removes the proposed victims one by one
and runs every filter. For a policy and preemptor where the filters that look at the node's
pods reduce to NodeResourcesFit on cpu, memory, ephemeral storage and the pod count, the same
answer follows from arithmetic:

* the leading node-only filters' verdict does not change when pods leave, so it is read from
  (or written to) the node view's memo under the key the filter verb uses;
* the pod fits once the proposal is gone when the node's free amounts plus the victims'
  requests cover the preemptor's, and one more pod fits the pod count;
* a proposal that does not fit is completed along the node's `NodePlan` (`plans.reprieve`);
* `NumPDBViolations` is 0 when no victim is guarded, counts a victim whose budget has no
  disruption left, and otherwise is read off the plan's violating positions.

For a state that keeps a `NodeTable`, `batch.py` takes the same decisions for all proposed
nodes at once on columns and hands this class (`run`) only the nodes it cannot take; the loop
here then answers them (or hands them on) exactly as it answers a whole request otherwise.

A request qualifies (`FastPath.for_request`) only when nothing else can change an answer: no
PostFilter guard, DefaultPreemption's victim rule, no cross-node filter state (topology spread
and inter-pod affinity inactive for the pod), no host ports or other per-node filter, no
extended resource requested. A node is decided here only when nothing reserves room on it (no
nominated pod of priority at least the preemptor's) and the case is one of those above; every
other node (a resolvable node-only failure, a node where even evicting every lower-priority
pod is not enough, a start time at or after `now`, a negative request) goes through the
straightforward path, which stays the reference (`tests/engine/test_preemption_fastpath.py`
holds the two to the same outcome).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from extender.engine.abilities import PluginAbilities
from extender.engine.filters.fit_kernel import FitRequest, amounts_of
from extender.engine.filters.node_resources_fit import NAME as _FIT
from extender.engine.filters.node_resources_fit import FitCheck
from extender.engine.framework import ClusterContext, Code, NodeCheck, Status
from extender.engine.preemption.epoch import DEPENDS, OVERDRAWS, PdbEpoch
from extender.engine.preemption.memo import PreemptionMemo
from extender.engine.preemption.outcome import (
    FITS_AS_IS,
    NODE_NOT_FOUND,
    DropReason,
    PreemptionOutcome,
    Verdict,
    describe,
)
from extender.engine.preemption.plans import NodePlan, reprieve
from extender.engine.preemption.victims import Victims, nominated_ahead
from extender.engine.runner import FilterPass, node_fits
from extender.model.node import Signature, signature
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

#: The straightforward path for one node: (info, proposed victims, nominated pods) -> verdict.
SlowPath = Callable[[NodeInfo, list[PodView], Sequence[PodView]], Verdict]

_MISSING = object()
_UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def fit_after_node_only(filters: FilterPass, pod: PodView) -> tuple[int, FitCheck | None] | None:
    """(how many leading checks are node-only, NodeResourcesFit's check or None) when the pass
    is exactly those checks followed by at most NodeResourcesFit's own stateless check, and
    the pod requests no extended resource; None otherwise. Such a pass's verdict on a node is
    the node-only verdict (its view's), then Fit's on the node's free amounts and pod count:
    `fit_kernel`'s arithmetic (the check's `request`), which the preempt verb's fast path and
    the simulator's dry runs rely on."""
    if filters.rejection is not None or filters.has_extensions or pod.requests.scalar:
        return None
    entries = filters.entries
    count = 0
    while count < len(entries) and entries[count].node_only:
        count += 1
    rest = entries[count:]
    if not rest:
        return count, None
    last = rest[0]
    check = last.check
    if len(rest) > 1 or last.label != _FIT or last.stateful or not isinstance(check, FitCheck):
        return None
    return count, check


class FastPath:
    """One request's fast path (see the module's docstring)."""

    __slots__ = ("pod", "priority", "now", "memo", "epoch", "prefix", "key", "fit", "request",
                 "decided", "worded")

    def __init__(self, pod: PodView, now: float, memo: PreemptionMemo, epoch: PdbEpoch,
                 prefix: list[NodeCheck], key: Signature | None, fit: FitCheck | None) -> None:
        self.pod = pod
        self.priority = pod.priority
        self.now = now
        self.memo = memo
        self.epoch = epoch
        self.prefix = prefix
        self.key = key
        #: NodeResourcesFit's check; None: there is none, every node fits.
        self.fit = fit
        #: The preemptor's request under Fit's rule (its `needs` are also what the columns
        #: must hold exactly, with or without the check).
        self.request = FitRequest.of(pod) if fit is None else fit.request
        #: Nodes decided here (tests check the path is taken at all).
        self.decided = 0
        #: NodeResourcesFit's wording per failing pattern (`FitRequest.short_bits`).
        self.worded: dict[int, str] = memo.words(fit) if fit is not None else {}

    @classmethod
    def for_request(cls, filters: FilterPass, pod: PodView, plugin: PluginAbilities,
                    memo: PreemptionMemo, epoch: PdbEpoch, now: float) -> FastPath | None:
        """The fast path for this request, or None when it cannot prove its answers
        (`plugin`: the PostFilter plugin's abilities)."""
        if plugin.victim_guard is not None:
            return None
        # The victim rule must be "lower priority", which plans assume.
        if not plugin.default_victim_rule:
            return None
        shape = fit_after_node_only(filters, pod)
        if shape is None:
            return None
        count, fit = shape
        entries = filters.entries
        prefix = [entry.check for entry in entries[:count]]
        key = None
        if count and pod.placement_key:
            # The filter verb's key (`runner.run_filters`): both paths share the verdicts.
            key = signature("filters", tuple(entry.label for entry in entries[:count]),
                            pod.placement_key)
        return cls(pod, now, memo, epoch, prefix, key, fit)

    def run(self, proposals: Mapping[str, Iterable[str]], state: ClusterContext,
            outcome: PreemptionOutcome, slow: SlowPath) -> None:
        """`process_preemption`'s loop over the proposed nodes, with the victim rule known to
        be "lower priority"; `slow` answers the nodes the fast path cannot.

        One loop with the common cases written out (a node too small or tainted for the pod;
        a proposal that fits), since it runs per node: a method call or a generator per node
        costs as much as the arithmetic."""
        nodes = state.nodes
        # Most of the time no pod is nominated anywhere: then no node needs asking.
        nominated_pods = state.nominated_pods if state.nominated_all() else None
        pod = self.pod
        priority = self.priority
        key = self.key
        fits = None if self.fit is None else self.request.fits
        epoch = self.epoch
        by_labels = epoch.by_labels
        exposure_of = epoch.exposure
        kept = outcome.victims
        drop = outcome.drop
        decided = 0
        for node, uids in proposals.items():
            info = nodes.get(node)
            if info is None:
                drop(node, DropReason.NODE_NOT_FOUND, NODE_NOT_FOUND)
                continue
            pods = info.pods
            proposed: list[PodView] = []
            ignored: list[str] | None = None
            cpu, memory, ephemeral = info.free_cpu, info.free_memory, info.free_ephemeral
            # Duplicates count once; most proposals are short lists without any.
            unique: Iterable[str] = uids
            if uids.__class__ is not list or len(uids) > 2 or (
                    len(uids) == 2 and uids[0] == uids[1]):
                unique = dict.fromkeys(uids)
            for uid in unique:
                victim = pods.get(uid)
                if victim is not None and victim.priority < priority:
                    proposed.append(victim)
                    requests = victim.requests
                    cpu += requests.milli_cpu
                    memory += requests.memory
                    ephemeral += requests.ephemeral_storage
                elif ignored is None:
                    ignored = [uid]
                else:
                    ignored.append(uid)
            if ignored:
                outcome.ignore(node, ignored, pod.key)
            nominated = nominated_pods(node) if nominated_pods is not None else ()
            verdict: Verdict | None = None
            if nominated and nominated_ahead(pod, nominated):
                pass  # room reserved on the node: two filter passes, the straightforward way
            else:
                found = _MISSING if key is None else info.node.memo.get(key, _MISSING)
                if found is not None and found.__class__ is not Status:
                    found = self._node_only(info, found)
                if found is not None:
                    if found.code == _UNRESOLVABLE:  # type: ignore[attr-defined]
                        verdict = DropReason.UNRESOLVABLE, describe(found)  # type: ignore[arg-type]
                elif fits is not None and not fits(info.free_pods + len(proposed), cpu,
                                                    memory, ephemeral):
                    free = (cpu, memory, ephemeral)
                    if self.request.unresolvable(free, amounts_of(info.node.allocatable)):
                        verdict = self.unresolvable_drop(info, proposed, free)
                    else:
                        verdict = self._complete(info, proposed)
                elif not proposed:
                    verdict = DropReason.NO_VICTIMS_NEEDED, FITS_AS_IS
                else:
                    # NumPDBViolations (`_pdb_violations`): the node's plan only when a
                    # victim's budgets had room, since then it depends on which of the
                    # node's pods spend them first.
                    count = 0
                    undecided = False
                    for victim in proposed:
                        entry = None
                        if by_labels is not None:
                            table = by_labels.get(victim.namespace)
                            if table is not None:
                                entry = table.get(id(victim.labels))
                        exposure = exposure_of(victim) if entry is None else entry[1]
                        if exposure == OVERDRAWS:
                            count += 1
                        elif exposure == DEPENDS:
                            undecided = True
                    if undecided:
                        count = self._plan_violations(info, proposed)
                    if count >= 0:
                        if len(proposed) > 1:
                            proposed = _by_importance(proposed, self.now)
                        verdict = Victims(tuple(proposed), count)
            if verdict is None:
                verdict = slow(info, proposed, nominated)
            else:
                decided += 1
            if verdict.__class__ is Victims:
                kept[node] = verdict  # type: ignore[assignment]
            else:
                drop(node, *verdict)  # type: ignore[misc]
        self.decided += decided

    def plan_of(self, info: NodeInfo) -> NodePlan:
        """The node's walk for this preemptor, from the memo (`PreemptionMemo.plan`)."""
        return self.memo.plan(info, self.priority, self.epoch)

    # ---- the rarer cases ------------------------------------------------------------------
    def _node_only(self, info: NodeInfo, found: object) -> Status | None:
        """The leading node-only filters' verdict, not found in the memo (`found` is what was
        there instead: nothing, or an entry of another shape, which is left alone)."""
        status = node_fits(self.prefix, info)
        if found is _MISSING and self.key is not None:
            info.node.remember(self.key, status)
        return status

    def unresolvable_drop(self, info: NodeInfo, proposed: Sequence[PodView],
                           free: tuple[int, int, int]) -> Verdict | None:
        # The reply does not carry the reasons, but the outcome does. Only the filter words
        # them: it runs on a copy of the node once per request for each pattern of failures
        # (its reasons follow from which checks fail, in its order), which is then reused.
        pattern = self.request.short_bits(info.free_pods + len(proposed), free)
        detail = self.worded.get(pattern)
        if detail is None:
            work = info.clone()
            for victim in proposed:
                work.remove_pod(victim)
            assert self.fit is not None  # only called when there is a fit check
            status = self.fit(work)
            if status is None or status.code != _UNRESOLVABLE:
                return None
            detail = self.worded[pattern] = describe(status)
        return DropReason.UNRESOLVABLE, detail

    def _complete(self, info: NodeInfo, proposed: Sequence[PodView]) -> Verdict | None:
        """`select_victims_on_node` with the proposal pinned, along the node's plan."""
        plan = self._plan(info)
        if plan is None or not plan.monotone or not plan.size:
            return None
        size = plan.size
        request = self.request
        slots = request.spare_slots(info.free_pods + size)
        if slots < 0:
            return None  # not enough even with every victim: the filters word the failure
        free = (info.free_cpu, info.free_memory, info.free_ephemeral)
        table = plan.table
        # Free with every potential victim gone: the plan's totals are its last running ones.
        rooms = request.rooms({d: free[d] + table[d * size + size - 1] for d in request.dims})
        if any(room < 0 for _, room in rooms):
            return None
        position = plan.position
        pinned = [position[victim] for victim in proposed]
        pinned.sort()
        chosen = reprieve(table, size, rooms, slots, pinned)
        if not chosen:
            return DropReason.NO_VICTIMS_NEEDED, FITS_AS_IS
        chosen.sort(key=plan.rank.__getitem__)
        walk = plan.walk
        flags = plan.flags
        count = 0
        for i in chosen:
            count += flags[i]
        return Victims(tuple([walk[i] for i in chosen]), count)

    def _plan_violations(self, info: NodeInfo, victims: Sequence[PodView]) -> int:
        """How many `victims` the node's plan marks violating; -1 without a usable plan."""
        plan = self._plan(info)
        if plan is None:
            return -1
        position, flags = plan.position, plan.flags
        count = 0
        for victim in victims:
            count += flags[position[victim]]
        return count

    def _plan(self, info: NodeInfo) -> NodePlan | None:
        plan = self.memo.plan(info, self.priority, self.epoch)
        return plan if plan.usable_at(self.now) else None


def _by_importance(pods: Sequence[PodView], now: float) -> list[PodView]:
    """`by_importance` (the same key, stably), cheaper for the few victims of a proposal."""
    if len(pods) < 2:
        return list(pods)
    if len(pods) == 2:
        a, b = pods
        if a.priority != b.priority:
            return [a, b] if a.priority > b.priority else [b, a]
        start_a = now if a.start_time is None else a.start_time
        start_b = now if b.start_time is None else b.start_time
        return [b, a] if start_b < start_a else [a, b]
    return sorted(pods, key=lambda p: (-p.priority, now if p.start_time is None else p.start_time))
