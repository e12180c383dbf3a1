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


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """Clamp the summed image score to the thresholds and scale it to 0..100."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    span = max_threshold - MIN_THRESHOLD
    if span <= 0:  # a pod without containers: nothing to pull
        return 0
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // span


def spread(nodes_with_image: int, total_nodes: int) -> float:
    """The share of nodes holding an image (Go: float64(numNodes) / float64(totalNumNodes))."""
    return nodes_with_image / total_nodes


class ImageLocality:
    name = NAME

    def __init__(self, args: NoArgs | None = None) -> None:
        pass

    def score(self, pod: PodView, nodes: Sequence[NodeInfo], ctx: ClusterContext) -> list[int]:
        num_containers = pod.num_containers
        if not pod.images:
            return [calculate_priority(0, num_containers)] * len(nodes)
        # A candidate the context does not know (say, a node sent in the request body) still
        # counts, so the totals are at least 1; with a consistent snapshot they always are.
        total = max(ctx.node_count(), 1)
        # Identical images count once per container: (name, spread, containers using it).
        uses = Counter(normalized_image_name(image) for image in pod.images)
        images = tuple(
            (name, spread(min(max(ctx.image_node_count(name), 1), total), total), count)
            for name, count in uses.items()
        )
        scores = []
        append = scores.append
        for node in nodes:
            held = node.node.images
            total_score = 0
            for name, share, count in images:
                size = held.get(name)
                if size is not None:
                    total_score += int(size * share) * count
            append(calculate_priority(total_score, num_containers))
        return scores
