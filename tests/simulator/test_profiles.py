"""Several profiles (kube-scheduler's `profiles[]`): one queue and one cluster, each pod
scheduled by the profile its `spec.schedulerName` names; a pod no profile names is left to
another scheduler (Pending, with a warning)."""

from __future__ import annotations

import json

import pytest

from extender.cli import main
from extender.engine.policy import parse_policy
from extender.engine.profile import build_profile
from extender.simulator.loop import SchedulingProfile, Simulation, SimulationConfig, check_profiles
from extender.simulator.report import build_report
from extender.simulator.workload import load_workload
from extender.state.snapshot import load_snapshot

from .helpers import LEAST_ALLOCATED_ONLY, at, by_name, node, pod, write
from .test_scheduler_config import API, config

MOST_ALLOCATED = {**LEAST_ALLOCATED_ONLY, "pluginConfig": [{
    "name": "NodeResourcesFit", "args": {"scoringStrategy": {
        "type": "MostAllocated",
        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}}}]}
CLUSTER = [node("small", "4", "16Gi"), node("big", "8", "16Gi")]
# LeastAllocated spreads: spread-1 → big (7/8 free beats 3/4), spread-2 → big (6/8 beats 2/4).
# MostAllocated packs:    pack-1 → small (2/4 used beats 3/8), pack-2 → small (3/4 beats 3/8).
# With LeastAllocated alone pack-1 would go to big (5/8 free beats 2/4).
WORKLOAD = [
    pod("spread-1", "1", "1Mi", created=at(0)),
    pod("pack-1", "2", "1Mi", created=at(1), schedulerName="packer"),
    pod("spread-2", "1", "1Mi", created=at(2), schedulerName="default-scheduler"),
    pod("pack-2", "1", "1Mi", created=at(3), schedulerName="packer"),
    pod("stray", "1", "1Mi", created=at(4), schedulerName="somebody-else"),
]
PLACED = {"spread-1": "big", "pack-1": "small", "spread-2": "big", "pack-2": "small",
          "stray": None}
STRAY_MESSAGE = "no profile has schedulerName 'somebody-else': left to another scheduler"


def profiles(packer_percentage: int | None = None) -> list[SchedulingProfile]:
    return [SchedulingProfile("default-scheduler", build_profile(parse_policy(LEAST_ALLOCATED_ONLY))),
            SchedulingProfile("packer", build_profile(parse_policy(MOST_ALLOCATED)),
                              packer_percentage)]


def run(tmp_path, scheduling_profiles, workload=WORKLOAD):
    state = load_snapshot(write(tmp_path / "cluster.json", CLUSTER))
    sim = Simulation(state, scheduling_profiles[0].profile,
                     load_workload(write(tmp_path / "workload.json", workload)),
                     SimulationConfig(), profiles=scheduling_profiles)
    result = sim.run()
    return sim, result, build_report(result, scheduling_profiles[0].profile)


def test_each_pod_is_scheduled_by_the_profile_its_scheduler_name_names(tmp_path):
    sim, result, report = run(tmp_path, profiles(packer_percentage=50))
    pods = by_name(report)
    assert {name: p["node"] for name, p in pods.items()} == PLACED
    assert [(p["status"], p["attempts"]) for p in pods.values()] == [
        ("Scheduled", 1), ("Scheduled", 1), ("Scheduled", 1), ("Scheduled", 1), ("Pending", 0)]
    assert pods["stray"]["message"] == STRAY_MESSAGE
    assert result.warnings == [
        "1 pod(s) name schedulerName 'somebody-else', which no profile has "
        "(default-scheduler, packer): left unscheduled (kube-scheduler leaves them to another "
        "scheduler)"]
    assert report["totals"]["cycles"] == 4
    scores = [{"name": "NodeResourcesFit", "weight": 1}]
    assert {name: (p["scores"], p["postFilter"], p["percentageOfNodesToScore"])
            for name, p in report["inputs"]["profiles"].items()} == {
        "default-scheduler": (scores, "DefaultPreemption", None),
        "packer": (scores, "DefaultPreemption", 50)}
    # Each profile has its own percentageOfNodesToScore.
    assert {name: algorithm.percentage for name, (_, algorithm) in sim._schedulers.items()} == {
        "default-scheduler": None, "packer": 50}


