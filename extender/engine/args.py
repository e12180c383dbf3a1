"""Plugin arguments, with kube-scheduler's names and validation rules (`pluginConfig[].args`)."""

from __future__ import annotations

import math
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from extender.model.quantity import QuantityError, milli_value, parse_quantity

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


# ---- Trimaran (scheduler-plugins' load-aware scorers) -----------------------------------
class PrometheusQueries(_Args):
    """The PromQL the Prometheus source runs (an extension of scheduler-plugins' args: the
    defaults are load-watcher's own queries). `{window}` is replaced by the window (15m)."""

    cpu_average: str = Field(default="avg_over_time(instance:node_cpu:ratio[{window}])",
                             alias="cpuAverage")
    cpu_std: str = Field(default="stddev_over_time(instance:node_cpu:ratio[{window}])",
                         alias="cpuStd")
    memory_average: str = Field(
        default="avg_over_time(instance:node_memory_utilisation:ratio[{window}])",
        alias="memoryAverage")
    memory_std: str = Field(
        default="stddev_over_time(instance:node_memory_utilisation:ratio[{window}])",
        alias="memoryStd")
    #: The series label that names the node.
    node_label: str = Field(default="instance", alias="nodeLabel")


METRIC_PROVIDER_TYPES = ("KubernetesMetricsServer", "Prometheus", "SignalFx")


class _PointerArgs(_Args):
    """Arguments whose Go fields are pointers or maps: a `null` is unset, then defaulted."""

    @model_validator(mode="before")
    @classmethod
    def _null_is_unset(cls, data: object) -> object:
        if isinstance(data, dict):
            return {key: value for key, value in data.items() if value is not None}
        return data


class MetricProviderSpec(_PointerArgs):
    """`metricProvider`: where load metrics come from when `watcherAddress` is empty."""

    #: KubernetesMetricsServer, Prometheus or SignalFx (checked by `TrimaranSpec`: any text
    #: is accepted beside a `watcherAddress`, which takes precedence, as upstream's checkSpecs).
    type: str = "KubernetesMetricsServer"
    address: str = ""
    token: str = ""
    #: Unset: true for Prometheus (scheduler-plugins' v1 `SetDefaultTrimaranSpec`), else false.
    insecure_skip_verify: bool = Field(default=False, alias="insecureSkipVerify")
    prometheus_queries: PrometheusQueries = Field(default_factory=PrometheusQueries,
                                                  alias="prometheusQueries")
    #: How often the source is read, in seconds (Trimaran: 30).
    refresh_seconds: float = Field(default=30.0, gt=0, alias="refreshSeconds")
    #: A node whose data is older than this is scored as having no metrics. Its data is as
    #: old as its newest sample with Prometheus queries the extender can date (the defaults),
    #: as load-watcher's `timestamp` with `watcherAddress`, else as the read (metrics-server,
    #: other Prometheus queries): see docs/operations.md, "When a Prometheus node's data is from".
    stale_after_seconds: float = Field(default=300.0, gt=0, alias="staleAfterSeconds")

    @model_validator(mode="after")
    def _prometheus_skips_verify_by_default(self) -> MetricProviderSpec:
        if self.type == "Prometheus" and "insecure_skip_verify" not in self.model_fields_set:
            object.__setattr__(self, "insecure_skip_verify", True)
        return self


class TrimaranSpec(_PointerArgs):
    """What every Trimaran plugin's arguments share: a load-watcher service
    (`watcherAddress`, `GET <address>/watcher`), else `metricProvider`."""

    watcher_address: str = Field(default="", alias="watcherAddress")
    metric_provider: MetricProviderSpec = Field(default_factory=MetricProviderSpec,
                                                alias="metricProvider")

    @model_validator(mode="after")
    def _source_given(self) -> TrimaranSpec:
        """`checkSpecs`: without a watcher address the provider type must be known. An
        explicit empty `watcherAddress` stops v1 defaulting the type, so it is then empty."""
        if self.watcher_address:
            return self
        kind = self.metric_provider.type
        if ("watcher_address" in self.model_fields_set
                and "type" not in self.metric_provider.model_fields_set):
            kind = ""
        if kind not in METRIC_PROVIDER_TYPES:
            raise ValueError(f"invalid MetricProvider.Type, got {kind}")
        return self


_GO_DECIMAL = re.compile(r"[+-]?(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)"
                         r"(?:[eE][+-]?\d(?:_?\d)*)?")
_GO_HEX = re.compile(r"[+-]?0[xX](?:_?[0-9a-fA-F])*(?:\.(?:[0-9a-fA-F](?:_?[0-9a-fA-F])*)?)?"
                     r"[pP][+-]?\d(?:_?\d)*")
_GO_SPECIAL = re.compile(r"[+-]?(?:inf|infinity)|nan", re.IGNORECASE)


