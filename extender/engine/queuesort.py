"""The policy's QueueSort plugin (`plugins.queueSort`), built as `profile.build_profile` builds
the others. QueueSort has no extender verb: only the simulator's activeQ uses it."""

from __future__ import annotations

from typing import Any

from extender.engine import registry
from extender.engine.args import parse_version
from extender.engine.plugins.priority_sort import NAME as PRIORITY_SORT
from extender.engine.policy import effective_plugins


def queue_sort_plugin(policy: Any) -> Any | None:
    """The queue sort plugin the policy enables, or None for PrioritySort (the default, which
    the queue keeps as its own fast key). `policy` comes from `parse_policy`."""
    plugins = getattr(getattr(policy, "plugins", None), "queue_sort", None)
    if plugins is None:
        return None
    enabled = effective_plugins("queueSort", plugins)
    if not enabled or enabled[0][0] == PRIORITY_SORT:
        return None
    name = enabled[0][0]
    raw: dict[str, Any] = next((c.args for c in policy.plugin_config if c.name == name), {})
    args = registry.PLUGINS[name].args_model.model_validate(raw)
    return registry.factory("queueSort", name)(args, parse_version(policy.kubernetes_version))
