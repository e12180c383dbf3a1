"""Priority from PriorityClasses, as the Priority admission plugin sets it when a pod is
created, and graceful termination of preemption victims.

Before issue 16 `priorityClassName` and `globalDefault` were never resolved: such pods ran at
priority 0 and never preempted, with no warning; victims vanished at once.
"""

from __future__ import annotations

import json
from typing import Any

from extender.cli import main
from extender.model import k8s
from extender.simulator.clock import SECOND
from extender.simulator.eventlog import EventLog
from extender.simulator.workload import ObjectArrival

from .helpers import at, by_name, node, pod, simulate, write


def priority_class(name: str, value: int, *, global_default: bool = False,
                   policy: str | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                           "metadata": {"name": name}, "value": value}
    if global_default:
        obj["globalDefault"] = True
    if policy:
        obj["preemptionPolicy"] = policy
    return obj


def admitted(name: str, cpu: str, **spec: Any) -> dict[str, Any]:
    """A pod as a user writes it: no spec.priority (the admission plugin fills it in)."""
    obj = pod(name, cpu, **spec)
    del obj["spec"]["priority"]
    return obj


def full_cluster(**victim_spec: Any) -> list[dict[str, Any]]:
    """A 2-cpu node full with `low` (priority 0)."""
    return [node("n", "2", "4Gi"), pod("low", "2", node_name="n", **victim_spec),
            priority_class("high", 1000)]


def test_a_preemptor_with_only_a_priority_class_preempts(tmp_path):
    # urgent names class `high` (1000) and no spec.priority: it preempts low at 0.001; low
    # keeps its room for its grace period (terminationGracePeriodSeconds unset: 30 s) while
    # urgent waits nominated; low is gone at 30.001 and urgent binds at 30.002.
    workload = [admitted("urgent", "1", created=at(0), priorityClassName="high")]
    _, report = simulate(tmp_path, full_cluster(), workload)
    pods = by_name(report)
    assert (pods["urgent"]["priority"], pods["urgent"]["node"],
            pods["urgent"]["scheduledAtSeconds"], pods["urgent"]["attempts"]) == (
        1000, "n", 30.002, 2)
    assert pods["urgent"]["preempted"] == ["default/low"]
    assert (pods["low"]["status"], pods["low"]["preemptedBy"], pods["low"]["finishedAtSeconds"]) == (
        "Preempted", "default/urgent", 30.001)
    assert report["warnings"] == []


def test_the_global_default_class_applies_to_pods_that_name_none(tmp_path):
    # Two globalDefault classes (a race the API allows): the lowest value wins, 500.
    cluster = [*full_cluster(), priority_class("default-a", 700, global_default=True),
               priority_class("default-b", 500, global_default=True)]
    workload = [admitted("plain", "1", created=at(0))]
    # (Victims go at once here.) plain preempts low at 0.001; low's deletion moves it to
    # backoffQ, from which it is popped at once (activeQ is empty): bound at 0.002.
    _, report = simulate(tmp_path, cluster, workload, victim_grace_period=0)
    plain = by_name(report)["plain"]
    assert (plain["priority"], plain["scheduledAtSeconds"], plain["preempted"]) == (
        500, 0.002, ["default/low"])


def test_spec_priority_is_kept_as_exported(tmp_path):
    # An exported pod passed admission already: its spec.priority stands (0 here), whatever
    # its class says; it does not preempt.
    workload = [pod("exported", "1", created=at(0), priority=0, priorityClassName="high")]
    _, report = simulate(tmp_path, full_cluster(), workload)
    exported = by_name(report)["exported"]
    assert (exported["priority"], exported["status"], exported["preempted"]) == (0, "Pending", [])


def test_an_unknown_class_is_rejected_at_admission_with_a_warning(tmp_path, capsys):
    cluster = full_cluster()
    workload = [admitted("typo", "1", created=at(0), priorityClassName="hihg"),
                admitted("ok", "100m", created=at(1))]
    _, report = simulate(tmp_path, cluster, workload)
    typo = by_name(report)["typo"]
    message = 'pods "typo" is forbidden: no PriorityClass with name hihg was found'
    assert (typo["status"], typo["message"], typo["attempts"], typo["node"]) == (
        "Rejected", message, 0, None)
    assert report["totals"]["rejected"] == 1
    assert report["warnings"] == [f"pod default/typo rejected at admission: {message}"]
    # The summary line counts it and the warning follows on stderr.
    (tmp_path / "policy.json").write_text(json.dumps({"apiVersion": "scheduler-extender/v1",
                                                      "kind": "ExtenderPolicy"}))
    assert main(["simulate", "--cluster", str(tmp_path / "cluster.json"),
                 "--workload", str(tmp_path / "workload.json"),
                 "--policy", str(tmp_path / "policy.json"), "--no-progress"]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("0 scheduled, 1 pending, 0 preempted, 0 deleted, 1 rejected; ")
    assert f"warning: pod default/typo rejected at admission: {message}" in out.err


def test_preemption_policy_comes_from_the_class(tmp_path):
    cluster = [*full_cluster(), priority_class("polite", 1000, policy="Never")]
    workload = [admitted("polite-pod", "1", created=at(0), priorityClassName="polite"),
                # a preemptionPolicy other than the class's: refused, as the API server does
                admitted("clash", "1", created=at(0), priorityClassName="polite",
                         preemptionPolicy="PreemptLowerPriority")]
    _, report = simulate(tmp_path, cluster, workload)
    pods = by_name(report)
    assert (pods["polite-pod"]["priority"], pods["polite-pod"]["status"]) == (1000, "Pending")
    assert pods["polite-pod"]["message"] == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to "
        "preemptionPolicy=Never.")
    assert pods["clash"]["status"] == "Rejected"
    assert pods["clash"]["message"] == (
        'pods "clash" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) '
        "must not be provided in pod spec; priority admission controller computed Never from "
        "the given PriorityClass name")


