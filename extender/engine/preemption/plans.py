"""A node's `SelectVictimsOnNode` walk as data, so the preempt verb can finish it with sums.

For a preemptor of priority P, the dry run evicts every pod below P, then offers them back
(PDB-violating ones first, each group most important first) and keeps back each one the pod
still fits beside. When the only filter that depends on the node's pods is NodeResourcesFit,
"fits" is arithmetic: along the walk, a pod comes back when the amounts of the pods already
back plus its own stay within the room left once everything is evicted. `NodePlan` holds the
walk with running totals of its requests; `reprieve` then finds each pod that cannot come
back by bisection instead of re-running the filters pod by pod.

A plan depends on the node's pods, which of them are below P and the PDBs only (never on the
preemptor's requests or the node's allocatable), so the verb keeps it from request to request
(`PreemptionMemo`) and checks those three before each reuse.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_right
from collections.abc import Callable, Sequence
from itertools import accumulate

from extender.model.pod import PodView

Guarding = Callable[[PodView], tuple[int, ...]]


class NodePlan:
    """The walk for one node, preemptor priority (or any that evicts the same pods) and PDB
    set."""

    __slots__ = ("pods", "below", "above", "token", "latest", "ordered", "monotone", "walk",
                 "size", "_position", "rank", "flags", "table")

    def __init__(self, pods: tuple[PodView, ...], priority: int, token: int,
                 guarding: Guarding, allowed: Sequence[int]) -> None:
        #: What the plan was built from: the node's pods (by identity), the PDB epoch.
        self.pods = pods
        self.token = token
        potential = [p for p in pods if p.priority < priority]
        #: Every preemptor priority in (below, above] evicts the same pods: the plan serves
        #: them all (a cluster has few priority classes, and pods keep theirs).
        self.below = max((p.priority for p in potential), default=-math.inf)
        self.above = min((p.priority for p in pods if p.priority >= priority), default=math.inf)
        # Unstarted pods are sorted last among their priority, as if started at +inf. That is
        # `by_importance`'s order (which puts them at `now`) whenever every started pod began
        # before `now`: `usable_at` checks it. A NaN start orders unpredictably: no plan.
        starts = [p.start_time for p in potential if p.start_time is not None]
        self.ordered = not any(math.isnan(s) for s in starts)
        self.latest = max(starts, default=-math.inf)
        potential.sort(key=_importance_unstarted_last)
        # `PdbIndex.split`: budgets spent along the importance order.
        spent: dict[int, int] = {}
        violating: list[PodView] = []
        others: list[PodView] = []
        for pod in potential:
            overdrawn = False
            for i in guarding(pod):
                spent[i] = times = spent.get(i, 0) + 1
                if times > allowed[i]:
                    overdrawn = True
            (violating if overdrawn else others).append(pod)
        walk = violating + others
        size = len(walk)
        self.walk = walk
        self.size = size
        self._position: dict[PodView, int] | None = None
        # `by_importance` of victims taken in walk order: importance, ties in walk order.
        # Without violating pods the walk is that order already (one stable sort made it).
        if violating:
            by_rank = sorted(range(size), key=lambda i: _importance_unstarted_last(walk[i]))
            self.rank = [0] * size
            for r, i in enumerate(by_rank):
                self.rank[i] = r
        else:
            self.rank = list(range(size))
        #: 1 at the walk's violating positions (the walk starts with them).
        self.flags = b"\x01" * len(violating) + bytes(len(others))
        columns = ([pod.requests.milli_cpu for pod in walk], [pod.requests.memory for pod in walk],
                   [pod.requests.ephemeral_storage for pod in walk])
        # Bisection needs running totals that never decrease.
        self.monotone = all(min(column, default=0) >= 0 for column in columns)
        flat: list[int] = []
        for column in columns:
            flat.extend(accumulate(column))
        # Per resource, the least request from each position on: below it, nothing more
        # comes back.
        for column in columns:
            flat.extend(list(accumulate(reversed(column), min))[::-1])
        #: One flat int64 column (few cache lines for `reprieve`): the running totals of cpu,
        #: memory and ephemeral storage along the walk, then their least-from-here.
        self.table = array("q")
        try:
            self.table = array("q", flat)
        except OverflowError:  # beyond int64: the straightforward path handles the node
            self.monotone = False

    @property
    def position(self) -> dict[PodView, int]:
        """Each walk pod's position (made when first asked: the batch path never does)."""
        if self._position is None:
            self._position = {pod: i for i, pod in enumerate(self.walk)}
        return self._position

    def valid_for(self, pods: tuple[PodView, ...], priority: int, token: int) -> bool:
        # Tuple equality compares the pods by identity first: a C loop, no attribute reads.
        return self.token == token and self.below < priority <= self.above and self.pods == pods

    def usable_at(self, now: float) -> bool:
        """Whether the walk's order is `by_importance`'s at `now`."""
        return self.ordered and self.latest < now


def _importance_unstarted_last(pod: PodView) -> tuple[int, float]:
    start = pod.start_time
    return -pod.priority, math.inf if start is None else start


#: Where a resource's least-from-here rows start in `NodePlan.table`, in rows of `size`.
LEAST = 3


def reprieve(table: array, size: int, rooms: Sequence[tuple[int, int]], slots: int,
             pinned: Sequence[int]) -> list[int]:
    """The walk positions that end up victims, in walk order.

    `table` and `size` are the plan's; `rooms` holds, for each resource the preemptor
    requests, its index (0 cpu, 1 memory, 2 ephemeral storage) and the room left once every
    potential victim is gone (the node's free amount plus all their requests, minus the
    preemptor's request); `slots` the pods that may come back before the pod count blocks;
    `pinned` the (sorted) positions that stay victims whatever happens.
    The pods between two victims all came back, so the next victim is the first position
    where a running total, less what the victims so far took out of it, passes the room.
    Once the room left is below every remaining request, the rest are all victims.
    """
    victims: list[int] = []
    starts = [d * size for d, _ in rooms]
    leasts = [(LEAST + d) * size for d, _ in rooms]
    # The room left in each resource for the next pod to come back.
    left = [room for _, room in rooms]
    dims = range(len(rooms))
    skipped = 0
    pos = 0
    pin = 0
    pins = len(pinned)
    while pos < size:
        # Up to `pos`, (pos - skipped) pods came back; the one at `slots + skipped` is too many.
        limit = slots + skipped
        if pos >= limit:
            victims.extend(range(pos, size))
            break
        full = False
        for d in dims:
            if left[d] < table[leasts[d] + pos]:
                full = True
                break
        if full:
            victims.extend(range(pos, size))
            break
        stop = pinned[pin] if pin < pins else size
        first = stop if stop < limit else limit
        for d in dims:
            start = starts[d]
            # `left[d]` is room - (running[pos - 1] - taken): compare running totals with it.
            before = table[start + pos - 1] if pos else 0
            first = bisect_right(table, left[d] + before, start + pos, start + first) - start
        if first >= size:
            break
        victims.append(first)
        if first == stop:
            pin += 1
        for d in dims:
            start = starts[d]
            # Everything from pos up to first came back; first itself is evicted.
            left[d] -= (table[start + first - 1] if first else 0) - \
                (table[start + pos - 1] if pos else 0)
        skipped += 1
        pos = first + 1
    return victims
