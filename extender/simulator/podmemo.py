"""What an attempt found, kept for the pod's next attempt and for its replicas' attempts.

An entry holds verdicts per node taken at a stamp of `changes.NodeChanges`; a later attempt
reuses the verdicts of the nodes that did not change since. Verdicts of node-local plugins
depend on the node and on the pod's content, not on which pod it is, so pods of one workload
(the same content but for name, uid and creation time, as the server's reply reuse keys them:
`api.reading.pod_signature`) share entries. One exception: a pod nominated to a node does not
count its own reservation there (`nominated_ahead` skips it by uid), so a nominated pod's
verdicts are its own and it takes none from others.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from operator import attrgetter
from typing import Generic, TypeVar

from extender.model.pod import PodView
from extender.simulator.queue import STATUS_FIELDS

T = TypeVar("T")

#: What names one pod object rather than describes it.
_IDENTITY = frozenset({"uid", "name", "creation_time"})

#: Every field of a pod but its status: what a verdict may read of the incoming pod.
_spec = attrgetter(*(name for name in PodView.__slots__ if name not in STATUS_FIELDS))
#: The same without identity: equal for a workload's pods.
_shape = attrgetter(*(name for name in PodView.__slots__
                      if name not in STATUS_FIELDS and name not in _IDENTITY))

#: Distinct pod shapes remembered (each entry holds a verdict per node).
SHAPES_KEPT = 4096


def same_spec(old: PodView, new: PodView) -> bool:
    """Whether `new` is `old`, or a copy that differs in status fields only (a nomination
    patch): field by field identity, since such copies share every other field."""
    return old is new or all(a is b for a, b in zip(_spec(old), _spec(new), strict=True))


def same_shape(a: PodView, b: PodView) -> bool:
    """Whether two pods have the same content but for identity and status (by value; a field
    without value equality, such as a node-affinity matcher, keeps its pod to itself)."""
    return a is b or _shape(a) == _shape(b)


def _bucket(pod: PodView) -> tuple[object, ...]:
    """A hashable digest of the shape: equal shapes fall into one bucket."""
    requests = pod.requests
    return (pod.namespace, pod.priority, pod.placement_key, requests.milli_cpu,
            requests.memory, pod.images)


@dataclass(slots=True)
class Entry(Generic[T]):
    pod: PodView
    stamp: int
    value: T


class PodMemo(Generic[T]):
    """Entries by pod uid, and by shape for pods nominated nowhere."""

    __slots__ = ("_own", "_shapes")

    def __init__(self) -> None:
        self._own: dict[str, Entry[T]] = {}
        self._shapes: OrderedDict[tuple[object, ...], list[Entry[T]]] = OrderedDict()

    def get(self, pod: PodView, nominated: bool) -> Entry[T] | None:
        """The freshest entry the pod may use: its own (taken from a copy of it that differs
        in status only), or, when it is nominated nowhere, one of a pod of its shape."""
        own = self._own.get(pod.uid)
        if own is not None and not same_spec(own.pod, pod):
            own = None
        if nominated:
            return own
        bucket = self._shapes.get(_bucket(pod))
        shared = next((e for e in bucket if same_shape(e.pod, pod)), None) if bucket else None
        if shared is None or (own is not None and own.stamp >= shared.stamp):
            return own
        return shared

    def put(self, pod: PodView, nominated: bool, stamp: int, value: T) -> None:
        """Keep `value`, found for `pod` at `stamp`; shared with its shape unless the pod is
        nominated (its verdicts then leave out its own reservation)."""
        entry = Entry(pod, stamp, value)
        self._own[pod.uid] = entry
        if nominated:
            return
        key = _bucket(pod)
        bucket = self._shapes.get(key)
        if bucket is None:
            self._shapes[key] = [entry]
            if len(self._shapes) > SHAPES_KEPT:
                self._shapes.popitem(last=False)
            return
        self._shapes.move_to_end(key)
        for i, old in enumerate(bucket):
            if same_shape(old.pod, pod):
                bucket[i] = entry
                return
        bucket.append(entry)

    def forget(self, uid: str) -> None:
        """The pod is bound or gone (its shape's entry stays, for its replicas)."""
        self._own.pop(uid, None)

    def __len__(self) -> int:
        return len(self._own)
