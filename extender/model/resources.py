"""Resource vectors and the pod request arithmetic kube-scheduler uses.

`Resources` mirrors the scheduler's `framework.Resource`: cpu in millicores, every other
resource in base units, extended ("scalar") resources in a dict. `pod_requests` is
`resource.PodRequests` from component-helpers: containers summed, init containers max'ed with
sidecars (restartable init containers) accounted for, pod-level requests, then overhead.
Amounts are summed exactly, in integer nano-units, before the final rounding, as Go sums
Quantities before calling `Value()` / `MilliValue()`.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from functools import lru_cache

from extender.model import k8s
from extender.model.names import is_qualified_name
from extender.model.quantity import (
    MILLI_IN_NANOS,
    NANO,
    milli_value,
    nano_value,
    scaled_from_nanos,
    value,
)

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

# Non-zero defaults used only for scoring (B.1): 0.1 core and 200 MiB per container.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

_DEFAULTS_NANOS: dict[str, int] = {
    CPU: DEFAULT_MILLI_CPU_REQUEST * MILLI_IN_NANOS,
    MEMORY: DEFAULT_MEMORY_REQUEST * NANO,
}

def is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def _is_pod_level_resource(name: str) -> bool:
    """IsSupportedPodLevelResource: cpu, memory and (since v1.34) hugepages-*."""
    return name == CPU or name == MEMORY or name.startswith("hugepages-")


@lru_cache(maxsize=1024)
def is_extended_resource(name: str) -> bool:
    """IsExtendedResourceName: `domain/name`, no `kubernetes.io/` in it, not `requests.`-prefixed,
    and a valid qualified name once prefixed with `requests.` (as quota names are)."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return is_qualified_name("requests." + name)


@lru_cache(maxsize=1024)
def is_scalar_resource(name: str) -> bool:
    """IsScalarResourceName: the resources the scheduler tracks in `ScalarResources`."""
    return (
        is_extended_resource(name)
        or is_hugepages(name)
        or "kubernetes.io/" in name
        or name.startswith("attachable-volumes-")
    )


class Resources:
    """A resource vector. Instances built by this module are treated as immutable."""

    __slots__ = ("milli_cpu", "memory", "ephemeral_storage", "allowed_pods", "scalar")

    def __init__(
        self,
        milli_cpu: int = 0,
        memory: int = 0,
        ephemeral_storage: int = 0,
        allowed_pods: int = 0,
        scalar: dict[str, int] | None = None,
    ) -> None:
        self.milli_cpu = milli_cpu
        self.memory = memory
        self.ephemeral_storage = ephemeral_storage
        self.allowed_pods = allowed_pods
        self.scalar = scalar or {}

    def get(self, name: str) -> int:
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pods
        return self.scalar.get(name, 0)

    def is_zero(self) -> bool:
        return not (self.milli_cpu or self.memory or self.ephemeral_storage or any(self.scalar.values()))

    def copy(self) -> Resources:
        return Resources(self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pods,
                         dict(self.scalar))

    def add(self, other: Resources, sign: int = 1) -> None:
        """In-place `self += sign * other` (accumulators only)."""
        self.milli_cpu += sign * other.milli_cpu
        self.memory += sign * other.memory
        self.ephemeral_storage += sign * other.ephemeral_storage
        if other.scalar:
            scalar = self.scalar
            for name, amount in other.scalar.items():
                scalar[name] = scalar.get(name, 0) + sign * amount

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Resources):
            return NotImplemented
        return (
            self.milli_cpu == other.milli_cpu
            and self.memory == other.memory
            and self.ephemeral_storage == other.ephemeral_storage
            and self.allowed_pods == other.allowed_pods
            and {k: v for k, v in self.scalar.items() if v} == {k: v for k, v in other.scalar.items() if v}
        )

    def __repr__(self) -> str:
        extra = f", scalar={self.scalar}" if self.scalar else ""
        return (f"Resources(milli_cpu={self.milli_cpu}, memory={self.memory}, "
                f"ephemeral_storage={self.ephemeral_storage}, allowed_pods={self.allowed_pods}{extra})")


def resources_from_list(items: Mapping[str, k8s.QuantityValue] | None) -> Resources:
    """Convert a ResourceList (node allocatable, say) the way `NewResource` does."""
    res = Resources()
    if not items:
        return res
    for name, raw in items.items():
        if name == CPU:
            res.milli_cpu = milli_value(raw)
        elif name == MEMORY:
            res.memory = value(raw)
        elif name == EPHEMERAL_STORAGE:
            res.ephemeral_storage = value(raw)
        elif name == PODS:
            res.allowed_pods = value(raw)
        elif is_scalar_resource(name):
            res.scalar[name] = value(raw)
    return res


def _to_resources(amounts: Mapping[str, int]) -> Resources:
    """Round a nano-unit request list like `SetMaxResource`: cpu in millis, the rest in units."""
    res = Resources()
    for name, nanos in amounts.items():
        if name == CPU:
            res.milli_cpu = scaled_from_nanos(nanos, MILLI_IN_NANOS)
        elif name == MEMORY:
            res.memory = scaled_from_nanos(nanos, NANO)
        elif name == EPHEMERAL_STORAGE:
            res.ephemeral_storage = scaled_from_nanos(nanos, NANO)
        elif is_scalar_resource(name):
            res.scalar[name] = scaled_from_nanos(nanos, NANO)
    return res


