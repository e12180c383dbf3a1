"""The sandbox's Node objects: `--nodes N` identical ones, or those of a file as kubectl
prints them (`kubectl get nodes -o yaml|json`: a List, one Node, or several YAML documents),
keeping labels, annotations, taints, unschedulable, capacity, allocatable and images, and
dropping what the API server assigns (uid, resourceVersion, timestamps, managed fields)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml

#: What one `--nodes N` node offers: a common 8-cpu, 32 GiB worker.
DEFAULT_CAPACITY = {"cpu": "8", "memory": "32Gi", "pods": "110",
                    "ephemeral-storage": "100Gi"}
ZONES = ("zone-a", "zone-b", "zone-c")
_SERVER_FIELDS = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation",
                  "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences")


class NodesError(ValueError):
    """A nodes file that cannot be used; the message names the file and the item."""


def identical(count: int, *, prefix: str = "node", capacity: dict[str, str] | None = None,
              ) -> list[dict[str, Any]]:
    """`count` nodes alike but for their name and zone (round-robin over three zones of one
    region, so topology spread has domains to spread over)."""
    if count < 0:
        raise NodesError(f"--nodes {count}: must be 0 or more")
    width = max(2, len(str(count)))
    cap = dict(capacity or DEFAULT_CAPACITY)
    out = []
    for i in range(count):
        name = f"{prefix}-{i + 1:0{width}d}"
        out.append({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {
                "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64", "topology.kubernetes.io/region": "sandbox",
                "topology.kubernetes.io/zone": ZONES[i % len(ZONES)]}},
            "spec": {},
            "status": {"capacity": dict(cap), "allocatable": dict(cap)},
        })
    return out


def _documents(text: str, where: str) -> list[Any]:
    try:
        return [json.loads(text)]
    except ValueError:
        pass
    try:
        return [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        raise NodesError(f"{where}: neither JSON nor YAML: {exc}") from None


def from_file(file: str | Path) -> list[dict[str, Any]]:
    """The Node objects in `file`, ready to create."""
    where = str(file)
    try:
        text = Path(file).read_text(encoding="utf-8")
    except OSError as exc:
        raise NodesError(f"{where}: {exc.strerror or exc}") from None
    items: list[Any] = []
    for doc in _documents(text, where):
        if isinstance(doc, dict) and isinstance(doc.get("items"), list):
            items.extend(doc["items"])
        else:
            items.append(doc)
    return from_objects(items, where)


def from_objects(items: list[Any], where: str) -> list[dict[str, Any]]:
    """`items` (each a Node) ready to create; `where` names their file in errors."""
    nodes = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        here = f"{where}: item {i}"
        if not isinstance(item, dict) or item.get("kind", "Node") != "Node":
            kind = item.get("kind") if isinstance(item, dict) else type(item).__name__
            raise NodesError(f"{here}: expected a Node, got {kind}")
        node = copy.deepcopy(item)
        node["apiVersion"], node["kind"] = "v1", "Node"
        meta = node.setdefault("metadata", {})
        name = meta.get("name")
        if not isinstance(name, str) or not name:
            raise NodesError(f"{here}: metadata.name is missing")
        if name in seen:
            raise NodesError(f"{here}: node {name!r} appears twice")
        seen.add(name)
        for key in _SERVER_FIELDS:
            meta.pop(key, None)
        meta.setdefault("labels", {}).setdefault("kubernetes.io/hostname", name)
        status = node.setdefault("status", {})
        if not status.get("allocatable") and not status.get("capacity"):
            raise NodesError(f"{here} ({name}): status.allocatable (or capacity) is missing")
        status.setdefault("capacity", dict(status.get("allocatable") or {}))
        status.setdefault("allocatable", dict(status["capacity"]))
        # The agent posts its own Ready condition; stale heartbeats from a copied cluster
        # would only mislead.
        status.pop("conditions", None)
        node.setdefault("spec", {}).pop("providerID", None)
        nodes.append(node)
    if not nodes:
        raise NodesError(f"{where}: no Node in the file")
    return nodes

