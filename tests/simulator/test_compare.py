"""`extender simulate --compare`: two policies, one cluster, workload and seed, and exactly
what differs. LeastAllocated spreads, MostAllocated packs: on a 4-cpu and an 8-cpu node, pods
of 1, 2 and 6 cpu (tiny memory, so cpu decides) go

    LeastAllocated: a → big (7/8 free beats 3/4), b → big (5/8 beats 2/4), c (6) fits nowhere;
    MostAllocated:  a → small, b → small (3/4 used beats 2/8), c → big (8 free).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extender.cli import main
from extender.simulator.compare import compare_reports, file_labels, format_comparison

from .helpers import LEAST_ALLOCATED_ONLY, at, node, pod, simulate, write
from .htmltree import parse

MOST_ALLOCATED = {**LEAST_ALLOCATED_ONLY, "pluginConfig": [{
    "name": "NodeResourcesFit", "args": {"scoringStrategy": {
        "type": "MostAllocated",
        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}}}]}
CLUSTER = [node("small", "4", "16Gi"), node("big", "8", "16Gi")]
WORKLOAD = [pod("a", "1", "1Mi", created=at(0)), pod("b", "2", "1Mi", created=at(1)),
            pod("c", "6", "1Mi", created=at(2))]

POD_DIFFERENCES = [
    {"pod": "default/a", "differs": ["node"],
     "a": {"node": "big", "status": "Scheduled", "scheduledAtSeconds": 0.001},
     "b": {"node": "small", "status": "Scheduled", "scheduledAtSeconds": 0.001}},
    {"pod": "default/b", "differs": ["node"],
     "a": {"node": "big", "status": "Scheduled", "scheduledAtSeconds": 1.001},
     "b": {"node": "small", "status": "Scheduled", "scheduledAtSeconds": 1.001}},
    {"pod": "default/c", "differs": ["node", "status", "scheduledAtSeconds"],
     "a": {"node": None, "status": "Pending", "scheduledAtSeconds": None},
     "b": {"node": "big", "status": "Scheduled", "scheduledAtSeconds": 2.001}},
]

TEXT = """\
                    A: la.json  B: ma.json
pods                3           3
scheduled           2           3           *
pending             1           0           *
preempted           0           0
deleted             0           0
preemptions         0           0
attempts            3           3
cycles              3           3
virtualTimeSeconds  2.001       2.001
lastBindSeconds     1.001       2.001       *
truncated           no          no
endReason           settled     settled

pods that differ: 3 of 3
POD        A                        B
default/a  big Scheduled at 0.001s  small Scheduled at 0.001s
default/b  big Scheduled at 1.001s  small Scheduled at 1.001s
default/c  - Pending                big Scheduled at 2.001s

