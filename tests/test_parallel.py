"""The suite's parallel plan holds (tests/parallel.py): under `-n 2`, the tests on the shared
control plane (the `sandbox` fixture) form `SANDBOX_GROUPS` groups, each on one worker, whose
control plane goes down after the group's last test; a module's other tests share a worker; an `alone` test runs while no other test runs, and no
other test starts before every `alone` test has run.
Checked on a small suite of its own, run by the same pytest and xdist."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.parallel import SANDBOX_GROUPS

ROOT = Path(__file__).resolve().parent.parent

CONFTEST = """
pytest_plugins = ["tests.parallel"]
"""

NOTE = """
import os, time
from pathlib import Path

LOG = Path(__file__).with_name("log")

def note(what):
    with LOG.open("a") as log:
        log.write(f"{time.monotonic():.6f} {os.environ['PYTEST_XDIST_WORKER']} {what}\\n")
"""

SUITE = """
import time

import pytest

from note import note

@pytest.fixture(scope="session")
def sandbox():
    yield "one control plane"
    note("sandbox-down")

@pytest.mark.parametrize("i", range(6))
def test_e2e(i, sandbox):
    note(f"e2e-{i}")
    time.sleep(0.05)  # only to give the other worker a chance to take one

@pytest.mark.parametrize("i", range(10))
def test_other(i):
    note(f"start-a{i}")
    time.sleep(0.05)
    note(f"end-a{i}")

@pytest.mark.alone
@pytest.mark.parametrize("k", range(3))
def test_alone(k):
    note(f"alone-start-{k}")
    time.sleep(0.3)
    note(f"alone-end-{k}")
"""

SECOND = """
import time

import pytest

from note import note

@pytest.mark.parametrize("i", range(10))
def test_other(i):
    note(f"start-b{i}")
    time.sleep(0.05)
    note(f"end-b{i}")
"""


@pytest.mark.slow
def test_control_plane_tests_share_a_worker_and_alone_tests_run_alone(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "note.py").write_text(NOTE)
    (tmp_path / "test_plan.py").write_text(SUITE)
    (tmp_path / "test_second.py").write_text(SECOND)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadgroup",
         "-p", "no:cacheprovider", "--rootdir", str(tmp_path), str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
        env={"PYTHONPATH": f"{ROOT}:{tmp_path}", "PATH": ""})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    entries = [line.split() for line in (tmp_path / "log").read_text().splitlines()]
    groups: dict[int, set[str]] = {}
    for _, worker, what in entries:
        if what.startswith("e2e-"):
            groups.setdefault(int(what[4:]) % SANDBOX_GROUPS, set()).add(worker)
    assert len(groups) == SANDBOX_GROUPS and all(len(w) == 1 for w in groups.values()), entries
    # Each worker's control plane went down right after its chain's last test, before the
    # worker's next test: not at the end of the session.
    for (worker,) in groups.values():
        mine = [what for _, w, what in entries if w == worker]
        last = max(i for i, what in enumerate(mine) if what.startswith("e2e-"))
        assert mine[last + 1:last + 2] == ["sandbox-down"], mine
        assert mine.count("sandbox-down") == 1 and len(mine) > last + 2, mine
    for module in "ab":
        assert len({worker for _, worker, what in entries
                    if what.startswith(f"start-{module}")}) == 1, (module, entries)
    assert len({worker for _, worker, _ in entries}) == 2, "the tests used both workers"
    alone = [(float(start), float(end)) for (start, _, a), (end, _, b)
             in zip(entries, entries[1:], strict=False) if a.startswith("alone-start-")
             and b == a.replace("start", "end")]
    assert len(alone) == 3, entries  # each alone: nothing noted between its start and end
    # And nothing else starts before the last of them has run (tests/parallel.py's phase).
    others = [float(at) for at, _, what in entries if what.startswith(("start-", "e2e-"))]
    assert min(others) > max(end for _, end in alone), entries


@pytest.mark.slow
@pytest.mark.parametrize("override", [None, "1"])
def test_auto_starts_a_worker_more_than_the_cores(tmp_path: Path, override: str | None) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_one.py").write_text("def test_one():\n    pass\n")
    env = {"PYTHONPATH": str(ROOT), "PATH": ""}
    if override:
        env["PYTEST_XDIST_AUTO_NUM_WORKERS"] = override
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "auto", "-p", "no:cacheprovider",
         "--rootdir", str(tmp_path), str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    workers = int(override) if override else len(os.sched_getaffinity(0)) + 1
    assert f"created: {workers}/{workers} worker" in proc.stdout, proc.stdout[-3000:]
