"""What the routes need at run time: the engine profile, the cluster state, the binder."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from extender.api.offload import Offloader
from extender.api.rowreply import REPLIES_PER_LIST
from extender.engine.cluster import ClusterState
from extender.engine.profile import Profile
from extender.state.binder import Binder
from extender.state.events import EventRecorder
from extender.state.gate import StateGate, gate_for
from extender.state.permit import PermitBinder, Wait, http_timeout_for, wait_decided
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
    #: its bind (0: the policy has no CapacityScheduling).
    quota_reservation_ttl: float = 0.0
    #: FailedScheduling Events on pods (live mode only; None: no API server to post to).
    events: EventRecorder | None = None
    #: The informers of a watched cluster (`--kubeconfig`, `--in-cluster`), which the sync
    #: query `GET /readyz?resourceVersion=N` reads (`extender.api.sync`); None for a snapshot.
    live: LiveState | None = None
    #: Replies kept per candidate list for reuse (`api.rowreply`; `serve --reply-cache`):
    #: 0 turns reuse off.
    reply_reuse: int = REPLIES_PER_LIST
    #: Where every exchange and outside state change is recorded (`serve --record`); None:
    #: nothing is (the routes are then the plain ones).
    recorder: Recorder | None = None

    @property
    def gate(self) -> StateGate:
        """The gate that keeps `state` still while a large request reads it off the loop."""
        return gate_for(self.state)


def configure_gang_and_quota(runtime: Runtime, *, bind_deadline: float, assume_ttl: float,
                             scheduler_http_timeout: float | None,
                             on_outcome: Callable[[str], None] | None = None,
                             wait: Wait = wait_decided) -> None:
    """Coscheduling's Permit in the bind verb (`PermitBinder` around the binder);
    CapacityScheduling's reservations on filter (`quota_reservation_ttl`). `serve` and a
    recording's replay build the same."""
    coscheduling = next((p for p in runtime.profile.filters if p.name == "Coscheduling"), None)
    permit_wait = 0.0
    if coscheduling is not None:
        manager = coscheduling.manager  # type: ignore[union-attr]
        permit_wait = float(manager.args.permit_waiting_time_seconds)
        http_timeout = scheduler_http_timeout
        if http_timeout is None:
            http_timeout = http_timeout_for(permit_wait, bind_deadline)
        runtime.binder = PermitBinder(runtime.binder, runtime.state, manager,
                                      http_timeout=http_timeout, bind_deadline=bind_deadline,
                                      clock=runtime.state.clock, wait=wait,
                                      on_outcome=on_outcome)
    if "CapacityScheduling" in runtime.profile.filter_names:
        # A pod that passed the quota checks counts against its quota until its bind (held at
        # Permit for up to `permit_wait`) assumes it.
        runtime.quota_reservation_ttl = max(assume_ttl, permit_wait + bind_deadline)