def go_parse_float(text: str) -> float:
    """Go's `strconv.ParseFloat(text, 64)`: decimal or hexadecimal literals (`_` between
    digits), Inf/Infinity/NaN in any case; no surrounding spaces. ValueError as Go errors
    (syntax, or a finite literal out of range)."""
    if _GO_SPECIAL.fullmatch(text):
        return float(text.lower().replace("infinity", "inf"))
    if _GO_DECIMAL.fullmatch(text):
        number = float(text.replace("_", ""))
    elif _GO_HEX.fullmatch(text):
        number = float.fromhex(text.replace("_", ""))
    else:
        raise ValueError(f'strconv.ParseFloat: parsing "{text}": invalid syntax')
    if math.isinf(number):
        raise ValueError(f'strconv.ParseFloat: parsing "{text}": value out of range')
    return number


class TargetLoadPackingArgs(TrimaranSpec):
    """scheduler-plugins' v1 `TargetLoadPackingArgs`, defaulted and checked as there."""

    #: Predicted cpu of a container with neither a cpu limit nor a request (only `cpu` is read;
    #: a map without it predicts 0).
    default_requests: dict[str, str | int | float] = Field(
        default_factory=lambda: dict[str, str | int | float](cpu="1000m"),
        alias="defaultRequests")
    #: Predicted cpu of a container with a request but no limit: request × this (parsed as Go's
    #: ParseFloat; an unparsable one fails the plugin's New).
    default_requests_multiplier: str = Field(default="1.5", alias="defaultRequestsMultiplier")
    #: Target cpu utilisation in percent; 0 or less means the default, 40. Above 100 the
    #: plugin would give scores above 100, which kube-scheduler rejects in every cycle: refused.
    target_utilization: int = Field(default=40, le=100, alias="targetUtilization")

    # Upstream takes a negative default request and any multiplier Go parses; a negative or
    # infinite prediction then scores outside [0, 100], which kube-scheduler rejects in every
    # cycle (as targetUtilization above 100): refused here, as that is.
    @field_validator("default_requests")
    @classmethod
    def _quantities(cls, requests: dict[str, str | int | float]) -> dict[str, str | int | float]:
        for name, amount in requests.items():
            try:
                quantity = parse_quantity(amount)
            except QuantityError as exc:
                raise ValueError(f"{name}: {exc}") from None
            if quantity < 0:
                raise ValueError(f"{name}: must not be negative, got {amount}")
        return requests

    @field_validator("default_requests_multiplier")
    @classmethod
    def _multiplier(cls, text: str) -> str:
        try:
            value = go_parse_float(text)
        except ValueError as exc:
            raise ValueError(f"unable to parse DefaultRequestsMultiplier: {exc}") from None
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"must be a finite number not below 0, got {text!r}")
        return text

    @field_validator("target_utilization")
    @classmethod
    def _target(cls, percent: int) -> int:
        return percent if percent > 0 else 40

    @property
    def requests_multiplier(self) -> float:
        return go_parse_float(self.default_requests_multiplier)

    @property
    def requests_milli_cores(self) -> int:
        """`DefaultRequests.Cpu().MilliValue()`."""
        return milli_value(self.default_requests.get("cpu", 0))


class LoadVariationRiskBalancingArgs(TrimaranSpec):
    """scheduler-plugins' v1 `LoadVariationRiskBalancingArgs`: a negative margin or
    sensitivity means the default, 1."""

    safe_variance_margin: float = Field(default=1.0, allow_inf_nan=False,
                                        alias="safeVarianceMargin")
    safe_variance_sensitivity: float = Field(default=1.0, allow_inf_nan=False,
                                             alias="safeVarianceSensitivity")

    @field_validator("safe_variance_margin", "safe_variance_sensitivity")
    @classmethod
    def _negative_means_one(cls, value: float) -> float:
        return value if value >= 0 else 1.0


class LowRiskOverCommitmentArgs(TrimaranSpec):
    """scheduler-plugins' v1 `LowRiskOverCommitmentArgs`: a window of 0 or less means 5; no
    weights means 0.5 each; a weight outside [0, 1] means 0.5; cpu and memory not given weigh
    0.5 (`New`)."""

    smoothing_window_size: int = Field(default=5, alias="smoothingWindowSize")
    risk_limit_weights: dict[str, float] = Field(
        default_factory=lambda: {"cpu": 0.5, "memory": 0.5}, alias="riskLimitWeights")

    @field_validator("smoothing_window_size")
    @classmethod
    def _window(cls, size: int) -> int:
        return size if size > 0 else 5

    @field_validator("risk_limit_weights")
    @classmethod
    def _weights(cls, weights: dict[str, float]) -> dict[str, float]:
        if not weights:
            return {"cpu": 0.5, "memory": 0.5}
        for name, weight in weights.items():
            if math.isnan(weight):
                raise ValueError(f"{name}: NaN is not a weight")
        return {"cpu": 0.5, "memory": 0.5,
                **{name: weight if 0 <= weight <= 1 else 0.5 for name, weight in weights.items()}}
