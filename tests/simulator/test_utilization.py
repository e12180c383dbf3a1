"""`extender simulate --utilization`: node utilization replayed from a file into the load
metrics Trimaran's scorers read, on virtual time; its report section and plot; bad files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from extender.cli import main
from extender.engine.plugins.trimaran.store import TrimaranStore
from extender.engine.policy import parse_policy
from extender.engine.profile import build_profile
from extender.model.loadmetrics import WatcherMetrics, watcher_metrics
from extender.simulator.clock import SECOND
from extender.simulator.loop import Simulation, SimulationConfig
from extender.simulator.report import build_report
from extender.simulator.utilization import (
    UtilizationError,
    load_utilization,
    parse_utilization,
)
from extender.simulator.workload import load_workload
from extender.state.snapshot import load_snapshot

from .helpers import DEFAULTS, LEAST_ALLOCATED_ONLY, at, by_name, node, pod, write

EPOCH_S = 1704067200  # helpers.EPOCH, 2024-01-01T00:00:00Z: the workloads' time 0
WINDOW_S = 15 * 60

UTILIZATION: dict[str, Any] = {
    "window": "15m",
    "nodes": {
        "n1": [{"at": "0s", "cpu": 10.0, "cpuStd": 1.5, "memory": 20.0, "memoryStd": 2.25},
               {"at": "1m", "cpu": 50.0}],
        "n2": [{"at": 0, "cpu": 30.0},
               {"at": "2m"}],  # no data from 2m on
    },
}


def _lw(end: int, nodes: dict[str, list[tuple[str, str, float]]]) -> WatcherMetrics:
    """The expected snapshot, written in load-watcher's JSON shape."""
    names = {"CPU": "instance:node_cpu:ratio", "Memory": "instance:node_memory_utilisation:ratio"}
    return watcher_metrics({
        "timestamp": end,
        "window": {"duration": "15m", "start": end - WINDOW_S, "end": end},
        "source": "Replay",
        "data": {"NodeMetricsMap": {
            name: {"metrics": [{"name": names[kind], "type": kind, "operator": op,
                                "rollup": "15m", "value": value} for kind, op, value in metrics]}
            for name, metrics in nodes.items()}},
    })


AT_0 = _lw(EPOCH_S, {"n1": [("CPU", "AVG", 10.0), ("CPU", "STD", 1.5),
                            ("Memory", "AVG", 20.0), ("Memory", "STD", 2.25)],
                     "n2": [("CPU", "AVG", 30.0)]})
AT_60 = _lw(EPOCH_S + 60, {"n1": [("CPU", "AVG", 50.0)], "n2": [("CPU", "AVG", 30.0)]})
AT_120 = _lw(EPOCH_S + 120, {"n1": [("CPU", "AVG", 50.0)]})


def _cluster() -> list[dict]:
    return [node("n1", "4", "8Gi"), node("n2", "4", "8Gi"),
            pod("old", "1", "2Gi", node_name="n1")]


def _sim(tmp_path: Path, workload: list[dict], utilization: dict | None,
         policy: dict | None = None) -> Simulation:
    state = load_snapshot(write(tmp_path / "cluster.json", _cluster()))
    loaded = load_workload(write(tmp_path / "workload.json", workload))
    replay = None
    if utilization is not None:
        (tmp_path / "utilization.yaml").write_text(yaml.safe_dump(utilization))
        replay = load_utilization(tmp_path / "utilization.yaml", epoch_ns=loaded.epoch_ns)
    profile = build_profile(parse_policy(policy or LEAST_ALLOCATED_ONLY))
    return Simulation(state, profile, loaded, SimulationConfig(utilization=replay))


def _watch(sim: Simulation) -> list[tuple[float, str, WatcherMetrics | None]]:
    """(virtual seconds, pod, the load metrics the engine's context holds) at every cycle."""
    seen: list[tuple[float, str, WatcherMetrics | None]] = []
    schedule = sim.algorithm.schedule

    def spy(pod, nodes, nominator, ctx, *args):  # type: ignore[no-untyped-def]
        seen.append((sim.clock.now() / SECOND, pod.name, ctx.store(TrimaranStore).metrics))
        return schedule(pod, nodes, nominator, ctx, *args)

    sim.algorithm.schedule = spy  # type: ignore[method-assign]
    return seen


