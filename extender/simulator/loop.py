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

The simulation is one class assembled from one module per job: this module (the cycle, the
queue's interplay, bind, failure handling, PostFilter, run and settle), `cluster.py`
(`SimulatedCluster`: the state the run mutates), `gang.py` (Coscheduling's QueueSort key and
Permit stage), `profiles.py` (which profile schedules a pod), `eventlog.py` (`EventLogging`),
`context.py` (the engine's view), `records.py` (settings and results) and
`extender_preemption.py` (the extenders' step of the engine's preemption). The names callers
import from here (`Simulation`, `SimulationConfig`, `SimulationResult`, `PodRecord`, …) stay
importable from here.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from extender.engine.args import parse_version
from extender.engine.cluster import ClusterState
from extender.engine.framework import ClusterContext, Code
from extender.engine.plugins.coscheduling.core import NAME as COSCHEDULING
from extender.engine.plugins.coscheduling.core import (
    OPTIMISTIC_REJECTION,
)
from extender.engine.plugins.coscheduling.store import PodGroupStore
from extender.engine.preemption.evaluator import candidate_on
from extender.engine.preemption.toleration import PLUGIN as PREEMPTION_TOLERATION
from extender.engine.profile import Profile
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.simulator.changes import NodeChanges
from extender.simulator.clock import (
    Timeline,
    VirtualClock,
    to_seconds,
)
from extender.simulator.cluster import (
    SimulatedCluster,
    pod_with,
)
from extender.simulator.context import SimContext
from extender.simulator.dryrun import DryRunMemo
from extender.simulator.eventlog import EventLog, EventLogging
from extender.simulator.extender_preemption import extender_step
from extender.simulator.extenders import extenders_binding
from extender.simulator.filtermemo import FilterMemo
from extender.simulator.gang import GangScheduling
from extender.simulator.nodetree import NodeTree
from extender.simulator.nominator import Nominator
from extender.simulator.permit import (
    WaitingPod,
)
from extender.simulator.profiles import (
    DEFAULT_SCHEDULER_NAME,
    ProfileRouting,
    SchedulingProfile,
    check_profiles,
)
from extender.simulator.queue import (
    BACKOFF_BY_FAILURE,
    BINDING_ENDS_NOMINATION_QUIETLY,
    POP_FROM_BACKOFF_Q,
    QUEUEING_HINTS,
    PriorityQueue,
    QueuedPodInfo,
    pod_key,
)
from extender.simulator.records import (
    DEFAULT_TERMINATION_GRACE_PERIOD,
    DELETED,
    DRA_NOT_FOUND,
    FAILED,
    HORIZON,
    PENDING,
    PREEMPTED,
    REJECTED,
    SCHEDULED,
    SETTLED,
    SUCCEEDED,
    NodeUsage,
    PodRecord,
    ProgressFn,
    SimulationConfig,
    SimulationResult,
    cycle_cost,
    dra_speaks,
    fit_error,
    node_usage,
)
from extender.simulator.schedule import Algorithm, Placement
from extender.simulator.utilization import UtilizationReplay
from extender.simulator.workload import Arrival, Workload

__all__ = [
    "DEFAULT_SCHEDULER_NAME", "SchedulingProfile", "check_profiles",
    "DEFAULT_TERMINATION_GRACE_PERIOD", "DELETED", "FAILED", "HORIZON", "PENDING", "PREEMPTED",
    "REJECTED", "SCHEDULED", "SETTLED", "SUCCEEDED", "NodeUsage", "PodRecord", "ProgressFn",
    "SimContext", "Simulation", "SimulationConfig", "SimulationResult", "fit_error",
    "node_usage", "pod_with",
]


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





class Simulation(SimulatedCluster, GangScheduling, ProfileRouting, EventLogging):
    def __init__(self, state: ClusterState, profile: Profile, workload: Workload,
                 config: SimulationConfig | None = None, *,
                 raw_pods: Mapping[str, Mapping[str, Any]] | None = None,
                 raw_nodes: Mapping[str, Mapping[str, Any]] | None = None,
                 progress: ProgressFn | None = None, events: EventLog | None = None,
                 profiles: Sequence[SchedulingProfile] | None = None) -> None:
        """`profiles`: route each pod to the profile of its `spec.schedulerName` (kube-scheduler
        with several profiles: one queue, one cluster, each pod scheduled by its own profile;
        a pod no profile names stays unscheduled, with a warning); `profile` is then the
        first's. None: `profile` schedules every pod."""
        if profiles:
            check_profiles(profiles)
            profile = profiles[0].profile
        self.config = config or SimulationConfig()
        #: The `--events` log; None: nothing is written and nothing is computed for it.
        self.events = events
        self.state = state
        self.profile = profile
        #: The kube-scheduler release whose wording the run follows (`kubernetesVersion`).
        self.version_of_profile = parse_version(profile.policy.kubernetes_version)
        self.workload = workload
        self.clock = VirtualClock()
        # The state stamps its changes; keep it off the wall clock.
        state.clock = self.epoch_now
        # And the Unix-time one (when pods became assigned, against the load metrics' window).
        state.wall_clock = self.epoch_now
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
        #: (namespace, PodGroup) -> (rounds in a row its rejected pods were retried at once,
        #: when the last round began) (`gang.GANG_RETRY_ROUNDS`).
        self._gang_rounds: dict[tuple[str, str], tuple[int, int]] = {}
        #: (namespace, PodGroup) -> {uid: gated} of every pod naming it that exists (pending,
        #: waiting, bound or finished): what Coscheduling's pod lister lists.
        self.group_members: dict[tuple[str, str], dict[str, bool]] = {
            group: dict(members) for group, members in state.store(PodGroupStore).members.items()}
        #: Which nodes changed when (every change a node-local verdict reads): what lets a
        #: retry reuse its last attempt's verdicts on the others (`config.fast_paths`).
        self.changes = NodeChanges()
        fast, verify = self.config.fast_paths != "off", self.config.fast_paths == "verify"
        self.filter_memo = FilterMemo(self.changes) if fast else None
        # Not beside Coscheduling (its PreFilter keeps state, and a pod of a group may be
        # rejected as a group), nor with extenders (their filter verdicts, which decide the
        # potential nodes, are theirs): the engine's own dry run then.
        self.dry_runs = DryRunMemo(self.changes, verify=verify) \
            if fast and self.gang is None and not self.config.extenders else None
        self.queue = PriorityQueue(
            self.clock,
            pod_initial_backoff=self.config.pod_initial_backoff,
            pod_max_backoff=self.config.pod_max_backoff,
            pod_max_in_unschedulable_pods=self.config.pod_max_in_unschedulable_pods,
            # Cluster events of interest: those of every profile's plugins.
            plugins=tuple(dict.fromkeys(
                name for p in (profiles or [SchedulingProfile("", profile)])
                for name in p.profile.filter_names)),
            nominator=Nominator(pod_alive=lambda p: p.uid in self.pending,
                                on_change=self.changes.node),
            sort_key=self._queue_sort_key(profile),
            queueing_hints=self.version_of_profile >= QUEUEING_HINTS,
            pop_from_backoff=self.version_of_profile >= POP_FROM_BACKOFF_Q,
            backoff_by_failure=self.version_of_profile >= BACKOFF_BY_FAILURE,
            window_phase=workload.epoch_ns,
        )
        self.queue.start(self.timeline)
        self.rng = random.Random(self.config.seed)
        self.algorithm = Algorithm(profile,
                                   percentage_of_nodes_to_score=self.config.percentage_of_nodes_to_score,
                                   extenders=self.config.extenders, rng=self.rng,
                                   memo=self.filter_memo, verify=verify,
                                   table=state.table if fast else None)
        #: schedulerName -> (its profile, its algorithm) when pods are routed by profile;
        #: None: `profile` schedules every pod. The algorithms share the RNG and the
        #: `nextStartNodeIndex` (the Scheduler's, not a profile's, upstream).
        self._schedulers: dict[str, tuple[Profile, Algorithm]] | None = None
        if profiles:
            self._schedulers = {
                p.scheduler_name or DEFAULT_SCHEDULER_NAME: (p.profile, Algorithm(
                    p.profile, percentage_of_nodes_to_score=p.percentage_of_nodes_to_score,
                    extenders=self.config.extenders, rng=self.rng, memo=self.filter_memo,
                    verify=verify, table=state.table if fast else None))
                for p in profiles}
        #: schedulerName -> pods that arrived naming it while no profile has it.
        self._unrouted: dict[str, int] = {}
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
        self._tolerations = any(
            p.post_filter is not None and p.post_filter.name == PREEMPTION_TOLERATION
            for p in ([q.profile for q in profiles] if profiles else [profile]))
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

    # -- set-up ---------------------------------------------------------------------------------------

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



    # -- the loop -------------------------------------------------------------------------------------

    def _stale_pool_timestamp(self) -> int | None:
        """Oldest queue timestamp among pool pods whose retry could end differently: those
        that failed before the latest change, or before a time-dependent verdict they met
        expires (or expired)."""
        if self._toleration_deadlines:
            # Pods fail from now on: deadlines no pool pod failed before are of no use.
            first = next(self.queue.unschedulable_by_age(), None)
            oldest = first.timestamp if first is not None else self.clock.now()
            self._toleration_deadlines = [d for d in self._toleration_deadlines if d[0] > oldest]
        latest: dict[int, int] = {}  # preemptor priority -> its last toleration deadline
        failed, version = self._failed_version, self.version
        # Oldest first: the first stale pod is the answer (usually the very first).
        for info in self.queue.unschedulable_by_age():
            if failed.get(info.pod.uid, -1) < version or self._verdict_expires(info, latest):
                return info.timestamp
        return None

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

    def _can_pop(self) -> bool:
        return self.queue.can_pop

    def run(self) -> SimulationResult:
        """Schedule until nothing can change (`settled`) or `max_time` (`horizon`)."""
        max_time = self.config.max_time
        while True:
            self.timeline.run_until(self.clock.now())
            if self.queue.can_pop:
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
                self.timeline.run_until(max_time, stop=self._can_pop)
                if self.queue.can_pop and self.clock.now() < max_time:
                    continue
                self.end_reason = HORIZON
                break
            # Stop at the first instant that hands the scheduler a pod (a leftover flush may
            # move a pool pod well before `wake`): kube-scheduler pops it then.
            self.timeline.run_until(wake, stop=self._can_pop)
        self.truncated = self.end_reason == HORIZON
        if self.events is not None:
            self._log_queues(self.clock.now())
            self.events.emit(self.clock.now(), "end", reason=self.end_reason)
        return self.result()

    def result(self) -> SimulationResult:
        if self._schedulers is not None:
            names = ", ".join(self._schedulers)
            for name, n in sorted(self._unrouted.items()):
                self.warnings.append(
                    f"{n} pod(s) name schedulerName {name!r}, which no profile has ({names}): "
                    "left unscheduled (kube-scheduler leaves them to another scheduler)")
        missing = sorted(getattr(self.queue_sort, "missing", ()))
        if missing:
            namespaces = ", ".join(self.queue_sort.args.namespaces)
            self.warnings.append(
                f"TopologicalSort: AppGroup(s) {', '.join(missing)} of queued pods in none of its "
                f"namespaces ({namespaces}): those pods were ordered by priority (scheduler-"
                "plugins' TopologicalSort fails on them; set its namespaces)")
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
                                end_reason=self.end_reason, extender_failures=failures,
                                profiles={name: (profile, algorithm.percentage) for name,
                                          (profile, algorithm) in (self._schedulers or {}).items()}
                                if self._schedulers and len(self._schedulers) > 1 else {})

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
        profile, algorithm = self._scheduler_for(pod)
        if algorithm is not self.algorithm:  # one nextStartNodeIndex for every profile
            algorithm.next_start_node_index = self.algorithm.next_start_node_index
        placement = algorithm.schedule(pod, nodes, self.queue.nominator, self.ctx,
                                       pod_raw, self.raw_nodes)
        if algorithm is not self.algorithm:
            self.algorithm.next_start_node_index = algorithm.next_start_node_index
        if placement.node is not None:
            self._note_ties(rec, pod, placement)
        post: _PostFilter | None = None
        if placement.node is None and not placement.error:
            post = self._post_filter(pod, placement, pod_raw, profile)
        # The cycle takes time; flushers and events run meanwhile, as they would concurrently.
        nominator = self.queue.nominator
        others = len(nominator) - (pod in nominator)
        self.timeline.run_until(start + cycle_cost(
            self.config, placed=placement.node is not None,
            nominated=post is not None and bool(post.node), nominated_pods=others))
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

    def _note_ties(self, rec: PodRecord, pod: PodView, placement: Placement) -> None:
        """Record the nodes that shared the top score; with `config.follow`, take the real
        run's node where it is one of them."""
        assert placement.node is not None
        tied = [placement.node.name]
        if len(placement.feasible) > 1 and len(placement.totals):
            scores = np.asarray(placement.totals)
            tied = [placement.feasible[i].name for i in np.flatnonzero(scores == scores.max())]
        rec.tied = tied if len(tied) > 1 else []
        if self.config.follow is not None:
            choice = self.config.follow.choose(pod, tied, placement.node.name,
                                                to_seconds(self.clock.now()))
            if choice is not None and choice != placement.node.name:
                placement.node = next(n for n in placement.feasible if n.name == choice)

    # -- outcomes -------------------------------------------------------------------------------------

    def _bind(self, info: QueuedPodInfo, node_name: str, *, attempt: bool = False) -> str:
        """Assume and bind; returns an error message if an extender's bind failed.
        `attempt`: this ends a scheduling cycle (not a pod allowed at Permit)."""
        pod = info.pod
        if self.config.extender_bind:
            _, error = extenders_binding(self.config.extenders, pod, node_name,
                                         self.version_of_profile)
            if error:
                return error
        now = self.clock.now()
        epoch_now = self.epoch_now()
        # The binding sets PodScheduled=True (PreemptionToleration counts from it).
        self.state.assume(pod_with(pod, start_time=epoch_now, scheduled_time=epoch_now),
                          node_name, math.inf)
        self.changes.node(node_name)
        self._forget_attempts(pod.uid)
        self.queue.nominator.delete(pod)
        self.queue.done(pod_key(pod))
        pending = self.pending.pop(pod.uid)
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
        # The informer's add event for the bound pod; before 1.35, also its delete event as
        # an unscheduled pod, which ends the nomination it had.
        self.queue.assigned_pod_added(bound)
        if pending.nominated_node_name and \
                self.version_of_profile < BINDING_ENDS_NOMINATION_QUIETLY:
            self.queue.nominated_pod_gone(pending)
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
                           placement.diagnosis.pre_filter_msg, self.version_of_profile,
                           placement.diagnosis.pre_filter_stopped)
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

    # -- preemption -----------------------------------------------------------------------------------

    def _post_filter(self, pod: PodView, placement: Placement, pod_raw: Mapping[str, Any],
                     profile: Profile) -> _PostFilter:
        """`RunPostFilterPlugins`: the profile's preemption, then (with Coscheduling enabled)
        Coscheduling's PostFilter unless preemption succeeded or failed with an error. The
        Unschedulable statuses' reasons join with ", " into the FitError's PostFilterMsg; the
        last plugin result that is not a no-op (preemption's cleared nomination) stands. In
        1.34 to 1.36, DynamicResources' PostFilter runs first and, when PreFilter stopped
        before its own, errs: then no other runs (`records.fit_error` words it)."""
        if placement.diagnosis.pre_filter_stopped and dra_speaks(self.version_of_profile):
            return _PostFilter(DRA_NOT_FOUND, code=Code.ERROR)
        post = self._preemption(pod, placement, pod_raw, profile)
        if self.gang is None or post.nominate or post.code != Code.UNSCHEDULABLE:
            return post
        status, reject = self.gang.manager.post_filter(pod, self.ctx, self.epoch_now())
        reasons = ([post.message] if post.message else []) + list(status.reasons)
        post.message = ", ".join(reasons)
        if reject:
            post.reject_group = (pod.namespace, pod.pod_group)
            self._resort_group(post.reject_group)  # the group's failure time changed
        return post

    def _preemption(self, pod: PodView, placement: Placement, pod_raw: Mapping[str, Any],
                    profile: Profile) -> _PostFilter:
        plugin = profile.post_filter
        if plugin is None:
            return _PostFilter()
        now = self.epoch_now()
        step = extender_step(self.config.extenders, pod, pod_raw, self.state.nodes,
                             self.raw_pods)
        if self.dry_runs is not None:
            result = self.dry_runs.post_filter(
                profile, pod, placement.diagnosis.statuses, self.ctx, now, self.rng,
                call_extenders=step, filters=placement.diagnosis.local_filters,
                nominated=self.queue.nominator.nominated_node(pod) is not None)
        else:
            result = plugin.post_filter(profile, pod, placement.diagnosis.statuses, self.ctx,
                                        now, self.rng, call_extenders=step)
        if result.status.code != Code.SUCCESS:
            return _PostFilter(result.status.message, "" if result.clear_nomination else None,
                               code=result.status.code)
        node, victims = result.node_name, result.victims
        assert victims is not None
        if self.config.follow is not None:
            node, victims = self._follow_preemption(profile, pod, node, victims, now)
        return _PostFilter("", node, node, victims.pods)

    def _follow_preemption(self, profile: Profile, pod: PodView, node: str, victims: Any,
                           now: float) -> tuple[str, Any]:
        """With `config.follow`: the node a real kube-scheduler preempted on, when preempting
        there makes the pod fit too (it chose among candidates found from a random offset,
        with ties in Go's map order); its victims are then this dry run's for that node."""
        def victims_on(name: str) -> Any:
            return candidate_on(profile, pod, name, self.ctx, now)

        real = self.config.follow.choose_preemption(pod, node, victims_on)
        if real is None:
            return node, victims
        return real
