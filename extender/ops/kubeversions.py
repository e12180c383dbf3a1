"""What a given kube-scheduler release accepts: configuration API versions and plugin names.

`check-config --kubernetes-version 1.N` checks a KubeSchedulerConfiguration against release
1.N (default: the newest the engine follows, `extender.engine.args.NEWEST_VERSION`). A plugin
name is known when release 1.N has it in tree, or when the extender's own registry has it (an
out-of-tree plugin such as Coscheduling, which the extender implements and a scheduler built
with scheduler-plugins runs): the registry is read, never copied here.

Sources (kubernetes/kubernetes unless said otherwise):

- API versions: KEP-785 (v1beta2 1.22–1.27, v1beta3 1.23–1.28, v1 from 1.25), PR #104782
  (v1beta1 removed in 1.23), PR #117649 (v1beta2 removed in 1.28), PR #119994 (v1beta3 removed
  in 1.29).
- In-tree plugins: pkg/scheduler/framework/plugins/names/names.go and `NewInTreeRegistry` in
  pkg/scheduler/framework/plugins/registry.go, across releases: DynamicResources and
  SchedulingGates appear in 1.26; SelectorSpread leaves the v1 API in 1.25 (KEP-785, kubernetes/
  enhancements PR #3440) and the tree in 1.29 (PR #117720); AzureDiskLimits, CinderLimits,
  EBSLimits and GCEPDLimits are deprecated in 1.31 (PR #124500) and removed in 1.32 (PR
  #124003); GangScheduling and NodeDeclaredFeatures come with their 1.35 feature gates,
  TopologyPlacementGenerator and PodGroupPodsCount with TopologyAwareWorkloadScheduling (1.36)
  (pkg/features/kube_features.go).
"""

from __future__ import annotations

from dataclasses import dataclass

from extender.engine.args import NEWEST_VERSION, OLDEST_VERSION, Version
from extender.model.names import suggest

GROUP = "kubescheduler.config.k8s.io"
API_V1 = f"{GROUP}/v1"


@dataclass(frozen=True)
class Span:
    """Releases `first`..`last` (inclusive; `last` None: still there)."""

    first: Version
    last: Version | None = None

    def has(self, version: Version) -> bool:
        return self.first <= version and (self.last is None or version <= self.last)


#: KubeSchedulerConfiguration API versions and the releases that decode them.
API_VERSIONS: dict[str, Span] = {
    f"{GROUP}/v1beta1": Span((1, 19), (1, 22)),
    f"{GROUP}/v1beta2": Span((1, 22), (1, 27)),
    f"{GROUP}/v1beta3": Span((1, 23), (1, 28)),
    API_V1: Span((1, 25)),
}
#: Served by kube-scheduler releases before the oldest this project knows (1.18-1.19).
RETIRED_API_VERSIONS = frozenset({f"{GROUP}/v1alpha1", f"{GROUP}/v1alpha2"})
#: Deprecated from this release on (still decoded, with a warning).
API_DEPRECATED: dict[str, Version] = {f"{GROUP}/v1beta2": (1, 25), f"{GROUP}/v1beta3": (1, 26)}

_ALWAYS = Span(OLDEST_VERSION)
#: kube-scheduler's in-tree plugins (names.go) and the releases that have them, from 1.25 on.
IN_TREE_PLUGINS: dict[str, Span] = {
    "PrioritySort": _ALWAYS,
    "DefaultBinder": _ALWAYS,
    "DefaultPreemption": _ALWAYS,
    "ImageLocality": _ALWAYS,
    "InterPodAffinity": _ALWAYS,
    "NodeAffinity": _ALWAYS,
    "NodeName": _ALWAYS,
    "NodePorts": _ALWAYS,
    "NodeResourcesBalancedAllocation": _ALWAYS,
    "NodeResourcesFit": _ALWAYS,
    "NodeUnschedulable": _ALWAYS,
    "NodeVolumeLimits": _ALWAYS,
    "PodTopologySpread": _ALWAYS,
    "TaintToleration": _ALWAYS,
    "VolumeBinding": _ALWAYS,
    "VolumeRestrictions": _ALWAYS,
    "VolumeZone": _ALWAYS,
    "AzureDiskLimits": Span(OLDEST_VERSION, (1, 31)),
    "CinderLimits": Span(OLDEST_VERSION, (1, 31)),
    "EBSLimits": Span(OLDEST_VERSION, (1, 31)),
    "GCEPDLimits": Span(OLDEST_VERSION, (1, 31)),
    "SelectorSpread": Span(OLDEST_VERSION, (1, 28)),
    "DynamicResources": Span((1, 26)),
    "SchedulingGates": Span((1, 26)),
    "GangScheduling": Span((1, 35)),
    "NodeDeclaredFeatures": Span((1, 35)),
    "TopologyPlacementGenerator": Span((1, 36)),
    "PodGroupPodsCount": Span((1, 36)),
}
#: Plugins an API version refuses by name even while the tree still has them.
API_REFUSED: dict[str, tuple[str, ...]] = {API_V1: ("SelectorSpread",)}
#: What to use instead of a plugin that is gone.
REPLACEMENTS: dict[str, str] = {
    "AzureDiskLimits": "NodeVolumeLimits", "CinderLimits": "NodeVolumeLimits",
    "EBSLimits": "NodeVolumeLimits", "GCEPDLimits": "NodeVolumeLimits",
    "SelectorSpread": "PodTopologySpread",
    # removed with the v1beta2 API (before 1.25)
    "NodeLabel": "NodeAffinity", "ServiceAffinity": "InterPodAffinity",
    "NodePreferAvoidPods": "node taints (TaintToleration)",
    "NodeResourcesLeastAllocated": "NodeResourcesFit's scoringStrategy LeastAllocated",
    "NodeResourcesMostAllocated": "NodeResourcesFit's scoringStrategy MostAllocated",
    "RequestedToCapacityRatio": "NodeResourcesFit's scoringStrategy RequestedToCapacityRatio",
}


