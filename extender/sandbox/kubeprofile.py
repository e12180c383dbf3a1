"""A policy or a KubeSchedulerConfiguration as the configuration a real kube-scheduler runs.

`extender simulate --on-sandbox` gives the sandbox's kube-scheduler what the simulator runs:
with `--config`, the file itself (its profiles, pluginConfig, percentageOfNodesToScore and
backoffs; the client connection and leader election are the sandbox's); with `--policy`, a
profile whose plugins are exactly the policy's (`policy_profile`): every default disabled, the
policy's plugins enabled in multiPoint (so each runs at every extension point it has, as
kube-scheduler registers it), each filter kept out of Score where the policy does not score
with it, each scorer out of PreFilter/Filter where the policy does not filter with it, and the
score weights and pluginConfig as written. PostFilter runs in the simulator's order (the policy's
plugin, then Coscheduling's), after DynamicResources where the simulator writes its word
into every FitError (1.34 to 1.36). The simulator reads such a profile back to the same
plugins (`simulator.schedulerconfig`), which the tests hold.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from extender.engine.policy import ExtenderPolicy, effective_plugins

#: The plugins kube-scheduler itself has (the engine's names are upstream's).
IN_TREE = frozenset({
    "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
    "NodePorts", "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity",
    "NodeResourcesBalancedAllocation", "ImageLocality", "DefaultPreemption",
    "SchedulingGates", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
    "DefaultBinder", "DynamicResources", "*",
})
#: What scheduler-plugins' kube-scheduler adds (`sigs.k8s.io/scheduler-plugins/cmd/scheduler`).
SCHEDULER_PLUGINS = frozenset({
    "Coscheduling", "CapacityScheduling", "NodeResourcesAllocatable", "PodState",
    "PreemptionToleration", "QOSSort", "NodeResourceTopologyMatch", "NetworkOverhead",
    "TopologicalSort", "TargetLoadPacking", "LoadVariationRiskBalancing",
    "LowRiskOverCommitment", "CrossNodePreemption",
})
#: Plugins that bring their own QueueSort (PrioritySort then must not be enabled).
OWN_QUEUE_SORT = frozenset({"Coscheduling"})


class ProfileError(ValueError):
    """A policy or configuration the sandbox's kube-scheduler cannot run as the simulator
    does."""


def unknown_plugins(names: Iterable[str], scheduler_plugins: bool) -> list[str]:
    known = IN_TREE | (SCHEDULER_PLUGINS if scheduler_plugins else frozenset())
    return sorted({n for n in names if n not in known})


def policy_profile(policy: ExtenderPolicy, scheduler_name: str, *,
                   scheduler_plugins: bool = False) -> dict[str, Any]:
    """The KubeSchedulerConfiguration profile that runs exactly the policy's plugins."""
    plugins = policy.plugins
    filters = [n for n, _ in effective_plugins("filter", plugins.filter)]
    scores = effective_plugins("score", plugins.score)
    post = [n for n, _ in effective_plugins("postFilter", plugins.post_filter)]
    sorts = [n for n, _ in effective_plugins("queueSort", plugins.queue_sort)]
    if any(n in OWN_QUEUE_SORT for n in filters):
        sorts = []  # Coscheduling's QueueSort comes with it, as in the simulator
    score_names = [n for n, _ in scores]
    every = list(dict.fromkeys([*sorts, *filters, *score_names, *post]))
    missing = unknown_plugins(every, scheduler_plugins)
    if missing:
        hint = "" if scheduler_plugins else (
            " (scheduler-plugins' plugins need --scheduler-plugins: a kube-scheduler built "
            "with them)")
        raise ProfileError(f"the sandbox's kube-scheduler has no plugin {', '.join(missing)}"
                           f"{hint}")
    # PostFilter order as the simulator runs it: DynamicResources where its word is in every
    # FitError (1.34–1.36, as the simulator writes it), the policy's, then Coscheduling's.
    dra = ["DynamicResources"] if _dra_speaks(policy) else []
    profile: dict[str, Any] = {
        "schedulerName": scheduler_name,
        "plugins": {
            "multiPoint": {"enabled": [{"name": n} for n in [*every, *dra, "DefaultBinder"]],
                           "disabled": [{"name": "*"}]},
            "postFilter": {"enabled": [{"name": n} for n in [*dra, *post]]},
            "score": {"enabled": [{"name": n, "weight": w or 1} for n, w in scores],
                      "disabled": [{"name": n} for n in every
                                   if n not in score_names and n in filters]},
            "preFilter": {"disabled": [{"name": n} for n in every
                                       if n in score_names and n not in filters]},
            "filter": {"disabled": [{"name": n} for n in every
                                    if n in score_names and n not in filters]},
        },
    }
    config = [{"name": c.name, "args": dict(c.args)} for c in policy.plugin_config
              if c.name in every]
    if config:
        profile["pluginConfig"] = config
    return profile


def _dra_speaks(policy: ExtenderPolicy) -> bool:
    from extender.engine.args import parse_version
    from extender.simulator.records import dra_speaks

    return dra_speaks(parse_version(policy.kubernetes_version))


#: Keys of a KubeSchedulerConfiguration the sandbox sets itself.
SANDBOX_KEYS = ("apiVersion", "kind", "clientConnection", "leaderElection")


def config_settings(config: Mapping[str, Any], *, scheduler_plugins: bool = False,
                    ) -> dict[str, Any]:
    """What of a user's KubeSchedulerConfiguration the sandbox's kube-scheduler takes: all
    but the client connection and leader election. Extenders are refused: `--on-sandbox`
    compares the simulator with kube-scheduler's own plugins."""
    if config.get("extenders"):
        raise ProfileError("--on-sandbox runs kube-scheduler without extenders; the "
                           "configuration's extenders[] cannot be replayed (remove them, or "
                           "replay with a policy)")
    names: list[str] = []
    for profile in config.get("profiles") or []:
        for point in ((profile or {}).get("plugins") or {}).values():
            names += [str(p["name"]) for p in (point or {}).get("enabled") or ()
                      if isinstance(p, Mapping) and p.get("name")]
    missing = unknown_plugins(names, scheduler_plugins)
    if missing:
        raise ProfileError(f"the sandbox's kube-scheduler has no plugin {', '.join(missing)}"
                           + ("" if scheduler_plugins else " (scheduler-plugins' plugins need "
                              "--scheduler-plugins)"))
    return {k: v for k, v in config.items() if k not in SANDBOX_KEYS}
