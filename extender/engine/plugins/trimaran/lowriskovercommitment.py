"""LowRiskOverCommitment (scheduler-plugins `pkg/trimaran/lowriskovercommitment`): prefer
nodes where overcommitted limits and the measured load are least likely to bite.

Per resource (cpu, memory), over the pods on the node plus the incoming one: the limit risk
is how far the summed limits (each pod's limit raised to its request) exceed the ALLOCATABLE,
relative to the room between limits and (capped) requests; the load risk is the probability
that the measured load, fitted to a Beta distribution by its mean and (smoothing-corrected)
deviation, exceeds what the other pods request. risk = w × limit risk + (1 − w) × load risk,
and score = (1 − max(cpu risk, memory risk)) × 100. A pod requesting and limiting neither cpu
nor memory, and nodes without metrics, score 0. No NormalizeScore.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from extender.engine.args import LowRiskOverCommitmentArgs
from extender.engine.framework import MAX_NODE_SCORE, ClusterContext, CycleState, ScoredAsIs
from extender.engine.plugins.trimaran.common import (
    MIN_NODE_SCORE,
    clamp01,
    create_resource_stats,
    get_mu_sigma,
    go_div,
    go_max,
    go_min,
    node_metrics,
    round_score,
    snapshot_of,
)
from extender.model.loadmetrics import CPU, MEMORY, Metric
from extender.model.node import NodeView
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

NAME = "LowRiskOverCommitment"
#: `MaxVarianceAllowance`: the deviation is kept just under the Beta distribution's maximum.
MAX_VARIANCE_ALLOWANCE = 0.99
SMALLEST_NONZERO_FLOAT64 = 5e-324

_betainc: Callable[[float, float, float], float] | None = None


def _regularized_incomplete_beta(a: float, b: float, x: float) -> float:
    """gonum's `mathext.RegIncBeta(a, b, x)` (scipy's `betainc`, imported on first use: the
    server does not pay for scipy unless the plugin scores)."""
    global _betainc
    if _betainc is None:
        from scipy.special import betainc  # type: ignore[import-untyped]

        _betainc = betainc
    return float(_betainc(a, b, x))


# ---- beta.go ---------------------------------------------------------------------------------
def regularized_incomplete(x: float, a: float, b: float) -> float:
    """`RegularizedIncomplete`: I_x(a, b); NaN outside a, b > 0, x in [0, 1]."""
    if not (a > 0 and b > 0 and 0 <= x <= 1):
        return math.nan
    if x == 0:
        return 0.0
    if x == 1:
        return 1.0
    return _regularized_incomplete_beta(a, b, x)


def get_max_variance(m1: float) -> float:
    """`GetMaxVariance`: the largest variance of a Beta distribution with mean `m1`."""
    if 0 < m1 < 1:
        return m1 * (1 - m1)
    return 0.0


@dataclass
class BetaDistribution:
    """`BetaDistribution` (alpha, beta > 0 when built by `new`)."""

    alpha: float
    beta: float

    @classmethod
    def new(cls, alpha: float, beta: float) -> BetaDistribution | None:
        """`NewBetaDistribution`: None unless alpha > 0 and beta > 0."""
        return cls(alpha, beta) if alpha > 0 and beta > 0 else None

    def mean(self) -> float:
        return self.alpha / (self.alpha + self.beta)

    def variance(self) -> float:
        first = self.mean()
        second = first * (self.alpha + 1) / (self.alpha + self.beta + 1)
        return second - first * first

    def match_moments(self, m1: float, m2: float) -> bool:
        """`MatchMoments`: fit alpha and beta to the first two moments (False: cannot; the
        distribution is then left as it was)."""
        variance = m2 - m1 * m1
        if m1 < 0 or m1 > 1 or variance < 0 or variance >= m1 * (1 - m1):
            return False
        temp = go_div(m1 * (1 - m1), variance) - 1  # variance may round to 0: +Inf
        temp = go_max(temp, SMALLEST_NONZERO_FLOAT64)
        self.alpha = m1 * temp
        self.beta = (1 - m1) * temp
        return True  # computeMoments on a distribution that was valid (NewBetaDistribution(1, 1))

    def distribution_function(self, x: float) -> float:
        """`DistributionFunction`: P(X <= x), 0 where it is undefined."""
        p = regularized_incomplete(x, self.alpha, self.beta)
        if math.isnan(p) or p < 0 or p > 1:
            return 0.0
        return p

    def density_function(self, x: float) -> float:
        """`DensityFunction`: the pdf at x (0 where undefined)."""
        try:
            betax = math.pow(x, self.alpha - 1.0) * math.pow(1.0 - x, self.beta - 1.0)
            betac = (math.gamma(self.alpha) * math.gamma(self.beta)
                     / math.gamma(self.alpha + self.beta))
            pdf = betax / betac
        except (ValueError, ZeroDivisionError, OverflowError):
            return 0.0
        if math.isnan(pdf) or pdf < 0:
            return 0.0
        return pdf


def compute_probability(mu: float, sigma: float,
                        threshold: float) -> tuple[float, BetaDistribution | None]:
    """`ComputeProbability`: P(utilisation <= threshold) under the Beta distribution with mean
    `mu` and deviation `sigma`, and the distribution (None when none was fitted)."""
    if mu == 0 or (sigma == 0 and mu <= threshold):
        return 1.0, None
    if sigma == 0 and mu > threshold:
        return 0.0, None
    m1 = mu
    m2 = (sigma * sigma) + (mu * mu)
    dist = BetaDistribution(1.0, 1.0)
    if not dist.match_moments(m1, m2):
        return 0.0, None
    below = dist.distribution_function(threshold)
    if math.isnan(below):
        return 1.0, dist
    return below, dist


# ---- resourcestats.go: GetNodeRequestsAndLimits ------------------------------------------------
@dataclass(frozen=True)
class Amounts:
    """A `framework.Resource`'s cpu (millicores) and memory (bytes)."""

    cpu: int
    memory: int

    def get(self, resource: str) -> int:
        return self.cpu if resource == "cpu" else self.memory


