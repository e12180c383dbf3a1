"""Load a cluster from `kubectl get nodes,pods,poddisruptionbudgets,priorityclasses -o json|yaml`.

Accepts a `List` (or any `*List`) with `items`, a single object, a JSON array, or a
multi-document YAML stream whose documents are any of those.
"""

from __future__ import annotations

import gc
import mmap
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import yaml

from extender.engine import registry
from extender.engine.cluster import Clock, ClusterState
from extender.model import k8s
from extender.model.quantity import QuantityError, nano_value
from extender.model.yamltext import yaml_error
from extender.state import fieldcheck

#: What a snapshot's objects may be (kube-scheduler's kinds and the plugins' resources).
_KINDS = registry.KINDS


class SnapshotError(ValueError):
    """A snapshot that cannot be loaded; the message names the file and the object."""


class _Envelope(msgspec.Struct):
    kind: str = ""
    items: list[msgspec.Raw] | None = None


_envelope = msgspec.json.Decoder(_Envelope)
_raw_array = msgspec.json.Decoder(list[msgspec.Raw])


class _ListedPod(k8s.Pod):
    """A Pod with the two members `_Envelope` reads of it: decoding an item as this checks
    what the envelope would (and fails where it would fail) in the same pass as the Pod."""

    kind: str = ""
    items: list[msgspec.Raw] | None = None


_listed_pod = msgspec.json.Decoder(_ListedPod)
#: An item that starts as kubectl writes a Pod (`{"apiVersion":"v1","kind":"Pod",`): a hint
#: only, `_ListedPod.kind` decides.
_POD_START = re.compile(rb'\{\s*(?:"apiVersion"\s*:\s*"[^"\\]*"\s*,\s*)?"kind"\s*:\s*"Pod"\s*[,}]')
#: The first byte `bytes.lstrip()` would keep.
_FIRST_BYTE = re.compile(rb"[^ \t\n\r\x0b\x0c]")


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise SnapshotError(f"{path}: {exc.strerror}") from None


def _map(path: Path) -> bytes | mmap.mmap:
    """The file's bytes, mapped rather than copied when it is a regular file (a 600 MB
    snapshot is then never copied; the mapping goes with the last raw item)."""
    try:
        with path.open("rb") as file:
            return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # not mappable (a pipe, an empty file): read it
        return _read(path)


class _KubernetesLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """YAML as Kubernetes reads it: an unquoted time (`creationTimestamp: 2026-11-20T10:00:00Z`)
    stays the string written, as sigs.k8s.io/yaml keeps it (go-yaml gives an `interface{}` the
    string), where PyYAML's default makes it a datetime no Kubernetes field holds."""


_KubernetesLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


def _yaml_documents(data: bytes, path: Path) -> list[Any]:
    try:
        return [doc for doc in yaml.load_all(data, Loader=_KubernetesLoader) if doc is not None]
    except yaml.YAMLError as exc:
        raise SnapshotError(f"{path}: invalid YAML: {yaml_error(exc)}") from None


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


def _mapped_documents(path: Path) -> tuple[list[Any], mmap.mmap | None]:
    """Like `read_documents`, but JSON objects stay raw bytes until typed one by one, so a
    600 MB snapshot never becomes gigabytes of dicts; with the file's mapping when the raw
    objects point into one."""
    data = _map(path)
    mapping = data if isinstance(data, mmap.mmap) else None
    first = _FIRST_BYTE.search(data)
    start = data[first.start():first.start() + 1] if first else b""
    if start not in (b"{", b"["):
        return _yaml_documents(data if isinstance(data, bytes) else data[:], path), None
    try:
        if start == b"[":
            return list(_raw_array.decode(data)), mapping
        return [msgspec.Raw(data)], mapping
    except msgspec.DecodeError as exc:
        raise SnapshotError(f"{path}: invalid JSON: {exc}") from None


#: A snapshot's first objects are checked for unknown field names (`fieldcheck`), the others
#: not: a hand-written or hand-edited file is small, and checking every object of a
#: 100 000-pod `kubectl get -o json` would cost about a quarter of its load.
FIELD_CHECK_LIMIT = 2000


