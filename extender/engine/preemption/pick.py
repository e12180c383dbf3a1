"""`pickOneNodeForPreemption`: the candidate node whose eviction hurts least."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from extender.engine.preemption.ordering import earliest_start_of_highest
from extender.engine.preemption.victims import Victims

#: Added to every victim's priority before summing, so negative priorities still add cost
#: (a node with a few negative-priority victims is not preferred over one with fewer).
PRIORITY_OFFSET = 1 << 31


def _criteria(now: float) -> tuple[Callable[[Victims], float], ...]:
    """Upstream's score functions in order; each is maximised."""
    return (
        lambda v: -v.num_pdb_violations,
        lambda v: -max(p.priority for p in v.pods),  # upstream reads Pods[0]; victims are sorted
        lambda v: -sum(p.priority + PRIORITY_OFFSET for p in v.pods),
        lambda v: -len(v.pods),
        lambda v: earliest_start_of_highest(v.pods, now),
    )


def pick_one_node_for_preemption(candidates: Mapping[str, Victims], now: float) -> str | None:
    """The best node of `candidates` (node -> victims), or None when there is none.

    Each criterion keeps only the nodes with the best value and the first criterion that leaves
    one node decides: fewest PDB violations; lowest highest-victim priority; lowest sum of
    priorities (offset by 2^31); fewest victims; latest start among the highest-priority
    victims (a missing start time counts as `now`). Remaining ties go to the first node in
    `candidates` order (upstream: Go map order, i.e. arbitrary). A node needing no victims at
    all wins outright, as in kube-scheduler 1.8 (the dry run never produces one).
    """
    if not candidates:
        return None
    for node, victims in candidates.items():
        if not victims.pods:
            return node
    remaining = list(candidates)
    for score in _criteria(now):
        scores = {node: score(candidates[node]) for node in remaining}
        best = max(scores.values())
        remaining = [node for node in remaining if scores[node] == best]
        if len(remaining) == 1:
            break
    return remaining[0]
