"""PrioritySort (kube-scheduler's default QueueSort, `queuesort/priority_sort.go`): higher
priority first, then the earlier queue timestamp. The simulator's activeQ orders by it unless
the policy enables another queue sort; registered so a policy may name it as a profile does."""

from __future__ import annotations

from typing import Any

from extender.engine.args import NoArgs
from extender.engine.framework import ClusterContext

NAME = "PrioritySort"


def priority_less(info1: Any, info2: Any) -> bool:
    """`Less` on two queued pods (`pod`, `timestamp`, and the `seq` that stands in for real
    clocks' distinct timestamps)."""
    return ((-info1.pod.priority, info1.timestamp, info1.seq)
            < (-info2.pod.priority, info2.timestamp, info2.seq))


class PrioritySort:
    name = NAME

    def __init__(self, args: NoArgs | None = None) -> None:
        pass

    def less(self, info1: Any, info2: Any, ctx: ClusterContext) -> bool:
        return priority_less(info1, info2)
