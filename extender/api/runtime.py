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

    @property
    def gate(self) -> StateGate:
        """The gate that keeps `state` still while a large request reads it off the loop."""
        return gate_for(self.state)
