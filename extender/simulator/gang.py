"""Coscheduling in the loop: its QueueSort key and its Permit stage (waiting pods, allow,
timeout, Unreserve, the rejected binding cycles). A mixin of `loop.Simulation`."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from extender.engine.framework import Code, Status
from extender.engine.plugins.coscheduling.core import NAME as COSCHEDULING
from extender.engine.plugins.coscheduling.core import NOT_FOUND as PODGROUP_NOT_FOUND
from extender.engine.plugins.coscheduling.core import (
    UNRESERVE_REJECTION,
    PermitCode,
)
from extender.engine.plugins.node_resource_topology.store import TopologyStore
from extender.engine.profile import Profile
from extender.engine.queuesort import queue_sort_plugin
from extender.model.pod import PodView
from extender.simulator.clock import (
    Timeline,
    seconds,
    to_seconds,
)
from extender.simulator.context import SimContext
from extender.simulator.events import ASSIGNED_POD_DELETE
from extender.simulator.permit import (
    MAX_PERMIT_TIMEOUT,
    WaitingPod,
    timeout_message,
)
from extender.simulator.queue import (
    BACKOFF_WINDOW,
    QueuedPodInfo,
)

#: Rounds a rejected group is retried at once before the race that ends it in kube-scheduler
#: 1.33+ (popping backoffQ when activeQ is empty) is taken to have happened: a rejected pod's
#: Unreserve, run in its own binding goroutine, lands after the next round's first pod started
#: waiting and rejects it too, leaving every member in the unschedulable pool. Measured on the
#: README's gang example (scheduler-plugins' kube-scheduler 1.34.4, three runs): about 40, 10
#: and 23 rounds; the simulator, which has no goroutines, takes their mean.
GANG_RETRY_ROUNDS = 24


def _other_than(uid: str) -> Callable[[PodView], bool]:
    return lambda pod: pod.uid != uid


class GangScheduling:
    """Coscheduling's extension points that live in the loop (a mixin of `loop.Simulation`)."""

    def _queue_sort_key(self, profile: Profile) -> Any:
        """activeQ's order: Coscheduling's QueueSort when its filter is enabled, else the
        policy's queue sort plugin (`plugins.queueSort`; PrioritySort, the queue's own key,
        when it names none)."""
        #: The queue sort plugin (None: PrioritySort's key, or Coscheduling's), for the
        #: warnings it leaves (`TopologicalSort.missing`).
        self.queue_sort: Any = None
        if self.gang is not None:
            return self._coscheduling_sort_key
        plugin = queue_sort_plugin(profile.policy)
        self.queue_sort = plugin
        return plugin.sort_key(SimContext(self)) if plugin is not None else None

    def _coscheduling_sort_key(self, info: QueuedPodInfo) -> tuple:
        """Coscheduling's `Less` as a key: priority (higher first), then the group's last
        failure, else its PodGroup's creation, else the pod's initial attempt (earlier first),
        then "namespace/name"."""
        initial = info.initial_attempt_timestamp
        return (*self.gang.manager.queue_key(
            info.pod, self.ctx, self._epoch_of(info.timestamp if initial is None else initial)),
            info.seq)

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
            self._reject_in_cycle(info, node_name, PODGROUP_NOT_FOUND)
            return True
        if code == PermitCode.SUCCESS:
            # Quorum: allow every waiting pod of the group (their binding cycles go on), then
            # this pod binds. Its group's failure time was cleared.
            self._gang_rounds.pop(group, None)
            self._resort_group(group)
            for waiting in [w for w in self.waiting.values() if w.group == group]:
                self._allow(waiting)
            return False
        if self._gang_rounds.get(group, (0, 0))[0] >= GANG_RETRY_ROUNDS:
            # The race that ends the retries (`GANG_RETRY_ROUNDS`): a late Unreserve rejects
            # the pod as it starts waiting, before it activates its siblings.
            del self._gang_rounds[group]
            self._reject_in_cycle(info, node_name, UNRESERVE_REJECTION)
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, _other_than(pod.uid))
            return True
        # Wait: the pod is assumed (its room taken, counted as assigned) until allowed,
        # rejected or timed out.
        _, view = manager.group_of(pod, self.ctx)
        wait = seconds(manager.timeout(view))
        wait = min(wait, MAX_PERMIT_TIMEOUT)
        now = self.clock.now()
        self.state.assume(pod, node_name, math.inf)
        # Between Reserve and PostBind: a node NodeResourceTopologyMatch's
        # discardReservedNodes discards.
        self.state.store(TopologyStore).bind_started(pod.uid, node_name)
        self.changes.node(node_name)
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

    def _reject_in_cycle(self, info: QueuedPodInfo, node_name: str, message: str) -> None:
        """Coscheduling rejects the pod at Permit in its scheduling cycle: the event, then the
        failure handler."""
        if self.events is not None:
            self.events.emit(self.clock.now(), "permit", pod=info.pod.key, result="reject",
                             message=message)
        status = Status(Code.UNSCHEDULABLE, (message,), COSCHEDULING)
        self._fail_at_permit(info, node_name, status, clear_nomination=True, attempt=True)

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
        self.state.store(TopologyStore).bind_ended(waiting.uid, waiting.node)
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
        self.gang.manager.reject_group(full_name, self.epoch_now())
        self._resort_group(group)
        self._reject_waiting([(w, UNRESERVE_REJECTION, True) for w in rejected])

    def _reject_waiting(self, rejected: Iterable[tuple[WaitingPod, str, bool]], *,
                        bind_error: bool = False) -> None:
        """The binding cycles of rejected waiting pods fail, one after the other
        (`handleBindingCycleError`): Unreserve — Coscheduling rejects the group's other waiting
        pods ("rejection in Unreserve") and records the group's failure —, ForgetPod, the
        failure handler (a one-node FitError naming the rejecting plugin; not for a pod that
        is gone), then the deferred AssignedPodDelete that moves every pod but this one.
        Each item is (pod already out of the waiting map, message, requeue).

        From 1.33 the rejected pods are retried at once from backoffQ: each call is a round
        of those retries for its groups (`GANG_RETRY_ROUNDS`)."""
        todo = deque(rejected)
        if self.queue.pop_from_backoff:
            now = self.clock.now()
            for group in {w.group for w, _, requeue in todo if requeue}:
                # Rounds in a row: retried at once, not after a Permit wait of a second or more.
                rounds, last = self._gang_rounds.get(group, (0, now))
                self._gang_rounds[group] = (rounds + 1 if now - last < BACKOFF_WINDOW else 1, now)
        while todo:
            waiting, message, requeue = todo.popleft()
            pod = self.pending.get(waiting.uid, waiting.info.pod)
            full_name, view = self.gang.manager.group_of(pod, self.ctx)
            if view is not None:
                others = [w for w in self.waiting.values() if w.group == waiting.group]
                for other in others:
                    self._unwait(other)
                    todo.append((other, UNRESERVE_REJECTION, True))
                self.gang.manager.reject_group(full_name, self.epoch_now())
                self._resort_group(waiting.group)
            assumed = self.state.pods.get(waiting.uid)
            # NodeResourceTopologyMatch's Unreserve: the overreserve cache lets the pod go.
            self.state.store(TopologyStore).unreserve(pod.key, waiting.node)
            if self.events is not None:
                self.events.emit(self.clock.now(), "permit", pod=waiting.info.key,
                                 result="reject", message=message)
            if assumed is not None and assumed.node_name:
                self.state.delete_pod(assumed.namespace, assumed.name, assumed.uid)
                self.changes.node(assumed.node_name)
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
