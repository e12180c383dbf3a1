"""What the routes need at run time: the engine profile, the cluster state, the binder."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from extender.engine.profile import Profile
from extender.state.binder import Binder
from extender.engine.cluster import ClusterState

DEFAULT_MAX_BODY = 128 * 1024 * 1024


def always_ready() -> tuple[bool, str]:
    return True, "ok"


@dataclass
class Runtime:
    profile: Profile
    state: ClusterState
    binder: Binder
    readiness: Callable[[], tuple[bool, str]] = always_ready
    max_body: int = DEFAULT_MAX_BODY
    wall_clock: Callable[[], float] = time.time
    startup: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    shutdown: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    source: str = "snapshot"
