"""Coscheduling's PodGroup manager: the state its extension points share across cycles.

One manager serves the filter verb (PreFilter), the bind verb's Permit and the simulator
(QueueSort, Permit, PostFilter, Unreserve). Time is passed in (`now`, seconds), so the
extender's monotonic clock and the simulator's virtual clock drive it alike.
`../shared/reference/plugins-next.md` §5.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from enum import StrEnum

from extender.engine.args import CoschedulingArgs
from extender.engine.framework import ClusterContext, Code, Status, unresolvable
from extender.engine.plugins.coscheduling.store import PodGroupStore
from extender.model.goquantity import GoQuantity
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.model.quantity import BINARY_SI, DECIMAL_SI
from extender.model.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Resources
from extender.model.scheduling import PodGroupView

NAME = "Coscheduling"
#: scheduler-plugins' `util.DefaultWaitTime`: the Permit wait when nothing else sets one.
DEFAULT_WAIT_SECONDS = 60

NOT_FOUND = "PodGroup not found"
NO_GROUP = "can not find pod group"
#: PreFilter's words for a group with fewer pods than minMember (`too_few_siblings`).
TOO_FEW_SIBLINGS = "cannot find enough sibling pods"
OPTIMISTIC_REJECTION = "optimistic rejection in PostFilter"
UNRESERVE_REJECTION = "rejection in Unreserve"


_UNSCHEDULABLE = Code.UNSCHEDULABLE


class PermitCode(StrEnum):
    NOT_SPECIFIED = "PodGroup not specified"
    NOT_FOUND = NOT_FOUND
    SUCCESS = "Success"
    WAIT = "Wait"


def float32(value: float) -> float:
    """The value rounded to a Go float32."""
    return struct.unpack("f", struct.pack("f", value))[0]


class _Expiring:
    """Names that expire (`go-cache` with a per-entry TTL)."""

    __slots__ = ("_until",)

    def __init__(self) -> None:
        self._until: dict[str, float] = {}

    def add(self, name: str, ttl: float, now: float) -> None:
        """go-cache's `Add`: an entry that has not expired is kept as it is."""
        if not self.has(name, now):
            self._until[name] = now + ttl

    def has(self, name: str, now: float) -> bool:
        until = self._until.get(name)
        if until is None:
            return False
        if until <= now:
            del self._until[name]
            return False
        return True

    def delete(self, name: str) -> None:
        self._until.pop(name, None)


