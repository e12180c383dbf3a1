"""`Recorder`: writes a recording (`extender.state.recording`) without ever holding up a verb.

Entries are made on the event loop (their timestamps and order are the loop's) but encoded
and written by one writer thread: the loop only appends a closure to a queue. A write error,
or a queue that falls too far behind the disk, is logged once and recording stops; the verbs
never see it.

The hooks here put the state's outside changes into the recording, each where the change is
applied (after the `StateGate`, so a change deferred by a large request is recorded where it
took effect): `RecordingSink` (the informers), `LiveState.on_expired` (assumption expiry),
`LoadMetricsRefresher.apply_snapshot` (node load), `RecordingBinder` (the API server's answer
to each bind), `permit_wait` (held binds timing out), `held_rejected` (serve's shutdown and
loss of leadership answering the held binds) and `record_snapshot` (a `--snapshot` file's
objects). Nothing is wrapped when not recording.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import queue
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from extender.engine.cluster import ClusterState
from extender.model import k8s
from extender.model.loadmetrics import WatcherMetrics
from extender.model.pod import PodView
from extender.state import recording
from extender.state.binder import ApiBinder, Binder, BindError
from extender.state.snapshot import typed_objects

log = logging.getLogger(__name__)

Make = Callable[[], "recording.Header | recording.Entry"]
_STOP = object()
#: Entries waiting for the writer beyond which recording stops (the disk cannot keep up).
MAX_PENDING = 50_000
_encoder = msgspec.json.Encoder()


def raw(obj: Any) -> msgspec.Raw:
    """A typed object re-encoded (it decodes back to the identical struct)."""
    return msgspec.Raw(_encoder.encode(obj))


class Recorder:
    """One recording file of one serve process. `write` on the loop thread only."""

    def __init__(self, file: BinaryIO, path: Path, state: ClusterState, *,
                 max_pending: int = MAX_PENDING) -> None:
        self.path = path
        self.clock = state.clock
        self.wall_clock = state.wall_clock
        self.active = True
        self.written = 0
        self.max_pending = max_pending
        self._file = file
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._ids = itertools.count(1)
        self._thread: threading.Thread | None = None

    @classmethod
    def create(cls, directory: Path, state: ClusterState, **options: Any) -> Recorder:
        """A new `recording-<n>.jsonl` in `directory` (made if missing; never overwrites: a
        restarted extender writes the next number)."""
        directory.mkdir(parents=True, exist_ok=True)
        for number in itertools.count(1):
            path = directory / f"recording-{number}.jsonl"
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                continue
            return cls(os.fdopen(fd, "wb"), path, state, **options)
        raise AssertionError("unreachable")

    def now(self) -> tuple[float, float]:
        return self.clock(), self.wall_clock()

    def next_id(self) -> int:
        return next(self._ids)

    def start(self) -> None:
        """Start the writer thread: entries written from now on are queued for it."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="extender-record",
                                            daemon=True)
            self._thread.start()

    def write_now(self, entry: recording.Header | recording.Entry) -> None:
        """Write an entry at once (before `start`: the header, a snapshot's objects)."""
        if self._thread is not None:
            self.write(lambda: entry)
            return
        try:
            self._file.write(recording.encode(entry))
            self.written += 1
        except OSError as exc:
            self._stop(f"cannot write {self.path}: {exc}")

    def write(self, make: Make) -> None:
        """Queue an entry; `make` builds it in the writer thread (it must only read values
        that no longer change)."""
        if not self.active:
            return
        pending = self._queue.qsize()
        if pending >= self.max_pending:
            self._stop(f"{pending} entries wait for the disk")
            return
        self._queue.put(make)

    def close(self) -> None:
        """Write what is queued and close the file (at shutdown)."""
        self.start()
        self._queue.put(_STOP)
        assert self._thread is not None
        self._thread.join(timeout=30)

    # ---- the writer thread -----------------------------------------------------------------
    def _run(self) -> None:
        stopping = False
        while not stopping:
            batch = [self._queue.get()]
            while len(batch) < 1024:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            lines = []
            for item in batch:
                if item is _STOP:
                    stopping = True
                    continue
                if not self.active:
                    continue
                try:
                    lines.append(recording.encode(item()))
                except Exception as exc:  # never the verbs' problem
                    self._stop(f"cannot encode an entry: {type(exc).__name__}: {exc}")
            if lines and self.active:
                try:
                    self._file.write(b"".join(lines))
                    self._file.flush()
                    self.written += len(lines)
                except OSError as exc:
                    self._stop(f"cannot write {self.path}: {exc}")
        try:
            self._file.close()
        except OSError:
            pass

    def _stop(self, why: str) -> None:
        if self.active:
            self.active = False
            log.error("recording stopped: %s", why, extra={"fields": {"file": str(self.path)}})

    # ---- what every part records -----------------------------------------------------------
    def informer_change(self, kind: type, resource: str, payload: Any = None) -> None:
        t, w = self.now()
        if kind in (recording.Apply, recording.Delete):
            self.write(lambda: kind(t=t, w=w, resource=resource, object=raw(payload)))
        elif kind is recording.RelistPage:
            items = list(payload)
            self.write(lambda: recording.RelistPage(t=t, w=w, resource=resource,
                                                    items=[raw(item) for item in items]))
        else:
            self.write(lambda: kind(t=t, w=w, resource=resource))

    def expired(self, now: float, pods: list[PodView]) -> None:
        t, w = self.now()
        uids = [pod.uid for pod in pods]
        self.write(lambda: recording.Expire(t=t, w=w, now=now, uids=uids))

    def nrt_resync(self, nodes: list[str]) -> None:
        t, w = self.now()
        self.write(lambda: recording.NRTResync(t=t, w=w, nodes=list(nodes)))

    async def permit_wait(self, decided: asyncio.Future[str], timeout: float, uid: str) -> str:
        """Permit's wait (`permit.wait_decided`), with the timeout recorded when it fires
        before the group decided: the timer's own callback writes it, so holds whose deadlines
        fall in one turn of the loop are recorded together, before any of them acts."""
        loop = asyncio.get_running_loop()
        fired: asyncio.Future[None] = loop.create_future()

        def on_timeout() -> None:
            if decided.done():
                return
            t, w = self.now()
            self.write(lambda: recording.PermitTimeout(t=t, w=w, uid=uid))
            fired.set_result(None)

        timer = loop.call_later(timeout, on_timeout)
        try:
            await asyncio.wait((asyncio.shield(decided), fired),
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            timer.cancel()
        if fired.done():
            raise TimeoutError
        return decided.result()

    def held_rejected(self, reason: str, *, stop: bool) -> None:
        """Every bind held at Permit is about to be answered with `reason` (`stop`: and no bind
        held after): written before the holds act, as their timeouts are."""
        t, w = self.now()
        self.write(lambda: recording.RejectHeld(t=t, w=w, reason=reason, stop=stop))

    def metrics(self, snapshot: WatcherMetrics | None) -> None:
        t, w = self.now()
        self.write(lambda: recording.Metrics(t=t, w=w, snapshot=snapshot))


class RecordingSink:
    """An informer's sink that records each change as it is applied, then applies it."""

    def __init__(self, inner: Any, resource: str, recorder: Recorder) -> None:
        self.inner = inner
        self.resource = resource
        self.recorder = recorder

    def apply(self, obj: Any) -> None:
        self.recorder.informer_change(recording.Apply, self.resource, obj)
        self.inner.apply(obj)

    def delete(self, obj: Any) -> None:
        self.recorder.informer_change(recording.Delete, self.resource, obj)
        self.inner.delete(obj)

    def begin_relist(self) -> None:
        self.recorder.informer_change(recording.RelistBegin, self.resource)
        self.inner.begin_relist()

    def relist_page(self, items: Iterable[Any]) -> None:
        items = list(items)
        self.recorder.informer_change(recording.RelistPage, self.resource, items)
        self.inner.relist_page(items)

    def end_relist(self) -> None:
        self.recorder.informer_change(recording.RelistEnd, self.resource)
        self.inner.end_relist()


class RecordingBinder:
    """The binder behind the bind verb, with each answer recorded (`recording.Bind`)."""

    def __init__(self, inner: Binder, recorder: Recorder) -> None:
        self.inner = inner
        self.recorder = recorder
        self._reads: dict[str, k8s.Pod] = {}
        if isinstance(inner, ApiBinder):
            inner.on_read = self._read

    @property
    def in_flight(self) -> int:
        return getattr(self.inner, "in_flight", 0)

    def _read(self, pod: k8s.Pod) -> None:
        self._reads[pod.metadata.uid] = pod

    async def bind(self, namespace: str, name: str, uid: str, node: str, *,
                   deadline: float | None = None) -> None:
        try:
            await self.inner.bind(namespace, name, uid, node, deadline=deadline)
        except BindError as exc:
            self._reads.pop(uid, None)
            self._record(namespace, name, uid, node, exc.outcome, str(exc), None)
            raise
        except BaseException:
            self._reads.pop(uid, None)
            raise
        self._record(namespace, name, uid, node, "bound", None, self._reads.pop(uid, None))

    def _record(self, namespace: str, name: str, uid: str, node: str, outcome: str,
                error: str | None, pod: k8s.Pod | None) -> None:
        t, w = self.recorder.now()
        self.recorder.write(lambda: recording.Bind(
            t=t, w=w, namespace=namespace, name=name, uid=uid, node=node, outcome=outcome,
            error=error, pod=raw(pod) if pod is not None else recording.NULL))


def record_informers(live: Any, recorder: Recorder) -> None:
    """Record what `live`'s informers apply and which assumptions expire (a `LiveState`)."""
    for name, informer in live.informers.items():
        informer.sink = RecordingSink(informer.sink, name, recorder)
    live.on_expired = recorder.expired


def record_refresher(refresher: Any, recorder: Recorder) -> None:
    """Record every node load snapshot a `LoadMetricsRefresher` hands to the state."""
    apply = refresher.apply_snapshot

    def recorded(snapshot: WatcherMetrics | None) -> None:
        recorder.metrics(snapshot)
        apply(snapshot)

    refresher.apply_snapshot = recorded


def record_snapshot(path: Path, recorder: Recorder) -> int:
    """Record a `--snapshot` file's objects as `load` entries, in load order; how many."""
    count = 0
    t, w = recorder.now()
    for kind, typed in typed_objects(path):
        recorder.write_now(recording.Load(t=t, w=w, kind=kind, object=raw(typed)))
        count += 1
    return count