class _FieldCheck:
    """Collects the unknown-field warnings of a snapshot's first FIELD_CHECK_LIMIT objects."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.left = FIELD_CHECK_LIMIT
        self.lines: list[str] = []

    def __call__(self, kind: str, obj: msgspec.Raw | dict[str, Any], typed: Any) -> None:
        if self.left <= 0:
            return
        self.left -= 1
        found = (fieldcheck.raw_unknown_fields(obj, kind) if isinstance(obj, msgspec.Raw)
                 else fieldcheck.unknown_fields(obj, kind))
        if found:
            self.lines += fieldcheck.warning_lines(
                f"{self.where}: {fieldcheck.describe(kind, typed)}", found)

    def warnings(self) -> list[str]:
        return fieldcheck.capped(self.lines, self.where)


def _typed_objects(documents: list[Any], where: str,
                   done: Callable[[int], None] | None = None,
                   check: _FieldCheck | None = None) -> Iterator[tuple[str, Any]]:
    """Flatten Lists and arrays into (kind, typed object) for the kinds the state keeps.
    `done` is told the size of each raw object once its turn is over; `check` is given each
    object before it is yielded."""
    for doc in documents:
        if isinstance(doc, list):
            yield from _typed_objects(doc, where, done, check)
        elif isinstance(doc, msgspec.Raw):
            if _POD_START.match(doc):  # most items: typed in one pass, envelope included
                try:
                    pod = _listed_pod.decode(doc)
                except msgspec.DecodeError:
                    pod = None  # the general path below reports it as it always has
                if pod is not None and pod.kind == "Pod":
                    if check is not None:
                        check("Pod", doc, pod)
                    yield "Pod", pod
                    if done is not None:
                        done(len(doc))
                    continue
            try:
                envelope = _envelope.decode(doc)
            except msgspec.DecodeError as exc:
                raise SnapshotError(f"{where}: invalid JSON: {exc}") from None
            if envelope.items is not None and (envelope.kind or "List").endswith("List"):
                yield from _typed_objects(envelope.items, where, done, check)
                continue  # its items were counted
            if envelope.kind in _KINDS:
                typed = _typed(doc, envelope.kind, where)
                if check is not None:
                    check(envelope.kind, doc, typed)
                yield envelope.kind, typed
            if done is not None:
                done(len(doc))
        elif isinstance(doc, dict):
            if isinstance(doc.get("items"), list) and str(doc.get("kind", "List")).endswith("List"):
                yield from _typed_objects(doc["items"], where, done, check)
            elif doc.get("kind") in _KINDS:
                typed = _typed(doc, doc["kind"], where)
                if check is not None:
                    check(doc["kind"], doc, typed)
                yield doc["kind"], typed


class _Release:
    """Drops the mapped file's pages that lie before every object not yet typed, as the load
    goes (RSS counts a mapping's resident pages: a 600 MB snapshot would otherwise sit in it
    whole until the end). The objects are typed in file order and each one's offset is at
    least the sizes of those before it summed, so those bytes are behind the load; a page read
    again after all would simply be read from the file again."""

    STEP = 32 << 20

    def __init__(self, mapping: mmap.mmap) -> None:
        self.mapping = mapping
        self.behind = 0  # bytes of typed objects: a lower bound of the offset reached
        self.released = 0

    def __call__(self, size: int) -> None:
        self.behind += size
        end = self.behind - self.behind % mmap.PAGESIZE
        if end - self.released >= self.STEP:
            self.mapping.madvise(mmap.MADV_DONTNEED, self.released, end - self.released)
            self.released = end


def _typed(obj: msgspec.Raw | dict[str, Any], kind: str, where: str) -> Any:
    model = _KINDS[kind]
    try:
        if isinstance(obj, msgspec.Raw):
            return k8s.decoder(model).decode(obj)
        return k8s.convert(obj, model)
    except msgspec.DecodeError as exc:
        name = obj.get("metadata", {}).get("name", "?") if isinstance(obj, dict) else "?"
        raise SnapshotError(f"{where}: {kind} {name!r}: {exc}") from None


def load_into(state: ClusterState, path: str | Path,
              warnings: list[str] | None = None) -> dict[str, int]:
    """Load every supported object of the file into `state`; returns counts per kind.
    Given a `warnings` list, appends to it the unknown field names of the file's objects
    (`fieldcheck`: `cluster.json: Pod default/web-0: spec.nodeSelectr: unknown field (did
    you mean nodeSelector?)`); the load is the same either way."""
    counts = dict.fromkeys(_KINDS, 0)
    documents, mapping = _mapped_documents(Path(path))
    release = _Release(mapping) if mapping is not None and hasattr(mapping, "madvise") else None
    # The cyclic garbage collector is paused while loading: the load makes no cycles, but it
    # keeps ~10 container objects per pod (views, label maps, tuples), and every automatic
    # collection would walk all of them again (a third of a 150 000-pod load went there).
    paused = gc.isenabled()
    gc.disable()
    try:
        # Each object is typed and applied in turn, so at most one decoded object is alive.
        check = _FieldCheck(str(path)) if warnings is not None else None
        for kind, typed in _typed_objects(documents, str(path), release, check):
            try:
                problem = quantity_problem(kind, typed)
                if problem is not None:
                    raise QuantityError(": ".join(problem))
                apply_object(state, kind, typed)
            except QuantityError as exc:
                raise SnapshotError(f"{path}: {kind} {typed.metadata.name!r}: {exc}") from None
            counts[kind] += 1
    finally:
        if paused:
            gc.enable()
    if check is not None and warnings is not None:
        warnings.extend(check.warnings())
    if not any(counts.values()):
        others = _other_kinds(documents)
        if others:  # a policy or a workload's events loaded "fine" as an empty cluster
            raise SnapshotError(
                f"{path}: holds {', '.join(others)} but no object of the kinds a cluster "
                f"snapshot holds ({', '.join(_KINDS)}): a snapshot is `kubectl get nodes,pods,"
                "poddisruptionbudgets,priorityclasses,... -A -o json` (or -o yaml)")
    return counts


def _other_kinds(documents: list[Any]) -> list[str]:
    """The kinds named at the top of `documents` (or of their Lists' items), in order; for a
    file that loaded no object (an empty one names none, and is an empty cluster)."""
    found: list[str] = []
    for doc in documents:
        if isinstance(doc, list):
            found += _other_kinds(doc)
            continue
        if isinstance(doc, msgspec.Raw):
            try:
                envelope = _envelope.decode(doc)
            except msgspec.DecodeError:
                continue
            kind, items = envelope.kind, envelope.items
        elif isinstance(doc, dict):
            kind, items = doc.get("kind"), doc.get("items")
        else:
            continue
        if isinstance(items, list):
            found += _other_kinds(items)
        elif isinstance(kind, str) and kind and kind not in found:
            found.append(kind)
    return found


def pod_uid(namespace: str | None, name: str, uid: str | None) -> str:
    """The uid a snapshot's pod is known by: its own, or for a pod without one (a
    hand-written file; keyed by uid, such pods would overwrite each other) a UUID of its
    namespace/name. Every reader of a snapshot's pods goes through this, so the state and the
    objects as written (the extender wire, the served API) name a pod alike."""
    return uid or k8s.derived_uid(namespace or "default", name)


def _bad_amount(amounts: k8s.ResourceList | None) -> str | None:
    """The name of the first amount the API server would refuse (not a quantity, or
    negative: `ValidateNonnegativeQuantity`), or None."""
    for name, raw in (amounts or {}).items():
        try:
            if nano_value(raw) < 0:
                return name
        except QuantityError:
            return name
    return None


def _resource_lists(kind: str, typed: Any) -> list[tuple[str, k8s.ResourceList | None]]:
    """(field path, amounts) of every resource list of a Pod or a Node that the API server
    holds to non-negative amounts. A container's limits come before its requests: a request
    the loader defaulted from a limit is then reported as the limit written."""
    if kind == "Node":
        return [("status.capacity", typed.status.capacity),
                ("status.allocatable", typed.status.allocatable)]
    spec = typed.spec
    lists: list[tuple[str, k8s.ResourceList | None]] = []
    for field, containers in (("containers", spec.containers),
                              ("initContainers", spec.init_containers)):
        for i, container in enumerate(containers or ()):
            if container.resources is not None:
                lists.append((f"spec.{field}[{i}].resources.limits", container.resources.limits))
                lists.append((f"spec.{field}[{i}].resources.requests",
                              container.resources.requests))
    if spec.resources is not None:
        lists.append(("spec.resources.limits", spec.resources.limits))
        lists.append(("spec.resources.requests", spec.resources.requests))
    lists.append(("spec.overhead", spec.overhead))
    return lists


def _pod_amounts_refused(spec: k8s.PodSpec) -> bool:
    """Whether any resource amount of the pod is one the API server would refuse: the
    common case (none) in plain loops, without building paths (a snapshot has 100 000s)."""
    for containers in (spec.containers, spec.init_containers):
        for container in containers or ():
            res = container.resources
            if res is not None and (_bad_amount(res.limits) or _bad_amount(res.requests)):
                return True
    res = spec.resources
    return (res is not None and bool(_bad_amount(res.limits) or _bad_amount(res.requests))) \
        or bool(_bad_amount(spec.overhead))


def quantity_problem(kind: str, typed: Any) -> tuple[str, str] | None:
    """(field path, what is wrong) of the first resource amount of a Pod or a Node that the
    API server would refuse — not a quantity, or negative (a negative request would free
    room on its node) —, or None."""
    if kind not in ("Pod", "Node") or (kind == "Pod" and not _pod_amounts_refused(typed.spec)):
        return None
    for path, amounts in _resource_lists(kind, typed):
        name = _bad_amount(amounts)
        if name is not None:
            assert amounts is not None
            raw = amounts[name]
            try:
                nano_value(raw)
            except QuantityError as exc:
                return f"{path}.{name}", str(exc)
            return f"{path}.{name}", f"must be greater than or equal to 0, got {raw}"
    return None


def apply_object(state: ClusterState, kind: str, typed: Any) -> None:
    """Add one object of a snapshot to the state, as `load_into` does."""
    if kind == "Pod":
        meta = typed.metadata
        meta.uid = pod_uid(meta.namespace, meta.name, meta.uid)
        state.apply_pod(typed)
    else:
        state.apply(kind, typed)


def typed_objects(path: str | Path) -> Iterator[tuple[str, Any]]:
    """(kind, typed object) of every supported object of the file, in the order `load_into`
    applies them (`serve --record` records a snapshot's load so)."""
    documents, _ = _mapped_documents(Path(path))
    yield from _typed_objects(documents, str(path))


def load_snapshot(path: str | Path, clock: Clock | None = None,
                  warnings: list[str] | None = None) -> ClusterState:
    """A new `ClusterState` holding the snapshot's nodes, pods, PDBs and PriorityClasses;
    `warnings`, when given, receives the unknown field names (`load_into`)."""
    state = ClusterState(clock) if clock else ClusterState()
    load_into(state, path, warnings)
    return state
