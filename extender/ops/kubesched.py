"""Checks for `KubeSchedulerConfiguration` (kubescheduler.config.k8s.io/v1, v1beta3 tolerated).

The schema mirrors `k8s.io/kube-scheduler/config/v1` (types.go, types_pluginargs.go) and the
rules mirror `pkg/scheduler/apis/config/validation` plus the start-up checks in
`pkg/scheduler/scheduler.go` (`buildExtenders`) and client-go's TLS set-up, so a file that passes
here is one kube-scheduler will start with. Facts: shared/reference/protocol.md §3, §7.
"""

from __future__ import annotations

from typing import Any

from extender.ops.fields import (
    Anything,
    Base64,
    Bool,
    Duration,
    Int,
    List,
    Num,
    Obj,
    Str,
    child,
    extended_resource_errors,
    parse_go_duration,
)
from extender.ops.fields import (
    as_dict as _dict,
)
from extender.ops.fields import (
    as_int as _int,
)
from extender.ops.fields import (
    as_list as _list,
)
from extender.ops.problems import Collector

GROUP = "kubescheduler.config.k8s.io"
API_V1 = f"{GROUP}/v1"
API_V1BETA3 = f"{GROUP}/v1beta3"
KIND = "KubeSchedulerConfiguration"

EXTENSION_POINTS = (
    "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
    "reserve", "permit", "preBind", "bind", "postBind", "multiPoint",
    # workload-aware scheduling (newer than v1.34); decoding accepts them on those versions
    "placementGenerate", "placementScore", "placementFeasible", "podGroupPostFilter",
)

_PLUGIN = Obj({"name": Str(), "weight": Int(32)})
_PLUGIN_SET = Obj({"enabled": List(_PLUGIN), "disabled": List(_PLUGIN)})
_RESOURCE_SPEC = Obj({"name": Str(), "weight": Int(64)})
_SHAPE_POINT = Obj({"utilization": Int(32), "score": Int(32)})
_SCORING_STRATEGY = Obj({
    "type": Str(("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")),
    "resources": List(_RESOURCE_SPEC),
    "requestedToCapacityRatio": Obj({"shape": List(_SHAPE_POINT)}),
})

# Arguments of in-tree plugins are decoded strictly too (PluginConfig.decodeNestedObjects).
# Nested core/v1 types (affinity, spread constraints) are only checked for being mappings/lists.
PLUGIN_ARGS: dict[str, Obj] = {
    "DefaultPreemption": Obj({"minCandidateNodesPercentage": Int(32),
                              "minCandidateNodesAbsolute": Int(32)}, type_meta=True),
    "InterPodAffinity": Obj({"hardPodAffinityWeight": Int(32),
                             "ignorePreferredTermsOfExistingPods": Bool()}, type_meta=True),
    "NodeResourcesFit": Obj({"ignoredResources": List(Str()), "ignoredResourceGroups": List(Str()),
                             "scoringStrategy": _SCORING_STRATEGY}, type_meta=True),
    "NodeResourcesBalancedAllocation": Obj({"resources": List(_RESOURCE_SPEC)}, type_meta=True),
    "PodTopologySpread": Obj({"defaultConstraints": List(Anything()),
                              "defaultingType": Str(("System", "List"))}, type_meta=True),
    "VolumeBinding": Obj({"bindTimeoutSeconds": Int(64), "shape": List(_SHAPE_POINT)},
                         type_meta=True),
    "NodeAffinity": Obj({"addedAffinity": Obj({
        "requiredDuringSchedulingIgnoredDuringExecution": Anything(),
        "preferredDuringSchedulingIgnoredDuringExecution": Anything()})}, type_meta=True),
    "DynamicResources": Obj({"filterTimeout": Duration(), "bindingTimeout": Duration()},
                            type_meta=True),
}

