"""Resource vectors and the pod request arithmetic kube-scheduler uses.

`Resources` mirrors the scheduler's `framework.Resource`: cpu in millicores, every other
resource in base units, extended ("scalar") resources in a dict. `pod_requests` is
`resource.PodRequests` from component-helpers: containers summed, init containers max'ed with
sidecars (restartable init containers) accounted for, pod-level requests, then overhead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction

from extender.model import k8s
from extender.model.quantity import INT64_MAX, milli_value, parse_quantity, value

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

# Non-zero defaults used only for scoring (B.1): 0.1 core and 200 MiB per container.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

_POD_LEVEL_SUPPORTED = (CPU, MEMORY)


def is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def is_extended_resource(name: str) -> bool:
    """An extended resource: `domain/name`, outside `*kubernetes.io/`, not `requests.`-prefixed."""
    if "/" not in name or name.startswith("requests."):
        return False
    domain = name.split("/", 1)[0]
    return not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))


def is_scalar_resource(name: str) -> bool:
    """Resources the scheduler tracks in `ScalarResources`."""
    return (
        is_hugepages(name)
        or name.startswith("attachable-volumes-")
        or "kubernetes.io/" in name
        or is_extended_resource(name)
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


def _to_resources(amounts: Mapping[str, Fraction]) -> Resources:
    res = Resources()
    for name, amount in amounts.items():
        if name == CPU:
            millis = -((-amount.numerator * 1000) // amount.denominator)
            res.milli_cpu = 0 if abs(millis) > INT64_MAX else millis
        elif name == MEMORY:
            res.memory = -((-amount.numerator) // amount.denominator)
        elif name == EPHEMERAL_STORAGE:
            res.ephemeral_storage = -((-amount.numerator) // amount.denominator)
        elif is_scalar_resource(name):
            res.scalar[name] = -((-amount.numerator) // amount.denominator)
    return res


def _parsed(items: Mapping[str, k8s.QuantityValue] | None) -> dict[str, Fraction]:
    return {name: parse_quantity(raw) for name, raw in items.items()} if items else {}


def _add_into(total: dict[str, Fraction], items: Mapping[str, Fraction]) -> None:
    for name, amount in items.items():
        total[name] = total.get(name, 0) + amount


def _max_into(total: dict[str, Fraction], items: Mapping[str, Fraction]) -> None:
    for name, amount in items.items():
        if amount > total.get(name, 0):
            total[name] = amount


def _container_requests(container: k8s.Container, non_zero: bool) -> dict[str, Fraction]:
    requests = container.resources.requests if container.resources else None
    parsed = _parsed(requests)
    if non_zero:
        if CPU not in parsed:
            parsed[CPU] = Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000)
        if MEMORY not in parsed:
            parsed[MEMORY] = Fraction(DEFAULT_MEMORY_REQUEST)
    return parsed


def aggregate_requests(spec: k8s.PodSpec, non_zero: bool = False) -> dict[str, Fraction]:
    """Exact per-resource totals for a pod (component-helpers `PodRequests`)."""
    pod_level = _parsed(spec.resources.requests) if spec.resources else {}
    pod_level = {name: q for name, q in pod_level.items() if name in _POD_LEVEL_SUPPORTED or is_hugepages(name)}
    # With pod-level requests, a missing container request is defaulted only when the pod level
    # lacks it too (B.1), so defaulting is decided per resource below.
    total: dict[str, Fraction] = {}
    for container in spec.containers or ():
        _add_into(total, _container_requests(container, non_zero))
    sidecars: dict[str, Fraction] = {}
    init_max: dict[str, Fraction] = {}
    for container in spec.init_containers or ():
        requests = _container_requests(container, non_zero)
        if container.restart_policy == "Always":
            _add_into(total, requests)
            _add_into(sidecars, requests)
            use = dict(sidecars)
        else:
            use = dict(requests)
            _add_into(use, sidecars)
        _max_into(init_max, use)
    _max_into(total, init_max)
    if pod_level:
        total.update(pod_level)
    if spec.overhead:
        _add_into(total, _parsed(spec.overhead))
    return total


def pod_requests(spec: k8s.PodSpec) -> Resources:
    """The pod's effective request vector used by the Fit filter and real-request scorers."""
    return _to_resources(aggregate_requests(spec))


def pod_non_zero_requests(spec: k8s.PodSpec) -> tuple[int, int]:
    """(milli_cpu, memory) with the scoring defaults for containers that request neither."""
    res = _to_resources(aggregate_requests(spec, non_zero=True))
    return res.milli_cpu, res.memory


def sum_resources(items: Iterable[Resources]) -> Resources:
    total = Resources()
    for item in items:
        total.add(item)
    return total
