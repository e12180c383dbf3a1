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

A copy is judged again by pod after pod while its node does not change. When a pass is the
node-only checks then NodeResourcesFit (`victimsums.fit_only`), its verdict on a copy depends
on what `fit_only_key` names of the pod, so each copy keeps its verdicts under that key.
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
from extender.simulator.victimsums import fit_only_key

#: node -> (the node's info when taken, priority -> the node with the pods ahead of a pod
#: of that priority added, or None when none is; (priority, `fit_only_key`) -> the first
#: pass's verdict on that copy); an entry goes when its node changes (`NodeChanges.watch`)
_Entry = tuple[NodeInfo, dict[int, NodeInfo | None], dict[tuple[int, object], Status | None]]
_MISSING = object()


class Reservations:
    """Copies of nodes with their nominated pods added, while the node does not change."""

    __slots__ = ("changes", "_copies")

    def __init__(self, changes: NodeChanges) -> None:
        self.changes = changes
        self._copies: dict[str, _Entry] = {}
        changes.watch(self._copies)

    def _entry(self, node: NodeInfo) -> _Entry:
        name = node.node.name
        entry = self._copies.get(name)
        if entry is None or entry[0] is not node:
            entry = self._copies[name] = (node, {}, {})
        return entry

    @staticmethod
    def _copy(entry: _Entry, node: NodeInfo, nominated: Sequence[PodView],
              pod: PodView) -> NodeInfo | None:
        """`node` with the nominated pods ahead of `pod` added (as `fits_with_nominated`
        builds it), or None when none is ahead. Which are ahead depends on the pod's priority
        only, unless it is nominated to this node itself (which `judge` copies apart: it does
        not count its own reservation); so the copy is shared by the pods of a priority, and
        never changed."""
        by_priority = entry[1]
        priority = pod.priority
        copy = by_priority.get(priority, _MISSING)
        if copy is _MISSING:
            copy = by_priority[priority] = _with(node, nominated_ahead(pod, nominated))
        return copy  # type: ignore[return-value]  # not _MISSING any more

    def judge(self, profile: Profile, filters: FilterPass, pod: PodView,
              statuses: dict[str, Status], nominated_by_node: Mapping[str, Sequence[PodView]],
              by_name: Mapping[str, NodeInfo], ctx: ClusterContext | None,
              own_node: str | None) -> None:
        """Turn `statuses` (the node-as-is pass over the nodes of `by_name`) into the
        nominated-pods verdicts, for a node-local pass. `own_node`: where the pod itself is
        nominated (None: nowhere)."""
        copies: list[NodeInfo] = []
        kept: list[dict[tuple[int, object], Status | None] | None] = []
        shape = fit_only_key(filters, pod)
        key = (pod.priority, shape)
        copies_get, missing = self._copies.get, _MISSING
        # A few changed nodes, or every node: walk the smaller side.
        names = by_name if len(by_name) < len(nominated_by_node) else nominated_by_node
        nominated_get, node_get = nominated_by_node.get, by_name.get
        for name in names:
            nominated = nominated_get(name)
            node = node_get(name)
            if nominated is None or node is None:
                continue
            if name == own_node:
                copy = _with(node, nominated_ahead(pod, nominated))
                if copy is not None:
                    copies.append(copy)
                    kept.append(None)
                continue
            entry = copies_get(name)
            if entry is None or entry[0] is not node:
                entry = self._entry(node)
            verdicts = entry[2]
            if shape is not None:
                found = verdicts.get(key, missing)
                if found is not missing:
                    if found is not None:
                        statuses[name] = found  # type: ignore[assignment]
                    continue
            copy = self._copy(entry, node, nominated, pod)
            if copy is None:  # nothing ahead: only the second pass, the node as it is
                if shape is not None:
                    verdicts[key] = None
                continue
            copies.append(copy)
            kept.append(verdicts if shape is not None else None)
        if copies:
            # A copy keeps its node's view, so the node-only verdicts come from its memo.
            judged = run_filters(profile, pod, copies, ctx, filters).statuses
            statuses.update(judged)
            for copy, keep in zip(copies, kept, strict=True):
                if keep is not None:
                    keep[key] = judged.get(copy.node.name)


def _with(node: NodeInfo, ahead: Sequence[PodView]) -> NodeInfo | None:
    if not ahead:
        return None
    copy = node.clone()
    for pod in ahead:
        copy.add_pod(pod)
    return copy
