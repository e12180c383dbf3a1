"""The Score strategies (`score.go`, `most_allocated.go`, `least_allocated.go`,
`balanced_allocation.go`, `least_numa.go`).

Three strategies score each NUMA cell against the request (amounts in whole units,
`Quantity.Value()`: cpu in whole cores rounded up) and keep the smallest non-zero cell score;
container scope averages that over the init and app containers (truncated). LeastNUMANodes
counts the fewest cells that together fit each container (or the pod), preferring the set with
the smallest average distance.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations

from extender.engine.framework import MAX_NODE_SCORE
from extender.model.numa import (
    SCOPE_POD,
    NumaCell,
    NumaPod,
    is_resource_set_suitable,
    units,
)

MIN_NODE_SCORE = 0
#: ACPI SLIT's "unknown distance".
MAX_DISTANCE = 255
_INT64_MIN = -(2**63)

Weight = Callable[[str], int]
Strategy = Callable[[Mapping[str, int], Mapping[str, int], Weight], int]


def _go_div(a: int, b: int) -> int:
    """Go's int64 division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _go_int64(value: float) -> int:
    """`int64(float64)` as amd64 does it: truncation; NaN and overflow give MinInt64."""
    if math.isnan(value) or not -(2.0**63) <= value < 2.0**63:
        return _INT64_MIN
    return int(value)


def _float32(value: float) -> float:
    return struct.unpack("f", struct.pack("f", value))[0]


