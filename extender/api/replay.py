"""Replaying a recording (`serve --record`) through the real HTTP app, reply by reply.

`replay(recording)` builds a `Runtime` like the recorded one but with no API server: the
policy and serve flags of the header, an empty `ClusterState` (or the snapshot's objects, from
the `load` entries), fed by the recorded state changes through the same code the informers and
the snapshot load use (`informer.sink_for`/`apply_change`, `snapshot.apply_object`). It then
goes through the entries in order: a state change is applied, a request is sent to the app
(`httpx.AsyncClient` over `ASGITransport`) and its reply compared with the recorded one,
byte for byte, status included.

- **Time.** The state, the routes and Coscheduling's Permit read a `ReplayClock` set to each
  entry's recorded time (`t`, `w`) before it is replayed; a held bind's Permit wait ends when
  the replay's time passes its deadline (`ReplayClock.wait`).
- **Binds.** A bind runs as a task: Coscheduling's Permit may hold it until later binds come.
  The binder behind Permit is `ReplayBinder`: it answers when the replay reaches the
  recorded binder answer (`bind` entry), where the live binder answered; with a recorded API
  server's answer (live mode: its error, or success and the pod it read) or the offline
  binder's own (snapshot mode), and assumes the pod as the live binder did.
- **Asked again.** An exchange with two `in` entries (a preempt whose handler caught nodes up
  with the API server and was called again, `api.catchup`) is sent again at the second: its
  reply is the one compared.
- **Released.** Binds still held when serve stopped, or when the replica stopped leading,
  are answered where the recording says their holds were rejected (`reject-held`).
- **Not replayed.** A reply given before the body was read (busy, a body limit) cannot be
  asked again: listed in `skipped`. Not-ready replies are replayed with the readiness the
  request saw.
- **Unreadable.** A header or entry the replay cannot rebuild or apply (an invalid policy,
  an object that does not decode) stops that recording's replay with a `RecordingError`
  naming the file and line.

Nothing is normalised: every reply must be byte-identical (see docs/operations.md,
"Recording").
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import msgspec

from extender.api.app import create_app
from extender.api.offload import Offloader
from extender.api.runtime import Runtime, configure_gang_and_quota
from extender.engine import registry
from extender.engine.cluster import ClusterState
from extender.engine.plugins.node_resource_topology.store import TopologyStore
from extender.engine.plugins.trimaran.store import TrimaranStore
from extender.engine.policy import BUILTIN_POLICY, PolicyError, parse_policy, policy_document
from extender.engine.profile import build_profile
from extender.model import k8s
from extender.model.pod import PodView
from extender.state import recording
from extender.state.binder import BindError, SnapshotBinder, assume
from extender.state.gate import gate_for
from extender.state.informer import apply_change, sink_for, spec_named
from extender.state.nrtresync import enable_cache
from extender.state.permit import PermitBinder
from extender.state.snapshot import apply_object

#: Loop turns a replay waits for its bind tasks to settle before calling it stalled.
_SETTLE_TURNS = 100_000
_BASE_URL = "http://replay"


class ReplayError(RuntimeError):
    """The replay itself could not go on (a stalled task, an entry it cannot apply); reported
    as a `recording.RecordingError` naming the entry's line."""


class _Quiet:
    """Which bind tasks wait on the replay (a recorded answer, the replay's clock), so the
    replay goes on only when every task has done what it can."""

    def __init__(self) -> None:
        self.waiting: dict[asyncio.Task[Any], tuple[asyncio.Future[Any], ...]] = {}
        self.tasks: list[asyncio.Task[Any]] = []

    async def wait(self, *futures: asyncio.Future[Any]) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.waiting[task] = futures
        try:
            await asyncio.wait(futures, return_when=asyncio.FIRST_COMPLETED)
        finally:
            del self.waiting[task]

    def _busy(self, task: asyncio.Task[Any]) -> bool:
        if task.done():
            return False
        futures = self.waiting.get(task)
        return futures is None or any(f.done() for f in futures)

    async def settle(self) -> None:
        """Let every bind task run until it finishes or waits on the replay again."""
        for _ in range(_SETTLE_TURNS):
            self.tasks = [t for t in self.tasks if not t.done() or t in self.waiting]
            if not any(self._busy(t) for t in self.tasks):
                return
            await asyncio.sleep(0)
        raise ReplayError("bind tasks did not settle (waiting on something the replay "
                          "does not drive)")