nodes at the end (cpu, memory requested / allocatable; pods):
NODE   A cpu   mem  pods  B cpu   mem  pods
big    37.5%  0.0%     2  75.0%  0.0%     1  *
small   0.0%  0.0%     0  75.0%  0.0%     2  *
"""


@pytest.fixture
def reports(tmp_path):
    out = []
    for i, policy in enumerate((LEAST_ALLOCATED_ONLY, MOST_ALLOCATED)):
        (tmp_path / str(i)).mkdir()
        out.append(simulate(tmp_path / str(i), CLUSTER, WORKLOAD, policy)[1])
    return out


def test_the_differences_between_two_reports(reports):
    cmp = compare_reports(*reports, names=["la.json", "ma.json"])
    assert cmp["totals"]["scheduled"] == [2, 3] and cmp["totals"]["pending"] == [1, 0]
    assert "succeeded" not in cmp["totals"]  # pod lifetimes: none in either run
    assert cmp["podCount"] == 3
    assert cmp["pods"] == POD_DIFFERENCES
    assert cmp["nodes"] == [
        {"name": "big", "differs": True,
         "a": {"cpuFraction": 0.375, "memoryFraction": 0.000122, "pods": 2, "cpuMilli": 3000,
               "memoryBytes": 2 * 2**20},
         "b": {"cpuFraction": 0.75, "memoryFraction": 6.1e-05, "pods": 1, "cpuMilli": 6000,
               "memoryBytes": 2**20}},
        {"name": "small", "differs": True,
         "a": {"cpuFraction": 0.0, "memoryFraction": 0.0, "pods": 0, "cpuMilli": 0,
               "memoryBytes": 0},
         "b": {"cpuFraction": 0.75, "memoryFraction": 0.000122, "pods": 2, "cpuMilli": 3000,
               "memoryBytes": 2 * 2**20}}]
    assert format_comparison(cmp) == TEXT
    # A run against itself: no pod differs, no node either.
    same = compare_reports(reports[0], reports[0])
    assert same["pods"] == [] and not any(n["differs"] for n in same["nodes"])
    assert "pods that differ: 0 of 3\n\nnodes" in format_comparison(same)


def test_labels_are_file_names_unless_they_clash():
    assert file_labels(["config/a.yaml", "x/b.yaml"]) == ["a.yaml", "b.yaml"]
    assert file_labels(["one/policy.yaml", "two/policy.yaml"]) == ["one/policy.yaml",
                                                                   "two/policy.yaml"]


def _args(tmp_path: Path) -> list[str]:
    (tmp_path / "la.json").write_text(json.dumps(LEAST_ALLOCATED_ONLY))
    (tmp_path / "ma.json").write_text(json.dumps(MOST_ALLOCATED))
    return ["simulate", "--cluster", str(write(tmp_path / "cluster.json", CLUSTER)),
            "--workload", str(write(tmp_path / "workload.json", WORKLOAD)), "--no-progress"]


def test_simulate_compare(tmp_path, capsys):
    args = _args(tmp_path)
    la, ma = str(tmp_path / "la.json"), str(tmp_path / "ma.json")
    assert main([*args, "--compare", la, ma, "--report", str(tmp_path / "cmp.json"),
                 "--html", str(tmp_path / "cmp.html")]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("A (la.json): 2 scheduled, 1 pending, 0 preempted")
    assert lines[1].startswith("B (ma.json): 3 scheduled, 0 pending, 0 preempted")
    assert out.endswith("\n\n" + TEXT)
    # --report: both runs' reports, each as a single run writes it, and the differences.
    doc = json.loads((tmp_path / "cmp.json").read_text())
    assert doc["kind"] == "SimulationComparison" and doc["policies"] == [la, ma]
    assert doc["differences"]["pods"] == POD_DIFFERENCES
    for policy, report in zip((la, ma), doc["reports"], strict=True):
        single = tmp_path / "single.json"
        assert main([*args, "--policy", policy, "--report", str(single)]) == 0
        assert report == json.loads(single.read_text())
    # --html: the differences, then both runs on one time axis, each with its drill-down.
    page = parse((tmp_path / "cmp.html").read_text())
    rows = {r.attrs["data-pod"]: r.attrs["data-differs"]
            for r in page.find("table", id="compare-pods").find_all("tr") if "data-pod" in r.attrs}
    assert rows == {"default/a": "node", "default/b": "node",
                    "default/c": "node,status,scheduledAtSeconds"}
    totals = {r.attrs["data-total"]: [c.text() for c in r.children[1:]]
              for r in page.find("table", id="compare-totals").find_all("tr") if "data-total" in r.attrs}
    assert totals["scheduled"] == ["2", "3"] and totals["pending"] == ["1", "0"]
    a, b = page.find("svg", id="a-timeline"), page.find("svg", id="b-timeline")
    assert (a.attrs["data-placements"], b.attrs["data-placements"]) == ("2", "3")
    assert a.attrs["data-end"] == b.attrs["data-end"]  # one time axis
    placed = [{m.attrs["data-pod"] for m in svg.find_all(cls="mark") if "placement" in m.classes}
              for svg in (a, b)]
    assert placed == [{"default/a", "default/b"}, {"default/a", "default/b", "default/c"}]
    drill = [[d.attrs["data-status"] for d in page.find("div", id=f"{p}-pods").find_all("details")]
             for p in "ab"]
    assert drill == [["Scheduled", "Scheduled", "Pending"], ["Scheduled", "Scheduled", "Scheduled"]]
    # Every run's events made it: the pending pod's attempt and its rejections by plugin.
    c_rows = page.find("div", id="a-pods").find("details", data_pod="default/c").find_all(
        "tr", cls="attempt")
    assert [r.attrs["class"] for r in c_rows] == ["attempt unschedulable"]
    ids = [e.attrs["id"] for e in page.iter() if "id" in e.attrs]
    assert len(ids) == len(set(ids))


def test_compare_report_to_stdout(tmp_path, capsys):
    args = _args(tmp_path)
    assert main([*args, "--compare", str(tmp_path / "la.json"), str(tmp_path / "ma.json"),
                 "--report", "-"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["kind"] == "SimulationComparison"
    assert out.err.startswith("A (la.json): 2 scheduled")  # the text moves to stderr
    assert TEXT in out.err


def test_compare_refuses_what_does_not_combine(tmp_path, capsys):
    args = _args(tmp_path)
    pair = [str(tmp_path / "la.json"), str(tmp_path / "ma.json")]
    assert main([*args, "--compare", *pair, "--events", str(tmp_path / "e.jsonl")]) == 2
    assert "--events does not combine with --compare" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main([*args, "--compare", *pair, "--policy", pair[0]])
    assert exc.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
    # A policy that does not load stops the comparison with the single run's message.
    (tmp_path / "bad.json").write_text("{")
    assert main([*args, "--compare", pair[0], str(tmp_path / "bad.json")]) == 2
    assert "bad.json" in capsys.readouterr().err
