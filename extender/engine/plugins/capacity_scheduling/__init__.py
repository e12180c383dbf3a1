"""CapacityScheduling (scheduler-plugins): elastic quotas per namespace.

PreFilter rejects a pod whose namespace's ElasticQuota would go over its max, or that would
take the quotas' total use over the sum of their mins. As a PostFilter it preempts by quota
rather than by priority alone: a namespace over its min may only evict its own lower-priority
pods, one within its min may evict the pods of namespaces borrowing beyond theirs, at any
priority. `../shared/reference/plugins-next.md` §4.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from extender.engine.args import NoArgs
from extender.engine.framework import (
    ClusterContext,
    Code,
    CycleState,
    FilterState,
    Profile,
    Status,
    unschedulable,
)
from extender.engine.plugins.capacity_scheduling.quota import (
    QuotaSnapshot,
    quota_snapshot,
)
from extender.engine.plugins.capacity_scheduling.store import QuotaStore
from extender.engine.preemption.evaluator import ExtenderStep, PreemptionResult
from extender.engine.preemption.plugins import DefaultPreemption
from extender.engine.preemption.victims import VictimPredicate
from extender.engine.runner import FilterPass
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.model.resources import Resources

NAME = "CapacityScheduling"
#: The PostFilter's status when evicting every candidate still leaves a quota exceeded.
GLOBAL_QUOTA_EXCEEDED = "global quota max exceeded"


#: How the PreFilter's two refusals end (what a real run's log is searched for).
MAX_REFUSAL = " is more than Max"
MIN_REFUSAL = "because total ElasticQuota used is more than min"


def over_max_message(pod: PodView) -> str:
    return (f"Pod {pod.namespace}/{pod.name} is rejected in PreFilter because ElasticQuota "
            f"{pod.namespace}{MAX_REFUSAL}")


def over_min_message(pod: PodView) -> str:
    return f"Pod {pod.namespace}/{pod.name} is rejected in PreFilter {MIN_REFUSAL}"


class QuotaState(FilterState):
    """PreFilter's result for a pod under a quota: no per-node verdict of its own (every node
    passes), but the quota snapshot preemption's RemovePod/AddPod keep up to date, and the
    pod's request sums with the nominated pods that count against the quotas."""

    __slots__ = ("snapshot", "request", "in_quota", "total")

    def __init__(self, snapshot: QuotaSnapshot, request: Resources, in_quota: Resources,
                 total: Resources) -> None:
        self.snapshot = snapshot
        self.request = request
        self.in_quota = in_quota  # + nominated pods of its namespace, at least as important
        self.total = total  # + those, and nominated pods of namespaces within their min

    def __call__(self, node: NodeInfo) -> Status | None:
        return None

    def filter_many(self, nodes, statuses):  # type: ignore[no-untyped-def]
        return list(nodes)

    def clone(self) -> QuotaState:
        return QuotaState(self.snapshot.clone(), self.request, self.in_quota, self.total)

    def add_pod(self, pod: PodView, node: NodeInfo) -> None:
        info = self.snapshot.get(pod.namespace)
        if info is not None:
            info.add_pod(pod)

    def remove_pod(self, pod: PodView, node: NodeInfo) -> None:
        info = self.snapshot.get(pod.namespace)
        if info is not None:
            info.remove_pod(pod)

    # The quota checks, on the snapshot as it stands.
    def over_after_reprieve(self, pod: PodView) -> bool:
        """After offering a victim back: whether the quotas forbid keeping it."""
        info = self.snapshot.get(pod.namespace)
        return info is not None and (info.used_over_max_with(self.in_quota)
                                     or self.snapshot.aggregated_used_over_min_with(self.total))

    def over_with_request(self, pod: PodView) -> bool:
        """After evicting every candidate: whether the pod alone still exceeds a quota."""
        info = self.snapshot.get(pod.namespace)
        return info is not None and (info.used_over_max_with(self.request)
                                     or self.snapshot.aggregated_used_over_min_with(self.request))


