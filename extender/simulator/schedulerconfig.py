"""`extender simulate --config`: a KubeSchedulerConfiguration as the simulator's scheduler.

`load_scheduler_config(path)` checks the file with `check-config`'s rules
(`extender.ops.schedconfig`, as a kube-scheduler built with scheduler-plugins reads it: their
plugins are known) and returns a `SchedulerSetup`:

* per profile (`schedulerName`, default `default-scheduler`), the `ExtenderPolicy` document
  equivalent to its plugins: kube-scheduler's v1 defaults merged with the profile's `plugins`
  (`mergePluginSet`: `disabled` removes defaults, `"*"` all of them; an `enabled` plugin that
  is a default replaces it in place, others are appended), then `multiPoint` expanded into
  each extension point (`expandMultiPointPlugins`: a plugin named at the point itself comes
  first and keeps that point's settings; a plugin disabled at a point is left out there), and
  score weights as `getScoreWeights` takes them (the score point's, else multiPoint's; 0 or
  none: 1). The simulator runs four points: queueSort, filter (PreFilter and Filter: the
  engine's filters hold both), postFilter and score. `pluginConfig` args of the plugins it
  runs go to the policy (without their apiVersion/kind). Coscheduling and CapacityScheduling
  have no Filter upstream: their PreFilter entry enables the engine's filter; Coscheduling's
  QueueSort and PostFilter come with it (the simulator always runs them with its filter).
* `percentageOfNodesToScore` per profile: the profile's value when set, else the global one,
  else 0 (adaptive), as `numFeasibleNodesToFind` reads them;
* `podInitialBackoffSeconds` (1) and `podMaxBackoffSeconds` (10), as virtual nanoseconds;
* `extenders[]`: urlPrefix, the verbs, weight, managedResources (`ignoredByScheduler` ones
  are added to NodeResourcesFit's `ignoredResources` in every profile, as kube-scheduler
  does), ignorable, nodeCacheCapable (default false, as in kube-scheduler), httpTimeout (5s),
  and tlsConfig's caFile/certFile/keyFile/insecure.

Plugins the simulator does not run are reported (`SchedulerSetup.warnings`): those written in
the file; kube-scheduler's defaults it cannot model (SchedulingGates, the volume plugins,
DefaultBinder, DynamicResources) are left out silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from extender.engine import registry
from extender.engine.args import NEWEST_VERSION, Version
from extender.engine.policy import API_VERSION as POLICY_API_VERSION
from extender.engine.policy import KIND as POLICY_KIND
from extender.engine.policy import ExtenderPolicy, PolicyError, parse_policy
from extender.ops import kubesched
from extender.ops.fields import as_dict as _dict
from extender.ops.fields import as_int as _int
from extender.ops.fields import as_list as _list
from extender.ops.fields import load_documents, parse_go_duration
from extender.simulator.clock import SECOND, seconds
from extender.simulator.extenders import DEFAULT_TIMEOUT, HttpExtender

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_POD_INITIAL_BACKOFF_SECONDS = 1
DEFAULT_POD_MAX_BACKOFF_SECONDS = 10

#: kube-scheduler's v1 default plugins (`getDefaultPlugins`): all in multiPoint, with weights.
DEFAULT_MULTI_POINT: tuple[tuple[str, int | None], ...] = (
    ("SchedulingGates", None), ("PrioritySort", None), ("NodeUnschedulable", None),
    ("NodeName", None), ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", None),
    ("NodeResourcesFit", 1), ("VolumeRestrictions", None), ("NodeVolumeLimits", None),
    ("VolumeBinding", None), ("VolumeZone", None), ("PodTopologySpread", 2),
    ("InterPodAffinity", 2), ("DefaultPreemption", None), ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1), ("DefaultBinder", None),
)
#: In-tree plugins the simulator leaves out, and why (reported only when the file names them).
NOT_SIMULATED: dict[str, str] = {
    "SchedulingGates": "scheduling gates (PreEnqueue) are not modelled",
    "VolumeRestrictions": "volumes are not modelled",
    "NodeVolumeLimits": "volumes are not modelled",
    "VolumeBinding": "volumes are not modelled",
    "VolumeZone": "volumes are not modelled",
    "AzureDiskLimits": "volumes are not modelled",
    "CinderLimits": "volumes are not modelled",
    "EBSLimits": "volumes are not modelled",
    "GCEPDLimits": "volumes are not modelled",
    "DynamicResources": "resource claims (DRA) are not modelled",
    "DefaultBinder": "the simulator binds by itself (or through an extender's bindVerb)",
}
#: The extension points the simulator runs; "preFilter" feeds the engine's filters.
_POINTS = ("queueSort", "preFilter", "filter", "postFilter", "score")
#: Plugins whose engine filter stands for their upstream PreFilter (they have no Filter).
_FILTER_AT_PRE_FILTER = frozenset({"Coscheduling", "CapacityScheduling"})
#: Points a plugin has upstream beyond the engine's, which the simulator runs with its filter.
_IMPLIED: dict[str, frozenset[str]] = {
    "Coscheduling": frozenset({"queueSort", "postFilter", "permit", "reserve"}),
    "CapacityScheduling": frozenset({"reserve"}),
}


class SchedulerConfigError(ValueError):
    """An unusable --config file: `problems` holds one `file: path: message` line each."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class ExtenderSpec:
    """One `extenders[]` entry, with kube-scheduler's defaults applied."""

    url_prefix: str
    filter_verb: str = ""
    prioritize_verb: str = ""
    preempt_verb: str = ""
    bind_verb: str = ""
    weight: int = 1
    managed_resources: tuple[str, ...] = ()
    ignored_by_scheduler: tuple[str, ...] = ()
    ignorable: bool = False
    node_cache_capable: bool = False
    http_timeout: int = seconds(DEFAULT_TIMEOUT)  # virtual ns (the wall-clock timeout)
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    insecure: bool = False

    def build(self) -> HttpExtender:
        """The simulator's HTTP client for this extender."""
        client = None
        if self.ca_file or self.cert_file or self.insecure:
            import httpx

            verify: Any = False if self.insecure else (self.ca_file or True)
            cert: Any = None
            if self.cert_file:
                cert = (self.cert_file, self.key_file) if self.key_file else self.cert_file
            client = httpx.Client(timeout=self.http_timeout / SECOND, verify=verify, cert=cert)
        return HttpExtender(
            self.url_prefix, filter_verb=self.filter_verb, prioritize_verb=self.prioritize_verb,
            preempt_verb=self.preempt_verb, bind_verb=self.bind_verb, weight=self.weight,
            node_cache_capable=self.node_cache_capable, ignorable=self.ignorable,
            managed_resources=self.managed_resources, timeout=self.http_timeout / SECOND,
            client=client)


