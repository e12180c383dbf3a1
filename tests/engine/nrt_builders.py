"""NodeResourceTopology objects, nodes and pods as dicts (for NodeResourceTopologyMatch tests),
after scheduler-plugins' test helpers (`MakeTopologyResInfo`, `makeResourceListFromZones`,
`makePodByResourceList` and friends)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from extender.model.quantity import format_quantity, parse_quantity

Obj = dict[str, Any]
NRT_API_VERSION = "topology.node.k8s.io/v1alpha2"
PLUGIN = "NodeResourceTopologyMatch"

Zone = tuple[str, list[tuple[str, str, str]], dict[str, int] | None]


def nrt(name: str, zones: list[Zone], policies: list[str] | None = None,
        attributes: dict[str, str] | None = None, resource_version: str = "") -> Obj:
    """A NodeResourceTopology; a zone is (name, [(resource, capacity, available)], costs)."""
    out_zones = []
    for zone_name, resources, costs in zones:
        zone: Obj = {"name": zone_name, "type": "Node",
                     "resources": [{"name": r, "capacity": c, "allocatable": c, "available": a}
                                   for r, c, a in resources]}
        if costs:
            zone["costs"] = [{"name": n, "value": v} for n, v in costs.items()]
        out_zones.append(zone)
    meta: Obj = {"name": name}
    if resource_version:
        meta["resourceVersion"] = resource_version
    obj: Obj = {"apiVersion": NRT_API_VERSION, "kind": "NodeResourceTopology", "metadata": meta,
                "zones": out_zones}
    if policies is not None:
        obj["topologyPolicies"] = list(policies)
    if attributes:
        obj["attributes"] = [{"name": k, "value": v} for k, v in attributes.items()]
    return obj


def node_for(name: str, zones: list[Zone], extra: dict[str, str] | None = None) -> Obj:
    """A Node whose capacity and allocatable are the zones' `available` summed
    (`makeResourceListFromZones`), plus `extra`."""
    totals: dict[str, Fraction] = {}
    for _, resources, _ in zones:
        for resource, _, available in resources:
            totals[resource] = totals.get(resource, Fraction(0)) + parse_quantity(available)
    allocatable = {r: format_quantity(q) for r, q in totals.items()}
    allocatable.update(extra or {})
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": f"uid-node-{name}"},
            "status": {"capacity": dict(allocatable), "allocatable": allocatable}}


def container(name: str, requests: dict[str, str] | None,
              limits: dict[str, str] | None = None) -> Obj:
    out: Obj = {"name": name, "image": "img"}
    resources: Obj = {}
    if requests is not None:
        resources["requests"] = dict(requests)
    if limits is not None:
        resources["limits"] = dict(limits)
    if resources:
        out["resources"] = resources
    return out


def pod(name: str, containers: list[Obj], init_containers: list[Obj] | None = None,
        namespace: str = "default", node: str = "") -> Obj:
    spec: Obj = {"containers": containers}
    if init_containers:
        spec["initContainers"] = init_containers
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}"},
            "spec": spec}


def guaranteed(name: str, *requests: dict[str, str], namespace: str = "default") -> Obj:
    """`makePodByResourceLists`: one container per list, requests = limits."""
    return pod(name, [container(f"cnt-{i + 1}", r, r) for i, r in enumerate(requests)],
               namespace=namespace)


def nrt_policy(filters: bool = True, scores: bool = True, args: Obj | None = None) -> Obj:
    """A policy whose only plugin is NodeResourceTopologyMatch (filter and/or score)."""
    plugins: Obj = {"filter": {"enabled": [{"name": PLUGIN}] if filters else []},
                    "score": {"enabled": [{"name": PLUGIN, "weight": 1}] if scores else []}}
    return {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy", "plugins": plugins,
            "pluginConfig": [{"name": PLUGIN, "args": args}] if args is not None else []}
