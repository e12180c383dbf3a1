"""The inputs of `extender simulate --on-sandbox` as what a real cluster is given.

`plan` turns the workload into timed `Step`s (objects, then pods and controllers, then
SimulationEvents, at equal times as the simulator orders them); `cluster_objects` splits the
snapshot into what exists before kube-scheduler starts and the pending pods it must schedule.
What the simulator accepts but the API server would not is made acceptable the same way:
a pod's `spec.priority` without a class gets a class of that value, snapshot pods naming a
missing class get it with their priority. At a `--time-scale`, pods' own durations (`run-for`,
the termination grace period) scale as arrival times do.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from extender.engine import registry


def cluster_kinds() -> tuple[str, ...]:
    """The cluster snapshot's kinds the replay creates before kube-scheduler starts, in
    that order: the plugins' objects (their records' resources; the sandbox installs
    their CRDs) before the pods."""
    return ("Namespace", "PriorityClass", "PodDisruptionBudget",
            *(r.kind for r in registry.WATCHED.values()), "Pod")


def _namespaced(kind: str) -> bool:
    resource = registry.resource_of_kind(kind)
    return kind not in ("Namespace", "PriorityClass") and (resource is None
                                                            or resource.namespaced)


_SERVER_FIELDS = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation",
                  "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds")

def _clean(obj: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(dict(obj))
    meta = out.setdefault("metadata", {})
    for key in _SERVER_FIELDS:
        meta.pop(key, None)
    out.pop("status", None)
    return out


@dataclass
class Step:
    """One thing to do at a workload time (seconds)."""

    t: float
    order: int  # objects, then pods and controllers, then events: as the simulator
    kind: str  # "create", "delete-pod", "delete-node", "cordon", "uncordon", "update-node"
    obj: dict[str, Any]


def plan(workload: Any, documents: list[Any], scale: float = 1.0) -> list[Step]:
    """The workload as timed steps (`workload`: `load_workload`'s result, `documents`: the
    file's objects, for the objects' raw form); pods' `run-for` lifetimes are divided by
    `scale` as the arrival times are."""
    from extender.simulator.arrivals import parse_time_ns
    from extender.simulator.workload import object_kinds
    from extender.state.snapshot import iter_objects

    ns = 1e9
    steps: list[Step] = []
    for obj in iter_objects(documents):
        if obj.get("kind") in object_kinds():
            created = parse_time_ns((obj.get("metadata") or {}).get("creationTimestamp"))
            t = (created - workload.epoch_ns) / ns if created is not None else 0.0
            raw = _clean(obj)
            if obj["kind"] != "PriorityClass":
                raw["metadata"].setdefault("namespace", "default")
            steps.append(Step(t, 0, "create", raw))
    for arrival in workload.arrivals:
        if arrival.controller is None:
            pod = _clean(arrival.raw)
            pod.setdefault("apiVersion", "v1")
            pod["kind"] = "Pod"
            steps.append(Step(arrival.time / ns, 1, "create", pod))
    for controller in workload.controllers:
        # A Deployment is simulated as its ReplicaSet; the real one gets the Deployment.
        raw = _clean(getattr(controller, "deployment", None) or controller.raw)
        steps.append(Step(controller.time / ns, 1, "create", raw))
    for event in workload.events:
        action = event.action
        if action == "deletePod":
            namespace, _, name = event.target.partition("/")
            steps.append(Step(event.time / ns, 2, "delete-pod",
                              {"metadata": {"namespace": namespace, "name": name}}))
        elif action in ("addNode", "updateNode"):
            from extender.sandbox.nodes import from_objects

            node = from_objects([event.raw.get(action)], "SimulationEvent")[0]
            steps.append(Step(event.time / ns, 2, "create" if action == "addNode"
                              else "update-node", node))
        else:
            kind = {"deleteNode": "delete-node", "cordonNode": "cordon",
                    "uncordonNode": "uncordon"}[action]
            steps.append(Step(event.time / ns, 2, kind, {"metadata": {"name": event.target}}))
    steps += _classes_for_priorities(steps)
    if scale != 1.0:
        for step in steps:
            scale_durations(step.obj, scale)
    steps.sort(key=lambda s: (s.t, s.order))
    return steps


_POD_TEMPLATES = ("Deployment", "ReplicaSet", "StatefulSet", "Job", "DaemonSet")


def scale_durations(obj: dict[str, Any], scale: float) -> None:
    """A pod's (or pod template's) own durations at the replay's speed, as its arrival: its
    `run-for` lifetime and its termination grace period (whole seconds, at least 1 when it
    had one; the default 30 s made explicit)."""
    from extender.simulator.arrivals import RUN_FOR_ANNOTATION, parse_duration
    from extender.simulator.clock import SECOND
    from extender.simulator.records import DEFAULT_TERMINATION_GRACE_PERIOD

    if obj.get("kind") == "Pod":
        meta, spec = obj.setdefault("metadata", {}), obj.setdefault("spec", {})
    elif obj.get("kind") in _POD_TEMPLATES:
        template = obj.setdefault("spec", {}).setdefault("template", {})
        meta, spec = template.setdefault("metadata", {}), template.setdefault("spec", {})
    else:
        return
    annotations = meta.get("annotations") or {}
    if RUN_FOR_ANNOTATION in annotations:
        seconds = parse_duration(annotations[RUN_FOR_ANNOTATION]) / scale
        annotations[RUN_FOR_ANNOTATION] = f"{seconds:g}s"
    grace = spec.get("terminationGracePeriodSeconds")
    grace = DEFAULT_TERMINATION_GRACE_PERIOD // SECOND if grace is None else int(grace)
    spec["terminationGracePeriodSeconds"] = max(1, round(grace / scale)) if grace > 0 else 0


def _classes_for_priorities(steps: list[Step]) -> list[Step]:
    """The simulator takes a pod's `spec.priority` as written (exported pods carry it); the
    API server refuses a new pod whose priority its PriorityClass does not give. Each pod (or
    pod template) with a priority but no class gets a class made for that value and
    preemptionPolicy (`simulate-priority-<value>[-never]`), so it runs with the same priority."""
    made: dict[str, dict[str, Any]] = {}
    for step in steps:
        obj = step.obj
        if step.kind != "create" or obj.get("kind") not in ("Pod", "Deployment", "ReplicaSet",
                                                            "StatefulSet", "Job", "DaemonSet"):
            continue
        spec = obj.get("spec") or {}
        if obj["kind"] != "Pod":
            spec = (spec.get("template") or {}).get("spec") or {}
        priority = spec.pop("priority", None)
        if priority is None or spec.get("priorityClassName"):
            continue
        policy = spec.pop("preemptionPolicy", None) or "PreemptLowerPriority"
        name = f"simulate-priority-{priority}" + ("-never" if policy == "Never" else "")
        spec["priorityClassName"] = name
        made.setdefault(name, {
            "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name}, "value": int(priority), "preemptionPolicy": policy,
            "description": "made by extender simulate --on-sandbox for pods that give "
                           "spec.priority without a class"})
    return [Step(0.0, 0, "create", pc) for pc in made.values()]


def scheduler_names(objects: list[dict[str, Any]]) -> list[str]:
    """Every schedulerName the pods and pod templates name (default-scheduler first)."""
    names = ["default-scheduler"]
    for obj in objects:
        spec = obj.get("spec") or {}
        if obj.get("kind") != "Pod":
            spec = ((spec.get("template") or {}).get("spec")) or {}
        name = spec.get("schedulerName")
        if name and name not in names:
            names.append(name)
    return names


def cluster_objects(cluster: list[dict[str, Any]], steps: list[Step]) -> tuple[
        list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(namespaces, the snapshot's objects and bound pods to create before kube-scheduler
    starts, its pending pods to submit at time 0)."""
    namespaces = {"default"}
    before: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    kinds = cluster_kinds()
    for obj in cluster:
        kind = obj.get("kind")
        if kind not in kinds:
            continue
        raw = _clean(obj)
        if _namespaced(kind):
            namespaces.add(raw["metadata"].setdefault("namespace", "default"))
        if kind == "Namespace":
            namespaces.add(raw["metadata"]["name"])
        elif kind == "Pod" and not (raw.get("spec") or {}).get("nodeName"):
            pending.append(raw)
        elif kind == "PriorityClass" and raw["metadata"]["name"].startswith("system-"):
            continue  # the API server's own
        else:
            before.append(raw)
    for step in steps:
        ns = (step.obj.get("metadata") or {}).get("namespace")
        if ns and step.obj.get("kind") not in ("Node", "PriorityClass"):
            namespaces.add(ns)
    before = _missing_classes(before, steps) + before
    rank = {kind: i for i, kind in enumerate(kinds)}
    before.sort(key=lambda o: rank.get(o.get("kind", ""), len(rank)))
    ns_objects = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}
                  for n in sorted(namespaces)]
    return ns_objects, before, pending


def _missing_classes(before: list[dict[str, Any]], steps: list[Step]) -> list[dict[str, Any]]:
    """PriorityClasses the snapshot's pods name but the snapshot lacks (`kubectl get pods`
    without `priorityclasses`): the API server would refuse those pods, which the snapshot
    says were admitted; each is made with the priority its pods carry."""
    defined = {o["metadata"]["name"] for o in before if o.get("kind") == "PriorityClass"}
    defined |= {s.obj["metadata"]["name"] for s in steps if s.obj.get("kind") == "PriorityClass"}
    made: dict[str, dict[str, Any]] = {}
    for pod in before:
        spec = pod.get("spec") or {}
        name = spec.get("priorityClassName")
        if pod.get("kind") != "Pod" or not name or name in defined or name in made \
                or name.startswith("system-") or spec.get("priority") is None:
            continue
        made[name] = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                      "metadata": {"name": name}, "value": int(spec["priority"]),
                      "description": "made by extender simulate --on-sandbox: the snapshot's "
                                     "pods name it"}
    return list(made.values())
