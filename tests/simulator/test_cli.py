"""`extender simulate` as a user runs it: report bytes, plot, errors, a 10 000-pod run."""

from __future__ import annotations

import importlib.util
import json
import os
import re
from pathlib import Path

import pytest

from extender.cli import main

from .helpers import DEFAULTS, at, node, pod, write

ROOT = Path(__file__).resolve().parents[2]


def _inputs(tmp_path: Path) -> list[str]:
    cluster = [node(f"n{i}", "4", "8Gi", labels={"topology.kubernetes.io/zone": f"z{i % 2}"})
               for i in range(6)]
    cluster += [pod(f"low-{i}", "3", node_name=f"n{i}") for i in range(6)]
    workload = [pod(f"web-{i}", "500m", "256Mi", created=at(i / 10)) for i in range(12)]
    workload += [pod("urgent", "2", created=at(2), priority=1000)]
    (tmp_path / "policy.json").write_text(json.dumps(DEFAULTS))
    return ["simulate", "--cluster", str(write(tmp_path / "cluster.json", cluster)),
            "--workload", str(write(tmp_path / "workload.json", workload)),
            "--policy", str(tmp_path / "policy.json"), "--no-progress"]


def test_same_seed_gives_identical_report_bytes(tmp_path, capsys):
    args = _inputs(tmp_path)
    for name in ("a", "b"):
        assert main([*args, "--seed", "42", "--report", str(tmp_path / f"{name}.json")]) == 0
    assert main([*args, "--seed", "43", "--report", str(tmp_path / "c.json")]) == 0
    a, b, c = ((tmp_path / f"{n}.json").read_bytes() for n in "abc")
    assert a == b
    assert a != c  # ties among equal nodes are drawn from the seed
    report = json.loads(a)
    assert report["kind"] == "SimulationReport"
    assert report["totals"]["scheduled"] == 13
    assert report["totals"]["preemptions"] == 1
    assert "scheduled" in capsys.readouterr().out


