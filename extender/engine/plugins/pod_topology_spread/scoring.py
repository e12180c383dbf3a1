"""PreScore and Score (`spread_raw_scores`), NormalizeScore (`normalize_spread`): fewer matching
pods in a node's domains score higher."""

from __future__ import annotations

import math
from collections.abc import Sequence

from extender.engine.framework import MAX_NODE_SCORE, ClusterContext
from extender.engine.plugins.pod_topology_spread.common import (
    HOSTNAME,
    Constraint,
    count_matching,
    counts_by_node,
    has_all_keys,
    included,
)
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView


def go_round(value: float) -> int:
    """Go's math.Round: half away from zero."""
    whole = math.trunc(value)
    if abs(value - whole) >= 0.5:  # exact: no x + 0.5 rounding (0.49999999999999994 stays 0)
        whole += 1 if value > 0 else -1
    return int(whole)


def spread_raw_scores(pod: PodView, constraints: list[Constraint], nodes: Sequence[NodeInfo],
                      ctx: ClusterContext, require_all: bool) -> tuple[list[int], list[bool]]:
    """Score per candidate in `nodes`, and which candidates PreScore ignores (a node missing
    a required topology key: it scores 0 and NormalizeScore leaves it out)."""
    ignored = [require_all and not has_all_keys(n.node.labels, constraints) for n in nodes]
    pair_counts: list[dict[str, int]] = [{} for _ in constraints]
    for node, skip in zip(nodes, ignored, strict=True):
        if skip:
            continue
        labels = node.node.labels
        for i, c in enumerate(constraints):
            if c.topology_key != HOSTNAME:
                pair_counts[i].setdefault(labels.get(c.topology_key, ""), 0)
    kept = len(nodes) - sum(ignored)
    weights = [math.log((kept if c.topology_key == HOSTNAME else len(pair_counts[i])) + 2)
               for i, c in enumerate(constraints)]
    # Domains count pods on every node of the cluster, not only on the candidates.
    all_nodes = ctx.nodes
    for i, c in enumerate(constraints):
        if c.topology_key == HOSTNAME or not pair_counts[i]:
            continue
        for node_name, num in counts_by_node(ctx, c.selector, pod.namespace).items():
            info = all_nodes.get(node_name)
            if info is None:
                continue
            view = info.node
            if require_all and not has_all_keys(view.labels, constraints):
                continue
            if not included(c, pod, view):
                continue
            value = view.labels.get(c.topology_key, "")
            if value in pair_counts[i]:
                pair_counts[i][value] += num
    raw: list[int] = []
    for node, skip in zip(nodes, ignored, strict=True):
        if skip:
            raw.append(0)
            continue
        labels = node.node.labels
        score = 0.0
        for i, c in enumerate(constraints):
            own = labels.get(c.topology_key)
            if own is None:
                continue
            if c.topology_key == HOSTNAME:
                count = count_matching(node.pods, c.selector, pod.namespace)
            else:
                count = pair_counts[i][own]
            score += count * weights[i] + (c.max_skew - 1)
        raw.append(go_round(score))
    return raw, ignored


def normalize_spread(raw: list[int], ignored: Sequence[bool]) -> list[int]:
    """NormalizeScore: the fewest matching pods 100, relative to the highest score; the
    ignored candidates 0 and out of the minimum and maximum."""
    valid = [s for s, skip in zip(raw, ignored, strict=True) if not skip]
    low = min(valid) if valid else 2**63 - 1
    high = max([0, *valid])
    out = []
    for score, skip in zip(raw, ignored, strict=True):
        if skip:
            out.append(0)
        elif high == 0:
            out.append(MAX_NODE_SCORE)
        else:
            out.append(MAX_NODE_SCORE * (high + low - score) // high)
    return out
