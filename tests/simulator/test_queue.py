"""The scheduling queue, transition by transition, with hand-computed virtual times."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from extender.simulator import events as ev
from extender.simulator.clock import SECOND, Timeline, VirtualClock, seconds
from extender.simulator.nominator import Nominator
from extender.simulator.queue import (
    ACTIVE,
    BACKOFF,
    LEGACY_POD_MAX_IN_UNSCHEDULABLE_PODS,
    UNSCHEDULABLE,
    PriorityQueue,
    QueueError,
)

MS = SECOND // 1000
FILTERS = ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
           "NodeResourcesFit"]


@dataclass(frozen=True)
class FakePod:
    name: str
    priority: int = 0
    namespace: str = "default"
    nominated_node_name: str = ""
    cpu: int = 100  # stands in for the spec

    @property
    def uid(self) -> str:
        return f"uid-{self.namespace}-{self.name}"


def make_queue(**kwargs) -> tuple[VirtualClock, PriorityQueue]:
    clock = VirtualClock()
    return clock, PriorityQueue(clock, **kwargs)


def fail(q: PriorityQueue, info, *plugins: str) -> str:
    """The scheduler's failure handler: rejecting plugins recorded, then requeued."""
    info.unschedulable_plugins = set(plugins)
    return q.add_unschedulable_if_not_present(info, q.scheduling_cycle)


def names(pods) -> list[str]:
    return [p.name for p in pods]


# -- pop, ordering --------------------------------------------------------------------------


def test_pop_counts_attempts_and_cycles_and_clears_plugins():
    clock, q = make_queue()
    assert q.pop() is None
    assert q.scheduling_cycle == 0
    q.add(FakePod("a"))
    info = q.pop()
    assert (info.pod.name, info.attempts, q.scheduling_cycle) == ("a", 1, 1)
    fail(q, info, "NodeResourcesFit")
    q.move_all_to_active_or_backoff(ev.NODE_ADD)
    clock.advance_to(1 * SECOND)
    q.flush_backoff_completed()
    again = q.pop()
    assert again is info
    assert (again.attempts, q.scheduling_cycle, again.unschedulable_plugins) == (2, 2, set())


def test_priority_then_fifo_with_equal_timestamps():
    _, q = make_queue()
    for name, prio in [("low-1", 0), ("high-1", 100), ("low-2", 0), ("mid", 50), ("high-2", 100),
                       ("neg", -5)]:
        q.add(FakePod(name, prio))
    assert names(q.active_pods()) == ["high-1", "high-2", "mid", "low-1", "low-2", "neg"]
    popped = [q.pop().pod.name for _ in range(6)]
    assert popped == ["high-1", "high-2", "mid", "low-1", "low-2", "neg"]
    assert q.pop() is None


def test_fifo_is_by_queue_timestamp_not_by_activeq_arrival():
    # x fails at t=1 s (timestamp refreshed to 1 s); y arrives at t=2 s; x comes back to activeQ
    # at t=3 s but still sorts before y because its timestamp (1 s) is older.
    clock, q = make_queue()
    q.add(FakePod("x"))
    x = q.pop()
    clock.advance_to(1 * SECOND)
    assert fail(q, x, "NodeResourcesFit") == UNSCHEDULABLE
    assert x.timestamp == 1 * SECOND
    clock.advance_to(2 * SECOND)
    q.add(FakePod("y"))
    clock.advance_to(3 * SECOND)
    q.assigned_pod_deleted(FakePod("victim"))  # backoff (1 s) over at 2 s → activeQ
    assert q.where(x.pod) == ACTIVE
    assert names(q.active_pods()) == ["x", "y"]
    # A higher priority still wins over an older timestamp.
    q.add(FakePod("z", priority=1))
    assert names(q.active_pods()) == ["z", "x", "y"]


def test_initial_attempt_timestamp_is_first_activeq_entry():
    clock, q = make_queue()
    clock.advance_to(5 * SECOND)
    q.add(FakePod("a"))
    info = q.pop()
    assert info.initial_attempt_timestamp == 5 * SECOND
    clock.advance_to(7 * SECOND)
    fail(q, info, "NodeResourcesFit")
    clock.advance_to(9 * SECOND)
    q.move_all_to_active_or_backoff(ev.NODE_ADD)
    assert q.where(info.pod) == ACTIVE
    assert info.initial_attempt_timestamp == 5 * SECOND
    assert info.timestamp == 7 * SECOND


# -- backoff --------------------------------------------------------------------------------


