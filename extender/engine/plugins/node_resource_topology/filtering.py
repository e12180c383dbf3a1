"""The single-numa-node Filter (`filter.go`): can every container (container scope) or the whole
pod (pod scope) get all it asks for from one NUMA cell, as kubelet's Topology Manager with the
`single-numa-node` policy will demand at admission?"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from extender.model.numa import (
    QOS_GUARANTEED,
    SCOPE_CONTAINER,
    SCOPE_POD,
    NumaCell,
    NumaPod,
    is_host_level_resource,
    is_numa_affine_resource,
    is_resource_set_suitable,
)
from extender.model.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS

CANNOT_ALIGN_POD = "cannot align pod"
CANNOT_ALIGN_CONTAINER = "cannot align container"
CANNOT_ALIGN_INIT_CONTAINER = "cannot align init container"
CANNOT_ALIGN_SIDECAR_CONTAINER = "cannot align sidecar container"
INCONSISTENT_ACCOUNTING = "inconsistent resource accounting"
#: `util.ResourceList(nodeInfo.Allocatable)` always has these, even at zero.
_ALWAYS_ALLOCATABLE = frozenset({CPU, MEMORY, PODS, EPHEMERAL_STORAGE})


class AccountingError(Exception):
    """`subtractResourcesFromNUMANodeList`'s error (a request above the chosen cell's amount)."""


def node_resource_names(scalar: Mapping[str, int]) -> frozenset[str]:
    """The names `util.ResourceList(nodeInfo.Allocatable)` holds: the four native resources
    and every scalar (extended, hugepages, attachable-volumes) resource of the allocatable."""
    return _ALWAYS_ALLOCATABLE | frozenset(scalar)


def fitting_cell(cells: Sequence[NumaCell], requests: Mapping[str, int], qos: str,
                 node_names: frozenset[str]) -> int | None:
    """`resourcesAvailableInAnyNUMANodes`: the lowest NUMA id every requested resource fits on
    (the cell kubelet would pick: the narrowest, lowest), or None.

    A zero request is ignored; a resource the node does not report at all fails at once; a
    host-level resource (storage, devices, extended resources) no cell reports is fine at node
    level; a NUMA-affine resource of a non-Guaranteed pod fits any cell that reports it."""
    bits: set[int] | None = None  # None: every id (bitmask.Fill)
    for name, quantity in requests.items():
        if quantity == 0:
            continue
        if name not in node_names:
            return None
        has_affinity = False
        suitable: set[int] = set()
        for cell in cells:
            amount = cell.resources.get(name)
            if amount is None:
                continue
            has_affinity = True
            if is_resource_set_suitable(qos, name, quantity, amount):
                suitable.add(cell.numa_id)
        if not has_affinity and is_host_level_resource(name):
            continue
        bits = suitable if bits is None else bits & suitable
        if not bits:
            return None
    return 0 if bits is None else min(bits)


def subtract(cells: list[NumaCell], numa_id: int, qos: str, requests: Mapping[str, int]) -> None:
    """`subtractResourcesFromNUMANodeList`: take a container's exclusive requests from the cell
    it was aligned on (a non-Guaranteed pod's cpu, memory and hugepages are shared: kept)."""
    for index, cell in enumerate(cells):
        if cell.numa_id != numa_id:
            continue
        resources = dict(cell.resources)
        for name, quantity in requests.items():
            if qos != QOS_GUARANTEED and is_numa_affine_resource(name):
                continue
            if quantity == 0 or name not in resources:
                continue
            left = resources[name] - quantity
            if left < 0:
                raise AccountingError(f"resource {name!r} request exceeds NUMA {numa_id} availability")
            resources[name] = left
        cells[index] = NumaCell(cell.numa_id, resources, cell.costs)


def single_numa_verdict(scope: str, pod: NumaPod, cells: Sequence[NumaCell],
                        node_names: frozenset[str]) -> str | None:
    """The reason the pod cannot be aligned, or None when it can. Raises `AccountingError`."""
    if scope == SCOPE_POD:
        if fitting_cell(cells, pod.effective, pod.qos, node_names) is None:
            return CANNOT_ALIGN_POD
        return None
    assert scope == SCOPE_CONTAINER
    working = list(cells)
    # Init containers (sidecars too) run one after the other before the app containers: each
    # must fit alone, and none is subtracted.
    for name, requests in pod.init:
        if fitting_cell(working, requests, pod.qos, node_names) is None:
            # Named by kind (`logging.GetInitContainerKind`), as the oracle found.
            return CANNOT_ALIGN_SIDECAR_CONTAINER if name in pod.sidecars \
                else CANNOT_ALIGN_INIT_CONTAINER
    for _, requests in pod.app:
        chosen = fitting_cell(working, requests, pod.qos, node_names)
        if chosen is None:
            return CANNOT_ALIGN_CONTAINER
        subtract(working, chosen, pod.qos, requests)
    return None