def _nanos(items: Mapping[str, k8s.QuantityValue] | None) -> dict[str, int]:
    return {name: nano_value(raw) for name, raw in items.items()} if items else {}


def _add_into(total: dict[str, int], items: Mapping[str, int]) -> None:
    for name, amount in items.items():
        total[name] = total.get(name, 0) + amount


def _max_into(total: dict[str, int], items: Mapping[str, int]) -> None:
    # maxResourceList: an absent key is always taken (even 0), so key presence matches Go.
    for name, amount in items.items():
        if name not in total or amount > total[name]:
            total[name] = amount


def _container_requests(container: k8s.Container, defaults: Mapping[str, int]) -> dict[str, int]:
    requests = _nanos(container.resources.requests if container.resources else None)
    for name, amount in defaults.items():
        # applyNonMissing: only a missing entry is defaulted; an explicit "0" stays 0.
        if name not in requests:
            requests[name] = amount
    return requests


def _pod_level_requests(spec: k8s.PodSpec) -> dict[str, int] | None:
    """The supported pod-level requests, or None unless IsPodLevelRequestsSet."""
    requests = spec.resources.requests if spec.resources else None
    if not requests:
        return None
    supported = {name: nano_value(raw) for name, raw in requests.items() if _is_pod_level_resource(name)}
    return supported or None


def _aggregate(spec: k8s.PodSpec, defaults: Mapping[str, int]) -> dict[str, int]:
    """`PodRequests` with `NonMissingContainerRequests = defaults`, in nano-units."""
    total: dict[str, int] = {}
    for container in spec.containers or ():
        _add_into(total, _container_requests(container, defaults))
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for container in spec.init_containers or ():
        requests = _container_requests(container, defaults)
        if container.restart_policy == "Always":
            _add_into(total, requests)
            _add_into(sidecars, requests)
            use = sidecars  # every sidecar started so far, this one included
        else:
            use = requests
            _add_into(use, sidecars)  # sidecars started before it keep running
        _max_into(init_max, use)
    _max_into(total, init_max)
    pod_level = _pod_level_requests(spec)
    if pod_level:
        total.update(pod_level)
    if spec.overhead:
        _add_into(total, _nanos(spec.overhead))
    return total


def _node_non_zero_defaults(spec: k8s.PodSpec, requests: Mapping[str, int]) -> Mapping[str, int]:
    """getNonMissingContainerRequests: with pod-level requests set, a default applies only to a
    resource the pod's requests (containers, pod level and overhead) lack altogether."""
    if _pod_level_requests(spec) is None:
        return _DEFAULTS_NANOS
    return {name: amount for name, amount in _DEFAULTS_NANOS.items() if name not in requests}


def aggregate_requests(spec: k8s.PodSpec, non_zero: bool = False) -> dict[str, Fraction]:
    """Exact per-resource totals for a pod (component-helpers `PodRequests`).

    `non_zero` fills in the B.1 defaults the way NodeInfo's `NonZeroRequested` does."""
    totals = _aggregate(spec, {})
    if non_zero:
        defaults = _node_non_zero_defaults(spec, totals)
        if defaults:
            totals = _aggregate(spec, defaults)
    return {name: Fraction(nanos, NANO) for name, nanos in totals.items()}


def pod_requests(spec: k8s.PodSpec) -> Resources:
    """The pod's effective request vector used by the Fit filter and real-request scorers."""
    return _to_resources(_aggregate(spec, {}))


def _cpu_memory(totals: Mapping[str, int]) -> tuple[int, int]:
    return (scaled_from_nanos(totals.get(CPU, 0), MILLI_IN_NANOS),
            scaled_from_nanos(totals.get(MEMORY, 0), NANO))


def pod_non_zero_requests(spec: k8s.PodSpec) -> tuple[int, int]:
    """(milli_cpu, memory) with the B.1 defaults, as summed into NodeInfo's `NonZeroRequested`
    (`calculateResource`)."""
    if _pod_level_requests(spec) is None:
        return _cpu_memory(_aggregate(spec, _DEFAULTS_NANOS))  # the common case: one pass
    totals = _aggregate(spec, {})
    defaults = _node_non_zero_defaults(spec, totals)
    return _cpu_memory(_aggregate(spec, defaults) if defaults else totals)


def pod_scoring_non_zero_requests(spec: k8s.PodSpec) -> tuple[int, int]:
    """(milli_cpu, memory) of the incoming pod in scorers with `useRequested = false`.

    `calculatePodResourceRequest` defaults every container lacking an entry whether or not
    pod-level requests are set (those then override cpu/memory). It differs from
    `pod_non_zero_requests` only when pod-level requests are set, leave cpu or memory out,
    and that resource appears elsewhere in the pod (a container, overhead) but not in every
    container.
    """
    return _cpu_memory(_aggregate(spec, _DEFAULTS_NANOS))
