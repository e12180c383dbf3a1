"""NodeResourcesFit's arithmetic (kube-scheduler's `fitsRequest`), written once.

Every path that asks whether a pod's requests fit a node reads the rule from here: the filter
on one node, its passes over `NodeTable` rows, the preempt verb's fast and batch paths and the
simulator's victim sums. The rule:

* checked, in the order reasons are listed: one more pod within the pod count, then cpu,
  memory and ephemeral storage (`RESOURCES`), then scalar resources by name;
* a base request that is not positive is skipped, a scalar request of 0 or an ignored one
  (`ignoredResources`, `ignoredResourceGroups`: extended resources only) too;
* a request fits when it is at most allocatable minus requested ("free"); one that does not
  is "Insufficient <resource>", and one above the whole allocatable makes the verdict
  unresolvable (v1.34+).

`FitRequest` is one pod's request under those rules. `verdict` judges a node (the reference);
the others take free amounts directly, as Python ints (`fits`, `short_bits`, `unresolvable`)
or as numpy columns (the `_columns` forms): the same comparisons side by side, which
`tests/engine/test_fit_kernel.py` holds equal.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

import numpy as np

from extender.engine.nodetable import NodeTable
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.model.resources import Resources, is_extended_resource

#: The base resources, in the order they are checked and worded (index d below).
RESOURCES = ("cpu", "memory", "ephemeral-storage")
TOO_MANY_PODS = "Too many pods"
#: `short_bits`: bit 0 is the pod count, bit d + 1 base resource d.
PODS_SHORT = 1

#: An amount as a Python int or as a numpy column (one per row).
N = TypeVar("N", int, np.ndarray)
T = TypeVar("T")
#: Per base resource index, a free amount (a list of three, or a mapping of the requested ones).
Amounts = Sequence[T] | Mapping[int, T]


def insufficient(resource: str) -> str:
    return f"Insufficient {resource}"


_INSUFFICIENT = tuple(insufficient(name) for name in RESOURCES)


def amounts_of(resources: Resources) -> tuple[int, int, int]:
    """The base amounts of `resources`, in `RESOURCES`' order."""
    return resources.milli_cpu, resources.memory, resources.ephemeral_storage


def table_columns(table: NodeTable) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """A `NodeTable`'s allocatable and requested columns, in `RESOURCES`' order."""
    return ((table.alloc_cpu, table.alloc_memory, table.alloc_ephemeral),
            (table.req_cpu, table.req_memory, table.req_ephemeral))


class Ignored:
    """NodeResourcesFit's `ignoredResources` and `ignoredResourceGroups`."""

    __slots__ = ("names", "groups")

    def __init__(self, names: frozenset[str] = frozenset(),
                 groups: frozenset[str] = frozenset()) -> None:
        self.names = names
        self.groups = groups

    def __call__(self, name: str) -> bool:
        """Whether a request for `name` is not checked (only extended resources can be)."""
        return is_extended_resource(name) and (
            name in self.names or name.split("/", 1)[0] in self.groups)


