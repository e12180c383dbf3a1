"""TargetLoadPacking (scheduler-plugins `pkg/trimaran/targetloadpacking`): best-fit packing
of nodes around a target cpu utilisation.

A node's predicted utilisation is its measured cpu (the `AVG` or `Latest` CPU metric, percent
of the node's CAPACITY) plus the incoming pod's predicted cpu plus that of the pods assigned to
it since the metrics window closed (or within 60 s before); each container's cpu is predicted
from its limit, else its request × `defaultRequestsMultiplier`, else `defaultRequests.cpu`.
Up to the target T the score climbs from T to 100; above it falls to 0 at 100 %; above
100 % it is 0. Nodes without metrics score 0. No NormalizeScore.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from extender.engine.args import TargetLoadPackingArgs
from extender.engine.framework import ClusterContext, CycleState, ScoredAsIs
from extender.engine.plugins.trimaran.common import (
    MIN_NODE_SCORE,
    go_round,
    is_cpu_average,
    missing_cpu_millis,
    node_metrics,
    snapshot_of,
    snapshot_token,
)
from extender.engine.plugins.trimaran.store import TrimaranStore
from extender.engine.scores.memo import memoised, score_key
from extender.model.loadmetrics import WatcherMetrics
from extender.model.node import NodeView
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.model.podload import PodLoad

NAME = "TargetLoadPacking"

_INT64_MIN = -(1 << 63)
_PREDICTIONS_LIMIT = 4096


def go_int64_round(x: float) -> int:
    """`int64(math.Round(x))` on amd64: out of range or NaN gives the minimum int64."""
    if not -9.223372036854775808e18 <= x < 9.223372036854775808e18:
        return _INT64_MIN
    return go_round(x)


class TargetLoadPacking(ScoredAsIs):
    name = NAME

    def __init__(self, args: TargetLoadPackingArgs | None = None) -> None:
        args = args if args is not None else TargetLoadPackingArgs()
        self.target = args.target_utilization
        self.multiplier = args.requests_multiplier
        self.default_millis = args.requests_milli_cores
        # PodLoads are shared between pods of one workload: predict each once.
        self._predicted: dict[PodLoad, int] = {}

    def predict(self, load: PodLoad) -> int:
        """Σ `PredictUtilisation` over the pod's containers (millicores; overhead not included)."""
        found = self._predicted.get(load)
        if found is None:
            found = load.cpu_limits + load.cpu_unset * self.default_millis
            for request in load.cpu_requests:
                found += go_int64_round(float(request) * self.multiplier)
            if len(self._predicted) >= _PREDICTIONS_LIMIT:
                self._predicted.clear()
            self._predicted[load] = found
        return found


    def score(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
              ctx: ClusterContext) -> list[int]:
        snapshot = snapshot_of(ctx)
        if snapshot is None:
            return [MIN_NODE_SCORE] * len(nodes)
        pod_cpu = self.predict(pod.load) + pod.load.overhead_cpu
        # Without pods assigned since the window closed, a node's score depends only on its
        # view (capacity), its metrics and the pod's prediction: memoised per view, until the
        # next metrics snapshot.
        key = score_key(NAME, snapshot_token(snapshot), self.target, pod_cpu)
        scores: list[int] = memoised(nodes, key,
                                     lambda view: self.view_score(snapshot, view, pod_cpu, 0))
        assigned = ctx.store(TrimaranStore).assignments
        if assigned:
            window_end = snapshot.window.end
            for i, info in enumerate(nodes):
                view = info.node
                if view.name in assigned:
                    missing = missing_cpu_millis(ctx, view.name, window_end, self.predict)
                    if missing:
                        scores[i] = self.view_score(snapshot, view, pod_cpu, missing)
        return scores

    def view_score(self, snapshot: WatcherMetrics, view: NodeView, pod_cpu: int,
                   missing: int) -> int:
        """The node's score from its metrics in `snapshot` (0 without a CPU metric)."""
        metrics = node_metrics(snapshot, view.name)
        util: float | None = None
        if metrics is not None:
            for metric in metrics:
                if is_cpu_average(metric):
                    util = metric.value  # the last one wins
        if util is None:
            return MIN_NODE_SCORE
        return self.node_score(util, view.capacity.milli_cpu, pod_cpu, missing)

    def node_score(self, util_percent: float, capacity_millis: int, pod_cpu: int,
                   missing: int) -> int:
        """The score of a node measured at `util_percent` of `capacity_millis`, given the pod's
        and the missing pods' predicted millicores."""
        capacity = float(capacity_millis)
        util_millis = (util_percent / 100) * capacity
        predicted = 0.0
        if capacity != 0:
            predicted = 100 * (util_millis + float(pod_cpu) + float(missing)) / capacity
        target = float(self.target)
        if predicted > target:
            if predicted > 100:
                return MIN_NODE_SCORE
            return go_round(target * (100 - predicted) / (100 - target))
        if not math.isfinite(predicted):  # a NaN or -Inf metric value: Go's is undefined
            return MIN_NODE_SCORE
        return go_round((100 - target) * predicted / target + target)
