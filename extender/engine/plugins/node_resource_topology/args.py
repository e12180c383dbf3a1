"""`NodeResourceTopologyMatchArgs` (scheduler-plugins `apis/config`, v1 names and defaults).

Validation is upstream's (`ValidateNodeResourceTopologyMatchArgs`): `scoringStrategy.type` must
be one of the four strategies and `preemptionMode`, when given, `Disabled` or `Enabled`. The
other fields are typed strings upstream and not checked; weights below 1 count as 1.
"""

from __future__ import annotations

from pydantic import Field, field_validator

from extender.engine.args import _Args

SCORING_STRATEGIES = ("MostAllocated", "BalancedAllocation", "LeastAllocated", "LeastNUMANodes")
PREEMPTION_MODES = ("Disabled", "Enabled")


class NRTResourceSpec(_Args):
    """`schedconfig.ResourceSpec`: a resource and its weight (weight < 1 means 1)."""

    name: str = ""
    weight: int = 0


def _default_resources() -> list[NRTResourceSpec]:
    return [NRTResourceSpec(name="cpu", weight=1), NRTResourceSpec(name="memory", weight=1)]


class NRTScoringStrategy(_Args):
    #: No default inside a given `scoringStrategy` (v1 defaults the whole strategy only).
    type: str = Field(default="", validate_default=True)
    resources: list[NRTResourceSpec] = Field(default_factory=_default_resources)

    @field_validator("type")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in SCORING_STRATEGIES:
            raise ValueError(f'Invalid value: "{value}": invalid ScoringStrategyType')
        return value

    @field_validator("resources")
    @classmethod
    def _defaulted(cls, resources: list[NRTResourceSpec]) -> list[NRTResourceSpec]:
        # SetDefaults_NodeResourceTopologyMatchArgs: no resources -> cpu and memory; weight 0 -> 1
        if not resources:
            return _default_resources()
        return [r if r.weight else NRTResourceSpec(name=r.name, weight=1) for r in resources]

    def weight(self, name: str) -> int:
        """`resourceToWeightMap.weight`: the configured weight, 1 if absent or below 1."""
        found = 0
        for spec in self.resources:
            if spec.name == name:
                found = spec.weight  # a repeated name: the last entry wins, as the map does
        return found if found >= 1 else 1


class NodeResourceTopologyCache(_Args):
    """`cache`: how the overreserve cache resyncs (`TopologyStore`): `resyncMethod` (which pods
    the fingerprint counts), `informerMode` (which pods the lister counts: Dedicated, or any
    other value the shared informer's Running ones), `resyncScope` (All: a report that
    changes the Topology Manager's configuration is taken at the next resync) and
    `foreignPodsDetect` (None, All, OnlyExclusiveResources: which pods of other schedulers
    make a node stale), as upstream reads them."""

    foreign_pods_detect: str = Field(default="All", alias="foreignPodsDetect")
    resync_method: str = Field(default="Autodetect", alias="resyncMethod")
    informer_mode: str = Field(default="Dedicated", alias="informerMode")
    resync_scope: str = Field(default="All", alias="resyncScope")


class NodeResourceTopologyMatchArgs(_Args):
    scoring_strategy: NRTScoringStrategy = Field(
        default_factory=lambda: NRTScoringStrategy(type="LeastAllocated"), alias="scoringStrategy")
    #: > 0: the overreserve cache (pods bound since the node's last report count against every
    #: NUMA cell); <= 0: the reports as they are (passthrough).
    cache_resync_period_seconds: int = Field(default=0, alias="cacheResyncPeriodSeconds")
    #: Takes precedence over the cache: a node with a pod between Reserve and PostBind (the
    #: start and the end of a bind verb here) is invalid to Filter and 0 to Score.
    discard_reserved_nodes: bool = Field(default=False, alias="discardReservedNodes")
    cache: NodeResourceTopologyCache = Field(default_factory=NodeResourceTopologyCache)
    preemption_mode: str | None = Field(default=None, alias="preemptionMode")

    @field_validator("preemption_mode")
    @classmethod
    def _mode(cls, value: str | None) -> str | None:
        if value is not None and value not in PREEMPTION_MODES:
            raise ValueError(f'Invalid value: "{value}": invalid PreemptionMode')
        return value

    @property
    def overreserve(self) -> bool:
        """Whether the overreserve cache is on (`initNodeTopologyInformer`)."""
        return not self.discard_reserved_nodes and self.cache_resync_period_seconds > 0
