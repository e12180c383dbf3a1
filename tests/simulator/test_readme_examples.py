"""The README's gang and quota simulations (config/examples/*), run as the README runs them:
the summary line and the placements it describes."""

from __future__ import annotations

import json
from pathlib import Path

from extender.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "config" / "examples"


def _simulate(tmp_path: Path, capsys, workload: str, policy: str) -> tuple[str, dict]:  # type: ignore[no-untyped-def]
    """`workload` and `policy` are under config/examples unless given as absolute paths."""
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
    # Each team-b pod, 40 s after the last, finds team-a over its min and preempts one of its
    # pods, then binds when that victim's 30 s grace period is over; team-a keeps its min.
    assert summary == ("4 scheduled, 0 pending, 3 preempted, 0 deleted; 10 cycles over "
                       "170.002s virtual (settled)")
    pods = {f"{p['namespace']}/{p['name']}": p for p in report["pods"]}
    assert {k: pods[k]["status"] for k in pods if k.startswith("team-a/")} == {
        "team-a/analytics-0": "Scheduled", "team-a/analytics-1": "Preempted",
        "team-a/analytics-2": "Preempted", "team-a/analytics-3": "Preempted"}
    assert {k: pods[k]["preempted"] for k in pods if k.startswith("team-b/")} == {
        "team-b/api-0": ["team-a/analytics-3"], "team-b/api-1": ["team-a/analytics-2"],
        "team-b/api-2": ["team-a/analytics-1"]}
    assert {k: (pods[k]["node"], pods[k]["scheduledAtSeconds"]) for k in pods
            if k.startswith("team-b/")} == {
        "team-b/api-0": ("worker-a1", 90.002), "team-b/api-1": ("worker-a2", 130.002),
        "team-b/api-2": ("worker-a2", 170.002)}
    # The attempts a real kube-scheduler 1.34.4 (scheduler-plugins) made in the replays of
    # 2026-12-02: on arrival (rejected, preempting), then once its victim had gone.
    assert {k: pods[k]["attempts"] for k in pods if k.startswith("team-b/")} == {
        "team-b/api-0": 2, "team-b/api-1": 2, "team-b/api-2": 2}


def test_quota_pods_arriving_together_evict_past_the_min(tmp_path, capsys) -> None:
    # The example's team-b pods one second apart: each still finds team-a at 4 cpu (its
    # victims count until their grace period is over) and evicts more, so all of team-a goes.
    workload = (EXAMPLES / "quota-workload.yaml").read_text()
    together = tmp_path / "together.yaml"
    together.write_text(workload.replace("10:01:40Z", "10:01:01Z").replace("10:02:20Z",
                                                                           "10:01:02Z"))
    summary, report = _simulate(tmp_path, capsys, str(together), "quota-policy.yaml")
    assert summary.startswith("3 scheduled, 0 pending, 4 preempted, 0 deleted")
    pods = {p["name"]: p for p in report["pods"]}
    assert pods["api-1"]["preempted"] == ["team-a/analytics-1", "team-a/analytics-2"]
    assert {pods[f"analytics-{i}"]["status"] for i in range(4)} == {"Preempted"}


def test_the_counts_agree_with_the_table(tmp_path, capsys) -> None:
    # The README's first simulation: five workload pods, and batch-2 of the cluster preempted.
    summary, report = _simulate(tmp_path, capsys, "workload.yaml", "../policy.yaml")
    assert summary.startswith("5 scheduled, 0 pending, 1 preempted, 0 deleted")
    totals = report["totals"]
    assert totals["pods"] == len(report["pods"]) == 6  # what the table lists
    assert totals["arrived"] == 5                      # the workload's pods
    assert totals["pods"] == sum(totals[k] for k in (
        "scheduled", "pending", "preempted", "deleted", "succeeded", "failed", "rejected"))
