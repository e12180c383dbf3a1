"""`python -m bench.stages`: each stage of a request timed in the server, on real traffic."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _cells(output: str) -> dict[str, list[float | None]]:
    """Each row's p50 per verb (filter, prioritize, bind, preempt), None where the stage is
    absent."""
    rows: dict[str, list[float | None]] = {}
    for line in output.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or cells[0] in ("stage", "---"):
            continue
        rows[cells[0].lstrip("· ")] = [None if c == "—" else float(re.split(r" / ", c)[0])
                                       for c in cells[1:]]
    return rows


@pytest.mark.slow
def test_every_stage_of_every_verb_is_timed() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.stages", "--nodes", "300", "--cycles", "40",
         "--warmup", "5", "--preempts", "10", "--seed", "3"],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("300 nodes, window 144, 40 cycles, policy yardstick")
    rows = _cells(done.stdout)
    for stage in ("read", "queue", "answer", "metrics", "write", "server", "client"):
        assert all(v is not None and v >= 0 for v in rows[stage]), (stage, rows[stage])
    filter_, prioritize, bind, preempt = (list(column)
                                          for column in zip(*rows.values(), strict=True))
    stages = list(rows)
    timed = dict(zip(stages, filter_, strict=True))
    # The filter's own stages ran, inside its answer, inside the server's time, inside what the
    # client saw.
    for stage in ("pod view", "names → rows", "prefilter", "filter plugins", "reply"):
        assert timed[stage] is not None and 0 < timed[stage] <= timed["answer"], stage
    assert timed["answer"] < timed["server"] < timed["client"]
    assert dict(zip(stages, prioritize, strict=True))["score plugins"] is not None
    assert dict(zip(stages, bind, strict=True))["bind"] is not None
    assert dict(zip(stages, bind, strict=True))["filter plugins"] is None
    preempted = dict(zip(stages, preempt, strict=True))
    for stage in ("decode", "pod view", "proposals", "victims", "reply"):
        assert preempted[stage] is not None and 0 < preempted[stage] <= preempted["answer"], stage
    assert rows["outside the server"][0] == pytest.approx(timed["client"] - timed["server"], abs=1)


@pytest.mark.slow
def test_every_node_named_at_percentage_100() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.stages", "--nodes", "300", "--cycles", "8",
         "--warmup", "2", "--preempts", "3", "--seed", "4", "--percentage-of-nodes-to-score",
         "100"],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("300 nodes, window 300, 8 cycles, policy yardstick")
    rows = _cells(done.stdout)
    assert rows["names → rows"][0] is not None and rows["names → rows"][0] > 0
