"""The simulation: kube-scheduler's `scheduleOne` loop over the queue, on virtual time.

Each cycle: pop → `Algorithm.schedule` (filters, extenders, scores, selectHost) → on a
FitError the PostFilter (preemption) → virtual time moves by the cycle cost, during which
flushers and workload events run as they would concurrently → bind (assume) or the failure
handler (requeue with the rejecting plugins, nomination, the status patch) → the evictions
and nomination clean-ups preemption decided, delivered as the informer would, afterwards.

The run ends when nothing can change any more: no arrival or event left, activeQ and
backoffQ empty, and every pod in the unschedulable pool already failed against the current
cluster (retrying it after the 5-minute leftover flush would fail the same way) — or at
`max_time`.
"""

from __future__ import annotations

import math
import random
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any

from extender.engine.cluster import ClusterState
from extender.engine.events import ELASTIC_QUOTA, POD_GROUP, ActionType, ClusterEvent
from extender.engine.framework import ClusterContext, Code, Status, T
from extender.engine.plugins.coscheduling.core import NAME as COSCHEDULING
from extender.engine.plugins.coscheduling.core import NOT_FOUND as PODGROUP_NOT_FOUND
from extender.engine.plugins.coscheduling.core import (
    OPTIMISTIC_REJECTION,
    UNRESERVE_REJECTION,
    PermitCode,
)
from extender.engine.podindex import PodIndex
from extender.engine.preemption.evaluator import ABSENT, NO_CANDIDATE
from extender.engine.preemption.evaluator import fit_error_message as _histogram_message
from extender.engine.preemption.pick import pick_one_node_for_preemption
from extender.engine.preemption.victims import Victims
from extender.engine.profile import Profile
from extender.engine.queuesort import queue_sort_plugin
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.model.resources import Resources
from extender.model.scheduling import ElasticQuotaView, PodGroupView
from extender.simulator.clock import (
    MILLISECOND,
    SECOND,
    Timeline,
    VirtualClock,
    seconds,
    to_seconds,
)
from extender.simulator.events import ASSIGNED_POD_DELETE, NODE_ADD, node_update_events
from extender.simulator.extenders import ExtenderError, HttpExtender
from extender.simulator.nodetree import NodeTree
from extender.simulator.nominator import Nominator
from extender.simulator.permit import (
    MAX_PERMIT_TIMEOUT,
    WaitingPod,
    timeout_message,
)
from extender.simulator.precheck import node_pre_check
from extender.simulator.queue import (
    DEFAULT_POD_INITIAL_BACKOFF,
    DEFAULT_POD_MAX_BACKOFF,
    DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS,
    PriorityQueue,
    QueuedPodInfo,
)
from extender.simulator.schedule import Algorithm, Placement
from extender.simulator.utilization import ReplayRecord, Utilization, UtilizationReplay
from extender.simulator.workload import Arrival, ObjectArrival, SimEvent, Workload

PENDING = "Pending"
SCHEDULED = "Scheduled"
PREEMPTED = "Preempted"
DELETED = "Deleted"

ProgressFn = Callable[[int, int, int], None]  # (settled pods, pods to schedule, cycles)


def pod_with(pod: PodView, **changes: Any) -> PodView:
    """A copy of an immutable PodView with some fields changed (what an API patch yields)."""
    clone = PodView.__new__(PodView)
    for slot in PodView.__slots__:
        setattr(clone, slot, changes[slot] if slot in changes else getattr(pod, slot))
    return clone


def _other_than(uid: str) -> Callable[[PodView], bool]:
    return lambda pod: pod.uid != uid


def fit_error(num_all_nodes: int, statuses: Mapping[str, Any], post_filter_msg: str = "",
              pre_filter_msg: str = "") -> str:
    """FitError.Error(): the PreFilter rejection's message or else the reasons histogram, then
    `" <PostFilterMsg>."` (Go's separator, so a nested preemption FitError ends in ".." as in
    real FailedScheduling events)."""
    if pre_filter_msg:
        # A PreFilter rejection gives every node the same status: upstream shows its message
        # once instead of the histogram.
        message = f"0/{num_all_nodes} nodes are available: {pre_filter_msg}."
    else:
        message = _histogram_message(num_all_nodes, statuses, ABSENT)
    if post_filter_msg:
        message += f" {post_filter_msg}."
    return message


@dataclass
class SimulationConfig:
    seed: int = 0
    #: None: filter every node; 0: kube-scheduler's adaptive sampling; 1..100: that percentage.
    percentage_of_nodes_to_score: int | None = None
    cycle_cost: int = 1 * MILLISECOND
    pod_initial_backoff: int = DEFAULT_POD_INITIAL_BACKOFF
    pod_max_backoff: int = DEFAULT_POD_MAX_BACKOFF
    pod_max_in_unschedulable_pods: int = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS
    #: Time between a victim's eviction and its disappearance (it keeps its room meanwhile).
    victim_grace_period: int = 0
    max_time: int | None = 24 * 3600 * SECOND
    extenders: Sequence[HttpExtender] = ()
    #: Also call the extender's bind verb (keeps an offline extender's state in step).
    extender_bind: bool = False
    #: Node utilization replayed into `state.node_metrics` at its sample times (`--utilization`).
    utilization: Utilization | None = None


