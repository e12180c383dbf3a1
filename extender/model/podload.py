"""What scheduler-plugins' load-aware scorers (Trimaran) read of a pod.

Trimaran has its own request arithmetic (`pkg/trimaran/resourcestats.go`
`GetEffectiveResource`), unlike kube-scheduler's `resource.PodRequests`: the containers'
amounts summed (each Quantity rounded up on its own, as `framework.Resource.Add` does), then
raised to any single init container's (sidecars are not special), then the pod overhead added;
pod-level resources are not read. TargetLoadPacking predicts a container's cpu from its limit,
else its request times a multiplier, else a default (`PredictUtilisation`): the inputs of that
prediction are kept here, the arguments are the plugin's.
"""

from __future__ import annotations

from typing import NamedTuple

from extender.model import k8s
from extender.model.quantity import (
    MILLI_IN_NANOS,
    NANO,
    milli_value,
    nano_value,
    scaled_from_nanos,
    value,
)
from extender.model.resources import CPU, MEMORY


class PodLoad(NamedTuple):
    """A pod's Trimaran figures: cpu in millicores, memory in bytes."""

    #: `GetResourceRequested`: containers summed, max'ed with each init container, + overhead.
    request_cpu: int
    request_memory: int
    #: `GetResourceLimits`, the same over limits (not yet raised to the requests).
    limit_cpu: int
    limit_memory: int
    #: TargetLoadPacking's inputs, over the regular containers: Σ cpu limits of those with a
    #: cpu limit; the cpu requests of those with a request but no limit; how many have neither.
    cpu_limits: int
    cpu_requests: tuple[int, ...]
    cpu_unset: int
    #: `pod.Spec.Overhead.Cpu().MilliValue()`.
    overhead_cpu: int


NO_LOAD = PodLoad(0, 0, 0, 0, 0, (), 0, 0)

_SHARED_LIMIT = 100_000
_shared: dict[PodLoad, PodLoad] = {NO_LOAD: NO_LOAD}


_CONVERTED_LIMIT = 65536
_millis: dict[k8s.QuantityValue, int] = {}
_values: dict[k8s.QuantityValue, int] = {}


def _milli(raw: k8s.QuantityValue) -> int:
    """`Quantity.MilliValue()`, remembered per raw amount (workloads repeat theirs)."""
    found = _millis.get(raw)
    if found is None:
        if len(_millis) >= _CONVERTED_LIMIT:
            _millis.clear()
        found = _millis[raw] = milli_value(raw)
    return found


def _value(raw: k8s.QuantityValue) -> int:
    """`Quantity.Value()`, remembered per raw amount."""
    found = _values.get(raw)
    if found is None:
        if len(_values) >= _CONVERTED_LIMIT:
            _values.clear()
        found = _values[raw] = value(raw)
    return found


#: raw amount -> (nano-units, `MilliValue()`, `Value()`): `model.podamounts`' conversions.
CONVERTED: dict[k8s.QuantityValue, tuple[int, int, int]] = {}


def convert(raw: k8s.QuantityValue) -> tuple[int, int, int]:
    """(nano-units, `Quantity.MilliValue()`, `Quantity.Value()`) of a raw amount, remembered
    in `CONVERTED` (read it first: `CONVERTED.get(raw) or convert(raw)`)."""
    nanos = nano_value(raw)
    found = (nanos, scaled_from_nanos(nanos, MILLI_IN_NANOS), scaled_from_nanos(nanos, NANO))
    if len(CONVERTED) >= _CONVERTED_LIMIT:
        CONVERTED.clear()
    CONVERTED[raw] = found
    return found


def pod_load(spec: k8s.PodSpec) -> PodLoad:
    """The pod's Trimaran figures (equal figures share one object)."""
    containers, inits, overhead = spec.containers, spec.init_containers, spec.overhead
    if not containers and not inits and not overhead:
        return NO_LOAD
    req_cpu = req_mem = lim_cpu = lim_mem = cpu_limits = unset = 0
    requests: list[int] = []
    millis, values = _millis, _values
    for container in containers or ():
        res = container.resources
        if res is None:
            unset += 1
            continue
        asked, capped = res.requests, res.limits
        # TargetLoadPacking's PredictUtilisation reads a cpu limit, else a cpu request.
        if capped:
            raw = capped.get(CPU)
            if raw is not None:
                milli = millis.get(raw)
                if milli is None:
                    milli = _milli(raw)
                lim_cpu += milli
                cpu_limits += milli
            raw = capped.get(MEMORY)
            if raw is not None:
                amount = values.get(raw)
                lim_mem += amount if amount is not None else _value(raw)
        if asked:
            raw = asked.get(CPU)
            if raw is not None:
                milli = millis.get(raw)
                if milli is None:
                    milli = _milli(raw)
                req_cpu += milli
                if not capped or CPU not in capped:
                    requests.append(milli)
            elif not capped or CPU not in capped:
                unset += 1
            raw = asked.get(MEMORY)
            if raw is not None:
                amount = values.get(raw)
                req_mem += amount if amount is not None else _value(raw)
        elif not capped or CPU not in capped:
            unset += 1
    for container in inits or ():  # each init container's amount raises the total to it
        res = container.resources
        if res is None:
            continue
        if res.requests:
            if CPU in res.requests:
                req_cpu = max(req_cpu, _milli(res.requests[CPU]))
            if MEMORY in res.requests:
                req_mem = max(req_mem, _value(res.requests[MEMORY]))
        if res.limits:
            if CPU in res.limits:
                lim_cpu = max(lim_cpu, _milli(res.limits[CPU]))
            if MEMORY in res.limits:
                lim_mem = max(lim_mem, _value(res.limits[MEMORY]))
    overhead_cpu = 0
    if overhead:
        if CPU in overhead:
            overhead_cpu = _milli(overhead[CPU])
            req_cpu += overhead_cpu
            lim_cpu += overhead_cpu
        if MEMORY in overhead:
            overhead_mem = _value(overhead[MEMORY])
            req_mem += overhead_mem
            lim_mem += overhead_mem
    return shared_load(PodLoad(req_cpu, req_mem, lim_cpu, lim_mem, cpu_limits, tuple(requests),
                               unset, overhead_cpu))


def shared_load(load: PodLoad) -> PodLoad:
    """The one object kept for figures equal to `load` (pods of a workload share theirs)."""
    found = _shared.get(load)
    if found is None:
        if len(_shared) >= _SHARED_LIMIT:
            _shared.clear()
        found = _shared[load] = load
    return found


def load_sizes() -> dict[str, int]:
    """Entries of this module's tables (exported as metrics): shared pod loads (cleared at
    100 000) and converted quantities (each of the three tables cleared at 65 536)."""
    return {"shared_pod_loads": len(_shared),
            "load_quantities": len(_millis) + len(_values) + len(CONVERTED)}
