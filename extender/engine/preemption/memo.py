"""What the preempt verb keeps from request to request: the PDB index with what evicting
each pod does to the budgets, each node's walk (`NodePlan`) and the state's pods as columns
(`PodColumns`).

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

import itertools
import operator
from collections.abc import Sequence

from extender.engine.nodetable import NodeTable
from extender.engine.preemption.columns import PodColumns
from extender.engine.preemption.pdb import PdbIndex, SelectorMatches
from extender.engine.preemption.plans import NodePlan
from extender.model.disruption import PdbView
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

_tokens = itertools.count(1)

UNGUARDED, OVERDRAWS, DEPENDS = 0, 1, 2


class PdbEpoch:
    """One PDB set (by the identity of its views: a changed PDB is a new view): its index,
    and what evicting a pod does to the budgets, per pod asked about (the pod's view is the
    key, so an updated pod is asked about again) or per workload (`by_labels`)."""

    __slots__ = ("pdbs", "index", "token", "exposures", "by_labels", "_limit")

    def __init__(self, pdbs: tuple[PdbView, ...], selector_matches: SelectorMatches | None,
                 limit: int) -> None:
        self.pdbs = pdbs
        self.index = PdbIndex(pdbs, selector_matches)
        self.token = next(_tokens)
        #: Read directly on the hot path; filled through `exposure`.
        self.exposures: dict[PodView, int] = {}
        #: namespace -> id(labels) -> (labels, exposure), while no PDB lists disrupted pods
        #: (then a pod's budgets follow from its namespace and labels alone, and a workload's
        #: pods share one labels mapping): a few small, warm tables instead of one entry per
        #: pod. None when some PDB does list them: `exposure` per pod.
        self.by_labels: dict[str, dict[int, tuple[object, int]]] | None = (
            None if any(pdb.disrupted_pods for pdb in pdbs) else {})
        self._limit = limit

    def same_pdbs(self, pdbs: tuple[PdbView, ...]) -> bool:
        mine = self.pdbs
        return len(mine) == len(pdbs) and all(map(operator.is_, mine, pdbs))

    def exposure(self, pod: PodView) -> int:
        """What evicting `pod` does to the budgets: `UNGUARDED`; `OVERDRAWS` (a budget
        guarding it has no disruption left, so it is violating whatever else goes); or
        `DEPENDS` (on the node's other pods spending the budgets first)."""
        by_labels = self.by_labels
        if by_labels is not None:
            table = by_labels.get(pod.namespace)
            if table is None:
                table = by_labels.setdefault(pod.namespace, {})
            entry = table.get(id(pod.labels))
            if entry is None:
                if len(table) >= self._limit:
                    table.clear()
                # The entry holds the mapping, so its id is not reused while it is there.
                entry = table[id(pod.labels)] = (pod.labels, self._exposure(pod))
            return entry[1]
        found = self.exposures.get(pod)
        if found is None:
            if len(self.exposures) >= self._limit:
                self.exposures.clear()
            found = self.exposures[pod] = self._exposure(pod)
        return found

    def _exposure(self, pod: PodView) -> int:
        guards = self.index.guarding(pod)
        allowed = self.index.allowed
        return UNGUARDED if not guards else OVERDRAWS if any(allowed[i] <= 0 for i in guards) \
            else DEPENDS


class PreemptionMemo:
    """Held by the preempt route for the process's life. Bounded: exposures and plans are
    forgotten wholesale when they pass their limits (a new PDB set drops the exposures)."""

    __slots__ = ("selector_matches", "exposure_limit", "plan_limit", "_epoch", "_plans",
                 "_columns")

    def __init__(self, selector_matches: SelectorMatches | None = None, *,
                 exposure_limit: int = 1 << 17, plan_limit: int = 1 << 16) -> None:
        self.selector_matches = selector_matches
        self.exposure_limit = exposure_limit
        self.plan_limit = plan_limit
        self._epoch: PdbEpoch | None = None
        self._plans: dict[str, NodePlan] = {}
        self._columns: PodColumns | None = None

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