def test_the_engine_sees_the_files_values_at_each_virtual_time(tmp_path):
    workload = [pod(f"p{t}", "100m", "128Mi", created=at(t)) for t in (0, 30, 59.999, 60, 90, 150)]
    sim = _sim(tmp_path, workload, UTILIZATION)
    seen = _watch(sim)
    result = sim.run()
    assert [(t, name) for t, name, _ in seen] == [
        (0.0, "p0"), (30.0, "p30"), (59.999, "p59.999"), (60.0, "p60"), (90.0, "p90"),
        (150.0, "p150")]
    snapshots = [metrics for _, _, metrics in seen]
    assert snapshots == [AT_0, AT_0, AT_0, AT_60, AT_60, AT_120]
    # Exactly load-watcher's JSON: what a /watcher reply with these values decodes to.
    assert json.loads(msgspec.json.encode(snapshots[3])) == {
        "timestamp": EPOCH_S + 60,
        "window": {"duration": "15m", "start": EPOCH_S + 60 - WINDOW_S, "end": EPOCH_S + 60},
        "source": "Replay",
        "data": {"NodeMetricsMap": {
            "n1": {"metrics": [{"name": "instance:node_cpu:ratio", "type": "CPU",
                                "operator": "AVG", "rollup": "15m", "value": 50.0}]},
            "n2": {"metrics": [{"name": "instance:node_cpu:ratio", "type": "CPU",
                                "operator": "AVG", "rollup": "15m", "value": 30.0}]}}}}
    # The state holds the last snapshot applied; the file's other samples never kept the
    # run going (it ends with the last pod, not with the file).
    assert sim.state.store(TrimaranStore).metrics == AT_120
    assert result.virtual_time == 150 * SECOND + 1_000_000
    assert result.utilization is not None and result.utilization.applied == 3


def test_snapshot_at_matches_the_replay(tmp_path):
    util = parse_utilization(UTILIZATION, "u.yaml", epoch_ns=EPOCH_S * SECOND)
    assert util.snapshot_at(-1) is None
    assert util.snapshot_at(0) == AT_0
    assert util.snapshot_at(60 * SECOND - 1) == AT_0
    assert util.snapshot_at(60 * SECOND) == AT_60
    assert util.snapshot_at(10**15) == AT_120
    assert [(t, s) for t, s, _ in util.snapshots()] == [
        (0, AT_0), (60 * SECOND, AT_60), (120 * SECOND, AT_120)]


def test_a_replay_changes_no_placement_by_itself(tmp_path):
    # LeastAllocated does not read load metrics: same placements, same totals; the report
    # only gains the inputs' file and the utilization section.
    workload = [pod(f"p{i}", "500m", "256Mi", created=at(i * 20)) for i in range(8)]
    plain = build_report(_sim(tmp_path, workload, None).run())
    replayed = build_report(_sim(tmp_path, workload, UTILIZATION).run())
    assert "utilization" not in plain and "utilization" not in plain["inputs"]
    section = replayed.pop("utilization")
    assert replayed["inputs"].pop("utilization") == {
        "file": str(tmp_path / "utilization.yaml"), "window": "15m"}
    assert replayed == plain
    assert section["samples"] == 4 and section["samplesApplied"] == 4
    assert section["snapshots"] == 3
    # Each sample as it took effect, with the node's allocation then (n1 has `old`, 1 cpu of
    # 4 and 2Gi of 8Gi; p0 at 0s, p1 at 20s … each 500m/256Mi, LeastAllocated alternates).
    assert section["nodes"]["n2"] == [
        {"atSeconds": 0.0, "appliedAtSeconds": 0.0, "cpuPercent": 30.0, "cpuStdPercent": None,
         "memoryPercent": None, "memoryStdPercent": None, "cpuRequestedPercent": 0.0,
         "memoryRequestedPercent": 0.0, "pods": 0},
        {"atSeconds": 120.0, "appliedAtSeconds": 120.0, "cpuPercent": None,
         "cpuStdPercent": None, "memoryPercent": None, "memoryStdPercent": None,
         "cpuRequestedPercent": pytest.approx(100 * sum(
             0.5 for p in by_name(plain).values()
             if p["node"] == "n2" and p["scheduledAtSeconds"] < 120) / 4),
         "memoryRequestedPercent": pytest.approx(100 * sum(
             0.25 for p in by_name(plain).values()
             if p["node"] == "n2" and p["scheduledAtSeconds"] < 120) / 8),
         "pods": sum(1 for p in by_name(plain).values()
                     if p["node"] == "n2" and p["scheduledAtSeconds"] < 120)},
    ]
    assert section["nodes"]["n1"][0] == {
        "atSeconds": 0.0, "appliedAtSeconds": 0.0, "cpuPercent": 10.0, "cpuStdPercent": 1.5,
        "memoryPercent": 20.0, "memoryStdPercent": 2.25, "cpuRequestedPercent": 25.0,
        "memoryRequestedPercent": 25.0, "pods": 1}


