"""Kubernetes Events on pods the extender could not place (`events.k8s.io/v1`).

Two occasions, with kube-scheduler's own reason and wording so `kubectl describe pod` reads the
same: a filter call that rejects the pod on every candidate node (reason `FailedScheduling`,
action `Scheduling`, note `0/N nodes are available: 3 Insufficient cpu, 2 node(s) had
untolerated taint(s).` as `FitError.Error()` formats it), and a bind that fails (reason
`FailedScheduling`, action `Binding`, note `binding rejected: <error>`, as kube-scheduler writes
a failed binding cycle). Notes longer than the API's 1 KiB are cut as kube-scheduler cuts them.

Recording never delays or fails a verb: `record` only decides and queues (from any thread: a
large request runs in a worker thread), and one task on the event loop posts. What reaches the
API server is bounded:

- **Series instead of repeats.** An event equal to one recorded less than `window` seconds ago
  (same pod, reason, action and note) is not posted again: its `series` (count, last observed
  time) is patched onto the posted Event, at once for the first repeat and then at most every
  `series_interval` seconds, as client-go's event broadcaster does.
- **Token buckets.** Each new event takes a token from the pod's bucket (`pod_burst`, refilled
  at `pod_rate` per second) and from the global one (`burst`, `rate` per second; patches take
  from it too). Without a token the event is dropped and counted (`rate_limited`).
- **Bounded memory.** At most `max_entries` series and pod buckets (the oldest go first) and
  `max_queue` queued requests.

Failures are counted (`counts`, and `on_outcome(outcome)` for metrics) and logged. In snapshot
mode there is no API server and no recorder: `events_of(runtime)` returns a recorder that does
nothing.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from extender.engine.framework import Status
from extender.engine.preemption.evaluator import ABSENT, histogram_message
from extender.kube.client import ApiError, KubeClient, KubeError
from extender.state.background import cancel_and_wait

log = logging.getLogger(__name__)

REPORTING_CONTROLLER = "scheduler-extender"
#: `validation.NoteLengthLimit` of events.k8s.io/v1 (bytes).
NOTE_LIMIT = 1024
REASON = "FailedScheduling"
ACTION_SCHEDULING = "Scheduling"
ACTION_BINDING = "Binding"

#: Outcome labels: `queued` (admitted, to be posted), `posted`, `patched` (a series update),
#: `deduplicated` (a repeat counted in its series), `rate_limited`, `dropped` (queue full or
#: not started), `failed` (the API server refused it or did not answer).
OUTCOMES = ("queued", "posted", "patched", "deduplicated", "rate_limited", "dropped", "failed")


def truncate_note(message: str, limit: int = NOTE_LIMIT) -> str:
    """kube-scheduler's `truncateMessage`: at most `limit` bytes, ending in ` ...` when cut."""
    data = message.encode()
    if len(data) <= limit:
        return message
    suffix = " ..."
    return data[:limit - len(suffix)].decode("utf-8", "ignore") + suffix


def filter_note(num_nodes: int, nodes_by_reasons: Mapping[tuple[str, ...], int],
                rejection: Status | None) -> str:
    """`FitError.Error()` for a pod every candidate node rejected: the PreFilter message when a
    PreFilter rejected it, else the sorted reason histogram (`histogram_message`) of how many
    nodes gave each tuple of reasons."""
    if rejection is not None:
        return f"{histogram_message(num_nodes, {}, ABSENT)} {rejection.message}."
    return histogram_message(num_nodes, nodes_by_reasons, ABSENT)


def micro_time(epoch: float) -> str:
    """`metav1.MicroTime` as the API server writes it."""
    whole = int(epoch)
    micros = int(round((epoch - whole) * 1e6))
    if micros == 1_000_000:
        whole, micros = whole + 1, 0
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{micros:06d}Z"


class TokenBucket:
    """`burst` tokens, refilled at `rate` per second."""

    __slots__ = ("rate", "burst", "tokens", "stamp")

    def __init__(self, rate: float, burst: int, now: float) -> None:
        self.rate, self.burst = rate, float(burst)
        self.tokens, self.stamp = float(burst), now

    def peek(self, now: float) -> bool:
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        return self.tokens >= 1.0

    def take(self, now: float) -> bool:
        if not self.peek(now):
            return False
        self.tokens -= 1.0
        return True


@dataclass(slots=True)
class _Series:
    namespace: str
    name: str  # the Event's name
    body: dict[str, Any]
    first_seen: float
    last_seen: float
    last_seen_wall: float
    count: int = 1
    sent_count: int = 1  # the count the server has
    posted: bool = False


