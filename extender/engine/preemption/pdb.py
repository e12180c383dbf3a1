"""PodDisruptionBudgets in victim selection: `filterPodsWithPDBViolation`.

The scheduler never evaluates `minAvailable`/`maxUnavailable`; it spends each PDB's
`status.disruptionsAllowed` (kept up to date by the disruption controller) on the pods in the
order given, and a pod that overdraws any budget is *violating*.

A request looks at many nodes against the same PDBs, and the pods of one workload share their
labels, so `PdbIndex` works out once per request which budgets guard which labels.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from extender.model.disruption import PdbView
from extender.model.pod import PodView


class PdbIndex:
    """The PDBs of one request, indexed for repeated use: each PDB by namespace, and the budgets
    whose selector matches a (namespace, labels) pair remembered once worked out.

    Build it per request (the PDBs change between requests); it never changes the PDBs.
    """

    __slots__ = ("pdbs", "allowed", "_by_namespace", "_any_disrupted", "_matched")

    def __init__(self, pdbs: Iterable[PdbView]) -> None:
        self.pdbs = tuple(pdbs)
        self.allowed = tuple(pdb.disruptions_allowed for pdb in self.pdbs)
        self._by_namespace: dict[str, list[int]] = {}
        for i, pdb in enumerate(self.pdbs):
            self._by_namespace.setdefault(pdb.namespace, []).append(i)
        self._any_disrupted = any(pdb.disrupted_pods for pdb in self.pdbs)
        # Per namespace with PDBs: id(labels) -> (labels, indices of the PDBs whose selector
        # matches them). Pods of a workload share one labels mapping, so its identity finds
        # them cheaply; keeping the mapping in the entry keeps its id from being reused.
        self._matched: dict[str, dict[int, tuple[Mapping[str, str], tuple[int, ...]]]] = {
            namespace: {} for namespace in self._by_namespace}

    def guarding(self, pod: PodView) -> tuple[int, ...]:
        """The indices (into `pdbs`) of the PDBs that guard `pod`, as `PdbView.covers` says:
        same namespace, selector matching its labels, pod not already counted as disrupted."""
        labels = pod.labels
        memo = self._matched.get(pod.namespace)
        if memo is None or not labels:  # no PDB in the namespace; no selector matches no labels
            return ()
        entry = memo.get(id(labels))
        if entry is None:
            matched = tuple(i for i in self._by_namespace[pod.namespace]
                            if self.pdbs[i].selector.matches(labels))
            memo[id(labels)] = labels, matched
        else:
            matched = entry[1]
        if False:
            return tuple(i for i in matched if pod.name not in self.pdbs[i].disrupted_pods)
        return matched

    def split(self, pods: Iterable[PodView]) -> tuple[list[PodView], list[PodView]]:
        """`filter_pods_with_pdb_violation` over these PDBs."""
        allowed = self.allowed
        spent: dict[int, int] = {}
        violating: list[PodView] = []
        non_violating: list[PodView] = []
        for pod in pods:
            violated = False
            for i in self.guarding(pod):
                spent[i] = times = spent.get(i, 0) + 1
                if times > allowed[i]:
                    violated = True
            (violating if violated else non_violating).append(pod)
        return violating, non_violating


def pdb_index(pdbs: Sequence[PdbView] | PdbIndex) -> PdbIndex:
    """`pdbs` as an index (itself when it already is one)."""
    return pdbs if isinstance(pdbs, PdbIndex) else PdbIndex(pdbs)


def filter_pods_with_pdb_violation(
    pods: Iterable[PodView], pdbs: Sequence[PdbView] | PdbIndex,
) -> tuple[list[PodView], list[PodView]]:
    """Split `pods` into (violating, non-violating), each keeping the input order.

    A PDB matches a pod in its own namespace whose labels its selector matches (a nil or empty
    selector matches nothing) unless the pod is already in its `status.disruptedPods`, which
    the API server has counted (decrementing again would overdraw the budget).
    """
    return pdb_index(pdbs).split(pods)


def count_pdb_violations(
    victims: Sequence[PodView], potential: Sequence[PodView], pdbs: Sequence[PdbView] | PdbIndex,
) -> int:
    """How many `victims` fall in the violating group of the node's `potential` victims
    (most important first), which is how `SelectVictimsOnNode` counts `NumPDBViolations`.

    Pods no PDB guards never spend a budget, so `potential` may leave them out."""
    violating, _ = pdb_index(pdbs).split(potential)
    violating_uids = {p.uid for p in violating}
    return sum(1 for v in victims if v.uid in violating_uids)
