"""The preempt verb over all proposed nodes at once: `fastpath.py`'s arithmetic in numpy.

`FastPath.run` decides a node with a few sums, but one node at a time, in Python. Here the
same decisions are taken for every proposed node together, on the state's columns
(`NodeTable` for the nodes, `PodColumns` for the pods):

* the proposed UIDs resolve to pod ordinals in one pass; a UID not on its node, not below the
  preemptor's priority, inexact or proposed twice leaves its node to the per-node path (which
  reports it);
* per node, the victims' requests are summed (`cumsum` differences) and added to the node's
  free amounts from the table; the pod fits with the proposal when they cover the preemptor's
  requests and one more pod fits the pod count;
* the leading node-only filters' verdict is a gather from the table's row memo (the same memo,
  under the same key, as the filter verb's);
* a node where the pod fits keeps the proposal, ordered by `by_importance` (left as proposed
  when it comes most important first, as kube-scheduler sends it; else one sort for all);
  its `NumPDBViolations` comes from the pods' PDB exposures (per ordinal and epoch), and from
  the node's plan flags when a budget had room;
* a node where it does not is completed along its plan (`plans.py`), all such nodes at once:
  their walks side by side as a matrix, walked position by position (`_complete`), each
  position one pass over the nodes still walking.

Every case `FastPath.run` hands to the straightforward path, and every case the columns cannot
prove (a node not in the table, nominated pods on the node, an inexact amount, an unusable
plan), goes to `FastPath.run` for that node, which decides it or hands it on. The answers are
the per-node path's (`tests/engine/test_preemption_columns.py` holds them to the
straightforward path).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import repeat

import numpy as np

from extender.engine.filters.fit_kernel import table_columns
from extender.engine.framework import ClusterContext, Code, Status
from extender.engine.nodetable import NodeTable, RowMemo
from extender.engine.preemption.columns import COUNT_LIMIT, PRIORITY_LIMIT, PodColumns, segments
from extender.engine.preemption.epoch import DEPENDS, OVERDRAWS
from extender.engine.preemption.fastpath import FastPath, SlowPath
from extender.engine.preemption.outcome import (
    FITS_AS_IS,
    DropReason,
    PreemptionOutcome,
    describe,
)
from extender.engine.preemption.victims import Victims
from extender.engine.runner import node_fits
from extender.model.nodeinfo import NodeInfo

_UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
#: Walk positions side by side per chunk of completions (`_complete`): int64 matrices of at
#: most this many cells, whatever the nodes' sizes.
_CELLS = 1 << 18

#: Run on the outcome while the columns are held (`vet_batch`).
Finish = Callable[["BatchOutcome"], object]


@dataclass(slots=True)
class BatchOutcome:
    """The verb's answer as columns: the kept nodes (indices into `names`, ascending, i.e.
    in proposal order), their victims as pod ordinals of `columns` (`victims[bounds[i]:
    bounds[i + 1]]` for the i-th kept node, most important first) and NumPDBViolations; the
    dropped nodes and ignored UIDs as `PreemptionOutcome` words them."""

    names: Sequence[str]
    #: The table row of each name (-1: not a node of the table).
    rows: np.ndarray
    columns: PodColumns
    kept: np.ndarray
    bounds: np.ndarray
    victims: np.ndarray
    counts: np.ndarray
    #: node index -> (reason, detail), in any order.
    drops: dict[int, tuple[DropReason, str]]
    ignored: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: The kept nodes the per-node path decided, with its `Victims` (for `outcome`).
    extra: dict[int, Victims] = field(default_factory=dict)
    #: What `vet_batch`'s `finish` made of this outcome.
    result: object = None

    @property
    def dropped(self) -> dict[str, DropReason]:
        names = self.names
        return {names[i]: self.drops[i][0] for i in sorted(self.drops)}

    @property
    def kept_names(self) -> list[str]:
        """The nodes the answer keeps, in proposal order."""
        names = self.names
        return [names[i] for i in self.kept.tolist()]

    def outcome(self) -> PreemptionOutcome:
        """The same answer as a `PreemptionOutcome` (nodes in proposal order)."""
        outcome = PreemptionOutcome()
        names = self.names
        pods = self.columns.pods
        bounds = self.bounds.tolist()
        counts = self.counts.tolist()
        extra = self.extra
        victims = outcome.victims
        for k, i in enumerate(self.kept.tolist()):
            found = extra.get(i)
            if found is None:
                found = Victims(tuple(pods[self.victims[bounds[k]:bounds[k + 1]]].tolist()),
                                counts[k])
            victims[names[i]] = found
        for i in sorted(self.drops):
            outcome.drop(names[i], *self.drops[i])
        outcome.ignored.update(self.ignored)
        return outcome


#: From this many values on, `_sorted_by` packs ranks into one key (measured: below it
#: `np.lexsort` is up to 10× faster, 3× at 900 values; above it the packed sort wins).
_PACKED_SORT = 2048


def _sorted_by(*keys: np.ndarray) -> np.ndarray:
    """`np.lexsort` of `keys` (most significant first), stable. Many values: each key replaced
    by its rank among its distinct values and the ranks packed into one int64 (one
    radix-friendly sort instead of one merge sort per key), unless they need over 63 bits."""
    count = len(keys[0])
    bits = max(1, count.bit_length())
    if count < _PACKED_SORT or bits * len(keys) > 63:
        return np.lexsort(keys[::-1])
    packed = np.zeros(count, dtype=np.int64)
    for key in keys:
        _, rank = np.unique(key, return_inverse=True)
        packed <<= bits
        packed |= rank.reshape(count)
    return np.argsort(packed, kind="stable")


def _segment_sums(values: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    totals = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(values, out=totals[1:])
    return totals[bounds[1:]] - totals[bounds[:-1]]  # type: ignore[no-any-return]


def vet_batch(fast: FastPath, names: Sequence[str], uids: Sequence[str],
              lengths: Sequence[int], state: ClusterContext, columns: PodColumns,
              slow: SlowPath, finish: Finish | None = None) -> BatchOutcome | None:
    """The verb's outcome for nodes `names` (distinct), node i proposing
    `uids[sum(lengths[:i]):sum(lengths[:i + 1])]`; None when the request is beyond the
    columns (the caller then runs `fast.run`). Holds `columns.lock` while it reads them, and
    while `finish` (if given) turns the outcome into what the caller keeps (`result`): the
    ordinals name the same pods until the lock is released."""
    if not columns.lock.acquire(blocking=False):
        return None  # the other thread's request is using them: the per-node path
    try:
        found = _vet(fast, names, uids, lengths, state, columns, slow)
        if found is not None and finish is not None:
            found.result = finish(found)
        return found
    finally:
        columns.lock.release()


def _vet(fast: FastPath, names: Sequence[str], uids: Sequence[str], lengths: Sequence[int],
         state: ClusterContext, columns: PodColumns, slow: SlowPath) -> BatchOutcome | None:
    priority = fast.priority
    request = fast.request
    if (len(uids) >= COUNT_LIMIT or not -PRIORITY_LIMIT < priority < PRIORITY_LIMIT
            or any(amount >= PRIORITY_LIMIT for _, amount in request.needs)
            or (fast.prefix and fast.key is None)):
        return None
    table = columns.table
    columns.sync()
    n = len(names)
    # Many names: the table's hash index (one slot read each; `NodeTable.rows`). A name that
    # is not a node (-1) sends the whole list through the dict.
    found_rows = table.rows(names)
    rows = found_rows.astype(np.int64, copy=False) if found_rows is not None else np.array(
        list(map(table.ordinal.get, names, repeat(-1))), dtype=np.int64).reshape(n)
    length = np.array(lengths, dtype=np.int64).reshape(n)
    bounds = segments(length)
    owner = np.repeat(np.arange(n), length)  # the node index of each UID
    ords = columns.resolve(uids)

    known = rows >= 0
    safe_rows = np.where(known, rows, 0)
    known &= table.exact[safe_rows]
    # Each UID: a pod of its own node, below the preemptor, exact.
    resolved = ords >= 0
    safe_ords = np.where(resolved, ords, 0)
    valid = (resolved & (columns.node_row[safe_ords] == rows[owner]) & known[owner]
             & (columns.priority[safe_ords] < priority) & columns.exact[safe_ords])
    undecided = ~known
    if not valid.all():
        undecided[owner[~valid]] = True
    if len(ords):
        # A UID proposed twice on its node: the later mark wins, the earlier one sees it. (Two
        # valid entries of one ordinal belong to the same node: the ordinal's.)
        mine = np.flatnonzero(valid)
        scratch = columns.scratch
        scratch[ords[mine]] = mine
        twice = mine[scratch[ords[mine]] != mine]
        if len(twice):
            undecided[owner[twice]] = True
    nominated = state.nominated_all()
    if nominated:
        where = {pod.nominated_node_name for pod in nominated}
        for i, name in enumerate(names):
            if name in where:
                undecided[i] = True

    drops: dict[int, tuple[DropReason, str]] = {}
    # The leading node-only filters, read from the filter verb's row memo.
    live = np.flatnonzero(~undecided)
    live_rows = rows[live]
    if fast.key is not None and len(live):
        prefix = fast.prefix
        assert fast.key is not None

        def judge(info: NodeInfo, memo: RowMemo) -> int:
            return memo.code(node_fits(prefix, info))

        codes, memo = table.memoised(fast.key, live_rows, judge)  # type: ignore[arg-type]
        failed = np.flatnonzero(codes)
        if len(failed):
            objects = memo.objects
            for code in np.unique(codes[failed]).tolist():
                status: Status = objects[code]
                where_code = live[codes == code]
                if status.code == _UNRESOLVABLE:
                    detail = describe(status)
                    for i in where_code.tolist():
                        drops[i] = (DropReason.UNRESOLVABLE, detail)
                else:
                    undecided[where_code] = True
            live = live[codes == 0]
            live_rows = rows[live]

    # Free amounts with the proposal gone (only read for live nodes, whose UIDs are all valid).
    alloc, requested = table_columns(table)
    amounts = (columns.cpu, columns.memory, columns.ephemeral)
    free_pods = table.alloc_pods[live_rows] - table.pod_count[live_rows]
    proposed = length[live]
    base: list[np.ndarray] = []
    with_proposal: list[np.ndarray] = []
    for d in range(3):
        column = np.where(valid, amounts[d][safe_ords], 0)
        base.append(alloc[d][live_rows] - requested[d][live_rows])
        with_proposal.append(base[d] + _segment_sums(column, bounds)[live])
    if fast.fit is None:
        fits = np.ones(len(live), dtype=bool)
    else:
        fits = request.fits_columns(free_pods + proposed, with_proposal)

    # The pod fits without the proposal's victims... or with none at all.
    empty = fits & (proposed == 0)
    for i in live[empty].tolist():
        drops[i] = (DropReason.NO_VICTIMS_NEEDED, FITS_AS_IS)
    groups: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    keep_nodes = live[fits & (proposed > 0)]
    if len(keep_nodes):
        found = _keep(fast, columns, keep_nodes, rows, length, ords, owner, undecided)
        if found is not None:
            groups.append(found)

    short = ~fits
    if short.any():
        short_nodes = live[short]
        short_rows = live_rows[short]
        short_free = [with_proposal[d][short] for d in range(3)]
        # NodeResourcesFit's code (`beyond`: a request that fails and exceeds the whole
        # allocatable), worded per pattern of failures (`FastPath.unresolvable_drop`): the
        # nodes of a pattern already worded take its words; the first of another words it.
        pattern, beyond = request.shortfall_columns(
            free_pods[short] + proposed[short], short_free,
            {d: alloc[d][short_rows] for d in request.dims})
        worded = fast.worded
        for k in np.flatnonzero(beyond).tolist():
            i = int(short_nodes[k])
            words = worded.get(int(pattern[k]))
            if words is not None:
                drops[i] = (DropReason.UNRESOLVABLE, words)
                continue
            info = table.infos[rows[i]]
            mine = ords[bounds[i]:bounds[i + 1]]
            free = (int(short_free[0][k]), int(short_free[1][k]), int(short_free[2][k]))
            verdict = fast.unresolvable_drop(info, columns.pods[mine].tolist(), free)
            if verdict is None:
                undecided[i] = True
            else:
                drops[i] = verdict  # type: ignore[assignment]
        complete = ~beyond
        if complete.any():
            found = _complete(fast, columns, short_nodes[complete], rows, owner, ords,
                              free_pods[short][complete],
                              [base[d][short][complete] for d in range(3)], undecided, drops)
            if found is not None:
                groups.append(found)

    # Everything else, node by node.
    extra: dict[int, Victims] = {}
    ignored: dict[str, tuple[str, ...]] = {}
    rest = np.flatnonzero(undecided).tolist()
    if rest:
        sub = {names[i]: list(uids[bounds[i]:bounds[i + 1]]) for i in rest}
        result = PreemptionOutcome()
        fast.run(sub, state, result, slow)
        index = {names[i]: i for i in rest}
        for name, reason in result.dropped.items():
            drops[index[name]] = (reason, result.drop_details[name])
        ignored = result.ignored
        if result.victims:
            mapped = _as_ordinals(columns, result.victims, index, rows)
            groups.append(mapped)
            for name, victims in result.victims.items():
                extra[index[name]] = victims
    fast.decided += n - len(rest)
    return _merged(names, rows, columns, groups, drops, ignored, extra)


def _keep(fast: FastPath, columns: PodColumns, nodes: np.ndarray, rows: np.ndarray,
          length: np.ndarray, ords: np.ndarray, owner: np.ndarray, undecided: np.ndarray,
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The nodes where the pod fits with the proposal: the proposal, most important first,
    and its NumPDBViolations. Nodes whose count needs a plan they lack go to `undecided`."""
    mask = np.zeros(len(rows), dtype=bool)
    mask[nodes] = True
    picked = np.flatnonzero(mask[owner])  # their UIDs, in proposal order
    chosen = ords[picked]
    who = owner[picked]
    exposure = columns.exposures(chosen, fast.epoch)
    n = len(rows)
    counts = np.bincount(who, weights=exposure == OVERDRAWS, minlength=n)
    depends = np.bincount(who, weights=exposure == DEPENDS, minlength=n) > 0
    pending = nodes[depends[nodes]]
    if len(pending):
        usable = columns.ensure_plans(rows[pending], fast.priority, fast.epoch, fast.now,
                                      fast.plan_of)
        lost = pending[~usable]
        if len(lost):
            undecided[lost] = True
            mask[lost] = False
            nodes = nodes[mask[nodes]]
            still = mask[who]
            picked, chosen, who = picked[still], chosen[still], who[still]
        flagged = np.bincount(who, weights=columns.walk_flag[chosen], minlength=n)
        counts = np.where(depends, flagged, counts)
    if not len(nodes):
        return None
    start = np.where(columns.started[chosen], columns.start[chosen], fast.now)
    rank = -columns.priority[chosen]
    if not _out_of_order(who, rank, start):
        # kube-scheduler proposes each node's victims most important first already.
        return nodes, length[nodes], chosen, counts[nodes].astype(np.int64)
    # Stable: equally important victims keep their proposal order.
    order = _sorted_by(who, rank, start)
    return nodes, length[nodes], chosen[order], counts[nodes].astype(np.int64)


