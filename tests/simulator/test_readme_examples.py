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
    assert summary == "8 scheduled, 0 pending, 0 preempted, 4 deleted; 64 cycles over 123.004s virtual"
    jobs = _pods(report, "job-")
    assert {p["scheduledAtSeconds"] for n, p in jobs.items() if n.startswith("job-a")} == {5.004}
    assert {p["scheduledAtSeconds"] for n, p in jobs.items() if n.startswith("job-b")} == {5.008}
    # job-c binds whole, once job-a's pods are gone; never three of its four before.
    assert {(p["status"], p["scheduledAtSeconds"]) for n, p in jobs.items()
            if n.startswith("job-c")} == {("Scheduled", 123.004)}


def test_default_policy_binds_part_of_a_gang(tmp_path, capsys) -> None:
    summary, report = _simulate(tmp_path, capsys, "gang-workload.yaml", "../policy.yaml")
    times = sorted(p["scheduledAtSeconds"] for p in _pods(report, "job-c").values())
    assert times[:3] == [5.009, 5.01, 5.011] and times[3] == 120.001


def test_quota_borrowed_then_reclaimed(tmp_path, capsys) -> None:
    summary, report = _simulate(tmp_path, capsys, "quota-workload.yaml", "quota-policy.yaml")
    assert summary == "4 scheduled, 0 pending, 3 preempted, 0 deleted; 10 cycles over 64.001s virtual"
    pods = {f"{p['namespace']}/{p['name']}": p for p in report["pods"]}
    assert {k: pods[k]["status"] for k in pods if k.startswith("team-a/")} == {
        "team-a/analytics-0": "Scheduled", "team-a/analytics-1": "Preempted",
        "team-a/analytics-2": "Preempted", "team-a/analytics-3": "Preempted"}
    assert {k: pods[k]["preempted"] for k in pods if k.startswith("team-b/")} == {
        "team-b/api-0": ["team-a/analytics-3"], "team-b/api-1": ["team-a/analytics-2"],
        "team-b/api-2": ["team-a/analytics-1"]}
