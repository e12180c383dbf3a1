"""The nominator: pods that preemption nominated to a node, waiting for their victims to go.

Mirrors kube-scheduler's `nominator` (`nominatedPods: node -> [pods]`,
`nominatedPodToNode: uid -> node`). Filters read it through `nominated_pods_for_node` to
reserve room on the node for higher-or-equal-priority nominated pods (reference §A.0 step 4).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Pod = Any  # anything with uid, namespace, name, priority (and optionally nominated_node_name)


def nominated_node_name(pod: Pod) -> str:
    """`pod.status.nominatedNodeName`, or "" for objects that do not carry it."""
    return getattr(pod, "nominated_node_name", "") or ""


class Nominator:
    """node name -> nominated pods (in nomination order) and pod uid -> node name."""

    def __init__(self, pod_alive: Callable[[Pod], bool] | None = None,
                 on_change: Callable[[str], None] | None = None) -> None:
        # Upstream checks the pod lister before nominating: a pod that is gone or already
        # bound is not nominated. `pod_alive` plays the lister's part; None accepts all.
        self._pod_alive = pod_alive
        #: Told the node whose nominated pods changed (`changes.NodeChanges.node`); not told
        #: when a pod is nominated again, unchanged, to the same node (only the order moves,
        #: which no node-local verdict reads).
        self.on_change = on_change
        self._by_node: dict[str, list[Pod]] = {}
        self._node_of: dict[str, str] = {}

    def add(self, pod: Pod, node_name: str | None = None) -> None:
        """AddNominatedPod. `node_name` None is upstream's ModeNoop (keep the pod's own
        `nominated_node_name`); a string is ModeOverride ("" clears the nomination)."""
        self._put(pod, node_name, *self._remove(pod))

    def _put(self, pod: Pod, node_name: str | None, old_node: str, old_pod: Pod | None) -> None:
        """`add` once the pod's old nomination (`old_node`, held by `old_pod`) is removed."""
        node = nominated_node_name(pod) if node_name is None else node_name
        if node and (self._pod_alive is None or self._pod_alive(pod)):
            self._node_of[pod.uid] = node
            self._by_node.setdefault(node, []).append(pod)
        else:
            node = ""
        if self.on_change is not None and (old_node != node or old_pod is not pod):
            for changed in {old_node, node} - {""}:
                self.on_change(changed)

    def delete(self, pod: Pod) -> None:
        """DeleteNominatedPodIfExists."""
        node, _ = self._remove(pod)
        if node and self.on_change is not None:
            self.on_change(node)

    def _remove(self, pod: Pod) -> tuple[str, Pod | None]:
        """Forget the pod's nomination; returns its node ("" if none) and the pod it held."""
        node = self._node_of.pop(pod.uid, None)
        if node is None:
            return "", None
        pods = self._by_node[node]
        removed = None
        for i, nominated in enumerate(pods):
            if nominated.uid == pod.uid:
                removed = pods.pop(i)
                break
        if not pods:
            del self._by_node[node]
        return node, removed

    def update(self, old_pod: Pod, new_pod: Pod) -> None:
        """UpdateNominatedPod: keep an in-memory nomination when an update arrives that carries
        no nominatedNodeName on either side (the API write may not have landed yet)."""
        override: str | None = None
        if not nominated_node_name(old_pod) and not nominated_node_name(new_pod):
            override = self._node_of.get(old_pod.uid)
        self._put(new_pod, override, *self._remove(old_pod))

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]:
        """A copy of the pods nominated to `node_name`, in nomination order."""
        return list(self._by_node.get(node_name, ()))

    @property
    def by_node(self) -> Mapping[str, list[Pod]]:
        """node -> nominated pods, read-only (no copies: for hot loops that mostly find none)."""
        return self._by_node

    def nominated_node(self, pod: Pod) -> str | None:
        return self._node_of.get(pod.uid)

    def nodes(self) -> list[str]:
        """Nodes with at least one nominated pod, sorted."""
        return sorted(self._by_node)

    def __len__(self) -> int:
        return len(self._node_of)

    def __contains__(self, pod: object) -> bool:
        return getattr(pod, "uid", None) in self._node_of
