"""TaintToleration: the first NoSchedule/NoExecute taint the pod does not tolerate rejects."""

from __future__ import annotations

from extender.engine.framework import NodeCheck, Status, unresolvable
from extender.model.node import TaintSet
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.model.taints import NO_EXECUTE, NO_SCHEDULE, Taint, Toleration, tolerates_any

NAME = "TaintToleration"


def untolerated_reason(taint: Taint) -> str:
    return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"


def first_untolerated(taints: TaintSet, tolerations: tuple[Toleration, ...]) -> Taint | None:
    for taint in taints:
        if taint.effect in (NO_SCHEDULE, NO_EXECUTE) and not tolerates_any(tolerations, taint):
            return taint
    return None


class TaintToleration:
    name = NAME

    def prepare(self, pod: PodView) -> NodeCheck | None:
        tolerations = pod.tolerations
        # Taint sets are interned by the state, so identity names a distinct set: each set
        # is evaluated once per request however many nodes share it.
        verdicts: dict[int, Status | None] = {}

        def check(node: NodeInfo) -> Status | None:
            taints = node.node.taints
            if not taints:
                return None
            key = id(taints)
            if key in verdicts:
                return verdicts[key]
            taint = first_untolerated(taints, tolerations)
            verdict = None if taint is None else unresolvable(NAME, untolerated_reason(taint))
            verdicts[key] = verdict
            return verdict

        return check
