"""The state's bound pods as columns, for the preempt verb's vectorised path (`batch.py`).

Every pod on a node of the state's `NodeTable` gets an ordinal; per ordinal the columns hold
what the verb reads of a proposed victim: its priority, its cpu, memory and ephemeral-storage
requests, its start time, the table row of its node, and, per PDB epoch, what evicting it does
to the budgets (`PdbEpoch.exposure`). A request's victim UIDs then resolve to ordinals in one
pass over a dict, and everything after that is numpy over all proposed nodes at once.

The columns are kept row by row, as the table keeps its own: a row whose `load_gen` moved since
it was read is read again (`sync`); a pod view still on the row keeps its ordinal (and what is
cached for it), a new view gets a fresh one, and a view gone frees its own. So the first request
pays one pass over the cluster's pods and later ones only the rows that changed.

Per row, the columns also hold the node's `NodePlan` (`plans.py`) flattened: the walk's
ordinals, and per ordinal its position, its rank (`by_importance` among the walk) and whether
the walk marks it PDB-violating, valid for the row's `load_gen`, the PDB epoch and the band of
preemptor priorities the plan serves (`ensure_plans`). A request missing many plans (a
preemptor proposing nodes no earlier one did) builds them together from the columns, with
sorts and segment sums over all their pods; a few go through `NodePlan`, node by node.

Amounts outside [0, `AMOUNT_LIMIT`) and priorities outside ±`PRIORITY_LIMIT` mark a pod
inexact (`exact`): a node with such a pod is left to the per-node path, so int64 sums never
overflow and comparisons never round.

One request at a time uses the columns (`lock`; the verb falls back to the per-node path when
the other thread holds it): unlike the memo's entries, a sync changes many arrays together.
"""

from __future__ import annotations

import itertools
import math
import threading
from collections.abc import Callable, Sequence
from itertools import repeat
from typing import Any

import numpy as np

from extender.engine.nodetable import NodeTable
from extender.engine.preemption.epoch import UNGUARDED, PdbEpoch
from extender.engine.preemption.plans import NodePlan
from extender.engine.preemption.uidhash import NEVER, HashIndex, hashes, request_bytes, stored_bytes
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

#: A request amount of at most this is summed exactly: 2**19 of them stay inside int64.
AMOUNT_LIMIT = 1 << 43
#: Proposals longer than this (UIDs in one request, pods on one node's walk) take the per-node
#: path, which keeps the sums above exact.
COUNT_LIMIT = 1 << 19
#: Priorities (pods' and the preemptor's) compared in int64 without any doubt.
PRIORITY_LIMIT = 1 << 62
_LOW = -(1 << 63)
_HIGH = (1 << 63) - 1

#: From this many plans to build on one request on, they are built together
#: (`PodColumns._build_plans_together`): numpy's cost per call outweighs the per-row walk below.
_TOGETHER_MIN = 8

#: The node's walk for a preemptor, from the verb's memo (`PreemptionMemo.plan`).
PlanOf = Callable[[NodeInfo], NodePlan]


def _int_column(values: list[int], limit: int) -> np.ndarray:
    """`values` as int64, any value beyond ±`limit` replaced by `limit` (which the callers
    treat as inexact)."""
    try:
        return np.array(values, dtype=np.int64)
    except OverflowError:
        return np.array([v if -limit < v < limit else limit for v in values], dtype=np.int64)


#: Fewer UIDs than this are looked up in the dict directly.
_VECTOR_MIN = 64
#: So are any number of them while the columns hold fewer pods than this: a smaller dict
#: stays in the cache, and costs less than hashing the UIDs together (`bench.stages`, a
#: preempt's UIDs resolved, p50, dict against hash, 10 pods a node: 500 nodes 46 against
#: 125-131 µs, 1 000 nodes 87-97 against 205-217; 2 000 nodes 188-323 against 240-248;
#: 5 000 nodes 353-413 against 270-273).
_VECTOR_PODS = 20_000


def segments(lengths: np.ndarray) -> np.ndarray:
    """Offsets of consecutive segments of `lengths` (one more entry than segments)."""
    bounds = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=bounds[1:])
    return bounds