class PodGroupManager:
    """scheduler-plugins' `PodGroupManager` plus the plugin's group bookkeeping."""

    def __init__(self, args: CoschedulingArgs | None = None) -> None:
        self.args = args or CoschedulingArgs()
        self.permitted = _Expiring()  # groups whose minResources check passed
        self.backed_off = _Expiring()  # groups rejected recently (podGroupBackoffSeconds)
        self.last_failed: dict[str, float] = {}  # group -> when it was last rejected

    # ---- lookups -----------------------------------------------------------------------
    @staticmethod
    def group_of(pod: PodView, ctx: ClusterContext) -> tuple[str, PodGroupView | None]:
        """("ns/group" or "", the PodGroup if it exists): `GetPodGroup`."""
        if not pod.pod_group:
            return "", None
        return f"{pod.namespace}/{pod.pod_group}", ctx.store(PodGroupStore).group(
            pod.namespace, pod.pod_group)

    def timeout(self, group: PodGroupView | None) -> float:
        """How long a group's pods wait at Permit (`util.GetWaitTimeDuration`): its
        scheduleTimeoutSeconds, else permitWaitingTimeSeconds, else (0) 60 s."""
        if group is not None and group.schedule_timeout:
            return float(group.schedule_timeout)
        return self.default_wait

    @property
    def default_wait(self) -> float:
        """How long a pod of a group without scheduleTimeoutSeconds waits at Permit."""
        return float(self.args.permit_waiting_time_seconds or DEFAULT_WAIT_SECONDS)

    @staticmethod
    def assigned(group: PodGroupView, ctx: ClusterContext) -> int:
        """`CalculateAssignedPods`: the group's pods with a node (bound or assumed)."""
        count = 0
        members = ctx.store(PodGroupStore).group_pods(group.namespace, group.name)
        for uid in members:
            pod = ctx.pod_by_uid(uid)
            if pod is not None and pod.node_name:
                count += 1
        return count

    @staticmethod
    def counted(pod: PodView, members: Mapping[str, bool]) -> int:
        """How many pods kube-scheduler's pod lister gives for the pod's group: the members
        indexed, and the pod being scheduled, which its informer always holds (this state may
        not yet, or never in a snapshot)."""
        return len(members) + (pod.uid not in members)

    # ---- PreFilter ---------------------------------------------------------------------
    def pre_filter(self, pod: PodView, ctx: ClusterContext, now: float) -> Status | None:
        """The checks that reject a pod before any node is looked at, or None."""
        full_name, group = self.group_of(pod, ctx)
        if group is None:
            return None
        if self.backed_off.has(full_name, now):
            return unresolvable(NAME, f"podGroup {full_name} failed recently")
        members = ctx.store(PodGroupStore).group_pods(pod.namespace, pod.pod_group)
        count = self.counted(pod, members)
        if count < group.min_member:
            return unresolvable(NAME, f"pre-filter pod {pod.name} {TOO_FEW_SIBLINGS}, "
                                      f"current pods number: {count}, minMember of group: "
                                      f"{group.min_member}")
        # Gated pods cannot be scheduled (the pod being scheduled is not one): with them the
        # group may still fall short.
        short = group.min_member - count + sum(1 for gated in members.values() if gated)
        if short > 0:
            return unresolvable(NAME, f"pre-filter pod {pod.name} cannot proceed due to gated "
                                      f"pods in the same PodGroup")
        if group.min_resources is None or self.permitted.has(full_name, now):
            return None
        need = {**group.min_resources, PODS: GoQuantity(group.min_member, 0, DECIMAL_SI)}
        gap = cluster_gap(ctx.nodes.values(), need, full_name)
        if gap:
            return unresolvable(NAME, f"resource gap: {format_gap(gap)}")
        self.permitted.add(full_name, self.timeout(None), now)
        return None

    # ---- Permit, PostFilter, Unreserve -------------------------------------------------
    def permit(self, pod: PodView, ctx: ClusterContext, assigned: int | None = None) -> PermitCode:
        """Permit's verdict for a pod about to be bound. `assigned` overrides the count of the
        group's pods with a node (the bind verb counts the binds it holds, which kube-scheduler
        has assumed but this state has not seen)."""
        full_name, group = self.group_of(pod, ctx)
        if not full_name:
            return PermitCode.NOT_SPECIFIED
        if group is None:
            return PermitCode.NOT_FOUND
        count = self.assigned(group, ctx) if assigned is None else assigned
        if count + 1 >= group.min_member:
            self.last_failed.pop(full_name, None)
            return PermitCode.SUCCESS
        return PermitCode.WAIT

    def post_filter(self, pod: PodView, ctx: ClusterContext, now: float) -> tuple[Status, bool]:
        """(status, reject the group's waiting pods?) for a pod no node fits."""
        full_name, group = self.group_of(pod, ctx)
        if group is None:
            return Status(_UNSCHEDULABLE, (NO_GROUP,), NAME), False
        assigned = self.assigned(group, ctx)
        if assigned >= group.min_member:
            return Status(_UNSCHEDULABLE, (), NAME), False
        not_assigned = float32((group.min_member - assigned) / group.min_member)
        if not_assigned <= float32(self.args.pod_group_reject_percentage / 100):
            return Status(_UNSCHEDULABLE, (), NAME), False
        self.back_off(full_name, group, ctx, now, pod)
        self.reject_group(full_name, now)
        return Status(_UNSCHEDULABLE, (f"PodGroup {full_name} gets rejected due to Pod {pod.name} "
                                       f"is unschedulable even after PostFilter",), NAME), True

    def back_off(self, full_name: str, group: PodGroupView, ctx: ClusterContext,
                 now: float, pod: PodView | None = None) -> None:
        """`podGroupBackoffSeconds`: a rejected group whose pods all exist is kept out of
        PreFilter ("failed recently") for that long. `pod`: the one PostFilter runs for,
        counted as the pod lister would."""
        backoff = self.args.pod_group_backoff_seconds
        members = ctx.store(PodGroupStore).group_pods(group.namespace, group.name)
        count = len(members) if pod is None else self.counted(pod, members)
        if backoff > 0 and count >= group.min_member:
            self.backed_off.add(full_name, backoff, now)

    def reject_group(self, full_name: str, now: float) -> None:
        """What Unreserve and a PostFilter rejection do to the group's own state."""
        self.permitted.delete(full_name)
        self.last_failed[full_name] = now

    def queue_key(self, pod: PodView, ctx: ClusterContext,
                  initial_attempt: float) -> tuple[int, float, str]:
        """QueueSort's `Less` as a key (`a` before `b` when its key is smaller): priority,
        higher first; then `sort_time`, earlier first; then "namespace/name"."""
        return (-pod.priority, self.sort_time(pod, ctx, initial_attempt),
                f"{pod.namespace}/{pod.name}")

    def sort_time(self, pod: PodView, ctx: ClusterContext, initial_attempt: float) -> float:
        """QueueSort's time for a pod: its group's last failure, else the group's creation,
        else the pod's initial attempt."""
        full_name, group = self.group_of(pod, ctx)
        if group is None:
            return initial_attempt
        failed = self.last_failed.get(full_name)
        if failed is not None:
            return failed
        return group.creation_time if group.creation_time is not None else initial_attempt


