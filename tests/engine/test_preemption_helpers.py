"""Builders for the preemption tests: Kubernetes objects as dicts, loaded into a real state.

(No tests here; the module is named so the preemption test files own it.)
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from extender.engine.cluster import ClusterState
from extender.engine.policy import parse_policy
from extender.engine.profile import Profile, build_profile
from extender.model import k8s
from extender.model.disruption import PdbView, PriorityClassView
from extender.model.pod import PodView

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

#: A fixed clock reading for every test: 2027-01-15T08:00:00Z.
T0 = 1_800_000_000.0


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def pod(name: str, node: str = "", *, priority: int = 0, cpu: str = "1", memory: str = "128Mi",
        start: float | None = T0 - 3600, labels: dict[str, str] | None = None,
        namespace: str = "default", priority_class: str = "", preemption_policy: str | None = None,
        terminating: bool = False, preempted: bool = False, scheduled: float | None = None,
        nominated: str = "", host_port: int = 0,
        node_selector: dict[str, str] | None = None) -> dict[str, Any]:
    conditions = []
    if scheduled is not None:
        conditions.append({"type": "PodScheduled", "status": "True",
                           "lastTransitionTime": iso(scheduled)})
    if preempted:
        conditions.append({"type": "DisruptionTarget", "status": "True",
                           "reason": "PreemptionByScheduler"})
    container: dict[str, Any] = {"name": "c", "image": "busybox",
                                 "resources": {"requests": {"cpu": cpu, "memory": memory}}}
    if host_port:
        container["ports"] = [{"containerPort": host_port, "hostPort": host_port}]
    spec: dict[str, Any] = {"nodeName": node, "priority": priority, "containers": [container]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    if preemption_policy:
        spec["preemptionPolicy"] = preemption_policy
    if node_selector:
        spec["nodeSelector"] = node_selector
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{name}"}
    if labels:
        meta["labels"] = labels
    if terminating:
        meta["deletionTimestamp"] = iso(T0 - 10)
    status: dict[str, Any] = {"phase": "Running" if node else "Pending",
                              "conditions": conditions}
    if start is not None:
        status["startTime"] = iso(start)
    if nominated:
        status["nominatedNodeName"] = nominated
    return {"kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def node(name: str, *, cpu: str = "4", memory: str = "8Gi", pods: str = "110",
         labels: dict[str, str] | None = None, taints: list[dict[str, str]] | None = None,
         unschedulable: bool = False) -> dict[str, Any]:
    return {"kind": "Node",
            "metadata": {"name": name, "uid": f"uid-{name}", "labels": labels or {}},
            "spec": {"unschedulable": unschedulable, "taints": taints or []},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods}}}


def pdb(name: str, match_labels: dict[str, str] | None, allowed: int, *,
        namespace: str = "default", disrupted: tuple[str, ...] = (),
        expressions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    selector: dict[str, Any] | None = None
    if match_labels is not None or expressions is not None:
        selector = {}
        if match_labels is not None:
            selector["matchLabels"] = match_labels
        if expressions is not None:
            selector["matchExpressions"] = expressions
    return {"kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": selector},
            "status": {"disruptionsAllowed": allowed,
                       "disruptedPods": {p: iso(T0) for p in disrupted}}}


def priority_class(name: str, value: int, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {"kind": "PriorityClass", "metadata": {"name": name, "annotations": annotations or {}},
            "value": value}


def view(obj: dict[str, Any]) -> PodView:
    return PodView.from_k8s(k8s.convert(obj, k8s.Pod))


def pdb_view(obj: dict[str, Any]) -> PdbView:
    return PdbView(k8s.convert(obj, k8s.PodDisruptionBudget))


def pc_view(obj: dict[str, Any]) -> PriorityClassView:
    return PriorityClassView(k8s.convert(obj, k8s.PriorityClass))


def cluster(*objects: dict[str, Any]) -> ClusterState:
    """A real `ClusterState` holding the objects (nodes first, so pods land on them)."""
    state = ClusterState(clock=lambda: T0)
    order = {"PriorityClass": 0, "PodDisruptionBudget": 1, "Node": 2, "Pod": 3}
    for obj in sorted(objects, key=lambda o: order[o["kind"]]):
        kind = obj["kind"]
        if kind == "Node":
            state.apply_node(k8s.convert(obj, k8s.Node))
        elif kind == "Pod":
            state.apply_pod(k8s.convert(obj, k8s.Pod))
        elif kind == "PodDisruptionBudget":
            state.apply_pdb(k8s.convert(obj, k8s.PodDisruptionBudget))
        else:
            state.apply_priority_class(k8s.convert(obj, k8s.PriorityClass))
    return state


def profile(post_filter: str | None = "DefaultPreemption", **args: Any) -> Profile:
    """The fixture policy's filters (kube-scheduler's order) with the given PostFilter plugin;
    no score section, since preemption never scores."""
    policy = fixture("policy-leastallocated.json")
    policy["plugins"].pop("score", None)
    policy["pluginConfig"] = []
    if post_filter is None:
        policy["plugins"]["postFilter"] = {"disabled": [{"name": "*"}]}
    else:
        policy["plugins"]["postFilter"] = {"enabled": [{"name": post_filter}],
                                           "disabled": [{"name": "*"}]}
        if args:
            policy["pluginConfig"] = [{"name": post_filter, "args": args}]
    return build_profile(parse_policy(policy))