@dataclass(frozen=True)
class NodeRequestsAndLimits:
    """`NodeRequestsAndLimits`: totals over the node's pods and the incoming one."""

    node_request: Amounts  # capped at the capacity
    node_limit: Amounts
    node_request_minus_pod: Amounts  # capped at the capacity
    node_limit_minus_pod: Amounts
    node_capacity: Amounts  # the allocatable


def pod_requests_and_limits(pod: PodView) -> tuple[Amounts, Amounts]:
    """`CreatePodResourcesStateData`: requests, and limits raised to the requests
    (`SetMaxLimits`)."""
    load = pod.load
    return (Amounts(load.request_cpu, load.request_memory),
            Amounts(max(load.limit_cpu, load.request_cpu),
                    max(load.limit_memory, load.request_memory)))


def node_requests_and_limits(pods: Sequence[PodView], node: NodeView, pod_requests: Amounts,
                             pod_limits: Amounts) -> NodeRequestsAndLimits:
    """`GetNodeRequestsAndLimits`: Σ requests and Σ limits (each pod's raised to its requests)
    of `pods`, then with the incoming pod's added; requests capped at the allocatable."""
    cap_cpu, cap_memory = node.allocatable.milli_cpu, node.allocatable.memory
    req_cpu = req_memory = lim_cpu = lim_memory = 0
    for other in pods:
        load = other.load
        req_cpu += load.request_cpu
        req_memory += load.request_memory
        lim_cpu += max(load.limit_cpu, load.request_cpu)
        lim_memory += max(load.limit_memory, load.request_memory)
    return NodeRequestsAndLimits(
        node_request=Amounts(min(req_cpu + pod_requests.cpu, cap_cpu),
                             min(req_memory + pod_requests.memory, cap_memory)),
        node_limit=Amounts(lim_cpu + pod_limits.cpu, lim_memory + pod_limits.memory),
        node_request_minus_pod=Amounts(min(req_cpu, cap_cpu), min(req_memory, cap_memory)),
        node_limit_minus_pod=Amounts(lim_cpu, lim_memory),
        node_capacity=Amounts(cap_cpu, cap_memory))


