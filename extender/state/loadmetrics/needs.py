"""Which of a node's metrics each load-aware plugin needs to score it from its load at all.

A node "without data" is one a plugin scores MinNodeScore (0) for lack of the metrics it
reads, which is not the same for the three (`extender/engine/plugins/trimaran/`):

- TargetLoadPacking reads one CPU metric with operator `AVG` or `Latest` (`is_cpu_average`);
  without one the node scores 0, whatever else it has (`view_score`).
- LoadVariationRiskBalancing scores each of CPU and Memory that has a metric of any operator
  (`create_resource_stats`) and takes the one it has when the other is missing; with neither
  the node scores 0.
- LowRiskOverCommitment scores 0 only a node without any metric (`node_metrics` is None): a
  resource without a metric has no load risk, so the node is still ranked by its limits.

The readiness line and `extender_load_metrics_nodes_without_data` count nodes by these, so they
match the nodes the plugins actually score 0 for lack of data.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from extender.engine.plugins.trimaran.common import is_cpu_average
from extender.model.loadmetrics import CPU, MEMORY, Metric


@dataclass(frozen=True)
class Need:
    """What a plugin needs of a node's metrics (`what`, for the readiness line: "a fresh …")."""

    what: str
    met: Callable[[Sequence[Metric]], bool]


def _cpu_average(metrics: Sequence[Metric]) -> bool:
    return any(is_cpu_average(metric) for metric in metrics)


def _cpu_or_memory(metrics: Sequence[Metric]) -> bool:
    return any(metric.type in (CPU, MEMORY) for metric in metrics)


def _any(metrics: Sequence[Metric]) -> bool:
    return bool(metrics)


ANY_METRIC = Need("metric", _any)
NEEDS: dict[str, Need] = {
    "TargetLoadPacking": Need("CPU average", _cpu_average),
    "LoadVariationRiskBalancing": Need("CPU or Memory metric", _cpu_or_memory),
    "LowRiskOverCommitment": ANY_METRIC,
}


def need_of(plugin: str) -> Need:
    """What `plugin` needs (any metric for a plugin not listed)."""
    return NEEDS.get(plugin, ANY_METRIC)
