"""The extenders' part of preemption (kube-scheduler's `callExtenders`), as the engine's
`ExtenderStep`.

`engine.preemption.evaluator.preempt(..., call_extenders=step)` runs the dry run, hands the
candidates to the step, and picks one node from what it returns
(`pickOneNodeForPreemption`); the simulator only supplies the step. Each interested extender
with a preempt verb, in configuration order, gets the current candidates and its reply
replaces them:

* victims come back by UID (`NodeNameToMetaVictims`) and are looked up on their node; a UID
  not on that node, or a node that does not exist, is kube-scheduler's error;
* a node left with no victims is an error too (`expected at least one victim pod on node`),
  except that an ignorable extender's such node is just dropped;
* a failed call of an ignorable extender is skipped (the candidates stay as they were); of
  any other, it is the preemption's Error status;
* once no candidate is left the remaining extenders are not asked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from extender.engine.framework import Code, Status
from extender.engine.preemption.evaluator import ExtenderStep
from extender.engine.preemption.victims import Victims
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.simulator.extenders import ExtenderError, HttpExtender


def _convert(reply: Mapping[str, tuple[list[str], int]], nodes: Mapping[str, NodeInfo],
             ignorable: bool) -> dict[str, Victims]:
    """An extender's reply (node -> (victim UIDs, NumPDBViolations)) as the engine's victims,
    checked as kube-scheduler's `convertToVictims` checks it."""
    converted: dict[str, Victims] = {}
    for node_name, (uids, violations) in reply.items():
        info = nodes.get(node_name)
        if info is None:
            raise ExtenderError(f"node {node_name!r} not found")
        pods = []
        for uid in uids:
            if uid not in info.pods:
                raise ExtenderError(f"extender claims to preempt pod (UID: {uid}) on "
                                    f"node: {node_name}, but the pod is not found on that node")
            pods.append(info.pods[uid])
        if not pods:
            if ignorable:
                continue
            raise ExtenderError(f'expected at least one victim pod on node "{node_name}"')
        converted[node_name] = Victims(tuple(pods), violations)
    return converted


def extender_step(extenders: Sequence[HttpExtender], pod: PodView, pod_raw: Mapping[str, Any],
                  nodes: Mapping[str, NodeInfo],
                  raw_pods: Mapping[str, Any] | None = None) -> ExtenderStep | None:
    """The `callExtenders` step for `pod`, or None when no extender takes part (no preempt
    verb, or not interested in the pod): the engine then picks among its own candidates.
    `nodes` is the cluster's node map (victims are looked up there); `raw_pods` the pods'
    objects by UID, for extenders that are not `nodeCacheCapable` (sent whole victims)."""
    interested = [e for e in extenders if e.preempt_verb and e.is_interested(pod)]
    if not interested:
        return None

    def call_extenders(candidates: Mapping[str, Victims]) -> Mapping[str, Victims] | Status:
        current: Mapping[str, Victims] = candidates
        for ext in interested:
            try:
                reply = ext.process_preemption(pod_raw, current, raw_pods)
                converted = _convert(reply, nodes, ext.ignorable)
            except ExtenderError as exc:
                if ext.ignorable:
                    continue
                return Status(Code.ERROR, (str(exc),))
            current = converted
            if not current:
                break
        return current

    return call_extenders
