"""Which plugins listen to which cluster events (legacy, queueing-hints-disabled mode).

A pod in the unschedulable pool is moved by an event iff one of the plugins that rejected it
registered a matching event; the registrations live in each plugin's record
(`engine.registry`). The event types themselves are `engine.events`.
"""

from __future__ import annotations

from collections.abc import Iterable

from extender.engine import registry
from extender.engine.events import (
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    ASSIGNED_POD_UPDATE,
    NODE,
    NODE_ADD,
    NODE_ALLOCATABLE_CHANGE,
    NODE_CONDITION_CHANGE,
    NODE_LABEL_CHANGE,
    NODE_SPEC_UNSCHEDULABLE_CHANGE,
    NODE_TAINT_CHANGE,
    POD,
    UNSCHEDULABLE_TIMEOUT,
    WILDCARD,
    WILDCARD_EVENT,
    ActionType,
    ClusterEvent,
)

__all__ = [  # the queue's vocabulary, from the engine, and who listens to what
    "ASSIGNED_POD_ADD", "ASSIGNED_POD_DELETE", "ASSIGNED_POD_UPDATE", "NODE", "NODE_ADD",
    "NODE_ALLOCATABLE_CHANGE", "NODE_CONDITION_CHANGE", "NODE_LABEL_CHANGE",
    "NODE_SPEC_UNSCHEDULABLE_CHANGE", "NODE_TAINT_CHANGE", "POD", "UNSCHEDULABLE_TIMEOUT",
    "WILDCARD", "WILDCARD_EVENT", "ActionType", "ClusterEvent", "all_plugins", "interest_map",
    "node_update_events", "plugin_events",
]

_ANY = (WILDCARD_EVENT,)


#: Plugins of the simulator's own profile that no policy names.
_FRAMEWORK_EVENTS: dict[str, tuple[ClusterEvent, ...]] = {
    "PrioritySort": (), "DefaultBinder": (),
}


def plugin_events(plugin: str) -> tuple[ClusterEvent, ...]:
    """Registrations of `plugin`. A plugin we do not know is treated as upstream treats a plugin
    without EnqueueExtensions: interested in every event."""
    record = registry.PLUGINS.get(plugin)
    if record is not None:
        return record.events
    return _FRAMEWORK_EVENTS.get(plugin, _ANY)


def all_plugins() -> list[str]:
    """Every plugin the queue may meet: the registry's and the framework's own."""
    return [*registry.PLUGINS, *_FRAMEWORK_EVENTS]


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
