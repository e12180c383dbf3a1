"""Large requests: their decoding and engine work runs in a worker thread, off the event loop.

The loop then stays free to answer `/healthz`, `/readyz` and small requests while a large one
runs. Three rules keep this safe and bounded:

- **One large request at a time** (`slot`): it is read, decoded and worked on alone, so the
  memory of requests stays bounded by one large body plus the small ones. Others wait for the
  slot before their body is read (TCP back-pressure holds the rest), at most `slot_wait`
  seconds, then answer 503.
- **The state holds still while the worker reads it**: the worker is registered with the
  state's `StateGate`, which defers every change (watch events, assumptions) until the worker
  has returned and then applies them in order, on the loop (see `extender.state.gate`).
- **Mutations the handler makes go back to the loop**: `call_on_loop` runs a function on the
  loop thread when called from the worker (remembering a pending pod, for instance).

`after_reply` is the other way round: work a handler on the loop leaves until its reply is
written (a filter's bookkeeping, the prioritize it prepares); the worker gets no such turn.

`free_in_slices` hands the worker a large request's biggest containers (its decoded nodes) to
free a slice at a time after the reply has gone: freeing them whole at the handler's return is
one step the GIL cannot interrupt (~40 ms for 16 000 nodes), a stall for the loop.

The worker drives the handler's coroutine on its own event loop, so handlers stay `async`.
The garbage collector pauses while it does and until what it kept is freed (see `_drive`).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sys
import threading
from collections.abc import AsyncIterator, Callable, Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from extender.api import memory
from extender.state.gate import StateGate

T = TypeVar("T")

#: Bodies larger than this run off the event loop: every Nodes-form request beyond ~90 nodes.
#: NodeNames requests stay on the loop up to ~30 000 candidates for filter and prioritize and
#: ~6 000 for preempt: their work (1 ms for filter at 5 000) is less than what handing a
#: request to the worker and back costs on top of it (~0.2 ms measured at 5 000 NodeNames).
DEFAULT_OFFLOAD_BYTES = 1024 * 1024
#: Items freed between two chances for the loop to take the GIL (~0.6 ms of nodes).
FREE_SLICE = 256
#: How long a large request waits for the one large-request slot before answering 503.
DEFAULT_SLOT_WAIT = 10.0
#: Bodies above this but not large are read and answered on the loop, at most
#: `MEDIUM_SLOTS` at a time (by the route and `api.direct` together), so the bodies in flight
#: stay bounded (as when this was the offload threshold): 512 connections × 1 MiB would not be.
MEDIUM_BYTES = 64 * 1024
MEDIUM_SLOTS = 8


class Busy(Exception):
    """No large-request slot became free in time."""


class _Slots:
    """A semaphore of `size` slots, made anew for each event loop (tests run several)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.waiting = 0
        self._semaphore: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def on(self, loop: asyncio.AbstractEventLoop) -> asyncio.Semaphore:
        if self._semaphore is None or self._loop is not loop:
            self._semaphore, self._loop = asyncio.Semaphore(self.size), loop
        return self._semaphore

    def take_now(self) -> bool:
        """Take a slot if one is free at this moment (on the loop), without waiting."""
        semaphore = self.on(asyncio.get_running_loop())
        if semaphore.locked():
            return False
        # An unlocked semaphore's `acquire` returns without suspending: driven once here,
        # it counts the slot in the same semaphore the waiting route uses.
        acquiring = semaphore.acquire()
        try:
            acquiring.send(None)
        except StopIteration:
            return True
        acquiring.close()  # not reached: nothing runs between the check and the send
        return False

    def give_back(self) -> None:
        """Release a slot `take_now` took."""
        assert self._semaphore is not None
        self._semaphore.release()


