"""`python -m bench.agreement`: the files it writes, and a replay that cannot start stops the
run with the command's own message and status, not a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bench.agreement", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_writes_the_inputs_it_names(tmp_path: Path) -> None:
    result = _run(["--out", str(tmp_path), "--nodes", "12", "--pods", "60", "--seed", "3"],
                  dict(os.environ))
    assert result.returncode == 0, result.stderr
    cluster = list(yaml.safe_load_all((tmp_path / "cluster.yaml").read_text()))
    assert sum(o["kind"] == "Node" for o in cluster) == 12
    assert {o["kind"] for o in cluster} == {"Node", "PriorityClass", "Pod"}
    workload = list(yaml.safe_load_all((tmp_path / "workload.yaml").read_text()))
    assert workload and {o["kind"] for o in workload} == {"Deployment"}
    assert yaml.safe_load((tmp_path / "policy.yaml").read_text())["kind"] == "ExtenderPolicy"


def test_without_out_it_writes_to_a_new_directory_outside_the_clone(tmp_path: Path) -> None:
    # The README's command gives no --out: it was a usage error.
    result = _run(["--nodes", "3", "--pods", "5"], {**os.environ, "TMPDIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    (line,) = result.stdout.splitlines()
    out = Path(line.removeprefix("wrote ").split("/cluster.yaml")[0])
    assert out.parent == tmp_path and out.name.startswith("agreement-")
    assert {p.name for p in out.iterdir()} == {"cluster.yaml", "workload.yaml", "policy.yaml"}


@pytest.mark.slow
def test_a_replay_that_cannot_start_stops_the_run_without_a_traceback(tmp_path: Path) -> None:
    # An empty build cache: the replay refuses, naming the build to run.
    env = {**os.environ, "EXTENDER_SANDBOX_CACHE": str(tmp_path / "cache")}
    out = tmp_path / "out"
    result = _run(["--out", str(out), "--nodes", "12", "--pods", "60", "--run",
                   "--scheduler-plugins", "--scheduler-verbosity", "5"], env)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert "extender sandbox build" in result.stderr  # the replay's own words: how to fix it
    assert "python -m bench.agreement: stopped: extender simulate exited 2" in result.stderr
    # Only the replay was started: the simulation and the comparison read what it writes.
    assert result.stdout.count("$ extender simulate") == 1
    assert "--scheduler-plugins --scheduler-verbosity 5 --report" in result.stdout
    assert not (out / "real.json").exists() and not (out / "agreement.json").exists()


def test_a_scheduler_verbosity_the_replay_cannot_read_is_refused(tmp_path: Path) -> None:
    result = _run(["--out", str(tmp_path), "--scheduler-verbosity", "1"], dict(os.environ))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "argument --scheduler-verbosity: must be 2 to 10" in result.stderr
    assert not (tmp_path / "cluster.yaml").exists()