def _sum(vectors: list[Resources]) -> Resources:
    total = Resources()
    for vector in vectors:
        total.add(vector)
        total.allowed_pods += vector.allowed_pods
    return total


def snapshot_of(ctx: ClusterContext, pod: PodView) -> QuotaSnapshot:
    """The cluster's quotas as the pod's cycle sees them (its own reservation left out)."""
    store = ctx.store(QuotaStore)
    return quota_snapshot(store.quotas(), lambda ns: store.used(ns, pod.uid), store.counted)


def quota_state(ctx: ClusterContext, pod: PodView) -> QuotaState | None:
    """PreFilter's data for `pod`, or None when its namespace has no quota."""
    snapshot = snapshot_of(ctx, pod)
    info = snapshot.get(pod.namespace)
    if info is None:
        return None
    in_quota: list[Resources] = [pod.quota_requests]
    total: list[Resources] = [pod.quota_requests]
    for other in ctx.nominated_all():
        if other.uid == pod.uid:
            continue
        other_info = snapshot.get(other.namespace)
        if other_info is None:
            continue
        if other.namespace == pod.namespace and other.priority >= pod.priority:
            in_quota.append(other.quota_requests)
            total.append(other.quota_requests)
        elif other.namespace != pod.namespace and not other_info.used_over_min():
            total.append(other.quota_requests)
    return QuotaState(snapshot, pod.quota_requests, _sum(in_quota), _sum(total))


class QuotaGuard:
    """CapacityScheduling's steps inside `SelectVictimsOnNode` (a `VictimGuard`)."""

    def no_victims(self, node: NodeInfo, pod: PodView) -> Status:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                      (f"No victims found on node {node.name} for preemptor pod {pod.name}",))

    def after_removal(self, filters: FilterPass, pod: PodView) -> Status | None:
        found = filters.state.read(NAME)
        if isinstance(found, QuotaState) and found.over_with_request(pod):
            return Status(Code.UNSCHEDULABLE, (GLOBAL_QUOTA_EXCEEDED,))
        return None

    def keep_evicted(self, filters: FilterPass, pod: PodView) -> bool:
        found = filters.state.read(NAME)
        return isinstance(found, QuotaState) and found.over_after_reprieve(pod)

    def still_evictable(self, filters: FilterPass, pod: PodView, other: PodView) -> bool:
        """A pod of another namespace (one borrowing beyond its min, for a preemptor within
        its own) is a candidate only while that namespace's use, less the candidates before
        it on this node, is still over its min (`eqInfo.usedOverMin()`, asked pod by pod as
        RemovePod lowers it)."""
        if other.namespace == pod.namespace:
            return True
        found = filters.state.read(NAME)
        if not isinstance(found, QuotaState):
            return True
        info = found.snapshot.get(other.namespace)
        return info is None or info.used_over_min()


