"""Load a cluster from `kubectl get nodes,pods,poddisruptionbudgets,priorityclasses -o json|yaml`.

Accepts a `List` (or any `*List`) with `items`, a single object, a JSON array, or a
multi-document YAML stream whose documents are any of those.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import yaml

from extender.model import k8s
from extender.model.quantity import QuantityError
from extender.state.cluster import Clock, ClusterState

_KINDS = {
    "Node": k8s.Node,
    "Pod": k8s.Pod,
    "PodDisruptionBudget": k8s.PodDisruptionBudget,
    "PriorityClass": k8s.PriorityClass,
}


class SnapshotError(ValueError):
    """A snapshot that cannot be loaded; the message names the file and the object."""


def read_documents(path: str | Path) -> list[Any]:
    """Parse a JSON or (multi-document) YAML file into Python objects."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SnapshotError(f"{path}: {exc.strerror}") from None
    stripped = data.lstrip()
    if stripped[:1] in (b"{", b"["):
        try:
            return [msgspec.json.decode(data)]
        except msgspec.DecodeError as exc:
            raise SnapshotError(f"{path}: invalid JSON: {exc}") from None
    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        return [doc for doc in yaml.load_all(data, Loader=loader) if doc is not None]
    except yaml.YAMLError as exc:
        raise SnapshotError(f"{path}: invalid YAML: {exc}") from None


def iter_objects(documents: list[Any]) -> Iterator[dict[str, Any]]:
    """Flatten Lists and arrays into the Kubernetes objects they hold."""
    for doc in documents:
        if isinstance(doc, list):
            yield from iter_objects(doc)
        elif isinstance(doc, dict):
            if isinstance(doc.get("items"), list) and str(doc.get("kind", "List")).endswith("List"):
                yield from iter_objects(doc["items"])
            else:
                yield doc


def typed_object(obj: dict[str, Any], where: str) -> tuple[str, Any] | None:
    """(kind, typed object) for the kinds the state keeps; None for other kinds."""
    kind = obj.get("kind")
    model = _KINDS.get(kind) if isinstance(kind, str) else None
    if model is None:
        return None
    try:
        return kind, k8s.convert(obj, model)
    except msgspec.ValidationError as exc:
        name = (obj.get("metadata") or {}).get("name", "?")
        raise SnapshotError(f"{where}: {kind} {name!r}: {exc}") from None


def load_into(state: ClusterState, path: str | Path) -> dict[str, int]:
    """Load every supported object of the file into `state`; returns counts per kind."""
    counts = dict.fromkeys(_KINDS, 0)
    nodes, pods, pdbs, pcs = [], [], [], []
    buckets = {"Node": nodes, "Pod": pods, "PodDisruptionBudget": pdbs, "PriorityClass": pcs}
    for obj in iter_objects(read_documents(path)):
        found = typed_object(obj, str(path))
        if found is None:
            continue
        kind, typed = found
        buckets[kind].append(typed)
        counts[kind] += 1
    try:
        for pc in pcs:
            state.apply_priority_class(pc)
        for pdb in pdbs:
            state.apply_pdb(pdb)
        for node in nodes:
            state.apply_node(node)
        for pod in pods:
            state.apply_pod(pod)
    except QuantityError as exc:
        raise SnapshotError(f"{path}: {exc}") from None
    return counts


def load_snapshot(path: str | Path, clock: Clock | None = None) -> ClusterState:
    """A new `ClusterState` holding the snapshot's nodes, pods, PDBs and PriorityClasses."""
    state = ClusterState(clock) if clock else ClusterState()
    load_into(state, path)
    return state
