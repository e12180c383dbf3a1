"""The README's gang and quota simulations (config/examples/*), run as the README runs them:
the summary line and the placements it describes."""

from __future__ import annotations

import json
from pathlib import Path

from extender.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "config" / "examples"


def _simulate(tmp_path: Path, capsys, workload: str, policy: str) -> tuple[str, dict]:  # type: ignore[no-untyped-def]
    report = tmp_path / "report.json"
    assert main(["simulate", "--cluster", str(EXAMPLES / "cluster.json"),
                 "--workload", str(EXAMPLES / workload), "--policy", str(EXAMPLES / policy),
                 "--report", str(report), "--no-progress"]) == 0
    summary = capsys.readouterr().out.strip().split("; 0.")[0]  # the wall-clock part varies
    return summary, json.loads(report.read_text())


def _pods(report: dict, prefix: str) -> dict[str, dict]:
    return {p["name"]: p for p in report["pods"] if p["name"].startswith(prefix)}


def test_three_gangs_all_or_nothing(tmp_path, capsys) -> None:
    summary, report = _simulate(tmp_path, capsys, "gang-workload.yaml", "gang-policy.yaml")
    assert summary == ("8 scheduled, 0 pending, 0 preempted, 4 deleted; 109 cycles over 330.004s "
                       "virtual (settled)")
    jobs = _pods(report, "job-")
    assert {p["scheduledAtSeconds"] for n, p in jobs.items() if n.startswith("job-a")} == {5.004}
    assert {p["scheduledAtSeconds"] for n, p in jobs.items() if n.startswith("job-b")} == {5.008}
    # job-c binds whole, never three of its four before: its rejected round is retried at once
    # (1.33+) until the race ends it (3 s after job-a finished, all its pods are in the pool,
    # rejected by Coscheduling); the 5-minute flush brings them back, to job-a's room.
    assert {(p["status"], p["scheduledAtSeconds"]) for n, p in jobs.items()
            if n.startswith("job-c")} == {("Scheduled", 330.004)}


def test_default_policy_binds_part_of_a_gang(tmp_path, capsys) -> None:
    summary, report = _simulate(tmp_path, capsys, "gang-workload.yaml", "../policy.yaml")
    times = sorted(p["scheduledAtSeconds"] for p in _pods(report, "job-c").values())
    assert times[:3] == [5.009, 5.01, 5.011] and times[3] == 120.001


def test_quota_borrowed_then_reclaimed(tmp_path, capsys) -> None:
    summary, report = _simulate(tmp_path, capsys, "quota-workload.yaml", "quota-policy.yaml")
    # team-a's pods take their default 30 s grace period to go, and count against its quota
    # until then: api-1 (61 s) and api-2 (62 s) still see team-a over its min and preempt
    # more (as CapacityScheduling does upstream while victims terminate); all of team-a goes.
    # At 90 s api-0's preemption finds nothing and its nomination goes, which moves it (and
    # any pod of its priority or lower in the pool) on at once: it is tried twice then.
    assert summary == ("3 scheduled, 0 pending, 4 preempted, 0 deleted; 14 cycles over 92.001s "
                       "virtual (settled)")
    pods = {f"{p['namespace']}/{p['name']}": p for p in report["pods"]}
    assert {k: pods[k]["status"] for k in pods if k.startswith("team-a/")} == {
        "team-a/analytics-0": "Preempted", "team-a/analytics-1": "Preempted",
        "team-a/analytics-2": "Preempted", "team-a/analytics-3": "Preempted"}
    assert {k: pods[k]["preempted"] for k in pods if k.startswith("team-b/")} == {
        "team-b/api-0": ["team-a/analytics-3"],
        "team-b/api-1": ["team-a/analytics-1", "team-a/analytics-2"],
        "team-b/api-2": ["team-a/analytics-0"]}
    assert {k: pods[k]["finishedAtSeconds"] for k in pods if k.startswith("team-a/")} == {
        "team-a/analytics-0": 92.001, "team-a/analytics-1": 91.001,
        "team-a/analytics-2": 91.001, "team-a/analytics-3": 90.001}
    # The attempts a real kube-scheduler 1.34.4 (scheduler-plugins) made in the replay of
    # 2026-12-01 01:18: api-0's second try at 90 s comes from its own nomination going.
    assert {k: pods[k]["attempts"] for k in pods if k.startswith("team-b/")} == {
        "team-b/api-0": 4, "team-b/api-1": 3, "team-b/api-2": 3}


def test_the_counts_agree_with_the_table(tmp_path, capsys) -> None:
    # The README's first simulation: five workload pods, and batch-2 of the cluster preempted.
    summary, report = _simulate(tmp_path, capsys, "workload.yaml", "../policy.yaml")
    assert summary.startswith("5 scheduled, 0 pending, 1 preempted, 0 deleted")
    totals = report["totals"]
    assert totals["pods"] == len(report["pods"]) == 6  # what the table lists
    assert totals["arrived"] == 5                      # the workload's pods
    assert totals["pods"] == sum(totals[k] for k in (
        "scheduled", "pending", "preempted", "deleted", "succeeded", "failed", "rejected"))
