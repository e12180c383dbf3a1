"""NodeAffinity (score): the summed weights of the preferred terms a node matches.

Normalised so the best-matching candidate gets 100. A pod without preferred terms skips the
plugin (PreScore Skip). Terms with weight 0 or an empty or invalid preference were dropped
when the pod was decoded (`PodView.preferred_affinity`); they can never add weight.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from extender.engine.args import NodeAffinityArgs
from extender.engine.filters.node_affinity import added_affinity
from extender.engine.framework import (
    MAX_NODE_SCORE,
    ClusterContext,
    CycleState,
    PluginError,
)
from extender.engine.nodetable import NodeTable
from extender.engine.scores.memo import memoised, score_key
from extender.engine.scores.normalize import default_normalize_score, normalize_rows
from extender.model.node import NodeView, Signature
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView, preferred_terms
from extender.model.selectors import NodeTermMatcher

NAME = "NodeAffinity"

PreferredTerms = Sequence[tuple[int, NodeTermMatcher]]


def preferred_sum(terms: PreferredTerms, view: NodeView) -> int:
    """The summed weights of the terms the node matches (by labels and `metadata.name`)."""
    labels, name = view.labels, view.name
    total = 0
    for weight, term in terms:
        if term.matches(labels, name):
            total += weight
    return total


class NodeAffinity:
    name = NAME

    def __init__(self, args: NodeAffinityArgs | None = None) -> None:
        added = added_affinity(args)
        preferred = added.preferred_during_scheduling_ignored_during_execution if added else None
        #: `addedAffinity`'s preferred terms, added to every pod's.
        self.added_terms = preferred_terms(added) if preferred else ()
        self.added_key = repr(args.added_affinity) if self.added_terms else ""  # type: ignore[union-attr]

    def raw_scores(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
                   ctx: ClusterContext) -> list[int] | None:
        """PreScore and Score: each node's summed weights of the matched preferred terms;
        None without any term (Skip)."""
        found = self._pre_score(pod)
        if found is None:
            return None
        terms, key = found
        return memoised(nodes, key, lambda view: preferred_sum(terms, view))

    def _pre_score(self, pod: PodView) -> tuple[PreferredTerms, Signature] | None:
        """The pod's and `addedAffinity`'s terms and their memo key; None: Skip."""
        if pod.preferred_affinity_error:
            raise PluginError(NAME, pod.preferred_affinity_error)
        terms = (*pod.preferred_affinity, *self.added_terms)
        if not terms:
            return None
        # The sum depends only on the node's labels and name and on the terms, which the
        # pod's `preferred_affinity_key` names: a workload's pods reuse each node's sum.
        return terms, score_key(NAME, pod.preferred_affinity_key, self.added_key)

    def score_rows(self, state: CycleState, pod: PodView, table: NodeTable, rows: np.ndarray,
                   ctx: ClusterContext) -> np.ndarray | None:
        """`score` over table rows: the sum memoised per row, normalised in numpy."""
        found = self._pre_score(pod)
        if found is None:
            return None
        terms, key = found
        raw, _ = table.memoised(key, rows, lambda info, memo: preferred_sum(terms, info.node))
        return normalize_rows(MAX_NODE_SCORE, False, raw)

    def normalize(self, raw: list[int], state: CycleState) -> list[int]:
        """NormalizeScore: the highest sum 100 (in place)."""
        return default_normalize_score(MAX_NODE_SCORE, False, raw)

    def score(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
              ctx: ClusterContext) -> list[int] | None:
        raw = self.raw_scores(state, pod, nodes, ctx)
        return None if raw is None else self.normalize(raw, state)
