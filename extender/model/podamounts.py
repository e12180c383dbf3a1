"""A pod's request figures in one pass over its containers.

`PodView` needs five request arithmetics of every pod it views: kube-scheduler's
(`resources.pod_requests`), its non-zero variants for NodeInfo and for scorers
(`pod_non_zero_requests`, `pod_scoring_non_zero_requests`), CapacityScheduling's
(`scheduling.quota_requests`) and Trimaran's (`podload.pod_load`). Each walks the containers
and converts every quantity again; a 150 000-pod snapshot spent most of its view building
there. `pod_amounts` walks the regular containers once, converting each quantity once (a
table of raw amounts: workloads repeat theirs), and derives all five from the same sums.

It does so only for the pods those arithmetics treat alike: no init containers, no overhead,
no pod-level requests (where sidecars, maxima and overrides make them differ). Every other
pod goes through the five reference functions, so the figures are theirs by construction,
kept by the spec fields they read (`_reference_key`): a workload's replicas, or a Job's
preemptors, repeat them. `tests/engine/test_podamounts.py` holds both paths to the
references on random and bench specs.
"""

from __future__ import annotations

from typing import NamedTuple

import msgspec

from extender.model import k8s
from extender.model.podload import CONVERTED, PodLoad, convert, pod_load, shared_load
from extender.model.quantity import MILLI_IN_NANOS, NANO, QuantityError, scaled_from_nanos
from extender.model.resources import (
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    Resources,
    is_scalar_resource,
    pod_non_zero_requests,
    pod_requests,
    pod_scoring_non_zero_requests,
)
from extender.model.scheduling import quota_requests

_DEFAULT_CPU_NANOS = DEFAULT_MILLI_CPU_REQUEST * MILLI_IN_NANOS
_DEFAULT_MEMORY_NANOS = DEFAULT_MEMORY_REQUEST * NANO

#: `PodAmounts.load` of a pod whose Trimaran figures follow from its requests: one container,
#: no cpu or memory limit, CapacityScheduling's sums equal to the requests. Its figures are
#: then built on demand (`derived_load`) rather than kept for every pod. The two values say
#: whether the container requests cpu.
DERIVED_CPU = 1
DERIVED_NO_CPU = 0


class PodAmounts(NamedTuple):
    requests: Resources  # `pod_requests`
    non_zero_cpu: int  # `pod_non_zero_requests`
    non_zero_memory: int
    scoring_non_zero_cpu: int  # `pod_scoring_non_zero_requests` (the same unless pod-level)
    scoring_non_zero_memory: int
    #: `quota_requests`; None when equal to `requests` (the common case: then the caller
    #: shares its `requests` object).
    quota: Resources | None
    #: `pod_load` (shared), or DERIVED_CPU / DERIVED_NO_CPU: `derived_load(requests, load)`.
    load: PodLoad | int


def derived_load(requests: Resources, derived: int) -> PodLoad:
    """`pod_load` of a pod `pod_amounts` gave DERIVED_CPU or DERIVED_NO_CPU: its one container's
    requests are the pod's (rounded alike, as CapacityScheduling's equal sums show)."""
    cpu = requests.milli_cpu
    if derived == DERIVED_CPU:
        return shared_load(PodLoad(cpu, requests.memory, 0, 0, 0, (cpu,), 0, 0))
    return shared_load(PodLoad(cpu, requests.memory, 0, 0, 0, (), 1, 0))


def _reference(spec: k8s.PodSpec) -> PodAmounts:
    requests = pod_requests(spec)
    non_zero_cpu, non_zero_memory = pod_non_zero_requests(spec)
    if spec.resources is not None and spec.resources.requests:
        scoring_cpu, scoring_memory = pod_scoring_non_zero_requests(spec)
    else:
        scoring_cpu, scoring_memory = non_zero_cpu, non_zero_memory
    quota = quota_requests(spec)
    return PodAmounts(requests, non_zero_cpu, non_zero_memory, scoring_cpu, scoring_memory,
                      None if quota == requests else quota, pod_load(spec))


#: `_reference`'s answers by `_reference_key` (emptied when full: workloads are few).
_REFERENCE_MEMO: dict[bytes, PodAmounts] = {}
REFERENCE_MEMO_LIMIT = 4096
_key_encoder = msgspec.json.Encoder()


def _reference_key(spec: k8s.PodSpec) -> bytes:
    """Every field the five arithmetics read: each container's resources, an init
    container's restart policy (a sidecar's requests add up, an init container's are a
    maximum), the overhead and the pod-level resources."""
    return _key_encoder.encode((
        [(c.resources, c.restart_policy) for c in spec.init_containers or ()],
        [c.resources for c in spec.containers or ()], spec.overhead, spec.resources))


