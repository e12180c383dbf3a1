"""`NodeView`: what the engine reads of a Node, built once per node change."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import msgspec

from extender.model import k8s
from extender.model.resources import Resources, resources_from_list
from extender.model.taints import Taint

_EMPTY_LABELS: Mapping[str, str] = {}


def normalized_image_name(name: str) -> str:
    """ImageLocality's normalisation: add `:latest` when the name carries no tag."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


#: Image name as a node lists it -> its normalised name: one string object per name for every
#: node listing it (5000 nodes list ~800 distinct names ~270 000 times). Cleared when full.
_normalized: dict[str, str] = {}
_NORMALIZED_LIMIT = 65536


def image_sizes(images: Iterable[k8s.ContainerImage] | None) -> dict[str, int]:
    """`status.images` as ImageLocality reads it: normalised name -> size in bytes."""
    sizes: dict[str, int] = {}
    normalized = _normalized
    for image in images or ():
        size = image.size_bytes
        for name in image.names or ():
            found = normalized.get(name)
            if found is None:
                if len(normalized) >= _NORMALIZED_LIMIT:
                    normalized.clear()
                found = normalized[name] = normalized_image_name(name)
            sizes[found] = size
    return sizes


_images_decoder = msgspec.json.Decoder(list[k8s.ContainerImage] | None)

#: `status.allocatable` / `status.capacity` as sent -> its vector: nodes of one instance type
#: list the same amounts (vectors are never changed in place). Cleared when full.
_resource_lists: dict[tuple, Resources] = {}


def _resources(items: k8s.ResourceList | None) -> Resources:
    if not items:
        return resources_from_list(items)
    key = tuple(items.items())
    found = _resource_lists.get(key)
    if found is None:
        found = resources_from_list(items)
        if len(_resource_lists) >= _NORMALIZED_LIMIT:
            _resource_lists.clear()
        _resource_lists[key] = found
    return found


class InvalidNodeImages(ValueError):
    """A request's node whose `status.images` does not decode (read on first use)."""


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
                 "_images", "resource_version", "memo")

    name: str
    uid: str
    labels: Mapping[str, str]
    taints: TaintSet
    unschedulable: bool
    allocatable: Resources
    #: `status.capacity` (TargetLoadPacking reads the cpu capacity, not the allocatable).
    capacity: Resources
    #: The `images` property: normalised image name -> size in bytes, or (a request's node,
    #: `from_request`) the image list's bytes until first read.
    _images: Mapping[str, int] | msgspec.Raw
    resource_version: str
    #: Each user's entries under its own keys: a value's type is the user's to know.
    memo: dict[Signature, object]

    @classmethod
    def from_k8s(cls, node: k8s.Node) -> NodeView:
        self = cls._built(node.metadata, node.spec, node.status.allocatable, node.status.capacity)
        self._images = image_sizes(node.status.images)
        return self

    @classmethod
    def from_request(cls, node: k8s.RequestNode) -> NodeView:
        """The view of a request's node (`Nodes` form): what `from_k8s` gives for the same
        object, its images decoded on first read."""
        self = cls._built(node.metadata, node.spec, node.status.allocatable, node.status.capacity)
        raw = node.status.images
        self._images = raw if len(raw) else {}
        return self

    @classmethod
    def _built(cls, meta: k8s.ObjectMeta | k8s.RequestNodeMeta, spec: k8s.NodeSpec,
               allocatable: k8s.ResourceList | None, capacity: k8s.ResourceList | None,
               ) -> NodeView:
        self = cls.__new__(cls)
        self.name = meta.name
        self.uid = meta.uid
        self.resource_version = meta.resource_version
        self.memo = {}
        self.labels = meta.labels or _EMPTY_LABELS
        taints = spec.taints
        self.taints = intern_taints(tuple(Taint(t.key, t.value, t.effect) for t in taints)
                                    ) if taints else EMPTY_TAINTS
        self.unschedulable = spec.unschedulable
        self.allocatable = _resources(allocatable)
        self.capacity = _resources(capacity)
        return self

    @property
    def images(self) -> Mapping[str, int]:
        """Normalised image name -> size in bytes (ImageLocality)."""
        images = self._images
        if images.__class__ is msgspec.Raw:
            try:
                images = image_sizes(_images_decoder.decode(images))  # type: ignore[arg-type]
            except msgspec.DecodeError as exc:
                raise InvalidNodeImages(f"node {self.name!r}: status.images: {exc}") from None
            self._images = images
        return images  # type: ignore[return-value]

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
    65 536 entries (normalised image names and node resource lists: when it reaches
    65 536)."""
    return {"pod_signatures": len(_signatures), "taint_sets": len(_interned_taints),
            "image_names": len(_normalized), "node_resource_lists": len(_resource_lists)}