def test_one_profile_for_every_pod_without_routing(tmp_path):
    # The same pods through the default profile only (no `profiles`): every pod is its own,
    # whatever it names, and pack-1 spreads to big.
    state = load_snapshot(write(tmp_path / "cluster.json", CLUSTER))
    profile = build_profile(parse_policy(LEAST_ALLOCATED_ONLY))
    result = Simulation(state, profile, load_workload(write(tmp_path / "w.json", WORKLOAD)),
                        SimulationConfig()).run()
    report = build_report(result, profile)
    assert {p["name"]: p["node"] for p in report["pods"]} == {
        "spread-1": "big", "pack-1": "big", "spread-2": "small", "pack-2": "small", "stray": "big"}


def test_profiles_one_queue_cannot_serve_are_refused():
    least = build_profile(parse_policy(LEAST_ALLOCATED_ONLY))
    topological = build_profile(parse_policy({**LEAST_ALLOCATED_ONLY, "plugins": {
        **LEAST_ALLOCATED_ONLY["plugins"],
        "queueSort": {"enabled": [{"name": "TopologicalSort"}], "disabled": [{"name": "*"}]}}}))
    with pytest.raises(ValueError, match="^every profile must use the same QueueSort plugin, as "
                       "kube-scheduler requires: default-scheduler PrioritySort, "
                       "net TopologicalSort$"):
        check_profiles([SchedulingProfile("", least), SchedulingProfile("net", topological)])
    with pytest.raises(ValueError, match="^several profiles name schedulerName "
                       "'default-scheduler'$"):
        check_profiles([SchedulingProfile("", least),
                        SchedulingProfile("default-scheduler", least)])


def test_cli_config_with_two_profiles(tmp_path, capsys):
    path = config(tmp_path, profiles=[
        {"schedulerName": "default-scheduler",
         "plugins": {"score": {"disabled": [{"name": "*"}],
                               "enabled": [{"name": "NodeResourcesFit", "weight": 1}]}}},
        {"schedulerName": "packer", "percentageOfNodesToScore": 50,
         "plugins": {"score": {"disabled": [{"name": "*"}],
                               "enabled": [{"name": "NodeResourcesFit", "weight": 1}]}},
         "pluginConfig": [{"name": "NodeResourcesFit", "args": {
             "apiVersion": API, "kind": "NodeResourcesFitArgs",
             "scoringStrategy": {"type": "MostAllocated", "resources": [
                 {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}}}]}])
    cluster = write(tmp_path / "cluster.json", CLUSTER)
    workload = write(tmp_path / "workload.json", WORKLOAD)
    report_path = tmp_path / "report.json"
    assert main(["simulate", "--cluster", str(cluster), "--workload", str(workload),
                 "--config", str(path), "--report", str(report_path), "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("4 scheduled, 1 pending")
    assert ("1 workload pod(s) name schedulerName 'somebody-else', which no profile of "
            f"{path} has (default-scheduler, packer): kube-scheduler leaves them to another "
            "scheduler; they stay Pending") in err
    report = json.loads(report_path.read_text())
    assert {p["name"]: p["node"] for p in report["pods"]} == PLACED
    assert by_name(report)["stray"]["message"] == STRAY_MESSAGE


def test_cli_refuses_profiles_with_different_queue_sorts(tmp_path, capsys):
    path = config(tmp_path, profiles=[
        {"schedulerName": "default-scheduler"},
        {"schedulerName": "net", "plugins": {"queueSort": {
            "enabled": [{"name": "TopologicalSort"}], "disabled": [{"name": "*"}]}}}])
    cluster = write(tmp_path / "cluster.json", CLUSTER)
    workload = write(tmp_path / "workload.json", WORKLOAD[:1])
    assert main(["simulate", "--cluster", str(cluster), "--workload", str(workload),
                 "--config", str(path), "--no-progress"]) == 2
    # check-config's rule, as kube-scheduler's validation words it.
    assert capsys.readouterr().err == (
        f"extender simulate: {path}: profiles[1].plugins.queueSort: must be the same for all "
        "profiles\n")


def test_cli_refuses_coscheduling_with_several_profiles(tmp_path, capsys):
    gang = {"multiPoint": {"enabled": [{"name": "Coscheduling"}]},
            "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]}}
    path = config(tmp_path, profiles=[{"schedulerName": "default-scheduler", "plugins": gang},
                                      {"schedulerName": "gang", "plugins": gang}])
    cluster = write(tmp_path / "cluster.json", CLUSTER)
    workload = write(tmp_path / "workload.json", WORKLOAD[:1])
    assert main(["simulate", "--cluster", str(cluster), "--workload", str(workload),
                 "--config", str(path), "--no-progress"]) == 2
    assert capsys.readouterr().err == (
        f"extender simulate: {path}: profiles: Coscheduling is not supported with several "
        "profiles yet: keep it in a configuration with one profile\n")
