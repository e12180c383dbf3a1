"""ElasticQuota arithmetic: scheduler-plugins' `ElasticQuotaInfo(s)` over `Resources`.

`over(x1, x2, y, bound)` is upstream's `cmp2`: whether x1 + x2 exceeds y on cpu, memory,
ephemeral storage or pods, or on any extended resource x1 names (one y lacks counts as
`bound`: 0 for a min, MaxInt64 for a max).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from extender.model.pod import PodView
from extender.model.resources import Resources
from extender.model.scheduling import MAX_INT64, ElasticQuotaView

_ZERO = Resources()


def over(x1: Resources, x2: Resources, y: Resources, bound: int) -> bool:
    if (x1.milli_cpu + x2.milli_cpu > y.milli_cpu or x1.memory + x2.memory > y.memory
            or x1.ephemeral_storage + x2.ephemeral_storage > y.ephemeral_storage
            or x1.allowed_pods + x2.allowed_pods > y.allowed_pods):
        return True
    for name, amount in x1.scalar.items():
        if amount + x2.scalar.get(name, 0) > y.scalar.get(name, bound):
            return True
    return False


Counted = Callable[[PodView], bool]


def assigned(pod: PodView) -> bool:
    """Whether the cluster's own count includes the pod: it has a node (bound or assumed)."""
    return bool(pod.node_name)


class QuotaInfo:
    """One namespace's quota: min, max and what its pods use. Which pods `used` counts is
    `counted` (the cluster's rule) overridden by the pods added or removed since."""

    __slots__ = ("namespace", "min", "max", "used", "counted", "changed")

    def __init__(self, namespace: str, min_: Resources, max_: Resources, used: Resources,
                 counted: Counted = assigned) -> None:
        self.namespace = namespace
        self.min = min_
        self.max = max_
        self.used = used
        self.counted = counted
        self.changed: dict[str, bool] = {}

    def clone(self) -> QuotaInfo:
        copy = QuotaInfo(self.namespace, self.min, self.max, self.used.copy(), self.counted)
        copy.changed = dict(self.changed)
        return copy

    def has(self, pod: PodView) -> bool:
        found = self.changed.get(pod.uid)
        return self.counted(pod) if found is None else found

    def used_over_min_with(self, request: Resources) -> bool:
        return over(request, self.used, self.min, 0)

    def used_over_max_with(self, request: Resources) -> bool:
        return over(request, self.used, self.max, MAX_INT64)

    def used_over_min(self) -> bool:
        return over(self.used, _ZERO, self.min, 0)

    def add_pod(self, pod: PodView) -> None:
        """`addPodIfNotPresent`."""
        if not self.has(pod):
            self.changed[pod.uid] = True
            _add(self.used, pod.quota_requests, 1)

    def remove_pod(self, pod: PodView) -> None:
        """`deletePodIfPresent`."""
        if self.has(pod):
            self.changed[pod.uid] = False
            _add(self.used, pod.quota_requests, -1)


def _add(total: Resources, request: Resources, sign: int) -> None:
    total.add(request, sign)
    total.allowed_pods += sign * request.allowed_pods


class QuotaSnapshot:
    """Every namespace's quota (`ElasticQuotaInfos`), cloned per preemption dry-run node."""

    __slots__ = ("infos",)

    def __init__(self, infos: dict[str, QuotaInfo]) -> None:
        self.infos = infos

    def clone(self) -> QuotaSnapshot:
        return QuotaSnapshot({ns: info.clone() for ns, info in self.infos.items()})

    def get(self, namespace: str) -> QuotaInfo | None:
        return self.infos.get(namespace)

    def aggregated_used_over_min_with(self, request: Resources) -> bool:
        used = Resources()
        minimum = Resources()
        for info in self.infos.values():
            _add(used, info.used, 1)
            _add(minimum, info.min, 1)
        _add(used, request, 1)
        return over(used, _ZERO, minimum, 0)


def quota_snapshot(quotas: Mapping[str, ElasticQuotaView], used: Callable[[str], Resources],
                   counted: Counted = assigned) -> QuotaSnapshot:
    """A snapshot of the quotas by namespace, with each namespace's use (`used(ns)`, a
    fresh vector) and the rule saying which pods that use counts."""
    return QuotaSnapshot({ns: QuotaInfo(ns, eq.min, eq.max, used(ns), counted)
                          for ns, eq in quotas.items()})
