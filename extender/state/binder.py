"""Binders: what `POST /bind` does. `ApiBinder` binds through the API server; `SnapshotBinder`
only updates the offline state.

Either way, a successful bind assumes the pod on its node in `ClusterState` at once, so the
next filter sees its resources consumed before the watch event arrives.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Protocol

from extender.engine.cluster import ClusterState
from extender.engine.plugins.capacity_scheduling.store import QuotaStore
from extender.engine.plugins.node_resource_topology.store import TopologyStore
from extender.kube.client import ApiError, KubeClient, KubeError, TransportError
from extender.model import k8s
from extender.model.pod import PodView
from extender.state.gate import gate_for

log = logging.getLogger(__name__)

#: The shortest window worth starting a retry in: less cannot carry an API round trip.
_MIN_ATTEMPT = 0.05

#: Time kept back from the retries to read the pod once more when they all failed (at most a
#: quarter of the deadline): a binding applied by the server whose reply was lost is success.
_READBACK = 0.5
#: Reads of the pod at most in that time (a failed one is answered at once; a hung one takes
#: half the time left).
_READBACK_TRIES = 4

#: kube-apiserver's conflict for a pod bound already (after the UID precondition passed).
_ASSIGNED = re.compile(r'is already assigned to node "([^"]*)"')

#: Binding API calls in flight at once (the client's pool has 64 connections, a dozen of
#: which the watches keep).
DEFAULT_CONCURRENCY = 32

#: Failures that a read of the pod already decided: no point reading it again.
_DEFINITE = frozenset({"bound_elsewhere", "uid_mismatch", "not_found"})

#: Outcome labels for `extender_bind_total{outcome}`. `confirmed`: every attempt failed in
#: transit, but the pod read back afterwards is bound to the node (a lost reply).
OUTCOMES = ("bound", "already_bound", "confirmed", "bound_elsewhere", "uid_mismatch",
            "not_found", "rejected", "timeout", "node_not_found")


class BindError(Exception):
    """A bind that did not happen (or cannot be confirmed); the message goes to `Error`."""

    def __init__(self, message: str, outcome: str = "rejected") -> None:
        super().__init__(message)
        self.outcome = outcome


class Binder(Protocol):
    async def bind(self, namespace: str, name: str, uid: str, node: str, *,
                   deadline: float | None = None) -> None:
        """Bind the pod to the node, or raise `BindError`; `deadline`: seconds this bind may
        take (None: the binder's own; Permit passes what a long hold left of the call)."""
        ...


def assume(state: ClusterState, view: PodView | None, uid: str, node: str, ttl: float) -> None:
    """Count the pod on the node now, or, while a large request reads the state in the worker
    thread, as soon as it is done (`StateGate`). What every binder does after a bind (a
    recording's replay too)."""
    gate_for(state).call(_assume_now, state, view, uid, node, ttl)


def reserve(state: ClusterState, uid: str, node: str, *, discarding: bool = False) -> None:
    """What kube-scheduler's Reserve does before Permit and the bind, for the plugins that
    reserve there: NodeResourceTopologyMatch's overreserve cache takes the pending pod from
    every NUMA cell of the node now, so a filter that comes while this bind is held at Permit
    or under way counts it (kube-scheduler starts the next pod's cycle as soon as this one is
    reserved); with `discarding` (its `discardReservedNodes`), the node is discarded until the
    bind ends. `bind_ended` when it does."""
    gate_for(state).call(_reserve_now, state, uid, node, discarding)


def _reserve_now(state: ClusterState, uid: str, node: str, discarding: bool) -> None:
    store = state.store(TopologyStore)
    view = state.pending_pod(uid)
    if view is not None:
        store.reserve(view, node)
    if discarding:
        store.bind_started(uid, node)


def bind_ended(state: ClusterState, namespace: str, name: str, uid: str, node: str, *,
               unreserve: bool) -> None:
    """The end of a bind `reserve` began: upstream's PostBind, or with `unreserve` (the bind
    failed) its Unreserve: the pod no longer counts on the node (NodeResourceTopologyMatch)
    nor in its namespace's quota (CapacityScheduling's reservation from the filter verb)."""
    gate_for(state).call(_bind_ended_now, state, namespace, name, uid, node, unreserve)


def _bind_ended_now(state: ClusterState, namespace: str, name: str, uid: str, node: str,
                    unreserve: bool) -> None:
    store = state.store(TopologyStore)
    if unreserve:
        store.unreserve(f"{namespace}/{name}", node)
        state.store(QuotaStore).release(uid)
    store.bind_ended(uid, node)


def _assume_now(state: ClusterState, view: PodView | None, uid: str, node: str, ttl: float) -> None:
    current = state.pods.get(uid)
    if current is not None and current.node_name:
        # The watch (or an earlier bind) already placed it; assuming again would put an
        # expiry on a confirmed pod. The bind was still ours: its NUMA reservation counts until
        # the node's next topology report (the pending view has the containers; the watch's
        # slim one does not).
        if view is not None:
            state.store(TopologyStore).reserve(view, node)
        return
    if view is not None:
        state.assume(view, node, ttl)


class SnapshotBinder:
    """Offline binding (`serve --snapshot`): there is no API server to bind against.

    A known pending pod is assumed on the node; the node must exist in the state. A pod
    already bound to that node is success, to another node an error. A pod the state has
    never seen is still accepted (and logged): offline there is nothing to check it against,
    and refusing would only make kube-scheduler retry forever.
    """

    def __init__(self, state: ClusterState, ttl: float = 30.0, *,
                 on_outcome: Callable[[str], None] | None = None) -> None:
        self.state = state
        self.ttl = ttl
        self.on_outcome = on_outcome
        self.outcomes: Counter[str] = Counter()

    async def bind(self, namespace: str, name: str, uid: str, node: str, *,
                   deadline: float | None = None) -> None:
        try:
            outcome = self._bind(namespace, name, uid, node)
        except BindError as exc:
            self._count(exc.outcome)
            raise
        self._count(outcome)

    def _count(self, outcome: str) -> None:
        self.outcomes[outcome] += 1
        if self.on_outcome is not None:
            self.on_outcome(outcome)

    def _bind(self, namespace: str, name: str, uid: str, node: str) -> str:
        state = self.state
        if node not in state.nodes:
            raise BindError(f'node "{node}" not found', "node_not_found")
        current = state.pods.get(uid)
        if current is not None and current.node_name:
            if current.node_name != node:
                raise BindError(f'pod {namespace}/{name} is already assigned to node "{current.node_name}"',
                                "bound_elsewhere")
            return "already_bound"
        view = state.pending_pod(uid)
        if view is None:
            log.info("bind %s/%s (uid %s) to %s: pod unknown to the snapshot; accepted without "
                     "state change", namespace, name, uid, node)
        assume(state, view, uid, node, self.ttl)
        return "bound"


class ApiBinder:
    """Create `pods/binding` with the pod's UID as precondition.

    - 201 → bound; the pod is assumed on the node (confirmed later by the watch, or dropped
      after `assume_ttl`).
    - 409 → kube-apiserver's message says where the pod is (`already assigned to node "N"`,
      the UID precondition having passed): this node is success (our earlier attempt, or
      kube-scheduler retrying after our reply was lost), another node an error; any other
      conflict (another UID: the pod was recreated) is explained by reading the pod.
    - 404 → error. Other 4xx → error with the server's message.
    - 429, 5xx, connection errors and per-attempt timeouts → retried with exponential backoff
      and jitter until `deadline` (keep it below kube-scheduler's `httpTimeout`, default 5 s),
      less a short reserve. Before any error the pod has not already decided (bound
      elsewhere, recreated, gone) is answered, it is read back within the reserve (two tries),
      and bound to the requested node with the same UID is success (`confirmed`): the server
      may have applied an attempt whose answer went wrong.

    Concurrent binds are safe; a second bind of the same pod while one is in flight waits
    for the first one's result instead of racing it.
    """

    def __init__(
        self,
        client: KubeClient,
        state: ClusterState,
        deadline: float = 4.0,
        assume_ttl: float = 30.0,
        *,
        attempt_timeout: float | None = None,
        backoff_initial: float = 0.05,
        backoff_max: float = 1.0,
        on_retry: Callable[[], None] | None = None,
        on_outcome: Callable[[str], None] | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
    ) -> None:
        self.client = client
        self.state = state
        self.deadline = deadline
        self.assume_ttl = assume_ttl
        # A hung server must not eat the whole deadline: leave room for a second attempt.
        self.attempt_timeout = attempt_timeout or max(0.5, deadline / 2)
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.on_retry = on_retry
        self.on_outcome = on_outcome
        self.retries = 0
        self.outcomes: Counter[str] = Counter()
        self._inflight: dict[tuple[str, str], asyncio.Future[None]] = {}
        #: API calls at once: a gang of thousands released together would otherwise queue
        #: thousands of requests in the HTTP client's pool, whose bookkeeping is quadratic in
        #: them (the event loop stalled for seconds at 2 000); its pool holds the watches too.
        self._slots = asyncio.Semaphore(concurrency)
        #: Told each pod read from the API server to assume a bound pod the state did not
        #: hold as pending (`serve --record` keeps it: a replay has no server to read it from).
        self.on_read: Callable[[k8s.Pod], None] | None = None

    @property
    def in_flight(self) -> int:
        """Binds being performed now (bounded by the concurrent requests)."""
        return len(self._inflight)

    async def bind(self, namespace: str, name: str, uid: str, node: str, *,
                   deadline: float | None = None) -> None:
        key = (uid, node)
        while (running := self._inflight.get(key)) is not None:
            try:
                return await asyncio.shield(running)
            except asyncio.CancelledError:
                if not running.cancelled():
                    raise  # we were cancelled ourselves
                # The first bind was abandoned midway: run our own.
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            await self._bind(namespace, name, uid, node, deadline or self.deadline)
            future.set_result(None)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: nobody else may be waiting
            raise
        finally:
            del self._inflight[key]

    def _outcome(self, outcome: str) -> None:
        self.outcomes[outcome] += 1
        if self.on_outcome is not None:
            self.on_outcome(outcome)

    async def _bind(self, namespace: str, name: str, uid: str, node: str,
                    deadline: float) -> None:
        loop = asyncio.get_running_loop()
        until = loop.time() + deadline
        reserve = min(_READBACK, deadline / 4)
        pod_name = f"{namespace}/{name}"
        read: k8s.Pod | None = None
        try:
            outcome = await self._retrying(
                until - reserve, lambda t: self._attempt(namespace, name, uid, node, t),
                f"bind {pod_name}", deadline)
        except BindError as exc:
            if exc.outcome not in _DEFINITE:
                # The server may have applied an attempt whose answer went wrong (lost, a 5xx
                # after applying, a write that landed late): look once more before saying no.
                read = await self._read_back(namespace, name, until)
            if read is None or read.metadata.uid != uid or read.spec.node_name != node:
                self._outcome(exc.outcome)
                log.info("bind %s to %s failed: %s", pod_name, node, exc)
                raise
            outcome = "confirmed"
            log.info("bind %s to %s: every reply was lost, but the pod is bound to it", pod_name,
                     node)
        self._outcome(outcome)
        await self._assume_bound(namespace, name, uid, node, until, read)

    async def _read_back(self, namespace: str, name: str, until: float) -> k8s.Pod | None:
        """The pod as the server has it now, if it answers before `until`: up to
        `_READBACK_TRIES` reads, each with half the time left (all of it when half is too
        short), so neither a hung read nor a failed one decides while time remains."""
        loop = asyncio.get_running_loop()
        for _ in range(_READBACK_TRIES):
            remaining = until - loop.time()
            if remaining < _MIN_ATTEMPT:
                return None
            timeout = remaining / 2 if remaining / 2 >= _MIN_ATTEMPT else remaining
            try:
                async with self._slots, asyncio.timeout(timeout):
                    return await self._read_pod(namespace, name, timeout)
            except (KubeError, TimeoutError) as exc:
                log.info("bind %s/%s: could not read the pod back: %s", namespace, name,
                         str(exc) or f"no answer within {timeout:.2f}s")
        return None

    async def _retrying(
        self, until: float, attempt: Callable[[float], Awaitable[str]], what: str,
        deadline: float,
    ) -> str:
        """Run `attempt(timeout)` until it returns, retrying transient failures until `until`."""
        loop = asyncio.get_running_loop()
        delay = self.backoff_initial
        last = "no attempt made"
        while True:
            try:
                async with self._slots:  # its wait counts against the deadline, not the attempt
                    remaining = until - loop.time()
                    if remaining <= 0:
                        raise BindError(f"{what}: gave up after {deadline:g}s: {last}",
                                        "timeout")
                    timeout = min(remaining, self.attempt_timeout)
                    async with asyncio.timeout(timeout):
                        return await attempt(timeout)
            except TimeoutError:
                last = f"no answer within {timeout:.1f}s"
            except TransportError as exc:
                last = str(exc)
            except ApiError as exc:
                if exc.code != 429 and exc.code < 500:
                    raise BindError(f"{what}: {exc.message or exc}", "rejected") from None
                last = f"{exc.code} {exc.reason}: {exc.message}".strip()
            left = until - loop.time()
            if left < _MIN_ATTEMPT:
                # No time for a useful retry: report the real failure, not a timeout made up
                # by an attempt that had no time to get an answer.
                raise BindError(f"{what}: gave up after {deadline:g}s: {last}", "timeout")
            # Transient: back off (full jitter), leaving the next attempt at least _MIN_ATTEMPT.
            pause = min(random.uniform(delay / 2, delay), left - _MIN_ATTEMPT)
            delay = min(self.backoff_max, delay * 2)
            self.retries += 1
            if self.on_retry is not None:
                self.on_retry()
            log.debug("%s: retrying in %.2fs after: %s", what, pause, last)
            await asyncio.sleep(pause)

    async def _attempt(self, namespace: str, name: str, uid: str, node: str, timeout: float) -> str:
        try:
            await self.client.create_binding(namespace, name, uid, node, timeout=timeout)
            return "bound"
        except ApiError as exc:
            if exc.code == 404:
                raise BindError(f"pod {namespace}/{name} not found", "not_found") from None
            if exc.code != 409:
                raise
            conflict = exc
        # 409. kube-apiserver checks the UID precondition first, then says where the pod is
        # (BindingREST: `pod NAME is already assigned to node "NODE"`): no read needed.
        if (assigned := _ASSIGNED.search(conflict.message)) is not None:
            if assigned.group(1) == node:
                return "already_bound"
            raise BindError(f'pod {namespace}/{name} is already assigned to node '
                            f'"{assigned.group(1)}"', "bound_elsewhere")
        # Otherwise find out what the pod looks like now.
        pod = await self._read_pod(namespace, name, timeout)
        if pod is None:
            raise BindError(f"pod {namespace}/{name} not found", "not_found")
        actual_uid, actual_node = pod.metadata.uid, pod.spec.node_name
        if actual_uid != uid:
            raise BindError(
                f"pod {namespace}/{name} was recreated: its UID is {actual_uid}, not {uid}",
                "uid_mismatch")
        if actual_node == node:
            return "already_bound"
        if actual_node:
            raise BindError(f'pod {namespace}/{name} is already assigned to node "{actual_node}"',
                            "bound_elsewhere")
        if pod.metadata.deletion_timestamp:
            raise BindError(f"pod {namespace}/{name} is being deleted", "rejected")
        # A conflict we cannot explain (e.g. scheduling gates): report the server's words.
        raise BindError(f"bind {namespace}/{name}: {conflict.message}", "rejected")

    async def _read_pod(self, namespace: str, name: str, timeout: float) -> k8s.Pod | None:
        try:
            return await self.client.get_pod(namespace, name, timeout=timeout)
        except ApiError as exc:
            if exc.code == 404:
                return None
            raise

    async def _assume_bound(self, namespace: str, name: str, uid: str, node: str, until: float,
                            read: k8s.Pod | None = None) -> None:
        view = self.state.pending_pod(uid)
        current = self.state.pods.get(uid)
        if view is None and read is not None:
            view = self._read_view(read)
        if view is None and not (current is not None and current.node_name):
            # Not seen by the informer yet (or evicted from the pending memory): read it.
            remaining = until - asyncio.get_running_loop().time()
            try:
                async with self._slots, asyncio.timeout(max(0.2, remaining)):
                    pod = await self.client.get_pod(namespace, name)
                if pod.metadata.uid == uid:
                    view = self._read_view(pod)
            except (KubeError, TimeoutError) as exc:
                # The bind itself succeeded; the watch event will place the pod.
                log.info("bound %s/%s but could not read it to assume it: %s", namespace, name, exc)
        assume(self.state, view, uid, node, self.assume_ttl)

    def _read_view(self, pod: k8s.Pod) -> PodView:
        if self.on_read is not None:
            self.on_read(pod)
        return PodView.from_k8s(pod)
