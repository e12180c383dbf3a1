"""`python -m bench.ab`: checkouts of the extender measured side by side in one run."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench import ab

ROOT = Path(__file__).resolve().parents[2]


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout


@pytest.fixture
def git_checkout() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs this repository as a git checkout (and git)")


def test_a_revision_is_checked_out_apart_and_its_own_package_imported(
        git_checkout: None, tmp_path: Path) -> None:
    before = _git("worktree", "list")
    with ab.checkouts(["HEAD", str(ROOT)], tmp_path) as paths:
        revision, checkout = paths
        assert checkout == ROOT
        assert revision.parent == tmp_path
        assert _git("-C", str(revision), "rev-parse", "HEAD") == _git("rev-parse", "HEAD")
        # Not the installed (editable) package of the test run: the revision's own.
        assert ab.imported_from(revision) == revision / "extender" / "__init__.py"
        assert ab.imported_from(checkout) == ROOT / "extender" / "__init__.py"
    assert not revision.exists()
    assert _git("worktree", "list") == before


def test_neither_a_checkout_nor_a_revision_is_refused(git_checkout: None, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "bench.ab", "no-such-revision-xyz", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert done.stderr.strip() == ("bench.ab: 'no-such-revision-xyz' is neither a checkout of "
                                   "this extender nor a git revision of this repository")


@pytest.mark.slow
def test_two_trees_answer_the_same_cycles_in_one_run(git_checkout: None) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.ab", "--nodes", "100", "--cycles", "12", "--warmup", "2",
         "--seed", "5", "--preempts", "4", "HEAD", "."], cwd=ROOT, capture_output=True,
        text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0] == ("100 nodes, 12 cycles (+2 warm-up), seed 5, every tree's server "
                        "answering each cycle in turn; milliseconds.")
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines if
            line.startswith("| HEAD") or line.startswith("| .")]
    assert [row[0] for row in rows] == ["HEAD", "."]
    assert lines[2].startswith("| tree | filter p50 | prioritize p50 | bind p50 | cycle mean | "
                               "preempt p50 | against the first (")
    for row in rows:
        assert all(float(cell) > 0 for cell in row[1:6]), row
    assert rows[0][6] == "1.000, 1.000, 1.000, 1.000, 1.000"
    ratios = [float(x) for x in rows[1][6].split(", ")]
    # From the unrounded figures: the cells' three decimals leave the ratio within 2 % (each
    # request takes a tenth of a millisecond at least).
    assert ratios == pytest.approx([float(rows[1][i]) / float(rows[0][i]) for i in range(1, 6)],
                                   rel=0.02)
