"""The simulated cluster: the state a run mutates, and how it changes.

Arrivals (with the Priority admission plugin), binds' consequences (lifetimes, controllers),
evictions and graceful termination, deletions, node events, the creation of PodGroups,
ElasticQuotas and PriorityClasses — each applied to the `ClusterState` and told to the queue
as the informers would. `SimulatedCluster` is a mixin of `loop.Simulation`, which owns the
attributes it reads (state, queue, timeline, records, …); `context.SimContext` is the
engine's view of it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from functools import partial
from typing import Any

from extender.engine import registry
from extender.engine.events import ActionType, ClusterEvent
from extender.engine.preemption.toleration import toleration_policy
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.simulator.clock import (
    Timeline,
    seconds,
    to_seconds,
)
from extender.simulator.events import NODE_ADD, node_update_events
from extender.simulator.follow import workload_owner
from extender.simulator.precheck import node_pre_check
from extender.simulator.records import (
    DEFAULT_TERMINATION_GRACE_PERIOD,
    DELETED,
    PREEMPTED,
    REJECTED,
    SCHEDULED,
    SUCCEEDED,
    PodRecord,
)
from extender.simulator.workload import Arrival, ObjectArrival, SimEvent


def pod_with(pod: PodView, **changes: Any) -> PodView:
    """A copy of an immutable PodView with some fields changed (what an API patch yields)."""
    clone = PodView.__new__(PodView)
    for slot in PodView.__slots__:
        setattr(clone, slot, changes[slot] if slot in changes else getattr(pod, slot))
    return clone



class SimulatedCluster:
    """The cluster side of `loop.Simulation` (a mixin: the attributes are the simulation's)."""

    # -- time and nodes -------------------------------------------------------------------------------

    def epoch_now(self) -> float:
        """Now on the virtual clock, in epoch seconds (the clock the engine's plugins read)."""
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
        self.changes.everything()

    def _forget_attempts(self, uid: str) -> None:
        """A pod is bound or gone: what its failed attempts found is of no more use."""
        if self.filter_memo is not None:
            self.filter_memo.forget(uid)
        if self.dry_runs is not None:
            self.dry_runs.forget(uid)

    def _record(self, pod: PodView, origin: str) -> PodRecord:
        rec = self.records.get(pod.uid)
        if rec is None:
            rec = PodRecord(pod.uid, pod.namespace, pod.name, pod.priority, origin)
            if pod.controller_ref is not None:
                rec.owner = workload_owner(pod.controller_ref[1], pod.controller_ref[2],
                                           pod.labels)
            self.records[pod.uid] = rec
        return rec

    # -- admission: PriorityClasses -------------------------------------------------------------------

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
        elsewhere: dict[str, list[str]] = {}
        for pod in list(self.state.pods.values()):
            if not pod.node_name:
                continue
            if pod.node_name not in self.state.nodes:
                elsewhere.setdefault(pod.node_name, []).append(pod.key)
            if pod.priority == 0 and pod.priority_class_name:
                pc = classes.get(pod.priority_class_name)
                if pc is None:
                    self.warnings.append(
                        f"pod {pod.key} (bound to {pod.node_name}): no PriorityClass with name "
                        f"{pod.priority_class_name} was found; its priority stays 0")
                elif (pc.value, pc.preemption_policy) != (pod.priority, pod.preemption_policy):
                    pod = pod_with(pod, priority=pc.value, preemption_policy=pc.preemption_policy)
                    self.state.replace_view(pod)
                    self.changes.node(pod.node_name)
            self._note_toleration(pod)
        for node, keys in sorted(elsewhere.items()):
            # As for a workload pod arriving so (`_arrive`): a hand-written snapshot's typo,
            # or a node left out of it. The pods count where kube-scheduler's cache would
            # keep them, on a node no pod can be scheduled to.
            shown = ", ".join(sorted(keys)[:5]) + (", ..." if len(keys) > 5 else "")
            self.warnings.append(
                f"{len(keys)} cluster pod(s) bound to {node}, a node the cluster does not "
                f"have ({shown})")

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

    # -- inputs: arrivals and events ------------------------------------------------------------------

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
            if pod.node_name not in self.state.nodes:
                self.warnings.append(
                    f"pod {pod.key} arrived at {to_seconds(now)}s with spec.nodeName "
                    f"{pod.node_name}, a node the cluster does not have: kube-scheduler never "
                    "sees such a pod and no kubelet runs it; reported Scheduled there")
            bound = pod_with(pod, start_time=self.epoch_now(),
                             scheduled_time=pod.scheduled_time or self.epoch_now())
            self.state.assume(bound, pod.node_name, math.inf)
            self.changes.node(pod.node_name)
            rec.status, rec.node, rec.scheduled_at = SCHEDULED, pod.node_name, now
            self.settled += 1
            self.version += 1
            if self.events is not None:
                self.events.emit(now, "bind", pod=pod.key, node=pod.node_name)
            self._started(self.state.pods[pod.uid])
            self.queue.assigned_pod_added(pod)
            self._tell_controller(pod.uid, "pod_bound", pod.node_name)
            return
        if not self._routed(pod):  # no profile has its schedulerName
            return
        self.pending[pod.uid] = pod
        self.queue.add(pod)

    # -- workload controllers -------------------------------------------------------------------------

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
        self.changes.node(pod.node_name)
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
            self._forget_attempts(pending.uid)
            del self.pending[pending.uid]
            self.queue.delete(pending)
            self.queue.done(f"{pending.namespace}/{pending.name}")
            if waiting is None and pending.nominated_node_name:
                self.queue.nominated_pod_gone(pending)
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
        # A pod of the cluster file the run had not touched gets its record now: a pod the
        # run deleted is in the report (and counted as deleted) as one it evicted is. A
        # terminating victim stays Preempted, gone now rather than after its grace period.
        known = bound.uid in self.records
        bound_rec = self._record(bound, "cluster")
        if bound_rec.status == SCHEDULED or not known:
            bound_rec.status = DELETED
            bound_rec.node = bound_rec.node or bound.node_name
        if bound_rec.finished_at is None:
            bound_rec.finished_at = self.clock.now()
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
        self.changes.node(pod.node_name)
        self.version += 1
        self.queue.assigned_pod_deleted(pod)

    # -- evictions and nominations --------------------------------------------------------------------

    def _patch_nomination(self, pod: PodView, node: str) -> None:
        """The status patch of `nominatedNodeName`, and the informer update that follows: a
        nomination that changes or goes frees its node for the pods that counted it."""
        current = self.pending.get(pod.uid, pod)
        if current.nominated_node_name == node:
            return
        new = pod_with(current, nominated_node_name=node)
        self.pending[pod.uid] = new
        self.queue.update(current, new)
        if current.nominated_node_name:
            self.queue.nominated_pod_gone(current)

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
        self.changes.node(current.node_name)
        self.queue.assigned_pod_updated(current, terminating)

    # -- scheduler-plugins' objects -------------------------------------------------------------------

    def _create_object(self, created: ObjectArrival) -> None:
        """A plugin's object (a PodGroup, an ElasticQuota, … : a kind of a plugin record's
        resources) is created or replaced: its store takes it and the queue hears the event
        (its resource's Add or Update), which the plugins that registered it act on. Another
        kind the state keeps (a PriorityClass: pods arriving later resolve their priority
        from it) is just taken: no plugin of the queue listens to it."""
        obj = created.obj
        if created.stamp:  # the API server's stamp, whole seconds as metav1.Time keeps it
            stamp = datetime.fromtimestamp(math.floor(self.epoch_now()), UTC)
            obj.metadata.creation_timestamp = stamp.strftime("%Y-%m-%dT%H:%M:%SZ")
        namespace, name = obj.metadata.namespace, obj.metadata.name
        resource = registry.resource_of_kind(created.kind)
        if resource is None:
            self.state.apply(created.kind, obj)
            self.version += 1
            self.changes.everything()
            return
        key = (namespace if resource.namespaced else "", name)
        known = key in self.state.store_of_kind(created.kind).keys(created.kind)
        self.state.apply(created.kind, obj)
        self.version += 1
        self.changes.everything()
        if created.kind == "PodGroup":
            self._resort_group((namespace, name))
        action = ActionType.UPDATE if known else ActionType.ADD
        label = f"{created.kind}{'Update' if known else 'Add'}"
        self.queue.move_all_to_active_or_backoff(
            ClusterEvent(resource.event_resource, action, label))

    def _forget_member(self, pod: PodView) -> None:
        if pod.pod_group:
            members = self.group_members.get((pod.namespace, pod.pod_group))
            if members is not None:
                members.pop(pod.uid, None)
