"""What the routes need at run time: the engine profile, the cluster state, the binder."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from extender.api.offload import Offloader
from extender.api.rowreply import REPLIES_PER_LIST
from extender.engine.cluster import ClusterState
from extender.engine.plugins.coscheduling import gang_plugin
from extender.engine.profile import Profile
from extender.model.pod import PodView
from extender.state.binder import Binder
from extender.state.events import EventRecorder
from extender.state.gate import StateGate, gate_for
from extender.state.permit import (
    DEFAULT_MAX_HELD,
    MARGIN,
    PermitBinder,
    Wait,
    http_timeout_for,
    wait_decided,
)
from extender.state.recorder import Recorder

if TYPE_CHECKING:
    from extender.state.informer import LiveState

#: Largest body by default: NodeNames requests are small (a 15 000-node preempt with its
#: pod is about 2.5 MB; filter and prioritize about 0.5 MB).
DEFAULT_MAX_BODY = 4 * 1024 * 1024
#: Largest body when kube-scheduler sends whole Node objects (`nodeCacheCapable: false`,
#: `serve --nodes-form`): 5 000 nodes of 11.5 KB are 57.5 MB.
DEFAULT_MAX_BODY_NODES_FORM = 64 * 1024 * 1024
#: Most candidate nodes one filter, prioritize or preempt request may carry.
DEFAULT_MAX_CANDIDATES = 15_000
#: Seconds kube-scheduler may take from a pod's filter to the start of its bind: the prioritize
#: call (its default httpTimeout) and the rest of the scheduling cycle.
CYCLE_TO_BIND = 5.0
#: Seconds a request body may take to arrive once its reading starts.
DEFAULT_BODY_TIMEOUT = 10.0


def always_ready() -> tuple[bool, str]:
    return True, "ok"


@dataclass
class Runtime:
    profile: Profile
    state: ClusterState
    binder: Binder
    readiness: Callable[[], tuple[bool, str]] = always_ready
    max_body: int = DEFAULT_MAX_BODY
    max_candidates: int = DEFAULT_MAX_CANDIDATES
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    offload: Offloader = field(default_factory=Offloader)
    wall_clock: Callable[[], float] = time.time
    startup: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    shutdown: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    source: str = "snapshot"
    #: Seconds a pod that passed CapacityScheduling's filter counts against its quota before
    #: its bind, the wait of a gang member at Permit not included (0: the policy has no
    #: CapacityScheduling). See `reservation_ttl`.
    quota_reservation_ttl: float = 0.0
    #: FailedScheduling Events on pods (live mode only; None: no API server to post to).
    events: EventRecorder | None = None
    #: The informers of a watched cluster (`--kubeconfig`, `--in-cluster`), which the sync
    #: query `GET /readyz?resourceVersion=N` reads (`extender.api.sync`); None for a snapshot.
    live: LiveState | None = None
    #: Replies kept per candidate list for reuse (`api.rowreply`; `serve --reply-cache`):
    #: 0 turns reuse off.
    reply_reuse: int = REPLIES_PER_LIST
    #: Prepare a pod's prioritize reply once its filter is answered, while kube-scheduler
    #: follows each filter with a prioritize of the nodes that passed (`api.prioritize`;
    #: `serve --no-anticipate` turns it off; it needs `reply_reuse`).
    anticipate: bool = True
    #: Where every exchange and outside state change is recorded (`serve --record`); None:
    #: nothing is (the routes are then the plain ones).
    recorder: Recorder | None = None
    #: With leader election (`serve --leader-elect`): None while this replica leads, else why
    #: not; every verb then answers an error (holds and reservations live in the leader).
    not_leading: Callable[[], str | None] | None = None

    def reservation_ttl(self, pod: PodView) -> float:
        """How long `pod`'s quota reservation may last: what kube-scheduler can take between
        its filter and its bind — the prioritize call and the rest of the cycle, then the bind
        (`quota_reservation_ttl`) — plus, for a gang member, its group's wait at Permit."""
        binder = self.binder
        held = binder.hold_time(pod) if isinstance(binder, PermitBinder) else 0.0
        return self.quota_reservation_ttl + held

    def held_binds(self) -> int:
        """Binds held at Coscheduling's Permit now (their connections wait on a gang)."""
        binder = self.binder
        return binder.held_count() if isinstance(binder, PermitBinder) else 0

    @property
    def gate(self) -> StateGate:
        """The gate that keeps `state` still while a large request reads it off the loop."""
        return gate_for(self.state)


def configure_gang_and_quota(runtime: Runtime, *, bind_deadline: float,
                             scheduler_http_timeout: float | None,
                             on_outcome: Callable[[str], None] | None = None,
                             wait: Wait = wait_decided,
                             max_held: int = DEFAULT_MAX_HELD) -> None:
    """Coscheduling's Permit in the bind verb (`PermitBinder` around the binder);
    CapacityScheduling's reservations on filter (`quota_reservation_ttl`). `serve` and a
    recording's replay build the same."""
    coscheduling = gang_plugin(runtime.profile)
    if coscheduling is not None:
        http_timeout = scheduler_http_timeout
        if http_timeout is None:
            http_timeout = http_timeout_for(coscheduling.manager.default_wait, bind_deadline)
        runtime.binder = PermitBinder(runtime.binder, runtime.state, coscheduling.manager,
                                      http_timeout=http_timeout, bind_deadline=bind_deadline,
                                      clock=runtime.state.clock, wait=wait,
                                      on_outcome=on_outcome, max_held=max_held)
    if "CapacityScheduling" in runtime.profile.filter_names:
        # A pod that passed the quota checks counts against its quota until its bind assumes
        # it, or its cycle is over: prioritize and the rest of the cycle (kube-scheduler's
        # default httpTimeout bounds the prioritize call), then the bind; a gang member's wait
        # at Permit comes on top (`Runtime.reservation_ttl`).
        runtime.quota_reservation_ttl = CYCLE_TO_BIND + bind_deadline + MARGIN