def test_absolute_and_earlier_sample_times(tmp_path):
    # RFC 3339 times are on the workload's clock; samples before time 0 are in effect at 0,
    # the newest of them per node, and the snapshot keeps that fetch time as its timestamp.
    utilization = {"window": 300, "nodes": {
        "n1": [{"at": "2023-12-31T23:50:00Z", "cpu": 90.0},
               {"at": "2023-12-31T23:58:00Z", "cpu": 80.0},
               {"at": "2024-01-01T00:00:30Z", "cpu": 5.0}],
        "n2": [{"at": "2023-12-31T23:55:00Z", "cpu": 40.0}]}}
    sim = _sim(tmp_path, [pod("a", "1", created=at(0)), pod("b", "1", created=at(45))],
               utilization)
    seen = _watch(sim)
    sim.run()
    first = _lw(EPOCH_S - 120, {"n1": [("CPU", "AVG", 80.0)], "n2": [("CPU", "AVG", 40.0)]})
    second = _lw(EPOCH_S + 30, {"n1": [("CPU", "AVG", 5.0)], "n2": [("CPU", "AVG", 40.0)]})
    for snap in (first, second):  # a numeric window is seconds
        snap.window.duration = "300s"
        snap.window.start = snap.window.end - 300
        for entry in snap.data.NodeMetricsMap.values():
            for metric in entry.metrics:
                metric.rollup = "300s"
    assert [m for _, _, m in seen] == [first, second]


def test_unknown_and_silent_nodes_are_warned_about(tmp_path):
    utilization = {"nodes": {"n1": [{"at": 0, "cpu": 10.0}], "ghost": [{"at": 0, "cpu": 1.0}]}}
    result = _sim(tmp_path, [pod("a", "1", created=at(0))], utilization).run()
    assert result.warnings == [
        f"utilization: {tmp_path / 'utilization.yaml'} has no samples for node(s) n2: "
        "load-aware scorers score them 0 (no metrics)",
        "utilization: node ghost is not in the cluster at 0s (its sample at 0 is in the "
        "metrics all the same)"]
    ghost = build_report(result)["utilization"]["nodes"]["ghost"]
    assert ghost[0]["pods"] is None and ghost[0]["cpuRequestedPercent"] is None


BAD_FILES = [
    ("[1, 2]", "expected a mapping with `nodes`"),
    ("nodes: {}", "`nodes` must map node names to lists of samples"),
    ("window: 15x\nnodes: {n1: [{at: 0, cpu: 1}]}", "window: invalid duration '15x'"),
    ("window: 0s\nnodes: {n1: [{at: 0, cpu: 1}]}", "window: '0s' must be at least 1s"),
    ("nodes: {n1: [{at: 0, cpu: 1}]}\nnode: {}", "unknown key(s) node"),
    ("kind: Pod\nnodes: {n1: [{at: 0, cpu: 1}]}", "kind is 'Pod', expected NodeUtilization"),
    ("nodes: {n1: {at: 0, cpu: 1}}", "nodes.n1: expected a list of samples"),
    ("nodes: {n1: [{cpu: 1}]}", "nodes.n1[0]: a sample needs `at`"),
    ("nodes: {n1: [{at: 0, cpu: 1}, {at: 5m, cpu: 2}, {at: 4m, cpu: 3}]}",
     "nodes.n1[2] (at 4m): not after the previous sample (at 5m)"),
    ("nodes: {n1: [{at: 0, cpu: 1}, {at: 0s, cpu: 2}]}",
     "nodes.n1[1] (at 0s): not after the previous sample (at 0)"),
    ("nodes: {n1: [{at: 0, cpu: 120}]}", "nodes.n1[0] (at 0): cpu: 120 is not a percentage from 0 to 100"),
    ("nodes: {n1: [{at: 0, cpu: '35%'}]}",
     "nodes.n1[0] (at 0): cpu: expected a percentage (a number from 0 to 100), got '35%'"),
    ("nodes: {n1: [{at: 0, cpu: true}]}", "cpu: expected a percentage"),
    ("nodes: {n1: [{at: 0, memory: -1}]}", "memory: -1 is not a percentage from 0 to 100"),
    ("nodes: {n1: [{at: 0, cpuStd: 3}]}", "nodes.n1[0] (at 0): cpuStd without cpu"),
    ("nodes: {n1: [{at: 0, cpus: 3}]}",
     "nodes.n1[0] (at 0): unknown key(s) cpus (a sample has at, cpu, cpuStd, memory, memoryStd)"),
    ("nodes: {n1: [{at: soon, cpu: 3}]}", "nodes.n1[0] (at soon): at: invalid duration 'soon'"),
    ("nodes: {n1: [{at: -5s, cpu: 3}]}", "at: '-5s' is before the start"),
    ("nodes: {n1: [{at: -5, cpu: 3}]}", "at: -5 is before the start"),
    ("nodes: {n1: [{at: '2024-13-01T00:00:00Z', cpu: 3}]}", "at: invalid time"),
    ("nodes: {n1: [3]}", "nodes.n1[0]: a sample is a mapping"),
    ("nodes: {n1: [{at: 0, cpu: 1}]}\n---\nnodes: {}", "expected one document, found 2"),
    ("nodes: [", "invalid YAML"),
    ('{"nodes": {"n1": [{"at": 0, "cpu": 1}]', "invalid JSON"),
]