TLS_CONFIG = Obj({
    "insecure": Bool(), "serverName": Str(), "certFile": Str(), "keyFile": Str(), "caFile": Str(),
    "certData": Base64(), "keyData": Base64(), "caData": Base64(),
})
EXTENDER = Obj({
    "urlPrefix": Str(), "filterVerb": Str(), "preemptVerb": Str(), "prioritizeVerb": Str(),
    "weight": Int(64), "bindVerb": Str(), "enableHTTPS": Bool(), "tlsConfig": TLS_CONFIG,
    "httpTimeout": Duration(), "nodeCacheCapable": Bool(),
    "managedResources": List(Obj({"name": Str(), "ignoredByScheduler": Bool()})),
    "ignorable": Bool(),
})
_PROFILE = Obj({
    "schedulerName": Str(), "percentageOfNodesToScore": Int(32),
    "percentageOfPlacementsToScore": Int(32),
    "plugins": Obj({point: _PLUGIN_SET for point in EXTENSION_POINTS}),
    "pluginConfig": List(Obj({"name": Str(), "args": Anything()})),
})
CONFIGURATION = Obj({
    "apiVersion": Str(), "kind": Str(),
    "parallelism": Int(32),
    "leaderElection": Obj({
        "leaderElect": Bool(), "leaseDuration": Duration(), "renewDeadline": Duration(),
        "retryPeriod": Duration(), "resourceLock": Str(), "resourceName": Str(),
        "resourceNamespace": Str()}),
    "clientConnection": Obj({"kubeconfig": Str(), "acceptContentTypes": Str(),
                             "contentType": Str(), "qps": Num(), "burst": Int(32)}),
    "enableProfiling": Bool(), "enableContentionProfiling": Bool(),
    "percentageOfNodesToScore": Int(32), "percentageOfPlacementsToScore": Int(32),
    "podInitialBackoffSeconds": Int(64), "podMaxBackoffSeconds": Int(64),
    "profiles": List(_PROFILE),
    "extenders": List(EXTENDER),
    "delayCacheUntilActive": Bool(),
})


def check_configuration(doc: dict[str, Any], out: Collector) -> None:
    """All checks for one KubeSchedulerConfiguration document."""
    if doc.get("apiVersion") == API_V1BETA3:
        out.warning("apiVersion", f"{API_V1BETA3} is deprecated since v1.26 and removed in "
                    f"v1.29; use {API_V1}")
    CONFIGURATION.check(doc, "", out)
    profiles = _list(doc.get("profiles"))
    _check_top_level(doc, out)
    _check_profiles(profiles, out)
    check_extenders(_list(doc.get("extenders")), profiles, out)