def pod_amounts(spec: k8s.PodSpec) -> PodAmounts:
    """The five request figures of a pod (see the module docstring)."""
    if spec.init_containers or spec.overhead or (
            spec.resources is not None and spec.resources.requests):
        key = _reference_key(spec)
        found = _REFERENCE_MEMO.get(key)
        if found is None:
            found = _reference(spec)  # a QuantityError leaves nothing kept
            if len(_REFERENCE_MEMO) >= REFERENCE_MEMO_LIMIT:
                _REFERENCE_MEMO.clear()
            _REFERENCE_MEMO[key] = found
        return found
    try:
        return _regular_only(spec)
    except QuantityError:
        return _reference(spec)  # raises the error the reference functions raise first


def _regular_only(spec: k8s.PodSpec) -> PodAmounts:
    converted = CONVERTED
    # kube-scheduler's sums, in nano-units, rounded once at the end.
    cpu_n = mem_n = eph_n = 0
    others: dict[str, int] | None = None  # other names, in order of first appearance
    no_cpu = no_mem = 0  # containers defaulted by the non-zero arithmetic
    # CapacityScheduling's and Trimaran's sums: each amount rounded on its own.
    q_cpu = q_mem = q_eph = q_pods = 0
    q_others: dict[str, int] = {}
    lim_cpu = lim_mem = unset = 0
    limited = False  # some container has a cpu or memory limit
    cpu_requests: list[int] = []
    containers = spec.containers or ()
    for container in containers:
        res = container.resources
        asked = capped = None
        if res is not None:
            asked, capped = res.requests, res.limits
        capped_cpu = False
        if capped:
            raw = capped.get(CPU)
            if raw is not None:
                capped_cpu = limited = True
                lim_cpu += (converted.get(raw) or convert(raw))[1]
            raw = capped.get(MEMORY)
            if raw is not None:
                limited = True
                lim_mem += (converted.get(raw) or convert(raw))[2]
        if not asked:
            no_cpu += 1
            no_mem += 1
            if not capped_cpu:
                unset += 1
            continue
        seen = 0
        raw = asked.get(CPU)
        if raw is None:
            no_cpu += 1
            if not capped_cpu:
                unset += 1
        else:
            seen += 1
            nanos, milli, _ = converted.get(raw) or convert(raw)
            cpu_n += nanos
            q_cpu += milli
            if not capped_cpu:
                cpu_requests.append(milli)
        raw = asked.get(MEMORY)
        if raw is None:
            no_mem += 1
        else:
            seen += 1
            nanos, _, units = converted.get(raw) or convert(raw)
            mem_n += nanos
            q_mem += units
        if len(asked) == seen:
            continue
        for name, raw in asked.items():
            if name == CPU or name == MEMORY:
                continue
            nanos, _, units = converted.get(raw) or convert(raw)
            if name == EPHEMERAL_STORAGE:
                eph_n += nanos
                q_eph += units
            elif name == PODS:
                q_pods += units
            elif is_scalar_resource(name):
                if others is None:
                    others = {}
                others[name] = others.get(name, 0) + nanos
                q_others[name] = q_others.get(name, 0) + units
    requests = Resources(
        scaled_from_nanos(cpu_n, MILLI_IN_NANOS), scaled_from_nanos(mem_n, NANO),
        scaled_from_nanos(eph_n, NANO), 0,
        {name: scaled_from_nanos(nanos, NANO) for name, nanos in others.items()} if others else None)
    non_zero_cpu = (scaled_from_nanos(cpu_n + no_cpu * _DEFAULT_CPU_NANOS, MILLI_IN_NANOS)
                    if no_cpu else requests.milli_cpu)
    non_zero_memory = (scaled_from_nanos(mem_n + no_mem * _DEFAULT_MEMORY_NANOS, NANO)
                       if no_mem else requests.memory)
    quota: Resources | None = None
    if not (q_cpu == requests.milli_cpu and q_mem == requests.memory
            and q_eph == requests.ephemeral_storage and not q_pods
            and q_others == requests.scalar):
        quota = Resources(q_cpu, q_mem, q_eph, q_pods, q_others)
        if quota == requests:
            quota = None
    load: PodLoad | int
    if quota is None and not limited and len(containers) == 1:
        load = DERIVED_CPU if cpu_requests else DERIVED_NO_CPU
    else:
        load = shared_load(PodLoad(q_cpu, q_mem, lim_cpu, lim_mem, lim_cpu, tuple(cpu_requests),
                                   unset, 0))
    return PodAmounts(requests, non_zero_cpu, non_zero_memory, non_zero_cpu, non_zero_memory,
                      quota, load)
