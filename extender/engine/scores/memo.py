"""Per-node-view memos for the scorers' node-only parts.

Some raw scores depend only on the node's view and a few parts of the pod's spec: the
preferred-affinity sum, the count of untolerated PreferNoSchedule taints, which of the pod's
images the node holds. Pods of one workload share those parts, so the value is computed once
per node view and pod `Signature` and read back by later requests. The state replaces a node's
view whenever the node changes, so an entry can never describe an old version of the node.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from extender.model.node import NodeView, Signature, signature
from extender.model.nodeinfo import NodeInfo

T = TypeVar("T")

_MISSING = object()


def score_key(plugin: str, *parts: object) -> Signature:
    """The memo key for a scorer's per-node value: `parts` must capture everything of the pod
    (and of the plugin's configuration) that the value depends on. The "score" prefix and the
    plugin's name keep it apart from other users of the views' memos (the filters')."""
    return signature("score", plugin, *parts)


def memoised(nodes: Sequence[NodeInfo], key: Signature, compute: Callable[[NodeView], T]) -> list[T]:
    """`compute(view)` for every node's view, memoised in the view under `key`.

    `key` must capture everything `compute` reads of the pod; `compute` must read nothing of
    the node but its view (not its pods, which change without a new view)."""
    values: list = [info.node.memo.get(key, _MISSING) for info in nodes]
    if _MISSING in values:  # a new workload, or views the state has not seen
        for i, value in enumerate(values):
            if value is _MISSING:
                view = nodes[i].node
                values[i] = view.remember(key, compute(view))
    return values
