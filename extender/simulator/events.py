"""Cluster events that move pods out of the unschedulable pool, and who listens to them.

Mirrors kube-scheduler's `framework.ClusterEvent` / `ActionType` and the events the queue
receives from the scheduler's informer handlers (`internal/queue/events.go`). In the legacy
(queueing-hints disabled) mode a pod in the pool is moved by an event iff one of the plugins
that rejected it registered a matching event in `EventsToRegister`; `PLUGIN_EVENTS` is that
registration for the in-tree plugins this project implements.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import IntFlag

POD = "Pod"
NODE = "Node"
WILDCARD = "*"


class ActionType(IntFlag):
    """framework.ActionType: a bit mask; node updates are split by what changed."""

    ADD = 1
    DELETE = 2
    UPDATE_NODE_ALLOCATABLE = 4
    UPDATE_NODE_LABEL = 8
    UPDATE_NODE_TAINT = 16
    UPDATE_NODE_CONDITION = 32
    UPDATE_NODE_ANNOTATION = 64
    ALL = 127
    UPDATE = 124  # every UpdateNode* bit


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    resource: str
    action: ActionType
    label: str = ""

    def is_wildcard(self) -> bool:
        return self.resource == WILDCARD and self.action == ActionType.ALL

    def match(self, event: ClusterEvent) -> bool:
        """`ClusterEvent.Match`: does this registration cover `event`?"""
        return self.is_wildcard() or (
            self.resource in (WILDCARD, event.resource) and bool(self.action & event.action)
        )


# Events the scheduler's informer handlers hand to the queue (labels as upstream).
NODE_ADD = ClusterEvent(NODE, ActionType.ADD, "NodeAdd")
# spec.unschedulable is reported as a taint-type update, as upstream does.
NODE_SPEC_UNSCHEDULABLE_CHANGE = ClusterEvent(NODE, ActionType.UPDATE_NODE_TAINT,
                                              "NodeSpecUnschedulableChange")
NODE_ALLOCATABLE_CHANGE = ClusterEvent(NODE, ActionType.UPDATE_NODE_ALLOCATABLE,
                                       "NodeAllocatableChange")
NODE_LABEL_CHANGE = ClusterEvent(NODE, ActionType.UPDATE_NODE_LABEL, "NodeLabelChange")
NODE_TAINT_CHANGE = ClusterEvent(NODE, ActionType.UPDATE_NODE_TAINT, "NodeTaintChange")
NODE_CONDITION_CHANGE = ClusterEvent(NODE, ActionType.UPDATE_NODE_CONDITION,
                                     "NodeConditionChange")
ASSIGNED_POD_ADD = ClusterEvent(POD, ActionType.ADD, "AssignedPodAdd")
ASSIGNED_POD_UPDATE = ClusterEvent(POD, ActionType.UPDATE, "AssignedPodUpdate")
ASSIGNED_POD_DELETE = ClusterEvent(POD, ActionType.DELETE, "AssignedPodDelete")
# Raised by flushUnschedulablePodsLeftover; a wildcard, so it moves every pod it is given.
UNSCHEDULABLE_TIMEOUT = ClusterEvent(WILDCARD, ActionType.ALL, "UnschedulableTimeout")
# Used by tests and by callers that want kube-scheduler's "move everything" behaviour.
WILDCARD_EVENT = ClusterEvent(WILDCARD, ActionType.ALL, "WildCard")

_A = ActionType

# EventsToRegister of the in-tree plugins (the releases whose legacy mode the queue follows).
# Preemption needs no entry: the preemptor was rejected by NodeResourcesFit/NodePorts, which
# listen to AssignedPodDelete, so deleting its victims moves it.
PLUGIN_EVENTS: Mapping[str, tuple[ClusterEvent, ...]] = {
    "NodeResourcesFit": (
        ClusterEvent(POD, _A.DELETE),
        ClusterEvent(NODE, _A.ADD | _A.UPDATE_NODE_ALLOCATABLE),
    ),
    "TaintToleration": (ClusterEvent(NODE, _A.ADD | _A.UPDATE_NODE_TAINT),),
    "NodeAffinity": (ClusterEvent(NODE, _A.ADD | _A.UPDATE_NODE_LABEL),),
    "NodeUnschedulable": (ClusterEvent(NODE, _A.ADD | _A.UPDATE_NODE_TAINT),),
    "NodePorts": (ClusterEvent(POD, _A.DELETE), ClusterEvent(NODE, _A.ADD)),
    "NodeName": (ClusterEvent(NODE, _A.ADD),),
    "InterPodAffinity": (
        ClusterEvent(POD, _A.ALL),
        ClusterEvent(NODE, _A.ADD | _A.UPDATE_NODE_LABEL),
    ),
    "PodTopologySpread": (
        ClusterEvent(POD, _A.ALL),
        ClusterEvent(NODE, _A.ADD | _A.DELETE | _A.UPDATE_NODE_LABEL),
    ),
    # Score-only plugins never reject a pod, so they register nothing.
    "NodeResourcesBalancedAllocation": (),
    "ImageLocality": (),
    "PrioritySort": (),
    "DefaultPreemption": (),
    "DefaultBinder": (),
}

_ANY = (WILDCARD_EVENT,)


def plugin_events(plugin: str) -> tuple[ClusterEvent, ...]:
    """Registrations of `plugin`. A plugin we do not know is treated as upstream treats a plugin
    without EnqueueExtensions: interested in every event."""
    return PLUGIN_EVENTS.get(plugin, _ANY)


def interest_map(plugins: Iterable[str]) -> dict[str, tuple[ClusterEvent, ...]]:
    """plugin -> registrations, for the enabled plugins."""
    return {name: plugin_events(name) for name in plugins}


def node_update_events(old_node: object, new_node: object) -> list[ClusterEvent]:
    """`NodeSchedulingPropertiesChange`: the events for a node update, from two `NodeView`s,
    in upstream's order. Conditions and annotations are not modelled."""
    events = []
    if getattr(old_node, "unschedulable", False) != getattr(new_node, "unschedulable", False):
        events.append(NODE_SPEC_UNSCHEDULABLE_CHANGE)
    if getattr(old_node, "allocatable", None) != getattr(new_node, "allocatable", None):
        events.append(NODE_ALLOCATABLE_CHANGE)
    if getattr(old_node, "labels", None) != getattr(new_node, "labels", None):
        events.append(NODE_LABEL_CHANGE)
    if getattr(old_node, "taints", None) != getattr(new_node, "taints", None):
        events.append(NODE_TAINT_CHANGE)
    return events
