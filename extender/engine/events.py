"""Cluster events: what can make a pod a plugin rejected schedulable again.

kube-scheduler's `framework.ClusterEvent` / `ActionType`, and the events its informer handlers
hand to the queue (`internal/queue/events.go`). Each plugin's record (`engine.registry`) names
the events it registers (`EventsToRegister`); the simulator's queue reads them.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import IntFlag

POD = "Pod"
NODE = "Node"
WILDCARD = "*"
# scheduler-plugins' custom resources, named as their plugins register them (GVK form).
POD_GROUP = "podgroups.v1alpha1.scheduling.x-k8s.io"
ELASTIC_QUOTA = "elasticquotas.v1alpha1.scheduling.x-k8s.io"


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