def test_report_to_stdout_and_plot(tmp_path, capsys):
    png = tmp_path / "u.png"
    assert main([*_inputs(tmp_path), "--report", "-", "--plot", str(png)]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["apiVersion"] == "simulator.extender/v1"
    assert "pods/s" in out.err  # the summary moves to stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_invalid_inputs_exit_2(tmp_path, capsys):
    args = _inputs(tmp_path)
    (tmp_path / "workload.json").write_text('{"kind": "SimulationEvent", "at": 1}')
    assert main(args) == 2
    assert "exactly one of" in capsys.readouterr().err


@pytest.mark.slow  # pytest -m "not slow" skips it; so does the older EXTENDER_SKIP_SLOW=1
@pytest.mark.skipif(os.environ.get("EXTENDER_SKIP_SLOW") == "1", reason="EXTENDER_SKIP_SLOW=1")
def test_ten_thousand_pods_on_a_thousand_nodes(tmp_path):
    spec = importlib.util.spec_from_file_location("bench_simulate", ROOT / "bench" / "simulate.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    cluster = bench.make_cluster(1000, 7)
    workload = bench.make_workload(10000, 7, cpu_budget_m=bench.cluster_cpu_m(cluster) // 2)
    (tmp_path / "cluster.json").write_text(json.dumps(cluster))
    (tmp_path / "workload.json").write_text(json.dumps(workload))
    (tmp_path / "policy.json").write_text(json.dumps(DEFAULTS))
    assert main(["simulate", "--cluster", str(tmp_path / "cluster.json"),
                 "--workload", str(tmp_path / "workload.json"),
                 "--policy", str(tmp_path / "policy.json"), "--no-progress",
                 "--report", str(tmp_path / "r.json")]) == 0
    totals = json.loads((tmp_path / "r.json").read_text())["totals"]
    assert totals["pods"] == 10000
    assert totals["scheduled"] + totals["pending"] == 10000
    assert not totals["truncated"]


@pytest.mark.parametrize(("argv", "words"), [
    (["--cycle-cost=-1"], "argument --cycle-cost: must not be negative: '-1'"),
    (["--max-time=-10"], "argument --max-time: must not be negative: '-10'"),
    (["--pod-initial-backoff=-1"], "argument --pod-initial-backoff: must not be negative: '-1'"),
    (["--victim-grace-period=-2"], "argument --victim-grace-period: must not be negative: '-2'"),
    (["--extender-weight", "0"], "argument --extender-weight: must be at least 1, got 0"),
])
def test_a_negative_duration_or_weight_is_a_usage_error(tmp_path, capsys, argv, words):
    # A bare negative number (a duration with a unit could not be negative) was taken: a
    # negative cycle cost ran virtual time backwards, a horizon of -10 ended the run before its
    # first pod. kube-scheduler refuses an extender weight below 1.
    with pytest.raises(SystemExit) as stopped:
        main([*_inputs(tmp_path), *argv])
    assert stopped.value.code == 2
    assert words in capsys.readouterr().err


# ---- flags only the replay on a real kube-scheduler reads ----------------------------------

@pytest.mark.parametrize(("argv", "flags"), [
    (["--time-scale", "10"], "--time-scale applies"),
    (["--settle", "30s"], "--settle applies"),
    (["--keep-sandbox"], "--keep-sandbox applies"),
    (["--scheduler-plugins"], "--scheduler-plugins applies"),
    (["--scheduler-verbosity", "5"], "--scheduler-verbosity applies"),
    (["--sandbox-state-dir", "state"], "--sandbox-state-dir applies"),
    (["--settle", "30s", "--time-scale", "2"], "--time-scale, --settle apply"),
])
def test_a_sandbox_flag_without_on_sandbox_is_refused(tmp_path, capsys, argv, flags):
    # Nothing read them: the run was a plain simulation, as if they had not been given.
    report = tmp_path / "r.json"
    assert main([*_inputs(tmp_path), "--report", str(report), *argv]) == 2
    assert capsys.readouterr().err == (f"extender simulate: {flags} only with --on-sandbox (the "
                                       "replay on a real kube-scheduler)\n")
    assert not report.exists()


def test_kubernetes_version_without_on_sandbox_points_at_the_policy(tmp_path, capsys):
    # `--kubernetes-version 1.30` ran 1.37's behaviour.
    assert main([*_inputs(tmp_path), "--kubernetes-version", "1.30"]) == 2
    assert capsys.readouterr().err == (
        "extender simulate: --kubernetes-version applies only with --on-sandbox (the replay on "
        "a real kube-scheduler); the simulator follows the policy's kubernetesVersion "
        '(`kubernetesVersion: "1.30"` in the ExtenderPolicy; without one, 1.37)\n')


def test_every_flag_only_the_sandbox_reads_is_checked():
    from extender.cli import build_parser
    from extender.simulator.flagchecks import SANDBOX_ONLY

    simulate = build_parser("simulate")._subparsers._group_actions[0].choices["simulate"]
    group = next(g for g in simulate._action_groups
                 if g.title and g.title.startswith("on the real kube-scheduler"))
    assert {a.dest for a in group._group_actions} == {"on_sandbox", *SANDBOX_ONLY}


# ---- backoffs: kube-scheduler's rules ------------------------------------------------------

@pytest.mark.parametrize(("argv", "words"), [
    (["--pod-initial-backoff", "0"],
     "--pod-initial-backoff 0s: must be greater than 0, as kube-scheduler's "
     "podInitialBackoffSeconds"),
    (["--pod-max-backoff", "500ms"],
     "--pod-max-backoff 0.5s: must be greater than or equal to the initial backoff (1s, the "
     "default), as kube-scheduler's podMaxBackoffSeconds"),
    (["--pod-max-backoff", "0"],
     "--pod-max-backoff 0s: must be greater than or equal to the initial backoff (1s, the "
     "default), as kube-scheduler's podMaxBackoffSeconds"),
    (["--pod-initial-backoff", "20s"],
     "--pod-initial-backoff 20s: must not be more than the maximum backoff (10s, the default), "
     "as kube-scheduler's podMaxBackoffSeconds"),
    (["--pod-initial-backoff", "3s", "--pod-max-backoff", "2s"],
     "--pod-max-backoff 2s: must be greater than or equal to the initial backoff "
     "(--pod-initial-backoff 3s), as kube-scheduler's podMaxBackoffSeconds"),
])
def test_backoffs_kube_scheduler_would_refuse_are_refused(tmp_path, capsys, argv, words):
    # Taken as given, while --config refuses the same in a KubeSchedulerConfiguration.
    assert main([*_inputs(tmp_path), *argv]) == 2
    assert capsys.readouterr().err == f"extender simulate: {words}\n"


def test_backoffs_against_the_configurations(tmp_path, capsys):
    args = _inputs(tmp_path)
    config = tmp_path / "ksc.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\n"
                      "kind: KubeSchedulerConfiguration\n"
                      "podInitialBackoffSeconds: 2\npodMaxBackoffSeconds: 4\n")
    policy = args.index("--policy")
    with_config = [*args[:policy], "--config", str(config), *args[policy + 2:]]
    assert main([*with_config, "--pod-max-backoff", "1s"]) == 2
    assert capsys.readouterr().err == (
        "extender simulate: --pod-max-backoff 1s: must be greater than or equal to the initial "
        "backoff (2s, --config's podInitialBackoffSeconds), as kube-scheduler's "
        "podMaxBackoffSeconds\n")
    report = tmp_path / "r.json"
    assert main([*with_config, "--pod-initial-backoff", "4s", "--report", str(report)]) == 0
    inputs = json.loads(report.read_text())["inputs"]
    assert (inputs["podInitialBackoffSeconds"], inputs["podMaxBackoffSeconds"]) == (4.0, 4.0)


# ---- the rate ------------------------------------------------------------------------------

def test_the_rate_counts_the_pods_placed_and_is_left_out_without_any(tmp_path, capsys):
    from extender.simulator.cli import wall_line

    placed = [{"scheduledAtSeconds": 0.001}, {"scheduledAtSeconds": None},
              {"scheduledAtSeconds": 2.0}]
    assert wall_line(0.004, placed) == "0.00s wall, 500 pods/s"
    assert wall_line(6.0, placed) == "6.00s wall, 0.33 pods/s"  # was "0 pods/s"
    assert wall_line(0.79, placed[1:2]) == "0.79s wall"
    # A run whose pods all finished placed them still; one that placed none has no rate.
    args = _inputs(tmp_path)
    workload = [pod("huge", "64", created=at(0))]
    args[args.index("--workload") + 1] = str(write(tmp_path / "huge.json", workload))
    assert main(args) == 0
    assert re.search(r"\(settled\); \d+\.\d\ds wall\n$", capsys.readouterr().out)
