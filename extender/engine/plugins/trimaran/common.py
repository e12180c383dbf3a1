"""What scheduler-plugins' Trimaran scorers share (`pkg/trimaran`: collector.go, handler.go,
resourcestats.go): the node's metrics from the load-watcher snapshot, `GetResourceData`,
`ResourceStats` and `GetMuSigma`, the load of pods assigned since the metrics window closed,
and Go's float rules where Python's differ (division by zero, NaN in min/max, math.Round).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from extender.engine.framework import ClusterContext
from extender.engine.plugins.pod_topology_spread.scoring import go_round
from extender.engine.plugins.trimaran.store import TrimaranStore
from extender.model.loadmetrics import AVERAGE, CPU, LATEST, STD, Metric, WatcherMetrics
from extender.model.node import NodeView
from extender.model.podload import PodLoad

__all__ = ["MIN_NODE_SCORE", "MEGA_FACTOR", "METRICS_AGENT_REPORTING_INTERVAL_SECONDS",
           "ResourceStats", "create_resource_stats", "get_mu_sigma", "get_resource_data",
           "go_div", "go_max", "go_min", "clamp01", "go_round", "round_score", "node_metrics",
           "snapshot_of", "snapshot_token", "missing_cpu_millis"]

MIN_NODE_SCORE = 0
#: `MegaFactor`: memory is compared in MiB.
MEGA_FACTOR = 1.0 / 1024.0 / 1024.0
#: A pod assigned this long before the metrics window closed may not show in it yet.
METRICS_AGENT_REPORTING_INTERVAL_SECONDS = 60


# ---- Go's float64 rules ------------------------------------------------------------------
def go_div(a: float, b: float) -> float:
    """`a / b` in float64: ±Inf or NaN for a zero divisor, as Go (Python raises)."""
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def go_max(x: float, y: float) -> float:
    """`math.Max`: NaN if either is NaN."""
    if math.isnan(x) or math.isnan(y):
        return math.nan
    return x if x > y else y


def go_min(x: float, y: float) -> float:
    """`math.Min`: NaN if either is NaN."""
    if math.isnan(x) or math.isnan(y):
        return math.nan
    return x if x < y else y


def clamp01(x: float) -> float:
    """`math.Max(math.Min(x, 1), 0)`."""
    return go_max(go_min(x, 1.0), 0.0)


def round_score(x: float) -> int:
    """`int64(math.Round(x))` for a score. A NaN (only from non-finite metric values, which
    load-watcher's JSON cannot carry) gives MinNodeScore rather than Go's undefined int64."""
    if not math.isfinite(x):
        return MIN_NODE_SCORE
    return go_round(x)


# ---- metrics --------------------------------------------------------------------------------
_tokens = itertools.count(1)
_current: tuple[WatcherMetrics | None, int] = (None, 0)


def snapshot_token(snapshot: WatcherMetrics) -> int:
    """A number naming this metrics snapshot object, for memo keys: a new snapshot (each
    refresh) gets a new one, never reused (`next` on a count is atomic, so two threads seeing
    two snapshots cannot give them the same number)."""
    global _current
    current = _current
    if current[0] is not snapshot:
        current = _current = (snapshot, next(_tokens))
    return current[1]


def snapshot_of(ctx: ClusterContext) -> WatcherMetrics | None:
    """The cluster's newest metrics snapshot (a context without a metrics source has none)."""
    return ctx.store(TrimaranStore).metrics


def node_metrics(snapshot: WatcherMetrics | None, node_name: str) -> list[Metric] | None:
    """`Collector.GetNodeMetrics`: the node's metrics, or None (no snapshot yet, the node is
    not in it, or it has no metric: the plugins then score MinNodeScore)."""
    if snapshot is None:
        return None
    found = snapshot.data.NodeMetricsMap.get(node_name)
    if found is None or not found.metrics:
        return None
    return found.metrics


def get_resource_data(metrics: Sequence[Metric], resource_type: str) -> tuple[float, float, bool]:
    """`GetResourceData`: (average, standard deviation, any metric of that type). The value of
    an `AVG` metric is the average; without one, a `Latest` or operator-less one's."""
    avg = std = 0.0
    avg_found = valid = False
    for metric in metrics:
        if metric.type == resource_type:
            if metric.operator == AVERAGE:
                avg = metric.value
                avg_found = True
            elif metric.operator == STD:
                std = metric.value
            elif metric.operator in ("", LATEST) and not avg_found:
                avg = metric.value
            valid = True
    return avg, std, valid


@dataclass
class ResourceStats:
    """`ResourceStats`: absolute usage statistics of one resource on a node."""

    used_avg: float
    used_stdev: float
    req: float
    capacity: float


def create_resource_stats(metrics: Sequence[Metric], node: NodeView, request_cpu: int,
                          request_memory: int, resource: str,
                          watcher_type: str) -> ResourceStats | None:
    """`CreateResourceStats`: from the node's ALLOCATABLE (cpu in millicores, memory in MiB)
    and the pod's request; None when no metric of `watcher_type` exists."""
    util, std, found = get_resource_data(metrics, watcher_type)
    if not found:
        return None
    if resource == "cpu":
        capacity = float(node.allocatable.milli_cpu)
        req = float(request_cpu)
    else:
        capacity = float(node.allocatable.memory) * MEGA_FACTOR
        req = float(request_memory) * MEGA_FACTOR
    return ResourceStats(util * capacity / 100, std * capacity / 100, req, capacity)


def get_mu_sigma(rs: ResourceStats) -> tuple[float, float]:
    """`GetMuSigma`: (average + request, deviation) as fractions of capacity, each in [0, 1]."""
    if rs.capacity <= 0:
        return 0.0, 0.0
    mu = clamp01((rs.used_avg + rs.req) / rs.capacity)
    sigma = clamp01(rs.used_stdev / rs.capacity)
    return mu, sigma


def is_cpu_average(metric: Metric) -> bool:
    return metric.type == CPU and metric.operator in (AVERAGE, LATEST)


# ---- pods assigned since the metrics window closed -----------------------------------------
def missing_cpu_millis(ctx: ClusterContext, node_name: str, window_end: int,
                       predict: Callable[[PodLoad], int]) -> int:
    """TargetLoadPacking's `missingCPUUtilMillis`: the predicted cpu of the pods that became
    assigned to the node after the window closed, or less than 60 s before (their usage may
    not be in the metrics yet), as `PodAssignEventHandler` records them: this extender's binds
    and the informer's pending-to-bound updates (`TrimaranStore.recent`)."""
    total = 0
    for at, pod in ctx.store(TrimaranStore).recent(node_name):
        seconds = math.floor(at)  # time.Time.Unix()
        if seconds > window_end or window_end - seconds < METRICS_AGENT_REPORTING_INTERVAL_SECONDS:
            total += predict(pod.load) + pod.load.overhead_cpu
    return total
