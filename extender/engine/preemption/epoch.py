"""A PDB set's epoch: its index, and what evicting each pod does to its budgets
(`UNGUARDED`, `OVERDRAWS`, `DEPENDS`), kept per pod or per workload while the set is the same
(by the identity of its views). The preempt verb's memo (`memo.py`) starts a new epoch on any
PDB change; the node plans and the pod columns (`columns.py`) are valid for one epoch."""

from __future__ import annotations

import itertools
import operator

from extender.engine.preemption.pdb import PdbIndex, SelectorMatches
from extender.model.disruption import PdbView
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