class ReplayClock:
    """The recorded time: `monotonic` (the state's clock) and `wall` (Unix seconds), set by
    the replay; `wait` is Permit's wait (`PermitBinder(wait=...)`), which ends in a timeout
    only where the recording says a hold's timer fired (`recording.PermitTimeout`)."""

    def __init__(self, t: float, w: float, quiet: _Quiet) -> None:
        self.t, self.w = t, w
        self._quiet = quiet
        self._timeouts: dict[str, asyncio.Future[None]] = {}

    def monotonic(self) -> float:
        return self.t

    def wall(self) -> float:
        return self.w

    def _timer(self, uid: str) -> asyncio.Future[None]:
        timer = self._timeouts.get(uid)
        if timer is None or (timer.done() and timer.cancelled()):
            timer = self._timeouts[uid] = asyncio.get_running_loop().create_future()
        return timer

    async def wait(self, decided: asyncio.Future[str], timeout: float, uid: str) -> str:
        timer = self._timer(uid)
        try:
            await self._quiet.wait(decided, timer)
        finally:
            self._timeouts.pop(uid, None)
        # As live: a timer that fired wins over a decision that came in the same turn.
        if timer.done():
            raise TimeoutError
        return decided.result()

    def time_out(self, uid: str) -> None:
        """The recording's `permit-timeout` for `uid`: its hold's timer fired."""
        timer = self._timer(uid)
        if not timer.done():
            timer.set_result(None)

    def advance(self, t: float, w: float) -> None:
        self.t, self.w = max(self.t, t), max(self.w, w)


class ReplayBinder:
    """The binder behind Permit in a replay: each bind answers when the replay reaches its
    recorded answer (`release`), in the order the binds of that pod and node came."""

    def __init__(self, state: ClusterState, assume_ttl: float, quiet: _Quiet, *,
                 api: bool) -> None:
        self.state = state
        self.assume_ttl = assume_ttl
        self.api = api
        self.offline = SnapshotBinder(state, assume_ttl)
        self._quiet = quiet
        self._answers: dict[tuple[str, str], list[asyncio.Future[recording.Bind]]] = \
            defaultdict(list)
        self._claimed: dict[tuple[str, str], int] = defaultdict(int)
        self._released: dict[tuple[str, str], int] = defaultdict(int)

    def _answer(self, key: tuple[str, str], index: int) -> asyncio.Future[recording.Bind]:
        answers = self._answers[key]
        while len(answers) <= index:
            answers.append(asyncio.get_running_loop().create_future())
        return answers[index]

    def release(self, entry: recording.Bind) -> None:
        key = (entry.uid, entry.node)
        self._answer(key, self._released[key]).set_result(entry)
        self._released[key] += 1

    async def bind(self, namespace: str, name: str, uid: str, node: str, *,
                   deadline: float | None = None) -> None:
        key = (uid, node)
        answer = self._answer(key, self._claimed[key])
        self._claimed[key] += 1
        await self._quiet.wait(answer)
        entry = answer.result()
        if not self.api:
            await self.offline.bind(namespace, name, uid, node)
            return
        if entry.error is not None:
            raise BindError(entry.error, entry.outcome)
        view = self.state.pending_pod(uid)
        read = entry.read_pod()
        if view is None and read is not None:
            view = PodView.from_k8s(read)
        assume(self.state, view, uid, node, self.assume_ttl)


@dataclass
class Mismatch:
    """A reply that differs from the recorded one, or a state change the replay could not
    reproduce."""

    id: int | None
    what: str

    def __str__(self) -> str:
        return f"exchange {self.id}: {self.what}" if self.id is not None else self.what


@dataclass
class ReplayReport:
    path: Path
    compared: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)
    #: Exchanges that could not be asked again, and why.
    skipped: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def summary(self) -> str:
        head = (f"{self.path}: {self.compared} replies compared, {len(self.mismatches)} "
                f"mismatch(es), {len(self.skipped)} skipped")
        return "\n".join([head, *(f"  {m}" for m in self.mismatches),
                          *(f"  skipped: {s}" for s in self.skipped)])


