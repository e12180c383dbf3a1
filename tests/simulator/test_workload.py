"""Workload files: pods with arrival times, SimulationEvents, durations."""

from __future__ import annotations

import pytest

from extender.simulator.clock import SECOND
from extender.simulator.workload import WorkloadError, load_workload, parse_duration

from .helpers import at, node, pod, write


@pytest.mark.parametrize(("text", "seconds"), [
    (90, 90.0), ("90", 90.0), ("90s", 90.0), ("1m30s", 90.0), ("1h", 3600.0),
    ("250ms", 0.25), ("1.5s", 1.5), ("2h3m4s", 7384.0),
])
def test_parse_duration(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "5x", "s", "1m 2s", True])
def test_parse_duration_rejects(text):
    with pytest.raises(ValueError):
        parse_duration(text)


def test_arrivals_are_relative_to_the_earliest_timestamp(tmp_path):
    path = write(tmp_path / "w.json", [
        pod("late", "1", created=at(2.5)),
        pod("early", "1", created=at(1)),
        pod("untimed", "1"),
    ])
    workload = load_workload(path)
    assert [(a.pod.name, a.time) for a in workload.arrivals] == [
        ("early", 0), ("untimed", 0), ("late", 1500 * SECOND // 1000)]  # ties: file order


def test_missing_namespace_and_uid_are_filled_deterministically(tmp_path):
    raw = {"kind": "Pod", "metadata": {"name": "x"},
           "spec": {"containers": [{"name": "c", "image": "i"}]}}
    first = load_workload(write(tmp_path / "a.json", [raw])).arrivals[0]
    second = load_workload(write(tmp_path / "b.json", [raw])).arrivals[0]
    assert first.pod.namespace == "default"
    assert first.pod.uid and first.pod.uid == second.pod.uid
    assert first.raw["metadata"]["uid"] == first.pod.uid


def test_events_relative_and_absolute(tmp_path):
    path = write(tmp_path / "w.json", [
        pod("p", "1", created=at(10)),
        {"kind": "SimulationEvent", "at": "1m", "deletePod": "team/web"},
        {"kind": "SimulationEvent", "at": at(40), "deleteNode": "n1"},
        {"kind": "SimulationEvent", "at": 5, "addNode": node("n9", "4", "8Gi")},
        {"kind": "SimulationEvent", "at": "2m", "updateNode": node("n9", "8", "8Gi")},
    ])
    workload = load_workload(path)
    # t=0 is the earliest absolute time: the pod at 10 s, so the absolute event is at 30 s.
    assert [(e.action, e.target, e.time // SECOND) for e in workload.events] == [
        ("addNode", "n9", 5), ("deleteNode", "n1", 30), ("deletePod", "team/web", 60),
        ("updateNode", "n9", 120)]


def test_multi_document_yaml(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text("""
apiVersion: v1
kind: Pod
metadata: {name: a}
spec: {containers: [{name: c, image: i}]}
---
kind: SimulationEvent
at: 3s
deletePod: {name: a}
""")
    workload = load_workload(path)
    assert [a.pod.key for a in workload.arrivals] == ["default/a"]
    assert workload.events[0].target == "default/a"


@pytest.mark.parametrize(("items", "error"), [
    ([{"kind": "SimulationEvent", "deletePod": "a"}], "needs `at`"),
    ([{"kind": "SimulationEvent", "at": 1}], "exactly one of"),
    ([{"kind": "SimulationEvent", "at": 1, "deletePod": "a", "deleteNode": "n"}], "exactly one of"),
    ([{"kind": "SimulationEvent", "at": "soon", "deletePod": "a"}], "invalid duration"),
    ([{"kind": "SimulationEvent", "at": 1, "addNode": {"metadata": {}}}], "metadata.name"),
    ([pod("a", "1"), pod("a", "1")], "appears twice"),
    ([pod("a", "lots")], r"items\[0\]\.spec\.containers\[0\]\.resources\.requests\.cpu: "
                         "invalid quantity 'lots'"),
])
def test_invalid_workloads(tmp_path, items, error):
    with pytest.raises(WorkloadError, match=error):
        load_workload(write(tmp_path / "w.json", items))


def test_arrival_times_are_exact_nanoseconds(tmp_path):
    path = write(tmp_path / "w.json", [
        pod("a", "1", created="2026-11-20T10:00:00.123456Z"),
        pod("b", "1", created="2026-11-20T10:00:01.620Z"),
        pod("c", "1", created="2026-11-20T12:00:01+02:00"),
    ])
    assert [(a.pod.name, a.time) for a in load_workload(path).arrivals] == [
        ("a", 0), ("c", 876_544_000), ("b", 1_496_544_000)]
