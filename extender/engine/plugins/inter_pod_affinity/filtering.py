"""PreFilter and Filter: required pod affinity, anti-affinity, and existing pods' required
anti-affinity against the incoming pod, counted per topology pair over ALL nodes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from extender.engine.framework import (
    ClusterContext,
    ProjectedFilterState,
    Status,
    keep_passing,
    unresolvable,
    unschedulable,
)
from extender.engine.podindex import PodGroup
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.model.podaffinity import AffinityTerm

NAME = "InterPodAffinity"
REASON_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"

_AFFINITY = unresolvable(NAME, REASON_AFFINITY)
_ANTI = unschedulable(NAME, REASON_ANTI_AFFINITY)
_EXISTING = unschedulable(NAME, REASON_EXISTING_ANTI_AFFINITY)

Pair = tuple[str, str]  # (topology key, value)


def matches_all(terms: Sequence[AffinityTerm], namespace: str, labels: Mapping[str, str] | None) -> bool:
    """`podMatchesAllAffinityTerms` (namespace labels not consulted: nil)."""
    if not terms:
        return False
    return all(t.matches(namespace, labels, None) for t in terms)


def _bump(counts: Counter[Pair], labels: Mapping[str, str], key: str, delta: int) -> None:
    value = labels.get(key)
    if value is None:
        return
    pair = (key, value)
    counts[pair] += delta
    if counts[pair] == 0:
        del counts[pair]


def existing_anti_counts(pod: PodView, namespace_labels: Mapping[str, str] | None,
                         ctx: ClusterContext) -> Counter[Pair]:
    """Pairs where an existing pod's required anti-affinity term selects the incoming pod."""
    counts: Counter[Pair] = Counter()
    nodes = ctx.nodes
    # Equal terms of many pods are matched once and counted per node.
    for group in ctx.pod_index.term_groups("required_anti"):
        term = group.term
        if not term.matches(pod.namespace, pod.labels, namespace_labels):
            continue
        for node_name, num in group.nodes.items():
            info = nodes.get(node_name)
            if info is not None:
                _bump(counts, info.node.labels, term.topology_key, num)
    return counts


def incoming_counts(affinity: Sequence[AffinityTerm], anti: Sequence[AffinityTerm],
                    ctx: ClusterContext) -> tuple[Counter[Pair], Counter[Pair]]:
    """Pairs of existing pods matching ALL the incoming pod's required affinity terms, and
    pairs of existing pods matching each required anti-affinity term (terminating pods too)."""
    affinity_counts: Counter[Pair] = Counter()
    anti_counts: Counter[Pair] = Counter()
    if not affinity and not anti:
        return affinity_counts, anti_counts
    index, nodes = ctx.pod_index, ctx.nodes

    def add(counts: Counter[Pair], groups: Sequence[PodGroup], keys: Sequence[str]) -> None:
        for group in groups:
            for node_name, num in group.nodes.items():
                info = nodes.get(node_name)
                if info is not None:
                    for key in keys:
                        _bump(counts, info.node.labels, key, num)

    affinity_keys = [t.topology_key for t in affinity]
    for namespace in list(index.namespaces()):
        if affinity and all(t.in_namespace(namespace, None) for t in affinity):
            # Groups every term selects (each term's matches are memoised by the index).
            common = index.matching(namespace, affinity[0].selector)
            for term in affinity[1:]:
                ids = {id(g) for g in index.matching(namespace, term.selector)}
                common = [g for g in common if id(g) in ids]
            add(affinity_counts, common, affinity_keys)
        for term in anti:
            if term.in_namespace(namespace, None):
                add(anti_counts, index.matching(namespace, term.selector), (term.topology_key,))
    return affinity_counts, anti_counts


