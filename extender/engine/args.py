"""Plugin arguments, with kube-scheduler's names and validation rules (`pluginConfig[].args`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Version = tuple[int, int]
#: The newest kube-scheduler release the engine follows.
NEWEST_VERSION: Version = (1, 37)
OLDEST_VERSION: Version = (1, 25)


def parse_version(text: str | None) -> Version:
    """"1.30" or "v1.30" (a patch part is ignored); None: the newest release."""
    if text is None:
        return NEWEST_VERSION
    parts = text.removeprefix("v").split(".")
    try:
        version = (int(parts[0]), int(parts[1]))
    except (IndexError, ValueError):
        raise ValueError(f"kubernetesVersion {text!r} is not of the form 1.N") from None
    if not OLDEST_VERSION <= version <= NEWEST_VERSION:
        raise ValueError(f"kubernetesVersion {text!r} is outside the supported "
                         f"{OLDEST_VERSION[0]}.{OLDEST_VERSION[1]}..{NEWEST_VERSION[0]}.{NEWEST_VERSION[1]}")
    return version


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


class ResourceSpec(_Args):
    name: str = Field(min_length=1)
    weight: int = Field(default=1, ge=0, le=100)

    @field_validator("weight")
    @classmethod
    def _zero_means_one(cls, weight: int) -> int:
        return weight or 1


DEFAULT_RESOURCES = (ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1))


class UtilizationShapePoint(_Args):
    utilization: int = Field(ge=0, le=100)
    score: int = Field(ge=0, le=10)


class RequestedToCapacityRatioParam(_Args):
    shape: list[UtilizationShapePoint] = Field(min_length=1)

    @field_validator("shape")
    @classmethod
    def _increasing(cls, shape: list[UtilizationShapePoint]) -> list[UtilizationShapePoint]:
        for before, after in zip(shape, shape[1:], strict=False):
            if after.utilization <= before.utilization:
                raise ValueError("utilization values must be sorted in increasing order")
        return shape


class ScoringStrategy(_Args):
    type: Literal["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"] = "LeastAllocated"
    resources: list[ResourceSpec] = Field(default_factory=lambda: list(DEFAULT_RESOURCES))
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = Field(
        default=None, alias="requestedToCapacityRatio")

    @field_validator("resources")
    @classmethod
    def _unique(cls, resources: list[ResourceSpec]) -> list[ResourceSpec]:
        names = [r.name for r in resources]
        if len(set(names)) != len(names):
            raise ValueError("resource names must be unique")
        return resources

    @model_validator(mode="after")
    def _shape_needed(self) -> ScoringStrategy:
        if self.type == "RequestedToCapacityRatio" and self.requested_to_capacity_ratio is None:
            raise ValueError("requestedToCapacityRatio.shape is required for RequestedToCapacityRatio")
        return self


class NodeResourcesFitArgs(_Args):
    ignored_resources: list[str] = Field(default_factory=list, alias="ignoredResources")
    ignored_resource_groups: list[str] = Field(default_factory=list, alias="ignoredResourceGroups")
    scoring_strategy: ScoringStrategy = Field(default_factory=ScoringStrategy, alias="scoringStrategy")

    @field_validator("ignored_resource_groups")
    @classmethod
    def _no_slash(cls, groups: list[str]) -> list[str]:
        for group in groups:
            if "/" in group:
                raise ValueError(f"resource group name {group!r} cannot contain '/'")
        return groups


class NodeResourcesBalancedAllocationArgs(_Args):
    resources: list[ResourceSpec] = Field(default_factory=lambda: list(DEFAULT_RESOURCES))


class DefaultPreemptionArgs(_Args):
    min_candidate_nodes_percentage: int = Field(default=10, ge=0, le=100, alias="minCandidateNodesPercentage")
    min_candidate_nodes_absolute: int = Field(default=100, ge=0, alias="minCandidateNodesAbsolute")

    @model_validator(mode="after")
    def _not_both_zero(self) -> DefaultPreemptionArgs:
        if self.min_candidate_nodes_percentage == 0 and self.min_candidate_nodes_absolute == 0:
            raise ValueError("minCandidateNodesPercentage and minCandidateNodesAbsolute cannot both be zero")
        return self


class NoArgs(_Args):
    """Plugins that take no arguments accept only an empty `args`."""


def _qualified_key(key: str) -> str:
    from extender.model.names import is_qualified_name

    if not is_qualified_name(key):
        raise ValueError(f"topologyKey {key!r} is not a valid label key (a qualified name)")
    return key


class NodeAffinityArgs(_Args):
    """`addedAffinity`: a NodeAffinity every pod must also satisfy (required terms) and is
    scored by (preferred terms), on top of its own."""

    added_affinity: dict | None = Field(default=None, alias="addedAffinity")

    @field_validator("added_affinity")
    @classmethod
    def _shape(cls, value: dict | None) -> dict | None:
        if value is None:
            return None
        import msgspec

        from extender.model import k8s
        from extender.model.selectors import InvalidSelector, NodeTermMatcher

        try:
            affinity = k8s.convert(value, k8s.NodeAffinity)
        except msgspec.ValidationError as exc:
            raise ValueError(f"not a NodeAffinity: {exc}") from None
        required = affinity.required_during_scheduling_ignored_during_execution
        terms = [*(required.node_selector_terms or () if required else ()),
                 *(p.preference for p in affinity.preferred_during_scheduling_ignored_during_execution or ()
                   if p.preference is not None)]
        for term in terms:
            try:
                NodeTermMatcher(term)
            except InvalidSelector as exc:
                raise ValueError(f"invalid node selector term: {exc}") from None
        return value


class DefaultSpreadConstraint(_Args):
    max_skew: int = Field(ge=1, alias="maxSkew")
    topology_key: str = Field(min_length=1, alias="topologyKey")
    when_unsatisfiable: Literal["DoNotSchedule", "ScheduleAnyway"] = Field(alias="whenUnsatisfiable")
    min_domains: int | None = Field(default=None, ge=1, alias="minDomains")
    node_affinity_policy: Literal["Honor", "Ignore"] | None = Field(default=None, alias="nodeAffinityPolicy")
    node_taints_policy: Literal["Honor", "Ignore"] | None = Field(default=None, alias="nodeTaintsPolicy")

    _key = field_validator("topology_key")(classmethod(lambda cls, v: _qualified_key(v)))


class PodTopologySpreadArgs(_Args):
    default_constraints: list[DefaultSpreadConstraint] = Field(default_factory=list,
                                                              alias="defaultConstraints")
    defaulting_type: Literal["System", "List"] = Field(default="System", alias="defaultingType")

    @model_validator(mode="after")
    def _consistent(self) -> PodTopologySpreadArgs:
        if self.defaulting_type == "System" and self.default_constraints:
            raise ValueError("defaultConstraints must be empty when defaultingType is System")
        seen = set()
        for c in self.default_constraints:
            pair = (c.topology_key, c.when_unsatisfiable)
            if pair in seen:
                raise ValueError(f"defaultConstraints: duplicate constraint for topologyKey "
                                 f"{c.topology_key!r} and whenUnsatisfiable {c.when_unsatisfiable!r}")
            seen.add(pair)
        return self


class InterPodAffinityArgs(_Args):
    hard_pod_affinity_weight: int = Field(default=1, ge=0, le=100, alias="hardPodAffinityWeight")
    ignore_preferred_terms_of_existing_pods: bool = Field(
        default=False, alias="ignorePreferredTermsOfExistingPods")


class CoschedulingArgs(_Args):
    """scheduler-plugins' `CoschedulingArgs` (defaults from its v1 API: 60 s, off, 10 %)."""

    permit_waiting_time_seconds: int = Field(default=60, ge=0, alias="permitWaitingTimeSeconds")
    pod_group_backoff_seconds: int = Field(default=0, ge=0, alias="podGroupBackoffSeconds")
    pod_group_reject_percentage: int = Field(default=10, ge=0, le=100,
                                             alias="podGroupRejectPercentage")
