"""InterPodAffinity: place pods near (affinity) or away from (anti-affinity) other pods.

Filter: the incoming pod's required affinity and anti-affinity terms, and existing pods'
required anti-affinity terms that select it (symmetry). Score: preferred terms both ways and
existing pods' required affinity towards the incoming pod (`hardPodAffinityWeight`).
"""

from __future__ import annotations

from collections.abc import Sequence

from extender.engine.args import InterPodAffinityArgs
from extender.engine.framework import (
    ClusterContext,
    CycleState,
    PluginError,
    Status,
    unresolvable,
)
from extender.engine.plugins.inter_pod_affinity.filtering import (
    NAME,
    AffinityFilter,
    existing_anti_counts,
    incoming_counts,
)
from extender.engine.plugins.inter_pod_affinity.scoring import (
    affinity_raw_scores,
    normalize_affinity,
    topology_score,
)
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

__all__ = ["NAME", "InterPodAffinity"]


class InterPodAffinity:
    name = NAME

    def __init__(self, args: InterPodAffinityArgs | None = None) -> None:
        self.args = args or InterPodAffinityArgs()

    def pre_filter(self, state: CycleState, pod: PodView,
                   ctx: ClusterContext) -> AffinityFilter | Status | None:
        terms = pod.affinity_terms
        if terms is not None and terms.error:
            return unresolvable(NAME, f"parsing pod: {terms.error}")
        namespaces = ctx.namespaces
        affinity = tuple(t.resolved(namespaces) for t in terms.required_affinity) if terms else ()
        anti = tuple(t.resolved(namespaces) for t in terms.required_anti) if terms else ()
        namespace_labels = ctx.namespace_labels(pod.namespace)
        existing = existing_anti_counts(pod, namespace_labels, ctx)
        if not existing and not affinity and not anti:
            return None
        affinity_counts, anti_counts = incoming_counts(affinity, anti, ctx)
        return AffinityFilter(pod, affinity, anti, namespace_labels, existing, affinity_counts,
                              anti_counts, ctx.label_column)

    def raw_scores(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
                   ctx: ClusterContext) -> list[int] | None:
        """PreScore and Score: each node's summed weights of its topology pairs (negative
        for anti-affinity); None when no existing pod contributes (Skip)."""
        if not nodes:
            return None
        terms = pod.affinity_terms
        if terms is not None and terms.error:
            raise PluginError(NAME, f"failed to parse pod: {terms.error}")
        preferred = terms.preferred_affinity if terms else ()
        preferred_anti = terms.preferred_anti if terms else ()
        if self.args.ignore_preferred_terms_of_existing_pods and not (preferred or preferred_anti):
            return None
        namespaces = ctx.namespaces
        scores = topology_score(pod, [t.resolved(namespaces) for t in preferred],
                                [t.resolved(namespaces) for t in preferred_anti],
                                self.args.hard_pod_affinity_weight, ctx)
        if scores is None:
            return None
        return affinity_raw_scores(scores, nodes)

    def normalize(self, raw: list[int], state: CycleState) -> list[int]:
        """NormalizeScore: min-max onto 0..100 (float), all equal 0."""
        return normalize_affinity(raw)

    def score(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
              ctx: ClusterContext) -> list[int] | None:
        raw = self.raw_scores(state, pod, nodes, ctx)
        return None if raw is None else self.normalize(raw, state)
