"""Builders for the filter tests: pods and nodes from Kubernetes-shaped dicts, a profile from a
policy dict, and a compact view of a `run_filters` result.

(No tests here; test_filters.py and test_filter_properties.py share it.)
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any

from extender.engine.framework import Code, Status
from extender.engine.policy import parse_policy
from extender.engine.profile import Profile, build_profile
from extender.engine.runner import FilterResult, node_fits, prepare_filters, run_filters
from extender.model import k8s
from extender.model.node import NodeView
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

#: kube-scheduler's default filter order (A.0).
DEFAULT_ORDER = ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
                 "NodePorts", "NodeResourcesFit")

UNSCHEDULABLE = Code.UNSCHEDULABLE
UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE

_uids = itertools.count()


def container(requests: dict[str, Any] | None = None, *,
              ports: Sequence[dict[str, Any]] = (), restart_policy: str | None = None,
              name: str = "c") -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "image": "busybox"}
    if requests is not None:
        out["resources"] = {"requests": requests}
    if ports:
        out["ports"] = list(ports)
    if restart_policy is not None:
        out["restartPolicy"] = restart_policy
    return out


def port(host_port: int, *, host_ip: str = "", protocol: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"containerPort": host_port, "hostPort": host_port}
    if host_ip:
        out["hostIP"] = host_ip
    if protocol:
        out["protocol"] = protocol
    return out


def pod_dict(name: str = "p", *, requests: dict[str, Any] | None = None,
             containers: Sequence[dict[str, Any]] | None = None,
             init_containers: Sequence[dict[str, Any]] = (),
             tolerations: Sequence[dict[str, Any]] | None = None,
             node_selector: dict[str, str] | None = None,
             required_terms: Sequence[dict[str, Any]] | None = None,
             node_name: str = "", phase: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": list(containers) if containers is not None else [container(requests)],
    }
    if init_containers:
        spec["initContainers"] = list(init_containers)
    if tolerations is not None:
        spec["tolerations"] = list(tolerations)
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    if required_terms is not None:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": list(required_terms)}}}
    if node_name:
        spec["nodeName"] = node_name
    uid = f"uid-{name}-{next(_uids)}"
    return {"metadata": {"name": name, "namespace": "default", "uid": uid},
            "spec": spec,
            "status": {"phase": phase or ("Running" if node_name else "Pending")}}


def pod(name: str = "p", **kwargs: Any) -> PodView:
    """The incoming pod's view (or, with `node_name`, a pod bound to that node)."""
    return PodView.from_k8s(k8s.convert(pod_dict(name, **kwargs), k8s.Pod))


def bound(node_name: str, name: str = "q", **kwargs: Any) -> PodView:
    """A pod already running on `node_name`."""
    return pod(name, node_name=node_name, **kwargs)


def node_view(name: str, *, allocatable: dict[str, Any] | None = None,
              labels: dict[str, str] | None = None,
              taints: Sequence[dict[str, str]] = (), unschedulable: bool = False) -> NodeView:
    if allocatable is None:
        allocatable = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    obj: dict[str, Any] = {
        "metadata": {"name": name, "uid": f"uid-{name}", "labels": labels or {}},
        "spec": {"unschedulable": unschedulable, "taints": list(taints)},
        "status": {"allocatable": allocatable},
    }
    return NodeView.from_k8s(k8s.convert(obj, k8s.Node))


def node(name: str = "n1", *, pods: Iterable[PodView] = (), **kwargs: Any) -> NodeInfo:
    return NodeInfo(node_view(name, **kwargs), list(pods))


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> dict[str, str]:
    return {"key": key, "value": value, "effect": effect}


def toleration(key: str = "", operator: str = "", value: str = "",
               effect: str = "") -> dict[str, str]:
    return {"key": key, "operator": operator, "value": value, "effect": effect}


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def term(*match_expressions: dict[str, Any],
         fields: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if match_expressions:
        out["matchExpressions"] = list(match_expressions)
    if fields:
        out["matchFields"] = list(fields)
    return out


def name_field(operator: str, *values: str) -> dict[str, Any]:
    return {"key": "metadata.name", "operator": operator, "values": list(values)}


def profile(order: Sequence[str] = DEFAULT_ORDER, *,
            fit_args: dict[str, Any] | None = None, kubernetes_version: str | None = None) -> Profile:
    policy: dict[str, Any] = {
        "apiVersion": "scheduler-extender/v1",
        "kind": "ExtenderPolicy",
        "plugins": {"filter": {"enabled": [{"name": n} for n in order]}},
    }
    if kubernetes_version is not None:
        policy["kubernetesVersion"] = kubernetes_version
    if fit_args is not None:
        policy["pluginConfig"] = [{"name": "NodeResourcesFit", "args": fit_args}]
    return build_profile(parse_policy(policy))


Verdicts = dict[str, tuple[Code, str, str]]


def verdicts(result: FilterResult) -> tuple[list[str], Verdicts]:
    """(passed names in order, {node: (code, plugin, message)})."""
    return ([info.node.name for info in result.passed],
            {name: (s.code, s.plugin, s.message) for name, s in result.statuses.items()})


def filter_nodes(prof: Profile, incoming: PodView,
                 nodes: Sequence[NodeInfo]) -> tuple[list[str], Verdicts]:
    return verdicts(run_filters(prof, incoming, nodes))


def one_by_one(prof: Profile, incoming: PodView,
               nodes: Sequence[NodeInfo]) -> tuple[list[NodeInfo], dict[str, Status]]:
    """The per-node definition: each node judged alone by the prepared checks in order."""
    checks = prepare_filters(prof, incoming)
    passed, statuses = [], {}
    for info in nodes:
        status = node_fits(checks, info)
        if status is None:
            passed.append(info)
        else:
            statuses[info.node.name] = status
    return passed, statuses


def status_of(prof: Profile, incoming: PodView, info: NodeInfo) -> Status | None:
    """One node through the whole pipeline, via `run_filters`."""
    result = run_filters(prof, incoming, [info])
    assert len(result.passed) + len(result.statuses) == 1
    return result.statuses.get(info.node.name)
