"""NodeAffinity: `nodeSelector` AND the required node affinity terms (ORed)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from extender.engine.framework import BatchCheck, NodeCheck, Status, unresolvable
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

NAME = "NodeAffinity"
REASON = "node(s) didn't match Pod's node affinity/selector"
REASON_PREFILTER = f"node(s) didn't satisfy plugin(s) [{NAME}]"
REASON_CONFLICT = "pod affinity terms conflict"


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
    #: The verdict depends only on the node view and the pod's `placement_key`.
    node_only = True

    def pre_filter(self, pod: PodView) -> NodeCheck | None:
        """PreFilter's node-name restriction, judged before any plugin's Filter: nodes outside
        it are rejected as kube-scheduler rejects nodes a PreFilterResult leaves out."""
        allowed = pod.affinity_node_names
        if allowed is None:
            return None
        if not allowed:
            conflict = unresolvable(NAME, REASON_CONFLICT)
            return lambda node: conflict
        outside = unresolvable(NAME, REASON_PREFILTER)
        return lambda node: None if node.node.name in allowed else outside

    def prepare(self, pod: PodView) -> NodeCheck | None:
        required = pod.required_affinity
        if not pod.node_selector and required is None:
            return None
        status = unresolvable(NAME, REASON)
        if required is not None and required.uses_name:
            def check_direct(node: NodeInfo) -> Status | None:
                view = node.node
                return None if matches(pod, view.labels, view.name) else status

            return check_direct

        keys = tuple(sorted({*(pod.node_selector or ()), *(required.keys if required else ())}))
        return _LabelCheck(pod, keys, status)


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
        missing = object()
        kept = []
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
