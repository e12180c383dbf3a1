"""The nominated pods' room on each node, kept from one pod's filter pass to the next.

`RunFilterPluginsWithNominatedPods` (`engine.preemption.victims.fits_with_nominated`) judges a
node with nominated pods twice: on a copy of the node with the nominated pods of priority at
least the pod's added, then on the node as it is. With node-local filters
(`filtermemo.node_local`: no cross-node state to add the pods to), the copy depends only on the
node and on which nominated pods are ahead, not on the pod being scheduled; in a saturated
cluster hundreds of nodes carry nominations and every pod's pass used to copy each of them.
Here the copies live until their node changes (`changes.NodeChanges`, which hears nomination
changes too), and the node-as-is verdict comes from the pass over every node. The statuses are
`fits_with_nominated`'s: the first pass's failure, else the node-as-is verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from extender.engine.framework import ClusterContext, Status
from extender.engine.preemption.victims import nominated_ahead
from extender.engine.profile import Profile
from extender.engine.runner import FilterPass, run_filters
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.simulator.changes import NodeChanges

#: node -> (stamp it was taken at, the node's info then, priority -> the node with the pods
#: ahead of a pod of that priority added, or None when none is)
_Copies = dict[str, tuple[int, NodeInfo, dict[int, NodeInfo | None]]]


class Reservations:
    """Copies of nodes with their nominated pods added, while the node does not change."""

    __slots__ = ("changes", "_copies")

    def __init__(self, changes: NodeChanges) -> None:
        self.changes = changes
        self._copies: _Copies = {}

    def reserved(self, node: NodeInfo, nominated: Sequence[PodView], pod: PodView,
                 own: bool) -> NodeInfo | None:
        """`node` with the nominated pods ahead of `pod` added (as `fits_with_nominated`
        builds it), or None when none is ahead. Which are ahead depends on the pod's priority
        only, unless it is nominated to this node itself (`own`: it does not count its own
        reservation); so the copy is shared by the pods of a priority, and never changed."""
        if own:
            return _with(node, nominated_ahead(pod, nominated))
        name = node.node.name
        entry = self._copies.get(name)
        if entry is None or entry[1] is not node or self.changes.last_change(name) > entry[0]:
            entry = (self.changes.stamp, node, {})
            self._copies[name] = entry
        by_priority = entry[2]
        priority = pod.priority
        if priority in by_priority:
            return by_priority[priority]
        copy = by_priority[priority] = _with(node, nominated_ahead(pod, nominated))
        return copy

    def judge(self, profile: Profile, filters: FilterPass, pod: PodView,
              statuses: dict[str, Status], nominated_by_node: Mapping[str, Sequence[PodView]],
              by_name: Mapping[str, NodeInfo], ctx: ClusterContext | None,
              own_node: str | None) -> None:
        """Turn `statuses` (the node-as-is pass over the nodes of `by_name`) into the
        nominated-pods verdicts, for a node-local pass. `own_node`: where the pod itself is
        nominated (None: nowhere)."""
        copies = []
        # A few changed nodes, or every node: walk the smaller side.
        names = by_name if len(by_name) < len(nominated_by_node) else nominated_by_node
        for name in names:
            nominated = nominated_by_node.get(name)
            node = by_name.get(name)
            if nominated is None or node is None:
                continue
            copy = self.reserved(node, nominated, pod, name == own_node)
            if copy is not None:  # otherwise only the second pass runs: the node as it is
                copies.append(copy)
        if copies:
            # A copy keeps its node's view, so the node-only verdicts come from its memo.
            statuses.update(run_filters(profile, pod, copies, ctx, filters).statuses)


def _with(node: NodeInfo, ahead: Sequence[PodView]) -> NodeInfo | None:
    if not ahead:
        return None
    copy = node.clone()
    for pod in ahead:
        copy.add_pod(pod)
    return copy
