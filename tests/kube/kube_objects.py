"""Small builders for Kubernetes objects as the API server stores them (dicts)."""

from __future__ import annotations

from typing import Any


def node(name: str, cpu: str = "4", memory: str = "8Gi", pods: str = "110",
         labels: dict[str, str] | None = None, unschedulable: bool = False) -> dict[str, Any]:
    return {
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {"unschedulable": True} if unschedulable else {},
        "status": {
            "capacity": {"cpu": cpu, "memory": memory, "pods": pods},
            "allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
        },
    }


def pod(name: str, namespace: str = "default", cpu: str = "1", memory: str = "1Gi",
        node_name: str = "", phase: str = "Pending", uid: str | None = None,
        labels: dict[str, str] | None = None, priority: int | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels or {"app": name}}
    if uid:
        meta["uid"] = uid
    spec: dict[str, Any] = {
        "schedulerName": "default-scheduler",
        "containers": [{"name": "main", "image": "nginx:1.27",
                        "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
    }
    if node_name:
        spec["nodeName"] = node_name
    if priority is not None:
        spec["priority"] = priority
    return {"kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": phase}}


def pdb(name: str, namespace: str = "default", match: dict[str, str] | None = None,
        allowed: int = 1) -> dict[str, Any]:
    return {
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"matchLabels": match or {"app": name}}, "minAvailable": 1},
        "status": {"disruptionsAllowed": allowed},
    }


def priority_class(name: str, value: int) -> dict[str, Any]:
    return {"kind": "PriorityClass", "metadata": {"name": name}, "value": value}
