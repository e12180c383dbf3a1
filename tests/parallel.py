"""How the suite runs on several workers (pytest-xdist, `-n`; the default is in pyproject).

- The tests on the shared real control plane (the `sandbox` fixture of tests/e2e) are dealt
  in collection order to `SANDBOX_GROUPS` groups, `sandbox-1`, `sandbox-2`, …; a group runs
  on one worker, whose control plane serves it. Those tests mostly wait on kube-scheduler's
  clock (backoffs, a lease running out, a watch held back), about three minutes of it in all:
  on one worker that chain alone set the suite's length. (The e2e tests that start a control
  plane of their own, `extender sandbox up` and the e2e bench, run beside them.)
- Every other module's tests run together on one worker (a group per module), so a
  module-scoped fixture (a server, a browser, rendered manifests) is made once, not once per
  worker that took one of its tests: a tenth of the suite's CPU.
- Workers take tests in the order `pytest_collection_modifyitems` gives: the `alone` tests
  first (then nothing they would wait for is running yet), the control planes' groups, then
  the modules whose tests mostly wait on the programs they start spread evenly among the
  others, so that a wait finds CPU work beside it rather than other waits.
- A worker's control plane goes down after the last test of its chain, not at the session's
  end: a chain ends about halfway through a run, and the idle control plane (kube-apiserver,
  etcd, the controller manager, the node agent) then spent about 5 % of a core until the end
  (2026-12-03). A later test that needs it after all starts it again.
- A test marked `alone` runs while no other test runs: it bounds a latency or races a
  deadline, which another worker's load would stretch. Workers share a readers-writer lock
  (two `flock`ed files): every test holds it shared, an `alone` test exclusively; a waiting
  `alone` test holds the turnstile, so no new test starts before it. And no other test
  starts until every `alone` test has run (each leaves a file saying so): otherwise a
  worker that finished its `alone` test started its next, which the next `alone` test then
  waited out, and the `alone` tests' 11 s took the run's first 26 s (2026-12-03). xdist
  deals every `alone` test before any other, so none waits behind a test that waits for it.

With one process (`-n 0`) none of this costs anything: the locks are never contended.

`-n auto` starts one worker more than the machine has cores: much of the suite waits on real
processes (control planes, servers, Go oracles), and with one worker per core the cores sat
idle a third of the time (the README's test times give the figures).
`PYTEST_XDIST_AUTO_NUM_WORKERS` still decides when set.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False  # the order the items are put in, below
    config.addinivalue_line(
        "markers", "alone: runs while no other test runs (under xdist); it bounds a latency "
        "or races a deadline")


@pytest.hookimpl(optionalhook=True)  # xdist's: `-p no:xdist` runs without it
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    return len(os.sched_getaffinity(0)) + 1


#: How many shared control planes the e2e tests spread over (a worker each).
SANDBOX_GROUPS = 2


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.pluginmanager.hasplugin("xdist"):
        return
    chains = [item for item in items if "sandbox" in getattr(item, "fixturenames", ())]
    # An `alone` test first in its group, and that group first: it then runs before the
    # others have started anything it would wait for.
    chains.sort(key=lambda item: item.get_closest_marker("alone") is None)
    for k, item in enumerate(chains):
        item.add_marker(pytest.mark.xdist_group(f"sandbox-{k % SANDBOX_GROUPS + 1}"))
    in_chain = set(map(id, chains))
    alone: list[pytest.Item] = []
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        if id(item) in in_chain:
            continue
        if item.get_closest_marker("alone") is not None:
            alone.append(item)
            group = item.nodeid
        else:
            group = item.nodeid.split("::")[0]
            modules.setdefault(group, []).append(item)
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))
    # Workers take tests in this order (`loadscopereorder` off).
    items[:] = alone + chains + _spread(modules)


#: Directories whose tests mostly wait on programs they start (control planes, servers, Go
#: oracles, whole bench runs).
WAITING = ("tests/e2e/", "tests/bench/", "tests/conformance/", "tests/kube/", "tests/loadmetrics/")


def _spread(modules: dict[str, list[pytest.Item]]) -> list[pytest.Item]:
    """The modules' tests, a module's together, those whose tests mostly wait spread evenly
    among the others: a wait then finds other workers' CPU work beside it rather than other
    waits."""
    waiting = [m for m in modules if m.startswith(WAITING)]
    working = [m for m in modules if not m.startswith(WAITING)]
    order = sorted([((k + 0.5) / len(waiting), m) for k, m in enumerate(waiting)] +
                   [((k + 0.5) / len(working), m) for k, m in enumerate(working)])
    return [item for _, module in order for item in modules[module]]


@pytest.hookimpl(trylast=True)  # after the test's own fixtures (its scenario) are torn down
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    if "sandbox" not in getattr(item, "fixturenames", ()) or _sandbox_needed_after(item, nextitem):
        return
    for definition in item.session._fixturemanager.getfixturedefs("sandbox", item) or ():
        definition.finish(item._request)  # type: ignore[attr-defined]  # `kube` first, as at the end


def _sandbox_needed_after(item: pytest.Item, nextitem: pytest.Item | None) -> bool:
    def uses(other: pytest.Item | None) -> bool:
        return other is not None and "sandbox" in getattr(other, "fixturenames", ())

    if os.environ.get("PYTEST_XDIST_WORKER"):
        # A worker gets a group's tests together, so they run one after another: the chain
        # ends where the next test does not use the control plane.
        return uses(nextitem)
    items = item.session.items
    return any(map(uses, items[items.index(item) + 1:]))


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
#: How long a test waits for the `alone` tests at most (a crashed worker's never ends).
ALONE_PHASE_LIMIT = 300.0


class _AlonePhase:
    """Which of the run's `alone` tests have run: a file each, in a directory all share."""

    def __init__(self, directory: Path, items: list[pytest.Item]) -> None:
        self._dir = directory / "extender-tests.alone-done"
        self._dir.mkdir(exist_ok=True)
        self._pending = {self._mark(i.nodeid) for i in items
                         if i.get_closest_marker("alone") is not None}

    def _mark(self, nodeid: str) -> Path:
        return self._dir / hashlib.sha1(nodeid.encode()).hexdigest()

    def done(self, item: pytest.Item) -> None:
        self._mark(item.nodeid).touch()

    def wait(self) -> None:
        deadline = time.monotonic() + ALONE_PHASE_LIMIT
        while self._pending and time.monotonic() < deadline:
            self._pending = {mark for mark in self._pending if not mark.exists()}
            if self._pending:
                time.sleep(0.05)
        self._pending = set()


_phase: _AlonePhase | None = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    global _lock, _phase
    if os.environ.get("PYTEST_XDIST_WORKER") is None:  # one process: nothing runs beside it
        return (yield)
    if _lock is None or _phase is None:
        # Each worker's base temporary directory is one under the run's: the files live
        # there, and go with it.
        shared = item.config._tmp_path_factory.getbasetemp().parent  # type: ignore[attr-defined]
        _lock, _phase = _RunLock(shared), _AlonePhase(shared, item.session.items)
    alone = item.get_closest_marker("alone") is not None
    if alone:
        _lock.exclusive()
    else:
        _phase.wait()
        _lock.shared()
    try:
        return (yield)
    finally:
        _lock.release()
        if alone:
            _phase.done(item)
