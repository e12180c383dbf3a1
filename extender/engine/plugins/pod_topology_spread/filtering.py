"""PreFilter and Filter: per constraint, matching pods per topology domain over ALL nodes, the
two smallest domains (critical paths), and the skew check per node."""

from __future__ import annotations

from collections.abc import Sequence

from extender.engine.framework import (
    ClusterContext,
    ProjectedFilterState,
    Status,
    unresolvable,
    unschedulable,
)
from extender.engine.plugins.pod_topology_spread.common import (
    NAME,
    REASON_CONSTRAINTS_NOT_MATCH,
    REASON_NODE_LABEL_NOT_MATCH,
    Constraint,
    counts_by_node,
    has_all_keys,
    included,
)
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

_MAX_INT32 = 2**31 - 1
_LABEL_MISSING = unresolvable(NAME, REASON_NODE_LABEL_NOT_MATCH)
_SKEW = unschedulable(NAME, REASON_CONSTRAINTS_NOT_MATCH)


class CriticalPaths:
    """The two domains with the fewest matching pods, updated as kube-scheduler updates them
    (`criticalPaths.update`: only the two tracked entries are known, so after AddPod the
    minimum can be stale exactly as upstream's is)."""

    __slots__ = ("values", "nums")

    def __init__(self) -> None:
        self.values = ["", ""]
        self.nums = [_MAX_INT32, _MAX_INT32]

    def update(self, value: str, num: int) -> None:
        values, nums = self.values, self.nums
        i = 0 if value == values[0] else 1 if value == values[1] else -1
        if i >= 0:
            nums[i] = num
            if nums[0] > nums[1]:
                values.reverse()
                nums.reverse()
        elif num < nums[0]:
            values[1], nums[1] = values[0], nums[0]
            values[0], nums[0] = value, num
        elif num < nums[1]:
            values[1], nums[1] = value, num

    def copy(self) -> CriticalPaths:
        clone = CriticalPaths.__new__(CriticalPaths)
        clone.values, clone.nums = list(self.values), list(self.nums)
        return clone


Domains = tuple[dict[str, tuple[str | None, ...]], tuple[frozenset[str], ...]]


def eligible_domains(pod: PodView, constraints: Sequence[Constraint],
                     ctx: ClusterContext) -> Domains:
    """(node name -> per constraint its topology value, or None when the inclusion policies
    leave the node out; per constraint the set of those values), over the nodes carrying every
    constraint's key. Depends only on the nodes and on the pod's placement, so it is
    remembered until a node changes."""
    key = ("PodTopologySpread/domains", tuple((c.topology_key, c.honor_affinity, c.honor_taints)
                                             for c in constraints),
           pod.placement_key if any(c.honor_affinity or c.honor_taints for c in constraints) else b"")

    def compute() -> Domains:
        by_node: dict[str, tuple[str | None, ...]] = {}
        for name, info in ctx.nodes.items():
            view = info.node
            labels = view.labels
            if not has_all_keys(labels, constraints):
                continue
            by_node[name] = tuple(labels[c.topology_key] if included(c, pod, view) else None
                                  for c in constraints)
        values = tuple(frozenset(v[i] for v in by_node.values() if v[i] is not None)
                       for i in range(len(constraints)))
        return by_node, values  # type: ignore[return-value]

    return ctx.node_memo(key, compute)


class SpreadFilter(ProjectedFilterState):
    """`preFilterState`: matching pods per topology value for each constraint."""

    __slots__ = ("pod", "constraints", "counts", "paths", "self_match", "keys", "verdicts", "column")

    def __init__(self, pod: PodView, constraints: list[Constraint],
                 counts: list[dict[str, int]]) -> None:
        self.pod = pod
        self.constraints = constraints
        self.counts = counts
        self.paths = []
        for per_value in counts:
            paths = CriticalPaths()
            for value, num in per_value.items():
                paths.update(value, num)
            self.paths.append(paths)
        self.self_match = [1 if c.selector.matches(pod.labels) else 0 for c in constraints]
        self.keys = tuple(c.topology_key for c in constraints)
        self.verdicts = {}
        self.column = None

    @classmethod
    def build(cls, pod: PodView, constraints: list[Constraint], ctx: ClusterContext) -> SpreadFilter:
        domains, domain_values = eligible_domains(pod, constraints, ctx)
        counts: list[dict[str, int]] = []
        for i, c in enumerate(constraints):
            per_value = dict.fromkeys(domain_values[i], 0)
            for node_name, num in counts_by_node(ctx, c.selector, pod.namespace).items():
                values = domains.get(node_name)
                value = values[i] if values is not None else None
                if value is not None:
                    per_value[value] += num
            counts.append(per_value)
        spread = cls(pod, constraints, counts)
        if len(constraints) == 1:
            spread.column = ctx.label_column(constraints[0].topology_key)
        return spread

    def min_match(self, i: int) -> int:
        if len(self.counts[i]) < self.constraints[i].min_domains:
            return 0
        return self.paths[i].nums[0]

    def judge_values(self, values: tuple[str | None, ...]) -> Status | None:
        for i, c in enumerate(self.constraints):
            value = values[i]
            if value is None:
                return _LABEL_MISSING
            if self.counts[i].get(value, 0) + self.self_match[i] - self.min_match(i) > c.max_skew:
                return _SKEW
        return None

    def clone(self) -> SpreadFilter:
        clone = SpreadFilter.__new__(SpreadFilter)
        clone.pod, clone.constraints, clone.self_match = self.pod, self.constraints, self.self_match
        clone.keys, clone.column = self.keys, self.column
        clone.counts = [dict(c) for c in self.counts]
        clone.paths = [p.copy() for p in self.paths]
        clone.verdicts = {}
        return clone

    def add_pod(self, pod: PodView, node: NodeInfo) -> None:
        self._update(pod, node, 1)

    def remove_pod(self, pod: PodView, node: NodeInfo) -> None:
        self._update(pod, node, -1)

    def _update(self, pod: PodView, node: NodeInfo, delta: int) -> None:
        """`updateWithPod` (note: terminating pods are not skipped here, as upstream)."""
        view = node.node
        if pod.namespace != self.pod.namespace or not has_all_keys(view.labels, self.constraints):
            return
        for i, c in enumerate(self.constraints):
            if not c.selector.matches(pod.labels) or not included(c, self.pod, view):
                continue
            value = view.labels[c.topology_key]
            num = self.counts[i][value] = self.counts[i].get(value, 0) + delta
            self.paths[i].update(value, num)
        self.verdicts.clear()
