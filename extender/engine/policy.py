"""`ExtenderPolicy`: the policy file, shaped like a KubeSchedulerConfiguration profile.

Validated with pydantic so every problem comes back with its path (`plugins.score.enabled[1]
.weight`), unknown keys are rejected, and unknown plugin names fail at start-up.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import msgspec
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from extender.engine import registry
from extender.model.names import suggest
from extender.model.yamltext import yaml_error

API_VERSION = "scheduler-extender/v1"
KIND = "ExtenderPolicy"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


class PluginRef(_Model):
    name: str = Field(min_length=1)
    weight: int | None = Field(default=None, ge=0)


class PluginSet(_Model):
    enabled: list[PluginRef] = Field(default_factory=list)
    disabled: list[PluginRef] = Field(default_factory=list)


class Plugins(_Model):
    filter: PluginSet | None = None
    score: PluginSet | None = None
    post_filter: PluginSet | None = Field(default=None, alias="postFilter")
    #: The simulator's activeQ order (QueueSort has no extender verb).
    queue_sort: PluginSet | None = Field(default=None, alias="queueSort")


class PluginConfig(_Model):
    name: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)


class ExtenderPolicy(_Model):
    api_version: Literal["scheduler-extender/v1"] = Field(alias="apiVersion")
    kind: Literal["ExtenderPolicy"]
    plugins: Plugins = Field(default_factory=Plugins)
    plugin_config: list[PluginConfig] = Field(default_factory=list, alias="pluginConfig")
    #: The kube-scheduler release whose reason wordings to follow ("1.30"); default the newest.
    kubernetes_version: str | None = Field(default=None, alias="kubernetesVersion")

    @field_validator("kubernetes_version")
    @classmethod
    def _version(cls, value: str | None) -> str | None:
        if value is not None:
            from extender.engine.args import parse_version

            parse_version(value)
        return value


class PolicyError(ValueError):
    """An invalid policy. `problems` holds one `path: message` line per problem."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        super().__init__("\n".join(f"{source}: {p}" for p in problems))


