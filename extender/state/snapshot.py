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

from extender.engine.cluster import Clock, ClusterState
from extender.model import k8s
from extender.model.quantity import QuantityError

_KINDS = k8s.KINDS


class SnapshotError(ValueError):
    """A snapshot that cannot be loaded; the message names the file and the object."""


class _Envelope(msgspec.Struct):
    kind: str = ""
    items: list[msgspec.Raw] | None = None


_envelope = msgspec.json.Decoder(_Envelope)
_raw_array = msgspec.json.Decoder(list[msgspec.Raw])


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise SnapshotError(f"{path}: {exc.strerror}") from None


def _yaml_documents(data: bytes, path: Path) -> list[Any]:
    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        return [doc for doc in yaml.load_all(data, Loader=loader) if doc is not None]
    except yaml.YAMLError as exc:
        raise SnapshotError(f"{path}: invalid YAML: {exc}") from None


def read_documents(path: str | Path) -> list[Any]:
    """Parse a JSON or (multi-document) YAML file into Python objects (small files: workloads)."""
    path = Path(path)
    data = _read(path)
    if data.lstrip()[:1] in (b"{", b"["):
        try:
            return [msgspec.json.decode(data)]
        except msgspec.DecodeError as exc:
            raise SnapshotError(f"{path}: invalid JSON: {exc}") from None
    return _yaml_documents(data, path)


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


def _raw_documents(path: Path) -> list[Any]:
    """Like `read_documents`, but JSON objects stay raw bytes until typed one by one, so a
    600 MB snapshot never becomes gigabytes of dicts."""
    data = _read(path)
    stripped = data.lstrip()
    if stripped[:1] not in (b"{", b"["):
        return _yaml_documents(data, path)
    try:
        if stripped[:1] == b"[":
            return list(_raw_array.decode(data))
        return [msgspec.Raw(data)]
    except msgspec.DecodeError as exc:
        raise SnapshotError(f"{path}: invalid JSON: {exc}") from None


def _typed_objects(documents: list[Any], where: str) -> Iterator[tuple[str, Any]]:
    """Flatten Lists and arrays into (kind, typed object) for the kinds the state keeps."""
    for doc in documents:
        if isinstance(doc, list):
            yield from _typed_objects(doc, where)
        elif isinstance(doc, msgspec.Raw):
            try:
                envelope = _envelope.decode(doc)
            except msgspec.DecodeError as exc:
                raise SnapshotError(f"{where}: invalid JSON: {exc}") from None
            if envelope.items is not None and (envelope.kind or "List").endswith("List"):
                yield from _typed_objects(envelope.items, where)
            elif envelope.kind in _KINDS:
                yield envelope.kind, _typed(doc, envelope.kind, where)
        elif isinstance(doc, dict):
            if isinstance(doc.get("items"), list) and str(doc.get("kind", "List")).endswith("List"):
                yield from _typed_objects(doc["items"], where)
            elif doc.get("kind") in _KINDS:
                yield doc["kind"], _typed(doc, doc["kind"], where)


def _typed(obj: msgspec.Raw | dict[str, Any], kind: str, where: str) -> Any:
    model = _KINDS[kind]
    try:
        if isinstance(obj, msgspec.Raw):
            return k8s.decoder(model).decode(obj)
        return k8s.convert(obj, model)
    except msgspec.DecodeError as exc:
        name = obj.get("metadata", {}).get("name", "?") if isinstance(obj, dict) else "?"
        raise SnapshotError(f"{where}: {kind} {name!r}: {exc}") from None


def load_into(state: ClusterState, path: str | Path) -> dict[str, int]:
    """Load every supported object of the file into `state`; returns counts per kind."""
    counts = dict.fromkeys(_KINDS, 0)
    documents = _raw_documents(Path(path))
    # Each object is typed and applied in turn, so at most one decoded object is alive.
    for kind, typed in _typed_objects(documents, str(path)):
        try:
            state.apply(kind, typed)
        except QuantityError as exc:
            raise SnapshotError(f"{path}: {kind} {typed.metadata.name!r}: {exc}") from None
        counts[kind] += 1
    return counts


def load_snapshot(path: str | Path, clock: Clock | None = None) -> ClusterState:
    """A new `ClusterState` holding the snapshot's nodes, pods, PDBs and PriorityClasses."""
    state = ClusterState(clock) if clock else ClusterState()
    load_into(state, path)
    return state
