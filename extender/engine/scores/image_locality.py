"""ImageLocality: favour nodes that already hold the pod's (init and regular) images.

Each container whose normalised image the node holds adds the image size scaled by the share
of cluster nodes holding it (so a ubiquitous image does not pull every pod to one node); the
sum is clamped to [23 MiB, 1000 MiB × containers] and mapped onto 0..100.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from extender.engine.args import NoArgs
from extender.engine.framework import MAX_NODE_SCORE, ClusterContext
from extender.model.node import normalized_image_name
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

NAME = "ImageLocality"

MIB = 1024 * 1024
MIN_THRESHOLD = 23 * MIB
MAX_CONTAINER_THRESHOLD = 1000 * MIB


def calculate_priorities(sums: list[int], num_containers: int) -> list[int]:
    """Clamp each summed image score to [23 MiB, 1000 MiB × containers] and scale to 0..100."""
    low, high = MIN_THRESHOLD, MAX_CONTAINER_THRESHOLD * num_containers
    span = high - low
    if span <= 0:  # a pod without containers: nothing to pull
        return [0] * len(sums)
    # All terms are non-negative, so floor division is Go's.
    return [MAX_NODE_SCORE * ((s if s < high else high) - low) // span if s > low else 0
            for s in sums]


def spread(nodes_with_image: int, total_nodes: int) -> float:
    """The share of nodes holding an image (Go: float64(numNodes) / float64(totalNumNodes))."""
    return nodes_with_image / total_nodes


class ImageLocality:
    name = NAME

    def __init__(self, args: NoArgs | None = None) -> None:
        pass

    def score(self, pod: PodView, nodes: Sequence[NodeInfo], ctx: ClusterContext) -> list[int]:
        sums = [0] * len(nodes)
        if pod.images:
            # A candidate the context does not know (say, a node sent in the request body)
            # still counts, so the counts are at least 1; with a consistent snapshot they are.
            total = max(ctx.node_count(), 1)
            # Identical images count once per container, hence the multiplicity.
            for name, count in Counter(normalized_image_name(i) for i in pod.images).items():
                share = spread(min(max(ctx.image_node_count(name), 1), total), total)
                sizes = [n.node.images.get(name) for n in nodes]
                sums = [t if size is None else t + int(size * share) * count
                        for t, size in zip(sums, sizes, strict=True)]
        return calculate_priorities(sums, pod.num_containers)
