"""TopologicalSort (scheduler-plugins `pkg/networkaware/topologicalsort`): a QueueSort.

Two pods of the same AppGroup (the same non-empty `appgroup.diktyo.x-k8s.io` label) are ordered
by their workloads' indexes in the AppGroup's `status.topologyOrder` (found by binary search, -1
when absent), `order(p1) <= order(p2)`: a non-strict comparison, as upstream's. Any other pair
falls back to PrioritySort: higher priority first, then the earlier queue timestamp.

QueueSort has no extender verb; the simulator's activeQ runs it (`less`). Where upstream
dereferences a missing AppGroup (the scheduler panics), PrioritySort decides instead.
"""

from __future__ import annotations

from typing import Any

from extender.engine.framework import ClusterContext
from extender.engine.plugins.network_aware.args import TopologicalSortArgs
from extender.engine.plugins.network_aware.network_overhead import find_in_namespaces
from extender.engine.plugins.network_aware.store import NetworkStore
from extender.engine.plugins.priority_sort import priority_less
from extender.model.networkaware import AppGroupView, pod_app_group, pod_workload

NAME = "TopologicalSort"


class TopologicalSort:
    name = NAME

    def __init__(self, args: TopologicalSortArgs | None = None) -> None:
        self.args = args or TopologicalSortArgs()
        #: AppGroups of queued pods that none of `args.namespaces` held when two of their pods
        #: were compared (ordered by priority instead): the simulator warns of them.
        self.missing: set[str] = set()

    def app_group(self, ctx: ClusterContext, name: str) -> AppGroupView | None:
        return find_in_namespaces(ctx.store(NetworkStore).app_group, self.args.namespaces, name)

    def less(self, info1: Any, info2: Any, ctx: ClusterContext) -> bool:
        """`Less(pInfo1, pInfo2)` for two queued pods."""
        group1 = pod_app_group(info1.pod.labels)
        group2 = pod_app_group(info2.pod.labels)
        if group1 != group2 or not group1:
            return priority_less(info1, info2)
        app_group = self.app_group(ctx, group1)
        if app_group is None:
            self.missing.add(group1)
            return priority_less(info1, info2)
        order1 = app_group.pod_order(pod_workload(info1.pod.labels))
        order2 = app_group.pod_order(pod_workload(info2.pod.labels))
        return order1 <= order2

    def sort_key(self, ctx: ClusterContext) -> Any:
        """A sort key for the simulator's activeQ heap whose `<` is `less` (the order is not a
        key function of one pod: it compares pairs)."""
        less = self.less

        class _Key:
            __slots__ = ("info",)

            def __init__(self, info: Any) -> None:
                self.info = info

            def __lt__(self, other: _Key) -> bool:
                return less(self.info, other.info, ctx)

            def __gt__(self, other: _Key) -> bool:
                return less(other.info, self.info, ctx)

        return _Key