def _least_allocated_score(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    cap = units(capacity)
    return _go_div((cap - units(requested)) * MAX_NODE_SCORE, cap)


def _most_allocated_score(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return _go_div(units(requested) * MAX_NODE_SCORE, units(capacity))


def _weighted(score: Callable[[int, int], int]) -> Strategy:
    def strategy(requested: Mapping[str, int], available: Mapping[str, int], weight: Weight) -> int:
        total = weights = 0
        for name, amount in requested.items():
            # A resource the cell does not report scores 0 (its weight still counts).
            w = weight(name)
            total += score(amount, available.get(name, 0)) * w
            weights += w
        if weights == 0:
            return 0  # upstream divides by zero (a container without requests); treated as 0
        return _go_div(total, weights)
    return strategy


least_allocated = _weighted(_least_allocated_score)
most_allocated = _weighted(_most_allocated_score)


def _variance(values: list[float]) -> float:
    """gonum `stat.Variance(x, nil)`: the unbiased (n - 1) variance, compensated; NaN for one."""
    n = len(values)
    mean = sum(values) / n
    unnormalized = compensation = 0.0
    for v in values:
        d = v - mean
        unnormalized += d * d
        compensation += d
    unnormalized -= compensation * compensation / n
    return unnormalized / (n - 1) if n > 1 else math.nan


def balanced_allocation(requested: Mapping[str, int], available: Mapping[str, int],
                        weight: Weight) -> int:
    fractions: list[float] = []
    for name, amount in requested.items():
        capacity = units(available.get(name, 0))
        fraction = 1.0 if capacity == 0 else units(amount) / capacity
        if fraction > 1:
            return 0  # a cell that cannot hold the request is never preferred
        fractions.append(fraction)
    if not fractions:
        return _go_int64(math.nan)
    return _go_int64((1 - _variance(fractions)) * MAX_NODE_SCORE)


STRATEGIES: dict[str, Strategy] = {
    "MostAllocated": most_allocated,
    "LeastAllocated": least_allocated,
    "BalancedAllocation": balanced_allocation,
}


def score_for_each_numa_node(requested: Mapping[str, int], cells: Sequence[NumaCell],
                             strategy: Strategy, weight: Weight) -> int:
    """`scoreForEachNUMANode`: the smallest non-zero cell score (0 when every cell scores 0)."""
    low = 0
    for cell in cells:
        score = strategy(requested, cell.resources, weight)
        if low == 0 or (score != 0 and score < low):
            low = score
    return low


def strategy_score(scope: str, pod: NumaPod, cells: Sequence[NumaCell], strategy: Strategy,
                   weight: Weight) -> int:
    """`podScopeScore` / `containerScopeScore` (the cells are not reduced between containers)."""
    if scope == SCOPE_POD:
        return score_for_each_numa_node(pod.effective, cells, strategy, weight)
    scores = [float(score_for_each_numa_node(requests, cells, strategy, weight))
              for _, requests in (*pod.init, *pod.app)]
    return _go_int64(sum(scores) / len(scores) if scores else math.nan)


# ---- LeastNUMANodes ---------------------------------------------------------------------
def normalize_least_numa(count: int, min_distance: bool, max_numa_nodes: int) -> int:
    """100 minus 100/maxNUMANodes per cell used, plus half a cell's worth when the chosen set
    has the smallest average distance of its size."""
    per = MAX_NODE_SCORE // max_numa_nodes
    score = MAX_NODE_SCORE - count * per
    return score + per // 2 if min_distance else score


def _avg_distance(cells: Sequence[NumaCell], combination: Sequence[int]) -> float:
    """`nodesAvgDistance` (float32): mean cost over every ordered pair of the combination
    (itself included); an unknown cost is 255."""
    if not combination:
        return float(MAX_DISTANCE)
    total = 0
    for first in combination:
        for second in combination:
            total += cells[first].costs.get(cells[second].numa_id, MAX_DISTANCE)
    return _float32(_float32(total) / _float32(len(combination) ** 2))


def _combined(cells: Sequence[NumaCell], combination: Sequence[int]) -> dict[str, int]:
    out: dict[str, int] = {}
    for index in combination:
        for name, amount in cells[index].resources.items():
            out[name] = out.get(name, 0) + amount
    return out


def _fits(qos: str, requests: Mapping[str, int], combined: Mapping[str, int]) -> bool:
    """`checkResourcesFit`."""
    for name, quantity in requests.items():
        if quantity == 0:
            continue
        if not is_resource_set_suitable(qos, name, quantity, combined.get(name, 0)):
            return False
    return True


def _valid(cells: Sequence[NumaCell], requests: Mapping[str, int],
           combination: Sequence[int]) -> bool:
    """`isValidCombineResources`: every cell of the set reports every requested resource."""
    return all(name in cells[index].resources for index in combination for name in requests)


def _suitable_combination(qos: str, cells: Sequence[NumaCell], requests: Mapping[str, int],
                          candidates: list[tuple[int, ...]]) -> tuple[tuple[int, ...] | None, bool]:
    """`findSuitableCombination`: the first fitting set with the size's smallest average
    distance (True), else the first fitting set of the smallest distance found (False)."""
    min_avg = float(MAX_DISTANCE)
    for combination in candidates:
        min_avg = min(min_avg, _avg_distance(cells, combination))
    best: tuple[int, ...] | None = None
    best_distance = 256.0
    for combination in candidates:
        if not _valid(cells, requests, combination):
            continue
        if _fits(qos, requests, _combined(cells, combination)):
            distance = _avg_distance(cells, combination)
            if distance == min_avg:
                return combination, True
            if distance < best_distance:
                best_distance = distance
                best = combination
    return best, False


def numa_nodes_required(qos: str, cells: Sequence[NumaCell],
                        requests: Mapping[str, int]) -> tuple[list[int] | None, bool]:
    """`numaNodesRequired`: the NUMA ids of the smallest fitting set of cells (sizes tried
    from 1 up, sets in lexicographic order of cell positions), and whether its distance is
    the minimal one; (None, False) when even every cell together is not enough."""
    for size in range(1, len(cells) + 1):
        found, min_distance = _suitable_combination(
            qos, cells, requests, list(combinations(range(len(cells)), size)))
        if found is not None:
            return sorted({cells[i].numa_id for i in found}), min_distance
    return None, False


def _only_non_numa(cells: Sequence[NumaCell], requests: Mapping[str, int]) -> bool:
    """`onlyNonNUMAResources`: no cell reports any of the requested resources."""
    return not any(name in cell.resources for name in requests for cell in cells)


def _subtract_from_numas(requests: Mapping[str, int], cells: list[NumaCell],
                         ids: Sequence[int]) -> None:
    """`subtractFromNUMAs`: take each request from the chosen cells in id order until met.
    Upstream indexes the cell list by NUMA *id*; so does this (ids past the list are skipped,
    where Go would panic)."""
    remaining = dict(requests)
    for name in list(remaining):
        for ident in ids:
            if remaining[name] == 0:
                break
            if ident >= len(cells):
                continue
            cell = cells[ident]
            available = cell.resources.get(name)
            if available is None:
                continue
            resources = dict(cell.resources)
            if remaining[name] >= available:
                remaining[name] -= available
                resources[name] = 0
            else:
                resources[name] = available - remaining[name]
                remaining[name] = 0
            cells[ident] = NumaCell(cell.numa_id, resources, cell.costs)


def least_numa_score(scope: str, pod: NumaPod, cells: Sequence[NumaCell],
                     max_numa_nodes: int) -> int:
    """`leastNUMAPodScopeScore` / `leastNUMAContainerScopeScore`."""
    working = list(cells)
    if scope == SCOPE_POD:
        if _only_non_numa(working, pod.effective):
            return MAX_NODE_SCORE
        ids, min_distance = numa_nodes_required(pod.qos, working, pod.effective)
        if ids is None:
            return MIN_NODE_SCORE
        return normalize_least_numa(len(ids), min_distance, max_numa_nodes)
    most = 0
    all_min = True
    # The order the Topology Manager asks for hints in: init containers, then app containers.
    for _, requests in (*pod.init, *pod.app):
        if _only_non_numa(working, requests):
            continue
        ids, min_distance = numa_nodes_required(pod.qos, working, requests)
        if ids is None:
            return MIN_NODE_SCORE
        all_min = all_min and min_distance
        most = max(most, len(ids))
        _subtract_from_numas(requests, working, ids)
    if most == 0:
        return MAX_NODE_SCORE
    return normalize_least_numa(most, all_min, max_numa_nodes)