@pytest.mark.parametrize(("text", "message"), BAD_FILES, ids=[m for _, m in BAD_FILES])
def test_bad_files_give_a_clear_error(tmp_path, text, message):
    path = tmp_path / "u.yaml"
    path.write_text(text)
    with pytest.raises(UtilizationError) as err:
        load_utilization(path, epoch_ns=EPOCH_S * SECOND)
    assert message in str(err.value)
    assert str(err.value).startswith(str(path))


def test_absolute_times_need_a_workload_clock(tmp_path):
    path = tmp_path / "u.yaml"
    path.write_text("nodes: {n1: [{at: '2024-01-01T00:00:00Z', cpu: 3}]}")
    with pytest.raises(UtilizationError, match="is an absolute time, but the workload has none"):
        load_utilization(path)  # a workload without creationTimestamps: time 0 is unknown


def _cli(tmp_path: Path, utilization: str, *extra: str) -> list[str]:
    (tmp_path / "policy.json").write_text(json.dumps(DEFAULTS))
    (tmp_path / "u.yaml").write_text(utilization)
    return ["simulate", "--cluster", str(write(tmp_path / "cluster.json", _cluster())),
            "--workload", str(write(tmp_path / "workload.json",
                                    [pod("a", "1", created=at(0))])),
            "--policy", str(tmp_path / "policy.json"), "--utilization", str(tmp_path / "u.yaml"),
            "--no-progress", *extra]


def test_cli_rejects_a_bad_file_before_the_run(tmp_path, capsys):
    assert main(_cli(tmp_path, "nodes: {n1: [{at: 0, cpu: 300}]}")) == 2
    err = capsys.readouterr().err
    assert err == (f"extender simulate: {tmp_path / 'u.yaml'}: nodes.n1[0] (at 0): cpu: 300 is "
                   "not a percentage from 0 to 100\n")


def test_cli_report_summary_and_plot(tmp_path, capsys):
    report, png = tmp_path / "r.json", tmp_path / "u.png"
    util = "nodes: {n1: [{at: 0, cpu: 10}, {at: 1h, cpu: 20}], n2: [{at: 0, cpu: 70}]}"
    assert main(_cli(tmp_path, util, "--report", str(report), "--plot", str(png))) == 0
    out = capsys.readouterr().out
    assert f"utilization: 2 of 3 samples replayed (1 snapshots) from {tmp_path / 'u.yaml'}" in out
    data = json.loads(report.read_text())
    assert data["inputs"]["utilization"] == {"file": str(tmp_path / "u.yaml"), "window": "15m"}
    assert [row["cpuPercent"] for row in data["utilization"]["nodes"]["n1"]] == [10.0]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_binds_are_recent_assignments_at_virtual_unix_time(tmp_path):
    # TargetLoadPacking's "missing" load compares bind times with the snapshot's window end:
    # in the simulation both are on the virtual clock (time 0 = the workload's epoch).
    sim = _sim(tmp_path, [pod("a", "1", created=at(0)), pod("b", "1", created=at(61))],
               UTILIZATION)
    seen: list[list[tuple[float, str]]] = []
    schedule = sim.algorithm.schedule

    def spy(pod, nodes, nominator, ctx, *args):  # type: ignore[no-untyped-def]
        seen.append(sorted((t, p.name) for n in ("n1", "n2")
                           for t, p in ctx.store(TrimaranStore).recent(n)))
        return schedule(pod, nodes, nominator, ctx, *args)

    sim.algorithm.schedule = spy  # type: ignore[method-assign]
    report = build_report(sim.run())
    assert seen == [[], [(EPOCH_S + 0.001, "a")]]
    assert by_name(report)["a"]["scheduledAtSeconds"] == 0.001


