"""Coscheduling's Permit in the bind verb: hold a gang's binds until the gang is complete.

kube-scheduler has assumed a pod by the time it calls `/bind`, so while the call is held the
pod's resources stay taken in its cache and later pods are placed around them: the gang
semantics of Permit. A pod of a PodGroup is held until `minMember` pods of the group are held
or bound; then every held bind of the group proceeds (all-or-nothing). When the first held
pod's wait runs out (the group's `scheduleTimeoutSeconds`, else `permitWaitingTimeSeconds`,
capped below kube-scheduler's `httpTimeout`), every held bind of the group answers an error
and none of them is bound; kube-scheduler forgets the pods and retries them.

Holding is an `asyncio` wait: other binds and verbs go on meanwhile. The holds live in this
process: as it shuts down it answers every held bind with an error and holds no more
(`stop_holding`), and a process that dies answers nothing; either way kube-scheduler's call
fails and it retries, so no pod is lost. The replica kube-scheduler calls must be the one
holding (the sidecar layout, or the elected leader).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from extender.engine.cluster import ClusterState
from extender.engine.plugins.coscheduling import (
    NAME,
    UNRESERVE_REJECTION,
    PermitCode,
    PodGroupManager,
)
from extender.engine.waiting import SECOND_NS, timeout_message
from extender.model.pod import PodView
from extender.state.binder import Binder, BindError

log = logging.getLogger(__name__)

#: Most binds held at Permit at once by default: room for gangs of thousands of pods (a held
#: bind is a waiting task and an open connection, a few KB), not for an unbounded flood.
DEFAULT_MAX_HELD = 10_000

#: Seconds kept between the end of a hold and kube-scheduler's `httpTimeout`: the bind itself
#: (bounded by the bind deadline) and this margin must fit after it.
MARGIN = 1.0


def http_timeout_for(permit_wait: float, bind_deadline: float) -> float:
    """The `httpTimeout` kube-scheduler needs so a bind held `permit_wait` seconds, then bound
    within `bind_deadline`, still answers in time (what `render-config` writes)."""
    return permit_wait + bind_deadline + 2 * MARGIN


def hold_limit(http_timeout: float, bind_deadline: float) -> float:
    """The longest a bind may be held so it still answers before `http_timeout`."""
    return max(0.0, http_timeout - bind_deadline - MARGIN)


async def wait_decided(decided: asyncio.Future[str], timeout: float, uid: str) -> str:
    """A held bind's wait (for pod `uid`): the group's decision (`""`: go on; else why it was
    rejected), or `TimeoutError` after `timeout` seconds; `decided` itself is never cancelled."""
    return await asyncio.wait_for(asyncio.shield(decided), timeout)


Wait = Callable[["asyncio.Future[str]", float, str], Awaitable[str]]


@dataclass
class _Held:
    namespace: str
    name: str
    uid: str
    node: str
    decided: asyncio.Future[str] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class PermitBinder:
    """A `Binder` that runs Coscheduling's Permit before binding through `inner`."""

    def __init__(self, inner: Binder, state: ClusterState, manager: PodGroupManager, *,
                 http_timeout: float, bind_deadline: float,
                 clock: Callable[[], float] = time.monotonic, wait: Wait = wait_decided,
                 on_outcome: Callable[[str], None] | None = None,
                 max_held: int = DEFAULT_MAX_HELD) -> None:
        self.inner = inner
        self.state = state
        self.manager = manager
        self.http_timeout = http_timeout
        self.bind_deadline = bind_deadline
        self.limit = hold_limit(http_timeout, bind_deadline)
        #: Most binds held at once (`serve --max-held-binds`); a bind past it is refused.
        self.max_held = max_held
        self.clock = clock
        #: How a held bind waits (a recording's replay waits on its recorded clock instead).
        self.wait = wait
        self.on_outcome = on_outcome
        #: "ns/group" -> uid -> the held bind
        self.held: dict[str, dict[str, _Held]] = {}
        #: Why no bind is held any more (`stop_holding`); None while binds may be held.
        self.refusing: str | None = None

    @property
    def in_flight(self) -> int:
        return getattr(self.inner, "in_flight", 0)

    def hold_time(self, pod: PodView) -> float:
        """How long a bind of `pod` may be held here: its group's wait (0: no group)."""
        if not pod.pod_group:
            return 0.0
        _, group = self.manager.group_of(pod, self.state)
        return 0.0 if group is None else min(self.manager.timeout(group), self.limit)

    def reject_all(self, reason: str) -> int:
        """Answer every held bind with `reason` (leadership lost: kube-scheduler retries them
        against the new leader); how many there were."""
        count = 0
        for waiting in list(self.held.values()):
            for held in list(waiting.values()):
                if not held.decided.done():
                    held.decided.set_result(reason)
                    count += 1
        return count

    def stop_holding(self, reason: str) -> int:
        """Answer every held bind with `reason` and refuse to hold another (the process is
        shutting down: a bind it held would keep its connection, and the shutdown, open until
        the group's wait ran out); how many were held."""
        self.refusing = reason
        return self.reject_all(reason)

    def held_count(self) -> int:
        return sum(len(group) for group in self.held.values())

    def _time_left(self, started: float) -> float:
        """What a bind released after holding since `started` may still take: the call's
        budget (kube-scheduler's httpTimeout, less a margin) minus the hold, and never less
        than the bind deadline (what the hold limit keeps back). A large gang released at
        once gets the time its many API binds need."""
        return max(self.bind_deadline, self.http_timeout - MARGIN - (self.clock() - started))

    async def bind(self, namespace: str, name: str, uid: str, node: str, *,
                   deadline: float | None = None) -> None:
        started = self.clock()
        pod = self.state.pending_pod(uid) or self.state.pods.get(uid)
        if pod is None or not pod.pod_group:
            # A pod this state has never seen has no group we could know of: bind it.
            await self.inner.bind(namespace, name, uid, node, deadline=deadline)
            return
        full_name, group = self.manager.group_of(pod, self.state)
        if group is None:
            self._count("rejected")
            raise BindError(f"pod {namespace}/{name} rejected at Permit by {NAME}: "
                            f"PodGroup not found", "permit_rejected")
        waiting = self.held.setdefault(full_name, {})
        others = [h for u, h in waiting.items() if u != uid]
        assigned = self.manager.assigned(group, self.state) + len(others)
        code = self.manager.permit(pod, self.state, assigned)
        if code is PermitCode.SUCCESS:
            for other in others:
                if not other.decided.done():
                    other.decided.set_result("")
            self.held.pop(full_name, None)
            await self._bind_or_unreserve(full_name, namespace, name, uid, node,
                                          self._time_left(started))
            return
        if self.refusing is not None:
            self._count("permit_rejected")
            raise BindError(f"pod {namespace}/{name} rejected at Permit: {self.refusing}",
                            "permit_rejected")
        if self.held_count() >= self.max_held:
            self._count("held_limit")
            raise BindError(f"pod {namespace}/{name}: {self.held_count()} binds are held at "
                            "Permit already (serve --max-held-binds); kube-scheduler will "
                            "retry it", "permit_rejected")
        wait = min(self.manager.timeout(group), self.limit)
        entry = waiting[uid] = _Held(namespace, name, uid, node)
        self._count("held")
        try:
            rejection = await self.wait(entry.decided, wait, uid)
        except TimeoutError:
            rejection = timeout_message(round(wait * SECOND_NS), NAME)
            # The group failed as a whole: kube-scheduler never runs Coscheduling's PostFilter
            # for it here, so its podGroupBackoffSeconds starts now.
            self.manager.back_off(full_name, group, self.state, self.clock())
            self._unreserve(full_name, uid)
        finally:
            current = self.held.get(full_name)
            if current is not None and current.get(uid) is entry:
                del current[uid]
                if not current:
                    del self.held[full_name]
        if rejection:
            self._count("permit_rejected")
            raise BindError(f"pod {namespace}/{name} rejected at Permit: {rejection}",
                            "permit_rejected")
        await self._bind_or_unreserve(full_name, namespace, name, uid, node,
                                      self._time_left(started))

    async def _bind_or_unreserve(self, full_name: str, namespace: str, name: str, uid: str,
                                 node: str, deadline: float) -> None:
        try:
            await self.inner.bind(namespace, name, uid, node, deadline=deadline)
        except BindError:
            self._unreserve(full_name, uid)
            raise

    def _unreserve(self, full_name: str, uid: str) -> None:
        """Unreserve: reject every other held bind of the group."""
        for other_uid, other in list(self.held.get(full_name, {}).items()):
            if other_uid != uid and not other.decided.done():
                other.decided.set_result(f"{UNRESERVE_REJECTION} at plugin {NAME}")
        self.manager.reject_group(full_name, self.clock())

    def _count(self, outcome: str) -> None:
        if self.on_outcome is not None:
            self.on_outcome(outcome)