class CapacityScheduling(DefaultPreemption):
    """PreFilter (the filter verb) and PostFilter (its own preemption)."""

    name = NAME
    message_prefix = ""
    legacy_terminating = False
    reads_own_pre_filter_state = True
    victim_guard = QuotaGuard()
    default_victim_rule = False  # the quota rule

    def __init__(self, args: NoArgs | None = None) -> None:
        super().__init__()

    def pre_filter(self, state: CycleState, pod: PodView,
                   ctx: ClusterContext) -> QuotaState | Status | None:
        found = quota_state(ctx, pod)
        if found is None:
            return None
        info = found.snapshot.get(pod.namespace)
        assert info is not None
        if info.used_over_max_with(found.in_quota):
            return unschedulable(NAME, over_max_message(pod))
        if found.snapshot.aggregated_used_over_min_with(found.total):
            return unschedulable(NAME, over_min_message(pod))
        return found

    def can_preempt(self, preemptor: PodView, ctx: ClusterContext, now: float) -> VictimPredicate:
        """The quota rule for victims (`SelectVictimsOnNode`'s candidate choice)."""
        found = quota_state(ctx, preemptor)
        priority = preemptor.priority
        if found is None:
            quotas = ctx.store(QuotaStore).quotas()
            return lambda pod: pod.namespace not in quotas and pod.priority < priority
        snapshot = found.snapshot
        own = snapshot.get(preemptor.namespace)
        assert own is not None
        namespace = preemptor.namespace
        if own.used_over_min_with(found.in_quota):
            return lambda pod: (pod.namespace == namespace and pod.priority < priority)
        borrowing = {ns for ns, info in snapshot.infos.items()
                     if ns != namespace and info.used_over_min()}
        return lambda pod: pod.namespace in borrowing

    def offset_and_num_candidates(self, num_nodes: int, rng: Any) -> tuple[int, int]:
        """`GetOffsetAndNumCandidates`: every potential node, from the first (no random draw)."""
        return 0, num_nodes

    def pod_eligible_to_preempt_others(self, pod: PodView, nominated_status: Status | None,
                                       nominated_node: NodeInfo | None,
                                       can_preempt: VictimPredicate,
                                       ctx: ClusterContext) -> tuple[bool, str]:
        """`PodEligibleToPreemptOthers` by quota. A pod that already preempted waits while, on
        its nominated node, a pod is terminating (whoever deleted it) that is: of its own
        namespace and lower priority; or of another namespace over its min while the
        preemptor is within its own; or, for a preemptor without a quota, of lower priority
        in a namespace without one. A nominated node with no status counts as unresolvable,
        as modern kube-scheduler hands it over (`NodeToStatus` absent nodes)."""
        from extender.engine.preemption.evaluator import (
            NOT_ELIGIBLE_NEVER,
            NOT_ELIGIBLE_TERMINATING,
        )

        if pod.preemption_policy == "Never":
            return False, NOT_ELIGIBLE_NEVER
        if not pod.nominated_node_name:
            return True, ""
        if nominated_status is None or nominated_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return True, ""
        if nominated_node is None:
            return True, ""
        priority = pod.priority
        terminating = [p for p in nominated_node.pods.values() if p.terminating]
        found = quota_state(ctx, pod) if terminating else None
        if found is None:
            quotas = ctx.store(QuotaStore).quotas()
            if any(p.namespace not in quotas and p.priority < priority for p in terminating):
                return False, NOT_ELIGIBLE_TERMINATING
            return True, ""
        own = found.snapshot.get(pod.namespace)
        assert own is not None
        more_than_min = own.used_over_min_with(found.in_quota)
        for other in terminating:
            info = found.snapshot.get(other.namespace)
            if info is None:
                continue
            if other.namespace == pod.namespace:
                if other.priority < priority:
                    return False, NOT_ELIGIBLE_TERMINATING
            elif not more_than_min and info.used_over_min():
                return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def rejected_pre_filter_state(self, pod: PodView, ctx: ClusterContext) -> QuotaState | None:
        """The cycle state PreFilter writes before it rejects a pod (upstream stores the quota
        snapshot and the requests first): preemption's dry run works on it."""
        return quota_state(ctx, pod)

    def post_filter(self, profile: Profile, pod: PodView, statuses: Mapping[str, Status],
                    ctx: ClusterContext, now: float, rng: Any, *,
                    call_extenders: ExtenderStep | None = None) -> PreemptionResult:
        from extender.engine.preemption.evaluator import preempt

        return preempt(profile, pod, statuses, ctx, now, rng, call_extenders=call_extenders)


def quota_refusal(status: Status | None) -> bool:
    """Whether `status` is PreFilter's refusal of a pod for its ElasticQuota's use (over its
    max, or the quotas' use over the sum of their mins): a verdict an extender whose pod watch
    runs behind may give wrongly."""
    return status is not None and status.plugin == NAME
