"""Plugin arguments, with kube-scheduler's names and validation rules (`pluginConfig[].args`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


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
