"""`NodeView`: what the engine reads of a Node, built once per node change."""

from __future__ import annotations

from collections.abc import Mapping

from extender.model import k8s
from extender.model.resources import Resources, resources_from_list
from extender.model.taints import Taint

_EMPTY_LABELS: Mapping[str, str] = {}


def normalized_image_name(name: str) -> str:
    """ImageLocality's normalisation: add `:latest` when the name carries no tag."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


class TaintSet(tuple):
    """A node's taints. Interned by the state so nodes with equal taints share one object,
    which lets a request evaluate each distinct taint set once."""

    __slots__ = ()


EMPTY_TAINTS = TaintSet()
_interned_taints: dict[tuple[Taint, ...], TaintSet] = {(): EMPTY_TAINTS}


def intern_taints(taints: tuple[Taint, ...]) -> TaintSet:
    found = _interned_taints.get(taints)
    if found is None:
        if len(_interned_taints) > 65536:
            _interned_taints.clear()
            _interned_taints[()] = EMPTY_TAINTS
        found = _interned_taints[taints] = TaintSet(taints)
    return found


class Signature:
    """An interned key for per-node memos: equal parts give the same object, so a memo lookup
    hashes by identity (no tuple hashing per node)."""

    __slots__ = ("parts", "__weakref__")

    def __init__(self, parts: tuple) -> None:
        self.parts = parts

    def __repr__(self) -> str:
        return f"Signature{self.parts!r}"


_signatures: dict[tuple, Signature] = {}
_MEMO_LIMIT = 64  # distinct pod signatures remembered per node view


def signature(*parts: object) -> Signature:
    """The interned signature for `parts` (hashable)."""
    found = _signatures.get(parts)
    if found is None:
        if len(_signatures) > 65536:
            _signatures.clear()
        found = _signatures[parts] = Signature(parts)
    return found


class NodeView:
    """An immutable view of a Node. Build with `NodeView.from_k8s`.

    `memo` caches results that depend only on this view and a pod `Signature` (a verdict of
    the label filters, a preferred-affinity sum...): pods of one workload share a spec, and a
    node change replaces the view, which drops its memo. An entry that also depends on the
    node's pods must carry the load it was computed for and be checked against it on reuse
    (`engine.scores.resource_allocation.LoadMemo`).
    """

    __slots__ = ("name", "uid", "labels", "taints", "unschedulable", "allocatable", "capacity",
                 "images", "resource_version", "memo")

    name: str
    uid: str
    labels: Mapping[str, str]
    taints: TaintSet
    unschedulable: bool
    allocatable: Resources
    #: `status.capacity` (TargetLoadPacking reads the cpu capacity, not the allocatable).
    capacity: Resources
    images: Mapping[str, int]  # normalised image name -> size in bytes
    resource_version: str
    #: Each user's entries under its own keys: a value's type is the user's to know.
    memo: dict[Signature, object]

    @classmethod
    def from_k8s(cls, node: k8s.Node) -> NodeView:
        self = cls.__new__(cls)
        self.name = node.metadata.name
        self.uid = node.metadata.uid
        self.resource_version = node.metadata.resource_version
        self.memo = {}
        self.labels = node.metadata.labels or _EMPTY_LABELS
        self.taints = intern_taints(tuple(Taint(t.key, t.value, t.effect) for t in node.spec.taints or ()))
        self.unschedulable = node.spec.unschedulable
        self.allocatable = resources_from_list(node.status.allocatable)
        self.capacity = resources_from_list(node.status.capacity)
        images: dict[str, int] = {}
        for image in node.status.images or ():
            for image_name in image.names or ():
                images[normalized_image_name(image_name)] = image.size_bytes
        self.images = images
        return self

    def remember(self, key: Signature, value: object) -> object:
        """Store a memo entry (bounded: the oldest half goes when full); returns `value`.

        Safe when a large request in the worker thread and a small one on the loop fill the
        same memo: each step is one dict operation, and an entry another thread evicted first
        is simply gone (every entry is a pure function of its key)."""
        memo = self.memo
        if len(memo) >= _MEMO_LIMIT:
            for old in list(memo)[: _MEMO_LIMIT // 2]:
                memo.pop(old, None)
        memo[key] = value
        return value

    def __repr__(self) -> str:
        return f"NodeView({self.name!r})"


def interned_sizes() -> dict[str, int]:
    """Entries in the intern tables (exported as metrics): each is cleared when it passes
    65 536 entries."""
    return {"pod_signatures": len(_signatures), "taint_sets": len(_interned_taints)}