def test_backoff_doubles_and_caps_at_max():
    clock, q = make_queue()
    q.add(FakePod("a"))
    durations = []
    for _ in range(7):
        info = q.pop()
        # An event during the cycle sends the failed pod to backoffQ.
        q.move_all_to_active_or_backoff(ev.NODE_ADD)
        assert fail(q, info, "NodeResourcesFit") == BACKOFF
        durations.append(q.backoff_duration(info))
        expiry = clock.now() + durations[-1]
        assert q.next_backoff_expiry() == expiry
        clock.advance_to(expiry - 1)
        assert q.flush_backoff_completed() == 0
        clock.advance_to(expiry)
        assert q.flush_backoff_completed() == 1
    assert durations == [s * SECOND for s in (1, 2, 4, 8, 10, 10, 10)]


def test_backoff_with_custom_initial_and_max():
    _, q = make_queue(pod_initial_backoff=3 * SECOND, pod_max_backoff=20 * SECOND)
    info = q.add(FakePod("a"))
    got = []
    for attempts in range(1, 6):
        info.attempts = attempts
        got.append(q.backoff_duration(info) // SECOND)
    assert got == [3, 6, 12, 20, 20]


def test_max_backoff_zero_disables_backoff():
    clock, q = make_queue(pod_max_backoff=0)
    q.add(FakePod("a"))
    for _ in range(3):
        info = q.pop()
        q.move_all_to_active_or_backoff(ev.NODE_ADD)
        assert fail(q, info, "NodeResourcesFit") == BACKOFF
        assert q.backoff_duration(info) == 0
        assert not q.is_backing_off(info)
        # Same instant: the flush already moves it.
        assert q.flush_backoff_completed() == 1
    # From the pool, an event sends it straight to activeQ, never to backoffQ.
    info = q.pop()
    assert fail(q, info, "NodeResourcesFit") == UNSCHEDULABLE
    q.move_all_to_active_or_backoff(ev.NODE_ADD)
    assert q.where(info.pod) == ACTIVE


def test_backoff_flush_runs_every_second_on_the_timeline():
    # Flushers start at t=0 and tick at 0, 1, 2, … s. The pod fails at 0.5 s with one attempt,
    # so its backoff ends at 1.5 s: the tick at 1 s leaves it, the tick at 2 s moves it.
    clock = VirtualClock()
    timeline = Timeline(clock)
    q = PriorityQueue(clock)
    q.start(timeline)
    q.add(FakePod("a"))
    info = q.pop()
    timeline.run_until(seconds(0.5))
    q.move_all_to_active_or_backoff(ev.NODE_ADD)
    fail(q, info, "NodeResourcesFit")
    assert q.backoff_expiry(info) == seconds(1.5)
    timeline.run_until(seconds(1.999))
    assert q.where(info.pod) == BACKOFF
    timeline.run_until(2 * SECOND)
    assert q.where(info.pod) == ACTIVE
    assert clock.now() == 2 * SECOND


def test_backoff_queue_orders_by_expiry():
    clock, q = make_queue()
    for name in ("a", "b"):
        q.add(FakePod(name))
    a, b = q.pop(), q.pop()
    # a has 3 attempts (4 s backoff), b one attempt (1 s backoff): b expires first.
    a.attempts = 3
    q.move_all_to_active_or_backoff(ev.NODE_ADD)
    fail(q, a, "NodeResourcesFit")
    fail(q, b, "NodeResourcesFit")
    assert names(q.backoff_pods()) == ["b", "a"]
    clock.advance_to(1 * SECOND)
    q.flush_backoff_completed()
    assert (q.where(a.pod), q.where(b.pod)) == (BACKOFF, ACTIVE)
    clock.advance_to(4 * SECOND)
    q.flush_backoff_completed()
    assert q.where(a.pod) == ACTIVE


# -- moveRequestCycle -----------------------------------------------------------------------


def test_event_during_cycle_sends_failure_to_backoff_not_pool():
    clock, q = make_queue()
    q.add(FakePod("a"))
    q.add(FakePod("b"))
    a = q.pop()  # cycle 1
    q.assigned_pod_deleted(FakePod("gone"))  # arrives while a is being scheduled
    assert q.move_request_cycle == 1
    assert fail(q, a, "NodeResourcesFit") == BACKOFF
    b = q.pop()  # cycle 2: no event since it started
    assert fail(q, b, "NodeResourcesFit") == UNSCHEDULABLE
    assert q.move_request_cycle == 1


def test_event_nobody_listens_to_does_not_count_as_a_move_request():
    _, q = make_queue(plugins=FILTERS)
    q.add(FakePod("a"))
    a = q.pop()
    # No enabled plugin registered node condition changes or assigned pod adds.
    assert q.move_all_to_active_or_backoff(ev.NODE_CONDITION_CHANGE) == 0
    assert q.assigned_pod_added(FakePod("bound")) == 0
    assert q.move_request_cycle == -1
    assert fail(q, a, "NodeResourcesFit") == UNSCHEDULABLE


def test_assigned_pod_add_is_a_move_request_when_a_plugin_listens():
    # With the full in-tree table InterPodAffinity listens to pod adds: nothing moves (no pod
    # has affinity terms) but the move request is recorded.
    _, q = make_queue()
    q.add(FakePod("a"))
    a = q.pop()
    assert q.assigned_pod_added(FakePod("bound")) == 0
    assert q.move_request_cycle == 1
    assert fail(q, a, "NodeResourcesFit") == BACKOFF


def test_error_without_rejecting_plugin_goes_to_backoff():
    _, q = make_queue()
    q.add(FakePod("a"))
    a = q.pop()
    assert fail(q, a) == BACKOFF


# -- queueing hints (1.32+): the events of a pod's own flight ------------------------------


def test_with_hints_only_an_event_a_rejecting_plugin_registered_requeues():
    # Legacy: any move during the cycle sends the failure to backoffQ. With queueing hints
    # (kube-scheduler 1.32+), only an event of its flight that a rejecting plugin registered.
    _, q = make_queue(queueing_hints=True)
    for name in ("a", "b", "c"):
        q.add(FakePod(name))
    a, b = q.pop(), q.pop()
    q.assigned_pod_deleted(FakePod("gone"))  # NodeResourcesFit registered pod deletes
    assert fail(q, a, "NodeResourcesFit") == BACKOFF
    assert fail(q, b, "NodeAffinity") == UNSCHEDULABLE  # it did not
    c = q.pop()  # after the event: not part of its flight
    assert fail(q, c, "NodeResourcesFit") == UNSCHEDULABLE


def test_with_hints_errors_and_force_activation_requeue():
    _, q = make_queue(queueing_hints=True)
    for name in ("a", "b", "c"):
        q.add(FakePod(name))
    a, b, c = q.pop(), q.pop(), q.pop()
    assert fail(q, a) == BACKOFF  # an error: no rejecting plugin
    # Activating an in-flight pod: a wildcard event for it alone (upstream's Activate).
    assert not q.activate([b.pod])
    assert fail(q, b, "Coscheduling") == BACKOFF
    assert fail(q, c, "Coscheduling") == UNSCHEDULABLE


def test_with_hints_done_forgets_the_flight():
    _, q = make_queue(queueing_hints=True)
    q.add(FakePod("a"))
    q.add(FakePod("b"))
    a = q.pop()
    q.assigned_pod_deleted(FakePod("gone"))
    q.done(a.key)  # bound
    b = q.pop()
    assert fail(q, b, "NodeResourcesFit") == UNSCHEDULABLE
    assert (q._flight_events, q._in_flight) == ([], {})  # nothing kept once none is in flight


def test_requeue_of_a_queued_pod_is_rejected():
    _, q = make_queue()
    info = q.add(FakePod("a"))
    with pytest.raises(QueueError):
        q.add_unschedulable_if_not_present(info, q.scheduling_cycle)


# -- unschedulable pool and its leftover flush ----------------------------------------------


def _pool_pod_at(timeline: Timeline, q: PriorityQueue, t: int, name: str = "a"):
    q.add(FakePod(name))
    info = q.pop()
    timeline.run_until(t)
    assert fail(q, info, "NodeResourcesFit") == UNSCHEDULABLE
    return info


def test_leftover_flush_after_five_minutes_on_30s_ticks():
    # In the pool at 10 s. Ticks at 0, 30, …, 300 s: at 300 s it has waited 290 s; at 330 s,
    # 320 s > 300 s, so it moves — to activeQ, its 1 s backoff being long over.
    clock = VirtualClock()
    timeline = Timeline(clock)
    q = PriorityQueue(clock)
    q.start(timeline)
    info = _pool_pod_at(timeline, q, 10 * SECOND)
    timeline.run_until(329 * SECOND)
    assert q.where(info.pod) == UNSCHEDULABLE
    timeline.run_until(330 * SECOND)
    assert q.where(info.pod) == ACTIVE
    assert q.move_request_cycle == q.scheduling_cycle  # the flush is a move request too


def test_leftover_needs_strictly_more_than_the_duration():
    # In the pool at exactly 0 s: at the 300 s tick it has waited exactly 300 s (not more).
    clock = VirtualClock()
    timeline = Timeline(clock)
    q = PriorityQueue(clock)
    q.start(timeline)
    info = _pool_pod_at(timeline, q, 0)
    timeline.run_until(300 * SECOND)
    assert q.where(info.pod) == UNSCHEDULABLE
    timeline.run_until(330 * SECOND)
    assert q.where(info.pod) == ACTIVE


def test_leftover_flush_with_60s_of_older_releases():
    # In the pool at 10 s; ticks at 30 (20 s), 60 (50 s), 90 (80 s > 60 s) → moves at 90 s.
    clock = VirtualClock()
    timeline = Timeline(clock)
    q = PriorityQueue(clock, pod_max_in_unschedulable_pods=LEGACY_POD_MAX_IN_UNSCHEDULABLE_PODS)
    q.start(timeline)
    info = _pool_pod_at(timeline, q, 10 * SECOND)
    timeline.run_until(89 * SECOND)
    assert q.where(info.pod) == UNSCHEDULABLE
    timeline.run_until(90 * SECOND)
    assert q.where(info.pod) == ACTIVE


def test_leftover_still_backing_off_goes_to_backoff():
    # Backoff (100 s) longer than the pool limit (60 s): at the 90 s tick the pod (in the pool
    # since 10 s, backoff until 110 s) moves to backoffQ; the 1 s flush at 110 s activates it.
    clock = VirtualClock()
    timeline = Timeline(clock)
    q = PriorityQueue(clock, pod_initial_backoff=100 * SECOND, pod_max_backoff=100 * SECOND,
                      pod_max_in_unschedulable_pods=60 * SECOND)
    q.start(timeline)
    info = _pool_pod_at(timeline, q, 10 * SECOND)
    timeline.run_until(90 * SECOND)
    assert q.where(info.pod) == BACKOFF
    timeline.run_until(109 * SECOND)
    assert q.where(info.pod) == BACKOFF
    timeline.run_until(110 * SECOND)
    assert q.where(info.pod) == ACTIVE


def test_pool_pod_moved_by_event_respects_remaining_backoff():
    clock, q = make_queue()
    q.add(FakePod("a"))
    a = q.pop()
    a.attempts = 4  # 8 s backoff
    clock.advance_to(10 * SECOND)
    fail(q, a, "NodeResourcesFit")
    clock.advance_to(17 * SECOND)
    q.move_all_to_active_or_backoff(ev.NODE_ADD)
    assert q.where(a.pod) == BACKOFF  # until 18 s
    clock.advance_to(18 * SECOND)
    q.flush_backoff_completed()
    assert q.where(a.pod) == ACTIVE


# -- which events move which pods -------------------------------------------------------------

REJECTORS = ["NodeResourcesFit", "TaintToleration", "NodeAffinity", "NodeUnschedulable",
             "NodePorts", "NodeName"]


@pytest.mark.parametrize(("event", "moved"), [
    (ev.NODE_ADD, set(REJECTORS)),
    (ev.NODE_ALLOCATABLE_CHANGE, {"NodeResourcesFit"}),
    (ev.NODE_TAINT_CHANGE, {"TaintToleration", "NodeUnschedulable"}),
    (ev.NODE_SPEC_UNSCHEDULABLE_CHANGE, {"TaintToleration", "NodeUnschedulable"}),
    (ev.NODE_LABEL_CHANGE, {"NodeAffinity"}),
    (ev.ASSIGNED_POD_DELETE, {"NodeResourcesFit", "NodePorts"}),
    (ev.NODE_CONDITION_CHANGE, set()),
    (ev.UNSCHEDULABLE_TIMEOUT, set(REJECTORS)),
])
def test_events_move_only_pods_whose_rejecting_plugin_listens(event, moved):
    clock, q = make_queue()
    for plugin in REJECTORS:
        q.add(FakePod(plugin))
    for _ in REJECTORS:
        info = q.pop()
        fail(q, info, info.pod.name)
    clock.advance_to(30 * SECOND)  # backoff long over
    assert q.move_all_to_active_or_backoff(event) == len(moved)
    assert set(names(q.active_pods())) == moved
    assert set(names(q.unschedulable_pods())) == set(REJECTORS) - moved


def test_pod_rejected_by_several_plugins_moves_if_any_listens():
    clock, q = make_queue()
    q.add(FakePod("a"))
    fail(q, q.pop(), "NodeAffinity", "NodeResourcesFit")
    clock.advance_to(5 * SECOND)
    q.move_all_to_active_or_backoff(ev.ASSIGNED_POD_DELETE)
    assert names(q.active_pods()) == ["a"]


def test_unknown_plugin_listens_to_everything():
    clock, q = make_queue()
    q.add(FakePod("a"))
    fail(q, q.pop(), "SomeOutOfTreePlugin")
    clock.advance_to(5 * SECOND)
    q.move_all_to_active_or_backoff(ev.NODE_LABEL_CHANGE)
    assert names(q.active_pods()) == ["a"]


def test_pre_check_vetoes_pods():
    clock, q = make_queue()
    for name in ("fits", "too-big"):
        q.add(FakePod(name))
    for _ in range(2):
        fail(q, q.pop(), "NodeResourcesFit")
    clock.advance_to(5 * SECOND)
    moved = q.move_all_to_active_or_backoff(ev.NODE_ADD, pre_check=lambda p: p.name == "fits")
    assert moved == 1
    assert names(q.active_pods()) == ["fits"]
    assert names(q.unschedulable_pods()) == ["too-big"]


def test_assigned_pod_added_moves_pods_with_matching_affinity():
    clock, q = make_queue(plugins=[*FILTERS, "InterPodAffinity"])
    for name in ("wants-web", "other"):
        q.add(FakePod(name))
    for _ in range(2):
        fail(q, q.pop(), "InterPodAffinity")
    clock.advance_to(5 * SECOND)
    moved = q.assigned_pod_added(FakePod("web-1"),
                                 affinity_match=lambda pending, bound: pending.name == "wants-web")
    assert moved == 1
    assert names(q.active_pods()) == ["wants-web"]


def test_node_update_events():
    @dataclass
    class Node:
        unschedulable: bool = False
        allocatable: int = 4
        labels: tuple = ()
        taints: tuple = ()

    old = Node()
    assert ev.node_update_events(old, Node()) == []
    assert ev.node_update_events(old, Node(unschedulable=True)) == [
        ev.NODE_SPEC_UNSCHEDULABLE_CHANGE]
    assert ev.node_update_events(old, Node(allocatable=8, labels=("a",))) == [
        ev.NODE_ALLOCATABLE_CHANGE, ev.NODE_LABEL_CHANGE]
    assert ev.node_update_events(old, Node(taints=("t",))) == [ev.NODE_TAINT_CHANGE]


def test_cluster_event_match():
    fit_node = ev.ClusterEvent(ev.NODE, ev.ActionType.ADD | ev.ActionType.UPDATE_NODE_ALLOCATABLE)
    assert fit_node.match(ev.NODE_ADD)
    assert fit_node.match(ev.NODE_ALLOCATABLE_CHANGE)
    assert not fit_node.match(ev.NODE_LABEL_CHANGE)
    assert not fit_node.match(ev.ASSIGNED_POD_DELETE)
    assert ev.WILDCARD_EVENT.match(ev.NODE_LABEL_CHANGE)
    assert ev.UNSCHEDULABLE_TIMEOUT.is_wildcard()


# -- update, delete, activate ---------------------------------------------------------------


def test_update_in_active_queue_resorts():
    _, q = make_queue()
    a, b = FakePod("a"), FakePod("b")
    q.add(a)
    q.add(b)
    assert q.update(b, replace(b, priority=10)) == ACTIVE
    assert names(q.active_pods()) == ["b", "a"]
    assert q.pop().pod.priority == 10


def test_update_in_pool_moves_only_on_spec_change():
    clock, q = make_queue()
    pod = FakePod("a")
    q.add(pod)
    fail(q, q.pop(), "NodeResourcesFit")
    clock.advance_to(5 * SECOND)
    # A status-only change (nominatedNodeName) keeps it in the pool, with the new object.
    status_only = replace(pod, nominated_node_name="n1")
    assert q.update(pod, status_only) == UNSCHEDULABLE
    assert q.get(pod).pod is status_only
    # A spec change makes it worth retrying: backoff over → activeQ.
    assert q.update(status_only, replace(status_only, cpu=50)) == ACTIVE


def test_update_in_pool_still_backing_off_goes_to_backoff():
    clock, q = make_queue()
    pod = FakePod("a")
    q.add(pod)
    fail(q, q.pop(), "NodeResourcesFit")
    clock.advance_to(seconds(0.5))
    assert q.update(pod, replace(pod, cpu=50)) == BACKOFF


def test_update_of_unknown_pod_adds_it():
    _, q = make_queue()
    assert q.update(None, FakePod("new")) == ACTIVE
    assert names(q.active_pods()) == ["new"]


def test_delete_from_each_sub_queue():
    _, q = make_queue()
    for name in ("backoff", "pool", "active"):
        q.add(FakePod(name))
    backoff = q.pop()
    q.move_all_to_active_or_backoff(ev.NODE_ADD)
    fail(q, backoff, "NodeResourcesFit")
    fail(q, q.pop(), "NodeResourcesFit")
    assert [q.where(FakePod(n)) for n in ("active", "backoff", "pool")] == [
        ACTIVE, BACKOFF, UNSCHEDULABLE]
    for name in ("active", "backoff", "pool"):
        assert q.delete(FakePod(name))
        assert q.where(FakePod(name)) is None
    assert len(q) == 0
    assert not q.delete(FakePod("never"))


def test_activate_skips_backoff():
    clock, q = make_queue()
    for name in ("a", "b"):
        q.add(FakePod(name))
    a = q.pop()
    q.move_all_to_active_or_backoff(ev.NODE_ADD)
    fail(q, a, "NodeResourcesFit")
    b = q.pop()
    fail(q, b, "NodeResourcesFit")
    assert q.activate([a.pod, b.pod, FakePod("unknown")])
    assert names(q.active_pods()) == ["a", "b"]
    assert not q.activate([a.pod])  # already active


def test_counts_and_repr():
    _, q = make_queue()
    q.add(FakePod("a"))
    q.add(FakePod("b"))
    fail(q, q.pop(), "NodeResourcesFit")
    assert (q.num_active, q.num_backoff, q.num_unschedulable, len(q)) == (1, 0, 1, 2)
    assert "activeQ:1" in repr(q)
    assert q.oldest_unschedulable_timestamp() == 0


# -- nominator ------------------------------------------------------------------------------


def test_nominator_add_delete_lookup():
    n = Nominator()
    a, b, c = FakePod("a", 10), FakePod("b", 5), FakePod("c", 1)
    n.add(a, "node-1")
    n.add(b, "node-1")
    n.add(c, "node-2")
    assert names(n.nominated_pods_for_node("node-1")) == ["a", "b"]
    assert n.nominated_node(c) == "node-2"
    assert n.nodes() == ["node-1", "node-2"]
    # Re-nominating moves the pod, never duplicates it.
    n.add(a, "node-2")
    assert names(n.nominated_pods_for_node("node-1")) == ["b"]
    assert names(n.nominated_pods_for_node("node-2")) == ["c", "a"]
    n.delete(b)
    assert n.nominated_pods_for_node("node-1") == []
    assert n.nodes() == ["node-2"]
    assert b not in n and a in n and len(n) == 2
    # Override with "" clears; noop mode reads the pod's own nominatedNodeName.
    n.add(a, "")
    assert n.nominated_node(a) is None
    n.add(FakePod("d", nominated_node_name="node-3"))
    assert names(n.nominated_pods_for_node("node-3")) == ["d"]
    n.add(FakePod("e"))
    assert n.nominated_node(FakePod("e")) is None


def test_nominator_respects_pod_alive():
    n = Nominator(pod_alive=lambda p: p.name != "bound")
    n.add(FakePod("bound"), "node-1")
    n.add(FakePod("pending"), "node-1")
    assert names(n.nominated_pods_for_node("node-1")) == ["pending"]


def test_nominator_update_keeps_in_memory_nomination():
    n = Nominator()
    pod = FakePod("a")
    n.add(pod, "node-1")
    # An update carrying no nominatedNodeName on either side keeps the reservation …
    newer = replace(pod, cpu=200)
    n.update(pod, newer)
    assert n.nominated_node(pod) == "node-1"
    assert n.nominated_pods_for_node("node-1")[0] is newer
    # … one that sets it follows the pod, one that clears it drops it.
    moved = replace(newer, nominated_node_name="node-2")
    n.update(newer, moved)
    assert n.nominated_node(pod) == "node-2"
    n.update(moved, replace(moved, nominated_node_name=""))
    assert n.nominated_node(pod) is None


def test_queue_and_nominator_through_a_preemption():
    # The failure handler requeues (noop mode: the pod object has no nominatedNodeName yet, so
    # any old nomination is dropped), then nominates with override; deleting the pod clears it.
    _, q = make_queue()
    pod = FakePod("preemptor", 100)
    q.add(pod)
    info = q.pop()
    fail(q, info, "NodeResourcesFit")
    assert q.nominator.nominated_node(pod) is None
    q.nominator.add(info.pod, "node-1")
    assert names(q.nominator.nominated_pods_for_node("node-1")) == ["preemptor"]
    # The API write lands: the pod now carries the nomination, the queue keeps it.
    patched = replace(pod, nominated_node_name="node-1")
    q.update(pod, patched)
    assert q.nominator.nominated_pods_for_node("node-1")[0] is patched
    assert q.where(pod) == UNSCHEDULABLE
    # A pod added with a nominatedNodeName is nominated on add.
    q.add(FakePod("other", nominated_node_name="node-2"))
    assert q.nominator.nodes() == ["node-1", "node-2"]
    q.delete(patched)
    assert q.nominator.nodes() == ["node-2"]


# -- timeline -------------------------------------------------------------------------------


def test_timeline_fires_in_time_then_rank_then_insertion_order():
    clock = VirtualClock()
    timeline = Timeline(clock)
    seen: list[tuple[str, int]] = []
    timeline.at(2 * SECOND, lambda: seen.append(("late", clock.now())))
    timeline.at(1 * SECOND, lambda: seen.append(("b", clock.now())))
    timeline.at(1 * SECOND, lambda: seen.append(("a-ranked", clock.now())), rank=-1)
    tick = timeline.every(SECOND, lambda: seen.append(("tick", clock.now())), rank=-5)
    assert timeline.run_until(1 * SECOND) == 4
    assert seen == [("tick", 0), ("tick", SECOND), ("a-ranked", SECOND), ("b", SECOND)]
    assert timeline.next_time(include_periodic=False) == 2 * SECOND
    Timeline.cancel(tick)
    timeline.run_until(5 * SECOND)
    assert seen[-1] == ("late", 2 * SECOND)
    assert clock.now() == 5 * SECOND
    assert timeline.next_time() is None
    with pytest.raises(ValueError):
        clock.advance_to(SECOND)


def test_periodic_fire_time():
    clock = VirtualClock()
    timeline = Timeline(clock)
    entry = timeline.every(30 * SECOND, lambda: None)
    assert timeline.periodic_fire_time(entry, 0) == 0
    assert timeline.periodic_fire_time(entry, 1) == 30 * SECOND
    assert timeline.periodic_fire_time(entry, 61 * SECOND) == 90 * SECOND
    assert MS * 1000 == SECOND


# -- SchedulerPopFromBackoffQ (1.33+) and the 1.34 backoff count ----------------------------


def make_new_queue(**kwargs) -> tuple[VirtualClock, PriorityQueue]:
    """A queue as kube-scheduler 1.34+ runs it."""
    return make_queue(pop_from_backoff=True, backoff_by_failure=True, **kwargs)


def backed_off(q: PriorityQueue, clock: VirtualClock, pod: FakePod, at: int,
               *plugins: str) -> object:
    """`pod` added, popped and failed at `at` while a move request came: in backoffQ."""
    clock.advance_to(at)
    q.add(pod)
    info = q.pop()
    q.move_all_to_active_or_backoff(ev.NODE_ADD)
    assert fail(q, info, *plugins) == BACKOFF
    return info


def test_an_empty_active_q_pops_the_head_of_backoff_q():
    clock, q = make_new_queue()
    info = backed_off(q, clock, FakePod("a"), 0, "NodeResourcesFit")
    assert q.num_active == 0 and q.is_backing_off(info) and q.can_pop
    moves = []
    q.on_move = lambda pod, src, dst, event: moves.append((pod.name, src, dst, event))
    assert q.pop() is info and info.attempts == 2
    assert moves == [("a", BACKOFF, ACTIVE, "PopFromBackoffQ")]
    assert q.num_backoff == 0 and not q.can_pop
    # activeQ first: a pod there is popped before backoffQ's.
    other = backed_off(q, clock, FakePod("b"), 0, "NodeResourcesFit")
    q.add(FakePod("c"))
    assert q.pop().pod.name == "c" and q.pop() is other


def test_before_1_33_backoff_q_waits_out_the_backoff():
    clock, q = make_queue()
    backed_off(q, clock, FakePod("a"), 0, "NodeResourcesFit")
    assert not q.can_pop and q.pop() is None and q.num_backoff == 1


def test_a_pod_failed_by_an_error_is_never_popped_early():
    # No rejecting plugin: podErrorBackoffQ, which only the flush empties.
    clock, q = make_new_queue()
    info = backed_off(q, clock, FakePod("a"), 0)
    assert q.num_backoff == 1 and q.where(info.pod) == BACKOFF
    assert not q.can_pop and q.pop() is None
    assert q.backoff_pods() == [info.pod]
    # Its backoff ends at 1 s, a window's start: it backs off until that window has passed.
    assert q.next_backoff_expiry() == 2 * SECOND
    clock.advance_to(1 * SECOND)
    assert q.flush_backoff_completed() == 0
    clock.advance_to(2 * SECOND - 1)
    assert q.flush_backoff_completed() == 0
    clock.advance_to(2 * SECOND)
    assert q.flush_backoff_completed() == 1 and q.where(info.pod) == ACTIVE


def test_backoffs_end_on_whole_seconds():
    # Failed at 0.3 s after one attempt: the backoff (1 s) ends at 1.3 s, in the window that
    # starts at 1 s; the pod backs off until that window has passed, 2 s.
    clock, q = make_new_queue()
    info = backed_off(q, clock, FakePod("a"), 300 * MS, "NodeResourcesFit")
    assert q.backoff_expiry(info) == 1 * SECOND
    assert q.next_backoff_expiry() == 2 * SECOND
    clock.advance_to(1999 * MS)
    assert q.is_backing_off(info) and q.flush_backoff_completed() == 0
    clock.advance_to(2 * SECOND)
    assert not q.is_backing_off(info) and q.flush_backoff_completed() == 1
    # Before 1.33: it ends at 1.3 s exactly.
    clock, q = make_queue()
    info = backed_off(q, clock, FakePod("a"), 300 * MS, "NodeResourcesFit")
    assert q.backoff_expiry(info) == q.next_backoff_expiry() == 1300 * MS


def test_the_windows_follow_the_wall_clock_seconds():
    # Virtual 0 stands for a wall time 0.4 s past a whole second: windows start at 0.6 s,
    # 1.6 s, …; a backoff ending at 1.3 s (virtual) is in the window that starts at 0.6 s.
    clock, q = make_new_queue(window_phase=400 * MS)
    info = backed_off(q, clock, FakePod("a"), 300 * MS, "NodeResourcesFit")
    assert q.window(1300 * MS) == 600 * MS and q.backoff_expiry(info) == 600 * MS
    assert q.next_backoff_expiry() == 1600 * MS


def test_one_window_is_popped_in_active_q_order():
    # b (priority 10) failed after a (priority 0), both backing off into the same window:
    # popped by priority. Before 1.33 the order is the backoff's end, then the failure.
    for new, order in ((True, ["b", "a"]), (False, ["a", "b"])):
        clock, q = make_new_queue() if new else make_queue()
        backed_off(q, clock, FakePod("a"), 100 * MS, "NodeResourcesFit")
        backed_off(q, clock, FakePod("b", priority=10), 200 * MS, "NodeResourcesFit")
        assert names(q.backoff_pods()) == order


def test_from_1_34_the_backoff_counts_unschedulable_attempts_or_consecutive_errors():
    clock, q = make_new_queue()
    info = backed_off(q, clock, FakePod("a"), 0)  # an error
    for _ in range(2):  # two more errors: 3 in a row
        clock.advance_to(clock.now() + 20 * SECOND)
        q.flush_backoff_completed()
        info = q.pop()
        q.move_all_to_active_or_backoff(ev.NODE_ADD)
        fail(q, info)
    assert (info.attempts, info.consecutive_errors, info.unschedulable_count) == (3, 3, 0)
    assert q.backoff_duration(info) == 4 * SECOND
    clock.advance_to(clock.now() + 20 * SECOND)
    q.flush_backoff_completed()
    info = q.pop()
    q.move_all_to_active_or_backoff(ev.NODE_ADD)
    fail(q, info, "NodeResourcesFit")  # rejected: the errors are forgotten
    assert (info.attempts, info.consecutive_errors, info.unschedulable_count) == (4, 0, 1)
    assert q.backoff_duration(info) == 1 * SECOND
    # 1.33 (and before) count every attempt: 8 s.
    q.backoff_by_failure = False
    assert q.backoff_duration(info) == 8 * SECOND


def test_the_backoff_flusher_ticks_on_whole_seconds_from_1_33():
    clock = VirtualClock()
    clock.advance_to(250 * MS)
    q = PriorityQueue(clock, pop_from_backoff=True)
    q.start(Timeline(clock))
    assert q.backoff_flusher.time == 1 * SECOND
    clock = VirtualClock()
    clock.advance_to(250 * MS)
    q = PriorityQueue(clock)
    q.start(Timeline(clock))
    assert q.backoff_flusher.time == 250 * MS  # wait.Until: at once


def test_a_nomination_that_goes_moves_the_pool_of_lower_or_equal_priority():
    # kube-scheduler counts a nominated pod on its node for pods of lower or equal priority;
    # when the nomination changes or goes (or the pod is deleted), `hasNominatedNodeNameChanged`
    # moves those pods as an AssignedPodDelete would, and leaves the higher ones in the pool.
    clock, q = make_queue(plugins=FILTERS)
    for pod in (FakePod("low", priority=5), FakePod("peer", priority=10),
                FakePod("high", priority=20)):
        q.add(pod)
    for _ in range(3):
        assert fail(q, q.pop(), "NodeResourcesFit") == UNSCHEDULABLE
    clock.advance_to(20 * SECOND)  # every backoff over: moved pods go straight to activeQ
    nominated = FakePod("preemptor", priority=10, nominated_node_name="n1")
    assert q.nominated_pod_gone(nominated) == 2
    assert names(q.active_pods()) == ["peer", "low"]
    assert names(q.unschedulable_pods()) == ["high"]
