"""The simulation: kube-scheduler's `scheduleOne` loop over the queue, on virtual time.

Each cycle: pop → `Algorithm.schedule` (filters, extenders, scores, selectHost) → on a
FitError the PostFilter (preemption) → virtual time moves by the cycle cost, during which
flushers and workload events run as they would concurrently → bind (assume) or the failure
handler (requeue with the rejecting plugins, nomination, the status patch) → the evictions
and nomination clean-ups preemption decided, delivered as the informer would, afterwards.

Between cycles the virtual clock jumps to the next instant at which kube-scheduler would act
(an arrival or event, a backoff expiry's flush, a leftover flush that moves a pool pod, a
Permit timeout, a victim's grace period ending, a pod's lifetime ending) and schedules at that
instant.

The run ends (`settled`) when nothing can change any more: no arrival or event left, activeQ
and backoffQ empty, and every pod in the unschedulable pool already failed against the current
cluster (retrying it after the 5-minute leftover flush would fail the same way) and no
time-dependent verdict it met has expired since (a victim's PreemptionToleration, a PodGroup's
backoff) — or at `max_time` (`horizon`) when something could still change.
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
from extender.engine.preemption.toleration import PLUGIN as PREEMPTION_TOLERATION
from extender.engine.preemption.toleration import toleration_policy
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
from extender.simulator.eventlog import EventLog, rejection_counts
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
SUCCEEDED = "Succeeded"  # ran for its lifetime (`Arrival.run_for`), then completed
FAILED = "Failed"
#: Refused by the Priority admission plugin (an unknown PriorityClass): never queued.
REJECTED = "Rejected"

#: Why a run ended: nothing could change any more, or `max_time` cut it.
SETTLED = "settled"
HORIZON = "horizon"

#: The API server's default `terminationGracePeriodSeconds`.
DEFAULT_TERMINATION_GRACE_PERIOD = 30 * SECOND

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
    #: Time between a victim's eviction and its disappearance (it keeps its room meanwhile);
    #: None: each victim's own `terminationGracePeriodSeconds` (30 s when unset).
    victim_grace_period: int | None = None
    max_time: int | None = 24 * 3600 * SECOND
    extenders: Sequence[HttpExtender] = ()
    #: Also call the extender's bind verb (keeps an offline extender's state in step).
    extender_bind: bool = False
    #: Node utilization replayed into `state.node_metrics` at its sample times (`--utilization`).
    utilization: Utilization | None = None
    # -- extenders kept in sync (apiserver.py, `--serve-api`) --------------------------------
    #: Called with the simulation before each scheduling cycle: publish the cluster to the
    #: served API and wait until every extender observed it (`ServedCluster.before_cycle`).
    before_cycle: Callable[[Any], None] | None = None


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
    #: When it completed (Succeeded/Failed), was evicted, deleted or terminated by preemption.
    finished_at: int | None = None
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
    #: SETTLED (nothing could change any more) or HORIZON (`max_time` cut the run).
    end_reason: str = SETTLED
    #: "<extender>/<verb>" -> failed calls (transport errors, non-200, `Error` replies).
    extender_failures: dict[str, int] = field(default_factory=dict)


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
                 progress: ProgressFn | None = None, events: EventLog | None = None) -> None:
        self.config = config or SimulationConfig()
        #: The `--events` log; None: nothing is written and nothing is computed for it.
        self.events = events
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
        self.end_reason = SETTLED
        #: PreemptionToleration's deadlines: (virtual time a bound pod stops tolerating
        #: preemption, its priority, the class's minimum preemptable priority).
        self._toleration_deadlines: list[tuple[int, int, int]] = []
        self._tolerations = (profile.post_filter is not None
                             and profile.post_filter.name == PREEMPTION_TOLERATION)
        #: uid -> (run_for, final phase) of pods with a lifetime (`Arrival.run_for`).
        self._lifetimes: dict[str, tuple[int, str]] = {}
        #: uid -> the timer that completes a running pod at the end of its lifetime.
        self._finish_timers: dict[str, Any] = {}
        #: uid -> the timer that removes an evicted victim when its grace period ends.
        self._terminations: dict[str, Any] = {}
        #: The workload's controllers (`controllers.Controller`), and who created which pod:
        #: their hooks hear what becomes of their pods and answer with pods to create or
        #: delete (`Reaction`).
        self.controllers: list[Any] = list(getattr(workload, "controllers", ()))
        self._controller_of: dict[str, Any] = {}
        self.warnings.extend(getattr(workload, "warnings", ()))
        self._queue_sample: tuple | None = None
        self._allocation: tuple[int, tuple[float, float]] | None = None
        if events is not None:
            self.queue.on_move = self._log_move
            self.clock.on_advance = self._log_queues
        self._nodes_before = node_usage(state)
        self._admit_bound_pods()
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
        # Workload controllers start at their creation, after the pods created with them.
        for controller in self.controllers:
            self.timeline.at(controller.time, partial(self._controller_start, controller))

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

    # -- admission: PriorityClasses -------------------------------------------------------------

    def _admit(self, pod: PodView) -> PodView | str:
        """The Priority admission plugin on a pod being created: without `spec.priority`, the
        priority and preemptionPolicy of its `priorityClassName`, or of the `globalDefault`
        class (the lowest-valued one if several) when it names none, else 0 and
        PreemptLowerPriority. Returns the admitted pod, or the Forbidden message for a pod
        the API server would refuse (an unknown class; a preemptionPolicy other than the
        computed one). A pod that carries `spec.priority` is taken as it is: exported pods
        passed admission already."""
        spec = pod.pod_spec
        if spec is None or spec.priority is not None:
            return pod
        classes = self.state.priority_classes
        name = pod.priority_class_name
        if name:
            pc = classes.get(name)
            if pc is None:
                return f'pods "{pod.name}" is forbidden: no PriorityClass with name {name} was found'
        else:
            defaults = [c for c in classes.values() if c.global_default]
            pc = min(defaults, key=lambda c: (c.value, c.name)) if defaults else None
        value = pc.value if pc is not None else 0
        policy = pc.preemption_policy if pc is not None else "PreemptLowerPriority"
        if spec.preemption_policy is not None and spec.preemption_policy != policy:
            return (f'pods "{pod.name}" is forbidden: the string value of PreemptionPolicy '
                    f"({spec.preemption_policy}) must not be provided in pod spec; priority "
                    f"admission controller computed {policy} from the given PriorityClass name")
        if (value, policy, pc.name if pc is not None else name) == (
                pod.priority, pod.preemption_policy, pod.priority_class_name):
            return pod
        return pod_with(pod, priority=value, preemption_policy=policy,
                        priority_class_name=pc.name if pc is not None else name)

    def _admitted_raw(self, pod: PodView, raw: Mapping[str, Any]) -> dict[str, Any]:
        """The object as the API server stores it after admission (for the extender wire)."""
        out = dict(raw)
        spec = dict(out.get("spec") or {})
        spec["priority"] = pod.priority
        spec["preemptionPolicy"] = pod.preemption_policy
        if pod.priority_class_name:
            spec["priorityClassName"] = pod.priority_class_name
        out["spec"] = spec
        return out

    def _admit_bound_pods(self) -> None:
        """The snapshot's bound pods passed admission when they were created; a hand-written
        one that names a PriorityClass but has no (or a zero) `spec.priority` takes the
        class's value and preemptionPolicy. An unknown class is a warning (the pod runs
        already). Their PreemptionToleration deadlines are noted."""
        classes = self.state.priority_classes
        for pod in list(self.state.pods.values()):
            if not pod.node_name:
                continue
            if pod.priority == 0 and pod.priority_class_name:
                pc = classes.get(pod.priority_class_name)
                if pc is None:
                    self.warnings.append(
                        f"pod {pod.key} (bound to {pod.node_name}): no PriorityClass with name "
                        f"{pod.priority_class_name} was found; its priority stays 0")
                elif (pc.value, pc.preemption_policy) != (pod.priority, pod.preemption_policy):
                    pod = pod_with(pod, priority=pc.value, preemption_policy=pc.preemption_policy)
                    self.state.replace_view(pod)
            self._note_toleration(pod)

    def _note_toleration(self, pod: PodView) -> None:
        """Under PreemptionToleration, remember when a bound pod stops tolerating preemption
        (its PodScheduled time + the class's toleration-seconds): a pool pod that failed
        before that instant may succeed after it, with no cluster event in between."""
        if not self._tolerations or not pod.priority_class_name or pod.scheduled_time is None:
            return
        pc = self.state.priority_class(pod.priority_class_name)
        if pc is None:
            return
        try:
            policy = toleration_policy(pc)
        except ValueError:
            return
        if policy.toleration_seconds <= 0:
            return
        deadline = seconds(pod.scheduled_time + policy.toleration_seconds - self.workload.epoch)
        if deadline > self.clock.now():
            self._toleration_deadlines.append(
                (deadline, pod.priority, policy.minimum_preemptable_priority))

    # -- inputs: arrivals and events ------------------------------------------------------------

    def _arrive(self, arrival: Arrival, origin: str) -> None:
        now = self.clock.now()
        admitted = self._admit(arrival.pod)
        if isinstance(admitted, str):
            # The API server refuses the pod: it never exists, nothing schedules it.
            pod = arrival.pod
            rec = self._record(pod, origin)
            rec.arrived_at, rec.status, rec.failure = now, REJECTED, admitted
            self.settled += 1
            self.warnings.append(f"pod {pod.key} rejected at admission: {admitted}")
            if self.events is not None:
                self.events.emit(now, "arrive", pod=pod.key, priority=pod.priority)
                self.events.emit(now, "reject", pod=pod.key, message=admitted)
            return
        pod = admitted
        if arrival.raw:
            raw = arrival.raw if pod is arrival.pod else self._admitted_raw(pod, arrival.raw)
            self.raw_pods.setdefault(pod.uid, raw)
        if pod.pod_group:
            self.group_members.setdefault((pod.namespace, pod.pod_group), {})[pod.uid] = pod.gated
        controller = getattr(arrival, "controller", None)
        if controller is not None:
            self._controller_of[pod.uid] = controller
        run_for = getattr(arrival, "run_for", None)
        if run_for is not None:
            self._lifetimes[pod.uid] = (run_for, getattr(arrival, "finish", SUCCEEDED) or SUCCEEDED)
        rec = self._record(pod, origin)
        rec.arrived_at = now
        if self.events is not None:
            self.events.emit(now, "arrive", pod=pod.key, priority=pod.priority)
        if pod.node_name:  # already bound elsewhere: it just takes its room
            bound = pod_with(pod, start_time=self._epoch_now(),
                             scheduled_time=pod.scheduled_time or self._epoch_now())
            self.state.assume(bound, pod.node_name, math.inf)
            rec.status, rec.node, rec.scheduled_at = SCHEDULED, pod.node_name, now
            self.settled += 1
            self.version += 1
            if self.events is not None:
                self.events.emit(now, "bind", pod=pod.key, node=pod.node_name)
            self._started(self.state.pods[pod.uid])
            self.queue.assigned_pod_added(pod)
            self._tell_controller(pod.uid, "pod_bound", pod.node_name)
            return
        self.pending[pod.uid] = pod
        self.queue.add(pod)

    # -- workload controllers -------------------------------------------------------------------

    def _controller_start(self, controller: Any) -> None:
        self._react(controller, controller.start(self.clock.now(), self._node_views()))

    def _controller_sync(self, controller: Any) -> None:
        self._react(controller, controller.sync(self.clock.now()))

    def _node_views(self) -> list[Any]:
        return [self.state.nodes[name].node for name in sorted(self.state.nodes)]

    def _tell_controller(self, uid: str, hook: str, *args: Any) -> None:
        """Call the hook of the pod's controller (if any) and carry out its reaction."""
        controller = self._controller_of.get(uid)
        if controller is not None:
            self._react(controller, getattr(controller, hook)(uid, *args, self.clock.now()))

    def _nodes_told(self) -> None:
        """After a node event: DaemonSets follow the nodes."""
        if self.controllers:
            nodes = self._node_views()
            for controller in self.controllers:
                self._react(controller, controller.nodes_changed(nodes, self.clock.now()))

    def _react(self, controller: Any, reaction: Any) -> None:
        """A controller's `Reaction`, now: pods it creates arrive, pods it deletes go, and it
        is woken at `wake_at`."""
        for created in reaction.create:
            self.total += 1
            self._arrive(created, "workload")
        for key in reaction.delete:
            self._delete_pod_by_key(key)
        if reaction.wake_at is not None:
            self.timeline.at(max(reaction.wake_at, self.clock.now()),
                             partial(self._controller_sync, controller))

    def _started(self, pod: PodView) -> None:
        """A pod is bound: its lifetime (if any) starts, its toleration deadline is noted."""
        self._note_toleration(pod)
        lifetime = self._lifetimes.get(pod.uid)
        if lifetime is not None:
            run_for, phase = lifetime
            self._finish_timers[pod.uid] = self.timeline.at(
                self.clock.now() + run_for, partial(self._complete, pod.uid, phase), rank=2)

    def _complete(self, uid: str, phase: str) -> None:
        """A running pod's lifetime is over: it ends Succeeded or Failed. The scheduler's cache
        drops a terminal pod as if it were deleted (an AssignedPodDelete for the queue); the
        pod object stays (its PodGroup still counts it)."""
        self._finish_timers.pop(uid, None)
        pod = self.state.pods.get(uid)
        if pod is None or uid in self.waiting:
            return
        now = self.clock.now()
        rec = self.records.get(uid)
        if rec is not None:
            rec.status, rec.finished_at = phase, now
        self.state.delete_pod(pod.namespace, pod.name, uid)
        self.version += 1
        if self.events is not None:
            self.events.emit(now, "complete", pod=pod.key, phase=phase)
        self.queue.assigned_pod_deleted(pod)
        self._tell_controller(uid, "pod_finished", phase)

    def _stop_lifetime(self, uid: str) -> None:
        timer = self._finish_timers.pop(uid, None)
        if timer is not None:
            Timeline.cancel(timer)

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
            if self.events is not None:
                self.events.emit(self.clock.now(), "node", node=info.name,
                                 change="add" if old is None else "update")
            pre_check = node_pre_check(info)
            if old is None:
                self.queue.move_all_to_active_or_backoff(NODE_ADD, pre_check)
            else:
                for cluster_event in node_update_events(old.node, info.node):
                    self.queue.move_all_to_active_or_backoff(cluster_event, pre_check)
        elif event.action in ("cordonNode", "uncordonNode"):
            old = self.state.nodes.get(event.target)
            if old is None:
                self.warnings.append(
                    f"{event.action} at {to_seconds(event.time)}s: no node {event.target}")
                return
            cordon = event.action == "cordonNode"
            updated = self.state.set_node_unschedulable(event.target, cordon)
            assert updated is not None
            raw = self.raw_nodes.get(event.target)
            if raw is not None:  # the extender wire's copy (nodeCacheCapable: false)
                self.raw_nodes[event.target] = {
                    **raw, "spec": {**(raw.get("spec") or {}), "unschedulable": cordon}}
            self._nodes_changed()
            if self.events is not None:
                self.events.emit(self.clock.now(), "node", node=updated.name, change="update")
            pre_check = node_pre_check(updated)
            for cluster_event in node_update_events(old.node, updated.node):
                self.queue.move_all_to_active_or_backoff(cluster_event, pre_check)
        elif event.action == "deleteNode":
            if event.target not in self.state.nodes:
                self.warnings.append(f"deleteNode at {to_seconds(event.time)}s: no node {event.target}")
                return
            self.state.delete_node(event.target)
            self.tree.remove(event.target)
            self._nodes_changed()
            if self.events is not None:
                self.events.emit(self.clock.now(), "node", node=event.target, change="delete")
        else:  # never silently: a workload action this loop does not know
            self.warnings.append(f"{event.action} at {to_seconds(event.time)}s: not simulated")
            return
        if event.action != "deletePod":
            self._nodes_told()

    def _delete_pod_by_key(self, key: str) -> None:
        namespace, _, name = key.partition("/")
        pending = next((p for p in self.pending.values()
                        if p.namespace == namespace and p.name == name), None)
        if pending is not None or self.state.pod_by_key(namespace, name) is not None:
            if self.events is not None:
                self.events.emit(self.clock.now(), "delete", pod=key)
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
            rec = self._record(pending, "workload")
            rec.status, rec.finished_at = DELETED, self.clock.now()
            self.settled += 1
            self.version += 1  # its nomination, if any, is gone
            self._tell_controller(pending.uid, "pod_deleted")
            return
        bound = self.state.pod_by_key(namespace, name)
        if bound is None or not bound.node_name:
            self.warnings.append(f"deletePod at {to_seconds(self.clock.now())}s: no pod {key}")
            return
        bound_rec = self.records.get(bound.uid)
        if bound_rec is not None and bound_rec.status == SCHEDULED:
            bound_rec.status, bound_rec.finished_at = DELETED, self.clock.now()
        self._remove_bound(bound.uid)
        self._tell_controller(bound.uid, "pod_deleted")

    def _terminate(self, uid: str, key: str, node: str, by: str) -> None:
        """A preemption victim's grace period is over: it is gone (unless it went already)."""
        self._terminations.pop(uid, None)
        if uid not in self.state.pods and uid not in self.pending:
            return
        rec = self.records.get(uid)
        if rec is not None and rec.finished_at is None:
            rec.finished_at = self.clock.now()
        if self.events is not None:
            self.events.emit(self.clock.now(), "evict", pod=key, node=node, by=by,
                             terminated=True)
        self._remove_bound(uid)

    def _remove_bound(self, uid: str) -> None:
        self._stop_lifetime(uid)
        termination = self._terminations.pop(uid, None)
        if termination is not None:  # deleted while terminating: its timer has nothing to do
            Timeline.cancel(termination)
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

    # -- the event log (`--events`; only called when there is one) ------------------------------

    def _log_move(self, pod: PodView, source: str, target: str, event: str) -> None:
        assert self.events is not None
        self.events.emit(self.clock.now(), "move", pod=pod.key, **{"from": source},
                         to=target, event=event)

    def _log_attempt(self, info: QueuedPodInfo, result: str, node: str = "", *,
                     statuses: Mapping[str, Any] | None = None) -> None:
        assert self.events is not None
        pod = info.pod
        fields: dict[str, Any] = {"pod": pod.key, "cycle": self.cycles, "result": result}
        if node:
            fields["node"] = node
        else:
            fields["message"] = self.records[pod.uid].message
        plugins, reasons = rejection_counts(statuses or {})
        fields["plugins"] = plugins
        fields["reasons"] = reasons
        self.events.emit(self.clock.now(), "attempt", **fields)

    def _allocated(self) -> tuple[float, float]:
        """Cluster-wide requested / allocatable cpu and memory (0..1), per state version."""
        if self._allocation is None or self._allocation[0] != self.version:
            used_cpu = used_mem = all_cpu = all_mem = 0
            for info in self.state.nodes.values():
                used_cpu += info.requested.milli_cpu
                used_mem += info.requested.memory
                alloc = info.node.allocatable
                all_cpu += alloc.milli_cpu
                all_mem += alloc.memory
            self._allocation = (self.version, (
                round(used_cpu / all_cpu, 6) if all_cpu else 0.0,
                round(used_mem / all_mem, 6) if all_mem else 0.0))
        return self._allocation[1]

    def _log_queues(self, t: int) -> None:
        """The sub-queue sizes and allocation at the end of instant `t`, when they changed."""
        assert self.events is not None
        queue = self.queue
        cpu, memory = self._allocated()
        sample = (queue.num_active, queue.num_backoff, queue.num_unschedulable,
                  len(self.pending), cpu, memory)
        if sample == self._queue_sample:
            return
        self._queue_sample = sample
        self.events.emit(t, "queues", active=sample[0], backoff=sample[1],
                         unschedulable=sample[2], pending=sample[3], cpuAllocated=cpu,
                         memoryAllocated=memory)

    # -- the loop -------------------------------------------------------------------------------

    def _stale_pool_timestamp(self) -> int | None:
        """Oldest queue timestamp among pool pods whose retry could end differently: those
        that failed before the latest change, or before a time-dependent verdict they met
        expires (or expired)."""
        infos = self.queue.unschedulable_infos()
        if self._toleration_deadlines:
            # Pods fail from now on: deadlines no pool pod failed before are of no use.
            oldest = min((info.timestamp for info in infos), default=self.clock.now())
            self._toleration_deadlines = [d for d in self._toleration_deadlines if d[0] > oldest]
        latest: dict[int, int] = {}  # preemptor priority -> its last toleration deadline
        stale = [info.timestamp for info in infos
                 if self._failed_version.get(info.pod.uid, -1) < self.version
                 or self._verdict_expires(info, latest)]
        return min(stale, default=None)

    def _verdict_expires(self, info: QueuedPodInfo, latest: dict[int, int]) -> bool:
        """Did the pod fail before a time-dependent verdict changes (without any cluster
        event)? A victim's PreemptionToleration ends, or its PodGroup's backoff
        (`podGroupBackoffSeconds`, "failed recently") ends. `latest` memoizes, per preemptor
        priority, the last deadline of the victims that tolerate it."""
        pod, failed = info.pod, info.timestamp
        if self._toleration_deadlines and pod.preemption_policy != "Never":
            priority = pod.priority
            if priority not in latest:
                latest[priority] = max((deadline for deadline, victim_priority, minimum
                                        in self._toleration_deadlines
                                        if victim_priority < priority < minimum), default=-1)
            if latest[priority] > failed:
                return True
        if self.gang is not None and pod.pod_group:
            full_name, _ = self.gang.manager.group_of(pod, self.ctx)
            until = self.gang.manager.backed_off._until.get(full_name)
            if until is not None and until > self._epoch_of(failed):
                return True
        return False

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

    def _has_active(self) -> bool:
        return self.queue.num_active > 0

    def run(self) -> SimulationResult:
        """Schedule until nothing can change (`settled`) or `max_time` (`horizon`)."""
        max_time = self.config.max_time
        while True:
            self.timeline.run_until(self.clock.now())
            if self.queue.num_active:
                if max_time is not None and self.clock.now() >= max_time:
                    self.end_reason = HORIZON
                    break
                if self.config.before_cycle is not None:  # --serve-api: extenders in sync
                    self.config.before_cycle(self)
                self._schedule_one()
                continue
            wake = self._next_wakeup()
            if wake is None:
                self.end_reason = SETTLED
                break
            if max_time is not None and wake > max_time:
                # Up to the horizon; a pod a flush hands over before it is still scheduled.
                self.timeline.run_until(max_time, stop=self._has_active)
                if self.queue.num_active and self.clock.now() < max_time:
                    continue
                self.end_reason = HORIZON
                break
            # Stop at the first instant that hands the scheduler a pod (a leftover flush may
            # move a pool pod well before `wake`): kube-scheduler pops it then.
            self.timeline.run_until(wake, stop=self._has_active)
        self.truncated = self.end_reason == HORIZON
        if self.events is not None:
            self._log_queues(self.clock.now())
            self.events.emit(self.clock.now(), "end", reason=self.end_reason)
        return self.result()

    def result(self) -> SimulationResult:
        if self.waiting:
            self.warnings.append(
                f"{len(self.waiting)} pod(s) still waiting at Permit when the run stopped: "
                + ", ".join(sorted(f"{w.info.pod.namespace}/{w.info.pod.name}"
                                   for w in self.waiting.values())))
        calls: dict[str, int] = {}
        failures: dict[str, int] = {}
        for ext in self.config.extenders:
            for verb, n in ext.calls.items():
                calls[f"{ext.name}/{verb}"] = n
            for verb, n in getattr(ext, "failures", {}).items():
                if n:
                    failures[f"{ext.name}/{verb}"] = n
        return SimulationResult(self.records, self._nodes_before, node_usage(self.state),
                                self.cycles, self.clock.now(), self.last_bind_time,
                                self.truncated, self.config, self.warnings, calls,
                                self.replay.record if self.replay is not None else None,
                                end_reason=self.end_reason, extender_failures=failures)

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
            error = self._bind(info, placement.node.name, attempt=True)
            if not error:
                return
            placement = Placement([], placement.diagnosis, error=error)
            if self.gang is not None:
                self._unreserve(pod)
        elif placement.node is not None:
            placement = Placement([], placement.diagnosis, error=f'node "{placement.node.name}" not found')
        self._handle_failure(info, placement, post, len(nodes))

    # -- outcomes -------------------------------------------------------------------------------

    def _bind(self, info: QueuedPodInfo, node_name: str, *, attempt: bool = False) -> str:
        """Assume and bind; returns an error message if an extender's bind failed.
        `attempt`: this ends a scheduling cycle (not a pod allowed at Permit)."""
        pod = info.pod
        if self.config.extender_bind:
            binder = next((e for e in self.config.extenders if e.bind_verb and e.is_interested(pod)), None)
            if binder is not None:
                try:
                    binder.bind(pod, node_name)
                except ExtenderError as exc:
                    return str(exc)
        now = self.clock.now()
        epoch_now = self._epoch_now()
        # The binding sets PodScheduled=True (PreemptionToleration counts from it).
        self.state.assume(pod_with(pod, start_time=epoch_now, scheduled_time=epoch_now),
                          node_name, math.inf)
        self.queue.nominator.delete(pod)
        del self.pending[pod.uid]
        rec = self.records[pod.uid]
        rec.status, rec.node, rec.scheduled_at = SCHEDULED, node_name, now
        rec.failure, rec.nominated_node = "", ""
        self.last_bind_time = now
        self.version += 1
        self.settled += 1
        if self.events is not None:
            if attempt:
                self._log_attempt(info, "scheduled", node_name)
            self.events.emit(now, "bind", pod=pod.key, node=node_name)
        bound = self.state.pods[pod.uid]
        self._started(bound)
        # The informer's add event for the bound pod.
        self.queue.assigned_pod_added(bound)
        if self.progress is not None:
            self.progress(self.settled, self.total, self.cycles)
        self._tell_controller(pod.uid, "pod_bound", node_name)
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
        if self.events is not None:
            self._log_attempt(info, "error" if placement.error else "unschedulable",
                              statuses=placement.diagnosis.statuses)
        self.queue.add_unschedulable_if_not_present(info, self.queue.scheduling_cycle)
        if post is not None and post.nominate is not None:
            before = self.queue.nominator.nominated_node(info.pod)
            self.queue.nominator.add(info.pod, post.nominate)
            self._patch_nomination(info.pod, post.nominate)
            rec.nominated_node = post.nominate
            if (before or "") != post.nominate:
                self.version += 1  # a reservation appeared or went away
            if post.nominate and self.events is not None:
                self.events.emit(self.clock.now(), "nominate", pod=pod.key, node=post.nominate)
        if post is not None and post.victims:
            if self.events is not None:
                self.events.emit(self.clock.now(), "preempt", pod=pod.key, node=post.node,
                                 victims=[v.key for v in post.victims])
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

    def _grace_period(self, victim: PodView) -> int:
        """How long an evicted victim keeps its room: `--victim-grace-period` when given,
        else its own `terminationGracePeriodSeconds` (30 s when unset, as the API defaults)."""
        if self.config.victim_grace_period is not None:
            return self.config.victim_grace_period
        if victim.termination_grace_period is None:
            return DEFAULT_TERMINATION_GRACE_PERIOD
        return seconds(max(victim.termination_grace_period, 0))

    def _evict(self, preemptor: PodView, node: str, victims: Sequence[PodView]) -> None:
        """prepareCandidate: evict the victims, clear lower-priority nominations on the node.
        Each victim terminates after its grace period and keeps its room until then (the
        preemptor waits, nominated). A victim already terminating (chosen again: preemption
        does not skip terminating pods) keeps its first deletion: a second delete does not
        extend the grace period, and the pod counts once as preempted, by its first
        preemptor."""
        now = self.clock.now()
        for victim in victims:
            if victim.uid in self._terminations:
                continue
            # A victim waiting at Permit is rejected at once (it runs nowhere yet).
            grace = 0 if victim.uid in self.waiting else self._grace_period(victim)
            vrec = self._record(victim, "cluster")
            vrec.status, vrec.preempted_by = PREEMPTED, f"{preemptor.namespace}/{preemptor.name}"
            if not vrec.node:
                vrec.node = victim.node_name
            self.records[preemptor.uid].preemptions_caused.append(vrec.key)
            self._stop_lifetime(victim.uid)  # it is terminated, not completed
            if self.events is not None:
                self.events.emit(now, "evict", pod=victim.key, node=victim.node_name or node,
                                 by=preemptor.key, gracePeriodSeconds=to_seconds(grace))
            if grace > 0:
                self._mark_terminating(victim)
            self._terminations[victim.uid] = self.timeline.at(
                now + grace, partial(self._terminate, victim.uid, victim.key,
                                     victim.node_name or node, preemptor.key), rank=2)
        for other in self.queue.nominator.nominated_pods_for_node(node):
            if other.priority < preemptor.priority and other.nominated_node_name:
                self._patch_nomination(other, "")
                if other.uid in self.records:
                    self.records[other.uid].nominated_node = ""
        self.version += 1
        # Controllers replace a pod as soon as it is terminating (it is no longer active).
        for victim in victims:
            self._tell_controller(victim.uid, "pod_deleted")

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
        queue hears the event its plugin registered. Another kind the state keeps (a
        PriorityClass: pods arriving later resolve their priority from it) is just taken:
        no plugin of the queue listens to it."""
        obj = created.obj
        if created.stamp:  # the API server's stamp, whole seconds as metav1.Time keeps it
            stamp = datetime.fromtimestamp(math.floor(self._epoch_now()), UTC)
            obj.metadata.creation_timestamp = stamp.strftime("%Y-%m-%dT%H:%M:%SZ")
        namespace, name = obj.metadata.namespace, obj.metadata.name
        if created.kind not in ("PodGroup", "ElasticQuota"):
            self.state.apply(created.kind, obj)
            self.version += 1
            return
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
            if self.events is not None:
                self.events.emit(self.clock.now(), "permit", pod=pod.key, result="reject",
                                 message=PODGROUP_NOT_FOUND)
            self._fail_at_permit(info, node_name, status, clear_nomination=True, attempt=True)
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
        if self.events is not None:
            self._log_attempt(info, "waiting", node_name)
            self.events.emit(now, "permit", pod=pod.key, result="wait",
                             message=f"waiting at plugin {COSCHEDULING} for at most "
                                     f"{to_seconds(wait):g}s")
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
        if self.events is not None:
            self.events.emit(self.clock.now(), "permit", pod=info.pod.key, result="allow",
                             message="")
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
            if self.events is not None:
                self.events.emit(self.clock.now(), "permit", pod=waiting.info.key,
                                 result="reject", message=message)
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
                        clear_nomination: bool, attempt: bool = False) -> None:
        """The failure handler for a pod rejected at Permit: a FitError over one node whose
        status names the rejecting plugin (as kube-scheduler wraps a Permit rejection since
        kubernetes#119046 and a WaitOnPermit one since #119785, 1.28–1.29). `attempt`: the
        rejection ends a scheduling cycle (not a waiting pod's binding cycle)."""
        pod = info.pod
        rec = self.records[pod.uid]
        rec.failure = (1, {node_name: status}, "", "")
        info.unschedulable_plugins = {status.plugin} if status.plugin else set()
        if attempt and self.events is not None:
            self._log_attempt(info, "unschedulable", statuses={node_name: status})
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
