"""NodeAffinity (score): the summed weights of the preferred terms a node matches.

Normalised so the best-matching candidate gets 100. A pod without preferred terms skips the
plugin (PreScore Skip). Terms with weight 0 or an empty or invalid preference were dropped
when the pod was decoded (`PodView.preferred_affinity`); they can never add weight.
"""

from __future__ import annotations

from collections.abc import Sequence

from extender.engine.args import NoArgs
from extender.engine.framework import MAX_NODE_SCORE, ClusterContext
from extender.engine.scores.normalize import default_normalize_score
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

NAME = "NodeAffinity"


class NodeAffinity:
    name = NAME

    def __init__(self, args: NoArgs | None = None) -> None:
        pass

    def score(self, pod: PodView, nodes: Sequence[NodeInfo],
              ctx: ClusterContext) -> list[int] | None:
        terms = pod.preferred_affinity
        if not terms:
            return None
        raw = []
        append = raw.append
        for node in nodes:
            view = node.node
            labels, name = view.labels, view.name
            total = 0
            for weight, term in terms:
                if term.matches(labels, name):
                    total += weight
            append(total)
        return default_normalize_score(MAX_NODE_SCORE, False, raw)
