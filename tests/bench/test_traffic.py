"""`python -m bench.traffic`: kube-scheduler's windows, and a short run end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.traffic import num_feasible_nodes_to_find, pending_pods, windows

ROOT = Path(__file__).resolve().parents[2]


def test_windows_are_kube_schedulers() -> None:
    # schedule_one.go's numFeasibleNodesToFind with percentageOfNodesToScore unset (adaptive).
    assert [num_feasible_nodes_to_find(n) for n in (50, 100, 500, 1000, 5000, 6000)] == [
        50, 100, 230, 420, 500, 300]
    names = [f"n{i}" for i in range(5000)]
    plan = windows(names, 40, seed=3)
    assert all(len(w) == 500 for w in plan)
    # Each window starts where the last one stopped looking, skipping what kube-scheduler's
    # own filters rejected: no two windows are the same list (a remembered list cannot flatter).
    assert len({tuple(w) for w in plan}) == 40
    assert (names.index(plan[1][0]) - names.index(plan[0][-1])) % 5000 >= 1
    small = windows(names[:100], 3, seed=3)
    assert small == [names[:100]] * 3  # below 100 nodes kube-scheduler sends every node


def test_pods_are_distinct() -> None:
    pods = pending_pods(7, 50)
    assert len({p["metadata"]["uid"] for p in pods}) == 50
    assert len({p["metadata"]["name"] for p in pods}) == 50


@pytest.mark.slow
def test_a_short_run_prints_every_verb_and_the_targets(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.traffic", "--nodes", "40", "--cycles", "5", "--warmup", "2",
         "--no-go", "--out-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    for verb in ("filter", "prioritize", "bind", "cycle (mean)"):
        assert f"| 40 | 40 | {verb} |" in done.stdout
    assert "default policy cycle ≤ 2× the 4-filter policy" in done.stdout
    report = json.loads(next(tmp_path.glob("traffic-*.json")).read_text())
    ours = report["rows"][0]["servers"]["ours"]
    assert ours["filter"]["n"] == ours["prioritize"]["n"] == ours["bind"]["n"] == 5
    assert set(report["rows"][0]["servers"]) == {"ours", "ours-plain", "ours-default", "floor"}
    assert ours["filter (full list)"]["n"] == 0  # 40 nodes: the window names every node already
    assert "every node named" not in done.stdout


@pytest.mark.slow
def test_every_node_named_where_the_window_is_smaller(tmp_path: Path) -> None:
    """Past 100 nodes kube-scheduler's window is a share of them; the full-list cycles then
    name every node, for distinct pods of their own, each server in turn, a bind each."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.traffic", "--nodes", "130", "--cycles", "3", "--warmup", "1",
         "--full-cycles", "4", "--preempts", "0", "--no-go", "--out-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "| 130 | 100 | filter |" in done.stdout
    assert "| 130 | 130 | filter, every node named |" in done.stdout
    assert "| 130 | 130 | cycle (mean), every node named |" in done.stdout
    row = json.loads(next(tmp_path.glob("traffic-*.json")).read_text())["rows"][0]
    assert row["full_cycles"] == 4
    for name in ("ours", "ours-plain", "ours-default"):
        times = row["servers"][name]
        assert times["filter (full list)"]["n"] == times["bind (full list)"]["n"] == 4
        assert times["filter"]["n"] == 3  # the windowed cycles' own, apart
    assert row["servers"]["floor"]["filter (full list)"]["n"] == 4