class AffinityFilter(ProjectedFilterState):
    """`preFilterState`: the three pair counts and the incoming pod's resolved terms."""

    __slots__ = ("pod", "affinity", "anti", "namespace_labels", "existing", "affinity_counts",
                 "anti_counts", "keys", "verdicts", "column", "columns")

    def __init__(self, pod: PodView, affinity: tuple[AffinityTerm, ...],
                 anti: tuple[AffinityTerm, ...], namespace_labels: Mapping[str, str] | None,
                 existing: Counter[Pair], affinity_counts: Counter[Pair],
                 anti_counts: Counter[Pair],
                 columns: Callable[[str], Mapping[NodeInfo, str | None]] | None = None) -> None:
        self.pod, self.affinity, self.anti = pod, affinity, anti
        self.namespace_labels = namespace_labels
        self.existing, self.affinity_counts, self.anti_counts = existing, affinity_counts, anti_counts
        self.columns = columns  # the cluster's label columns (ClusterContext.label_column)
        self._reset()

    def _reset(self) -> None:
        # A verdict depends only on the node's values for these keys.
        keys = {t.topology_key for t in (*self.affinity, *self.anti)}
        keys.update(key for key, _ in self.existing)
        self.keys = tuple(sorted(keys))
        self.verdicts: dict[tuple, Status | None] = {}
        self.column = self.columns(self.keys[0]) if self.columns and len(self.keys) == 1 else None

    def judge_values(self, values: tuple[str | None, ...]) -> Status | None:
        pairs = [(k, v) for k, v in zip(self.keys, values, strict=True) if v is not None]
        if self.affinity and not self._satisfies_affinity(dict(pairs)):
            return _AFFINITY
        # Only the anti-affinity terms' keys have pairs in `anti_counts`, so a pair of the
        # node's counted there is a term's match in the node's domain.
        anti_counts = self.anti_counts
        if anti_counts:
            for pair in pairs:
                if anti_counts.get(pair, 0) > 0:
                    return _ANTI
        existing = self.existing
        if existing:
            for pair in pairs:
                if existing.get(pair, 0) > 0:
                    return _EXISTING
        return None

    def failing_values(self) -> dict[str | None, Status] | None:
        if len(self.keys) != 1 or self.affinity:
            return None
        # One key and no affinity terms (say, anti-affinity per hostname): a node fails exactly
        # when its value has a counted pair, so the failing values are known up front.
        key = self.keys[0]
        failing: dict[str | None, Status] = {}
        for (k, value), num in self.existing.items():
            if k == key and num > 0:
                failing[value] = _EXISTING
        for (k, value), num in self.anti_counts.items():
            if k == key and num > 0:
                failing[value] = _ANTI  # checked before the existing pods' terms
        return failing

    def filter_many(self, nodes: Sequence[NodeInfo], statuses: dict[str, Status]) -> list[NodeInfo]:
        failing = self.failing_values()
        if failing is None:
            return super().filter_many(nodes, statuses)
        return keep_passing(nodes, list(map(failing.get, self.node_values(nodes))), statuses)

    def _satisfies_affinity(self, labels: Mapping[str, str]) -> bool:
        pods_exist = True
        for term in self.affinity:
            value = labels.get(term.topology_key)
            if value is None:
                return False  # every topology key must exist on the node
            if self.affinity_counts.get((term.topology_key, value), 0) <= 0:
                pods_exist = False
        if pods_exist:
            return True
        # The first pod of a group with affinity to itself: nothing matches yet anywhere,
        # and the pod matches its own terms.
        return not self.affinity_counts and matches_all(self.affinity, self.pod.namespace,
                                                        self.pod.labels)

    def clone(self) -> AffinityFilter:
        return AffinityFilter(self.pod, self.affinity, self.anti, self.namespace_labels,
                              Counter(self.existing), Counter(self.affinity_counts),
                              Counter(self.anti_counts), self.columns)

    def add_pod(self, pod: PodView, node: NodeInfo) -> None:
        self._update(pod, node, 1)

    def remove_pod(self, pod: PodView, node: NodeInfo) -> None:
        self._update(pod, node, -1)

    def _update(self, pod: PodView, node: NodeInfo, delta: int) -> None:
        """`updateWithPod`."""
        labels = node.node.labels
        terms = pod.affinity_terms
        if terms is not None:
            for term in terms.required_anti:
                if term.matches(self.pod.namespace, self.pod.labels, self.namespace_labels):
                    _bump(self.existing, labels, term.topology_key, delta)
        if matches_all(self.affinity, pod.namespace, pod.labels):
            for term in self.affinity:
                _bump(self.affinity_counts, labels, term.topology_key, delta)
        for term in self.anti:
            if term.matches(pod.namespace, pod.labels, None):
                _bump(self.anti_counts, labels, term.topology_key, delta)
        self._reset()