def build_runtime(header: recording.Header, clock: ReplayClock,
                  quiet: _Quiet) -> tuple[Runtime, ReplayBinder]:
    """A runtime like the recorded one, on the replay's clock and binder, with no server."""
    if header.policy is None:
        policy = parse_policy(BUILTIN_POLICY, header.policy_source)
    else:
        policy = parse_policy(policy_document(header.policy.encode(), header.policy_source),
                              header.policy_source)
    profile = build_profile(policy)
    state = ClusterState(clock=clock.monotonic, wall_clock=clock.wall)
    state.store(TrimaranStore).since = header.assignments_since
    if header.mode == "live":  # the overreserve cache's pod lister, as serve turns it on
        enable_cache(profile, state)
    flags = header.flags
    binder = ReplayBinder(state, flags.assume_ttl, quiet, api=header.mode == "live")
    runtime = Runtime(profile, state, binder, wall_clock=clock.wall,
                      source=f"replay of {header.source}")
    if flags.max_body_bytes:
        runtime.max_body = flags.max_body_bytes
    if flags.max_candidates:
        runtime.max_candidates = flags.max_candidates
    if flags.offload_bytes:
        runtime.offload = Offloader(flags.offload_bytes)
    runtime.reply_reuse = flags.reply_cache
    configure_gang_and_quota(runtime, bind_deadline=flags.bind_deadline,
                             scheduler_http_timeout=flags.scheduler_http_timeout,
                             wait=clock.wait)
    return runtime, binder


