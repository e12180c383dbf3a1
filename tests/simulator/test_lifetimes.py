"""Pod lifetimes, the loop's side: a bound pod with `Arrival.run_for` completes that long after
its bind (Succeeded or Failed as `Arrival.finish` says), frees its room, and the queue hears it
as an AssignedPodDelete."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from extender.engine.policy import parse_policy
from extender.engine.profile import build_profile
from extender.model import k8s
from extender.model.pod import PodView
from extender.simulator.clock import SECOND
from extender.simulator.eventlog import EventLog
from extender.simulator.loop import Simulation, SimulationConfig, SimulationResult
from extender.simulator.report import build_report
from extender.simulator.workload import Arrival, Workload
from extender.state.snapshot import load_snapshot

from .helpers import LEAST_ALLOCATED_ONLY, at, by_name, node, pod, simulate, write


def arrival(obj: dict[str, Any], time: int, run_for: int | None = None,
            finish: str = "Succeeded") -> Arrival:
    """A hand-built Arrival (what the workload reader makes of a pod with a lifetime)."""
    view = PodView.from_k8s(k8s.convert(obj, k8s.Pod))
    return Arrival(time, view, obj, run_for=run_for, finish=finish)


def run(tmp_path: Path, cluster: list[dict[str, Any]], arrivals: list[Arrival],
        events: Path | None = None, **config: Any) -> tuple[SimulationResult, dict[str, Any]]:
    state = load_snapshot(write(tmp_path / "cluster.json", cluster))
    profile = build_profile(parse_policy(LEAST_ALLOCATED_ONLY))
    if events is None:
        result = Simulation(state, profile, Workload(arrivals=arrivals),
                            SimulationConfig(**config)).run()
    else:
        with events.open("w") as stream:
            result = Simulation(state, profile, Workload(arrivals=arrivals),
                                SimulationConfig(**config), events=EventLog(stream)).run()
    return result, build_report(result, profile)


def test_a_pod_completes_after_its_lifetime_and_frees_its_room(tmp_path):
    # task (2 cpu) is bound at 0.001 and runs 10 s: it succeeds at 10.001. waiter (2 cpu)
    # failed at 0.002 (pool); task's completion is an AssignedPodDelete: its backoff (until
    # 1.002) is over, so it goes straight to activeQ and binds at 10.002. waiter runs for
    # ever; nothing else can change: the run settles there.
    events = tmp_path / "events.jsonl"
    result, report = run(tmp_path, [node("n", "2", "4Gi")], [
        arrival(pod("task", "2"), 0, run_for=10 * SECOND),
        arrival(pod("waiter", "2"), 0),
    ], events)
    pods = by_name(report)
    assert (pods["task"]["status"], pods["task"]["scheduledAtSeconds"],
            pods["task"]["finishedAtSeconds"]) == ("Succeeded", 0.001, 10.001)
    assert (pods["waiter"]["status"], pods["waiter"]["scheduledAtSeconds"]) == ("Scheduled", 10.002)
    totals = report["totals"]
    assert (totals["succeeded"], totals["failed"], totals["scheduled"]) == (1, 0, 1)
    assert (totals["virtualTimeSeconds"], totals["endReason"]) == (10.002, "settled")
    assert report["nodes"][0]["after"]["cpuMilli"] == 2000  # waiter only
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    assert [e for e in lines if e["t"] == 10.001 and e["action"] != "queues"] == [
        {"t": 10.001, "action": "complete", "pod": "default/task", "phase": "Succeeded"},
        {"t": 10.001, "action": "move", "pod": "default/waiter", "from": "unschedulable",
         "to": "active", "event": "AssignedPodDelete"},
    ]


def test_a_failed_pod_and_one_that_came_bound(tmp_path):
    # A pod that arrives with spec.nodeName starts its lifetime at its arrival (5 s).
    result, report = run(tmp_path, [node("n", "4", "8Gi")], [
        arrival(pod("crash", "1"), 0, run_for=3 * SECOND, finish="Failed"),
        arrival(pod("static", "1", node_name="n"), 5 * SECOND, run_for=2 * SECOND),
    ])
    pods = by_name(report)
    assert (pods["crash"]["status"], pods["crash"]["finishedAtSeconds"]) == ("Failed", 3.001)
    assert (pods["static"]["status"], pods["static"]["finishedAtSeconds"]) == ("Succeeded", 7.0)
    assert (report["totals"]["failed"], report["totals"]["succeeded"]) == (1, 1)
    assert report["totals"]["virtualTimeSeconds"] == 7.0
    assert report["nodes"][0]["after"]["cpuMilli"] == 0


def test_a_victim_is_terminated_not_completed(tmp_path):
    # low would run 60 s from its bind at 0.001, but urgent (arriving at 1 s) preempts it at
    # 1.001; it terminates at 1.001 (grace 0) and never completes.
    result, report = run(tmp_path, [node("n", "2", "4Gi")], [
        arrival(pod("low", "2"), 0, run_for=60 * SECOND),
        arrival(pod("urgent", "2", priority=1000), 1 * SECOND),
    ], victim_grace_period=0)
    pods = by_name(report)
    assert (pods["low"]["status"], pods["low"]["finishedAtSeconds"]) == ("Preempted", 1.001)
    assert report["totals"]["succeeded"] == 0
    # urgent is popped from backoffQ as low goes (1.33+: activeQ is empty) and binds at 1.002.
    assert report["totals"]["virtualTimeSeconds"] == 1.002


def test_lifetimes_from_the_workload_file(tmp_path):
    # The workload reader's annotations (simulator.extender/run-for, /finish) reach the loop.
    job = pod("job", "1", created=at(0))
    job["metadata"]["annotations"] = {"simulator.extender/run-for": "1m30s",
                                      "simulator.extender/finish": "Failed"}
    _, report = simulate(tmp_path, [node("n", "2", "4Gi")], [job])
    assert (by_name(report)["job"]["status"], by_name(report)["job"]["finishedAtSeconds"]) == (
        "Failed", 90.001)


# -- the workload's controllers, through the loop ----------------------------------------------

CONTAINER = {"name": "c", "image": "registry.example/app:1",
             "resources": {"requests": {"cpu": "1", "memory": "64Mi"}}}


def test_a_job_runs_its_completions_one_after_the_other(tmp_path):
    # parallelism 1, completions 2, each pod runs 10 s: the first binds at 0.001 and succeeds
    # at 10.001, when the Job controller creates the second (bound 10.002, done 20.002).
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "etl"},
           "spec": {"parallelism": 1, "completions": 2, "template": {
               "metadata": {"labels": {"app": "etl"},
                            "annotations": {"simulator.extender/run-for": "10s"}},
               "spec": {"restartPolicy": "Never", "containers": [CONTAINER]}}}}
    _, report = simulate(tmp_path, [node("n", "2", "4Gi")], [job])
    pods = sorted(report["pods"], key=lambda p: p["arrivedAtSeconds"])
    assert [(p["status"], p["arrivedAtSeconds"], p["scheduledAtSeconds"], p["finishedAtSeconds"])
            for p in pods] == [("Succeeded", 0.0, 0.001, 10.001),
                               ("Succeeded", 10.001, 10.002, 20.002)]
    assert (report["totals"]["virtualTimeSeconds"], report["totals"]["endReason"]) == (
        20.002, "settled")


def test_a_replica_set_replaces_a_preempted_pod_at_once(tmp_path):
    # The ReplicaSet's pod (1 cpu of 1) is preempted by urgent at 1.001; terminating, it is no
    # longer active: the controller creates its replacement then (it cannot fit: Pending).
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
          "metadata": {"name": "web", "creationTimestamp": at(0)},
          "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                   "template": {"metadata": {"labels": {"app": "web"}},
                                "spec": {"containers": [CONTAINER]}}}}
    _, report = simulate(tmp_path, [node("n", "1", "4Gi")],
                         [rs, pod("urgent", "1", created=at(1), priority=1000)])
    web = sorted((p for p in report["pods"] if p["name"].startswith("web-")),
                 key=lambda p: p["arrivedAtSeconds"])
    assert [(p["status"], p["arrivedAtSeconds"], p["finishedAtSeconds"]) for p in web] == [
        ("Preempted", 0.0, 31.001), ("Pending", 1.001, None)]
    assert by_name(report)["urgent"]["scheduledAtSeconds"] == 31.002
