"""The simulator's workload: pending pods with arrival times, and timed cluster events.

A workload file is JSON or (multi-document) YAML holding, in any mix of `List`s, arrays and
documents:

* **Pods** (`kind: Pod`). Each arrives at its `metadata.creationTimestamp`; pods without one
  arrive at the start. A pod that already carries `spec.nodeName` is not scheduled: it is
  placed on that node when it arrives (as if bound by someone else).
* scheduler-plugins' **PodGroups** and **ElasticQuotas** (`scheduling.x-k8s.io/v1alpha1`,
  read by Coscheduling and CapacityScheduling). Each is created at its
  `metadata.creationTimestamp` (at the start without one, and then stamped with that time,
  as the API server stamps a new object); missing namespaces are `default`.
* **Events** (`kind: SimulationEvent`), each with a time and exactly one action::

      apiVersion: simulator.extender/v1
      kind: SimulationEvent
      at: 90s                 # after the start: 90, "90s", "1m30s", "250ms";
                              # or an RFC 3339 time on the creationTimestamp clock
      deletePod: default/web-1        # or {namespace: default, name: web-1}
      # addNode: {a Node object}      # a new node
      # updateNode: {a Node object}   # replaces the node of that name
      # deleteNode: node-7

Time 0 of the simulation is the earliest absolute time found among the pods'
creationTimestamps and the events' absolute times (or the epoch when there is none).
Pods arriving at the same time keep their order in the file, so do events; at equal times
pods arrive before events are applied.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec

from extender.model import k8s
from extender.model.pod import PodView
from extender.model.quantity import QuantityError
from extender.model.scheduling import ElasticQuotaView, PodGroupView
from extender.simulator.clock import MICROSECOND, SECOND, seconds
from extender.state.snapshot import iter_objects, read_documents

EVENT_KIND = "SimulationEvent"
#: Objects besides pods that a workload may create over time (kind -> model).
OBJECT_KINDS: dict[str, type] = {"PodGroup": k8s.PodGroup, "ElasticQuota": k8s.ElasticQuota}
ACTIONS = ("deletePod", "addNode", "updateNode", "deleteNode")
_UID_NAMESPACE = uuid.UUID("6f0c5d3e-8d1c-4a59-9d0e-5a1b2c3d4e5f")
_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(h|ms|us|µs|ns|m|s)")
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def parse_time_ns(text: object) -> int | None:
    """An RFC 3339 time as exact integer nanoseconds since the epoch (microsecond precision,
    as Kubernetes writes them); None when absent or unparsable. Floats would lose the
    sub-microsecond digits at today's epoch values and make arrival times drift."""
    if not isinstance(text, str) or not text:
        return None
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return (dt - _EPOCH) // timedelta(microseconds=1) * MICROSECOND


class WorkloadError(ValueError):
    """An invalid workload file; the message names the file and the object."""


@dataclass(slots=True)
class Arrival:
    """A pod entering the simulation at `time` (virtual ns)."""

    time: int
    pod: PodView
    raw: dict[str, Any]  # the object as written (with uid/namespace filled), for the wire


@dataclass(slots=True)
class ObjectArrival:
    """A PodGroup or ElasticQuota created at `time` (virtual ns)."""

    time: int
    kind: str  # one of OBJECT_KINDS
    obj: Any  # the typed object (k8s.PodGroup or k8s.ElasticQuota)
    #: Whether the file gave no creationTimestamp (the simulation stamps the arrival time).
    stamp: bool = False


@dataclass(slots=True)
class SimEvent:
    time: int
    action: str  # one of ACTIONS
    target: str = ""  # "ns/name" for deletePod, node name for deleteNode
    node: k8s.Node | None = None  # for addNode / updateNode
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Workload:
    arrivals: list[Arrival] = field(default_factory=list)
    events: list[SimEvent] = field(default_factory=list)
    objects: list[ObjectArrival] = field(default_factory=list)
    epoch_ns: int = 0  # the wall-clock time (ns since the epoch) that virtual time 0 stands for

    @property
    def epoch(self) -> float:
        """`epoch_ns` in seconds, the unit of PodView's start times."""
        return self.epoch_ns / SECOND


def parse_duration(text: str | float | int) -> float:
    """Seconds in a number or a Go duration string ("1h30m", "90s", "250ms")."""
    if isinstance(text, bool):
        raise ValueError(f"invalid duration {text!r}")
    if isinstance(text, int | float):
        return float(text)
    s = text.strip()
    try:
        return float(s)
    except ValueError:
        pass
    total, pos = 0.0, 0
    for m in _DURATION.finditer(s):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNIT_SECONDS[m.group(2)]
        pos = m.end()
    if pos != len(s) or not s:
        raise ValueError(f"invalid duration {text!r}")
    return total


def _fill_identity(obj: dict[str, Any]) -> dict[str, Any]:
    """A copy of a pod object with a namespace and a deterministic uid when they are absent."""
    obj = dict(obj)
    meta = dict(obj.get("metadata") or {})
    meta.setdefault("namespace", "default")
    if not meta.get("namespace"):
        meta["namespace"] = "default"
    if not meta.get("uid"):
        meta["uid"] = str(uuid.uuid5(_UID_NAMESPACE, f"{meta['namespace']}/{meta.get('name', '')}"))
    obj["metadata"] = meta
    return obj


