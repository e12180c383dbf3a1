"""`extender simulate --events FILE`: the JSON lines the loop writes (the contract with the
HTML report), byte for byte; nothing is done for them without the flag; and the command
line's other run-time output (progress lines, the summary's extender failures, output paths
checked before the run)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from extender.cli import main
from extender.simulator import cli as simulate_cli
from extender.simulator.eventlog import EventLog
from extender.simulator.loop import Simulation
from tests.polling import free_port

from .helpers import DEFAULTS, at, node, pod, simulate, write

CLUSTER = [node("n", "2", "4Gi"), pod("low", "2", node_name="n", terminationGracePeriodSeconds=0)]
WORKLOAD = [pod("urgent", "1", created=at(0), priority=1000), pod("small", "2", created=at(0.5)),
            {"kind": "SimulationEvent", "at": "3s", "addNode": node("m", "2", "4Gi")}]

#: By hand (1 ms cycles; kube-scheduler 1.33+): urgent preempts low at 0.001 (grace 0: gone
#: at once), whose deletion moves it to backoffQ; activeQ being empty, it is popped from there
#: at once and binds at 0.002; small (0.5 s) finds n full and waits in the pool; node m's
#: addition (3 s) moves small, which binds there. A `queues` sample closes each instant whose
#: sizes or allocation changed (a pod being scheduled is in no sub-queue: it counts as pending
#: only).
EXPECTED = """\
{"t":0.0,"action":"arrive","pod":"default/urgent","priority":1000}
{"t":0.0,"action":"move","pod":"default/urgent","from":"new","to":"active","event":"UnscheduledPodAdd"}
{"t":0.0,"action":"queues","active":0,"backoff":0,"unschedulable":0,"pending":1,"cpuAllocated":1.0,"memoryAllocated":0.25}
{"t":0.001,"action":"attempt","pod":"default/urgent","cycle":1,"result":"unschedulable","message":"0/1 nodes are available: 1 Insufficient cpu.","plugins":{"NodeResourcesFit":1},"reasons":{"Insufficient cpu":1}}
{"t":0.001,"action":"move","pod":"default/urgent","from":"active","to":"unschedulable","event":"ScheduleAttemptFailure"}
{"t":0.001,"action":"nominate","pod":"default/urgent","node":"n"}
{"t":0.001,"action":"preempt","pod":"default/urgent","node":"n","victims":["default/low"]}
{"t":0.001,"action":"evict","pod":"default/low","node":"n","by":"default/urgent","gracePeriodSeconds":0.0}
{"t":0.001,"action":"evict","pod":"default/low","node":"n","by":"default/urgent","terminated":true}
{"t":0.001,"action":"move","pod":"default/urgent","from":"unschedulable","to":"backoff","event":"AssignedPodDelete"}
{"t":0.001,"action":"move","pod":"default/urgent","from":"backoff","to":"active","event":"PopFromBackoffQ"}
{"t":0.001,"action":"queues","active":0,"backoff":0,"unschedulable":0,"pending":1,"cpuAllocated":0.0,"memoryAllocated":0.0}
{"t":0.002,"action":"attempt","pod":"default/urgent","cycle":2,"result":"scheduled","node":"n","plugins":{},"reasons":{}}
{"t":0.002,"action":"bind","pod":"default/urgent","node":"n"}
{"t":0.002,"action":"queues","active":0,"backoff":0,"unschedulable":0,"pending":0,"cpuAllocated":0.5,"memoryAllocated":0.25}
{"t":0.5,"action":"arrive","pod":"default/small","priority":0}
{"t":0.5,"action":"move","pod":"default/small","from":"new","to":"active","event":"UnscheduledPodAdd"}
{"t":0.5,"action":"queues","active":0,"backoff":0,"unschedulable":0,"pending":1,"cpuAllocated":0.5,"memoryAllocated":0.25}
{"t":0.501,"action":"attempt","pod":"default/small","cycle":3,"result":"unschedulable","message":"0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.","plugins":{"NodeResourcesFit":1},"reasons":{"Insufficient cpu":1}}
{"t":0.501,"action":"move","pod":"default/small","from":"active","to":"unschedulable","event":"ScheduleAttemptFailure"}
{"t":0.501,"action":"queues","active":0,"backoff":0,"unschedulable":1,"pending":1,"cpuAllocated":0.5,"memoryAllocated":0.25}
{"t":3.0,"action":"node","node":"m","change":"add"}
{"t":3.0,"action":"move","pod":"default/small","from":"unschedulable","to":"active","event":"NodeAdd"}
{"t":3.0,"action":"queues","active":0,"backoff":0,"unschedulable":0,"pending":1,"cpuAllocated":0.25,"memoryAllocated":0.125}
{"t":3.001,"action":"attempt","pod":"default/small","cycle":4,"result":"scheduled","node":"m","plugins":{},"reasons":{}}
{"t":3.001,"action":"bind","pod":"default/small","node":"m"}
{"t":3.001,"action":"queues","active":0,"backoff":0,"unschedulable":0,"pending":0,"cpuAllocated":0.75,"memoryAllocated":0.25}
{"t":3.001,"action":"end","reason":"settled"}
"""


def _policy(tmp_path: Path, policy: dict[str, Any] | None = None) -> str:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(policy or DEFAULTS))
    return str(path)


def _args(tmp_path: Path, cluster: list[dict], workload: list[dict]) -> list[str]:
    return ["simulate", "--cluster", str(write(tmp_path / "cluster.json", cluster)),
            "--workload", str(write(tmp_path / "workload.json", workload)),
            "--policy", _policy(tmp_path)]


def test_the_event_lines_of_a_small_run(tmp_path):
    events = tmp_path / "events.jsonl"
    with events.open("w") as stream:
        simulate(tmp_path, CLUSTER, WORKLOAD, events=EventLog(stream))
    assert events.read_text() == EXPECTED


def test_the_command_line_writes_the_same_lines(tmp_path, capsys):
    events = tmp_path / "out.jsonl"
    assert main([*_args(tmp_path, CLUSTER, WORKLOAD), "--no-progress",
                 "--events", str(events)]) == 0
    # The default policy scores more, but these placements have no choice to make.
    assert events.read_text() == EXPECTED
    assert capsys.readouterr().out.startswith(
        "2 scheduled, 0 pending, 1 preempted, 0 deleted; 4 cycles over 3.001s virtual (settled); ")


def test_same_seed_same_bytes(tmp_path):
    # Ten equal nodes: every placement is a tie the seed breaks.
    cluster = [node(f"n{i}", "4", "8Gi") for i in range(10)]
    workload = [pod(f"p{i:02d}", "100m", "128Mi", created=at(i / 100)) for i in range(30)]
    runs = []
    for seed in (1, 1, 2):
        path = tmp_path / f"events-{len(runs)}.jsonl"
        with path.open("w") as stream:
            simulate(tmp_path, cluster, workload, DEFAULTS, seed=seed, events=EventLog(stream))
        runs.append(path.read_bytes())
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def test_no_work_without_a_file(tmp_path, monkeypatch):
    def forbidden(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("event-log work without --events")

    for name in ("_log_move", "_log_attempt", "_log_queues", "_allocated"):
        monkeypatch.setattr(Simulation, name, forbidden)
    monkeypatch.setattr(EventLog, "emit", forbidden)
    result, _ = simulate(tmp_path, CLUSTER, WORKLOAD)
    assert result.end_reason == "settled"


def test_a_missing_output_directory_fails_before_the_run(tmp_path, capsys):
    args = [*_args(tmp_path, CLUSTER, WORKLOAD), "--no-progress"]
    missing = tmp_path / "nowhere" / "report.json"
    assert main([*args, "--report", str(missing)]) == 2
    out = capsys.readouterr()
    assert out.err == (f"extender simulate: --report: cannot write {missing}: directory "
                       f"{missing.parent} does not exist\n")
    assert out.out == ""  # no run, no summary
    assert main([*args, "--events", str(tmp_path / "nowhere" / "e.jsonl")]) == 2
    assert "--events: cannot write" in capsys.readouterr().err
    assert main([*args, "--report", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"extender simulate: --report: {tmp_path} is a directory\n"


def test_progress_lines_when_stderr_is_not_a_terminal(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(simulate_cli, "PROGRESS_INTERVAL", 0.0)  # a line at every update
    assert main(_args(tmp_path, CLUSTER, WORKLOAD)) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("simulating")]
    assert lines
    assert all(re.fullmatch(r"simulating: \d+/2 pods settled, \d+ cycles, \d+ s", line)
               for line in lines), lines
    assert lines[-1].startswith("simulating: 2/2 pods settled, 4 cycles, ")
    # --no-progress: none.
    assert main([*_args(tmp_path, CLUSTER, WORKLOAD), "--no-progress"]) == 0
    assert "simulating" not in capsys.readouterr().err


def test_progress_line_numbers_read_like_the_issue():
    assert simulate_cli._thousands(51000) == "51 000"


def test_the_summary_names_extender_failures(tmp_path, capsys):
    port = free_port()  # nothing listens on it: every call is refused
    url = f"http://127.0.0.1:{port}"
    workload = [pod("web", "100m", created=at(0))]
    assert main([*_args(tmp_path, [node("n", "2", "4Gi")], workload), "--no-progress",
                 "--extender", url, "--max-time", "5s", "--report", str(tmp_path / "r.json")]) == 0
    summary = capsys.readouterr().out
    # web's filter call fails at 0.001 (an Error: backoffQ for 1 s, flushed at 2 s) and at
    # 2.001 (2 s: flushed at 5 s, the horizon, where nothing more is scheduled).
    assert "; extender failures: " + url + " 2 (filter 2); " in summary, summary
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["extenderFailures"] == {f"{url}/filter": 2}


@pytest.mark.parametrize("reason", ["settled", "horizon"])
def test_the_summary_says_why_the_run_ended(reason):
    totals = {"scheduled": 1, "pending": 0, "preempted": 0, "deleted": 0, "cycles": 2,
              "virtualTimeSeconds": 12.5, "truncated": reason == "horizon", "endReason": reason}
    expected = {"settled": "(settled)", "horizon": "(horizon: truncated by --max-time)"}[reason]
    assert simulate_cli.summary_line(totals, {}) == (
        f"1 scheduled, 0 pending, 0 preempted, 0 deleted; 2 cycles over 12.500s virtual {expected}")
