"""PreScore, Score and NormalizeScore: preferred (anti-)affinity of the incoming pod, and the
existing pods' required affinity (hardPodAffinityWeight) and preferred terms towards it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from extender.engine.framework import MAX_NODE_SCORE, ClusterContext
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.model.podaffinity import AffinityTerm

#: topology key -> value -> summed weight
TopologyScore = dict[str, dict[str, int]]


def _add(scores: TopologyScore, labels: Mapping[str, str], key: str, amount: int) -> bool:
    value = labels.get(key)
    if value is None:
        return False
    per_value = scores.setdefault(key, {})
    per_value[value] = per_value.get(value, 0) + amount
    return True


def topology_score(pod: PodView, preferred: Sequence[AffinityTerm],
                   preferred_anti: Sequence[AffinityTerm], hard_weight: int,
                   ctx: ClusterContext) -> TopologyScore | None:
    """The summed weights per topology pair, or None when no existing pod contributed
    (PreScore Skip). The incoming pod's terms must have their namespace selectors resolved."""
    scores: TopologyScore = {}
    contributed = False
    nodes = ctx.nodes
    index = ctx.pod_index
    # 1. The incoming pod's preferred terms against every existing pod (terminating too).
    for sign, terms in ((1, preferred), (-1, preferred_anti)):
        for term in terms:
            for namespace in list(index.namespaces()):
                if not term.in_namespace(namespace, None):
                    continue
                for group in index.matching(namespace, term.selector):
                    for node_name, num in group.nodes.items():
                        info = nodes.get(node_name)
                        if info is None or not info.node.labels:
                            continue
                        # Adding term by term and pod by pod is the same sum as one product.
                        contributed |= _add(scores, info.node.labels, term.topology_key,
                                            sign * term.weight * num)
    # 2. Existing pods' own terms that select the incoming pod (equal terms of many pods are
    # matched once and counted per node).
    namespace_labels = ctx.namespace_labels(pod.namespace)
    kinds: tuple[tuple[int, str], ...] = ((1, "preferred_affinity"), (-1, "preferred_anti"))
    if hard_weight > 0:
        kinds = ((hard_weight, "required_affinity"), *kinds)
    for factor, kind in kinds:
        for term_group in index.term_groups(kind):
            term = term_group.term
            if not term.matches(pod.namespace, pod.labels, namespace_labels):
                continue
            weight = factor if kind == "required_affinity" else factor * term.weight
            for node_name, num in term_group.nodes.items():
                info = nodes.get(node_name)
                if info is None or not info.node.labels:
                    continue
                contributed |= _add(scores, info.node.labels, term.topology_key, weight * num)
    return scores if contributed else None


def affinity_raw_scores(scores: TopologyScore, nodes: Sequence[NodeInfo]) -> list[int]:
    """Score per candidate: the summed weights of the node's topology pairs."""
    raw = []
    for info in nodes:
        labels = info.node.labels
        total = 0
        for key, per_value in scores.items():
            value = labels.get(key)
            if value is not None:
                total += per_value.get(value, 0)
        raw.append(total)
    return raw


def normalize_affinity(raw: list[int]) -> list[int]:
    """NormalizeScore: float, from the real minimum (negative with anti-affinity) to the
    maximum; all equal gives 0 everywhere."""
    if not raw:
        return raw
    low, high = min(raw), max(raw)
    spread = high - low
    if spread <= 0:
        return [0] * len(raw)
    return [int(MAX_NODE_SCORE * ((score - low) / spread)) for score in raw]

