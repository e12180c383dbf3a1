"""A pod's filter pass over the nodes, as the simulation runs it (`Algorithm`'s filtering).

Every node's first failing status, through the server's passes — the vectorised one over the
cluster state's `NodeTable` rows (`engine.rows.filter_rows`) for the simulation's whole node
list, the per-node one (`runner.run_filters`) for a few nodes — then the nodes with nominated
pods judged again with them (`RunFilterPluginsWithNominatedPods`). A retry reuses its last
failed pass where nothing it read changed (`filtermemo`), and the nominated pods' room is kept
per node (`reservations`). `fast_paths="verify"` holds each of these to the plain per-node
pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from extender.engine.framework import ClusterContext, Status
from extender.engine.nodetable import NodeTable
from extender.engine.preemption.victims import fits_with_nominated
from extender.engine.profile import Profile
from extender.engine.rows import RowVerdicts, filter_rows
from extender.engine.runner import FilterPass, run_filters
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.simulator.filtermemo import FilterMemo, check_labels, node_local
from extender.simulator.nominator import Nominator


@dataclass(slots=True)
class Diagnosis:
    """Why nodes were rejected: node -> first failing status, and the rejecting plugins."""

    statuses: dict[str, Status] = field(default_factory=dict)
    unschedulable_plugins: set[str] = field(default_factory=set)
    #: A PreFilter rejection's message: the FitError shows it instead of the histogram.
    pre_filter_msg: str = ""
    #: PreFilter stopped at an UnschedulableAndUnresolvable: the plugins after it, and so
    #: DynamicResources (last in the profiles the simulator reads), did not run.
    pre_filter_stopped: bool = False
    #: The pass's prepared filters when each check reads one node (`filtermemo.node_local`;
    #: the dry run of preemption then reuses them), else None.
    local_filters: FilterPass | None = None

    def record(self, node: str, status: Status) -> None:
        self.statuses[node] = status
        if status.plugin:
            self.unschedulable_plugins.add(status.plugin)

    def record_all(self, statuses: dict[str, Status], plugins: frozenset[str]) -> None:
        """`record` for each; `plugins` are those the statuses name (`plugins_of`).
        `statuses` becomes the diagnosis's own when it has none yet (the caller never changes
        it afterwards)."""
        if self.statuses:
            self.statuses.update(statuses)
        else:
            self.statuses = statuses
        self.unschedulable_plugins.update(plugins)


def plugins_of(statuses: Iterable[Status]) -> frozenset[str]:
    """The plugins that statuses name (the rejecting plugins a pass records)."""
    return frozenset({status.plugin for status in statuses if status.plugin})


def _with_nominated(filters: FilterPass, pod: PodView, statuses: dict[str, Status],
                    nominated_by_node: Mapping[str, Sequence[PodView]],
                    by_name: Mapping[str, NodeInfo]) -> None:
    """Turn `statuses` (the node-as-is pass) into `RunFilterPluginsWithNominatedPods`'s."""
    for name, nominated in nominated_by_node.items():
        node = by_name.get(name)
        if node is None:
            continue
        status = fits_with_nominated(filters, pod, node, nominated)
        if status is None:
            statuses.pop(name, None)
        else:
            statuses[name] = status


def _row_statuses(table: NodeTable, verdicts: RowVerdicts) -> dict[str, Status]:
    """The failing rows' statuses by node name (`filter_rows`' codes decoded)."""
    failing = np.flatnonzero(verdicts.codes)
    if not len(failing):
        return {}
    names = table.names[verdicts.rows[failing]].tolist()
    found = verdicts.statuses
    return {name: found[code]  # type: ignore[misc]  # a failing code names a Status
            for name, code in zip(names, verdicts.codes[failing].tolist(), strict=True)}


