"""Run one call from several threads released together, for tests of what happens when
test workers, bench runs or users ask for the same thing at the same moment."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


def at_once(ask: Callable[[], T], times: int = 4) -> list[T]:
    """`ask()` from `times` threads, started together; its results (a raised error is raised
    here)."""
    start = threading.Barrier(times)

    def released() -> T:
        start.wait()
        return ask()

    with ThreadPoolExecutor(times) as pool:
        futures = [pool.submit(released) for _ in range(times)]
        return [future.result() for future in futures]
