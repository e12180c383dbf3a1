"""Virtual time for the simulator: a monotonic clock and a timeline of timed callbacks.

Time is an `int` count of nanoseconds, like Go's `time.Duration`, so that the queue's strict
comparisons (`expiry > now`, `now - timestamp > 5 min`) are exact and runs are reproducible.
Nothing here reads the wall clock.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field

NANOSECOND = 1
MICROSECOND = 1_000
MILLISECOND = 1_000_000
SECOND = 1_000_000_000
MINUTE = 60 * SECOND


def seconds(value: float) -> int:
    """Seconds (int or float) to virtual nanoseconds, rounded to the nearest nanosecond."""
    return round(value * SECOND)


def to_seconds(ns: int) -> float:
    return ns / SECOND


class VirtualClock:
    """A clock that only moves when told to, and never backwards.

    `on_advance`, when set, is called with the instant being left each time the clock moves
    forward (the event log samples the queues there: one sample per virtual instant)."""

    __slots__ = ("_now", "on_advance")

    def __init__(self, start: int = 0) -> None:
        self._now = start
        self.on_advance: Callable[[int], None] | None = None

    def now(self) -> int:
        return self._now

    def advance_to(self, t: int) -> None:
        if t < self._now:
            raise ValueError(f"virtual clock cannot go back from {self._now} to {t}")
        if t > self._now and self.on_advance is not None:
            self.on_advance(self._now)
        self._now = t

    def __repr__(self) -> str:
        return f"VirtualClock({to_seconds(self._now)}s)"


@dataclass(order=True)
class TimelineEntry:
    time: int
    rank: int
    seq: int
    action: Callable[[], object] = field(compare=False)
    period: int = field(compare=False, default=0)
    cancelled: bool = field(compare=False, default=False)
    done: bool = field(compare=False, default=False)


class Timeline:
    """Timed callbacks on a `VirtualClock`, fired in (time, rank, insertion) order.

    Periodic callbacks model `wait.Until(f, period)`: `f` runs at `start`, `start + period`, …
    `run_until(t)` moves the clock to each callback's own time before running it, so a flush
    that falls in the middle of a scheduling cycle sees the time it would have seen.
    """

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self._heap: list[TimelineEntry] = []
        self._one_shots: list[TimelineEntry] = []  # the same one-shot entries, for next_time
        self._seq = 0

    def _push(self, entry: TimelineEntry) -> TimelineEntry:
        heapq.heappush(self._heap, entry)
        return entry

    def at(self, t: int, action: Callable[[], object], *, rank: int = 0,
           background: bool = False) -> TimelineEntry:
        """Run `action` once at virtual time `t` (not before now).

        A `background` entry fires when the clock passes it but, like the periodic ones, is
        not counted by `next_time(include_periodic=False)`: it does not keep a run going."""
        self._seq += 1
        entry = TimelineEntry(max(t, self.clock.now()), rank, self._seq, action)
        if not background:
            heapq.heappush(self._one_shots, entry)
        return self._push(entry)

    def every(self, period: int, action: Callable[[], object], *, start: int | None = None,
              rank: int = 0) -> TimelineEntry:
        """Run `action` at `start` (default now) and then every `period`."""
        if period <= 0:
            raise ValueError("period must be positive")
        self._seq += 1
        first = self.clock.now() if start is None else start
        return self._push(TimelineEntry(first, rank, self._seq, action, period))

    @staticmethod
    def cancel(entry: TimelineEntry) -> None:
        entry.cancelled = True

    def _drop_cancelled(self) -> None:
        while self._heap and self._heap[0].cancelled:
            heapq.heappop(self._heap)

    def next_time(self, *, include_periodic: bool = True) -> int | None:
        """Time of the earliest pending callback (optionally ignoring periodic and background
        ones)."""
        self._drop_cancelled()
        if include_periodic:
            return self._heap[0].time if self._heap else None
        shots = self._one_shots
        while shots and (shots[0].cancelled or shots[0].done):
            heapq.heappop(shots)
        return shots[0].time if shots else None

    def run_until(self, t: int, stop: Callable[[], bool] | None = None) -> int:
        """Fire every callback due at or before `t`, then leave the clock at `t`.

        With `stop`, the run ends early once `stop()` is true after the callbacks of an
        instant (all of them: callbacks due at the same time all fire), and the clock stays at
        that instant: the scheduler acts at the moment a flush hands it a pod, not at `t`.
        Returns the number of callbacks fired."""
        fired = 0
        while True:
            self._drop_cancelled()
            if not self._heap or self._heap[0].time > t:
                break
            entry = heapq.heappop(self._heap)
            self.clock.advance_to(entry.time)
            if entry.period:
                # Re-arm first so the action may cancel it.
                entry.time += entry.period
                heapq.heappush(self._heap, entry)
            else:
                entry.done = True
            entry.action()
            fired += 1
            if stop is not None and stop():
                self._drop_cancelled()
                if not self._heap or self._heap[0].time > self.clock.now():
                    return fired
        self.clock.advance_to(max(t, self.clock.now()))
        return fired

    def periodic_fire_time(self, entry: TimelineEntry, not_before: int) -> int:
        """The first time >= `not_before` at which periodic `entry` fires."""
        if entry.time >= not_before:
            return entry.time
        missed = -(-(not_before - entry.time) // entry.period)
        return entry.time + missed * entry.period