def _same(full: Mapping[str, Status], fast: Mapping[str, Status], what: str) -> None:
    """`fast_paths="verify"`: a fast path's statuses must be the full computation's."""
    if full != fast:
        differ = sorted(k for k in full.keys() | fast.keys() if full.get(k) != fast.get(k))
        raise AssertionError(f"{what} differs from a full pass on nodes {differ[:10]}")


#: From how many changed nodes a retry judges them on table rows rather than node by node.
ROWS_FROM = 16


class FilterPasses:
    """The filter passes of one profile (see the module's docstring)."""

    def __init__(self, profile: Profile, *, memo: FilterMemo | None = None,
                 verify: bool = False, table: NodeTable | None = None) -> None:
        """`memo`: reuse a pod's last failed pass where nothing it read changed (None: judge
        every node every time); `verify`: also judge every node per node, and raise if they
        differ; `table`: the cluster state's `NodeTable`, whose rows the vectorised passes
        take for the simulation's node list (None: the per-node passes)."""
        self.profile = profile
        self.memo = memo
        self.verify = verify
        self.table = table
        self._names: tuple[Sequence[NodeInfo], dict[str, NodeInfo]] | None = None
        self._places: tuple[Sequence[NodeInfo], dict[str, int]] | None = None
        self._rows: tuple[Sequence[NodeInfo], int, np.ndarray | None] | None = None
        #: The last pass's feasible list and their table rows (for the scorers).
        self.feasible_rows: tuple[Sequence[NodeInfo], np.ndarray] | None = None

    def run(self, filters: FilterPass, pod: PodView, nodes: Sequence[NodeInfo], start: int,
            nominator: Nominator, diagnosis: Diagnosis, want: int,
            ctx: ClusterContext | None = None, *, memo: bool = False,
            ) -> tuple[list[NodeInfo], int]:
        """Feasible nodes (at most `want`, in search order) and how many nodes were processed.

        Upstream walks nodes from `nextStartNodeIndex` (`start`) and stops at the `want`-th
        feasible one. Judging every node with the engine's batch checks and cutting afterwards
        gives the same feasible list, statuses and processed count, and is much faster in
        Python. `memo`: the pass is over the simulation's whole node list (with `self.memo`,
        it may reuse the pod's last failed pass: `filtermemo`)."""
        n = len(nodes)
        if n == 0:
            return [], 0
        start %= n
        rotated = [*nodes[start:], *nodes[:start]] if start else list(nodes)
        memo = memo and self.memo is not None
        local = memo and node_local(filters, self.profile)
        plugins: frozenset[str] | None = None
        reused = self._memo_pass(filters, pod, nodes, nominator, ctx) if local else None
        rows: np.ndarray | None = None
        passing: np.ndarray | list[int] | None = None  # positions in `rotated` that pass
        if reused is not None:
            statuses, plugins = reused
        else:
            rows = self._rows_of(nodes) if memo else None
            by_name = self._by_name(nodes) if memo else None
            if rows is not None:
                if start:
                    rows = np.concatenate((rows[start:], rows[:start]))
                statuses, passing = self._row_pass(filters, pod, rows, rotated, nominator, ctx,
                                                   by_name)
                if self.verify:
                    _same(self._judge(filters, pod, rotated, nominator, ctx, by_name),
                          statuses, f"row filter pass of {pod.key}")
            else:
                statuses = self._judge(filters, pod, rotated, nominator, ctx, by_name)
            if local:
                plugins = self._remember(pod, filters, nodes, nominator, statuses)
        if passing is None:
            passing = [i for i, node in enumerate(rotated) if node.node.name not in statuses] \
                if len(statuses) < n else []
        processed = n
        if len(passing) > want:
            processed = int(passing[want - 1]) + 1
            passing = passing[:want]
        if rows is not None:
            assert self.table is not None
            feasible_rows = rows[passing]
            feasible: list[NodeInfo] = self.table.infos[feasible_rows].tolist()
            # The rows of the nodes to score, for `prioritize` (no name lookups there).
            self.feasible_rows = (feasible, feasible_rows)
        else:
            feasible = [rotated[i] for i in passing]
        if processed == n:
            diagnosis.record_all(statuses, plugins_of(statuses.values()) if plugins is None
                                 else plugins)
        else:
            record = diagnosis.record
            for node in rotated[:processed]:
                status = statuses.get(node.node.name)
                if status is not None:
                    record(node.node.name, status)
        return feasible, processed

    def _row_pass(self, filters: FilterPass, pod: PodView, rows: np.ndarray,
                  nodes: Sequence[NodeInfo], nominator: Nominator, ctx: ClusterContext | None,
                  by_name: Mapping[str, NodeInfo] | None) -> tuple[dict[str, Status], np.ndarray]:
        """`_judge` over the table `rows` of `nodes` (the server's vectorised pass), and the
        positions in `nodes` of those that pass."""
        assert self.table is not None
        verdicts = filter_rows(self.profile, pod, rows, self.table, ctx, filters)
        statuses = _row_statuses(self.table, verdicts)
        passing = np.flatnonzero(verdicts.codes == 0)
        if nominator.by_node:
            self._nominated_pass(filters, pod, nodes, statuses, nominator, ctx, by_name)
            names = self.table.names[rows[passing]].tolist()
            passing = passing[[name not in statuses for name in names]]
        return statuses, passing

    def _judge(self, filters: FilterPass, pod: PodView, nodes: Sequence[NodeInfo],
               nominator: Nominator, ctx: ClusterContext | None,
               by_name: Mapping[str, NodeInfo] | None = None) -> dict[str, Status]:
        """Every failing node's first failing status: the server's per-node filter pass
        (`run_filters`, node-only verdicts memoised on the node views), then the nodes with
        nominated pods judged again with them (`RunFilterPluginsWithNominatedPods`).
        `by_name`: `nodes` by name, when the caller has it."""
        statuses = run_filters(self.profile, pod, nodes, ctx, filters).statuses
        self._nominated_pass(filters, pod, nodes, statuses, nominator, ctx, by_name)
        return statuses

    def _judge_again(self, filters: FilterPass, pod: PodView, nodes: Sequence[NodeInfo],
                     again: list[NodeInfo], nominator: Nominator,
                     ctx: ClusterContext | None) -> dict[str, Status]:
        """`_judge` over `again`, some of the simulation's node list `nodes`: on their table
        rows when it has them (the vectorised pass words each distinct verdict once)."""
        rows = self._rows_of(nodes) if len(again) >= ROWS_FROM else None
        if rows is None:
            return self._judge(filters, pod, again, nominator, ctx)
        assert self.table is not None
        positions = self._positions(nodes)
        subset = rows[[positions[node.node.name] for node in again]]
        verdicts = filter_rows(self.profile, pod, subset, self.table, ctx, filters)
        statuses = _row_statuses(self.table, verdicts)
        self._nominated_pass(filters, pod, again, statuses, nominator, ctx, None)
        if self.verify:
            _same(self._judge(filters, pod, again, nominator, ctx), statuses,
                  f"row filter pass of {pod.key} on changed nodes")
        return statuses

    def _positions(self, nodes: Sequence[NodeInfo]) -> Mapping[str, int]:
        """name -> position in the simulation's node list (see `_by_name`)."""
        if self._places is None or self._places[0] is not nodes:
            self._places = (nodes, {node.node.name: i for i, node in enumerate(nodes)})
        return self._places[1]

    def _nominated_pass(self, filters: FilterPass, pod: PodView, nodes: Sequence[NodeInfo],
                        statuses: dict[str, Status], nominator: Nominator,
                        ctx: ClusterContext | None,
                        by_name: Mapping[str, NodeInfo] | None) -> None:
        """Turn `statuses`, the node-as-is pass over `nodes`, into the pass with the nominated
        pods (only nodes with nominated pods need the two-pass check; just those again)."""
        nominated_by_node = nominator.by_node
        if not nominated_by_node:
            return
        by_name = by_name or {node.node.name: node for node in nodes}
        if self.memo is None or not node_local(filters, self.profile):
            _with_nominated(filters, pod, statuses, nominated_by_node, by_name)
            return
        engine = dict(statuses) if self.verify else None
        self.memo.reservations.judge(self.profile, filters, pod, statuses, nominated_by_node,
                                     by_name, ctx, nominator.nominated_node(pod))
        if engine is not None:
            _with_nominated(filters, pod, engine, nominated_by_node, by_name)
            _same(engine, statuses, f"nominated-pods pass of {pod.key}")

    def _by_name(self, nodes: Sequence[NodeInfo]) -> Mapping[str, NodeInfo]:
        """name -> node of the simulation's node list (`memo` passes only: that list is
        rebuilt, never changed in place, when the nodes change)."""
        if self._names is None or self._names[0] is not nodes:
            self._names = (nodes, {node.node.name: node for node in nodes})
        return self._names[1]

    def _rows_of(self, nodes: Sequence[NodeInfo]) -> np.ndarray | None:
        """The table rows of the simulation's node list, in its order (None: no table, or a
        node it does not hold as it is)."""
        table = self.table
        if table is None:
            return None
        if self._rows is None or self._rows[0] is not nodes or self._rows[1] != table.layout:
            rows = table.rows([node.node.name for node in nodes])
            if rows is not None and any(info is not node for info, node
                                        in zip(table.infos[rows].tolist(), nodes, strict=True)):
                rows = None
            self._rows = (nodes, table.layout, rows)
        return self._rows[2]

    def _memo_pass(self, filters: FilterPass, pod: PodView, nodes: Sequence[NodeInfo],
                   nominator: Nominator, ctx: ClusterContext | None,
                   ) -> tuple[dict[str, Status], frozenset[str]] | None:
        """A failed pass the pod may reuse, with the changed nodes judged again, and the
        plugins its statuses name; None when there is none."""
        assert self.memo is not None
        recalled = self.memo.recall(pod, nominator.nominated_node(pod) is not None,
                                    check_labels(filters), nodes)
        if recalled is None:
            return None
        old, plugins, changed = recalled
        statuses = dict(old)
        by_name = self._by_name(nodes)
        again = [by_name[name] for name in sorted(changed) if name in by_name]
        if again:
            before = plugins_of(old[node.node.name] for node in again)
            for node in again:
                del statuses[node.node.name]
            judged = self._judge_again(filters, pod, nodes, again, nominator, ctx)
            statuses.update(judged)
            after = plugins_of(judged.values())
            # A plugin only the changed nodes named may be gone: count again then.
            plugins = plugins | after if before <= after else plugins_of(statuses.values())
        if self.verify:
            full = self._judge(filters, pod, nodes, nominator, ctx, by_name)
            _same(full, statuses, f"filter memo of {pod.key}")
            if plugins != plugins_of(full.values()):
                raise AssertionError(f"filter memo of {pod.key}: plugins {sorted(plugins)}")
        self._remember(pod, filters, nodes, nominator, statuses, plugins)
        return statuses, plugins

    def _remember(self, pod: PodView, filters: FilterPass, nodes: Sequence[NodeInfo],
                  nominator: Nominator, statuses: dict[str, Status],
                  plugins: frozenset[str] | None = None) -> frozenset[str] | None:
        """Keep a pass no node passed for the pod's next attempt (and its replicas'); forget
        any other. Returns the plugins the statuses name, when it had to count them."""
        assert self.memo is not None
        if len(statuses) != len(nodes):
            self.memo.forget(pod.uid)
            return plugins
        if plugins is None:
            plugins = plugins_of(statuses.values())
        self.memo.keep(pod, nominator.nominated_node(pod) is not None, check_labels(filters),
                       nodes, statuses, plugins)
        return plugins
