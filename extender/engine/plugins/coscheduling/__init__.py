"""Coscheduling (scheduler-plugins): gang scheduling by PodGroup.

A pod labelled `scheduling.x-k8s.io/pod-group: <name>` belongs to that PodGroup in its
namespace. PreFilter rejects it while the group cannot possibly reach `minMember` (too few
pods, a recent failure, not enough free resources in the whole cluster for `minResources`);
Permit holds each pod until `minMember` of the group are assigned, then lets them all go.
The extender runs PreFilter in the filter verb and Permit in the bind verb; the simulator runs
every extension point (`core.PodGroupManager` holds their shared state).
"""

from __future__ import annotations

from extender.engine.args import CoschedulingArgs
from extender.engine.framework import ClusterContext, CycleState, Profile, Status
from extender.engine.plugins.coscheduling.core import (
    NAME,
    NOT_FOUND,
    OPTIMISTIC_REJECTION,
    UNRESERVE_REJECTION,
    PermitCode,
    PodGroupManager,
    too_few_siblings,
)
from extender.model.pod import PodView

__all__ = ["NAME", "NOT_FOUND", "OPTIMISTIC_REJECTION", "UNRESERVE_REJECTION", "Coscheduling",
           "PermitCode", "PodGroupManager", "gang_plugin", "permit_wait", "too_few_siblings"]


class Coscheduling:
    """The filter plugin; `manager` is shared with Permit (bind verb) and the simulator."""

    name = NAME

    def __init__(self, args: CoschedulingArgs | None = None) -> None:
        self.manager = PodGroupManager(args)

    def pre_filter(self, state: CycleState, pod: PodView,
                   ctx: ClusterContext) -> Status | None:
        if not pod.pod_group:
            return None
        return self.manager.pre_filter(pod, ctx, ctx.clock())


def gang_plugin(profile: Profile) -> Coscheduling | None:
    """The profile's Coscheduling, or None."""
    return next((p for p in profile.filters if isinstance(p, Coscheduling)), None)


def permit_wait(profile: Profile) -> float | None:
    """Seconds a bind may be held at Permit in `profile` for a group without its own
    scheduleTimeoutSeconds (None: the profile has no Coscheduling)."""
    plugin = gang_plugin(profile)
    return None if plugin is None else plugin.manager.default_wait
