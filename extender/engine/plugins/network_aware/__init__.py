"""scheduler-plugins' NetworkAware plugins: NetworkOverhead (PreFilter, Filter, Score,
NormalizeScore) and TopologicalSort (QueueSort, simulator only), over diktyo-io's AppGroup and
NetworkTopology objects (`extender.model.networkaware`)."""

from __future__ import annotations

from extender.engine.plugins.network_aware.args import NetworkOverheadArgs, TopologicalSortArgs
from extender.engine.plugins.network_aware.network_overhead import (
    NAME as NETWORK_OVERHEAD,
)
from extender.engine.plugins.network_aware.network_overhead import (
    NetworkOverhead,
    NetworkOverheadFilter,
    NetworkPlan,
)
from extender.engine.plugins.network_aware.topological_sort import NAME as TOPOLOGICAL_SORT
from extender.engine.plugins.network_aware.topological_sort import TopologicalSort

__all__ = ["NETWORK_OVERHEAD", "TOPOLOGICAL_SORT", "NetworkOverhead", "NetworkOverheadArgs",
           "NetworkOverheadFilter", "NetworkPlan", "TopologicalSort", "TopologicalSortArgs"]
