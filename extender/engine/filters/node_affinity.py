"""NodeAffinity: `nodeSelector` AND the required node affinity terms (ORed)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Final

from extender.engine.args import NodeAffinityArgs
from extender.engine.framework import BatchCheck, NodeCheck, Status, unresolvable
from extender.model import k8s
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.model.selectors import NodeSelectorMatcher

NAME = "NodeAffinity"
REASON = "node(s) didn't match Pod's node affinity/selector"
REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
REASON_PREFILTER = f"node(s) didn't satisfy plugin(s) [{NAME}]"
REASON_CONFLICT = "pod affinity terms conflict"


def added_affinity(args: NodeAffinityArgs | None) -> k8s.NodeAffinity | None:
    """The policy's `addedAffinity`, typed (validated when the policy was parsed)."""
    if args is None or args.added_affinity is None:
        return None
    return k8s.convert(args.added_affinity, k8s.NodeAffinity)


def matches(pod: PodView, labels: Mapping[str, str], name: str) -> bool:
    selector = pod.node_selector
    if selector:
        for key, value in selector.items():
            if labels.get(key) != value:
                return False
    required = pod.required_affinity
    return required is None or required.matches(labels, name)


class NodeAffinity:
    name = NAME

    def __init__(self, args: NodeAffinityArgs | None = None) -> None:
        added = added_affinity(args)
        required = added.required_during_scheduling_ignored_during_execution if added else None
        #: `addedAffinity`'s required terms, which every pod must also match.
        self.enforced = NodeSelectorMatcher(required) if required is not None else None
        # The enforced terms are part of what a memoised verdict depends on.
        self.memo_label = NAME if self.enforced is None else f"{NAME}{args.added_affinity!r}"  # type: ignore[union-attr]

    def restrict(self, pod: PodView) -> NodeCheck | Status | None:
        """PreFilter's node-name restriction, judged before any plugin's Filter: nodes outside
        it are rejected as kube-scheduler rejects nodes a PreFilterResult leaves out."""
        allowed = pod.affinity_node_names
        if allowed is None:
            return None
        if not allowed:  # a PreFilter rejection: no node can match
            return unresolvable(NAME, REASON_CONFLICT)
        outside = unresolvable(NAME, REASON_PREFILTER)
        return lambda node: None if node.node.name in allowed else outside

    def prepare(self, pod: PodView) -> NodeCheck | None:
        required = pod.required_affinity
        enforced = self.enforced
        if not pod.node_selector and required is None and enforced is None:
            return None
        status = unresolvable(NAME, REASON)
        if enforced is not None:
            enforced_status = unresolvable(NAME, REASON_ENFORCED)

            def check_enforced(node: NodeInfo) -> Status | None:
                view = node.node
                if not enforced.matches(view.labels, view.name):
                    return enforced_status
                return None if matches(pod, view.labels, view.name) else status

            return check_enforced
        if required is not None and required.uses_name:
            def check_direct(node: NodeInfo) -> Status | None:
                view = node.node
                return None if matches(pod, view.labels, view.name) else status

            return check_direct

        keys = tuple(sorted({*(pod.node_selector or ()), *(required.keys if required else ())}))
        return _LabelCheck(pod, keys, status)


class _Unjudged(Enum):
    """`dict.get`'s default for a projection not judged yet: a sentinel no verdict (a Status
    or None) can be, which the type checker tells apart from the verdicts."""

    UNJUDGED = 0


_UNJUDGED: Final = _Unjudged.UNJUDGED


class _LabelCheck(BatchCheck):
    """Only labels matter: nodes that agree on the referenced keys share one evaluation."""

    __slots__ = ("pod", "keys", "status", "verdicts")

    def __init__(self, pod: PodView, keys: tuple[str, ...], status: Status) -> None:
        self.pod, self.keys, self.status = pod, keys, status
        self.verdicts: dict[object, Status | None] = {}

    def _judge(self, projection: object, node: NodeInfo) -> Status | None:
        verdict = None if matches(self.pod, node.node.labels, node.node.name) else self.status
        self.verdicts[projection] = verdict
        return verdict

    def _projection(self, labels: Mapping[str, str]) -> object:
        keys = self.keys
        return labels.get(keys[0]) if len(keys) == 1 else tuple([labels.get(k) for k in keys])

    def __call__(self, node: NodeInfo) -> Status | None:
        projection = self._projection(node.node.labels)
        if projection in self.verdicts:
            return self.verdicts[projection]
        return self._judge(projection, node)

    def filter_many(self, nodes: Sequence[NodeInfo], statuses: dict[str, Status]) -> list[NodeInfo]:
        if len(self.keys) != 1:
            return super().filter_many(nodes, statuses)
        key = self.keys[0]
        verdicts = self.verdicts
        missing: Final = _UNJUDGED
        kept: list[NodeInfo] = []
        for node in nodes:
            value = node.node.labels.get(key)
            verdict = verdicts.get(value, missing)
            if verdict is missing:
                verdict = self._judge(value, node)
            if verdict is None:
                kept.append(node)
            else:
                statuses[node.node.name] = verdict
        return kept