class _Replay:
    def __init__(self, rec: recording.Recording) -> None:
        self.rec = rec
        self.report = ReplayReport(rec.path)
        self.quiet = _Quiet()
        header = rec.header
        self.clock = ReplayClock(header.t, header.w, self.quiet)
        try:
            self.runtime, self.binder = build_runtime(header, self.clock, self.quiet)
        except PolicyError as exc:
            raise recording.RecordingError(
                f"{rec.path}:1: the header's policy ({header.policy_source}) is invalid: "
                f"{_one_line('; '.join(exc.problems))}") from None
        except ValueError as exc:
            raise recording.RecordingError(
                f"{rec.path}:1: cannot rebuild the recorded extender: "
                f"{_one_line(str(exc))}") from None
        self.not_ready: str | None = None
        self.runtime.readiness = self._readiness
        self.state = self.runtime.state
        self.gate = gate_for(self.state)
        self.sinks: dict[str, Any] = {}
        self.replies: dict[int, asyncio.Future[httpx.Response]] = {}
        self.requests: dict[int, recording.In] = {}

    def _readiness(self) -> tuple[bool, str]:
        return (True, "ok") if self.not_ready is None else (False, self.not_ready)

    def _mismatch(self, id: int | None, what: str) -> None:
        self.report.mismatches.append(Mismatch(id, what))

    async def run(self) -> ReplayReport:
        app = create_app(self.runtime)
        transport = httpx.ASGITransport(app=app)
        try:
            async with httpx.AsyncClient(transport=transport, base_url=_BASE_URL,
                                         timeout=None) as self.client:
                await self._entries()
                for id, pending in self.replies.items():
                    await self._unanswered(id, pending)
        finally:
            self.runtime.offload.close()
        return self.report

    async def _entries(self) -> None:
        previous: recording.Entry | None = None
        lines: Iterable[int | None] = self.rec.lines or [None] * len(self.rec.entries)
        for entry, line in zip(self.rec.entries, lines, strict=True):
            try:
                self.clock.advance(entry.t, entry.w)
                # Timeouts recorded one after another fired in one turn of the loop:
                # every one of them before any of their holds acts.
                if not (isinstance(entry, recording.PermitTimeout)
                        and isinstance(previous, recording.PermitTimeout)):
                    await self.quiet.settle()
                await self._entry(entry)
            except (ValueError, ReplayError) as exc:
                # A corrupt entry (an object that does not decode, an unknown kind): the
                # recording's fault, reported at its line rather than as a traceback.
                where = f"{self.rec.path}:{line}" if line is not None else str(self.rec.path)
                raise recording.RecordingError(
                    f"{where}: cannot replay this {recording.record_name(entry)} entry: "
                    f"{_one_line(str(exc))}") from None
            previous = entry
        try:
            await self.quiet.settle()
        except ReplayError as exc:
            raise recording.RecordingError(f"{self.rec.path}: {exc}") from None

    async def _unanswered(self, id: int, pending: asyncio.Future[httpx.Response]) -> None:
        """A request the recording ends before answering (the process was killed): the
        replay has nothing to compare its reply with, whether it has one or still waits."""
        still = "" if pending.done() else " (still held or waiting in the replay too)"
        pending.cancel()
        await asyncio.gather(pending, return_exceptions=True)
        self.report.skipped.append(f"exchange {id} ({self._describe(id)}): the recording "
                                   f"ends before its reply{still}")

    async def _entry(self, entry: recording.Entry) -> None:
        if isinstance(entry, recording.In):
            await self._request(entry)
        elif isinstance(entry, recording.Out):
            await self._reply(entry)
        elif isinstance(entry, recording.INFORMER_CHANGES):
            self._informer(entry)
        elif isinstance(entry, recording.Bind):
            entry.read_pod()  # unreadable, it would fail inside the bind, as a 500 reply
            self.binder.release(entry)
        elif isinstance(entry, recording.Load):
            kind = registry.KINDS.get(entry.kind)
            if kind is None:
                raise ReplayError(f"unknown kind {entry.kind!r} (known: "
                                  f"{', '.join(registry.KINDS)})")
            apply_object(self.state, entry.kind, k8s.decoder(kind).decode(entry.object))
        elif isinstance(entry, recording.Expire):
            self._expire(entry)
        elif isinstance(entry, recording.Metrics):
            self.gate.call(self.state.store(TrimaranStore).set_metrics, entry.snapshot)
        elif isinstance(entry, recording.PermitTimeout):
            self.clock.time_out(entry.uid)
        elif isinstance(entry, recording.NRTResync):
            self.gate.call(self._nrt_resync, entry)
        elif isinstance(entry, recording.RejectHeld):
            self._reject_held(entry)

    def _reject_held(self, entry: recording.RejectHeld) -> None:
        binder = self.runtime.binder
        if not isinstance(binder, PermitBinder):
            raise ReplayError("held binds rejected, but the header's policy holds none "
                              "(no Coscheduling)")
        if entry.stop:
            binder.stop_holding(entry.reason)
        else:
            binder.reject_all(entry.reason)

    def _informer(self, entry: Any) -> None:
        spec = spec_named(entry.resource)
        if spec is None:
            raise ReplayError(f"unknown resource {entry.resource!r}")
        sink = self.sinks.get(entry.resource)
        if sink is None:
            sink = self.sinks[entry.resource] = sink_for(spec, self.state)
        decoder = k8s.decoder(spec.struct)
        payload: Any = None
        if isinstance(entry, recording.Apply | recording.Delete):
            payload = decoder.decode(entry.object)
        elif isinstance(entry, recording.RelistPage):
            payload = [decoder.decode(item) for item in entry.items]
        self.gate.call(apply_change, sink, _CHANGE[type(entry)], payload)

    def _nrt_resync(self, entry: recording.NRTResync) -> None:
        flushed = self.state.store(TopologyStore).resync()
        if flushed != entry.nodes:
            self._mismatch(None, f"NodeResourceTopology cache resync at t={entry.t}: took "
                                 f"{flushed}, the recording took {entry.nodes}")

    def _expire(self, entry: recording.Expire) -> None:
        if self.gate.busy:
            raise ReplayError("an expiry came while a large request held the state")
        expired = sorted(pod.uid for pod in self.state.expire_assumptions(entry.now))
        if expired != sorted(entry.uids):
            self._mismatch(None, f"assumption expiry at t={entry.now}: expired {expired}, "
                                 f"the recording expired {sorted(entry.uids)}")

    async def _request(self, entry: recording.In) -> None:
        # A second `in` of one exchange: the handler was called again after a catch-up
        # (`api.catchup.Behind`), the state changes it made recorded in between; the
        # first call's reply was never sent, so the second one's is what the `out` holds.
        self.replies.pop(entry.id, None)
        self.requests[entry.id] = entry
        self.not_ready = entry.not_ready
        post = self.client.post(entry.path, content=recording.body_bytes(entry),
                                headers={"Content-Type": "application/json"})
        task = asyncio.ensure_future(post)
        self.replies[entry.id] = task
        if entry.verb == "bind":
            # Run until it waits (at Permit, or for the binder's answer), on this entry's
            # time: as the live bind did up to its first await.
            self.quiet.tasks.append(task)
            await self.quiet.settle()
        else:
            await asyncio.wait([task])

    async def _reply(self, entry: recording.Out) -> None:
        if entry.unread:
            await self._unread(entry)
            return
        pending = self.replies.pop(entry.id, None)
        if pending is None:
            self.report.skipped.append(f"exchange {entry.id}: a reply without its request")
            return
        if not pending.done():
            pending.cancel()
            self._mismatch(entry.id, f"{self._describe(entry.id)}: no reply where the "
                                     "recording has one (still held or waiting)")
            return
        failure = pending.exception()
        if failure is not None:
            self._mismatch(entry.id, f"{self._describe(entry.id)}: the app raised "
                                     f"{type(failure).__name__}: {failure}")
            return
        self._compare(entry, pending.result())

    async def _unread(self, entry: recording.Out) -> None:
        if entry.not_ready is None:
            self.report.skipped.append(
                f"exchange {entry.id} ({entry.verb}): answered {entry.status} before its body "
                f"was read: {recording.body_bytes(entry)[:120].decode(errors='replace')}")
            return
        self.not_ready = entry.not_ready
        response = await self.client.post(entry.path, content=b"")
        self._compare(entry, response)

    def _compare(self, entry: recording.Out, response: httpx.Response) -> None:
        self.report.compared += 1
        expected = recording.body_bytes(entry)
        if response.status_code != entry.status:
            self._mismatch(entry.id, f"{self._describe(entry.id)}: status "
                                     f"{response.status_code}, recorded {entry.status}; "
                                     f"reply {response.content[:200]!r}")
        elif response.content != expected:
            self._mismatch(entry.id, f"{self._describe(entry.id)}: "
                                     f"{difference(expected, response.content)}")

    def _describe(self, id: int) -> str:
        entry = self.requests.get(id)
        if entry is None:
            return "a request"
        return f"POST {entry.path}{describe_body(entry.verb, recording.body_bytes(entry))}"


