"""How the suite runs on several workers (pytest-xdist, `-n`; the default is in pyproject).

- Every test on the shared real control plane (the `sandbox` fixture of tests/e2e) runs on
  one worker, in the `sandbox` group: one control plane serves them all. (The e2e tests that
  start a control plane of their own, `extender sandbox up` and the e2e bench, run beside it.)
- A test marked `alone` runs while no other test runs: it bounds a latency or races a
  deadline, which another worker's load would stretch. Workers share a readers-writer lock
  (two `flock`ed files): every test holds it shared, an `alone` test exclusively; a waiting
  `alone` test holds the turnstile, so no new test starts before it.

With one process (`-n 0`) none of this costs anything: the locks are never contended.

`-n auto` starts one worker more than the machine has cores: much of the suite waits on real
processes (control planes, servers, Go oracles), and with one worker per core the cores sat
idle a third of the time (the README's test times give the figures).
`PYTEST_XDIST_AUTO_NUM_WORKERS` still decides when set.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "alone: runs while no other test runs (under xdist); it bounds a latency "
        "or races a deadline")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    return len(os.sched_getaffinity(0)) + 1


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "sandbox" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("sandbox"))


class _RunLock:
    def __init__(self, directory: Path) -> None:
        base = directory / "extender-tests"
        self._turnstile: IO[bytes] = open(f"{base}.turnstile", "ab")  # noqa: SIM115
        self._main: IO[bytes] = open(f"{base}.lock", "ab")  # noqa: SIM115

    def shared(self) -> None:
        fcntl.flock(self._turnstile, fcntl.LOCK_EX)
        fcntl.flock(self._main, fcntl.LOCK_SH)
        fcntl.flock(self._turnstile, fcntl.LOCK_UN)

    def exclusive(self) -> None:
        fcntl.flock(self._turnstile, fcntl.LOCK_EX)
        fcntl.flock(self._main, fcntl.LOCK_EX)

    def release(self) -> None:
        fcntl.flock(self._main, fcntl.LOCK_UN)
        fcntl.flock(self._turnstile, fcntl.LOCK_UN)


_lock: _RunLock | None = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    global _lock
    if os.environ.get("PYTEST_XDIST_WORKER") is None:  # one process: nothing runs beside it
        return (yield)
    if _lock is None:
        # Each worker's base temporary directory is one under the run's: the files live
        # there, and go with it.
        _lock = _RunLock(item.config._tmp_path_factory.getbasetemp().parent)  # type: ignore[attr-defined]
    if item.get_closest_marker("alone") is not None:
        _lock.exclusive()
    else:
        _lock.shared()
    try:
        return (yield)
    finally:
        _lock.release()
