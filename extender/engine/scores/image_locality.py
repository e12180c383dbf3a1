"""ImageLocality: favour nodes that already hold the pod's (init and regular) images.

Each container whose normalised image the node holds adds the image size scaled by the share
of cluster nodes holding it (so a ubiquitous image does not pull every pod to one node); the
sum is clamped to [23 MiB, 1000 MiB × containers] and mapped onto 0..100.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from extender.engine.args import NoArgs
from extender.engine.framework import (
    MAX_NODE_SCORE,
    ClusterContext,
    CycleState,
    ScoredAsIs,
)
from extender.engine.nodetable import NodeTable
from extender.engine.scores.memo import memoised, score_key
from extender.model.node import NodeView, normalized_image_name
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


def held_sizes(view: NodeView, images: tuple[str, ...]) -> tuple[int | None, ...]:
    """The node's size of each of `images` (None where it lacks one), or () when it holds
    none of them: the common case, kept falsy so that scoring skips it."""
    sizes = tuple(map(view.images.get, images))
    return sizes if sizes.count(None) < len(sizes) else ()


class ImageLocality(ScoredAsIs):
    name = NAME

    def __init__(self, args: NoArgs | None = None) -> None:
        pass


    def score(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo], ctx: ClusterContext) -> list[int]:
        if not pod.images:
            return calculate_priorities([0] * len(nodes), pod.num_containers)
        # Identical images count once per container, hence the multiplicity.
        counts = Counter(normalized_image_name(i) for i in pod.images)
        images = tuple(counts)
        # Which of the images a node holds depends only on its view; the shares below depend
        # on the whole cluster, so they are worked out per request, once per image.
        key = score_key(NAME, images)
        held = memoised(nodes, key, lambda view: held_sizes(view, images))
        weights = tuple(zip(self.shares(images, ctx), counts.values(), strict=True))
        # Score each distinct combination of sizes once: nodes often hold equal images. A node
        # holding none sums to 0, below the threshold: it scores 0.
        distinct = list({sizes for sizes in held if sizes})
        sums = [scaled_sum(sizes, weights) for sizes in distinct]
        priorities = dict(zip(distinct, calculate_priorities(sums, pod.num_containers), strict=True))
        return [priorities[sizes] if sizes else 0 for sizes in held]

    def score_rows(self, state: CycleState, pod: PodView, table: NodeTable, rows: np.ndarray,
                   ctx: ClusterContext) -> np.ndarray:
        """`score` over table rows: which images each row holds is memoised as a code for
        the tuple of sizes; each distinct tuple is scored once."""
        if not pod.images:
            return np.zeros(len(rows), dtype=np.int64)
        counts = Counter(normalized_image_name(i) for i in pod.images)
        images = tuple(counts)
        codes, memo = table.memoised(
            score_key(NAME, images), rows,
            lambda info, memo: memo.code(held_sizes(info.node, images)), empty=())
        distinct = [code for code in np.unique(codes).tolist() if code]
        lookup = np.zeros(len(memo.objects), dtype=np.int64)
        if distinct:
            weights = tuple(zip(self.shares(images, ctx), counts.values(), strict=True))
            sums = [scaled_sum(memo.objects[code], weights) for code in distinct]
            lookup[distinct] = calculate_priorities(sums, pod.num_containers)
        return lookup[codes]  # type: ignore[no-any-return]

    @staticmethod
    def shares(images: Sequence[str], ctx: ClusterContext) -> list[float]:
        """Each image's spread over the cluster."""
        # A candidate the context does not know (say, a node sent in the request body)
        # still counts, so the counts are at least 1; with a consistent snapshot they are.
        total = max(ctx.node_count(), 1)
        return [spread(min(max(ctx.image_node_count(name), 1), total), total) for name in images]


def scaled_sum(sizes: Sequence[int | None], weights: Sequence[tuple[float, int]]) -> int:
    """Σ int(size × share) × multiplicity over the images the node holds."""
    total = 0
    for size, (share, count) in zip(sizes, weights, strict=True):
        if size is not None:
            total += int(size * share) * count
    return total
