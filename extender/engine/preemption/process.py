"""The extender's `preempt` verb: vet, and complete if needed, the scheduler's victims per node.

kube-scheduler sends the candidate nodes of its own dry run, each with the minimal victims its
filters found. For each node the policy's filters (with the node's nominated pods, as in the
dry run) decide:

* the pod fits once the proposed victims are gone → the proposal is kept as it is. It is
  already the scheduler's minimal set for its own filters, which may include plugins this
  policy does not model (inter-pod affinity, topology spread, volumes); trimming it with fewer
  filters could hand back a set the scheduler's own filters then reject;
* a failure preemption cannot fix (taints, affinity, unschedulable, node name, a request above
  the node's allocatable) → the node is dropped;
* otherwise more victims are chosen among the node's other preemptable pods, exactly as the dry
  run chooses (PDB-violating pods offered back first, most important first), the proposed ones
  staying victims; if even evicting all of them is not enough, the node is dropped.

Proposed UIDs that are not on the node, or that the preemptor may not evict (not lower
priority; exempt under PreemptionToleration), are ignored and reported. `NumPDBViolations` is
recomputed from the state's PDBs the way the dry run counts it.

Most nodes never reach `_vet_node`: `batch.py` decides the cases it can prove equal with
arithmetic on the state's columns, all proposed nodes at once, and hands the others to
`fastpath.py`, which does the same node by node (no clone, no filter run) and hands every
other node to `_vet_node`; `fast_path=False` sends them all here.

A policy whose PostFilter is CrossNodePreemption (simulator only) is vetted here as
DefaultPreemption: kube-scheduler runs its own PostFilter and proposes victims one node at a
time, so victims on other nodes cannot be asked for or replied with; CrossNodePreemption's
victim rule (any pod of lower priority) is DefaultPreemption's, so the verb applies exactly the
rules a DefaultPreemption policy would.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import partial

from extender.engine.abilities import find_abilities
from extender.engine.abilities import of as abilities_of
from extender.engine.framework import ClusterContext, Code, PostFilterPlugin, Profile, Status
from extender.engine.nodetable import NodeTable
from extender.engine.preemption.batch import BatchOutcome, Finish, vet_batch
from extender.engine.preemption.crossnode import CrossNodePreemption
from extender.engine.preemption.evaluator import NOT_ELIGIBLE_NEVER, dry_run_filters
from extender.engine.preemption.fastpath import FastPath, SlowPath
from extender.engine.preemption.memo import PreemptionMemo
from extender.engine.preemption.ordering import by_importance
from extender.engine.preemption.outcome import (
    FITS_AS_IS,
    NODE_NOT_FOUND,
    DropReason,
    PreemptionOutcome,
    Verdict,
    describe,
)
from extender.engine.preemption.pdb import PdbIndex, SelectorMatches, count_pdb_violations
from extender.engine.preemption.plugins import DefaultPreemption
from extender.engine.preemption.victims import (
    NoVictims,
    VictimGuard,
    VictimPredicate,
    Victims,
    fits_with_nominated,
    no_preemption_victims,
    remove_in_turn,
    select_victims_on_node,
)
from extender.engine.runner import FilterPass, prepare_filters
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

__all__ = ["FITS_AS_IS", "BatchOutcome", "DropReason", "PreemptionOutcome", "grouped_proposals",
           "process_preemption", "process_preemption_batch"]

#: The PostFilter the verb runs when the profile has none, or has CrossNodePreemption (whose
#: cross-node victims this verb does not take), with its abilities found once.
_DEFAULT_PREEMPTION = DefaultPreemption()
_DEFAULT_ABILITIES = find_abilities(_DEFAULT_PREEMPTION)


def process_preemption(profile: Profile, pod: PodView, proposals: Mapping[str, Iterable[str]],
                       state: ClusterContext, now: float, *,
                       selector_matches: SelectorMatches | None = None,
                       memo: PreemptionMemo | None = None,
                       fast_path: bool = True, columns: bool = True) -> PreemptionOutcome:
    """Vet `proposals` (node name -> proposed victim UIDs) for the preemptor `pod`.

    Every node in the outcome has at least one victim, all of them pods the state knows on
    that node, most important first. A policy without a PostFilter plugin is treated as
    DefaultPreemption: the scheduler decided to preempt; the extender only vets. So is a
    CrossNodePreemption policy (see the module's docstring).
    `selector_matches`, kept by the caller, carries PDB selector answers across requests;
    `memo`, also the caller's, the fast path's PDB exposures, node walks and pod columns.
    `fast_path` False sends every node through the straightforward path (`_vet_node`), the
    reference the fast paths must agree with; `columns` False skips the vectorised one
    (`batch.py`), leaving `fastpath.py`'s loop.
    """
    if fast_path and columns:
        lists = [list(uids) for uids in proposals.values()]
        found = process_preemption_batch(
            profile, pod, list(proposals), [uid for uids in lists for uid in uids],
            [len(uids) for uids in lists], state, now, selector_matches=selector_matches,
            memo=memo, proposals=dict(zip(proposals, lists, strict=True)),
            finish=BatchOutcome.outcome)
        if isinstance(found, BatchOutcome):
            assert isinstance(found.result, PreemptionOutcome)
            return found.result
        return found
    return _process(profile, pod, proposals, state, now, selector_matches, memo, fast_path)


def process_preemption_batch(profile: Profile, pod: PodView, names: Sequence[str],
                             uids: Sequence[str], lengths: Sequence[int],
                             state: ClusterContext, now: float, *,
                             selector_matches: SelectorMatches | None = None,
                             memo: PreemptionMemo | None = None,
                             proposals: Mapping[str, Iterable[str]] | None = None,
                             finish: Finish | None = None,
                             ) -> BatchOutcome | PreemptionOutcome:
    """`process_preemption` with the proposals flat, as the verb decodes them: node
    `names[i]` (distinct) proposes `uids[sum(lengths[:i]):sum(lengths[:i + 1])]`. The answer
    comes as columns (`BatchOutcome`, `batch.py`) when the state keeps a `NodeTable` and the
    request qualifies for the fast path, else as `process_preemption` gives it. `finish`
    runs on a `BatchOutcome` while its columns are held (`vet_batch`): what reads the pods
    its ordinals name belongs there."""
    table = getattr(state, "table", None)
    request: _Request | None = None
    if pod.preemption_policy != "Never" and isinstance(table, NodeTable):
        memo = memo if memo is not None else PreemptionMemo(selector_matches)
        request = _Request(profile, pod, state, now)
        epoch = memo.epoch(state.pdb_list())
        fast = FastPath.for_request(request.filters, pod, request.abilities, memo, epoch, now)
        if fast is not None:
            found = vet_batch(fast, names, uids, lengths, state, memo.columns(table),
                              request.slow(epoch.index), finish)
            if found is not None:
                return found
    if proposals is None:
        proposals = grouped_proposals(names, uids, lengths)
    return _process(profile, pod, proposals, state, now, selector_matches, memo, True, request)


def grouped_proposals(names: Sequence[str], uids: Sequence[str],
                      lengths: Sequence[int]) -> dict[str, list[str]]:
    """Flat proposals (as `process_preemption_batch` takes them) as node name -> UIDs."""
    found: dict[str, list[str]] = {}
    start = 0
    for name, length in zip(names, lengths, strict=True):
        found[name] = list(uids[start:start + length])
        start += length
    return found


class _Request:
    """What every node of one request shares: the PostFilter plugin and its abilities, the
    dry run's filters, the victim rule, guard and no-victims wording."""

    __slots__ = ("pod", "now", "plugin", "abilities", "filters", "can_preempt", "guard",
                 "no_victims")

    def __init__(self, profile: Profile, pod: PodView, state: ClusterContext, now: float) -> None:
        plugin: PostFilterPlugin = _DEFAULT_PREEMPTION
        abilities = _DEFAULT_ABILITIES
        # No cross-node victims through this verb: CrossNodePreemption is DefaultPreemption here.
        if profile.post_filter is not None and not isinstance(profile.post_filter,
                                                               CrossNodePreemption):
            plugin = profile.post_filter
            abilities = abilities_of(profile).post_filter or _DEFAULT_ABILITIES
        self.pod = pod
        self.now = now
        self.plugin = plugin
        self.abilities = abilities
        # SelectVictimsOnNode runs the Filter plugins only: a PreFilter rejection preemption
        # may cure (CapacityScheduling's quota) must not fail every node.
        self.filters = dry_run_filters(prepare_filters(profile, pod, state), plugin, pod, state)
        self.can_preempt = plugin.can_preempt(pod, state, self.now)
        self.guard: VictimGuard | None = abilities.victim_guard
        self.no_victims: NoVictims = plugin.no_victims

    def slow(self, pdbs: PdbIndex) -> SlowPath:
        """The straightforward path for one node of this request."""
        return partial(_vet_node, self.filters, self.pod, pdbs=pdbs, can_preempt=self.can_preempt,
                       now=self.now, guard=self.guard, no_victims=self.no_victims)


def _process(profile: Profile, pod: PodView, proposals: Mapping[str, Iterable[str]],
             state: ClusterContext, now: float, selector_matches: SelectorMatches | None,
             memo: PreemptionMemo | None, fast_path: bool,
             request: _Request | None = None) -> PreemptionOutcome:
    """The per-node paths (`request`: the caller's, when it prepared one already)."""
    outcome = PreemptionOutcome()
    if pod.preemption_policy == "Never":  # the scheduler should not have asked
        for node in proposals:
            outcome.drop(node, DropReason.PREEMPTOR_NOT_ELIGIBLE, NOT_ELIGIBLE_NEVER)
        return outcome
    if request is None:
        request = _Request(profile, pod, state, now)
    filters, can_preempt, guard = request.filters, request.can_preempt, request.guard
    if fast_path:
        memo = memo if memo is not None else PreemptionMemo(selector_matches)
        epoch = memo.epoch(state.pdb_list())
        fast = FastPath.for_request(filters, pod, request.abilities, memo, epoch, now)
        if fast is not None:
            fast.run(proposals, state, outcome, request.slow(epoch.index))
            return outcome
        pdbs = epoch.index
    else:
        pdbs = PdbIndex(state.pdb_list(), selector_matches)

    for node, uids in proposals.items():
        info = state.nodes.get(node)
        if info is None:
            outcome.drop(node, DropReason.NODE_NOT_FOUND, NODE_NOT_FOUND)
            continue
        proposed: list[PodView] = []
        ignored: list[str] = []
        for uid in dict.fromkeys(uids):
            victim = info.pods.get(uid)
            if victim is not None and can_preempt(victim):
                proposed.append(victim)
            else:
                ignored.append(uid)
        if ignored:
            outcome.ignore(node, ignored, pod.key)
        outcome.record(node, _vet_node(filters, pod, info, proposed, state.nominated_pods(node),
                                       pdbs, can_preempt, now, guard))
    return outcome


def _vet_node(filters: FilterPass, pod: PodView, info: NodeInfo,
              proposed: Sequence[PodView], nominated: Sequence[PodView], pdbs: PdbIndex,
              can_preempt: VictimPredicate, now: float,
              guard: VictimGuard | None = None,
              no_victims: NoVictims = no_preemption_victims) -> Verdict:
    """The victims to reply with on one node, or why the node is dropped."""
    work = info.clone()
    work_filters = filters.clone()
    if guard is not None:
        # The plugin's rule, asked as upstream asks it (a borrowing namespace keeps its min).
        proposed = remove_in_turn(work_filters, work, proposed, now,
                                  lambda victim: guard.still_evictable(work_filters, pod, victim))
    else:
        for victim in proposed:
            work.remove_pod(victim)
            work_filters.remove_pod(victim, work)
    status = fits_with_nominated(work_filters, pod, work, nominated)
    if status is None and guard is not None and proposed:
        # The quotas, not only the filters, must allow the pod once the victims are gone.
        status = guard.after_removal(work_filters, pod)
        if status is None and guard.keep_evicted(work_filters, pod):
            status = Status(Code.UNSCHEDULABLE, ("quota still exceeded with these victims",))
    if status is None:
        if not proposed:
            return DropReason.NO_VICTIMS_NEEDED, FITS_AS_IS
        victims = by_importance(proposed, now)
        return Victims(tuple(victims), _pdb_violations(victims, info, pdbs, can_preempt, now))
    if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        return DropReason.UNRESOLVABLE, describe(status)
    result = select_victims_on_node(filters, pod, info, pdbs, nominated, now,
                                    can_preempt=can_preempt, pinned={v.uid for v in proposed},
                                    guard=guard, no_victims=no_victims)
    if isinstance(result, Status):
        return (DropReason.NOT_ENOUGH_VICTIMS,
                f"evicting every preemptable pod is not enough: {describe(result)}")
    if not result.pods:  # cannot happen with monotone filters; never reply with no victim
        return DropReason.NO_VICTIMS_NEEDED, FITS_AS_IS
    return result


def _pdb_violations(victims: Sequence[PodView], info: NodeInfo, pdbs: PdbIndex,
                    can_preempt: VictimPredicate, now: float) -> int:
    """`count_pdb_violations` over the node's preemptable pods, looking at as few as it can:
    a victim no PDB guards never violates one, and a pod no PDB guards never spends a budget."""
    if not any(pdbs.guarding(v) for v in victims):
        return 0
    guarded = [p for p in info.pods.values() if can_preempt(p) and pdbs.guarding(p)]
    return count_pdb_violations(victims, by_importance(guarded, now), pdbs)