@dataclass(frozen=True)
class ProfileSetup:
    """One profile: the pods whose `spec.schedulerName` is `scheduler_name` are its own."""

    scheduler_name: str
    #: An ExtenderPolicy document (`extender.engine.policy.parse_policy` accepts it).
    policy: dict[str, Any]
    #: 0: adaptive (kube-scheduler's default); 1..100: that percentage.
    percentage_of_nodes_to_score: int
    #: Where the profile is in the file (`profiles[1]`).
    path: str = ""

    def extender_policy(self) -> ExtenderPolicy:
        return parse_policy(self.policy, f"{self.path} ({self.scheduler_name})")


@dataclass(frozen=True)
class SchedulerSetup:
    source: str
    profiles: tuple[ProfileSetup, ...]
    #: Virtual nanoseconds.
    pod_initial_backoff: int = DEFAULT_POD_INITIAL_BACKOFF_SECONDS * SECOND
    pod_max_backoff: int = DEFAULT_POD_MAX_BACKOFF_SECONDS * SECOND
    extenders: tuple[ExtenderSpec, ...] = ()
    #: check-config's warnings, and the plugins the simulator does not run.
    warnings: tuple[str, ...] = field(default_factory=tuple)

    @property
    def scheduler_names(self) -> list[str]:
        return [p.scheduler_name for p in self.profiles]

    def profile_for(self, scheduler_name: str) -> ProfileSetup | None:
        """The profile a pod with this `spec.schedulerName` goes to ("": the default
        scheduler); None: no profile, kube-scheduler leaves the pod alone."""
        name = scheduler_name or DEFAULT_SCHEDULER_NAME
        return next((p for p in self.profiles if p.scheduler_name == name), None)

    @property
    def extender_bind(self) -> bool:
        """Whether an extender binds (kube-scheduler then binds through it)."""
        return any(e.bind_verb for e in self.extenders)