# -- TargetLoadPacking against LeastAllocated on the same workload and load ------------------

TARGET_LOAD_PACKING_ONLY: dict[str, Any] = {
    "apiVersion": "scheduler-extender/v1",
    "kind": "ExtenderPolicy",
    "plugins": {"score": {"disabled": [{"name": "*"}],
                          "enabled": [{"name": "TargetLoadPacking", "weight": 1}]}},
}
#: n1 is cool at first, then busy (the pods placed on it, and more); n2 is hot, then calm.
HOT_N2 = {"nodes": {"n1": [{"at": 0, "cpu": 10.0}, {"at": "60s", "cpu": 60.0}],
                    "n2": [{"at": 0, "cpu": 80.0}, {"at": "60s", "cpu": 20.0}]}}


def _with_capacity(items: list[dict]) -> list[dict]:
    for item in items:  # TargetLoadPacking divides by status.capacity
        if item["kind"] == "Node":
            item["status"]["capacity"] = dict(item["status"]["allocatable"])
    return items


def test_target_load_packing_avoids_the_hot_node(tmp_path):
    # Both nodes 4 cpu; n1 has `old` (1 cpu requested), n2 nothing. Pods: 500m, no limit, so
    # TargetLoadPacking predicts 750m each (request × 1.5); target 40 %.
    workload = [pod("p0", "500m", created=at(0)), pod("p1", "500m", created=at(10)),
                pod("p2", "500m", created=at(90))]
    runs = {}
    for name, policy in (("least", LEAST_ALLOCATED_ONLY), ("tlp", TARGET_LOAD_PACKING_ONLY)):
        run_dir = tmp_path / name
        run_dir.mkdir()
        state = load_snapshot(write(run_dir / "cluster.json", _with_capacity(_cluster())))
        loaded = load_workload(write(run_dir / "workload.json", workload))
        (run_dir / "u.yaml").write_text(yaml.safe_dump(HOT_N2))
        config = SimulationConfig(
            utilization=load_utilization(run_dir / "u.yaml", epoch_ns=loaded.epoch_ns))
        profile = build_profile(parse_policy(policy))
        runs[name] = build_report(Simulation(state, profile, loaded, config).run(), profile)
    least, tlp = by_name(runs["least"]), by_name(runs["tlp"])
    # LeastAllocated sees requests only: n2 is emptier (cpu 87 vs 62), whatever its load.
    assert [least[p]["node"] for p in ("p0", "p1")] == ["n2", "n2"]
    # TargetLoadPacking at 0 s: n1 (10 % of 4000m = 400m) + 750 = 28.75 % → 60·28.75/40 + 40
    # = 83; n2 3200 + 750 = 98.75 % → 40·1.25/60 = 1 → n1. At 10 s p0 (bound at 0.001 s,
    # within 60 s of the window's end at 0 s) is added: n1 47.5 % → 35, n2 still 1 → n1.
    # At 90 s (window end 60 s): n1 60 % + p2 + p1 (bound at 10 s, 50 s before the end; p0,
    # 60 s before, is in the metrics) = 97.5 % → 2; n2 20 % + p2 = 38.75 % → 98 → n2.
    assert [tlp[p]["node"] for p in ("p0", "p1", "p2")] == ["n1", "n1", "n2"]
    assert runs["tlp"]["inputs"]["profile"]["scores"] == [
        {"name": "TargetLoadPacking", "weight": 1}]
    # The report shows the load beside the allocation: n2 busy at 80 % with nothing
    # requested under TargetLoadPacking; under LeastAllocated it took both pods by 60 s.
    rows = {name: [(r["appliedAtSeconds"], r["cpuPercent"], r["cpuRequestedPercent"])
                   for r in runs[name]["utilization"]["nodes"]["n2"]] for name in runs}
    assert rows == {"least": [(0.0, 80.0, 0.0), (60.0, 20.0, 25.0)],
                    "tlp": [(0.0, 80.0, 0.0), (60.0, 20.0, 0.0)]}


