"""What the preempt verb keeps from request to request: the PDB index with what evicting
each pod does to the budgets, each node's walk (`NodePlan`), the state's pods as columns
(`PodColumns`) and NodeResourcesFit's words per pattern of failing checks.

Everything here is checked before reuse against what it was computed from (the PDB views,
the node's pods by identity, which of them the preemptor's priority evicts), so a stale entry
is never read, only rebuilt. Any PDB change (a status update included) starts a new epoch,
and with it new plans. A large request runs in a worker thread while small ones run on the
loop, so each entry is a pure function of what it is checked against and each update is one
assignment or dict operation: two threads filling the memo at once can only compute the same
thing twice. The pod columns (`columns.py`, for `batch.py`) are the exception: kept row by row
against the state's `NodeTable`, they are used by one request at a time (their own lock; a
request that finds it taken goes node by node).
"""

from __future__ import annotations

from collections.abc import Sequence

from extender.engine.nodetable import NodeTable
from extender.engine.preemption.columns import PodColumns
from extender.engine.preemption.epoch import PdbEpoch
from extender.engine.preemption.pdb import SelectorMatches
from extender.engine.preemption.plans import NodePlan
from extender.model.disruption import PdbView
from extender.model.nodeinfo import NodeInfo


class PreemptionMemo:
    """Held by the preempt route for the process's life. Bounded: exposures and plans are
    forgotten wholesale when they pass their limits (a new PDB set drops the exposures)."""

    __slots__ = ("selector_matches", "exposure_limit", "plan_limit", "_epoch", "_plans",
                 "_columns", "_words")

    def __init__(self, selector_matches: SelectorMatches | None = None, *,
                 exposure_limit: int = 1 << 17, plan_limit: int = 1 << 16) -> None:
        self.selector_matches = selector_matches
        self.exposure_limit = exposure_limit
        self.plan_limit = plan_limit
        self._epoch: PdbEpoch | None = None
        self._plans: dict[str, NodePlan] = {}
        self._columns: PodColumns | None = None
        self._words: dict[type, dict[int, str]] = {}

    def epoch(self, pdbs: Sequence[PdbView]) -> PdbEpoch:
        """The epoch for the cluster's current PDBs (the last one when they are the same)."""
        pdbs = tuple(pdbs)
        epoch = self._epoch
        if epoch is None or not epoch.same_pdbs(pdbs):
            epoch = self._epoch = PdbEpoch(pdbs, self.selector_matches, self.exposure_limit)
        return epoch

    def plan(self, info: NodeInfo, priority: int, epoch: PdbEpoch) -> NodePlan:
        """The node's walk for a preemptor of `priority` under `epoch`'s PDBs."""
        pods = tuple(info.pods.values())
        name = info.node.name
        plan = self._plans.get(name)
        if plan is None or not plan.valid_for(pods, priority, epoch.token):
            plan = NodePlan(pods, priority, epoch.token, epoch.index.guarding, epoch.index.allowed)
            if len(self._plans) >= self.plan_limit:
                self._plans.clear()
            self._plans[name] = plan
        return plan

    def words(self, check: object) -> dict[int, str]:
        """NodeResourcesFit's words for a node the pod cannot fit even emptied, per pattern of
        failing checks (`FitRequest.short_bits`), for checks of `check`'s kind: with only the
        base resources requested (the fast path's condition) its reasons follow from the
        pattern alone, so every preemptor shares them (`FastPath.unresolvable_drop` fills
        it; a few patterns at most)."""
        return self._words.setdefault(type(check), {})

    def columns(self, table: NodeTable) -> PodColumns:
        """The pod columns of `table`'s state (`columns.py`), new for another table."""
        found = self._columns
        if found is None or found.table is not table:
            found = self._columns = PodColumns(table)
        return found

    def sizes(self) -> dict[str, int]:
        epoch = self._epoch
        exposures = 0
        if epoch is not None:
            exposures = len(epoch.exposures) + sum(map(len, (epoch.by_labels or {}).values()))
        columns = self._columns
        return {"preempt_exposures": exposures, "preempt_node_plans": len(self._plans),
                "preempt_pod_columns": 0 if columns is None else len(columns.uid_ord)}
