"""What the routes need at run time: the engine profile, the cluster state, the binder."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from extender.engine.profile import Profile
from extender.state.cluster import ClusterState

DEFAULT_MAX_BODY = 128 * 1024 * 1024


class Binder(Protocol):
    async def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        """Bind the pod to the node; raise `extender.state.binder.BindError` on failure."""


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
