"""`SelectVictimsOnNode`: the fewest, least important pods whose eviction lets the pod fit.

Every pod the preemptor may evict is removed from a copy of the node; if the pod then fits,
they are offered back one by one — first those whose eviction would violate a PDB, then the
others, each group most important first — and whatever cannot come back is a victim.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from extender.engine.framework import Code, Status
from extender.engine.preemption.ordering import by_importance
from extender.engine.preemption.pdb import PdbIndex, pdb_index
from extender.engine.runner import FilterPass
from extender.model.disruption import PdbView
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

NO_VICTIMS = "No preemption victims found for incoming pod"

VictimPredicate = Callable[[PodView], bool]
#: A PostFilter plugin's status for a node without a pod the preemptor may evict.
NoVictims = Callable[[NodeInfo, PodView], Status]


def no_preemption_victims(node: NodeInfo, pod: PodView) -> Status:
    """DefaultPreemption's status for a node without a pod the preemptor may evict."""
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_VICTIMS,))


@dataclass(frozen=True, slots=True)
class Victims:
    """The pods to evict on one node, most important first, and how many overdraw a PDB."""

    pods: tuple[PodView, ...]
    num_pdb_violations: int


class VictimGuard(Protocol):
    """A PostFilter plugin's own rules inside `SelectVictimsOnNode` (CapacityScheduling's
    quotas), read from the node's copy of the cycle state."""

    def no_victims(self, node: NodeInfo, pod: PodView) -> Status:
        """The status when the node has no pod the preemptor may evict."""

    def after_removal(self, filters: FilterPass, pod: PodView) -> Status | None:
        """With every candidate evicted and the pod fitting: a status if it still may not run."""

    def keep_evicted(self, filters: FilterPass, pod: PodView) -> bool:
        """With a candidate offered back (and the pod still fitting): whether it must go anyway."""

    def still_evictable(self, filters: FilterPass, pod: PodView, other: PodView) -> bool:
        """Whether `other`, a pod the rule lets `pod` evict, is still a candidate with the pods
        before it (least important first) gone: a rule on state those removals change."""


def remove_in_turn(filters: FilterPass, work: NodeInfo, pods: Iterable[PodView], now: float,
                   evictable: VictimPredicate) -> list[PodView]:
    """Of `pods`, least important first, those `evictable` lets go, each removed from `work`
    and `filters` before the next is asked: upstream's walk in `SelectVictimsOnNode`, where a
    plugin's rule reads state the removals change (CapacityScheduling: is the pod's quota
    still over its min?)."""
    removed = []
    for other in reversed(by_importance(pods, now)):
        if evictable(other):
            removed.append(other)
            work.remove_pod(other)
            filters.remove_pod(other, work)
    return removed


def lower_priority(preemptor: PodView) -> VictimPredicate:
    """DefaultPreemption's rule: any pod of lower priority may be evicted."""
    priority = preemptor.priority
    return lambda pod: pod.priority < priority


def nominated_ahead(preemptor: PodView, nominated: Sequence[PodView]) -> list[PodView]:
    """The nominated pods whose reservation the preemptor must respect: priority ≥ its own."""
    return [p for p in nominated if p.priority >= preemptor.priority and p.uid != preemptor.uid]


def _fits(filters: FilterPass, node_info: NodeInfo, ahead: Sequence[PodView]) -> Status | None:
    if ahead:
        # Pass 1: as if the nominated pods were already there, so their room stays reserved
        # (cross-node plugins count them too, on their own copy of the cycle state).
        reserved = node_info.clone()
        reserved_filters = filters.clone()
        for pod in ahead:
            reserved.add_pod(pod)
            reserved_filters.add_pod(pod, reserved)
        status = reserved_filters.node_fits(reserved)
        if status is not None:
            return status
    # Pass 2 (or the only pass): on the node as it is, since a nominated pod may never come.
    return filters.node_fits(node_info)


def fits_with_nominated(filters: FilterPass, pod: PodView, node_info: NodeInfo,
                        nominated: Sequence[PodView]) -> Status | None:
    """`RunFilterPluginsWithNominatedPods`: the first failing status, or None when `pod` fits
    both with the node's higher-or-equal-priority nominated pods added and without them."""
    return _fits(filters, node_info, nominated_ahead(pod, nominated))


def select_victims_on_node(
    filters: FilterPass,
    pod: PodView,
    node_info: NodeInfo,
    pdbs: Sequence[PdbView] | PdbIndex,
    nominated: Sequence[PodView],
    now: float,
    *,
    can_preempt: VictimPredicate | None = None,
    pinned: Collection[str] = (),
    guard: VictimGuard | None = None,
    no_victims: NoVictims = no_preemption_victims,
) -> Victims | Status:
    """The victims on `node_info` for `pod`, or the Status saying why the node cannot help.

    `filters` are the policy's prepared filters for `pod` (this node works on a copy of their
    cycle state, as each dry-run node does upstream); `pdbs` the cluster's PDBs (a
    `PdbIndex` when called for many nodes); `nominated` the pods nominated to this node;
    `can_preempt` which pods may be evicted (default: lower priority). `pinned` names pods
    that are victims whatever happens (the scheduler's own proposal, when the extender only
    adds to it); they are not offered back. `guard` adds a PostFilter plugin's own rules;
    `no_victims` words the status of a node without a pod to evict (the plugin's).
    `node_info` is left untouched.
    """
    can_preempt = can_preempt or lower_priority(pod)
    pinned = frozenset(pinned)
    if guard is None:
        potential = [p for p in node_info.pods.values() if can_preempt(p)]
        if not potential:
            return no_victims(node_info, pod)
        work = node_info.clone()
        filters = filters.clone()
        for victim in potential:
            work.remove_pod(victim)
            filters.remove_pod(victim, work)
    else:
        work = node_info.clone()
        filters = filters.clone()
        potential = remove_in_turn(
            filters, work, node_info.pods.values(), now,
            lambda other: other.uid in pinned or (
                can_preempt(other) and guard.still_evictable(filters, pod, other)))
        if not potential:
            return guard.no_victims(node_info, pod)
    ahead = nominated_ahead(pod, nominated)
    status = _fits(filters, work, ahead)
    if status is not None:
        return status
    if guard is not None:
        status = guard.after_removal(filters, pod)
        if status is not None:
            return status
    potential = by_importance(potential, now)
    violating, non_violating = pdb_index(pdbs).split(potential)
    violating_uids = {p.uid for p in violating}
    victims: list[PodView] = []
    for candidate in (*violating, *non_violating):
        if candidate.uid in pinned:
            victims.append(candidate)
            continue
        work.add_pod(candidate)
        filters.add_pod(candidate, work)
        if _fits(filters, work, ahead) is not None or (
                guard is not None and guard.keep_evicted(filters, pod)):
            work.remove_pod(candidate)
            filters.remove_pod(candidate, work)
            victims.append(candidate)
    # Both groups were walked most important first; merging them needs one more sort.
    victims = by_importance(victims, now)
    violations = sum(1 for v in victims if v.uid in violating_uids)
    return Victims(tuple(victims), violations)