def _out_of_order(who: np.ndarray, rank: np.ndarray, start: np.ndarray) -> bool:
    """Whether some victim comes before a more important one of its node (`who` not
    decreasing): if not, `_sorted_by(who, rank, start)` is the identity."""
    same = who[1:] == who[:-1]
    earlier, later = rank[:-1], rank[1:]
    behind = (later < earlier) | ((later == earlier) & (start[1:] < start[:-1]))
    return bool((same & behind).any())


def _complete(fast: FastPath, columns: PodColumns, nodes: np.ndarray, rows: np.ndarray,
              owner: np.ndarray, ords: np.ndarray, free_pods: np.ndarray,
              free: list[np.ndarray], undecided: np.ndarray,
              drops: dict[int, tuple[DropReason, str]],
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """`FastPath._complete` for all `nodes` at once: the walk along each node's plan, the
    proposal pinned. `free_pods` and `free` are the nodes' free amounts before eviction."""
    node_rows = rows[nodes]
    usable = columns.ensure_plans(node_rows, fast.priority, fast.epoch, fast.now, fast.plan_of)
    size = columns.plan_size[node_rows]
    request = fast.request
    slots = request.spare_slots(free_pods + size)
    ok = usable & columns.row_exact[node_rows] & (size > 0) & (slots >= 0)
    # Free with every potential victim gone (the plan's totals), less the pod's requests.
    rooms = request.rooms({d: free[d] + columns.plan_total[d][node_rows] for d in request.dims})
    for _, room in rooms:
        ok &= room >= 0
    if not ok.all():
        undecided[nodes[~ok]] = True
        nodes, node_rows, size, slots = nodes[ok], node_rows[ok], size[ok], slots[ok]
        rooms = [(d, room[ok]) for d, room in rooms]
    if not len(nodes):
        return None
    # Longest walks first: at position k, the nodes still walking are a prefix. The walks
    # go side by side in chunks of at most `_CELLS` positions.
    order = np.argsort(-size, kind="stable")
    nodes, node_rows, size, slots = nodes[order], node_rows[order], size[order], slots[order]
    lefts = [room[order] for _, room in rooms]
    dims = [d for d, _ in rooms]
    m = len(nodes)
    walks = columns.plan_walk[node_rows].tolist()
    slot = np.full(len(rows), -1, dtype=np.int64)
    slot[nodes] = np.arange(m)
    taken = np.flatnonzero(slot[owner] >= 0)  # the proposed UIDs of these nodes
    pinned_at = columns.walk_pos[ords[taken]]
    pinned_of = slot[owner[taken]]
    parts: list[tuple[np.ndarray, np.ndarray]] = []
    first = 0
    while first < m:
        last = min(m, first + max(1, _CELLS // int(size[first])))
        part = slice(first, last)
        here = (pinned_of >= first) & (pinned_of < last)
        parts.append(_walk(columns, walks[part], size[part], slots[part],
                           [(d, left[part]) for d, left in zip(dims, lefts, strict=True)],
                           pinned_at[here], pinned_of[here] - first, first))
        first = last
    chosen_j = np.concatenate([p[0] for p in parts])
    victims = np.concatenate([p[1] for p in parts])
    per_node = np.bincount(chosen_j, minlength=m)
    counts = np.bincount(chosen_j, weights=columns.walk_flag[victims], minlength=m)
    # The victims per node, ordered by node (proposal order), then rank (`by_importance` of
    # the walk, ties in walk order). Ranks are distinct within a node and below its size.
    by = np.argsort(nodes[chosen_j] * int(size[0]) + columns.walk_rank[victims])
    none = per_node == 0
    for i in nodes[none].tolist():
        drops[i] = (DropReason.NO_VICTIMS_NEEDED, FITS_AS_IS)
    kept = np.flatnonzero(~none)
    kept = kept[np.argsort(nodes[kept])]
    return nodes[kept], per_node[kept], victims[by], counts[kept].astype(np.int64)


def _walk(columns: PodColumns, walks: list[np.ndarray], size: np.ndarray, slots: np.ndarray,
          rooms: list[tuple[int, np.ndarray]], pinned_at: np.ndarray, pinned_of: np.ndarray,
          offset: int) -> tuple[np.ndarray, np.ndarray]:
    """`reprieve` for several nodes at once (sizes not increasing): position by position, a
    pod comes back where it is not pinned, the pod count allows one more and its requests fit
    in the room left. Returns each victim's node (its index here plus `offset`) and ordinal,
    by position then node."""
    m = len(walks)
    width = int(size[0])
    walk = np.concatenate(walks)
    starts = segments(size)
    line = np.repeat(np.arange(m), size)
    position = np.arange(len(walk)) - np.repeat(starts[:-1], size)
    # Position-major: row k holds each node's k-th pod along its walk.
    pinned = np.zeros((width, m), dtype=bool)
    pinned[pinned_at, pinned_of] = True
    amounts = (columns.cpu, columns.memory, columns.ephemeral)
    matrices = []
    left = []
    for d, room in rooms:
        matrix = np.zeros((width, m), dtype=np.int64)
        matrix[position, line] = amounts[d][walk]
        matrices.append(matrix)
        left.append(room.copy())
    back = np.zeros(m, dtype=np.int64)
    evicted = np.zeros((width, m), dtype=bool)
    walking = np.searchsorted(-size, -np.arange(width), side="left")  # how many have size > k
    for k in range(width):
        w = int(walking[k])
        take = ~pinned[k, :w] & (back[:w] < slots[:w])
        for matrix, room in zip(matrices, left, strict=True):
            take &= matrix[k, :w] <= room[:w]
        for matrix, room in zip(matrices, left, strict=True):
            room[:w] -= matrix[k, :w] * take
        back[:w] += take
        evicted[k, :w] = ~take
    chosen_k, chosen_j = np.nonzero(evicted)
    return chosen_j + offset, walk[starts[chosen_j] + chosen_k]


def _as_ordinals(columns: PodColumns, victims: dict[str, Victims], index: dict[str, int],
                 rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The per-node path's kept nodes as a group of ordinals (-1 for a pod the columns do not
    hold as it is: the reply is then built from `BatchOutcome.outcome`)."""
    nodes = []
    lengths = []
    flat: list[int] = []
    counts = []
    get = columns.uid_ord.get
    pods = columns.pods
    node_row = columns.node_row
    for name, found in victims.items():
        i = index[name]
        nodes.append(i)
        lengths.append(len(found.pods))
        counts.append(found.num_pdb_violations)
        for pod in found.pods:
            o = get(pod.uid, -1)
            flat.append(o if o >= 0 and pods[o] is pod and node_row[o] == rows[i] else -1)
    return (np.array(nodes, dtype=np.int64), np.array(lengths, dtype=np.int64),
            np.array(flat, dtype=np.int64), np.array(counts, dtype=np.int64))


def _merged(names: Sequence[str], rows: np.ndarray, columns: PodColumns,
            groups: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
            drops: dict[int, tuple[DropReason, str]], ignored: dict[str, tuple[str, ...]],
            extra: dict[int, Victims]) -> BatchOutcome:
    """The groups' kept nodes in proposal order, each with its segment of victims."""
    if not groups:
        empty = np.zeros(0, dtype=np.int64)
        return BatchOutcome(names, rows, columns, empty, np.zeros(1, dtype=np.int64), empty,
                            empty, drops, ignored, extra)
    nodes = np.concatenate([g[0] for g in groups])
    lengths = np.concatenate([g[1] for g in groups])
    victims = np.concatenate([g[2] for g in groups])
    counts = np.concatenate([g[3] for g in groups])
    if len(groups) > 1:
        order = np.argsort(nodes, kind="stable")
        starts = segments(lengths)[:-1]
        new_bounds = segments(lengths[order])
        gather = np.repeat(starts[order] - new_bounds[:-1], lengths[order]) + np.arange(
            len(victims))
        nodes, lengths, counts, victims = nodes[order], lengths[order], counts[order], \
            victims[gather]
    return BatchOutcome(names, rows, columns, nodes, segments(lengths), victims, counts, drops,
                        ignored, extra)


__all__ = ["BatchOutcome", "NodeTable", "vet_batch"]