_CHANGE: dict[type, str] = {recording.Apply: "apply", recording.Delete: "delete",
                            recording.RelistBegin: "relist-begin",
                            recording.RelistPage: "relist-page",
                            recording.RelistEnd: "relist-end"}


class _PodName(msgspec.Struct):
    metadata: k8s.ObjectMeta = msgspec.field(default_factory=k8s.ObjectMeta)


class _Named(msgspec.Struct):
    Pod: _PodName | None = None
    PodName: str = ""
    PodNamespace: str = ""
    Node: str = ""


def describe_body(verb: str, body: bytes) -> str:
    """`, pod ns/name` (and the node of a bind) for a mismatch message; "" if unreadable."""
    try:
        named = msgspec.json.decode(body, type=_Named)
    except msgspec.DecodeError:
        return ""
    if named.Pod is not None:
        meta = named.Pod.metadata
        return f", pod {meta.namespace}/{meta.name}"
    if named.PodName:
        return f", pod {named.PodNamespace}/{named.PodName} to {named.Node}"
    return ""


def difference(expected: bytes, got: bytes) -> str:
    """Where two replies part, with a little context."""
    at = next((i for i, (a, b) in enumerate(zip(expected, got, strict=False)) if a != b),
              min(len(expected), len(got)))
    start = max(0, at - 40)
    return (f"reply differs at byte {at} (recorded {len(expected)} bytes, replayed "
            f"{len(got)}): recorded …{expected[start:at + 120]!r}…, replayed "
            f"…{got[start:at + 120]!r}…")


async def replay(rec: recording.Recording) -> ReplayReport:
    """Replay one recording through the HTTP app (on the running loop)."""
    return await _Replay(rec).run()


def replay_file(path: str | Path) -> ReplayReport:
    """Read and replay one recording file (runs its own event loop)."""
    rec = recording.read(path)
    report = asyncio.run(replay(rec))
    if rec.truncated:
        report.skipped.append("the last line was cut short (the process was killed while "
                              "writing it)")
    return report


def _one_line(text: str) -> str:
    return " ".join(text.split())