@dataclass
class PodRecord:
    """What happened to one pod the simulation scheduled, or evicted."""

    uid: str
    namespace: str
    name: str
    priority: int
    origin: str  # "workload" or "cluster"
    status: str = PENDING
    node: str = ""
    nominated_node: str = ""
    #: The last failure: a message, or the FitError's (nodes, statuses, post-filter message,
    #: pre-filter message), formatted only when asked for (most are superseded by a later
    #: attempt).
    failure: str | tuple[int, Mapping[str, Any], str, str] = ""
    attempts: int = 0
    arrived_at: int | None = None
    scheduled_at: int | None = None
    preempted_by: str = ""
    preemptions_caused: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def message(self) -> str:
        if isinstance(self.failure, tuple):
            self.failure = fit_error(*self.failure)
        return self.failure


@dataclass
class NodeUsage:
    name: str
    milli_cpu: int
    memory: int
    pods: int
    allocatable_milli_cpu: int
    allocatable_memory: int
    allocatable_pods: int


def node_usage(state: ClusterState) -> dict[str, NodeUsage]:
    out = {}
    for name, info in state.nodes.items():
        alloc = info.node.allocatable
        out[name] = NodeUsage(name, info.requested.milli_cpu, info.requested.memory,
                              len(info.pods), alloc.milli_cpu, alloc.memory, alloc.allowed_pods)
    return out


@dataclass
class SimulationResult:
    records: dict[str, PodRecord]
    nodes_before: dict[str, NodeUsage]
    nodes_after: dict[str, NodeUsage]
    cycles: int
    virtual_time: int
    last_bind_time: int | None
    truncated: bool
    config: SimulationConfig
    warnings: list[str]
    extender_calls: dict[str, int]
    utilization: ReplayRecord | None = None


class SimContext:
    """The engine's ClusterContext and preemption's node listing, for the simulation: node
    order is the scheduler's node tree, nominations come from the queue's nominator."""

    def __init__(self, sim: Simulation) -> None:
        self._sim = sim

    @property
    def nodes(self) -> Mapping[str, NodeInfo]:
        return self._sim.node_map()

    def node_count(self) -> int:
        return len(self._sim.state.nodes)

    def image_node_count(self, image: str) -> int:
        return self._sim.state.image_node_count(image)

    def nominated_pods(self, node_name: str) -> Sequence[PodView]:
        return self._sim.queue.nominator.nominated_pods_for_node(node_name)

    def pdb_list(self) -> Sequence[Any]:
        return self._sim.state.pdb_list()

    def priority_class(self, name: str) -> Any:
        return self._sim.state.priority_class(name)

    # The cross-node plugins' reads come from the simulated cluster's state as they are.
    @property
    def pod_index(self) -> PodIndex:
        return self._sim.state.pod_index

    @property
    def namespaces(self) -> Mapping[str, Mapping[str, str]]:
        return self._sim.state.namespaces

    def namespace_labels(self, name: str) -> Mapping[str, str] | None:
        return self._sim.state.namespace_labels(name)

    def services_in(self, namespace: str) -> list[Mapping[str, str]]:
        return self._sim.state.services_in(namespace)

    def controller_selector(self, kind: str, namespace: str, name: str) -> object | None:
        return self._sim.state.controller_selector(kind, namespace, name)

    def node_memo(self, key: object, compute: Callable[[], T]) -> T:
        return self._sim.state.node_memo(key, compute)

    def label_column(self, key: str) -> Mapping[NodeInfo, str | None]:
        return self._sim.state.label_column(key)

    # scheduler-plugins' objects. The pod lister sees pending pods too (they are not in the
    # simulated cluster state until assumed), hence the simulation's own group index.
    def pod_by_uid(self, uid: str) -> PodView | None:
        return self._sim.state.pods.get(uid) or self._sim.pending.get(uid)

    def nominated_all(self) -> list[PodView]:
        return [pod for pods in self._sim.queue.nominator.by_node.values() for pod in pods]

    def pod_group(self, namespace: str, name: str) -> PodGroupView | None:
        return self._sim.state.pod_group(namespace, name)

    def app_group(self, namespace: str, name: str) -> Any:
        return self._sim.state.app_group(namespace, name)

    def network_topology(self, namespace: str, name: str) -> Any:
        return self._sim.state.network_topology(namespace, name)

    def group_pods(self, namespace: str, group: str) -> Mapping[str, bool]:
        return self._sim.group_members.get((namespace, group), {})

    def quotas(self) -> Mapping[str, ElasticQuotaView]:
        return self._sim.state.quotas()

    def quota_used(self, namespace: str, exclude: str = "") -> Resources:
        return self._sim.state.quota_used(namespace, exclude)

    def quota_counted(self, pod: PodView) -> bool:
        return self._sim.state.quota_counted(pod)

    @property
    def node_metrics(self) -> Any:  # the replayed utilization (Trimaran), or None
        return self._sim.state.node_metrics

    def recent_assignments(self, node_name: str) -> Sequence[tuple[float, PodView]]:
        """Pods bound to the node lately, at virtual epoch seconds (TargetLoadPacking's load
        the metrics do not show yet)."""
        return self._sim.state.recent_assignments(node_name)

    def clock(self) -> float:
        """The virtual time, in epoch seconds (what Coscheduling's TTLs and failure times
        are kept in)."""
        return self._sim._epoch_now()


