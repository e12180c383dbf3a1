"""`NodeTable`: the state's nodes as columns, one row (ordinal) per node.

The hot plugins read a handful of numbers per node (allocatable, requested and non-zero
requested cpu and memory, pod counts) and node-only verdicts that depend on a pod's
signature. Kept as numpy columns indexed by a row number, a request's candidates become one
index array and each plugin one vectorised pass, instead of a Python loop with attribute and
memo-dict reads per node.

The columns are a cache of the `NodeInfo`s the state keeps (the one place those totals are
counted): `ClusterState` calls `put`/`drop` on every node change and `touch` on every pod
change of a node, and a read first copies the touched rows (`sync`), so a bulk load pays one
copy per node, not one per pod. Two generations per row say what changed since a derived value
was computed: `view_gen` (a new `NodeView`: labels, taints, allocatable) and `load_gen` (pods
came or went). Both come from one counter, so a row reused by another node never repeats a
generation.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

import numpy as np

from extender.model.node import Signature
from extender.model.nodeinfo import NodeInfo

#: Amounts above this go through the per-node path: float64 holds them exactly below 2**53,
#: and the scorers' `× 100` stays inside int64.
EXACT_LIMIT = 2**53

_COLUMNS = ("alloc_cpu", "alloc_memory", "alloc_ephemeral", "alloc_pods",
            "req_cpu", "req_memory", "req_ephemeral", "pod_count", "nz_cpu", "nz_memory")

#: From this many names on, in a table of at least `HASHED_TABLE` nodes, `rows` finds them
#: through `HashIndex` instead of the dict. In a smaller table the dict is faster: its entries
#: and keys stay in the cache between requests, and the index's whole-array operations cost
#: what finding the names does (`bench.stages`, names → rows: 1 000 nodes, 420 names, 96 µs
#: by dict against 146 by hash; 2 000 nodes, 680 names, 148 against 198; 3 000 nodes, 780
#: names, 223 against 199; 5 000 nodes, 500 names, 194 against 158; the dict then `ordinal`
#: itself, `_packed_ordinal` since).
HASHED_LOOKUP = 64
HASHED_TABLE = 2500

#: Distinct row memos kept (one per pod signature and plugin); each is 12 bytes per row.
MEMO_LIMIT = 256


class RowMemo:
    """Per-row values derived from a node's view and one pod signature (a node-only verdict,
    a preferred-affinity sum), each valid while the row's `view_gen` is the one stored.

    Filled from the loop and from the large-request worker thread alike: a value is a pure
    function of its key and the row's view, so the order of two writers does not matter, and
    `values` is written before `gens`, so a reader that sees the generation sees the value."""

    __slots__ = ("values", "gens", "objects", "_codes")

    def __init__(self, capacity: int, empty: Any = None) -> None:
        self.values = np.zeros(capacity, dtype=np.int64)
        self.gens = np.full(capacity, -1, dtype=np.int64)
        #: For memos of objects (a verdict's Status, the sizes of held images): value k
        #: stands for `objects[k]`, and 0 for `empty` (a node that passes, holds nothing).
        self.objects: list[Any] = [empty]
        self._codes: dict[Any, int] = {empty: 0}

    def find(self, obj: Any) -> int | None:
        """The value standing for `obj`, if it was ever coded."""
        return self._codes.get(obj)

    def code(self, obj: Any) -> int:
        """The value standing for `obj` (hashable), assigned on first sight. The list only
        grows, so a reader holding `objects` can always look a value up."""
        found = self._codes.get(obj)
        if found is None:
            self.objects.append(obj)
            found = self._codes[obj] = len(self.objects) - 1
        return found


class NodeTable:
    """Columns over the state's nodes; see the module's docstring."""

    # The amounts (int64, one entry per row; `_COLUMNS` lists them in `_copy`'s order).
    alloc_cpu: np.ndarray
    alloc_memory: np.ndarray
    alloc_ephemeral: np.ndarray
    alloc_pods: np.ndarray
    req_cpu: np.ndarray
    req_memory: np.ndarray
    req_ephemeral: np.ndarray
    pod_count: np.ndarray
    nz_cpu: np.ndarray
    nz_memory: np.ndarray

    def __init__(self, capacity: int = 256) -> None:
        self.capacity = capacity
        self.ordinal: dict[str, int] = {}
        self.infos: np.ndarray = np.full(capacity, None, dtype=object)
        self.names: np.ndarray = np.full(capacity, None, dtype=object)
        self.view_gen = np.full(capacity, -1, dtype=np.int64)
        self.load_gen = np.full(capacity, -1, dtype=np.int64)
        #: Rows whose amounts all stay below `EXACT_LIMIT` (others take the per-node path).
        self.exact = np.zeros(capacity, dtype=bool)
        for column in _COLUMNS:
            setattr(self, column, np.zeros(capacity, dtype=np.int64))
        #: Bumped whenever rows are assigned or freed: what derives from the row layout
        #: (resolved name lists, encoded names) checks it.
        self.layout = 0
        self._free: list[int] = []
        self._next_row = 0
        self._counter = 0
        self._touched: set[NodeInfo] = set()
        self._lock = threading.Lock()
        self._memos: OrderedDict[Signature, RowMemo] = OrderedDict()
        self._by_hash: HashIndex | None = None
        self._packed: tuple[int, dict[str, int]] | None = None

    # ---- kept by ClusterState -------------------------------------------------------------
    def put(self, info: NodeInfo) -> None:
        """A node added or changed: its row (a new one for a new name) now shows `info`."""
        row = self.ordinal.get(info.node.name)
        if row is None:
            row = self._take_row()
            self.ordinal[info.node.name] = row
            self.names[row] = info.node.name
            self.layout += 1
        else:
            self._touched.discard(self.infos[row])
        self.infos[row] = info
        self._counter += 1
        self.view_gen[row] = self._counter
        self._copy(row, info)

    def drop(self, name: str) -> None:
        row = self.ordinal.pop(name, None)
        if row is None:
            return
        self._touched.discard(self.infos[row])
        self.infos[row] = None
        self.names[row] = None
        self._counter += 1
        self.view_gen[row] = self.load_gen[row] = self._counter
        self.exact[row] = False
        self._free.append(row)
        self.layout += 1

    def touch(self, info: NodeInfo) -> None:
        """The pods on `info` changed; its row is copied before the next read."""
        self._touched.add(info)

    # ---- reading --------------------------------------------------------------------------
    def sync(self) -> None:
        """Copy touched rows. Every reader calls it first; two readers (the loop and the
        large-request worker) may, so it runs under a lock."""
        if not self._touched:
            return
        with self._lock:
            touched, self._touched = self._touched, set()
            ordinal = self.ordinal
            for info in touched:
                row = ordinal.get(info.node.name)
                if row is not None and self.infos[row] is info:
                    self._copy(row, info)

    def rows(self, names: Sequence[str]) -> np.ndarray | None:
        """The rows of `names`, in order; None when some name is not a node here."""
        if len(self.ordinal) < HASHED_TABLE:
            return self._rows_by_dict(names, self._packed_ordinal())
        if len(names) < HASHED_LOOKUP:  # in a large table: too few names to pay for packing
            return self._rows_by_dict(names, self.ordinal)
        found = self._hash_index().rows(names)
        # (Some name is no node: rare, a watch behind the scheduler's.)
        return found if found is not None else self._rows_by_dict(names, self.ordinal)

    @staticmethod
    def _rows_by_dict(names: Sequence[str], ordinal: dict[str, int]) -> np.ndarray | None:
        if not names:
            return np.zeros(0, dtype=np.intp)
        try:
            found = itemgetter(*names)(ordinal)
        except KeyError:
            return None
        if len(names) == 1:
            return np.array([found], dtype=np.intp)
        return np.array(found, dtype=np.intp)

    def _packed_ordinal(self) -> dict[str, int]:
        """`ordinal` again, its names and rows new objects made in row order, so they lie
        side by side in memory where `ordinal`'s lie wherever each node's arrival put them:
        looking up a window's names (each lookup reads the key's and the value's object) then
        touches a few hundred cache lines, not one or two per name. Built again when rows are
        assigned or freed. `bench.traffic`, 1 000 and 500 nodes, the two kinds of dict side by
        side in one run, alternating which server had which (2026-12-02): the filter 4–9 %
        faster at 1 000 nodes (1.41 against 1.50 ms, 1.43 against 1.56), 2–5 % at 500."""
        packed = self._packed
        if packed is None or packed[0] != self.layout:
            layout = self.layout
            # A copy first: the large-request worker may read while the loop adds a node.
            by_row = sorted(dict(self.ordinal).items(), key=itemgetter(1))
            names = [_fresh(name) for name, _ in by_row]
            rows = np.array([row for _, row in by_row], dtype=np.int64).tolist()
            packed = self._packed = (layout, dict(zip(names, rows, strict=True)))
        return packed[1]

    def _hash_index(self) -> HashIndex:
        index = self._by_hash
        if index is None or index.layout != self.layout:
            layout = self.layout
            # A copy: the large-request worker may read while the loop adds a node.
            index = self._by_hash = HashIndex(dict(self.ordinal), layout)
        return index

    @property
    def memo_count(self) -> int:
        return len(self._memos)

    def infos_of(self, rows: np.ndarray) -> list[NodeInfo]:
        return self.infos[rows].tolist()  # type: ignore[no-any-return]

    def memo(self, key: Signature, empty: Any = None) -> RowMemo:
        """The row memo under `key` (created empty; the least recently used go past
        `MEMO_LIMIT`). `empty` is the object value 0 stands for."""
        memos = self._memos
        found = memos.get(key)
        if found is not None and len(found.gens) == self.capacity:
            try:
                memos.move_to_end(key)
            except KeyError:  # evicted by the other thread meanwhile
                pass
            return found
        found = RowMemo(self.capacity, empty)
        memos[key] = found
        while len(memos) > MEMO_LIMIT:
            try:
                memos.popitem(last=False)
            except KeyError:
                break
        return found

    def memoised(self, key: Signature, rows: np.ndarray, compute: Callable[[NodeInfo, RowMemo], int],
                 empty: Any = None) -> tuple[np.ndarray, RowMemo]:
        """Each row's value under `key`: read from the memo where the row's view is the one
        it was computed for, else `compute(info, memo)` (which must read nothing of the node
        but its view; it may code an object with `memo.code`) and stored."""
        memo = self.memo(key, empty)
        view_gen = self.view_gen
        stale = np.flatnonzero(memo.gens[rows] != view_gen[rows])
        if len(stale):
            infos, values, gens = self.infos, memo.values, memo.gens
            for row in rows[stale].tolist():
                values[row] = compute(infos[row], memo)
                gens[row] = view_gen[row]
        return memo.values[rows], memo

    # ---- internals ------------------------------------------------------------------------
    def _take_row(self) -> int:
        if self._free:
            return self._free.pop()
        if self._next_row == self.capacity:
            self._grow()
        row = self._next_row
        self._next_row += 1
        return row

    def _grow(self) -> None:
        new = self.capacity * 2
        for attr in ("infos", "names", "view_gen", "load_gen", "exact", *_COLUMNS):
            old = getattr(self, attr)
            fill: Any = None if old.dtype == object else (-1 if attr.endswith("_gen") else 0)
            grown = np.full(new, fill, dtype=old.dtype)
            grown[: self.capacity] = old
            setattr(self, attr, grown)
        self.capacity = new
        # Memos are sized to the capacity; `memo()` replaces the short ones as it meets them.

    def _copy(self, row: int, info: NodeInfo) -> None:
        allocatable, requested = info.node.allocatable, info.requested
        values = (allocatable.milli_cpu, allocatable.memory, allocatable.ephemeral_storage,
                  allocatable.allowed_pods, requested.milli_cpu, requested.memory,
                  requested.ephemeral_storage, len(info.pods), info.non_zero_cpu,
                  info.non_zero_memory)
        exact = all(-EXACT_LIMIT < v < EXACT_LIMIT for v in values)
        if exact:
            for column, v in zip(_COLUMNS, values, strict=True):
                getattr(self, column)[row] = v
        self.exact[row] = exact
        self._counter += 1
        self.load_gen[row] = self._counter


def _fresh(name: str) -> str:
    """An equal string, a new object (`str(name)` would return `name` itself)."""
    return name.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")


class HashIndex:
    """The node names' hashes in an open-addressed numpy table: `rows` finds 500 names with
    a few whole-array operations, touching one slot each, where the dict touches an entry, a
    key and a value object per name: once a request's other work has pushed those out of the
    cache, 0.4 µs a name (500 names in a 5 000-node server: 196 µs by dict, 79 by hash).

    A name is taken for the node whose `hash` it shares: CPython's SipHash of the string, 64
    bits, keyed at random per process, so a name that is not a node matches one with
    probability 2⁻⁶⁴ per node (and no one can choose names that do). Two nodes sharing a hash
    (as unlikely) make the index `usable` no more: the dict decides."""

    __slots__ = ("layout", "mask", "keys", "values", "usable")

    def __init__(self, ordinal: dict[str, int], layout: int) -> None:
        self.layout = layout
        size = 1 << max(4, (4 * len(ordinal)).bit_length())
        self.mask = size - 1
        self.keys = np.zeros(size, dtype=np.int64)
        self.values = np.full(size, -1, dtype=np.intp)  # -1: an empty slot
        self.usable = True
        keys, values, mask = self.keys, self.values, self.mask
        for name, row in ordinal.items():
            key = hash(name)
            slot = key & mask
            while values[slot] >= 0:
                if keys[slot] == key:
                    self.usable = False
                slot = (slot + 1) & mask
            keys[slot], values[slot] = key, row

    def rows(self, names: Sequence[str]) -> np.ndarray | None:
        """The rows of `names`; None when some name has no slot of its hash (not a node) or
        the index is not usable."""
        if not self.usable:
            return None
        hashes = np.fromiter(map(hash, names), dtype=np.int64, count=len(names))
        slots = hashes & self.mask
        keys, values = self.keys, self.values
        found = keys[slots] == hashes
        while not found.all():  # linear probing, for the few names whose slot was taken
            pending = np.flatnonzero(~found)
            if (values[slots[pending]] < 0).any():
                return None  # an empty slot before the name's: not a node here
            slots[pending] = (slots[pending] + 1) & self.mask
            found[pending] = keys[slots[pending]] == hashes[pending]
        rows = values[slots]
        return None if rows.min() < 0 else rows  # a hash of 0 "found" in an empty slot