def format_location(loc: tuple[Any, ...] | list[Any]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(root)"


def _messages(exc: ValidationError, prefix: tuple[Any, ...] = ()) -> list[str]:
    problems = []
    for err in exc.errors():
        loc = (*prefix, *err["loc"])
        if err["type"] == "extra_forbidden":
            message = "unknown field"
        elif err["type"] == "model_type" and "PluginRef" in err["msg"]:
            message = f"each entry is a mapping such as {{name: NodeAffinity}} (with weight " \
                      f"for a scorer), got {err['input']!r}"
        elif err["type"] == "missing":
            message = "required field is missing"
        else:
            message = err["msg"].removeprefix("Value error, ")
        problems.append(f"{format_location(loc)}: {message}")
    return problems


#: The `Plugins` attribute of each extension point named otherwise.
_FIELDS = {"postFilter": "post_filter", "queueSort": "queue_sort"}


def _queue_sort_problems(policy: ExtenderPolicy) -> list[str]:
    """kube-scheduler's rule: exactly one queue sort plugin. Coscheduling brings its own
    QueueSort (the simulator runs it whenever its filter is enabled), so another one cannot
    be enabled beside it."""
    queue_sort = policy.plugins.queue_sort
    if queue_sort is None:
        return []
    names = [name for name, _ in effective_plugins("queueSort", queue_sort)]
    if len(names) != 1:
        return ["plugins.queueSort.enabled: exactly one queue sort plugin must be enabled "
                f"(got {len(names)})"]
    filters = {name for name, _ in effective_plugins("filter", policy.plugins.filter)}
    if names[0] != "PrioritySort" and "Coscheduling" in filters:
        return [f"plugins.queueSort.enabled[0].name: {names[0]} cannot be enabled with "
                "Coscheduling, whose QueueSort orders the queue when its filter is enabled"]
    return []


def effective_plugins(point: str, plugin_set: PluginSet | None) -> list[tuple[str, int | None]]:
    """(name, weight) in order. An omitted phase runs kube-scheduler's defaults; `enabled`, when
    given, is the complete list (`[]`: no plugin; a `disabled` beside it, as copied from a
    profile, changes nothing); `disabled` alone removes plugins (`"*"`: all) from the defaults."""
    defaults: tuple[Any, ...] = {
        "filter": tuple((n, None) for n in registry.DEFAULT_FILTERS),
        "score": registry.DEFAULT_SCORES,
        "postFilter": tuple((n, None) for n in registry.DEFAULT_POST_FILTERS),
        "queueSort": tuple((n, None) for n in registry.DEFAULT_QUEUE_SORTS),
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
        plugin_set = getattr(policy.plugins, _FIELDS.get(point, point))
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
                    choices = sorted(table)
                    problems.append(f"{where}: unknown plugin {ref.name!r}"
                                    f"{suggest(ref.name, choices)} (known: {', '.join(choices)})")
        disabled = {ref.name for ref in plugin_set.disabled}
        names = [ref.name for ref in plugin_set.enabled]
        for i, name in enumerate(names):
            if name in disabled:
                problems.append(f"plugins.{point}.enabled[{i}].name: {name!r} is also disabled")
        for i, name in enumerate(names):
            if name in names[:i]:
                problems.append(f"plugins.{point}.enabled[{i}].name: {name!r} is listed more than once")
    post = effective_plugins("postFilter", policy.plugins.post_filter)
    if len(post) > 1:
        problems.append("plugins.postFilter.enabled: at most one of "
                        f"{', '.join(registry.PREEMPTION_PLUGINS)} can be enabled")
    problems += _queue_sort_problems(policy)
    problems += _unconfigured_problems(policy, messages)
    seen: set[str] = set()
    for i, config in enumerate(policy.plugin_config):
        if config.name in seen:
            problems.append(f"pluginConfig[{i}].name: duplicate configuration for {config.name!r}")
        seen.add(config.name)
        spec = registry.PLUGINS.get(config.name)
        if spec is None:
            problems.append(f"pluginConfig[{i}].name: unknown plugin {config.name!r}"
                            f"{suggest(config.name, sorted(registry.PLUGINS))}")
            continue
        try:
            spec.args_model.model_validate(config.args)
        except ValidationError as exc:
            problems.extend(messages(exc, ("pluginConfig", i, "args")))
    return problems


def _unconfigured_problems(policy: ExtenderPolicy,
                           messages: Callable[..., list[str]]) -> list[str]:
    """An enabled plugin without a `pluginConfig` entry takes its arguments' defaults, as
    kube-scheduler defaults them: one whose arguments have a required field needs the entry
    (`build_profile` would fail on it, past every path)."""
    configured = {config.name for config in policy.plugin_config}
    problems: list[str] = []
    for point in registry.EXTENSION_POINTS:
        plugin_set = getattr(policy.plugins, _FIELDS.get(point, point))
        for name, _ in effective_plugins(point, plugin_set):
            spec = registry.PLUGINS.get(name)
            if spec is None or name in configured:
                continue
            configured.add(name)  # said once, however many points enable it
            try:
                spec.args_model.model_validate({})
            except ValidationError as exc:
                fields = ", ".join(line.partition(": ")[0] for line in messages(exc))
                problems.append(f"plugins.{point}: {name} is enabled without a pluginConfig "
                                f"entry, and its arguments need {fields}: add "
                                f"{{name: {name}, args: {{...}}}} to pluginConfig")
    return problems


def read_policy_document(path: str | Path) -> Any:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise PolicyError(str(path), [f"cannot read: {exc.strerror}"]) from None
    return policy_document(raw, str(path))


def policy_document(raw: bytes, source: str = "<policy>") -> Any:
    """A policy file's bytes (JSON or YAML) parsed, not yet validated."""
    try:
        if raw.lstrip()[:1] == b"{":
            return msgspec.json.decode(raw)
        return yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise PolicyError(source, [f"not valid JSON or YAML: {yaml_error(exc)}"]) from None
    except msgspec.DecodeError as exc:
        raise PolicyError(source, [f"not valid JSON or YAML: {exc}"]) from None


def _readable_part(document: dict[str, Any]) -> ExtenderPolicy:
    """The plugin lists and configurations of a document that failed validation, as far as they
    can be read (entries without a string name, and non-mapping args, are left out), so that
    `plugin_problems` can still judge them."""
    def refs(entries: Any) -> list[PluginRef]:
        out = []
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                weight = entry.get("weight")
                out.append(PluginRef.model_construct(
                    name=entry["name"], weight=weight if isinstance(weight, int) else None))
        return out

    plugins = document.get("plugins")
    plugins = plugins if isinstance(plugins, dict) else {}
    sets: dict[str, Any] = {}
    for key, field_name in (("filter", "filter"), ("score", "score"), ("postFilter", "post_filter"),
                            ("queueSort", "queue_sort")):
        raw = plugins.get(key)
        if isinstance(raw, dict):
            present: dict[str, Any] = {name: refs(raw[name]) for name in ("enabled", "disabled")
                                       if name in raw}
            sets[field_name] = PluginSet.model_construct(**present)
    configs = [PluginConfig.model_construct(name=entry["name"], args=entry.get("args") or {})
               for entry in document.get("pluginConfig") or ()
               if isinstance(entry, dict) and isinstance(entry.get("name"), str)
               and isinstance(entry.get("args") or {}, dict)] \
        if isinstance(document.get("pluginConfig"), list) else []
    return ExtenderPolicy.model_construct(plugins=Plugins.model_construct(**sets),
                                          plugin_config=configs)


def parse_policy(document: Any, source: str = "<policy>") -> ExtenderPolicy:
    """Validate a parsed document and check plugin names and arguments."""
    if not isinstance(document, dict):
        raise PolicyError(source, ["(root): expected a mapping with apiVersion, kind, plugins"])
    if document.get("kind") == "KubeSchedulerConfiguration":  # the other side's file
        raise PolicyError(source, [
            f"(root): this is a KubeSchedulerConfiguration, kube-scheduler's side (`extender "
            f"check-config` checks it); a policy is an {KIND} (apiVersion: {API_VERSION}, kind: "
            f"{KIND}, as config/policy.yaml), whose plugins and pluginConfig read as a profile's"])
    try:
        policy = ExtenderPolicy.model_validate(document)
    except ValidationError as exc:
        # Every problem in one run: the plugin names and arguments are checked too, on what
        # could be read of the plugin lists (an unknown key must not hide a bad value).
        problems = _messages(exc)
        reported = {line.partition(": ")[0] for line in problems}
        problems += [line for line in plugin_problems(_readable_part(document), _messages)
                     if line.partition(": ")[0] not in reported]
        raise PolicyError(source, problems) from None
    problems = plugin_problems(policy, _messages)
    if problems:
        raise PolicyError(source, problems)
    return policy


#: kube-scheduler's defaults: every phase left out of the policy.
BUILTIN_POLICY = {"apiVersion": API_VERSION, "kind": KIND}


def resolve_policy(path: str | Path | None,
                   default: Path | None = None) -> tuple[ExtenderPolicy, str]:
    """The policy at `path`, else at `default` when that file exists, else the built-in
    defaults; with where it came from."""
    if path is None and default is not None and default.is_file():
        path = default
    if path is None:
        return parse_policy(BUILTIN_POLICY, "<built-in default policy>"), "<built-in defaults>"
    return load_policy(path), str(path)


def load_policy(path: str | Path) -> ExtenderPolicy:
    """Read and validate a policy file (JSON or YAML)."""
    return parse_policy(read_policy_document(path), str(path))