def format_version(version: Version) -> str:
    return f"{version[0]}.{version[1]}"


def in_tree_plugins(version: Version) -> set[str]:
    return {name for name, span in IN_TREE_PLUGINS.items() if span.has(version)}


def extender_plugins() -> set[str]:
    """The plugins the extender's engine registry knows (in-tree and out-of-tree)."""
    from extender.engine import registry

    return set(registry.PLUGINS)


def known_plugins(version: Version) -> set[str]:
    return in_tree_plugins(version) | extender_plugins()


def out_of_tree_plugins() -> set[str]:
    """The registry's plugins a stock kube-scheduler does not have (scheduler-plugins')."""
    return extender_plugins() - set(IN_TREE_PLUGINS)


def plugin_problem(name: str, version: Version, api_version: str) -> str | None:
    """Why `name` cannot be used with this release and API version, or None if it can."""
    release = f"kube-scheduler {format_version(version)}"
    if name in API_REFUSED.get(api_version, ()):
        instead = REPLACEMENTS.get(name)
        return (f"plugin {name} is not available in {api_version}"
                + (f"; use {instead}" if instead else ""))
    if name in in_tree_plugins(version):
        return None
    if name in out_of_tree_plugins():
        from extender.engine import registry

        if registry.PLUGINS[name].extension_points == ("queueSort",):
            return (f"plugin {name} is a scheduler-plugins queue sort, not in {release}: no "
                    "extender verb can order kube-scheduler's queue; the extender's simulator "
                    "runs it (plugins.queueSort in an ExtenderPolicy)")
        if name in registry.SIMULATOR_ONLY_POST_FILTERS:
            return (f"plugin {name} is a scheduler-plugins PostFilter, not in {release}: the "
                    "extender's preempt verb cannot carry victims on other nodes; the "
                    "extender's simulator runs it (plugins.postFilter in an ExtenderPolicy)")
        return (f"plugin {name} is a scheduler-plugins plugin, not in {release}: enable it in "
                "the extender's ExtenderPolicy instead, which brings it to a stock "
                "kube-scheduler through the extender verbs")
    span = IN_TREE_PLUGINS.get(name)
    instead = REPLACEMENTS.get(name)
    use = f"; use {instead}" if instead else ""
    if span is not None and span.last is not None and version > span.last:
        removed = format_version((span.last[0], span.last[1] + 1))
        return f"plugin {name} was removed in Kubernetes {removed}: {release} does not have it{use}"
    if span is not None and version < span.first:
        return (f"plugin {name} is new in Kubernetes {format_version(span.first)}: {release} "
                "does not have it yet")
    if instead:
        return f"plugin {name} was removed before Kubernetes 1.25{use}"
    return (f"unknown plugin {name!r}: {release} has no in-tree plugin of that name"
            f"{suggest(name, sorted(in_tree_plugins(version)))}")


def api_version_problem(api_version: str, version: Version) -> tuple[str, str] | None:
    """(severity, message) when release `version` refuses or deprecates `api_version`."""
    span = API_VERSIONS.get(api_version)
    release = format_version(version)
    if span is None:
        return None
    if span.last is not None and version > span.last:
        removed = format_version((span.last[0], span.last[1] + 1))
        return ("error", f"{api_version} was removed in Kubernetes {removed}: kube-scheduler "
                         f"{release} refuses this file; migrate it to {API_V1}")
    if version < span.first:
        return ("error", f"{api_version} is new in Kubernetes {format_version(span.first)}: "
                         f"kube-scheduler {release} does not read it")
    deprecated = API_DEPRECATED.get(api_version)
    if deprecated is not None and version >= deprecated:
        last = span.last or NEWEST_VERSION
        return ("warning", f"{api_version} is deprecated since Kubernetes "
                           f"{format_version(deprecated)} and removed in "
                           f"{format_version((last[0], last[1] + 1))}; use {API_V1}")
    return None
