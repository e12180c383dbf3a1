"""Bound pods grouped by namespace and label set, kept current by the cluster state.

Cross-node plugins (PodTopologySpread, InterPodAffinity) count the pods a selector matches per
node or topology domain. Pods of one workload share a namespace and a label set, so a selector
is matched once per group (memoised until the namespace gains or loses a group), and counting
sums the groups' per-node counters: a request never scans every pod.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping

from extender.model.pod import PodView
from extender.model.podaffinity import AffinityTerm
from extender.model.selectors import Selector


class PodGroup:
    """The bound pods of one namespace with one label set and termination state."""

    __slots__ = ("namespace", "labels", "terminating", "nodes")

    def __init__(self, namespace: str, labels: Mapping[str, str], terminating: bool) -> None:
        self.namespace = namespace
        self.labels = labels
        self.terminating = terminating
        self.nodes: Counter[str] = Counter()  # node name -> pods of the group there

    def __repr__(self) -> str:
        return f"PodGroup({self.namespace}, {dict(self.labels)}, terminating={self.terminating})"


class TermGroup:
    """The bound pods' pod (anti-)affinity terms of one kind that are equal (same selector,
    namespaces, namespace selector, topology key and weight), counted per node."""

    __slots__ = ("term", "nodes")

    def __init__(self, term: AffinityTerm) -> None:
        self.term = term
        self.nodes: Counter[str] = Counter()


#: The kinds of terms, as `PodAffinityTerms` attributes.
TERM_KINDS = ("required_affinity", "required_anti", "preferred_affinity", "preferred_anti")


class PodIndex:
    """Counts of bound pods by (namespace, labels, terminating) per node, and of the bound
    pods' pod (anti-)affinity terms by kind and term."""

    def __init__(self) -> None:
        self._groups: dict[str, dict[tuple, PodGroup]] = {}
        self._generation: Counter[str] = Counter()
        self._matches: dict[tuple, tuple[int, list[PodGroup]]] = {}
        self._terms: dict[str, dict[tuple, TermGroup]] = {kind: {} for kind in TERM_KINDS}

    def add(self, pod: PodView, node: str) -> None:
        key = (tuple(pod.labels.items()), pod.terminating)
        groups = self._groups.setdefault(pod.namespace, {})
        group = groups.get(key)
        if group is None:
            group = groups[key] = PodGroup(pod.namespace, pod.labels, pod.terminating)
            self._generation[pod.namespace] += 1
        group.nodes[node] += 1
        self._count_terms(pod, node, 1)

    def remove(self, pod: PodView, node: str) -> None:
        groups = self._groups.get(pod.namespace)
        key = (tuple(pod.labels.items()), pod.terminating)
        group = groups.get(key) if groups else None
        if group is None or group.nodes[node] <= 0:
            return
        group.nodes[node] -= 1
        if group.nodes[node] == 0:
            del group.nodes[node]
            if not group.nodes:
                del groups[key]  # type: ignore[union-attr]
                self._generation[pod.namespace] += 1
                if not groups:
                    self._forget_namespace(pod.namespace)
        self._count_terms(pod, node, -1)

    def _forget_namespace(self, namespace: str) -> None:
        """A namespace without bound pods leaves no trace: its memoised matches go with its
        generation, so a later generation starting again at 0 can meet no stale entry."""
        del self._groups[namespace]
        del self._generation[namespace]
        for key in [k for k in self._matches if k[0] == namespace]:
            del self._matches[key]

    def _count_terms(self, pod: PodView, node: str, delta: int) -> None:
        terms = pod.affinity_terms
        if terms is None or terms.error:
            return
        for kind in TERM_KINDS:
            groups = self._terms[kind]
            for term in getattr(terms, kind):
                key = term.key
                group = groups.get(key)
                if group is None:
                    group = groups[key] = TermGroup(term)
                group.nodes[node] += delta
                if group.nodes[node] <= 0:
                    del group.nodes[node]
                    if not group.nodes:
                        del groups[key]

    def term_groups(self, kind: str) -> Iterator[TermGroup]:
        """The bound pods' terms of one kind (`TERM_KINDS`), equal terms counted together."""
        return iter(self._terms[kind].values())

    def namespaces(self) -> Iterator[str]:
        return iter(self._groups)

    def groups(self, namespace: str) -> Iterator[PodGroup]:
        return iter(self._groups.get(namespace, {}).values())

    def matching(self, namespace: str, selector: Selector) -> list[PodGroup]:
        """The namespace's groups (terminating ones included) whose labels `selector` matches."""
        memo_key = (namespace, selector.key)
        generation = self._generation[namespace]
        found = self._matches.get(memo_key)
        if found is not None and found[0] == generation:
            return found[1]
        groups = [g for g in self.groups(namespace) if selector.matches(g.labels)]
        if len(self._matches) > 4096:
            self._matches.clear()
        self._matches[memo_key] = (generation, groups)
        return groups

    def cached_matches(self) -> int:
        """Memoised selector matches (cleared past 4 096)."""
        return len(self._matches)

    def count_by_node(self, namespace: str, selector: Selector,
                      include_terminating: bool) -> Counter[str]:
        """node name -> bound pods of `namespace` that `selector` matches."""
        counts: Counter[str] = Counter()
        for group in self.matching(namespace, selector):
            if group.terminating and not include_terminating:
                continue
            counts.update(group.nodes)
        return counts