def cluster_gap(nodes: Iterable[NodeInfo], need: Mapping[str, GoQuantity],
                full_name: str) -> dict[str, GoQuantity]:
    """`CheckClusterResource`: what of `need` the nodes' free resources (the group's own
    pods not counted as using any) cannot cover, node after node, as Go's quantities hold it
    (`Quantity.Sub` of each node's amount, dropped once not positive); {} when covered."""
    remaining = dict(need)
    for info in nodes:
        if not remaining:
            break
        free = _free_without_group(info, full_name)
        for name in list(remaining):
            left = remaining[name].sub(*_node_amount(free, name))
            if left.sign <= 0:
                del remaining[name]
            else:
                remaining[name] = left
    return remaining


def _node_amount(free: Resources, name: str) -> tuple[int, int, str]:
    """(value, scale, format) of the node's free amount as `util.ResourceList` makes it
    (`NewMilliQuantity` for cpu, `NewQuantity` for the rest); a zero Quantity when the node
    has none of it."""
    if name == CPU:
        return free.milli_cpu, -3, DECIMAL_SI
    if name == MEMORY:
        return free.memory, 0, BINARY_SI
    if name == PODS:
        return free.allowed_pods, 0, BINARY_SI
    if name == EPHEMERAL_STORAGE:
        return free.ephemeral_storage, 0, BINARY_SI
    if name in free.scalar:
        return free.scalar[name], 0, BINARY_SI if name.startswith("hugepages-") else DECIMAL_SI
    return 0, 0, ""


def _free_without_group(info: NodeInfo, full_name: str) -> Resources:
    requested = info.requested.copy()
    pods = len(info.pods)
    namespace, _, group = full_name.partition("/")
    for pod in info.pods.values():
        if pod.pod_group == group and pod.namespace == namespace:
            requested.add(pod.requests, -1)
            pods -= 1
    allocatable = info.node.allocatable
    free = Resources(allocatable.milli_cpu - requested.milli_cpu,
                     allocatable.memory - requested.memory,
                     allocatable.ephemeral_storage - requested.ephemeral_storage,
                     allocatable.allowed_pods - pods)
    for name, amount in allocatable.scalar.items():
        free.scalar[name] = amount - requested.scalar.get(name, 0)
    return free


def format_gap(gap: Mapping[str, GoQuantity]) -> str:
    """`%v` of the remaining ResourceList: its keys sorted, each Quantity printed as the
    struct it is (`String` has a pointer receiver): `map[cpu:{{2000 -3} {<nil>}  DecimalSI}]`."""
    return "map[" + " ".join(f"{name}:{amount.go_value_string()}"
                             for name, amount in sorted(gap.items())) + "]"


def too_few_siblings(status: Status | None) -> bool:
    """Whether `status` is PreFilter's rejection of a group with fewer pods than minMember: a
    verdict an extender whose pod watch runs behind may give wrongly."""
    return status is not None and status.plugin == NAME and \
        any(TOO_FEW_SIBLINGS in reason for reason in status.reasons)