class FitRequest:
    """One pod's request as the rule checks it (see the module's docstring)."""

    __slots__ = ("amounts", "needs", "dims", "floor", "scalars", "nothing_requested")

    def __init__(self, amounts: tuple[int, int, int],
                 scalars: tuple[tuple[str, int], ...] = (),
                 nothing_requested: bool | None = None) -> None:
        #: The base requests, in `RESOURCES`' order.
        self.amounts = amounts
        #: The base requests checked (positive), as (resource index, amount).
        self.needs = tuple((d, amount) for d, amount in enumerate(amounts) if amount > 0)
        #: Their indices: the free amounts a caller must supply.
        self.dims = tuple(d for d, _ in self.needs)
        #: Per base resource, the least free amount that fits: the request, or -inf where it
        #: is skipped (Python compares int and float exactly).
        self.floor: tuple[float, float, float] = tuple(  # type: ignore[assignment]
            amount if amount > 0 else -math.inf for amount in amounts)
        #: The scalar requests checked, by name: (name, amount).
        self.scalars = scalars
        #: Nothing at all requested (`fitsRequest`'s early return): only the pod count counts.
        self.nothing_requested = not (any(amounts) or scalars) \
            if nothing_requested is None else nothing_requested

    @classmethod
    def of(cls, pod: PodView, ignored: Callable[[str], bool] | None = None) -> FitRequest:
        """`pod`'s request, skipping the scalar resources `ignored` names (`Ignored`)."""
        requests = pod.requests
        # Go iterates a map here, so the order of scalar reasons is unspecified; sorted for
        # stability.
        scalars = tuple(
            (name, amount) for name, amount in sorted(requests.scalar.items())
            if amount != 0 and not (ignored is not None and ignored(name)))
        amounts = amounts_of(requests)
        return cls(amounts, scalars, not (any(amounts) or requests.scalar))

    # ---- one node: the reference ----------------------------------------------------------
    def verdict(self, node: NodeInfo) -> tuple[tuple[str, ...], bool] | None:
        """None when the pod fits `node`, else its reasons and whether they are unresolvable."""
        allocatable = node.node.allocatable
        used = node.requested
        reasons: list[str] = []
        if len(node.pods) + 1 > allocatable.allowed_pods:
            reasons.append(TOO_MANY_PODS)
        if self.nothing_requested:
            return (tuple(reasons), False) if reasons else None
        unresolvable = False
        if self.needs:
            whole = amounts_of(allocatable)
            taken = amounts_of(used)
            for d, amount in self.needs:
                if amount > whole[d] - taken[d]:
                    reasons.append(_INSUFFICIENT[d])
                    unresolvable = unresolvable or amount > whole[d]
        for name, amount in self.scalars:
            capacity = allocatable.scalar.get(name, 0)
            if amount > capacity - used.scalar.get(name, 0):
                reasons.append(insufficient(name))
                unresolvable = unresolvable or amount > capacity
        if not reasons:
            return None
        return tuple(reasons), unresolvable

    # ---- free amounts as ints (base resources only) ---------------------------------------
    def fits(self, free_pods: int, cpu: int, memory: int, ephemeral: int) -> bool:
        """Whether the base request fits these free amounts (no scalar request checked)."""
        floor = self.floor
        return (free_pods >= 1 and floor[0] <= cpu and floor[1] <= memory
                and floor[2] <= ephemeral)

    def short_bits(self, free_pods: int, free: Amounts[int]) -> int:
        """Which checks fail on these free amounts (`PODS_SHORT`, bit d + 1 for resource d):
        what `verdict`'s reasons follow from."""
        bits = PODS_SHORT if free_pods < 1 else 0
        for d, amount in self.needs:
            if amount > free[d]:
                bits |= 2 << d
        return bits

    def unresolvable(self, free: Amounts[int], whole: Amounts[int]) -> bool:
        """Whether a base request fails and exceeds the whole allocatable."""
        return any(amount > free[d] and amount > whole[d] for d, amount in self.needs)

    # ---- ints or columns alike ------------------------------------------------------------
    @staticmethod
    def spare_slots(free_pods: N) -> N:
        """How many more pods the pod count admits beside the pod (it fits while >= 0)."""
        return free_pods - 1

    def rooms(self, free: Amounts[N]) -> list[tuple[int, N]]:
        """Per checked base resource, (index, what is left once the pod is in): the pod fits
        while each is >= 0."""
        return [(d, free[d] - amount) for d, amount in self.needs]

    # ---- free amounts as numpy columns ----------------------------------------------------
    def fits_columns(self, free_pods: np.ndarray, free: Amounts[np.ndarray]) -> np.ndarray:
        """`fits` per row."""
        fits = free_pods >= 1
        for d, amount in self.needs:
            fits &= free[d] >= amount
        return fits  # type: ignore[no-any-return]

    def shortfall_columns(self, free_pods: np.ndarray, free: Amounts[np.ndarray],
                          whole: Amounts[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """`short_bits` (int64) and `unresolvable` per row."""
        bits = (free_pods < 1).astype(np.int64)
        beyond = np.zeros(len(bits), dtype=bool)
        for d, amount in self.needs:
            short = free[d] < amount
            bits |= short.astype(np.int64) << (d + 1)
            beyond |= short & (whole[d] < amount)
        return bits, beyond