# -- loading ------------------------------------------------------------------------------------


def load_scheduler_config(path: str | Path, version: Version = NEWEST_VERSION) -> SchedulerSetup:
    """Read, check (as `check-config` does) and map a KubeSchedulerConfiguration; raises
    SchedulerConfigError with every error (`file: path: message`)."""
    from extender.ops.schedconfig import check_config

    source = str(path)
    problems = check_config(path, version, scheduler_plugins=True)
    errors = [str(p) for p in problems if p.severity == "error"]
    if errors:
        raise SchedulerConfigError(errors)
    documents, _ = load_documents(Path(path).read_text(encoding="utf-8"))
    doc = next(d for d in documents if d is not None)
    if not isinstance(doc, dict) or doc.get("kind") != kubesched.KIND:
        kind = doc.get("kind") if isinstance(doc, dict) else None
        hint = "; give an ExtenderPolicy with --policy" if kind == POLICY_KIND else ""
        raise SchedulerConfigError([f"{source}: kind: --config needs a {kubesched.KIND}, got "
                                    f"{kind!r}{hint}"])
    return scheduler_setup(doc, source, warnings=[str(p) for p in problems])


def scheduler_setup(doc: Mapping[str, Any], source: str = "<config>", *,
                    warnings: Iterable[str] = ()) -> SchedulerSetup:
    """The setup of an already-checked KubeSchedulerConfiguration document."""
    notes = list(warnings)
    errors: list[str] = []
    extenders = tuple(_extender(e, f"{source}: extenders[{i}]", notes, errors)
                      for i, e in enumerate(_list(doc.get("extenders"))))
    ignored = [name for e in extenders for name in e.ignored_by_scheduler]
    global_percentage = _int(doc.get("percentageOfNodesToScore"))
    profiles = []
    raw_profiles = _list(doc.get("profiles")) or [{}]
    for i, raw in enumerate(raw_profiles):
        raw = raw if isinstance(raw, Mapping) else {}
        path = f"profiles[{i}]"
        name = raw.get("schedulerName") or DEFAULT_SCHEDULER_NAME
        policy = _profile_policy(raw, f"{source}: {path}", notes, errors, ignored)
        try:
            parse_policy(policy, f"{source}: {path} ({name})")
        except PolicyError as exc:
            errors += [f"{source}: {path} ({name}), as the simulator's policy: {line}"
                       for line in exc.problems]
        percentage = _int(raw.get("percentageOfNodesToScore"))
        if percentage is None:
            percentage = global_percentage
        profiles.append(ProfileSetup(name, policy, percentage or 0, path))
    if errors:
        raise SchedulerConfigError(errors)
    initial = _int(doc.get("podInitialBackoffSeconds"))
    maximum = _int(doc.get("podMaxBackoffSeconds"))
    return SchedulerSetup(
        source, tuple(profiles),
        pod_initial_backoff=(DEFAULT_POD_INITIAL_BACKOFF_SECONDS if initial is None else initial)
        * SECOND,
        pod_max_backoff=(DEFAULT_POD_MAX_BACKOFF_SECONDS if maximum is None else maximum) * SECOND,
        extenders=extenders, warnings=tuple(notes))


# -- plugins ------------------------------------------------------------------------------------

Plugin = tuple[str, int | None]  # (name, weight)


@dataclass
class _PluginSet:
    enabled: list[Plugin] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)


def _plugin_set(raw: Any) -> _PluginSet:
    raw = _dict(raw)
    enabled = [(p["name"], _int(p.get("weight"))) for p in _list(raw.get("enabled"))
               if isinstance(p, dict) and isinstance(p.get("name"), str)]
    disabled = [p["name"] for p in _list(raw.get("disabled"))
                if isinstance(p, dict) and isinstance(p.get("name"), str)]
    return _PluginSet(enabled, disabled)


