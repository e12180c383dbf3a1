"""The simulator: kube-scheduler's scheduling queue and loop replayed on virtual time.

`queue.PriorityQueue` is the scheduling queue (activeQ, backoffQ, unschedulable pool,
nominator); `clock` provides the virtual clock and timeline; `events` the cluster events
and which in-tree plugin listens to which.
"""

from extender.simulator.clock import SECOND, Timeline, VirtualClock
from extender.simulator.events import ClusterEvent
from extender.simulator.nominator import Nominator
from extender.simulator.queue import PriorityQueue, QueuedPodInfo

__all__ = [
    "SECOND",
    "ClusterEvent",
    "Nominator",
    "PriorityQueue",
    "QueuedPodInfo",
    "Timeline",
    "VirtualClock",
]