class NullRecorder:
    """No API server (snapshot mode): nothing is recorded."""

    counts: Counter[str] = Counter()

    def filter_verdict(self, pod: Any, num_nodes: int,
                       nodes_by_reasons: Mapping[tuple[str, ...], int],
                       rejection: Status | None) -> None:
        return None

    def bind_failed(self, namespace: str, name: str, uid: str, node: str, message: str) -> None:
        return None


NULL_RECORDER = NullRecorder()


def events_of(runtime: Any) -> EventRecorder | NullRecorder:
    """The runtime's recorder (`runtime.events`, set by `serve` in live mode), or one that does
    nothing."""
    recorder = getattr(runtime, "events", None)
    return recorder if recorder is not None else NULL_RECORDER


class EventRecorder:
    """Posts FailedScheduling Events through `client`; see the module docstring."""

    def __init__(
        self,
        client: KubeClient,
        *,
        controller: str = REPORTING_CONTROLLER,
        instance: str | None = None,
        burst: int = 25,
        rate: float = 1.0,
        pod_burst: int = 5,
        pod_rate: float = 1 / 60,
        window: float = 360.0,
        series_interval: float = 30.0,
        max_entries: int = 4096,
        max_queue: int = 256,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        on_outcome: Callable[[str], None] | None = None,
    ) -> None:
        self.client = client
        self.controller = controller
        # client-go's events recorder: `<controller>-<hostname>`; the API allows 128 characters.
        self.instance = (instance or f"{controller}-{socket.gethostname()}")[:128]
        self.burst, self.rate = burst, rate
        self.pod_burst, self.pod_rate = pod_burst, pod_rate
        self.window = window
        self.series_interval = series_interval
        self.max_entries = max_entries
        self.max_queue = max_queue
        self.timeout = timeout
        self.clock = clock
        self.wall_clock = wall_clock
        self.on_outcome = on_outcome
        self.counts: Counter[str] = Counter()
        self._series: OrderedDict[tuple[str, str, str, str], _Series] = OrderedDict()
        self._pod_buckets: OrderedDict[str, TokenBucket] = OrderedDict()
        self._global = TokenBucket(rate, burst, clock())
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self._queue: asyncio.Queue[tuple[str, _Series]] | None = None
        self._tasks: list[asyncio.Task[None]] = []

    # ---- lifecycle (on the event loop) ----------------------------------------------------
    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._queue = asyncio.Queue(self.max_queue)
        self._tasks = [asyncio.create_task(self._post_loop(), name="events-post"),
                       asyncio.create_task(self._series_loop(), name="events-series")]

    async def stop(self) -> None:
        await cancel_and_wait(*self._tasks)
        self._tasks = []
        self._loop = None

    async def drain(self, timeout: float = 5.0) -> None:
        """Wait until every queued request has been sent (for tests and shutdown)."""
        if self._queue is not None:
            async with asyncio.timeout(timeout):
                await self._queue.join()

    @property
    def entries(self) -> int:
        """Series remembered (bounded by `max_entries`)."""
        return len(self._series)

    # ---- producers (any thread) -----------------------------------------------------------
    def filter_verdict(self, pod: Any, num_nodes: int,
                       nodes_by_reasons: Mapping[tuple[str, ...], int],
                       rejection: Status | None) -> None:
        """After a filter call that no candidate node passed (the caller decides, and counts
        the reasons only then): its Event (`nodes_by_reasons`: how many nodes gave each tuple
        of reasons)."""
        if not nodes_by_reasons:
            return
        self.record(pod.namespace, pod.name, pod.uid, REASON, ACTION_SCHEDULING,
                    filter_note(num_nodes, nodes_by_reasons, rejection))

    def bind_failed(self, namespace: str, name: str, uid: str, node: str, message: str) -> None:
        """After a failed bind: kube-scheduler's `binding rejected: <error>`."""
        self.record(namespace, name, uid, REASON, ACTION_BINDING, f"binding rejected: {message}")

    def record(self, namespace: str, name: str, uid: str, reason: str, action: str,
               note: str) -> None:
        """Decide (on the event loop) whether to post; never blocks, never raises."""
        loop = self._loop
        if loop is None:
            self._count("dropped")
            return
        args = (namespace, name, uid, reason, action, truncate_note(note))
        if threading.get_ident() == self._thread:
            self._admit(*args)
        else:
            try:
                loop.call_soon_threadsafe(self._admit, *args)
            except RuntimeError:  # the loop is closed
                self._count("dropped")

    # ---- decisions (event loop) -----------------------------------------------------------
    def _count(self, outcome: str) -> None:
        self.counts[outcome] += 1
        if self.on_outcome is not None:
            self.on_outcome(outcome)

    def _admit(self, namespace: str, name: str, uid: str, reason: str, action: str,
               note: str) -> None:
        now = self.clock()
        key = (uid or f"{namespace}/{name}", reason, action, note)
        entry = self._series.get(key)
        if entry is not None and now - entry.last_seen <= self.window:
            entry.count += 1
            entry.last_seen = now
            entry.last_seen_wall = self.wall_clock()
            self._series.move_to_end(key)
            self._count("deduplicated")
            if entry.posted and entry.count == 2:
                self._send_series(entry, now)  # the first repeat is patched at once
            return
        bucket = self._pod_buckets.get(key[0])
        if bucket is None:
            bucket = self._pod_buckets[key[0]] = TokenBucket(self.pod_rate, self.pod_burst, now)
            while len(self._pod_buckets) > self.max_entries:
                self._pod_buckets.popitem(last=False)
        else:
            self._pod_buckets.move_to_end(key[0])
        if not bucket.peek(now) or not self._global.take(now):
            self._count("rate_limited")
            return
        bucket.take(now)
        wall = self.wall_clock()
        body: dict[str, Any] = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            # client-go's events recorder names them `<object>.<unix nanoseconds, hex>`.
            "metadata": {"name": f"{name}.{int(wall * 1e9):x}", "namespace": namespace},
            "eventTime": micro_time(wall),
            "reportingController": self.controller,
            "reportingInstance": self.instance,
            "action": action,
            "reason": reason,
            "type": "Warning",
            "regarding": {"apiVersion": "v1", "kind": "Pod", "namespace": namespace,
                          "name": name, "uid": uid},
            "note": note,
        }
        entry = _Series(namespace, body["metadata"]["name"], body, now, now, wall)
        self._series.pop(key, None)
        self._series[key] = entry
        while len(self._series) > self.max_entries:
            self._series.popitem(last=False)
        self._enqueue("create", entry)

    def _send_series(self, entry: _Series, now: float) -> None:
        if entry.count > entry.sent_count and self._global.take(now):
            entry.sent_count = entry.count
            self._enqueue("patch", entry)

    def _enqueue(self, kind: str, entry: _Series) -> None:
        assert self._queue is not None
        try:
            self._queue.put_nowait((kind, entry))
        except asyncio.QueueFull:
            self._count("dropped")
            return
        if kind == "create":
            self._count("queued")

    # ---- posting (event loop) -------------------------------------------------------------
    async def _post_loop(self) -> None:
        assert self._queue is not None
        queue = self._queue
        while True:
            kind, entry = await queue.get()
            try:
                await self._send(kind, entry)
            except asyncio.CancelledError:
                raise
            except Exception:  # never let one event stop the recorder
                log.exception("recording an event failed")
                self._count("failed")
            finally:
                queue.task_done()

    async def _send(self, kind: str, entry: _Series) -> None:
        regarding = f"{entry.namespace}/{entry.body['regarding']['name']}"
        try:
            if kind == "create":
                await self.client.create_event(entry.namespace, entry.body, timeout=self.timeout)
                entry.posted = True
                self._count("posted")
                if entry.count > 1:  # repeats arrived while it was queued
                    self._send_series(entry, self.clock())
            else:
                patch = {"series": {"count": entry.sent_count,
                                    "lastObservedTime": micro_time(entry.last_seen_wall)}}
                await self.client.patch_event(entry.namespace, entry.name, patch,
                                              timeout=self.timeout)
                self._count("patched")
        except (KubeError, TimeoutError) as exc:
            self._count("failed")
            if isinstance(exc, ApiError) and exc.code == 404 and kind == "patch":
                self._forget(entry)  # expired on the server: the next repeat posts a new one
            elif kind == "create":
                self._forget(entry)
            log.warning("event %s on pod %s not recorded: %s", entry.body["reason"], regarding, exc)

    def _forget(self, entry: _Series) -> None:
        for key, value in list(self._series.items()):
            if value is entry:
                del self._series[key]
                break

    async def _series_loop(self) -> None:
        """Every `series_interval`: send the counts that grew, forget finished series."""
        while True:
            await asyncio.sleep(self.series_interval)
            now = self.clock()
            for key, entry in list(self._series.items()):
                if now - entry.last_seen > self.window:
                    del self._series[key]
                elif entry.posted:
                    self._send_series(entry, now)
