"""Plugin shapes and statuses, after kube-scheduler's framework.

A filter plugin is prepared once per pod (the PreFilter step: matchers, caches, request
vectors) and returns a per-node check, or None to skip itself for that pod. A score plugin
maps every candidate node to a raw score and normalises over the candidates (map/reduce),
returning 0..100 per node, or None to skip itself (PreScore Skip).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Protocol

from extender.model.disruption import PdbView, PriorityClassView
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

MAX_NODE_SCORE = 100
MAX_EXTENDER_PRIORITY = 10


class Code(IntEnum):
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5


@dataclass(frozen=True, slots=True)
class Status:
    """A plugin's verdict on one node; `message` is what a FailedScheduling event shows."""

    code: Code
    reasons: tuple[str, ...]
    plugin: str = ""
    # Joined once: one status object often stands for thousands of nodes in a reply.
    message: str = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "message", ", ".join(self.reasons))

    @property
    def resolvable(self) -> bool:
        """Whether preemption might help (Unschedulable, not ...AndUnresolvable)."""
        return self.code == Code.UNSCHEDULABLE


def unschedulable(plugin: str, *reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, reasons, plugin)


def unresolvable(plugin: str, *reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons, plugin)


NodeCheck = Callable[[NodeInfo], Status | None]


class BatchCheck:
    """A prepared filter that can also judge many nodes in one tight loop.

    `__call__` judges one node (preemption and the simulator use it); `filter_many` must give
    the same verdicts, only faster, and records failures in `statuses`.
    """

    def __call__(self, node: NodeInfo) -> Status | None:
        raise NotImplementedError

    def filter_many(self, nodes: Sequence[NodeInfo], statuses: dict[str, Status]) -> list[NodeInfo]:
        kept: list[NodeInfo] = []
        for node in nodes:
            self.judge_into(node, kept, statuses)
        return kept

    def judge_into(self, node: NodeInfo, kept: list[NodeInfo], statuses: dict[str, Status]) -> None:
        """Judge one node: keep it, or record why not."""
        status = self(node)
        if status is None:
            kept.append(node)
        else:
            statuses[node.node.name] = status


class ClusterContext(Protocol):
    """Cluster-wide facts some plugins need beyond the candidate nodes."""

    def node_count(self) -> int: ...
    def image_node_count(self, image: str) -> int: ...
    def nominated_pods(self, node_name: str) -> Sequence[PodView]: ...
    def pdb_list(self) -> Sequence[PdbView]: ...
    def priority_class(self, name: str) -> PriorityClassView | None: ...


class FilterPlugin(Protocol):
    name: str

    def prepare(self, pod: PodView) -> NodeCheck | None:
        """Pre-compute what the pod needs; None means the plugin passes every node."""


class ScorePlugin(Protocol):
    name: str

    def score(self, pod: PodView, nodes: Sequence[NodeInfo], ctx: ClusterContext) -> list[int] | None:
        """Normalised 0..100 scores in the order of `nodes`; None to skip this pod."""


class EngineError(Exception):
    """An internal failure the caller reports as the protocol's Error."""
