"""scheduler-plugins' PodGroup and ElasticQuota as Coscheduling and CapacityScheduling read them.

Quantities are converted once, the way scheduler-plugins' own `framework.Resource` conversions
do: cpu in millicores, every other resource in base units.
"""

from __future__ import annotations

from collections.abc import Mapping

from extender.model import k8s
from extender.model.goquantity import GoQuantity, parse_go_quantity
from extender.model.quantity import milli_value, value
from extender.model.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    Resources,
    is_scalar_resource,
    resources_from_list,
)
from extender.model.timeparse import parse_time

#: The pod label naming the pod's PodGroup (in the pod's namespace).
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
MAX_INT64 = (1 << 63) - 1


def pod_group_name(labels: Mapping[str, str]) -> str:
    """The PodGroup a pod names, or "" (`util.GetPodGroupLabel`)."""
    return labels.get(POD_GROUP_LABEL, "")


class PodGroupView:
    __slots__ = ("namespace", "name", "min_member", "min_resources", "schedule_timeout",
                 "creation_time", "uid")

    def __init__(self, pg: k8s.PodGroup) -> None:
        self.namespace = pg.metadata.namespace
        self.name = pg.metadata.name
        self.uid = pg.metadata.uid
        self.min_member = pg.spec.min_member
        #: `spec.minResources` as Go holds each quantity (Coscheduling's "resource gap"
        #: subtracts and prints them so); None when unset (the resource check is skipped).
        self.min_resources: dict[str, GoQuantity] | None = (
            None if pg.spec.min_resources is None
            else {name: parse_go_quantity(raw) for name, raw in pg.spec.min_resources.items()})
        self.schedule_timeout: int | None = pg.spec.schedule_timeout_seconds
        self.creation_time = parse_time(pg.metadata.creation_timestamp)

    @property
    def full_name(self) -> str:
        return f"{self.namespace}/{self.name}"


class ElasticQuotaView:
    """One namespace's quota: `min` and `max` with CapacityScheduling's defaults."""

    __slots__ = ("namespace", "name", "min", "max")

    def __init__(self, eq: k8s.ElasticQuota) -> None:
        self.namespace = eq.metadata.namespace
        self.name = eq.metadata.name
        # No min: nothing guaranteed. No max: unbounded cpu, memory and ephemeral storage. A
        # given list is taken as is (absent entries are 0), as `NewResource` reads it.
        self.min = resources_from_list(eq.spec.min)
        if eq.spec.max is None:
            self.max = Resources(MAX_INT64, MAX_INT64, MAX_INT64)
        else:
            self.max = resources_from_list(eq.spec.max)


def quota_requests(spec: k8s.PodSpec) -> Resources:
    """CapacityScheduling's own pod request: containers summed (each rounded as
    `Resource.Add` rounds it), element-wise max with each init container, plus overhead. No
    sidecar or pod-level logic, unlike the in-tree `PodRequests`."""
    total = Resources()
    for container in spec.containers or ():
        _add_list(total, container.resources.requests if container.resources else None)
    for container in spec.init_containers or ():
        _max_list(total, container.resources.requests if container.resources else None)
    if spec.overhead:
        _add_list(total, spec.overhead)
    return total


def _add_list(res: Resources, items: Mapping[str, k8s.QuantityValue] | None) -> None:
    for name, raw in (items or {}).items():
        if name == CPU:
            res.milli_cpu += milli_value(raw)
        elif name == MEMORY:
            res.memory += value(raw)
        elif name == EPHEMERAL_STORAGE:
            res.ephemeral_storage += value(raw)
        elif name == PODS:
            res.allowed_pods += value(raw)
        elif is_scalar_resource(name):
            res.scalar[name] = res.scalar.get(name, 0) + value(raw)


def _max_list(res: Resources, items: Mapping[str, k8s.QuantityValue] | None) -> None:
    for name, raw in (items or {}).items():
        if name == CPU:
            res.milli_cpu = max(res.milli_cpu, milli_value(raw))
        elif name == MEMORY:
            res.memory = max(res.memory, value(raw))
        elif name == EPHEMERAL_STORAGE:
            res.ephemeral_storage = max(res.ephemeral_storage, value(raw))
        elif name == PODS:
            res.allowed_pods = max(res.allowed_pods, value(raw))
        elif is_scalar_resource(name):
            res.scalar[name] = max(res.scalar.get(name, 0), value(raw))
