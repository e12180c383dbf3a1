"""Score normalisation (the Reduce step), with kube-scheduler's integer semantics."""

from __future__ import annotations

import numpy as np

from extender.engine.framework import MAX_NODE_SCORE


def go_div(a: int, b: int) -> int:
    """Go's int64 `a / b`: truncates toward zero, where Python's `//` floors."""
    q = a // b
    if q < 0 and q * b != a:
        q += 1
    return q


def default_normalize_score(max_priority: int, reverse: bool, scores: list[int]) -> list[int]:
    """`helper.DefaultNormalizeScore`: scale to `max × s / max(scores)`, optionally reversed.

    Scores are non-negative raw counts, so floor division is Go's here. When every score is 0
    the list stays 0, or becomes `max_priority` everywhere when reversed. Works in place and
    returns the list.
    """
    highest = max(scores, default=0)
    if highest <= 0:
        if reverse:
            scores[:] = [max_priority] * len(scores)
        return scores
    if reverse:
        scores[:] = [max_priority - max_priority * s // highest for s in scores]
    else:
        scores[:] = [max_priority * s // highest for s in scores]
    return scores


def normalize_rows(max_priority: int, reverse: bool, raw: np.ndarray) -> np.ndarray:
    """`default_normalize_score` on a numpy array of non-negative raw scores (a new array)."""
    highest = int(raw.max()) if len(raw) else 0
    if highest <= 0:
        return np.full(len(raw), max_priority, dtype=np.int64) if reverse else raw.copy()
    scaled = max_priority * raw // highest
    return max_priority - scaled if reverse else scaled  # type: ignore[no-any-return]


def min_max_normalize(scores: list[int]) -> list[int]:
    """Map [min, max] linearly onto [0, MAX_NODE_SCORE]; all equal gives 0 everywhere
    (scheduler-plugins' PodState NormalizeScore). Works in place and returns the list."""
    if not scores:
        return scores
    lowest, highest = min(scores), max(scores)
    spread = highest - lowest
    if spread == 0:
        scores[:] = [0] * len(scores)
    else:
        # s - lowest >= 0, so floor division is Go's.
        scores[:] = [(s - lowest) * MAX_NODE_SCORE // spread for s in scores]
    return scores
