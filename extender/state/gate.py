"""`StateGate`: keeps a `ClusterState` still while a request reads it off the event loop.

Everything that changes the state (watch events, relists, bind assumptions, assumption
expiry) runs on the event loop thread. A large request's decoding and engine work runs in a
worker thread instead, so the loop keeps answering; while it does (`enter` … `leave`), the loop
must not change what that thread reads. So changes go through `call`: applied at once when no
worker reads the state, else queued and applied in arrival order, on the loop, the moment the
last reader leaves (before anything else can start reading). Readers never see a change half
made, and no change is lost or reordered.

The queue is bounded by what arrives while one large request runs (its work is bounded by the
body and candidate limits); `pending` is exported as a metric.

One gate per state object: `gate_for(state)` returns the same gate to the informer, the
binders and the routes, however they were built.
"""

from __future__ import annotations

import logging
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

_gates: weakref.WeakKeyDictionary[Any, StateGate] = weakref.WeakKeyDictionary()


class StateGate:
    """Defers state changes while off-loop readers are active. Loop thread only."""

    __slots__ = ("_readers", "_queue", "applied_late", "__weakref__")

    def __init__(self) -> None:
        self._readers = 0
        self._queue: deque[tuple[Callable[..., Any], tuple[Any, ...]]] = deque()
        self.applied_late = 0  # changes that waited for a reader (for tests and metrics)

    @property
    def busy(self) -> bool:
        """True while a worker thread reads the state."""
        return self._readers > 0

    @property
    def pending(self) -> int:
        """Changes waiting for the readers to leave."""
        return len(self._queue)

    def call(self, fn: Callable[..., Any], *args: Any) -> None:
        """Apply a state change now, or after the active readers leave (in order)."""
        if self._readers or self._queue:
            self._queue.append((fn, args))
        else:
            fn(*args)

    def enter(self) -> None:
        """A reader starts (call on the loop, before handing work to the thread)."""
        self._readers += 1

    def leave(self) -> None:
        """A reader is done (call on the loop, once the thread has returned)."""
        self._readers -= 1
        if self._readers:
            return
        queue = self._queue
        while queue and not self._readers:
            fn, args = queue.popleft()
            self.applied_late += 1
            try:
                fn(*args)
            except Exception:  # one bad change must not keep the others from applying
                log.exception("deferred state change %s failed", getattr(fn, "__qualname__", fn))


def gate_for(state: Any) -> StateGate:
    """The gate of a state object (created on first use)."""
    gate = _gates.get(state)
    if gate is None:
        gate = _gates[state] = StateGate()
    return gate
