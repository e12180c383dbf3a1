"""QOSSort (scheduler-plugins `pkg/qos`, `queue_sort.go`): a QueueSort.

`Less(p1, p2)`: the higher priority first; at equal priority the better QoS class first
(Guaranteed 3 > Burstable 2 > BestEffort 1); at equal class the earlier queue timestamp
(`Timestamp.Before`, strict). The timestamp step came with scheduler-plugins PR #855 (2025);
before it, equal priority and class compared true both ways.

The QoS class is `v1qos.GetPodQOS`'s (`extender.model.numa.qos_class`): pod-level resources
when set, else the cpu and memory requests and limits of every app and init container. The
persisted `status.qosClass` that GetPodQOS reads first is not kept by the pod model; computing
it from the spec gives the same class for any pod whose resources were not resized in place.

QueueSort has no extender verb; the simulator's activeQ runs it (`sort_key`, a tuple key:
the order compares each pod's own values, so no pairwise key object is needed).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from extender.engine.args import NoArgs
from extender.engine.framework import ClusterContext
from extender.model.numa import QOS_BEST_EFFORT, QOS_BURSTABLE, QOS_GUARANTEED, qos_class

NAME = "QOSSort"

#: `compQOS`'s precedence map.
QOS_ORDER = {QOS_BEST_EFFORT: 1, QOS_BURSTABLE: 2, QOS_GUARANTEED: 3}


def pod_qos(pod: Any) -> str:
    """The pod's QoS class. A view without its spec (a slim view of a bound pod; queued pods
    always have theirs) counts as BestEffort."""
    spec = getattr(pod, "pod_spec", None)
    return QOS_BEST_EFFORT if spec is None else qos_class(spec)


class QOSSort:
    name = NAME

    def __init__(self, args: NoArgs | None = None) -> None:
        # uid -> (the spec the class was computed from, its order): a queued pod is re-keyed
        # on every requeue, its spec rarely changes.
        self._memo: dict[str, tuple[Any, int]] = {}

    def qos_order(self, pod: Any) -> int:
        spec = getattr(pod, "pod_spec", None)
        cached = self._memo.get(pod.uid)
        if cached is not None and cached[0] is spec:
            return cached[1]
        order = QOS_ORDER[pod_qos(pod)]
        self._memo[pod.uid] = (spec, order)
        return order

    def less(self, info1: Any, info2: Any, ctx: ClusterContext | None = None) -> bool:
        """`Less(pInfo1, pInfo2)` for two queued pods (`pod`, `timestamp`, and the `seq` that
        stands in for real clocks' distinct timestamps)."""
        p1, p2 = info1.pod.priority, info2.pod.priority
        if p1 != p2:
            return p1 > p2
        q1, q2 = self.qos_order(info1.pod), self.qos_order(info2.pod)
        if q1 != q2:
            return q1 > q2
        return (info1.timestamp, info1.seq) < (info2.timestamp, info2.seq)

    def sort_key(self, ctx: ClusterContext) -> Callable[[Any], tuple[int, int, int, int]]:
        """The activeQ heap key whose order is `less`."""
        order = self.qos_order

        def key(info: Any) -> tuple[int, int, int, int]:
            return (-info.pod.priority, -order(info.pod), info.timestamp, info.seq)

        return key