class Offloader:
    """The worker thread and the one-large-request slot."""

    def __init__(self, threshold: int = DEFAULT_OFFLOAD_BYTES,
                 slot_wait: float = DEFAULT_SLOT_WAIT) -> None:
        self.threshold = threshold
        self.slot_wait = slot_wait
        self.running = 0  # large requests in the worker (0 or 1)
        self._executor: ThreadPoolExecutor | None = None
        self._large_slot = _Slots(1)
        self._medium_slots = _Slots(MEDIUM_SLOTS)
        self._local = threading.local()
        self._loop: asyncio.AbstractEventLoop | None = None

    def is_large(self, size: int | None) -> bool:
        """Whether a body of `size` bytes (None: not declared) runs off the loop."""
        return size is None or size > self.threshold

    @staticmethod
    def is_medium(size: int | None) -> bool:
        """Whether a body that is not large takes one of the `MEDIUM_SLOTS`."""
        return size is not None and size > MEDIUM_BYTES

    def medium_slot(self) -> contextlib.AbstractAsyncContextManager[None]:
        """Hold one of the medium-body slots; raises `Busy` after `slot_wait` seconds."""
        return self._held(self._medium_slots, f"busy with {MEDIUM_SLOTS} other requests")

    def take_medium_now(self) -> bool:
        """Take one of the medium-body slots if one is free now (`api.direct` reads a medium
        body only while holding one); `give_back_medium` releases it."""
        return self._medium_slots.take_now()

    def give_back_medium(self) -> None:
        self._medium_slots.give_back()

    def slot(self) -> contextlib.AbstractAsyncContextManager[None]:
        """Hold the one large-request slot; raises `Busy` after `slot_wait` seconds."""
        return self._held(self._large_slot, "busy with another large request")

    @contextlib.asynccontextmanager
    async def _held(self, slots: _Slots, busy: str) -> AsyncIterator[None]:
        semaphore = slots.on(asyncio.get_running_loop())
        slots.waiting += 1
        try:
            async with asyncio.timeout(self.slot_wait):
                await semaphore.acquire()
        except TimeoutError:
            raise Busy(f"{busy} for {self.slot_wait:g}s") from None
        finally:
            slots.waiting -= 1
        try:
            yield
        finally:
            semaphore.release()

    @property
    def waiting(self) -> int:
        """Large requests waiting for the slot."""
        return self._large_slot.waiting

    @property
    def waiting_medium(self) -> int:
        """Medium-body requests waiting for a slot."""
        return self._medium_slots.waiting

    async def run(self, gate: StateGate, work: Coroutine[Any, Any, T]) -> T:
        """Run the coroutine `work` to completion in the worker thread; the state behind
        `gate` holds still until it has returned (even if this call is cancelled)."""
        loop = asyncio.get_running_loop()
        self._loop = loop
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="extender-large")
        gate.enter()
        self.running += 1
        try:
            future: Future[T] = self._executor.submit(self._drive, work)
        except BaseException:
            work.close()
            self._done(gate)
            raise
        # Queued behind the request, so it runs once the reply is on its way to the loop.
        self._executor.submit(self._free_held)

        def finished(done: Future[T]) -> None:
            if done.cancelled():  # never started: nothing read the state
                work.close()
            with contextlib.suppress(RuntimeError):  # the loop is closed: nothing to resume
                loop.call_soon_threadsafe(self._done, gate)

        future.add_done_callback(finished)
        return await asyncio.wrap_future(future)

    def _done(self, gate: StateGate) -> None:
        self.running -= 1
        gate.leave()
        if self._loop is not None:
            memory.trim_soon(self._loop)  # give the request's pages back once it is gone

    def _drive(self, work: Coroutine[Any, Any, T]) -> T:
        local = self._local
        loop = getattr(local, "loop", None)
        if loop is None or loop.is_closed():
            # One loop for the thread's life: making one costs ~0.1 ms a request.
            loop = local.loop = asyncio.new_event_loop()
            local.held = []
        local.active = True
        # The request's garbage is acyclic (freed by reference counting); a collection pass
        # meanwhile would walk its whole young object graph holding the GIL, a stall of tens
        # of milliseconds for the loop. Paused for the request's duration (one at a time) and
        # until `_free_held` has freed what it kept: the first allocation after would start a
        # pass over all of it (~30 ms measured at 16 000 nodes).
        if gc.isenabled():
            gc.disable()
            local.resume_collecting = True
        try:
            return loop.run_until_complete(work)
        finally:
            local.active = False

    def free_in_slices(self, *containers: list[Any] | dict[Any, Any]) -> None:
        """In the worker: keep these lists and dicts until the request is answered, then empty
        each a slice at a time (if nothing else holds it by then), so that the loop can take
        the GIL between slices. Elsewhere: nothing (they are freed as usual)."""
        if getattr(self._local, "active", False):
            self._local.held.extend(containers)

    def _free_held(self) -> None:
        """Next in the worker after a request: free what it kept, then resume collecting."""
        local = self._local
        held: list[Any] = getattr(local, "held", [])
        try:
            while held:
                container = held.pop()
                if sys.getrefcount(container) > 2:  # this name and the argument: else shared
                    continue
                if isinstance(container, list):
                    while container:
                        del container[-FREE_SLICE:]
                else:
                    while container:
                        for _ in range(min(FREE_SLICE, len(container))):
                            container.popitem()
        finally:
            held.clear()
            if getattr(local, "resume_collecting", False):
                local.resume_collecting = False
                gc.enable()

    def call_on_loop(self, fn: Callable[..., Any], *args: Any) -> None:
        """`fn(*args)` on the event loop thread: now if called there, else as soon as the loop
        runs (before the worker's result is seen there)."""
        if getattr(self._local, "active", False) and self._loop is not None:
            self._loop.call_soon_threadsafe(fn, *args)
        else:
            fn(*args)

    def after_reply(self, fn: Callable[..., Any], *args: Any) -> bool:
        """`fn(*args)` on the event loop once the request at hand is answered (its reply is
        written in the same turn of the loop); not at all from the worker, whose answer
        reaches the loop after anything scheduled now. Whether it was scheduled."""
        if getattr(self._local, "active", False):
            return False
        asyncio.get_running_loop().call_soon(fn, *args)
        return True

    def close(self) -> None:
        if self._executor is not None:
            # The one slot means at most one request is queued or running; the worker's
            # loop closes after it.
            executor, self._executor = self._executor, None
            executor.submit(self._close_loop)
            executor.shutdown(wait=False)

    def _close_loop(self) -> None:
        loop = getattr(self._local, "loop", None)
        if loop is not None and not loop.is_closed():
            loop.close()