@dataclass
class _PostFilter:
    """What the PostFilter decided, applied after the cycle."""

    message: str = ""
    nominate: str | None = None  # None: keep (ModeNoop); "" clears; a name nominates
    node: str = ""
    victims: tuple[PodView, ...] = ()
    code: Code = Code.UNSCHEDULABLE  # the PostFilter status's code when nothing is nominated
    #: Coscheduling's PostFilter rejected this group's waiting pods ((namespace, PodGroup)).
    reject_group: tuple[str, str] | None = None


class Simulation:
    def __init__(self, state: ClusterState, profile: Profile, workload: Workload,
                 config: SimulationConfig | None = None, *,
                 raw_pods: Mapping[str, Mapping[str, Any]] | None = None,
                 raw_nodes: Mapping[str, Mapping[str, Any]] | None = None,
                 progress: ProgressFn | None = None) -> None:
        self.config = config or SimulationConfig()
        self.state = state
        self.profile = profile
        self.workload = workload
        self.clock = VirtualClock()
        # The state stamps its changes; keep it off the wall clock.
        state.clock = self._epoch_now
        # And the Unix-time one (when pods became assigned, against the load metrics' window).
        state.wall_clock = self._epoch_now
        self.timeline = Timeline(self.clock)
        self.pending: dict[str, PodView] = {}  # uid -> current view of each pending pod
        self.records: dict[str, PodRecord] = {}
        # Coscheduling runs at every extension point it has when its filter is enabled, as
        # scheduler-plugins registers it (multiPoint): QueueSort, PreFilter, PostFilter
        # (after the profile's preemption), Permit and Unreserve.
        self.gang: Any = next((f for f in profile.filters
                               if getattr(f, "name", "") == COSCHEDULING), None)
        #: Pods held at Permit (uid -> WaitingPod), in the order they started waiting.
        self.waiting: dict[str, WaitingPod] = {}
        #: (namespace, PodGroup) -> {uid: gated} of every pod naming it that exists (pending,
        #: waiting, bound or finished): what Coscheduling's pod lister lists.
        self.group_members: dict[tuple[str, str], dict[str, bool]] = {
            group: dict(members) for group, members in state.group_members.items()}
        self.queue = PriorityQueue(
            self.clock,
            pod_initial_backoff=self.config.pod_initial_backoff,
            pod_max_backoff=self.config.pod_max_backoff,
            pod_max_in_unschedulable_pods=self.config.pod_max_in_unschedulable_pods,
            plugins=profile.filter_names,
            nominator=Nominator(pod_alive=lambda p: p.uid in self.pending),
            sort_key=self._queue_sort_key(profile),
        )
        self.queue.start(self.timeline)
        self.rng = random.Random(self.config.seed)
        self.algorithm = Algorithm(profile,
                                   percentage_of_nodes_to_score=self.config.percentage_of_nodes_to_score,
                                   extenders=self.config.extenders, rng=self.rng)
        self.ctx: ClusterContext = SimContext(self)
        self.raw_pods = dict(raw_pods or {})
        self.raw_nodes = dict(raw_nodes or {})
        self.progress = progress
        self.tree = NodeTree()
        for name, info in state.nodes.items():
            self.tree.add(name, info.node.labels)
        self._node_list: list[NodeInfo] | None = None
        self._node_map: dict[str, NodeInfo] | None = None
        self.version = 0  # bumped on every change that could alter a scheduling outcome
        self._failed_version: dict[str, int] = {}
        self.cycles = 0
        self.settled = 0
        self.last_bind_time: int | None = None
        self.warnings: list[str] = []
        self.truncated = False
        self._nodes_before = node_usage(state)
        self._schedule_inputs()
        self.replay = None if self.config.utilization is None else UtilizationReplay(
            self.config.utilization, state, self.timeline, warnings=self.warnings,
            later_nodes=[e.target for e in workload.events if e.action == "addNode"])

    # -- set-up ---------------------------------------------------------------------------------

    def _schedule_inputs(self) -> None:
        # Pending pods of the snapshot are in the queue at the start, not in the cluster.
        snapshot_pending = [p for p in self.state.pods.values() if not p.node_name]
        self.total = len(snapshot_pending) + len(self.workload.arrivals)
        for pod in snapshot_pending:
            self.state.delete_pod(pod.namespace, pod.name, pod.uid)
            arrival = Arrival(0, pod, dict(self.raw_pods.get(pod.uid, {})))
            self.timeline.at(0, partial(self._arrive, arrival, "cluster"))
        # PodGroups and ElasticQuotas first: at equal times they exist before the pods.
        for created in self.workload.objects:
            self.timeline.at(created.time, partial(self._create_object, created))
        for arrival in self.workload.arrivals:
            self.timeline.at(arrival.time, partial(self._arrive, arrival, "workload"))
        for event in self.workload.events:
            self.timeline.at(event.time, partial(self._on_event, event), rank=1)

    def _epoch_now(self) -> float:
        return self.workload.epoch + to_seconds(self.clock.now())

    def _epoch_of(self, t: int) -> float:
        return self.workload.epoch + to_seconds(t)

    def node_list(self) -> list[NodeInfo]:
        if self._node_list is None:
            nodes = self.state.nodes
            self._node_list = [nodes[n] for n in self.tree.list() if n in nodes]
        return self._node_list

    def node_map(self) -> dict[str, NodeInfo]:
        if self._node_map is None:
            self._node_map = {n.name: n for n in self.node_list()}
        return self._node_map

    def _nodes_changed(self) -> None:
        self._node_list = None
        self._node_map = None
        self.version += 1

    def _record(self, pod: PodView, origin: str) -> PodRecord:
        rec = self.records.get(pod.uid)
        if rec is None:
            rec = PodRecord(pod.uid, pod.namespace, pod.name, pod.priority, origin)
            self.records[pod.uid] = rec
        return rec

    # -- inputs: arrivals and events ------------------------------------------------------------

    def _arrive(self, arrival: Arrival, origin: str) -> None:
        pod = arrival.pod
        if arrival.raw:
            self.raw_pods.setdefault(pod.uid, arrival.raw)
        if pod.pod_group:
            self.group_members.setdefault((pod.namespace, pod.pod_group), {})[pod.uid] = pod.gated
        rec = self._record(pod, origin)
        rec.arrived_at = self.clock.now()
        if pod.node_name:  # already bound elsewhere: it just takes its room
            self.state.assume(pod_with(pod, start_time=self._epoch_now()), pod.node_name, math.inf)
            rec.status, rec.node, rec.scheduled_at = SCHEDULED, pod.node_name, self.clock.now()
            self.settled += 1
            self.version += 1
            self.queue.assigned_pod_added(pod)
            return
        self.pending[pod.uid] = pod
        self.queue.add(pod)

    def _on_event(self, event: SimEvent) -> None:
        if event.action == "deletePod":
            self._delete_pod_by_key(event.target)
        elif event.action in ("addNode", "updateNode"):
            assert event.node is not None
            self.raw_nodes[event.target] = event.raw.get(event.action, {})
            old = self.state.nodes.get(event.target)
            info = self.state.apply_node(event.node)
            self.tree.update(info.name, info.node.labels)
            self._nodes_changed()
            pre_check = node_pre_check(info)
            if old is None:
                self.queue.move_all_to_active_or_backoff(NODE_ADD, pre_check)
            else:
                for cluster_event in node_update_events(old.node, info.node):
                    self.queue.move_all_to_active_or_backoff(cluster_event, pre_check)
        elif event.action == "deleteNode":
            if event.target not in self.state.nodes:
                self.warnings.append(f"deleteNode at {to_seconds(event.time)}s: no node {event.target}")
                return
            self.state.delete_node(event.target)
            self.tree.remove(event.target)
            self._nodes_changed()

    def _delete_pod_by_key(self, key: str) -> None:
        namespace, _, name = key.partition("/")
        pending = next((p for p in self.pending.values()
                        if p.namespace == namespace and p.name == name), None)
        if pending is not None:
            waiting = self.waiting.get(pending.uid)
            if waiting is not None:
                # The delete event rejects a pod waiting at Permit (`RejectWaitingPod`); its
                # binding cycle then fails and does not requeue it (it is gone).
                self._unwait(waiting)
                self._reject_waiting([(waiting, "", False)])
            self._forget_member(pending)
            del self.pending[pending.uid]
            self.queue.delete(pending)
            self._record(pending, "workload").status = DELETED
            self.settled += 1
            self.version += 1  # its nomination, if any, is gone
            return
        bound = self.state.pod_by_key(namespace, name)
        if bound is None or not bound.node_name:
            self.warnings.append(f"deletePod at {to_seconds(self.clock.now())}s: no pod {key}")
            return
        rec = self.records.get(bound.uid)
        if rec is not None and rec.status == SCHEDULED:
            rec.status = DELETED
        self._remove_bound(bound.uid)

    def _remove_bound(self, uid: str) -> None:
        waiting = self.waiting.get(uid)
        if waiting is not None:  # a preemption victim still waiting at Permit (assumed only)
            pending = self.pending.pop(uid)
            self._unwait(waiting)
            self._reject_waiting([(waiting, "", False)])
            self._forget_member(pending)
            self.queue.nominator.delete(pending)
            self.settled += 1
            return
        pod = self.state.pods.get(uid)
        if pod is None:
            # A victim that was waiting at Permit and has been rejected since (its group's
            # Unreserve): it is gone all the same.
            if uid in self.pending:
                pending = self.pending.pop(uid)
                self.queue.delete(pending)
                self._forget_member(pending)
                self.settled += 1
                self.version += 1
            return
        self._forget_member(pod)
        self.state.delete_pod(pod.namespace, pod.name, uid)
        self.version += 1
        self.queue.assigned_pod_deleted(pod)

    # -- the loop -------------------------------------------------------------------------------

    def _stale_pool_timestamp(self) -> int | None:
        """Oldest queue timestamp among pool pods that failed before the latest change."""
        stale = [info.timestamp for info in self.queue.unschedulable_infos()
                 if self._failed_version.get(info.pod.uid, -1) < self.version]
        return min(stale, default=None)

    def _next_wakeup(self) -> int | None:
        """The next time something can happen while activeQ is empty (None: never)."""
        times = []
        one_shot = self.timeline.next_time(include_periodic=False)
        if one_shot is not None:
            times.append(one_shot)
        expiry = self.queue.next_backoff_expiry()
        if expiry is not None and self.queue.backoff_flusher is not None:
            times.append(self.timeline.periodic_fire_time(self.queue.backoff_flusher, expiry))
        stale = self._stale_pool_timestamp()
        if stale is not None and self.queue.leftover_flusher is not None:
            due = stale + self.queue.pod_max_in_unschedulable_pods + 1
            times.append(self.timeline.periodic_fire_time(self.queue.leftover_flusher, due))
        return min(times, default=None)

    def run(self) -> SimulationResult:
        max_time = self.config.max_time
        while True:
            self.timeline.run_until(self.clock.now())
            if max_time is not None and self.clock.now() >= max_time:
                self.truncated = bool(self.queue.num_active or self._next_wakeup() is not None)
                break
            if self.queue.num_active == 0:
                wake = self._next_wakeup()
                if wake is None:
                    break
                if max_time is not None and wake > max_time:
                    self.timeline.run_until(max_time)
                    self.truncated = True
                    break
                self.timeline.run_until(wake)
                continue
            self._schedule_one()
        return self.result()

    def result(self) -> SimulationResult:
        if self.waiting:
            self.warnings.append(
                f"{len(self.waiting)} pod(s) still waiting at Permit when the run stopped: "
                + ", ".join(sorted(f"{w.info.pod.namespace}/{w.info.pod.name}"
                                   for w in self.waiting.values())))
        calls: dict[str, int] = {}
        for ext in self.config.extenders:
            for verb, n in ext.calls.items():
                calls[f"{ext.name}/{verb}"] = n
        return SimulationResult(self.records, self._nodes_before, node_usage(self.state),
                                self.cycles, self.clock.now(), self.last_bind_time,
                                self.truncated, self.config, self.warnings, calls,
                                self.replay.record if self.replay is not None else None)

    def _pod_raw(self, pod: PodView) -> dict[str, Any]:
        if not self.config.extenders:
            return {}
        raw = dict(self.raw_pods.get(pod.uid) or {
            "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid}})
        status = dict(raw.get("status") or {})
        if pod.nominated_node_name:
            status["nominatedNodeName"] = pod.nominated_node_name
        else:
            status.pop("nominatedNodeName", None)
        raw["status"] = status
        return raw

    def _schedule_one(self) -> None:
        info = self.queue.pop()
        assert info is not None
        pod = info.pod
        rec = self.records[pod.uid]
        rec.attempts = info.attempts
        self.cycles += 1
        start = self.clock.now()
        nodes = self.node_list()
        pod_raw = self._pod_raw(pod)
        placement = self.algorithm.schedule(pod, nodes, self.queue.nominator, self.ctx,
                                            pod_raw, self.raw_nodes)
        post: _PostFilter | None = None
        if placement.node is None and not placement.error:
            post = self._post_filter(pod, placement, pod_raw)
        # The cycle takes time; flushers and events run meanwhile, as they would concurrently.
        self.timeline.run_until(start + self.config.cycle_cost)
        if pod.uid not in self.pending:
            return  # deleted while it was being scheduled
        if placement.node is not None and placement.node.name in self.state.nodes:
            if self.gang is not None and self._permit(info, placement.node.name):
                return  # waiting at Permit, or rejected there
            error = self._bind(info, placement.node.name)
            if not error:
                return
            placement = Placement([], placement.diagnosis, error=error)
            if self.gang is not None:
                self._unreserve(pod)
        elif placement.node is not None:
            placement = Placement([], placement.diagnosis, error=f'node "{placement.node.name}" not found')
        self._handle_failure(info, placement, post, len(nodes))

    # -- outcomes -------------------------------------------------------------------------------

    def _bind(self, info: QueuedPodInfo, node_name: str) -> str:
        """Assume and bind; returns an error message if an extender's bind failed."""
        pod = info.pod
        if self.config.extender_bind:
            binder = next((e for e in self.config.extenders if e.bind_verb and e.is_interested(pod)), None)
            if binder is not None:
                try:
                    binder.bind(pod, node_name)
                except ExtenderError as exc:
                    return str(exc)
        now = self.clock.now()
        self.state.assume(pod_with(pod, start_time=self._epoch_now()), node_name, math.inf)
        self.queue.nominator.delete(pod)
        del self.pending[pod.uid]
        rec = self.records[pod.uid]
        rec.status, rec.node, rec.scheduled_at = SCHEDULED, node_name, now
        rec.failure, rec.nominated_node = "", ""
        self.last_bind_time = now
        self.version += 1
        self.settled += 1
        # The informer's add event for the bound pod.
        self.queue.assigned_pod_added(self.state.pods[pod.uid])
        if self.progress is not None:
            self.progress(self.settled, self.total, self.cycles)
        return ""

    def _handle_failure(self, info: QueuedPodInfo, placement: Placement,
                        post: _PostFilter | None, num_nodes: int) -> None:
        pod = info.pod
        rec = self.records[pod.uid]
        if placement.error:
            info.unschedulable_plugins = set()
            rec.failure = placement.error
        else:
            info.unschedulable_plugins = set(placement.diagnosis.unschedulable_plugins)
            rec.failure = (num_nodes, placement.diagnosis.statuses, post.message if post else "",
                           placement.diagnosis.pre_filter_msg)
        self.queue.add_unschedulable_if_not_present(info, self.queue.scheduling_cycle)
        if post is not None and post.nominate is not None:
            before = self.queue.nominator.nominated_node(info.pod)
            self.queue.nominator.add(info.pod, post.nominate)
            self._patch_nomination(info.pod, post.nominate)
            rec.nominated_node = post.nominate
            if (before or "") != post.nominate:
                self.version += 1  # a reservation appeared or went away
        if post is not None and post.victims:
            self._evict(pod, post.node, post.victims)
        self._failed_version[pod.uid] = self.version
        if self.progress is not None:
            self.progress(self.settled, self.total, self.cycles)
        if post is not None and post.reject_group is not None:
            # Coscheduling's PostFilter rejected the group's waiting pods; their binding
            # cycles fail now.
            rejected = [w for w in self.waiting.values() if w.group == post.reject_group]
            for waiting in rejected:
                self._unwait(waiting)
            self._reject_waiting([(w, OPTIMISTIC_REJECTION, True) for w in rejected])

    def _patch_nomination(self, pod: PodView, node: str) -> None:
        """The status patch of `nominatedNodeName`, and the informer update that follows."""
        current = self.pending.get(pod.uid, pod)
        if current.nominated_node_name == node:
            return
        new = pod_with(current, nominated_node_name=node)
        self.pending[pod.uid] = new
        self.queue.update(current, new)

    def _evict(self, preemptor: PodView, node: str, victims: Sequence[PodView]) -> None:
        """prepareCandidate: evict the victims, clear lower-priority nominations on the node."""
        grace = self.config.victim_grace_period
        now = self.clock.now()
        for victim in victims:
            vrec = self._record(victim, "cluster")
            vrec.status, vrec.preempted_by = PREEMPTED, f"{preemptor.namespace}/{preemptor.name}"
            if not vrec.node:
                vrec.node = victim.node_name
            self.records[preemptor.uid].preemptions_caused.append(vrec.key)
            if grace > 0:
                self._mark_terminating(victim)
            self.timeline.at(now + grace, partial(self._remove_bound, victim.uid), rank=2)
        for other in self.queue.nominator.nominated_pods_for_node(node):
            if other.priority < preemptor.priority and other.nominated_node_name:
                self._patch_nomination(other, "")
                if other.uid in self.records:
                    self.records[other.uid].nominated_node = ""
        self.version += 1

    def _mark_terminating(self, victim: PodView) -> None:
        current = self.state.pods.get(victim.uid)
        if current is None:
            return
        terminating = pod_with(current, terminating=True, preempted_by_scheduler=True)
        self.state.replace_view(terminating)
        self.queue.assigned_pod_updated(current, terminating)

    # -- scheduler-plugins' objects and Coscheduling --------------------------------------------

    def _create_object(self, created: ObjectArrival) -> None:
        """A PodGroup or ElasticQuota is created (or replaced): the state takes it and the
        queue hears the event its plugin registered."""
        obj = created.obj
        if created.stamp:  # the API server's stamp, whole seconds as metav1.Time keeps it
            stamp = datetime.fromtimestamp(math.floor(self._epoch_now()), UTC)
            obj.metadata.creation_timestamp = stamp.strftime("%Y-%m-%dT%H:%M:%SZ")
        namespace, name = obj.metadata.namespace, obj.metadata.name
        if created.kind == "PodGroup":
            known = self.state.pod_group(namespace, name) is not None
            resource = POD_GROUP
        else:
            known = any(key[0] == namespace and key[1] == name for key in self.state.elastic_quotas)
            resource = ELASTIC_QUOTA
        self.state.apply(created.kind, obj)
        self.version += 1
        if created.kind == "PodGroup":
            self._resort_group((namespace, name))
        action = ActionType.UPDATE if known else ActionType.ADD
        label = f"{created.kind}{'Update' if known else 'Add'}"
        self.queue.move_all_to_active_or_backoff(ClusterEvent(resource, action, label))

    def _forget_member(self, pod: PodView) -> None:
        if pod.pod_group:
            members = self.group_members.get((pod.namespace, pod.pod_group))
            if members is not None:
                members.pop(pod.uid, None)

    def _queue_sort_key(self, profile: Profile) -> Any:
        """activeQ's order: Coscheduling's QueueSort when its filter is enabled, else the
        policy's queue sort plugin (`plugins.queueSort`; PrioritySort, the queue's own key,
        when it names none)."""
        if self.gang is not None:
            return self._coscheduling_sort_key
        plugin = queue_sort_plugin(profile.policy)
        return plugin.sort_key(SimContext(self)) if plugin is not None else None

    def _coscheduling_sort_key(self, info: QueuedPodInfo) -> tuple:
        """Coscheduling's `Less` as a key: priority (higher first), then the group's last
        failure, else its PodGroup's creation, else the pod's initial attempt (earlier first),
        then "namespace/name"."""
        pod = info.pod
        initial = info.initial_attempt_timestamp
        when = self.gang.manager.sort_time(
            pod, self.ctx, self._epoch_of(info.timestamp if initial is None else initial))
        return (-pod.priority, when, f"{pod.namespace}/{pod.name}", info.seq)

    def _resort_group(self, group: tuple[str, str]) -> None:
        """What Coscheduling's `Less` reads for the group changed: re-key its queued pods."""
        if self.gang is None:
            return
        members = self.group_members.get(group, {})
        self.queue.resort(f"{group[0]}/{self.pending[uid].name}"
                          for uid in members if uid in self.pending)

    def _permit(self, info: QueuedPodInfo, node_name: str) -> bool:
        """`RunPermitPlugins` (Coscheduling's Permit) for a pod about to be assumed on
        `node_name`. Returns False when the pod may be bound now, True when the stage took it
        (waiting, or rejected)."""
        pod = info.pod
        manager = self.gang.manager
        # The assigned count is the cycle's snapshot: this pod is not in it yet.
        code = manager.permit(pod, self.ctx)
        if code == PermitCode.NOT_SPECIFIED:
            return False
        group = (pod.namespace, pod.pod_group)
        if code == PermitCode.NOT_FOUND:
            # Rejected: Unreserve (Coscheduling finds no group), ForgetPod (an AssignedPodDelete
            # for the queue, before the failure is handled), then a one-node FitError.
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE)
            status = Status(Code.UNSCHEDULABLE, (PODGROUP_NOT_FOUND,), COSCHEDULING)
            self._fail_at_permit(info, node_name, status, clear_nomination=True)
            return True
        if code == PermitCode.SUCCESS:
            # Quorum: allow every waiting pod of the group (their binding cycles go on), then
            # this pod binds. Its group's failure time was cleared.
            self._resort_group(group)
            for waiting in [w for w in self.waiting.values() if w.group == group]:
                self._allow(waiting)
            return False
        # Wait: the pod is assumed (its room taken, counted as assigned) until allowed,
        # rejected or timed out.
        _, view = manager.group_of(pod, self.ctx)
        wait = seconds(manager.timeout(view))
        wait = min(wait, MAX_PERMIT_TIMEOUT)
        now = self.clock.now()
        self.state.assume(pod, node_name, math.inf)
        self.queue.nominator.delete(pod)
        self.version += 1
        waiting = WaitingPod(info, node_name, COSCHEDULING, group, now, wait)
        waiting.timer = self.timeline.at(now + wait, partial(self._permit_timeout, pod.uid))
        self.waiting[pod.uid] = waiting
        # ActivateSiblings: the group's other pods move to activeQ at the end of the cycle.
        members = self.group_members.get(group, {})
        self.queue.activate([self.pending[uid] for uid in members
                             if uid != pod.uid and uid in self.pending
                             and uid not in self.waiting])
        return True

    def _allow(self, waiting: WaitingPod) -> None:
        """A waiting pod is allowed: its binding cycle binds it now."""
        self._unwait(waiting)
        info = waiting.info
        info.pod = self.pending.get(waiting.uid, info.pod)
        error = self._bind(info, waiting.node)
        if error:  # the extender's bind failed: the binding cycle's failure path
            self._reject_waiting([(waiting, error, True)], bind_error=True)

    def _unwait(self, waiting: WaitingPod) -> None:
        """Take a pod out of the waiting map (allowed or rejected) and stop its timer."""
        self.waiting.pop(waiting.uid, None)
        if waiting.timer is not None:
            Timeline.cancel(waiting.timer)

    def _permit_timeout(self, uid: str) -> None:
        waiting = self.waiting.get(uid)
        if waiting is None:
            return
        self._unwait(waiting)
        self._reject_waiting([(waiting, timeout_message(waiting.wait, waiting.plugin), True)])

    def _unreserve(self, pod: PodView) -> None:
        """Coscheduling's Unreserve after a failed binding: reject the group's waiting pods."""
        if not pod.pod_group:
            return
        full_name, view = self.gang.manager.group_of(pod, self.ctx)
        if view is None:
            return
        group = (pod.namespace, pod.pod_group)
        rejected = [w for w in self.waiting.values() if w.group == group]
        for waiting in rejected:
            self._unwait(waiting)
        self.gang.manager.reject_group(full_name, self._epoch_now())
        self._resort_group(group)
        self._reject_waiting([(w, UNRESERVE_REJECTION, True) for w in rejected])

    def _reject_waiting(self, rejected: Iterable[tuple[WaitingPod, str, bool]], *,
                        bind_error: bool = False) -> None:
        """The binding cycles of rejected waiting pods fail, one after the other
        (`handleBindingCycleError`): Unreserve — Coscheduling rejects the group's other waiting
        pods ("rejection in Unreserve") and records the group's failure —, ForgetPod, the
        failure handler (a one-node FitError naming the rejecting plugin; not for a pod that
        is gone), then the deferred AssignedPodDelete that moves every pod but this one.
        Each item is (pod already out of the waiting map, message, requeue)."""
        todo = deque(rejected)
        while todo:
            waiting, message, requeue = todo.popleft()
            pod = self.pending.get(waiting.uid, waiting.info.pod)
            full_name, view = self.gang.manager.group_of(pod, self.ctx)
            if view is not None:
                others = [w for w in self.waiting.values() if w.group == waiting.group]
                for other in others:
                    self._unwait(other)
                    todo.append((other, UNRESERVE_REJECTION, True))
                self.gang.manager.reject_group(full_name, self._epoch_now())
                self._resort_group(waiting.group)
            assumed = self.state.pods.get(waiting.uid)
            if assumed is not None and assumed.node_name:
                self.state.delete_pod(assumed.namespace, assumed.name, assumed.uid)
                self.version += 1
            if requeue and waiting.uid in self.pending:
                waiting.info.pod = pod
                if bind_error:
                    self._fail_with_error(waiting.info, message)
                else:
                    status = Status(Code.UNSCHEDULABLE, (message,), waiting.plugin)
                    self._fail_at_permit(waiting.info, waiting.node, status,
                                         clear_nomination=True)
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, _other_than(waiting.uid))
            bind_error = False

    def _fail_at_permit(self, info: QueuedPodInfo, node_name: str, status: Status, *,
                        clear_nomination: bool) -> None:
        """The failure handler for a pod rejected at Permit: a FitError over one node whose
        status names the rejecting plugin (as kube-scheduler wraps a Permit rejection since
        kubernetes#119046 and a WaitOnPermit one since #119785, 1.28–1.29)."""
        pod = info.pod
        rec = self.records[pod.uid]
        rec.failure = (1, {node_name: status}, "", "")
        info.unschedulable_plugins = {status.plugin} if status.plugin else set()
        self._requeue_failed(info, clear_nomination)

    def _fail_with_error(self, info: QueuedPodInfo, message: str) -> None:
        self.records[info.pod.uid].failure = message
        info.unschedulable_plugins = set()
        self._requeue_failed(info, True)

    def _requeue_failed(self, info: QueuedPodInfo, clear_nomination: bool) -> None:
        pod = info.pod
        self.queue.add_unschedulable_if_not_present(info, self.queue.scheduling_cycle)
        if clear_nomination:
            before = self.queue.nominator.nominated_node(pod)
            self.queue.nominator.add(pod, "")
            self._patch_nomination(pod, "")
            self.records[pod.uid].nominated_node = ""
            if before:
                self.version += 1
        self._failed_version[pod.uid] = self.version
        if self.progress is not None:
            self.progress(self.settled, self.total, self.cycles)

    # -- preemption -----------------------------------------------------------------------------

    def _post_filter(self, pod: PodView, placement: Placement, pod_raw: Mapping[str, Any]) -> _PostFilter:
        """`RunPostFilterPlugins`: the profile's preemption, then (with Coscheduling enabled)
        Coscheduling's PostFilter unless preemption succeeded or failed with an error. The
        Unschedulable statuses' reasons join with ", " into the FitError's PostFilterMsg; the
        last plugin result that is not a no-op (preemption's cleared nomination) stands."""
        post = self._preemption(pod, placement, pod_raw)
        if self.gang is None or post.nominate or post.code != Code.UNSCHEDULABLE:
            return post
        status, reject = self.gang.manager.post_filter(pod, self.ctx, self._epoch_now())
        reasons = ([post.message] if post.message else []) + list(status.reasons)
        post.message = ", ".join(reasons)
        if reject:
            post.reject_group = (pod.namespace, pod.pod_group)
            self._resort_group(post.reject_group)  # the group's failure time changed
        return post

    def _preemption(self, pod: PodView, placement: Placement, pod_raw: Mapping[str, Any]) -> _PostFilter:
        plugin = self.profile.post_filter
        if plugin is None:
            return _PostFilter()
        now = self._epoch_now()
        result = plugin.post_filter(self.profile, pod, placement.diagnosis.statuses, self.ctx,
                                    now, self.rng)
        if result.status.code != Code.SUCCESS:
            return _PostFilter(result.status.message, "" if result.clear_nomination else None,
                               code=result.status.code)
        node, victims = result.node_name, result.victims
        if any(e.preempt_verb and e.is_interested(pod) for e in self.config.extenders):
            chosen = self._extender_preemption(pod, result.candidates, pod_raw, now)
            if isinstance(chosen, str):
                # An extender's error is an Error status; no candidate left is Unschedulable.
                code = Code.UNSCHEDULABLE if chosen == NO_CANDIDATE else Code.ERROR
                return _PostFilter(plugin.message_prefix + chosen, code=code)
            node, victims = chosen
        assert victims is not None
        return _PostFilter("", node, node, victims.pods)

    def _extender_preemption(self, pod: PodView, candidates: Mapping[str, Victims],
                             pod_raw: Mapping[str, Any], now: float) -> tuple[str, Victims] | str:
        """callExtenders then pickOneNodeForPreemption; a string is the failure message."""
        current: dict[str, tuple[Sequence[PodView], int]] = {
            n: (v.pods, v.num_pdb_violations) for n, v in candidates.items()}
        for ext in self.config.extenders:
            if not ext.preempt_verb or not ext.is_interested(pod):
                continue
            try:
                reply = ext.process_preemption(pod_raw, current, self.raw_pods)
                converted: dict[str, tuple[Sequence[PodView], int]] = {}
                for node_name, (uids, violations) in reply.items():
                    info = self.state.nodes.get(node_name)
                    if info is None:
                        raise ExtenderError(f"node {node_name!r} not found")
                    pods = []
                    for uid in uids:
                        if uid not in info.pods:
                            raise ExtenderError(f"extender claims to preempt pod (UID: {uid}) on "
                                                f"node: {node_name}, but the pod is not found on that node")
                        pods.append(info.pods[uid])
                    if not pods:
                        if ext.ignorable:
                            continue
                        raise ExtenderError(f'expected at least one victim pod on node "{node_name}"')
                    converted[node_name] = (pods, violations)
            except ExtenderError as exc:
                if ext.ignorable:
                    continue
                return str(exc)
            current = converted
            if not current:
                break
        final = {n: Victims(tuple(p), v) for n, (p, v) in current.items()}
        best = pick_one_node_for_preemption(final, now)
        if best is None:
            return NO_CANDIDATE
        return best, final[best]