def _per_row(values: np.ndarray, bounds: np.ndarray, ufunc: np.ufunc,
             empty: float) -> np.ndarray:
    """`ufunc` reduced over each row's run of `values` (the runs `segments` bounds);
    `empty` for a row without any."""
    found = np.full(len(bounds) - 1, empty, dtype=values.dtype)
    filled = bounds[1:] > bounds[:-1]
    if filled.any():
        found[filled] = ufunc.reduceat(values, bounds[:-1][filled])
    return found


def _clamp(priority: float) -> int:
    """A plan's band edge in int64 (infinite edges at the ends)."""
    if priority == -math.inf:
        return _LOW
    if priority == math.inf:
        return _HIGH
    return int(max(min(priority, PRIORITY_LIMIT), -PRIORITY_LIMIT))


def _exact_edge(priority: float) -> bool:
    return math.isinf(priority) or -PRIORITY_LIMIT < priority < PRIORITY_LIMIT


class PodColumns:
    """See the module's docstring. Built for one `NodeTable` (`PreemptionMemo.columns`)."""

    def __init__(self, table: NodeTable, capacity: int = 1024) -> None:
        self.table = table
        self.lock = threading.Lock()
        #: uid -> ordinal of the view the columns hold for it.
        self.uid_ord: dict[str, int] = {}
        self.capacity = capacity
        self.pods: np.ndarray = np.full(capacity, None, dtype=object)
        self.priority = np.zeros(capacity, dtype=np.int64)
        self.cpu = np.zeros(capacity, dtype=np.int64)
        self.memory = np.zeros(capacity, dtype=np.int64)
        self.ephemeral = np.zeros(capacity, dtype=np.int64)
        #: `start_time`, and whether there is one (`by_importance` puts the others at `now`).
        self.start = np.zeros(capacity, dtype=np.float64)
        self.started = np.zeros(capacity, dtype=bool)
        #: The table row of the pod's node; -1 for a free ordinal.
        self.node_row = np.full(capacity, -1, dtype=np.int32)
        self.exact = np.zeros(capacity, dtype=bool)
        #: `PdbEpoch.exposure` per ordinal under the epoch `exposure_token` names; -1 unknown.
        self.exposure = np.full(capacity, -1, dtype=np.int8)
        self.exposure_token = 0
        self._allowed_of: tuple[int, np.ndarray] = (0, np.zeros(0, dtype=np.int64))
        #: The row's plan, per ordinal: position along the walk, rank, violating flag.
        self.walk_pos = np.zeros(capacity, dtype=np.int32)
        self.walk_rank = np.zeros(capacity, dtype=np.int32)
        self.walk_flag = np.zeros(capacity, dtype=np.int8)
        #: Each ordinal's UID as ASCII bytes (`NEVER` where it has none such), for `resolve`;
        #: and an index of their hashes (`resolve`), rebuilt once enough pods came.
        self.uid_bytes = np.full(capacity, NEVER, dtype="S8")
        self._uid_index: HashIndex | None = None
        self._since_index = 0
        #: Per-ordinal caches of the callers (the verb's encoded UIDs): cleared with the ordinal.
        self._annotations: dict[str, np.ndarray] = {}
        self._row_annotations: dict[str, np.ndarray] = {}
        self._row_layout = -1
        #: Scratch per ordinal (`batch.py`'s duplicate check), never cleared.
        self.scratch = np.zeros(capacity, dtype=np.int32)
        self._free: list[int] = []
        self._next = 0
        self._grow_rows(table.capacity)

    # ---- rows ---------------------------------------------------------------------------
    def _grow_rows(self, capacity: int) -> None:
        old = getattr(self, "row_gen", None)
        have = 0 if old is None else len(old)

        def grown(name: str, fill: Any, dtype: Any) -> np.ndarray:
            array = np.full(capacity, fill, dtype=dtype)
            if have:
                array[:have] = getattr(self, name)
            return array

        #: The table's `load_gen` each row was read at (-1: never).
        self.row_gen = grown("row_gen", -1, np.int64)
        #: The ordinals of each row's pods.
        self.row_ords = grown("row_ords", None, object)
        #: Whether every pod on the row is exact (the walk's sums then are).
        self.row_exact = grown("row_exact", False, bool)
        # The row's plan: what it was built from, and what it says per row.
        self.plan_gen = grown("plan_gen", -1, np.int64)
        self.plan_token = grown("plan_token", 0, np.int64)
        self.plan_below = grown("plan_below", _HIGH, np.int64)
        self.plan_above = grown("plan_above", _LOW, np.int64)
        self.plan_latest = grown("plan_latest", math.inf, np.float64)
        self.plan_usable = grown("plan_usable", False, bool)
        self.plan_size = grown("plan_size", 0, np.int64)
        self.plan_walk = grown("plan_walk", None, object)
        #: The walk's total cpu, memory and ephemeral storage.
        total = np.zeros((3, capacity), dtype=np.int64)
        if have:
            total[:, :have] = self.plan_total
        self.plan_total: np.ndarray = total

    def sync(self) -> None:
        """Read again the rows whose pods changed (the table's `load_gen` moved)."""
        table = self.table
        table.sync()
        if table.capacity != len(self.row_gen):
            self._grow_rows(table.capacity)
        load_gen = table.load_gen
        stale = np.flatnonzero(self.row_gen != load_gen)
        if not len(stale):
            return
        infos = table.infos
        pods_column = self.pods
        uid_ord = self.uid_ord
        added: list[int] = []
        added_pods: list[PodView] = []
        added_rows: list[int] = []
        released: list[int] = []
        for row in stale.tolist():
            old = self.row_ords[row]
            keep: dict[int, int] = {}
            if old is not None and len(old):
                keep = {id(p): o for o, p in zip(old.tolist(), pods_column[old].tolist(),
                                                 strict=True)}
            info = infos[row]
            ords: list[int] = []
            if info is not None:
                for pod in info.pods.values():
                    o = keep.pop(id(pod), None)
                    if o is None:
                        o = self._take()
                        pods_column = self.pods  # `_take` may have grown the columns
                        pods_column[o] = pod
                        uid_ord[pod.uid] = o
                        added.append(o)
                        added_pods.append(pod)
                        added_rows.append(row)
                    ords.append(o)
            released.extend(keep.values())
            self.row_ords[row] = np.array(ords, dtype=np.int64)
            self.row_gen[row] = load_gen[row]
        for o in released:
            self._release(o)
        if added:
            self._fill(np.array(added, dtype=np.int64), added_pods, added_rows)
        exact = self.exact
        row_exact = self.row_exact
        for row in stale.tolist():
            ords_of = self.row_ords[row]
            row_exact[row] = bool(exact[ords_of].all()) and len(ords_of) < COUNT_LIMIT

    def _fill(self, ords: np.ndarray, pods: list[PodView], rows: list[int]) -> None:
        requests = [p.requests for p in pods]
        priority = _int_column([p.priority for p in pods], PRIORITY_LIMIT)
        cpu = _int_column([r.milli_cpu for r in requests], AMOUNT_LIMIT)
        memory = _int_column([r.memory for r in requests], AMOUNT_LIMIT)
        ephemeral = _int_column([r.ephemeral_storage for r in requests], AMOUNT_LIMIT)
        starts = [p.start_time for p in pods]
        start = np.array([0.0 if s is None else s for s in starts], dtype=np.float64)
        self.priority[ords] = priority
        self.cpu[ords] = cpu
        self.memory[ords] = memory
        self.ephemeral[ords] = ephemeral
        self.start[ords] = start
        self.started[ords] = [s is not None for s in starts]
        self.node_row[ords] = rows
        self.exposure[ords] = -1
        stored = stored_bytes([p.uid for p in pods])
        if stored.itemsize > self.uid_bytes.itemsize:
            self.uid_bytes = self.uid_bytes.astype(stored.dtype)
        self.uid_bytes[ords] = stored
        self._since_index += len(ords)
        exact = ((np.abs(priority) < PRIORITY_LIMIT) & ~np.isnan(start)
                 & (cpu >= 0) & (cpu < AMOUNT_LIMIT) & (memory >= 0) & (memory < AMOUNT_LIMIT)
                 & (ephemeral >= 0) & (ephemeral < AMOUNT_LIMIT))
        self.exact[ords] = exact

    def _take(self) -> int:
        if self._free:
            return self._free.pop()
        if self._next == self.capacity:
            self._grow(self.capacity * 2)
        o = self._next
        self._next += 1
        return o

    def _release(self, o: int) -> None:
        pod = self.pods[o]
        if pod is not None and self.uid_ord.get(pod.uid) == o:
            del self.uid_ord[pod.uid]
        self.pods[o] = None
        self.node_row[o] = -1
        self.uid_bytes[o] = NEVER
        self.exact[o] = False
        self.exposure[o] = -1
        for column in self._annotations.values():
            column[o] = None
        self._free.append(o)

    def _grow(self, capacity: int) -> None:
        have = self.capacity
        for name in ("pods", "priority", "cpu", "memory", "ephemeral", "start", "started",
                     "node_row", "exact", "exposure", "walk_pos", "walk_rank", "walk_flag",
                     "uid_bytes", "scratch"):
            old = getattr(self, name)
            fill: Any = None if old.dtype == object else (-1 if name in ("node_row", "exposure")
                                                          else NEVER if name == "uid_bytes"
                                                          else 0)
            new = np.full(capacity, fill, dtype=old.dtype)
            new[:have] = old
            setattr(self, name, new)
        for key, old in list(self._annotations.items()):
            new = np.full(capacity, None, dtype=object)
            new[:have] = old
            self._annotations[key] = new
        self.capacity = capacity

    # ---- what requests read -------------------------------------------------------------
    def resolve(self, uids: Sequence[str]) -> np.ndarray:
        """An ordinal of a pod with each UID (the one on the proposing node, when the columns
        hold it: UIDs are unique per node); -1 for a UID the columns do not hold.

        Many UIDs among many pods are hashed together (`uidhash.hashes`) and looked up in a
        `HashIndex` of the columns' UIDs, each hit checked against the ordinal's own UID bytes;
        a miss (a pod added since the index was built, an unknown UID, a hash shared by two
        UIDs) asks the dict. Strings one by one in a dict of every pod cost a cache miss or
        more each once the dict outgrows the cache (`_VECTOR_PODS`)."""
        n = len(uids)
        hashed = n >= _VECTOR_MIN and len(self.uid_ord) >= _VECTOR_PODS
        array = request_bytes(uids) if hashed else None
        if array is None:
            return np.array(list(map(self.uid_ord.get, uids, repeat(-1))),
                            dtype=np.int64).reshape(n)
        index = self._uid_index
        if index is None or self._since_index > max(1024, len(self.uid_ord) >> 5):
            live = np.flatnonzero(self.node_row >= 0)
            index = self._uid_index = HashIndex(hashes(self.uid_bytes[live]), live)
            self._since_index = 0
        found = index.find(hashes(array))
        safe = np.maximum(found, 0)
        hit = (found >= 0) & (self.node_row[safe] >= 0) & (self.uid_bytes[safe] == array)
        found[~hit] = -1
        missed = np.flatnonzero(~hit)
        if len(missed):
            get = self.uid_ord.get
            found[missed] = [get(uids[i], -1) for i in missed.tolist()]
        return found

    def annotation(self, key: str) -> np.ndarray:
        """A per-ordinal object column for a caller's cache (None where unset); an entry is
        cleared when its ordinal is freed, so it always describes the ordinal's pod."""
        found = self._annotations.get(key)
        if found is None or len(found) != self.capacity:
            found = self._annotations[key] = np.full(self.capacity, None, dtype=object)
        return found

    def row_annotation(self, key: str) -> np.ndarray:
        """A per-row object column for a caller's cache (None where unset), cleared whenever
        the table's rows are assigned or freed, so an entry always describes its row's node."""
        table = self.table
        if self._row_layout != table.layout:
            self._row_annotations.clear()
            self._row_layout = table.layout
        found = self._row_annotations.get(key)
        if found is None or len(found) != table.capacity:
            found = self._row_annotations[key] = np.full(table.capacity, None, dtype=object)
        return found

    def exposures(self, ords: np.ndarray, epoch: PdbEpoch) -> np.ndarray:
        """`epoch.exposure` of each ordinal's pod (computed once per pod and epoch)."""
        if self.exposure_token != epoch.token:
            self.exposure[:] = -1
            self.exposure_token = epoch.token
        found = self.exposure[ords]
        unknown = np.flatnonzero(found < 0)
        if len(unknown):
            missing = np.unique(ords[unknown])
            pods = self.pods
            values = [epoch.exposure(pod) for pod in pods[missing].tolist()]
            self.exposure[missing] = values
            found = self.exposure[ords]
        return found

    def ensure_plans(self, rows: np.ndarray, priority: int, epoch: PdbEpoch, now: float,
                     plan_of: PlanOf) -> np.ndarray:
        """Whether each row has a plan for a preemptor of `priority` under `epoch` that may be
        read at `now` (built where missing or stale; `plan_of` is the memo's)."""
        load_gen = self.table.load_gen
        current = ((self.plan_gen[rows] == load_gen[rows]) & (self.plan_token[rows] == epoch.token)
                   & (self.plan_below[rows] < priority) & (priority <= self.plan_above[rows]))
        stale = rows[~current]
        if len(stale):
            stale = np.unique(stale)
            if len(stale) >= _TOGETHER_MIN:
                stale = self._build_plans_together(stale, priority, epoch)
            for row in stale.tolist():
                self._build_plan(row, priority, epoch, plan_of)
        return self.plan_usable[rows] & (self.plan_latest[rows] < now)

    def _build_plans_together(self, rows: np.ndarray, priority: int,
                              epoch: PdbEpoch) -> np.ndarray:
        """`_build_plan` for many rows at once, from the columns: what `NodePlan` computes
        pod by pod, as sorts and segment reductions over all their pods. Rows read at their
        current `load_gen` with every pod exact are built here; the rest are returned, for
        `_build_plan`."""
        load_gen = self.table.load_gen[rows]
        here = self.row_exact[rows] & (self.row_gen[rows] == load_gen)
        rest = rows[~here]
        rows, load_gen = rows[here], load_gen[here]
        if not len(rows):
            return rest
        lists = self.row_ords[rows].tolist()
        counts = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
        ords = np.concatenate(lists)
        owner = np.repeat(np.arange(len(rows)), counts)
        priorities = self.priority[ords]
        potential = priorities < priority
        # The band of preemptor priorities evicting the same pods (`NodePlan.below`/`above`).
        every = segments(counts)
        below = _per_row(np.where(potential, priorities, _LOW), every, np.maximum, _LOW)
        above = _per_row(np.where(potential, _HIGH, priorities), every, np.minimum, _HIGH)
        ords, owner = ords[potential], owner[potential]
        started = self.started[ords]
        start = np.where(started, self.start[ords], math.inf)  # unstarted: last
        sizes = np.bincount(owner, minlength=len(rows))
        bounds = segments(sizes)
        latest = _per_row(np.where(started, start, -math.inf), bounds, np.maximum, -math.inf)
        # Per row, by importance; ties in the node's pod order (every sort here is stable).
        order = np.lexsort((start, -self.priority[ords], owner))
        ords, owner, start = ords[order], owner[order], start[order]
        violating = self._violating(ords, owner, epoch)
        # The walk: the PDB-violating pods first, each group in that order.
        order = np.lexsort((~violating, owner))
        walk, violating = ords[order], violating[order]
        position = np.arange(len(walk)) - bounds[owner]
        # The rank: importance along the walk, ties in walk order.
        by_rank = np.lexsort((start[order], -self.priority[walk], owner))
        rank = np.empty(len(walk), dtype=np.int64)
        rank[by_rank] = position
        self.walk_pos[walk] = position
        self.walk_rank[walk] = rank
        self.walk_flag[walk] = violating
        for d, amounts in enumerate((self.cpu, self.memory, self.ephemeral)):
            self.plan_total[d, rows] = _per_row(amounts[walk], bounds, np.add, 0)
        for row, part in zip(rows.tolist(), np.split(walk, bounds[1:-1]), strict=True):
            self.plan_walk[row] = part
        self.plan_size[rows] = sizes
        self.plan_latest[rows] = latest
        self.plan_below[rows] = below
        self.plan_above[rows] = above
        self.plan_usable[rows] = True
        self.plan_token[rows] = epoch.token
        # Written last: a half-built plan is never current.
        self.plan_gen[rows] = load_gen
        return rest

    def _violating(self, ords: np.ndarray, owner: np.ndarray, epoch: PdbEpoch) -> np.ndarray:
        """`PdbIndex.split` for each row's run of `ords` (most important first): a pod
        violates when some budget guarding it is spent past what it allows by the pods of its
        row up to it."""
        guarded = np.flatnonzero(self.exposures(ords, epoch) != UNGUARDED)
        violating = np.zeros(len(ords), dtype=bool)
        if not len(guarded):
            return violating
        guarding = epoch.index.guarding
        guards = [guarding(pod) for pod in self.pods[ords[guarded]].tolist()]
        lengths = np.fromiter(map(len, guards), dtype=np.int64, count=len(guards))
        budget = np.fromiter(itertools.chain.from_iterable(guards), dtype=np.int64,
                             count=int(lengths.sum()))
        at = np.repeat(guarded, lengths)  # (pod, budget) pairs, pods in order
        pair_owner = owner[at]
        # Per (row, budget), the pairs in order: the n-th spends the budget n times.
        order = np.lexsort((budget, pair_owner))
        key_owner, key_budget = pair_owner[order], budget[order]
        new = np.ones(len(order), dtype=bool)
        new[1:] = (key_owner[1:] != key_owner[:-1]) | (key_budget[1:] != key_budget[:-1])
        group_start = np.maximum.accumulate(np.where(new, np.arange(len(order)), 0))
        spent = np.arange(len(order)) - group_start + 1
        allowed = self._allowed(epoch)[key_budget]
        violating[at[order[spent > allowed]]] = True
        return violating

    def _allowed(self, epoch: PdbEpoch) -> np.ndarray:
        """The epoch's budgets (`PdbIndex.allowed`) as int64, made once per epoch."""
        token, found = self._allowed_of
        if token != epoch.token:
            # Spent counts never pass COUNT_LIMIT: a budget beyond it is as good as unbounded.
            found = np.array([max(min(a, COUNT_LIMIT), -1) for a in epoch.index.allowed],
                             dtype=np.int64)
            self._allowed_of = (epoch.token, found)
        return found

    def _build_plan(self, row: int, priority: int, epoch: PdbEpoch, plan_of: PlanOf) -> None:
        info = self.table.infos[row]
        plan = plan_of(info)
        walk = plan.walk
        get = self.uid_ord.get
        ords = [get(pod.uid, -1) for pod in walk]
        pods = self.pods
        node_row = self.node_row
        mapped = all(o >= 0 and pods[o] is pod and node_row[o] == row
                     for o, pod in zip(ords, walk, strict=True))
        below = _clamp(plan.below)
        above = _clamp(plan.above)
        # A band beyond the exact range is kept clamped but never read: the plan is unusable.
        usable = (mapped and plan.ordered and plan.size < COUNT_LIMIT
                  and _exact_edge(plan.below) and _exact_edge(plan.above))
        walk_ords = np.array(ords if mapped else [], dtype=np.int64)
        if mapped and plan.size:
            size = plan.size
            self.walk_pos[walk_ords] = np.arange(size)
            self.walk_rank[walk_ords] = plan.rank
            self.walk_flag[walk_ords] = np.frombuffer(plan.flags, dtype=np.uint8)
            if self.row_exact[row]:
                table = plan.table
                self.plan_total[:, row] = (table[size - 1], table[2 * size - 1],
                                           table[3 * size - 1])
        self.plan_walk[row] = walk_ords
        self.plan_size[row] = plan.size
        self.plan_latest[row] = plan.latest
        self.plan_below[row] = below
        self.plan_above[row] = above
        self.plan_usable[row] = usable
        self.plan_token[row] = epoch.token
        # Written last: a half-built plan is never current.
        self.plan_gen[row] = self.table.load_gen[row]
