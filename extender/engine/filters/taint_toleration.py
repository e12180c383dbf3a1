"""TaintToleration: the first NoSchedule/NoExecute taint the pod does not tolerate rejects."""

from __future__ import annotations

from collections.abc import Sequence

from extender.engine.args import NEWEST_VERSION, Version
from extender.engine.framework import BatchCheck, Status, unresolvable
from extender.model.node import TaintSet
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.model.taints import NO_EXECUTE, NO_SCHEDULE, Taint, Toleration, tolerates_any

NAME = "TaintToleration"
REASON = "node(s) had untolerated taint(s)"
#: The release whose reason stopped naming the taint (earlier: `untolerated_reason`).
TAINT_LEFT_OUT_SINCE: Version = (1, 34)


def untolerated_reason(taint: Taint) -> str:
    """The reason up to 1.33, naming the first untolerated taint."""
    return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"


def first_untolerated(taints: TaintSet, tolerations: tuple[Toleration, ...]) -> Taint | None:
    for taint in taints:
        if taint.effect in (NO_SCHEDULE, NO_EXECUTE) and not tolerates_any(tolerations, taint):
            return taint
    return None


class _TaintCheck(BatchCheck):
    __slots__ = ("tolerations", "verdicts", "name_taint")

    def __init__(self, tolerations: tuple[Toleration, ...], name_taint: bool) -> None:
        self.tolerations = tolerations
        self.name_taint = name_taint
        # Taint sets are interned by the state, so identity names a distinct set: each set is
        # evaluated once per request however many nodes share it.
        self.verdicts: dict[int, Status | None] = {}

    def __call__(self, node: NodeInfo) -> Status | None:
        taints = node.node.taints
        if not taints:
            return None
        key = id(taints)
        verdicts = self.verdicts
        if key in verdicts:
            return verdicts[key]
        taint = first_untolerated(taints, self.tolerations)
        if taint is None:
            verdict = None
        elif self.name_taint:
            verdict = unresolvable(NAME, untolerated_reason(taint))
        else:
            verdict = _UNTOLERATED
        verdicts[key] = verdict
        return verdict

    def filter_many(self, nodes: Sequence[NodeInfo], statuses: dict[str, Status]) -> list[NodeInfo]:
        kept: list[NodeInfo] = []
        for node in nodes:
            status = self(node) if node.node.taints else None
            if status is None:
                kept.append(node)
            else:
                statuses[node.node.name] = status
        return kept


_UNTOLERATED = unresolvable(NAME, REASON)


class TaintToleration:
    name = NAME

    def __init__(self, version: Version = NEWEST_VERSION) -> None:
        self.name_taint = version < TAINT_LEFT_OUT_SINCE
        self.memo_label = f"{NAME}/named" if self.name_taint else NAME

    def prepare(self, pod: PodView) -> _TaintCheck:
        return _TaintCheck(pod.tolerations, self.name_taint)
