"""LoadVariationRiskBalancing (scheduler-plugins `pkg/trimaran/loadvariationriskbalancing`):
balance the risk of load variation, average plus deviation, across nodes.

Per resource (cpu, memory) with a metric: mu = (average + the pod's request) / allocatable,
sigma = deviation / allocatable, each in [0, 1]; sigma = margin × sigma^(1/sensitivity) in
[0, 1]; score = (1 − (mu + sigma) / 2) × 100. The node's score is the lower of the two, or the
one with metrics; nodes without metrics score 0. No NormalizeScore.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from extender.engine.args import LoadVariationRiskBalancingArgs
from extender.engine.framework import MAX_NODE_SCORE, ClusterContext, CycleState, ScoredAsIs
from extender.engine.plugins.trimaran.common import (
    MIN_NODE_SCORE,
    ResourceStats,
    clamp01,
    create_resource_stats,
    get_mu_sigma,
    go_max,
    go_min,
    node_metrics,
    round_score,
    snapshot_of,
    snapshot_token,
)
from extender.engine.scores.memo import memoised, score_key
from extender.model.loadmetrics import CPU, MEMORY, WatcherMetrics
from extender.model.node import NodeView
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

NAME = "LoadVariationRiskBalancing"


def compute_score(rs: ResourceStats, margin: float, sensitivity: float) -> float:
    """`computeScore` (analysis.go): (1 − risk) × 100 with
    risk = [mu + margin × sigma^(1/sensitivity)] / 2; 0 for a capacity of 0 or less."""
    if rs.capacity <= 0:
        return 0.0
    rs.req = go_max(rs.req, 0)
    rs.used_avg = go_max(go_min(rs.used_avg, rs.capacity), 0)
    rs.used_stdev = go_max(go_min(rs.used_stdev, rs.capacity), 0)
    mu, sigma = get_mu_sigma(rs)
    if sensitivity >= 0:
        # Go: 1/0 is +Inf, and x^+Inf is 0 below 1 (1 at 1).
        exponent = 1 / sensitivity if sensitivity != 0 else math.inf
        sigma = math.pow(sigma, exponent)
    sigma = clamp01(sigma * margin)
    risk = (mu + sigma) / 2
    return (1.0 - risk) * float(MAX_NODE_SCORE)


class LoadVariationRiskBalancing(ScoredAsIs):
    name = NAME

    def __init__(self, args: LoadVariationRiskBalancingArgs | None = None) -> None:
        args = args if args is not None else LoadVariationRiskBalancingArgs()
        self.margin = args.safe_variance_margin
        self.sensitivity = args.safe_variance_sensitivity


    def score(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
              ctx: ClusterContext) -> list[int]:
        snapshot = snapshot_of(ctx)
        if snapshot is None:
            return [MIN_NODE_SCORE] * len(nodes)
        cpu, memory = pod.load.request_cpu, pod.load.request_memory
        # A node's score depends only on its view (allocatable), its metrics and the pod's
        # requests: memoised per view until the next metrics snapshot.
        key = score_key(NAME, snapshot_token(snapshot), self.margin, self.sensitivity, cpu,
                        memory)
        return memoised(nodes, key, lambda view: self.view_score(snapshot, view, cpu, memory))

    def view_score(self, snapshot: WatcherMetrics, node: NodeView, request_cpu: int,
                   request_memory: int) -> int:
        metrics = node_metrics(snapshot, node.name)
        if metrics is None:
            return MIN_NODE_SCORE
        cpu = create_resource_stats(metrics, node, request_cpu, request_memory, "cpu", CPU)
        cpu_score = compute_score(cpu, self.margin, self.sensitivity) if cpu is not None else 0.0
        memory = create_resource_stats(metrics, node, request_cpu, request_memory, "memory",
                                       MEMORY)
        memory_score = (compute_score(memory, self.margin, self.sensitivity)
                        if memory is not None else 0.0)
        if cpu is not None and memory is not None:
            total = go_min(memory_score, cpu_score)
        else:
            total = go_max(memory_score, cpu_score)
        return round_score(total)
