"""Giving memory back to the system after large requests (glibc's malloc only).

A large request (a Nodes-form body of tens of megabytes, decoded in the worker thread) leaves
its freed memory with the allocator, which keeps it for reuse: resident memory then ratchets
up with each new peak and never comes down, and the worker thread's own arena fragments it
further. Two knobs, both no-ops where glibc is not the allocator:

- `limit_arenas()` at start: at most two malloc arenas (the loop's and the worker's threads
  share them instead of each growing its own);
- `trim_soon(loop)` after a large request: `malloc_trim(0)` on the loop a moment later, once
  the request's buffers are gone, handing the free pages back (a few milliseconds on a
  300 MiB heap; large requests are rare, and several in a row trim once).
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging

log = logging.getLogger(__name__)

M_ARENA_MAX = -8  # glibc's mallopt parameter number
TRIM_DELAY = 0.5

_libc: ctypes.CDLL | None = None
_pending: set[asyncio.AbstractEventLoop] = set()


def _glibc() -> ctypes.CDLL | None:
    global _libc
    if _libc is None:
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            libc.malloc_trim  # noqa: B018 - glibc only: musl has none
            libc.mallopt  # noqa: B018
        except (OSError, AttributeError):
            return None
        _libc = libc
    return _libc


def limit_arenas(arenas: int = 2) -> bool:
    """Cap glibc's malloc arenas (before threads start); False where it cannot."""
    libc = _glibc()
    return bool(libc is not None and libc.mallopt(M_ARENA_MAX, arenas))


def trim() -> bool:
    """Return free heap pages to the system now; True if any were."""
    libc = _glibc()
    return bool(libc is not None and libc.malloc_trim(0))


def trim_soon(loop: asyncio.AbstractEventLoop) -> None:
    """`trim()` on `loop` after `TRIM_DELAY` seconds, once however many ask meanwhile."""
    if loop in _pending or _glibc() is None:
        return
    _pending.add(loop)

    def run() -> None:
        _pending.discard(loop)
        trim()

    loop.call_later(TRIM_DELAY, run)
