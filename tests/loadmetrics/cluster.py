"""The cluster, pod and policies of the load-metrics end-to-end tests.

Four nodes of 4 cpu / 8Gi (node-a … node-d, no pods); a pending pod whose one container has
a 1-cpu limit, so TargetLoadPacking predicts 1000m for it (25 % of a node).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

NODES = ("node-a", "node-b", "node-c", "node-d")


def node(name: str) -> dict[str, Any]:
    resources = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": f"uid-{name}", "resourceVersion": "1",
                         "labels": {"kubernetes.io/hostname": name}},
            "spec": {}, "status": {"capacity": dict(resources), "allocatable": dict(resources)}}


def pending_pod(name: str = "web-1") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}",
                         "resourceVersion": "1", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx", "resources": {
                "requests": {"cpu": "1", "memory": "1Gi"},
                "limits": {"cpu": "1", "memory": "1Gi"}}}]},
            "status": {"phase": "Pending"}}


def write_cluster(path: Path) -> Path:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                "items": [node(name) for name in NODES]}))
    return path


def trimaran_policy(args: dict[str, Any], plugins: tuple[str, ...] = ("TargetLoadPacking",),
                    per_plugin: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Score with `plugins` only (weight 1), each with `args` (or its `per_plugin` entry)."""
    per_plugin = per_plugin or {}
    return {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
            "plugins": {"score": {"enabled": [{"name": p, "weight": 1} for p in plugins]}},
            "pluginConfig": [{"name": p, "args": per_plugin.get(p, args)} for p in plugins]}


def write_policy(path: Path, policy: dict[str, Any]) -> Path:
    path.write_text(json.dumps(policy))
    return path


def prometheus_args(address: str, refresh: float = 30, stale: float = 300) -> dict[str, Any]:
    return {"metricProvider": {"type": "Prometheus", "address": address,
                               "refreshSeconds": refresh, "staleAfterSeconds": stale}}


def target_load_packing(util_percent: float | None, pod_millis: int = 1000,
                        capacity_millis: int = 4000, target: int = 40) -> int:
    """scheduler-plugins' TargetLoadPacking score (plugins-next §6.2), no missing pods."""
    if util_percent is None:
        return 0
    predicted = 100 * (util_percent / 100 * capacity_millis + pod_millis) / capacity_millis
    if predicted > target:
        if predicted > 100:
            return 0
        raw = target * (100 - predicted) / (100 - target)
    else:
        raw = (100 - target) * predicted / target + target
    return int(raw + 0.5)  # Go's math.Round for these positive values


def wire_score(score: int) -> int:
    """One scorer of weight 1 on the extender's 0..10 wire scale (rounded half up)."""
    return (score + 5) // 10


def metric(text: str, name: str, **labels: str) -> float | None:
    """A sample's value from a Prometheus exposition (None when absent)."""
    from prometheus_client.parser import text_string_to_metric_families

    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return sample.value
    return None


def prioritize_body(names: tuple[str, ...] = NODES) -> dict[str, Any]:
    return {"Pod": pending_pod(), "Nodes": None, "NodeNames": list(names)}
