"""Builders for scheduler-plugins' objects and policies in simulator tests (Coscheduling,
CapacityScheduling)."""

from __future__ import annotations

from typing import Any

from .helpers import pod

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
#: kube-scheduler's default filters that this project implements and these scenarios need.
FILTERS = ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
           "NodeResourcesFit")


def _policy(filters: tuple[str, ...], post_filter: str | None,
            config: list[dict[str, Any]]) -> dict[str, Any]:
    plugins: dict[str, Any] = {
        "filter": {"enabled": [{"name": n} for n in filters]},
        # One scorer, so placements can be computed by hand (LeastAllocated cpu + memory).
        "score": {"disabled": [{"name": "*"}], "enabled": [{"name": "NodeResourcesFit", "weight": 1}]},
    }
    if post_filter:
        plugins["postFilter"] = {"enabled": [{"name": post_filter}]}
    return {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy", "plugins": plugins,
            "pluginConfig": config}


def gang_policy(**args: Any) -> dict[str, Any]:
    """Default filters + Coscheduling (args in kube-scheduler's v1 names), DefaultPreemption."""
    config = [{"name": "Coscheduling", "args": args}] if args else []
    return _policy((*FILTERS, "Coscheduling"), None, config)


def quota_policy() -> dict[str, Any]:
    """Default filters + CapacityScheduling as PreFilter and as the PostFilter."""
    return _policy((*FILTERS, "CapacityScheduling"), "CapacityScheduling", [])


def pod_group(name: str, min_member: int, *, namespace: str = "default", created: str | None = None,
              timeout: int | None = None, min_resources: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if created:
        meta["creationTimestamp"] = created
    spec: dict[str, Any] = {"minMember": min_member}
    if timeout is not None:
        spec["scheduleTimeoutSeconds"] = timeout
    if min_resources is not None:
        spec["minResources"] = min_resources
    return {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": meta,
            "spec": spec}


def elastic_quota(namespace: str, min_: dict[str, str] | None,
                  max_: dict[str, str] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if min_ is not None:
        spec["min"] = min_
    if max_ is not None:
        spec["max"] = max_
    return {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "ElasticQuota",
            "metadata": {"name": "quota", "namespace": namespace}, "spec": spec}


def member(name: str, group: str, cpu: str, memory: str = "1Gi", **kw: Any) -> dict[str, Any]:
    """A pod of PodGroup `group` (the label), built like `helpers.pod`."""
    obj = pod(name, cpu, memory, **kw)
    obj["metadata"]["labels"] = {POD_GROUP_LABEL: group}
    return obj
