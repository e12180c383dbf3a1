"""Exact timing: the virtual clock stops at every instant kube-scheduler acts, and a run says
why it ended.

Before issue 16 a pod that only the leftover flush (podMaxInUnschedulablePodsDuration 5 min,
checked every 30 s) moves back to activeQ was not retried until some other event: with
nothing else to do the run stopped at once, and with a later event the pod was retried at
that event's time, not at the flush. Each scenario below failed that way; the values are
computed by hand in the comments (a cycle costs 1 ms, flushers tick at 0, 1, 2 … s and 0, 30,
60 … s).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from extender.cli import main
from extender.simulator.clock import SECOND
from extender.simulator.eventlog import EventLog

from .helpers import EPOCH, LEAST_ALLOCATED_ONLY, at, by_name, node, pod, simulate, write
from .scheduler_plugins import gang_policy, member, pod_group

TOLERATION = {**LEAST_ALLOCATED_ONLY, "plugins": {
    **LEAST_ALLOCATED_ONLY["plugins"],
    "postFilter": {"disabled": [{"name": "DefaultPreemption"}],
                   "enabled": [{"name": "PreemptionToleration"}]}}}
#: The same on kube-scheduler 1.32, which waits out a backoff even when activeQ is empty.
TOLERATION_1_32 = {**TOLERATION, "kubernetesVersion": "1.32"}


def priority_class(name: str, value: int, **annotations: str) -> dict[str, Any]:
    prefix = "preemption-toleration.scheduling.x-k8s.io/"
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name,
                         "annotations": {prefix + k.replace("_", "-"): v
                                         for k, v in annotations.items()}},
            "value": value}


def tolerating_cluster(**victim_spec: Any) -> list[dict[str, Any]]:
    """One 2-cpu node full with `batch-1` (priority 100, class `batch`, scheduled at time 0),
    which tolerates preemption by pods below priority 10 000 for its first 600 s."""
    victim = pod("batch-1", "2", node_name="n", priority=100, priorityClassName="batch",
                 **victim_spec)
    victim["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": EPOCH}]
    return [node("n", "2", "4Gi"),
            priority_class("batch", 100, minimum_preemptable_priority="10000",
                           toleration_seconds="600"),
            victim]


URGENT = [pod("urgent", "1", created=at(0), priority=1000)]


def _events(path: Path, pod_key: str | None = None) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [e for e in lines if pod_key is None or e.get("pod") == pod_key]


@pytest.mark.parametrize(("policy", "bound_at"), [(TOLERATION, 660.002),
                                                  (TOLERATION_1_32, 665.001)],
                         ids=["1.33+", "1.32"])
def test_a_tolerated_preemptor_is_placed_by_the_leftover_flush_alone(tmp_path, policy,
                                                                      bound_at):
    # urgent (1000 < 10 000) cannot preempt batch-1 before 600 s: it fails at 0.001 and waits
    # in the pool. Nothing else happens; only the leftover flush retries it: at the first
    # 30 s tick with now − 0.001 > 300 s, 330 s (fails again: 330 < 600, back at 330.001),
    # then at 660 s (660 − 330.001 > 300; 630 was not). At 660 the toleration is over: it
    # preempts batch-1 (terminationGracePeriodSeconds 0: gone at 660.001), whose deletion
    # moves it to backoffQ. From 1.33 activeQ is empty, so it is popped from there at once:
    # bound at 660.002. Before, it waits until 660.001 + 4 s (its third attempt) and the
    # 665 s backoff flush hands it over: bound at 665.001.
    result, report = simulate(tmp_path, tolerating_cluster(terminationGracePeriodSeconds=0),
                              URGENT, policy)
    pods = by_name(report)
    urgent = pods["urgent"]
    assert (urgent["status"], urgent["node"], urgent["scheduledAtSeconds"], urgent["attempts"]) == (
        "Scheduled", "n", bound_at, 4)
    assert urgent["preempted"] == ["default/batch-1"]
    assert (pods["batch-1"]["status"], pods["batch-1"]["finishedAtSeconds"]) == ("Preempted", 660.001)
    totals = report["totals"]
    assert (totals["virtualTimeSeconds"], totals["truncated"], totals["endReason"]) == (
        bound_at, False, "settled")
    assert result.end_reason == "settled"


_FLUSHES = [
    (0.0, "new", "active", "UnscheduledPodAdd"),
    (0.001, "active", "unschedulable", "ScheduleAttemptFailure"),
    (330.0, "unschedulable", "active", "UnschedulableTimeout"),
    (330.001, "active", "unschedulable", "ScheduleAttemptFailure"),
    (660.0, "unschedulable", "active", "UnschedulableTimeout"),
    (660.001, "active", "unschedulable", "ScheduleAttemptFailure"),
    (660.001, "unschedulable", "backoff", "AssignedPodDelete"),
]


@pytest.mark.parametrize(("policy", "last_move", "bound_at"), [
    (TOLERATION, (660.001, "backoff", "active", "PopFromBackoffQ"), 660.002),
    (TOLERATION_1_32, (665.0, "backoff", "active", "BackoffComplete"), 665.001),
], ids=["1.33+", "1.32"])
def test_the_flush_instants_in_the_event_log(tmp_path, policy, last_move, bound_at):
    cluster = tolerating_cluster(terminationGracePeriodSeconds=0)
    events = tmp_path / "events.jsonl"
    (tmp_path / "policy.json").write_text(json.dumps(policy))
    assert main(["simulate", "--cluster", str(write(tmp_path / "cluster.json", cluster)),
                 "--workload", str(write(tmp_path / "workload.json", URGENT)),
                 "--policy", str(tmp_path / "policy.json"), "--no-progress",
                 "--events", str(events)]) == 0
    moves = [(e["t"], e["from"], e["to"], e["event"]) for e in _events(events, "default/urgent")
             if e["action"] == "move"]
    assert moves == [*_FLUSHES, last_move]
    attempts = [(e["t"], e["result"]) for e in _events(events, "default/urgent")
                if e["action"] == "attempt"]
    assert attempts == [(0.001, "unschedulable"), (330.001, "unschedulable"),
                        (660.001, "unschedulable"), (bound_at, "scheduled")]
    assert _events(events)[-1] == {"t": bound_at, "action": "end", "reason": "settled"}


def test_the_horizon_cuts_the_wait_and_the_run_says_so(tmp_path, capsys):
    _, report = simulate(tmp_path, tolerating_cluster(terminationGracePeriodSeconds=0), URGENT,
                         TOLERATION, max_time=500 * SECOND)
    urgent = by_name(report)["urgent"]
    assert (urgent["status"], urgent["attempts"]) == ("Pending", 2)  # 0.001 and 330.001
    totals = report["totals"]
    assert (totals["virtualTimeSeconds"], totals["truncated"], totals["endReason"]) == (
        500.0, True, "horizon")
    # The summary line says it too.
    (tmp_path / "policy.json").write_text(json.dumps(TOLERATION))
    assert main(["simulate", "--cluster", str(tmp_path / "cluster.json"),
                 "--workload", str(tmp_path / "workload.json"),
                 "--policy", str(tmp_path / "policy.json"), "--no-progress",
                 "--max-time", "500s"]) == 0
    assert capsys.readouterr().out.startswith(
        "0 scheduled, 1 pending, 0 preempted, 0 deleted; 2 cycles over 500.000s virtual "
        "(horizon: truncated by --max-time); ")
    assert main(["simulate", "--cluster", str(tmp_path / "cluster.json"),
                 "--workload", str(tmp_path / "workload.json"),
                 "--policy", str(tmp_path / "policy.json"), "--no-progress"]) == 0
    assert capsys.readouterr().out.startswith(
        "1 scheduled, 0 pending, 1 preempted, 0 deleted; 4 cycles over 660.002s virtual "
        "(settled); ")


def test_a_horizon_that_cuts_nothing_is_settled(tmp_path):
    # Settled at 0.001 (nothing can change), long before a 500 s horizon.
    _, report = simulate(tmp_path, [node("small", "2", "4Gi")], [pod("big", "8", created=at(0))],
                         max_time=500 * SECOND)
    totals = report["totals"]
    assert (totals["virtualTimeSeconds"], totals["truncated"], totals["endReason"]) == (
        0.001, False, "settled")


def test_a_pool_pod_is_retried_at_its_flush_not_at_the_next_arrival(tmp_path):
    # big never fits. It fails at 0.001 and is retried at every leftover flush 5 min later:
    # 330 s (330.001), 660 s (660 − 330.001 > 300), 990 s. late arrives at 1000 s and is bound
    # at 1000.001 (before the fix: big was retried at 1000 and late bound at 1000.002). The
    # bind changed the cluster, so big is retried once more at 1320 s, and then nothing can
    # change.
    workload = [pod("big", "8", created=at(0)),
                pod("late", "1", created="2024-01-01T00:16:40Z")]
    events = tmp_path / "events.jsonl"
    with events.open("w") as stream:
        _, report = simulate(tmp_path, [node("small", "2", "4Gi")], workload,
                             events=EventLog(stream))
    pods = by_name(report)
    assert (pods["late"]["scheduledAtSeconds"], pods["late"]["attempts"]) == (1000.001, 1)
    assert (pods["big"]["status"], pods["big"]["attempts"]) == ("Pending", 5)
    assert [e["t"] for e in _events(events, "default/big") if e["action"] == "attempt"] == [
        0.001, 330.001, 660.001, 990.001, 1320.001]
    assert (report["totals"]["virtualTimeSeconds"], report["totals"]["endReason"]) == (
        1320.001, "settled")


def test_a_pod_group_backoff_that_ends_is_a_reason_to_retry(tmp_path):
    # Coscheduling with podGroupBackoffSeconds 60: g-0 (2 cpu) waits at Permit on n1 (3 cpu);
    # g-1 finds no room and the PostFilter rejects the group at 0.002 (g-0 is rejected at
    # Permit), which is kept out until 60.002 ("failed recently"). n2 joins at 3 s (no plugin
    # that rejected them listens to it); PodGroup h's creation at 5 s (PodGroupAdd) moves both:
    # they fail on the backoff at 5.001 and 5.002, after the last change. Nothing else
    # happens, but the backoff ends at 60.002: the leftover flush retries them at 330 s (the
    # first tick 300 s after 5.002) and the group binds (before the fix: both Pending, the
    # run over at 5.002).
    workload = [pod_group("g", 2), member("g-0", "g", "2", created=at(0)),
                member("g-1", "g", "2", created=at(0)),
                {"kind": "SimulationEvent", "at": "3s", "addNode": node("n2", "3", "4Gi")},
                pod_group("h", 1, created=at(5))]
    _, report = simulate(tmp_path, [node("n1", "3", "4Gi")], workload,
                         gang_policy(podGroupBackoffSeconds=60))
    pods = by_name(report)
    assert {n: (pods[n]["status"], pods[n]["node"], pods[n]["scheduledAtSeconds"],
                pods[n]["attempts"]) for n in ("g-0", "g-1")} == {
        "g-0": ("Scheduled", "n1", 330.002, 3), "g-1": ("Scheduled", "n2", 330.002, 4)}
    assert (report["totals"]["virtualTimeSeconds"], report["totals"]["endReason"]) == (
        330.002, "settled")


def test_cycles_cost_by_kind(tmp_path):
    # n is full with two 1-cpu pods. urgent (priority 1000) preempts one; big never fits.
    # With a preemption cycle costing 100 ms and a failed one 10 ms, urgent's cycle ends at
    # 0.1 s and big's at 0.11 s; the victim goes after its 30 s grace period, and urgent's
    # next cycle places it at 30.101 (1 ms), big failing again at 30.111. Unset, every kind
    # costs the 1 ms of a cycle that places its pod.
    cluster = [node("n", "2", "4Gi"), pod("low-1", "1", node_name="n"),
               pod("low-2", "1", node_name="n")]
    workload = [pod("urgent", "1", created=at(0), priority=1000), pod("big", "4", created=at(0))]
    times = {}
    for costs in ({}, {"failure_cost": SECOND // 100, "preemption_cost": SECOND // 10}):
        events = tmp_path / "events.jsonl"
        with events.open("w") as stream:
            _, report = simulate(tmp_path, cluster, workload, events=EventLog(stream), **costs)
        times[len(costs)] = [(e["t"], e["pod"], e["result"]) for e in _events(events)
                             if e["action"] == "attempt"]
        inputs = report["inputs"]
        assert (inputs["cycleCostSeconds"], inputs["failureCostSeconds"],
                inputs["preemptionCostSeconds"]) == ((0.001, 0.01, 0.1) if costs else
                                                     (0.001, 0.001, 0.001))
    assert times[2] == [(0.1, "default/urgent", "unschedulable"),
                        (0.11, "default/big", "unschedulable"),
                        (30.101, "default/urgent", "scheduled"),
                        (30.111, "default/big", "unschedulable")]
    assert times[0] == [(0.001, "default/urgent", "unschedulable"),
                        (0.002, "default/big", "unschedulable"),
                        (30.002, "default/urgent", "scheduled"),
                        (30.003, "default/big", "unschedulable")]
    # A failure cost alone costs preemption cycles too.
    _, report = simulate(tmp_path, cluster, workload, failure_cost=SECOND // 50)
    assert report["inputs"]["preemptionCostSeconds"] == 0.02
    assert by_name(report)["urgent"]["scheduledAtSeconds"] == 30.021


def test_a_preemption_cycle_costs_more_for_each_pod_nominated(tmp_path):
    # Three full 1-cpu nodes, three urgent pods arriving together: each preempts a node's
    # pod. A preemption cycle costs 100 ms and 10 ms more for each other pod nominated when
    # it runs (kube-scheduler filters each node with its nominated pods added): urgent-a's
    # ends at 0.1 s (none nominated), urgent-b's 110 ms later (a), urgent-c's 120 ms after
    # that (a and b).
    cluster = [node(f"n{i}", "1", "4Gi") for i in range(3)] + [
        pod(f"low-{i}", "1", node_name=f"n{i}") for i in range(3)]
    workload = [pod(f"urgent-{x}", "1", created=at(0), priority=1000) for x in "abc"]
    events = tmp_path / "events.jsonl"
    with events.open("w") as stream:
        _, report = simulate(tmp_path, cluster, workload, events=EventLog(stream),
                             preemption_cost=SECOND // 10,
                             preemption_cost_per_nominated=SECOND // 100)
    attempts = [(e["t"], e["result"]) for e in _events(events) if e["action"] == "attempt"]
    assert attempts[:3] == [(0.1, "unschedulable"), (0.21, "unschedulable"),
                            (0.33, "unschedulable")]
    assert [e["t"] for e in _events(events) if e["action"] == "nominate"] == [0.1, 0.21, 0.33]
    assert (report["inputs"]["preemptionCostSeconds"],
            report["inputs"]["preemptionCostPerNominatedSeconds"]) == (0.1, 0.01)
    # Without the growth every preemption cycle costs the same 100 ms.
    with events.open("w") as stream:
        _, report = simulate(tmp_path, cluster, workload, events=EventLog(stream),
                             preemption_cost=SECOND // 10)
    assert [e["t"] for e in _events(events) if e["action"] == "nominate"] == [0.1, 0.2, 0.3]
    assert "preemptionCostPerNominatedSeconds" not in report["inputs"]


def test_a_failed_cycle_costs_more_for_each_pod_nominated(tmp_path):
    # The same three preemptors, then big (4 cpu), which fits nowhere and cannot preempt
    # (priority 0): its cycle, with three pods nominated, costs 10 ms + 3 × 2 ms, from the
    # end of urgent-c's at 0.3 s. A preemption cycle without a cost of its own grows as a
    # failed one does: 10 ms + 2 ms for each pod nominated before it.
    cluster = [node(f"n{i}", "1", "4Gi") for i in range(3)] + [
        pod(f"low-{i}", "1", node_name=f"n{i}") for i in range(3)]
    workload = [pod(f"urgent-{x}", "1", created=at(0), priority=1000) for x in "abc"] + [
        pod("big", "4", created=at(0))]
    events = tmp_path / "events.jsonl"
    with events.open("w") as stream:
        _, report = simulate(tmp_path, cluster, workload, events=EventLog(stream),
                             failure_cost=SECOND // 100,
                             failure_cost_per_nominated=SECOND // 500,
                             preemption_cost=SECOND // 10, preemption_cost_per_nominated=0)
    attempts = [(e["t"], e["pod"]) for e in _events(events) if e["action"] == "attempt"]
    assert attempts[:4] == [(0.1, "default/urgent-a"), (0.2, "default/urgent-b"),
                            (0.3, "default/urgent-c"), (0.316, "default/big")]
    inputs = report["inputs"]
    assert (inputs["failureCostSeconds"], inputs["failureCostPerNominatedSeconds"]) == (0.01, 0.002)
    assert "preemptionCostPerNominatedSeconds" not in inputs
    with events.open("w") as stream:
        _, report = simulate(tmp_path, cluster, workload, events=EventLog(stream),
                             failure_cost=SECOND // 100, failure_cost_per_nominated=SECOND // 500)
    assert [e["t"] for e in _events(events) if e["action"] == "nominate"] == [0.01, 0.022, 0.036]
    assert report["inputs"]["preemptionCostPerNominatedSeconds"] == 0.002