def test_a_class_created_by_the_workload_counts_from_its_creation(tmp_path):
    # The workload's PriorityClass `late` is created at 5 s: `early` (0 s) names it before it
    # exists and is refused; `later` (6 s) gets its value.
    workload = [priority_class("late", 2000) | {"metadata": {"name": "late",
                                                             "creationTimestamp": at(5)}},
                admitted("early", "1", created=at(0), priorityClassName="late"),
                admitted("later", "1", created=at(6), priorityClassName="late")]
    _, report = simulate(tmp_path, full_cluster(), workload, victim_grace_period=0)
    pods = by_name(report)
    assert pods["early"]["status"] == "Rejected"
    assert (pods["later"]["priority"], pods["later"]["preempted"]) == (2000, ["default/low"])


def test_a_hand_built_object_arrival_of_a_priority_class(tmp_path):
    # The loop takes any ObjectArrival of a kind the state keeps (what the workload reader
    # gives it for a PriorityClass).
    from extender.engine.policy import parse_policy
    from extender.engine.profile import build_profile
    from extender.simulator.loop import Simulation, SimulationConfig
    from extender.simulator.workload import load_workload
    from extender.state.snapshot import load_snapshot

    from .helpers import LEAST_ALLOCATED_ONLY

    state = load_snapshot(write(tmp_path / "c.json", [node("n", "2", "4Gi"),
                                                      pod("low", "2", node_name="n")]))
    workload = load_workload(write(tmp_path / "w.json", [
        admitted("urgent", "1", created=at(1), priorityClassName="made")]))
    made = k8s.convert(priority_class("made", 300), k8s.PriorityClass)
    workload.objects.append(ObjectArrival(0, "PriorityClass", made))
    sim = Simulation(state, build_profile(parse_policy(LEAST_ALLOCATED_ONLY)), workload,
                     SimulationConfig(victim_grace_period=0))
    result = sim.run()
    urgent = next(r for r in result.records.values() if r.name == "urgent")
    assert (urgent.priority, urgent.node, urgent.preemptions_caused) == (300, "n", ["default/low"])


def test_a_bound_pod_that_names_a_class_gets_its_value(tmp_path):
    # A hand-written cluster: `vip` names class `high` without spec.priority; it is no victim
    # for a priority-500 preemptor (it would be, at 0).
    vip = pod("vip", "2", node_name="n", priorityClassName="high")
    del vip["spec"]["priority"]
    cluster = [node("n", "2", "4Gi"), vip, priority_class("high", 1000)]
    _, report = simulate(tmp_path, cluster, [pod("mid", "1", created=at(0), priority=500)])
    assert (by_name(report)["mid"]["status"], by_name(report)["mid"]["preempted"]) == (
        "Pending", [])


# -- graceful termination ---------------------------------------------------------------------


def test_victims_go_after_their_own_grace_period_and_the_preemptor_waits_nominated(tmp_path):
    # low's terminationGracePeriodSeconds is 5: evicted at 0.001, it keeps its room until
    # 5.001 while urgent waits nominated to n (a retry meanwhile would find the node full);
    # its deletion moves urgent (backoff over since 1.001) straight to activeQ: 5.002.
    workload = [pod("urgent", "1", created=at(0), priority=1000)]
    events = tmp_path / "events.jsonl"
    with events.open("w") as stream:
        _, report = simulate(tmp_path, full_cluster(terminationGracePeriodSeconds=5), workload,
                             events=EventLog(stream))
    pods = by_name(report)
    assert (pods["urgent"]["scheduledAtSeconds"], pods["low"]["finishedAtSeconds"]) == (
        5.002, 5.001)
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    assert [e for e in lines if e["action"] in ("nominate", "preempt", "evict", "bind")] == [
        {"t": 0.001, "action": "nominate", "pod": "default/urgent", "node": "n"},
        {"t": 0.001, "action": "preempt", "pod": "default/urgent", "node": "n",
         "victims": ["default/low"]},
        {"t": 0.001, "action": "evict", "pod": "default/low", "node": "n", "by": "default/urgent",
         "gracePeriodSeconds": 5.0},
        {"t": 5.001, "action": "evict", "pod": "default/low", "node": "n", "by": "default/urgent",
         "terminated": True},
        {"t": 5.002, "action": "bind", "pod": "default/urgent", "node": "n"},
    ]
    # The room is kept: cpu stays allocated (2 of 2) until 5.001, then urgent's 1 cpu.
    samples = [(e["t"], e["cpuAllocated"]) for e in lines if e["action"] == "queues"]
    assert [(t, cpu) for t, cpu in samples if cpu < 1.0] == [(5.001, 0.0), (5.002, 0.5)]
    assert samples[0] == (0.0, 1.0)


def test_the_flag_overrides_every_victims_grace_period(tmp_path):
    workload = [pod("urgent", "1", created=at(0), priority=1000)]
    _, report = simulate(tmp_path, full_cluster(terminationGracePeriodSeconds=5), workload,
                         victim_grace_period=12 * SECOND)
    assert by_name(report)["urgent"]["scheduledAtSeconds"] == 12.002
    assert report["inputs"]["victimGracePeriodSeconds"] == 12.0
    _, report = simulate(tmp_path, full_cluster(), workload)
    assert report["inputs"]["victimGracePeriodSeconds"] is None  # each victim's own