def merge_plugin_set(default: _PluginSet, custom: _PluginSet) -> _PluginSet:
    """`mergePluginSet`: the defaults less the disabled ones (`*`: all), a re-enabled default
    replaced in place, the other enabled plugins appended."""
    disabled = [*custom.disabled, *default.disabled]
    custom_by_name = {name: (i, (name, weight)) for i, (name, weight) in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[Plugin] = []
    if "*" not in disabled:
        for plugin in default.enabled:
            if plugin[0] in disabled:
                continue
            if plugin[0] in custom_by_name:
                index, plugin = custom_by_name[plugin[0]]
                replaced.add(index)
            enabled.append(plugin)
    enabled += [p for i, p in enumerate(custom.enabled) if i not in replaced]
    return _PluginSet(enabled, disabled)


def _implements(name: str, point: str) -> bool:
    """Whether plugin `name` has extension point `point` (upstream), as far as the simulator
    runs it: the engine's points, with PreFilter for the plugins that only have that."""
    record = registry.PLUGINS.get(name)
    if record is None:
        return False
    points = set(record.extension_points)
    if name in _FILTER_AT_PRE_FILTER:
        points.discard("filter")
        points.add("preFilter")
    return point in points or point in _IMPLIED.get(name, ())


def expand_multi_point(point: str, plugin_set: _PluginSet, multi_point: _PluginSet) -> list[Plugin]:
    """`expandMultiPointPlugins` for one point: the point's own plugins that multiPoint also
    names (their settings win), then multiPoint's others that implement the point and are not
    disabled there, then the point's remaining own plugins."""
    if "*" in plugin_set.disabled:
        return list(plugin_set.enabled)
    own = {name for name, _ in plugin_set.enabled}
    overrides: list[str] = []
    from_multi: list[Plugin] = []
    for name, weight in multi_point.enabled:
        if not _implements(name, point) or name in plugin_set.disabled:
            continue
        if name in own:
            overrides.append(name)
            continue
        if name not in (n for n, _ in from_multi):
            from_multi.append((name, weight))
    first = [p for p in plugin_set.enabled if p[0] in overrides]
    rest = [p for p in plugin_set.enabled if p[0] not in overrides]
    return first + from_multi + rest


def _profile_policy(profile: Mapping[str, Any], where: str, notes: list[str],
                    errors: list[str], ignored_resources: Sequence[str]) -> dict[str, Any]:
    """The ExtenderPolicy document of one profile."""
    plugins = _dict(profile.get("plugins"))
    defaults = {"multiPoint": _PluginSet(list(DEFAULT_MULTI_POINT))}
    merged = {point: merge_plugin_set(defaults.get(point, _PluginSet()),
                                      _plugin_set(plugins.get(point)))
              for point in kubesched.EXTENSION_POINTS}
    multi = merged["multiPoint"]
    expanded = {point: expand_multi_point(point, merged[point], multi) for point in _POINTS}

    # What the file itself names (not the defaults): those the simulator cannot run are told.
    written: dict[str, str] = {}
    for point, raw_set in plugins.items():
        for j, entry in enumerate(_list(_dict(raw_set).get("enabled"))):
            name = _dict(entry).get("name")
            if isinstance(name, str):
                written.setdefault(name, f"plugins.{point}.enabled[{j}]")
    for name, at in written.items():
        if name in registry.PLUGINS or name in ("PrioritySort",):
            continue
        why = NOT_SIMULATED.get(name, "the simulator's engine does not have it")
        notes.append(f"{where}.{at}: plugin {name} is not simulated ({why}); the simulation "
                     "runs without it")

    filters = [name for name, _ in expanded["filter"]
               if name in registry.FILTERS and name not in _FILTER_AT_PRE_FILTER]
    filters += [name for name, _ in expanded["preFilter"]
                if name in _FILTER_AT_PRE_FILTER and name not in filters]
    score_weights = {name: weight for name, weight in merged["score"].enabled}
    multi_weights = {name: weight for name, weight in multi.enabled}
    scores = []
    for name, _ in expanded["score"]:
        if name not in registry.SCORES:
            continue
        weight = score_weights.get(name) if name in score_weights else multi_weights.get(name)
        scores.append({"name": name, "weight": weight or 1})
    post_filters = [name for name, _ in expanded["postFilter"]
                    if name in registry.POST_FILTERS]
    queue_sorts = [name for name, _ in expanded["queueSort"]]

    policy_plugins: dict[str, Any] = {
        "filter": {"enabled": [{"name": n} for n in filters]},
        "score": {"enabled": scores},
        "postFilter": {"enabled": [{"name": n} for n in post_filters]},
    }
    gang = "Coscheduling" in filters
    if len(queue_sorts) != 1:
        # The framework's own check (NewFramework), after the expansion.
        errors.append(f"{where}: kube-scheduler refuses the profile: "
                      + (f"only one queue sort plugin can be enabled, multiPoint and queueSort "
                         f"give {', '.join(queue_sorts)}; disable the others in "
                         "plugins.queueSort.disabled" if queue_sorts
                         else "no queue sort plugin is enabled"))
    elif queue_sorts == ["Coscheduling"]:
        if not gang:
            notes.append(f"{where}: Coscheduling's QueueSort without its PreFilter: the "
                         "simulator orders the queue by priority (PrioritySort)")
    elif queue_sorts and queue_sorts != ["PrioritySort"]:
        if all(n in registry.QUEUE_SORTS for n in queue_sorts):
            policy_plugins["queueSort"] = {"enabled": [{"name": n} for n in queue_sorts]}
        else:
            notes.append(f"{where}: queue sort {', '.join(queue_sorts)} is not simulated; the "
                         "simulator orders the queue by priority (PrioritySort)")
    if gang and len(queue_sorts) == 1 and queue_sorts != ["Coscheduling"]:
        notes.append(f"{where}: Coscheduling is enabled without its QueueSort "
                     f"({', '.join(queue_sorts) or 'none'}); the simulator orders the queue "
                     "with Coscheduling's QueueSort whenever Coscheduling runs")

    used = set(filters) | {s["name"] for s in scores} | set(post_filters) | set(queue_sorts)
    configs = []
    for entry in _list(profile.get("pluginConfig")):
        name = _dict(entry).get("name")
        if name not in registry.PLUGINS or name not in used:
            continue
        args = {k: v for k, v in _dict(_dict(entry).get("args")).items()
                if k not in ("apiVersion", "kind")}
        configs.append({"name": name, "args": args})
    if ignored_resources and "NodeResourcesFit" in used:
        # kube-scheduler adds every extender's ignoredByScheduler resources to the args.
        fit = next((c for c in configs if c["name"] == "NodeResourcesFit"), None)
        if fit is None:
            fit = {"name": "NodeResourcesFit", "args": {}}
            configs.append(fit)
        current = list(fit["args"].get("ignoredResources") or [])
        fit["args"]["ignoredResources"] = current + [r for r in ignored_resources
                                                     if r not in current]
    policy: dict[str, Any] = {"apiVersion": POLICY_API_VERSION, "kind": POLICY_KIND,
                              "plugins": policy_plugins}
    if configs:
        policy["pluginConfig"] = configs
    return policy


# -- extenders ----------------------------------------------------------------------------------


def _extender(raw: Any, where: str, notes: list[str], errors: list[str]) -> ExtenderSpec:
    raw = _dict(raw)
    managed = [_dict(r) for r in _list(raw.get("managedResources"))]
    timeout = raw.get("httpTimeout")
    timeout_s = DEFAULT_TIMEOUT
    if isinstance(timeout, str):
        timeout_s = parse_go_duration(timeout) or DEFAULT_TIMEOUT  # 0: the default
    tls = _dict(raw.get("tlsConfig"))
    for key in ("caData", "certData", "keyData"):
        if tls.get(key):
            errors.append(f"{where}.tlsConfig.{key}: not supported by the simulator yet; give "
                          "the file (caFile, certFile, keyFile)")
    if tls.get("serverName"):
        notes.append(f"{where}.tlsConfig.serverName: ignored by the simulator (the URL's host "
                     "is verified)")
    weight = _int(raw.get("weight"))
    return ExtenderSpec(
        url_prefix=str(raw.get("urlPrefix") or ""),
        filter_verb=str(raw.get("filterVerb") or ""),
        prioritize_verb=str(raw.get("prioritizeVerb") or ""),
        preempt_verb=str(raw.get("preemptVerb") or ""),
        bind_verb=str(raw.get("bindVerb") or ""),
        weight=weight if weight else 1,
        managed_resources=tuple(str(r.get("name")) for r in managed if r.get("name")),
        ignored_by_scheduler=tuple(str(r.get("name")) for r in managed
                                   if r.get("name") and r.get("ignoredByScheduler") is True),
        ignorable=raw.get("ignorable") is True,
        node_cache_capable=raw.get("nodeCacheCapable") is True,
        http_timeout=seconds(timeout_s),
        ca_file=tls.get("caFile") or None, cert_file=tls.get("certFile") or None,
        key_file=tls.get("keyFile") or None, insecure=tls.get("insecure") is True)


# -- the command line -------------------------------------------------------------------------


def load_for_cli(args: Any) -> tuple[SchedulerSetup, ExtenderPolicy]:
    """`extender simulate --config`: the setup and the policy of its first profile (the loop
    gives each pod the profile of its `spec.schedulerName`: `simulation_profiles`). Profiles
    one queue cannot serve are refused (`loop.check_profiles`: one QueueSort for all, as
    kube-scheduler requires; no Coscheduling with several)."""
    if getattr(args, "extender", None):
        raise SchedulerConfigError([
            f"--extender cannot be combined with --config {args.config}: list the extenders in "
            "its extenders[]"])
    setup = load_scheduler_config(args.config)
    if len(setup.profiles) > 1:
        from extender.engine.profile import build_profile
        from extender.simulator.loop import SchedulingProfile, check_profiles

        try:
            check_profiles([SchedulingProfile(p.scheduler_name, build_profile(p.extender_policy()))
                            for p in setup.profiles])
        except ValueError as exc:
            raise SchedulerConfigError([f"{setup.source}: profiles: {exc}"]) from None
    return setup, setup.profiles[0].extender_policy()


def simulation_profiles(setup: SchedulerSetup, first: Any,
                        percentage: int | None = None) -> list[Any]:
    """The loop's profiles (`loop.SchedulingProfile`), in the file's order: `first` is the
    first profile's built `Profile` (the caller has it already); `percentage` an explicit
    `--percentage-of-nodes-to-score`, which wins over every profile's."""
    from extender.engine.profile import build_profile
    from extender.simulator.loop import SchedulingProfile

    return [SchedulingProfile(
        p.scheduler_name, first if i == 0 else build_profile(p.extender_policy()),
        p.percentage_of_nodes_to_score if percentage is None else percentage)
        for i, p in enumerate(setup.profiles)]


def config_overrides(args: Any, setup: SchedulerSetup, workload: Any = None) -> None:
    """Fill the run's settings the command line left unset from the file, and tell what the
    simulation does differently from kube-scheduler with this file (stderr)."""
    import sys

    profile = setup.profiles[0]
    if args.percentage_of_nodes_to_score is None:
        args.percentage_of_nodes_to_score = profile.percentage_of_nodes_to_score
    if args.pod_initial_backoff is None:
        args.pod_initial_backoff = setup.pod_initial_backoff
    if args.pod_max_backoff is None:
        args.pod_max_backoff = setup.pod_max_backoff
    notes = list(setup.warnings)
    if workload is not None:
        notes += scheduler_name_warnings(setup, _scheduler_names(workload))
    for note in notes:
        print(f"warning: {note}", file=sys.stderr)


def _scheduler_names(workload: Any) -> list[str]:
    """The scheduler names of the workload's pods: those known now, and the templates of the
    controllers that create theirs later only (DaemonSets)."""
    names = [a.pod.scheduler_name for a in workload.arrivals]
    with_pods = {id(a.controller) for a in workload.arrivals if a.controller is not None}
    names += [str(c.template.spec.get("schedulerName") or "") for c in workload.controllers
              if id(c) not in with_pods]
    return names


def scheduler_name_warnings(setup: SchedulerSetup, names: Iterable[str]) -> list[str]:
    """The pods' scheduler names no profile has: kube-scheduler leaves those pods to another
    scheduler, and so does the simulator (they stay Pending)."""
    counts: dict[str, int] = {}
    for name in names:
        name = name or DEFAULT_SCHEDULER_NAME
        if setup.profile_for(name) is None:
            counts[name] = counts.get(name, 0) + 1
    return [f"{n} workload pod(s) name schedulerName {name!r}, which no profile "
            f"of {setup.source} has ({', '.join(setup.scheduler_names)}): kube-scheduler "
            "leaves them to another scheduler; they stay Pending"
            for name, n in sorted(counts.items())]


def dump_policy(profile: ProfileSetup) -> str:
    """The profile's policy as YAML (what `--config` runs, for a user to read or reuse)."""
    return yaml.safe_dump(profile.policy, sort_keys=False)