def _event_time(doc: Mapping[str, Any], where: str) -> tuple[float | None, int | None]:
    """(relative seconds, absolute epoch ns): exactly one is set."""
    at = doc.get("at")
    if at is None:
        raise WorkloadError(f"{where}: SimulationEvent needs `at`")
    if isinstance(at, str) and ("T" in at or at.count("-") >= 2):
        absolute = parse_time_ns(at)
        if absolute is None:
            raise WorkloadError(f"{where}: invalid time {at!r}")
        return None, absolute
    try:
        return parse_duration(at), None
    except ValueError as exc:
        raise WorkloadError(f"{where}: {exc}") from None


def _pod_target(value: Any, where: str) -> str:
    if isinstance(value, str):
        namespace, _, name = value.rpartition("/")
        return f"{namespace or 'default'}/{name}"
    if isinstance(value, Mapping) and value.get("name"):
        return f"{value.get('namespace') or 'default'}/{value['name']}"
    raise WorkloadError(f"{where}: deletePod needs 'namespace/name' or {{namespace, name}}")


def _parse_event(doc: Mapping[str, Any], where: str) -> tuple[SimEvent, float | None, int | None]:
    actions = [a for a in ACTIONS if a in doc]
    if len(actions) != 1:
        raise WorkloadError(f"{where}: SimulationEvent needs exactly one of {', '.join(ACTIONS)}")
    action = actions[0]
    relative, absolute = _event_time(doc, where)
    event = SimEvent(0, action, raw=dict(doc))
    value = doc[action]
    if action == "deletePod":
        event.target = _pod_target(value, where)
    elif action == "deleteNode":
        if not isinstance(value, str) or not value:
            raise WorkloadError(f"{where}: deleteNode needs a node name")
        event.target = value
    else:
        if not isinstance(value, Mapping):
            raise WorkloadError(f"{where}: {action} needs a Node object")
        try:
            event.node = k8s.convert(dict(value), k8s.Node)
        except msgspec.ValidationError as exc:
            raise WorkloadError(f"{where}: {action}: {exc}") from None
        event.target = event.node.metadata.name
        if not event.target:
            raise WorkloadError(f"{where}: {action}: the node needs metadata.name")
    return event, relative, absolute


def load_workload(path: str | Path) -> Workload:
    """Read pods and events; times are resolved to virtual nanoseconds."""
    where = str(path)
    try:
        documents = read_documents(path)
    except ValueError as exc:
        raise WorkloadError(str(exc)) from None
    pods: list[tuple[dict[str, Any], PodView, int | None]] = []
    events: list[tuple[SimEvent, float | None, int | None]] = []
    objects: list[tuple[str, Any, int | None]] = []
    seen: set[str] = set()
    for obj in iter_objects(documents):
        kind = obj.get("kind")
        if kind == EVENT_KIND:
            events.append(_parse_event(obj, where))
        elif kind in OBJECT_KINDS:
            objects.append(_parse_object(kind, obj, where, seen))
        elif kind == "Pod" or (kind is None and "spec" in obj and "containers" in (obj.get("spec") or {})):
            raw = _fill_identity(obj)
            name = raw["metadata"].get("name")
            if not name:
                raise WorkloadError(f"{where}: a Pod needs metadata.name")
            key = f"{raw['metadata']['namespace']}/{name}"
            if key in seen:
                raise WorkloadError(f"{where}: Pod {key} appears twice")
            seen.add(key)
            try:
                view = PodView.from_k8s(k8s.convert(raw, k8s.Pod))
            except (msgspec.ValidationError, QuantityError) as exc:
                raise WorkloadError(f"{where}: Pod {key}: {exc}") from None
            pods.append((raw, view, parse_time_ns(raw["metadata"].get("creationTimestamp"))))
    absolutes = [t for _, _, t in pods if t is not None]
    absolutes += [a for _, _, a in events if a is not None]
    absolutes += [t for _, _, t in objects if t is not None]
    epoch = min(absolutes) if absolutes else 0
    workload = Workload(epoch_ns=epoch)
    for raw, view, created in pods:
        workload.arrivals.append(Arrival(created - epoch if created is not None else 0, view, raw))
    for kind, typed, created in objects:
        workload.objects.append(ObjectArrival(created - epoch if created is not None else 0, kind,
                                              typed, created is None))
    for event, relative, absolute in events:
        event.time = seconds(relative) if relative is not None else absolute - epoch  # type: ignore[operator]
        if event.time < 0:
            raise WorkloadError(f"{where}: SimulationEvent at a negative time")
        workload.events.append(event)
    # Stable sorts: equal times keep file order.
    workload.arrivals.sort(key=lambda a: a.time)
    workload.events.sort(key=lambda e: e.time)
    workload.objects.sort(key=lambda o: o.time)
    return workload


def _parse_object(kind: str, obj: dict[str, Any], where: str,
                  seen: set[str]) -> tuple[str, Any, int | None]:
    """(kind, typed object, creation time in epoch ns or None) of a PodGroup/ElasticQuota."""
    raw = dict(obj)
    meta = dict(raw.get("metadata") or {})
    if not meta.get("name"):
        raise WorkloadError(f"{where}: a {kind} needs metadata.name")
    meta["namespace"] = meta.get("namespace") or "default"
    raw["metadata"] = meta
    key = f"{kind} {meta['namespace']}/{meta['name']}"
    if key in seen:
        raise WorkloadError(f"{where}: {key} appears twice")
    seen.add(key)
    try:
        typed = k8s.convert(raw, OBJECT_KINDS[kind])
        # The state converts the quantities when it takes the object: check them now.
        (PodGroupView if kind == "PodGroup" else ElasticQuotaView)(typed)
    except (msgspec.ValidationError, QuantityError, ValueError) as exc:
        raise WorkloadError(f"{where}: {key}: {exc}") from None
    return kind, typed, parse_time_ns(meta.get("creationTimestamp"))