def compute_risk(metrics: Sequence[Metric], resource: str, watcher_type: str, node: NodeView,
                 nrl: NodeRequestsAndLimits, window_size: int,
                 weights: Mapping[str, float]) -> float:
    """`computeRisk`: the risk, in [0, 1], of placing the pod on the node for one resource."""
    if resource not in ("cpu", "memory"):
        return 0.0
    request = nrl.node_request.get(resource)
    limit = nrl.node_limit.get(resource)
    request_minus_pod = nrl.node_request_minus_pod.get(resource)
    limit_minus_pod = nrl.node_limit_minus_pod.get(resource)
    capacity = nrl.node_capacity.get(resource)

    # (1) riskLimit: the overcommitment the limits allow
    risk_limit = 0.0
    if limit > capacity:
        risk_limit = float(limit - capacity) / float(limit - request)

    # (2) riskLoad: the measured overcommitment
    risk_load = 0.0
    stats = create_resource_stats(metrics, node, 0, 0, resource, watcher_type)
    if stats is not None:
        mu, sigma = get_mu_sigma(stats)
        sigma *= math.pow(float(window_size), 0.5)  # smoothing hid part of the deviation
        sigma = go_min(sigma, math.sqrt(get_max_variance(mu) * MAX_VARIANCE_ALLOWANCE))
        alloc_threshold = clamp01(go_div(float(request_minus_pod), float(capacity)))
        alloc_prob, dist = compute_probability(mu, sigma, alloc_threshold)
        # condition on the total limit when it is below the capacity
        if limit_minus_pod < capacity and request_minus_pod <= limit_minus_pod:
            limit_threshold = go_div(float(limit_minus_pod), float(capacity))
            if limit_threshold == 0:
                alloc_prob = 1.0  # zero over zero
            elif dist is not None:
                limit_prob = dist.distribution_function(limit_threshold)
                if limit_prob > 0:
                    alloc_prob = clamp01(alloc_prob / limit_prob)
        risk_load = 1 - alloc_prob

    weight = weights.get(resource, 0.0)
    return clamp01(weight * risk_limit + (1 - weight) * risk_load)


class LowRiskOverCommitment(ScoredAsIs):
    name = NAME

    def __init__(self, args: LowRiskOverCommitmentArgs | None = None) -> None:
        args = args if args is not None else LowRiskOverCommitmentArgs()
        self.window_size = args.smoothing_window_size
        self.weights = {"cpu": 0.5, "memory": 0.5, **args.risk_limit_weights}


    def score(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
              ctx: ClusterContext) -> list[int]:
        requests, limits = pod_requests_and_limits(pod)  # PreScore
        snapshot = snapshot_of(ctx)
        if (requests.cpu == 0 and requests.memory == 0 and limits.cpu == 0
                and limits.memory == 0) or snapshot is None:
            return [MIN_NODE_SCORE] * len(nodes)  # a best-effort pod is not this plugin's concern
        scores = []
        for info in nodes:
            metrics = node_metrics(snapshot, info.node.name)
            if metrics is None:
                scores.append(MIN_NODE_SCORE)
                continue
            scores.append(round_score(self.rank(metrics, info, requests, limits)
                                      * float(MAX_NODE_SCORE)))
        return scores

    def rank(self, metrics: Sequence[Metric], info: NodeInfo, requests: Amounts,
             limits: Amounts) -> float:
        """`computeRank`: 1 − the larger of the cpu and memory risks."""
        nrl = node_requests_and_limits(list(info.pods.values()), info.node, requests, limits)
        risk_cpu = compute_risk(metrics, "cpu", CPU, info.node, nrl, self.window_size,
                                self.weights)
        risk_memory = compute_risk(metrics, "memory", MEMORY, info.node, nrl, self.window_size,
                                   self.weights)
        return 1 - go_max(risk_cpu, risk_memory)
