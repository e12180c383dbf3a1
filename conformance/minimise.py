"""Shrinking a disagreeing case to what still disagrees, so the written case shows the cause.

Greedy, as delta debugging's simplest form: drop each other pod (bound or nominated), then
each PDB, each node (with its pods), each Namespace, then each optional part of the pending
pod's spec (affinity blocks, tolerations, spread constraints, node selector, init containers,
overhead, preemptionPolicy), keeping a removal whenever
the same kinds of difference remain. Every step asks both sides again, so a case of n
objects costs about n + 10 more questions.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

Obj = dict[str, Any]
#: Kinds of difference a case shows (`compare.differences`' first elements).
Kinds = frozenset[str]

OPTIONAL_POD_PARTS = (("affinity", "nodeAffinity"), ("affinity", "podAffinity"),
                      ("affinity", "podAntiAffinity"), ("tolerations",),
                      ("topologySpreadConstraints",), ("nodeSelector",), ("initContainers",),
                      ("overhead",), ("preemptionPolicy",))


def _without(spec: Obj, path: tuple[str, ...]) -> Obj | None:
    """`spec` with the part at `path` removed; None when it has no such part."""
    out = copy.deepcopy(spec)
    parent = out
    for key in path[:-1]:
        parent = parent.get(key)
        if not isinstance(parent, dict):
            return None
    if path[-1] not in parent:
        return None
    del parent[path[-1]]
    if len(path) > 1 and not parent:
        del out[path[0]]
    return out


def minimise(objects: list[Obj], pod: Obj,
             disagreement: Callable[[list[Obj], Obj], Kinds]) -> tuple[list[Obj], Obj]:
    """The smallest (objects, pod) found that still shows every kind `disagreement` finds in
    the original."""
    wanted = disagreement(objects, pod)

    def still(candidate_objects: list[Obj], candidate_pod: Obj) -> bool:
        return wanted <= disagreement(candidate_objects, candidate_pod)

    def node_of(obj: Obj) -> str | None:
        return (obj.get("spec") or {}).get("nodeName") if obj.get("kind") == "Pod" else None

    for kind in ("Pod", "PodDisruptionBudget", "Node", "Namespace"):
        index = 0
        while index < len(objects):
            obj = objects[index]
            if obj.get("kind") != kind:
                index += 1
                continue
            name = obj["metadata"]["name"]
            trial = [o for o in objects if o is not obj
                     and not (kind == "Node" and node_of(o) == name)]
            if trial and still(trial, pod):
                objects = trial
            else:
                index += 1
    for path in OPTIONAL_POD_PARTS:
        spec = _without(pod["spec"], path)
        if spec is not None:
            trial_pod = dict(pod, spec=spec)
            if still(objects, trial_pod):
                pod = trial_pod
    return objects, pod
