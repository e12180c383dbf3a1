"""Kubernetes objects as dicts (as `kubectl get -o json` prints them), for upstream test tables.

After kube-scheduler's `st.MakePod()` / `st.MakeNode()` wrappers: the upstream rows read almost
the same here, so a transcription can be checked against its source line by line.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


def selector(match_labels: dict[str, str] | None = None, *expressions: Obj) -> Obj:
    """A `metav1.LabelSelector`."""
    out: Obj = {}
    if match_labels is not None:
        out["matchLabels"] = match_labels
    if expressions:
        out["matchExpressions"] = list(expressions)
    return out


def exists(key: str) -> Obj:
    return {"key": key, "operator": "Exists"}


def does_not_exist(key: str) -> Obj:
    return {"key": key, "operator": "DoesNotExist"}


def in_(key: str, *values: str) -> Obj:
    return {"key": key, "operator": "In", "values": list(values)}


def not_in(key: str, *values: str) -> Obj:
    return {"key": key, "operator": "NotIn", "values": list(values)}


def node(name: str, labels: dict[str, str] | None = None, *, taints: list[Obj] | None = None,
         unschedulable: bool = False, allocatable: dict[str, str] | None = None,
         images: list[Obj] | None = None) -> Obj:
    obj: Obj = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "uid": f"uid-node-{name}", "labels": dict(labels or {})},
                "spec": {}, "status": {"allocatable": dict(allocatable or {"pods": "110"})}}
    if taints:
        obj["spec"]["taints"] = taints
    if unschedulable:
        obj["spec"]["unschedulable"] = True
    if images:
        obj["status"]["images"] = images
    return obj


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> Obj:
    return {"key": key, "value": value, "effect": effect}


def toleration(key: str = "", value: str = "", effect: str = "", operator: str = "Equal") -> Obj:
    return {"key": key, "operator": operator, "value": value, "effect": effect}


def pod(name: str, namespace: str = "default", *, labels: dict[str, str] | None = None,
        node: str = "", uid: str | None = None, terminating: bool = False,
        spread: list[Obj] | None = None, affinity: Obj | None = None,
        node_selector: dict[str, str] | None = None, tolerations: list[Obj] | None = None,
        owner: Obj | None = None, requests: dict[str, str] | None = None,
        priority: int | None = None, containers: list[Obj] | None = None) -> Obj:
    """A pod; bound when `node` is set. `owner` is one controller ownerReference."""
    meta: Obj = {"name": name, "namespace": namespace, "uid": uid or f"uid-{namespace}-{name}"}
    if labels:
        meta["labels"] = dict(labels)
    if terminating:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    if owner is not None:
        meta["ownerReferences"] = [owner]
    container: Obj = {"name": "c", "image": "img"}
    if requests:
        container["resources"] = {"requests": dict(requests)}
    spec: Obj = {"containers": containers if containers is not None else [container]}
    if node:
        spec["nodeName"] = node
    if spread:
        spec["topologySpreadConstraints"] = spread
    if affinity:
        spec["affinity"] = affinity
    if node_selector:
        spec["nodeSelector"] = node_selector
    if tolerations:
        spec["tolerations"] = tolerations
    if priority is not None:
        spec["priority"] = priority
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
            "status": {"phase": "Running" if node else "Pending"}}


def spread(max_skew: int, key: str, when: str, sel: Obj | None, *, min_domains: int | None = None,
           affinity_policy: str | None = None, taints_policy: str | None = None,
           match_label_keys: list[str] | None = None) -> Obj:
    """`SpreadConstraint(maxSkew, tpKey, mode, selector, minDomains, nodeAffinityPolicy,
    nodeTaintsPolicy, matchLabelKeys)`; None leaves the field unset (nil)."""
    out: Obj = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
    if sel is not None:
        out["labelSelector"] = sel
    if min_domains is not None:
        out["minDomains"] = min_domains
    if affinity_policy is not None:
        out["nodeAffinityPolicy"] = affinity_policy
    if taints_policy is not None:
        out["nodeTaintsPolicy"] = taints_policy
    if match_label_keys is not None:
        out["matchLabelKeys"] = match_label_keys
    return out


def required_affinity(expr: Obj) -> Obj:
    """`NodeAffinityIn/NotIn(key, values, MatchExpressions)`: one required term, one expression."""
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [expr]}]}}}


def owner(kind: str, name: str, uid: str | None = None, api_version: str = "apps/v1") -> Obj:
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid or f"uid-{kind}-{name}",
            "controller": True}


def namespace(name: str, labels: dict[str, str] | None = None) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "uid": f"uid-ns-{name}", "labels": dict(labels or {})}}


def service(name: str, namespace: str = "default", selector: dict[str, str] | None = None) -> Obj:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": selector}}


def replica_set(name: str, namespace: str = "default", selector: Obj | None = None) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-ReplicaSet-{name}"},
            "spec": {"selector": selector}}


def stateful_set(name: str, namespace: str = "default", selector: Obj | None = None) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-StatefulSet-{name}"},
            "spec": {"selector": selector}}


def replication_controller(name: str, namespace: str = "default",
                           selector: dict[str, str] | None = None) -> Obj:
    return {"apiVersion": "v1", "kind": "ReplicationController",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-ReplicationController-{name}"},
            "spec": {"selector": selector}}


def policy(filters: list[str] | None = None, scores: list[tuple[str, int]] | None = None,
           args: dict[str, Obj] | None = None, post_filters: list[str] | None = None,
           kubernetes_version: str | None = None) -> Obj:
    """An ExtenderPolicy dict. A phase given as a list is exactly that list (`[]`: no plugin);
    None leaves the phase out (kube-scheduler's defaults)."""
    plugins: Obj = {}
    if filters is not None:
        plugins["filter"] = {"enabled": [{"name": n} for n in filters]}
    if scores is not None:
        plugins["score"] = {"enabled": [{"name": n, "weight": w} for n, w in scores]}
    if post_filters is not None:
        plugins["postFilter"] = {"enabled": [{"name": n} for n in post_filters]}
    out: Obj = {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy", "plugins": plugins,
                "pluginConfig": [{"name": n, "args": a} for n, a in (args or {}).items()]}
    if kubernetes_version is not None:
        out["kubernetesVersion"] = kubernetes_version
    return out
