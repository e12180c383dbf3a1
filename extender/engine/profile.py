"""Build the runnable plugin set (`Profile`) from a validated `ExtenderPolicy`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from extender.engine import registry
from extender.engine.args import parse_version
from extender.engine.framework import FilterPlugin, PostFilterPlugin, ScorePlugin
from extender.engine.policy import ExtenderPolicy, PluginSet


@dataclass(frozen=True)
class Profile:
    filters: tuple[FilterPlugin, ...]
    scorers: tuple[tuple[ScorePlugin, int], ...]
    post_filter: PostFilterPlugin | None
    policy: ExtenderPolicy

    @property
    def filter_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.filters)

    def node_only(self, plugin: FilterPlugin) -> bool:
        """Whether the plugin's verdict may be memoised per node view (its record says so)."""
        record = registry.PLUGINS.get(plugin.name)
        return record is not None and record.filter_memo is registry.FilterMemo.NODE_VIEW


def _effective(point: str, plugin_set: PluginSet | None) -> list[tuple[str, int | None]]:
    """(name, weight) in order. An omitted phase runs kube-scheduler's defaults; `enabled`, when
    given, is the complete list (`[]`: no plugin; a `disabled` beside it, as copied from a
    profile, changes nothing); `disabled` alone removes plugins (`"*"`: all) from the defaults."""
    defaults: tuple[Any, ...] = {
        "filter": tuple((n, None) for n in registry.DEFAULT_FILTERS),
        "score": registry.DEFAULT_SCORES,
        "postFilter": tuple((n, None) for n in registry.DEFAULT_POST_FILTERS),
    }[point]
    if plugin_set is None:
        return list(defaults)
    if plugin_set.enabled or "enabled" in plugin_set.model_fields_set:
        return [(p.name, p.weight) for p in plugin_set.enabled]
    disabled = {p.name for p in plugin_set.disabled}
    if "*" in disabled:
        return []
    return [(name, weight) for name, weight in defaults if name not in disabled]


def plugin_problems(policy: ExtenderPolicy, messages: Callable[..., list[str]]) -> list[str]:
    """Unknown plugin names, misplaced plugins and invalid arguments, each with its path."""
    problems: list[str] = []
    known = {name for table in registry.EXTENSION_POINTS.values() for name in table}
    for point, table in registry.EXTENSION_POINTS.items():
        plugin_set = getattr(policy.plugins, "post_filter" if point == "postFilter" else point)
        if plugin_set is None:
            continue
        for list_name in ("enabled", "disabled"):
            for i, ref in enumerate(getattr(plugin_set, list_name)):
                if ref.name in table or (list_name == "disabled" and ref.name == "*"):
                    continue
                where = f"plugins.{point}.{list_name}[{i}].name"
                if ref.name in known:
                    problems.append(f"{where}: plugin {ref.name!r} has no {point} extension point")
                else:
                    choices = ", ".join(sorted(table))
                    problems.append(f"{where}: unknown plugin {ref.name!r} (known: {choices})")
        disabled = {ref.name for ref in plugin_set.disabled}
        names = [ref.name for ref in plugin_set.enabled]
        for i, name in enumerate(names):
            if name in disabled:
                problems.append(f"plugins.{point}.enabled[{i}].name: {name!r} is also disabled")
        for i, name in enumerate(names):
            if name in names[:i]:
                problems.append(f"plugins.{point}.enabled[{i}].name: {name!r} is listed more than once")
    post = _effective("postFilter", policy.plugins.post_filter)
    if len(post) > 1:
        problems.append("plugins.postFilter.enabled: at most one of DefaultPreemption, "
                        "PreemptionToleration can be enabled")
    seen: set[str] = set()
    for i, config in enumerate(policy.plugin_config):
        if config.name in seen:
            problems.append(f"pluginConfig[{i}].name: duplicate configuration for {config.name!r}")
        seen.add(config.name)
        spec = registry.PLUGINS.get(config.name)
        if spec is None:
            problems.append(f"pluginConfig[{i}].name: unknown plugin {config.name!r}")
            continue
        try:
            spec.args_model.model_validate(config.args)
        except ValidationError as exc:
            problems.extend(messages(exc, ("pluginConfig", i, "args")))
    return problems


def _args_for(policy: ExtenderPolicy, name: str) -> Any:
    raw = next((c.args for c in policy.plugin_config if c.name == name), {})
    return registry.PLUGINS[name].args_model.model_validate(raw)


def build_profile(policy: ExtenderPolicy) -> Profile:
    """Instantiate the policy's plugins in order. The policy must come from `parse_policy`."""
    version = parse_version(policy.kubernetes_version)

    def make(point: str, name: str) -> Any:
        return registry.factory(point, name)(_args_for(policy, name), version)

    filters = tuple(make("filter", name) for name, _ in _effective("filter", policy.plugins.filter))
    scorers = tuple((make("score", name), weight or 1)
                    for name, weight in _effective("score", policy.plugins.score))
    post = _effective("postFilter", policy.plugins.post_filter)
    post_filter = make("postFilter", post[0][0]) if post else None
    return Profile(filters, scorers, post_filter, policy)