def _seconds(value: Any, default: float) -> float | None:
    if value is None:
        return default
    try:
        return parse_go_duration(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _check_top_level(doc: dict[str, Any], out: Collector) -> None:
    parallelism = _int(doc.get("parallelism"))
    if parallelism is not None and parallelism <= 0:
        out.error("parallelism", "should be an integer value greater than zero")
    _check_percentage("percentageOfNodesToScore", doc.get("percentageOfNodesToScore"), out)
    initial = _int(doc.get("podInitialBackoffSeconds"))
    maximum = _int(doc.get("podMaxBackoffSeconds"))
    if initial is not None and initial <= 0:
        out.error("podInitialBackoffSeconds", "must be greater than 0")
    if (maximum if maximum is not None else 10) < (initial if initial is not None else 1):
        out.error("podMaxBackoffSeconds", "must be greater than or equal to podInitialBackoffSeconds")
    burst = _int(_dict(doc.get("clientConnection")).get("burst"))
    if burst is not None and burst < 0:
        out.error("clientConnection.burst", "must be non-negative")
    _check_leader_election(_dict(doc.get("leaderElection")), out)


def _check_leader_election(le: dict[str, Any], out: Collector) -> None:
    """component-base rules, after kube-scheduler's defaulting (empty and zero values are
    replaced by leases, kube-scheduler, 15s/10s/2s)."""
    if le.get("leaderElect") is False:
        return
    lock = le.get("resourceLock")
    if lock and lock != "leases":
        out.error("leaderElection.resourceLock", 'resourceLock value must be "leases"')
    defaults = {"leaseDuration": 15.0, "renewDeadline": 10.0, "retryPeriod": 2.0}
    durations = {}
    for name, default in defaults.items():
        value = _seconds(le.get(name), default)
        durations[name] = default if value == 0 else value
        if value is not None and value < 0:
            out.error(f"leaderElection.{name}", "must be greater than zero")
    lease, renew = durations["leaseDuration"], durations["renewDeadline"]
    if lease is not None and renew is not None and 0 < lease <= renew:
        out.error("leaderElection.leaseDuration", "must be greater than renewDeadline")


def _check_percentage(path: str, value: Any, out: Collector) -> None:
    number = _int(value)
    if number is not None and not 0 <= number <= 100:
        out.error(path, "not in valid range [0-100]")


def _check_profiles(profiles: list[Any], out: Collector) -> None:
    names: dict[str, int] = {}
    for i, profile in enumerate(profiles):
        path = child("profiles", i)
        if not isinstance(profile, dict):
            continue
        name = profile.get("schedulerName")
        if not name and len(profiles) > 1:  # a lone profile defaults to default-scheduler
            out.error(child(path, "schedulerName"), "required when there are several profiles")
        if isinstance(name, str) and name:
            if name in names:
                out.error(child(path, "schedulerName"),
                          f"duplicate: {name!r} is already used by profiles[{names[name]}]")
            names.setdefault(name, i)
        _check_percentage(child(path, "percentageOfNodesToScore"),
                          profile.get("percentageOfNodesToScore"), out)
        _check_plugin_config(_list(profile.get("pluginConfig")), child(path, "pluginConfig"), out)
    _check_common_queue_sort(profiles, out)


def _check_plugin_config(configs: list[Any], path: str, out: Collector) -> None:
    seen: set[str] = set()
    for j, config in enumerate(configs):
        config = _dict(config)
        name = config.get("name")
        where = child(path, j)
        if not isinstance(name, str):
            continue
        if name in seen:
            out.error(child(where, "name"), f"duplicate configuration for plugin {name!r}")
        seen.add(name)
        spec = PLUGIN_ARGS.get(name)
        if spec is not None:  # out-of-tree plugin args are not decoded by kube-scheduler
            args = config.get("args")
            spec.check(args, child(where, "args"), out)
            kind = _dict(args).get("kind")
            if kind is not None and kind != f"{name}Args":
                out.error(child(child(where, "args"), "kind"),
                          f"args for plugin {name} must be of kind {name}Args, got {kind!r}")


def _check_common_queue_sort(profiles: list[Any], out: Collector) -> None:
    def queue_sort(profile: Any) -> Any:
        return _dict(_dict(_dict(profile).get("plugins")).get("queueSort")) or None

    if not profiles:
        return
    first = queue_sort(profiles[0])
    if len(_list(_dict(first).get("enabled"))) > 1:
        out.error("profiles[0].plugins.queueSort.enabled", "only one queue sort plugin can be enabled")
    for i in range(1, len(profiles)):
        if queue_sort(profiles[i]) != first:
            out.error(f"profiles[{i}].plugins.queueSort", "must be the same for all profiles")


def _has_fit_args(profile: dict[str, Any]) -> bool:
    """Whether the defaulted profile holds NodeResourcesFitArgs (needed for ignoredByScheduler).

    Defaulting adds args for every enabled in-tree plugin; NodeResourcesFit drops out only when
    multiPoint disables it (or '*') and no extension point enables it again.
    """
    if any(_dict(c).get("name") == "NodeResourcesFit" for c in _list(profile.get("pluginConfig"))):
        return True
    plugins = _dict(profile.get("plugins"))
    for plugin_set in plugins.values():
        if any(_dict(p).get("name") == "NodeResourcesFit"
               for p in _list(_dict(plugin_set).get("enabled"))):
            return True
    disabled = {_dict(p).get("name") for p in _list(_dict(plugins.get("multiPoint")).get("disabled"))}
    return not ({"*", "NodeResourcesFit"} & disabled)


def check_extenders(extenders: list[Any], profiles: list[Any] | None, out: Collector, *,
                    https_key: str = "enableHTTPS") -> None:
    """`validateExtenders` plus the start-up checks that make kube-scheduler exit.

    The legacy Policy file shares these rules; it passes `profiles=None` (it has none) and its
    own spelling `enableHttps`.
    """
    binders: list[int] = []
    managed: dict[str, str] = {}
    ignored_by_scheduler: list[str] = []
    for i, extender in enumerate(extenders):
        path = child("extenders", i)
        if not isinstance(extender, dict):
            continue
        weight = _int(extender.get("weight"))
        if extender.get("prioritizeVerb") and (weight is None or weight <= 0):
            out.error(child(path, "weight"),
                      "must have a positive weight applied to it (prioritizeVerb is set)")
        if extender.get("bindVerb"):
            binders.append(i)
            if extender.get("ignorable") is True:
                out.warning(child(path, "ignorable"), "with bindVerb: kube-scheduler 1.30 and "
                            "later skips this extender's failed bind and binds the pod itself "
                            "(before 1.30 the bind fails), so what the extender's bind does is "
                            "then left undone")
        for j, resource in enumerate(_list(extender.get("managedResources"))):
            where = child(child(child(path, "managedResources"), j), "name")
            name = _dict(resource).get("name")
            if not isinstance(name, str):
                out.error(where, "required")
                continue
            for message in extended_resource_errors(name):
                out.error(where, message)
            if name in managed:
                out.error(where, f"duplicate extender managed resource name (also {managed[name]})")
            managed.setdefault(name, where)
            if _dict(resource).get("ignoredByScheduler") is True:
                ignored_by_scheduler.append(where)
        _check_transport(extender, path, out, https_key)
    if len(binders) > 1:
        out.error("extenders", f"only one extender can implement bind (found {len(binders)}: "
                  + ", ".join(f"extenders[{i}]" for i in binders) + ")")
    if ignored_by_scheduler and profiles is not None:
        _check_fit_args_for_ignored(profiles, ignored_by_scheduler, out)


def _check_fit_args_for_ignored(profiles: list[Any], sources: list[str], out: Collector) -> None:
    for i, profile in enumerate(profiles or [{}]):
        if not _has_fit_args(_dict(profile)):
            out.error(child("profiles", i),
                      "NodeResourcesFit is disabled, but kube-scheduler needs its args to add the "
                      f"ignoredByScheduler resources ({sources[0]}) to ignoredResources: it fails "
                      "to start with \"can't find NodeResourcesFitArgs\"; enable NodeResourcesFit "
                      "or add a pluginConfig entry for it")


def _check_transport(extender: dict[str, Any], path: str, out: Collector, https_key: str) -> None:
    url = extender.get("urlPrefix")
    if not url:
        out.error(child(path, "urlPrefix"), "required: kube-scheduler POSTs to <urlPrefix>/<verb>")
    elif isinstance(url, str) and not url.startswith(("http://", "https://")):
        out.error(child(path, "urlPrefix"), "must start with http:// or https://")
    for verb in ("filterVerb", "prioritizeVerb", "preemptVerb", "bindVerb"):
        value = extender.get(verb)
        if isinstance(value, str) and value.startswith("/"):
            out.warning(child(path, verb), f"leading '/' gives the URL '<urlPrefix>//{value[1:]}'; "
                        f"write {value.lstrip('/')!r}")
    timeout = extender.get("httpTimeout")
    if https_key == "enableHTTPS" and isinstance(timeout, str):
        seconds = _seconds(timeout, 5.0)
        if seconds is not None and seconds < 0:
            out.error(child(path, "httpTimeout"), "negative: every call would time out at once")
        elif seconds == 0:
            out.warning(child(path, "httpTimeout"), "0 means kube-scheduler's default of 5s")
    https = isinstance(url, str) and url.startswith("https://")
    tls = _dict(extender.get("tlsConfig"))
    has_ca = bool(tls.get("caFile") or tls.get("caData"))
    if extender.get(https_key) is True and not https and isinstance(url, str) and url:
        out.warning(child(path, https_key), "does not change the scheme: urlPrefix is http://, "
                    "so the calls stay unencrypted; use an https:// urlPrefix")
    if tls and not https and isinstance(url, str) and url.startswith("http://"):
        out.warning(child(path, "tlsConfig"), "is unused with an http:// urlPrefix")
    if https and extender.get(https_key) is True and not has_ca and not tls.get("insecure"):
        out.warning(child(path, https_key), "without tlsConfig.caFile/caData kube-scheduler "
                    "turns server certificate verification off (insecure); set a CA")
    if tls.get("insecure") is True and has_ca:
        out.error(child(path, "tlsConfig.insecure"), "cannot be combined with a CA (caFile/caData): "
                  "client-go refuses the TLS configuration and kube-scheduler exits")
    if bool(tls.get("certFile") or tls.get("certData")) != bool(tls.get("keyFile") or tls.get("keyData")):
        out.error(child(path, "tlsConfig"), "a client certificate (certFile/certData) and its key "
                  "(keyFile/keyData) must be given together")