EXAMPLES = Path(__file__).resolve().parents[2] / "config" / "examples"


def _example(tmp_path: Path, capsys, policy: str) -> tuple[str, dict]:  # type: ignore[no-untyped-def]
    report = tmp_path / f"{Path(policy).stem}.json"
    assert main(["simulate", "--cluster", str(EXAMPLES / "cluster.json"),
                 "--workload", str(EXAMPLES / "workload.yaml"), "--policy", str(EXAMPLES / policy),
                 "--utilization", str(EXAMPLES / "utilization.yaml"),
                 "--report", str(report), "--no-progress"]) == 0
    out = capsys.readouterr().out.splitlines()
    return out[0].split("; 0.")[0] + "\n" + out[1], json.loads(report.read_text())


def test_the_examples_compare_load_aware_with_least_allocated(tmp_path, capsys):
    # The README's comparison: config/examples/utilization.yaml makes worker-a2 busy (70-75 %
    # cpu) although little is requested on it, and worker-a1 idle (20-24 %) although 62.5 %
    # of its cpu is requested.
    least_summary, least = _example(tmp_path, capsys, "../policy.yaml")
    tlp_summary, tlp = _example(tmp_path, capsys, "load-aware-policy.yaml")
    replayed = "utilization: 15 of 15 samples replayed (4 snapshots) from "
    assert least_summary == ("5 scheduled, 0 pending, 1 preempted, 0 deleted; 8 cycles over "
                             f"300.001s virtual (settled)\n{replayed}{EXAMPLES / 'utilization.yaml'}")
    assert tlp_summary == ("5 scheduled, 0 pending, 1 preempted, 0 deleted; 6 cycles over "
                           f"300.000s virtual (settled)\n{replayed}{EXAMPLES / 'utilization.yaml'}")
    placed = {name: {p["name"]: (p["node"], p["scheduledAtSeconds"]) for p in r["pods"]
                     if p["status"] == "Scheduled"} for name, r in (("least", least), ("tlp", tlp))}
    # critical-job preempts batch-2 at 120.001 and binds once batch-2's grace period (30 s,
    # the default) is over. LeastAllocated sends the web pods to the busy worker-a2 (fewest
    # requests); batch-4 (3 cpu) then fits nowhere until worker-d1 joins at 5 min.
    assert placed["least"] == {
        "web-3": ("worker-a2", 0.001), "web-4": ("worker-a2", 0.002),
        "web-5": ("worker-a2", 0.003), "critical-job": ("worker-b2", 150.002),
        "batch-4": ("worker-d1", 300.001)}
    # TargetLoadPacking keeps them off it (worker-a1: 20 % + 750m each, packed towards 40 %);
    # worker-a2 keeps the room batch-4 needs, and it runs 4 minutes earlier.
    assert placed["tlp"] == {
        "web-3": ("worker-a1", 0.001), "web-4": ("worker-a1", 0.002),
        "web-5": ("worker-a1", 0.003), "critical-job": ("worker-b2", 150.002),
        "batch-4": ("worker-a2", 60.001)}
    assert least["warnings"] == tlp["warnings"] == []
    a2 = {name: [(r["appliedAtSeconds"], r["cpuPercent"], r["cpuRequestedPercent"])
                 for r in report["utilization"]["nodes"]["worker-a2"]]
          for name, report in (("least", least), ("tlp", tlp))}
    assert a2 == {"least": [(0.0, 70.0, 12.5), (120.0, 75.0, 50.0), (240.0, 72.0, 50.0)],
                  "tlp": [(0.0, 70.0, 12.5), (120.0, 75.0, 87.5), (240.0, 72.0, 87.5)]}


def test_an_unquoted_absolute_time_is_read_as_written(tmp_path):
    path = tmp_path / "u.yaml"
    path.write_text("nodes: {n1: [{at: 2024-01-01T00:00:30Z, cpu: 3}]}")
    loaded = load_utilization(path, epoch_ns=EPOCH_S * SECOND)
    assert [sample.time for sample in loaded.nodes["n1"]] == [30 * SECOND]
