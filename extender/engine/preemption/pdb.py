"""PodDisruptionBudgets in victim selection: `filterPodsWithPDBViolation`.

The scheduler never evaluates `minAvailable`/`maxUnavailable`; it spends each PDB's
`status.disruptionsAllowed` (kept up to date by the disruption controller) on the pods in the
order given, and a pod that overdraws any budget is *violating*.

A request looks at many nodes against the same PDBs, and the pods of one workload share their
labels, so `PdbIndex` works out once per request which budgets guard which labels; a
`SelectorMatches` kept by the caller carries the selectors' answers from request to request.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from extender.model.disruption import PdbView
from extender.model.pod import PodView
from extender.model.selectors import LabelSelectorMatcher

Selectors = tuple[LabelSelectorMatcher, ...]

#: Label mappings remembered per namespace by one `PdbIndex`.
_LABELS_LIMIT = 1 << 14


class SelectorMatches:
    """Which of a namespace's PDB selectors match a labels mapping, remembered across requests.

    Keyed by the namespace's selectors (a tuple of the objects themselves: a PDB's view and its
    selector live until the PDB changes) and by the identity of the labels mapping (the pods of
    a workload share one), so answers stay useful from request to request and a changed PDB
    only misses in its own namespace. Each entry holds the objects it is keyed by, so no id is
    reused while it exists. Bounded: everything is forgotten once `limit` answers are stored.
    """

    __slots__ = ("limit", "_answers")

    def __init__(self, limit: int = 1 << 14) -> None:
        self.limit = limit
        self._answers: dict[tuple[Selectors, int], tuple[Mapping[str, str], tuple[int, ...]]] = {}

    def matching(self, selectors: Selectors, labels: Mapping[str, str]) -> tuple[int, ...]:
        """The positions in `selectors` of those that match `labels`."""
        key = (selectors, id(labels))
        entry = self._answers.get(key)
        if entry is not None:
            return entry[1]
        answer = _matching(selectors, labels)
        if len(self._answers) >= self.limit:
            self._answers.clear()
        self._answers[key] = labels, answer
        return answer

    def __len__(self) -> int:
        return len(self._answers)


def _matching(selectors: Selectors, labels: Mapping[str, str]) -> tuple[int, ...]:
    return tuple(i for i, selector in enumerate(selectors) if selector.matches(labels))


class PdbIndex:
    """The PDBs of one request, indexed for repeated use: by namespace, with the budgets whose
    selector matches a (namespace, labels) pair remembered once worked out.

    Build it per request, or keep it while the PDB views stay the same (the preempt verb's
    `PdbEpoch`); it never changes the PDBs. `selector_matches` may carry selector answers
    over from earlier requests.
    """

    __slots__ = ("pdbs", "allowed", "_namespaces", "_any_disrupted", "_matching")

    def __init__(self, pdbs: Iterable[PdbView], selector_matches: SelectorMatches | None = None) -> None:
        self.pdbs = tuple(pdbs)
        self.allowed = tuple(pdb.disruptions_allowed for pdb in self.pdbs)
        self._any_disrupted = any(pdb.disrupted_pods for pdb in self.pdbs)
        self._matching = selector_matches.matching if selector_matches is not None else _matching
        by_namespace: dict[str, list[int]] = {}
        for i, pdb in enumerate(self.pdbs):
            by_namespace.setdefault(pdb.namespace, []).append(i)
        # Per namespace with PDBs: its PDBs' indices and selectors, and a memo id(labels) ->
        # (labels, indices of the PDBs whose selector matches). Keeping the mapping in the
        # entry keeps its id from being reused.
        self._namespaces: dict[str, tuple[tuple[int, ...], Selectors,
                                          dict[int, tuple[Mapping[str, str], tuple[int, ...]]]]] = {
            namespace: (tuple(indices), tuple(self.pdbs[i].selector for i in indices), {})
            for namespace, indices in by_namespace.items()}

    def guarding(self, pod: PodView) -> tuple[int, ...]:
        """The indices (into `pdbs`) of the PDBs that guard `pod`, as `PdbView.covers` says:
        same namespace, selector matching its labels, pod not already counted as disrupted."""
        labels = pod.labels
        namespace = self._namespaces.get(pod.namespace)
        if namespace is None or not labels:  # no PDB in the namespace; no labels, no match
            return ()
        indices, selectors, memo = namespace
        entry = memo.get(id(labels))
        if entry is None:
            matched = tuple(indices[j] for j in self._matching(selectors, labels))
            if len(memo) >= _LABELS_LIMIT:  # the index may outlive a request (`PdbEpoch`)
                memo.clear()
            memo[id(labels)] = labels, matched
        else:
            matched = entry[1]
        if matched and self._any_disrupted:
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
