"""Build the runnable plugin set (`Profile`) from a validated `ExtenderPolicy`."""

from __future__ import annotations

from typing import Any

from extender.engine import abilities, registry
from extender.engine.args import parse_version
from extender.engine.framework import Profile
from extender.engine.policy import ExtenderPolicy, effective_plugins


def _args_for(policy: ExtenderPolicy, name: str) -> Any:
    raw = next((c.args for c in policy.plugin_config if c.name == name), {})
    return registry.PLUGINS[name].args_model.model_validate(raw)


def build_profile(policy: ExtenderPolicy) -> Profile:
    """Instantiate the policy's plugins in order. The policy must come from `parse_policy`."""
    version = parse_version(policy.kubernetes_version)

    def make(point: str, name: str) -> Any:
        return registry.factory(point, name)(_args_for(policy, name), version)

    filters = tuple(make("filter", name) for name, _ in effective_plugins("filter", policy.plugins.filter))
    scorers = tuple((make("score", name), weight or 1)
                    for name, weight in effective_plugins("score", policy.plugins.score))
    post = effective_plugins("postFilter", policy.plugins.post_filter)
    post_filter = make("postFilter", post[0][0]) if post else None
    memoised = frozenset(name for name, record in registry.PLUGINS.items()
                         if record.memoised_per_node_view)
    profile = Profile(filters, scorers, post_filter, policy, memoised)
    abilities.of(profile)  # found once, here (a Profile made elsewhere finds them on first use)
    return profile


__all__ = ["Profile", "build_profile"]
