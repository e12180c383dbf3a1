"""Helpers for tests that start servers: a free loopback port, and bounded polling."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable

from extender.sandbox.processes import free_port

__all__ = ["free_port", "stop_process", "until"]


def until(check: Callable[[], bool], what: str = "", timeout: float = 20.0,
          interval: float = 0.05) -> None:
    """Poll until `check()` holds; fail after `timeout` seconds (every wait is bounded)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        time.sleep(interval)


def stop_process(proc: subprocess.Popen, timeout: float = 10.0) -> None:
    """Terminate a server the test started; kill it if it does not exit within `timeout`."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)
