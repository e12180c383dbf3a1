"""A sandbox process's liveness, read from /proc: a pid reused by another program, a zombie,
and a process whose exec is still being set up (its cmdline empty for a moment)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from extender.sandbox import processes
from extender.sandbox.processes import Process, process_state
from tests.polling import until


def _process(pid: int, argv0: str) -> Process:
    return Process("p", pid, [argv0], "log", 0.0)


def test_a_running_process_is_alive_and_another_program_on_its_pid_is_not() -> None:
    me = Path(f"/proc/{os.getpid()}/cmdline").read_bytes().split(b"\0", 1)[0].decode()
    assert _process(os.getpid(), me).alive()
    assert not _process(os.getpid(), "/bin/some-other-program").alive()
    assert process_state(os.getpid()) in ("R", "S")


def test_a_zombie_and_a_gone_pid_are_not_alive() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    until(lambda: process_state(child.pid) == "Z", "the child to exit, not yet reaped", 10)
    assert not _process(child.pid, sys.executable).alive()
    child.wait()
    assert process_state(child.pid) is None
    assert not _process(child.pid, sys.executable).alive()


def test_an_empty_cmdline_of_a_live_process_is_an_exec_being_set_up(
        monkeypatch: pytest.MonkeyPatch) -> None:
    real = Path.read_bytes

    def empty_cmdline(path: Path) -> bytes:
        return b"" if path.name == "cmdline" else real(path)

    monkeypatch.setattr(Path, "read_bytes", empty_cmdline)
    assert _process(os.getpid(), "whatever").alive()  # running: not a zombie
    monkeypatch.setattr(processes, "process_state", lambda pid: "Z")
    assert not _process(os.getpid(), "whatever").alive()


def test_a_free_port_is_drawn_below_the_ephemeral_range_and_skips_one_in_use(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel hands the ports of its ephemeral range to every `connect()` and port-0 bind:
    a port found free there is often taken before the program started next binds it."""
    low, _ = processes._ephemeral_range()
    ports = {processes.free_port() for _ in range(50)}
    assert all(processes._LOWEST <= port < low for port in ports)
    assert len(ports) > 40  # drawn at random, not handed out in turn

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", min(ports)))
        taken.listen()
        draws = iter([min(ports), min(ports), max(ports)])
        monkeypatch.setattr(processes.random, "randint", lambda a, b: next(draws))
        assert processes.free_port() == max(ports)
