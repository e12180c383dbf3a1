"""NodeAffinity: `nodeSelector` AND the required node affinity terms (ORed)."""

from __future__ import annotations

from collections.abc import Mapping

from extender.engine.framework import NodeCheck, Status, unresolvable
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.model.selectors import NodeSelectorMatcher

NAME = "NodeAffinity"
REASON = "node(s) didn't match Pod's node affinity/selector"
REASON_PREFILTER = f"node(s) didn't satisfy plugin(s) [{NAME}]"
REASON_CONFLICT = "pod affinity terms conflict"


def prefilter_node_names(required: NodeSelectorMatcher | None) -> set[str] | None:
    """PreFilter's node-name restriction: when every term pins `metadata.name In`, the union
    of the names; otherwise None (no restriction)."""
    if required is None or not required.terms:
        return None
    if not all(term.name_in is not None for term in required.terms):
        return None
    return {term.name_in for term in required.terms if term.name_in is not None}


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

    def prepare(self, pod: PodView) -> NodeCheck | None:
        required = pod.required_affinity
        if not pod.node_selector and required is None:
            return None
        status = unresolvable(NAME, REASON)
        allowed_names = prefilter_node_names(required)
        if allowed_names is not None:
            if "\x00impossible" in allowed_names:
                allowed_names.discard("\x00impossible")
            if not allowed_names:
                conflict = unresolvable(NAME, REASON_CONFLICT)
                return lambda node: conflict
            outside = unresolvable(NAME, REASON_PREFILTER)

            def check_named(node: NodeInfo) -> Status | None:
                view = node.node
                if view.name not in allowed_names:
                    return outside
                return None if matches(pod, view.labels, view.name) else status

            return check_named

        if required is not None and required.uses_name:
            def check_direct(node: NodeInfo) -> Status | None:
                view = node.node
                return None if matches(pod, view.labels, view.name) else status

            return check_direct

        # Only labels matter: nodes that agree on the referenced keys share one evaluation.
        keys = tuple(sorted({*(pod.node_selector or ()), *(required.keys if required else ())}))
        verdicts: dict[tuple[str | None, ...], Status | None] = {}

        def check(node: NodeInfo) -> Status | None:
            labels = node.node.labels
            projection = tuple([labels.get(k) for k in keys])
            try:
                return verdicts[projection]
            except KeyError:
                verdict = None if matches(pod, labels, node.node.name) else status
                verdicts[projection] = verdict
                return verdict

        return check
