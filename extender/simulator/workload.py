"""The simulator's workload: pods with arrival times and lifetimes, the controllers that
create pods, and timed cluster events.

A workload file is JSON or (multi-document) YAML holding, in any mix of `List`s, arrays and
documents:

* **Pods** (`kind: Pod`). Each arrives at its `metadata.creationTimestamp`; pods without one
  arrive at the start. A pod that already carries `spec.nodeName` is not scheduled: it is
  placed on that node when it arrives (as if bound by someone else).
* **Workload controllers** (`Deployment`, `ReplicaSet`, `StatefulSet`, `Job`, `DaemonSet`),
  expanded into pods the way their controllers create them (`controllers.py`: names, labels,
  owner references, order); each is created at its `metadata.creationTimestamp`.
* scheduler-plugins' **PodGroups** and **ElasticQuotas** (`scheduling.x-k8s.io/v1alpha1`,
  read by Coscheduling and CapacityScheduling), and **PriorityClasses**. Each is created at
  its `metadata.creationTimestamp` (at the start without one, and then stamped with that
  time, as the API server stamps a new object); missing namespaces are `default`.
* **Events** (`kind: SimulationEvent`), each with a time and exactly one action::

      apiVersion: simulator.extender/v1
      kind: SimulationEvent
      at: 90s                 # after the start: 90, "90s", "1m30s", "250ms";
                              # or an RFC 3339 time on the creationTimestamp clock
      deletePod: default/web-1        # or {namespace: default, name: web-1}
      # addNode: {a Node object}      # a new node
      # updateNode: {a Node object}   # replaces the node of that name
      # deleteNode: node-7
      # cordonNode: node-7            # spec.unschedulable: true (kubectl cordon)
      # uncordonNode: node-7          # spec.unschedulable: false (kubectl uncordon)

Any other kind is an error naming the kind and where it is in the file.

**Lifetimes.** A pod runs for ever once bound, unless its annotations (on the Pod, or on a
controller's `spec.template.metadata`) give it a lifetime::

    simulator.extender/run-for: 10m      # seconds or a Go duration, counted from the bind
    simulator.extender/finish: Failed    # its phase then: Succeeded (default) or Failed

A Job's pods must say how long they run (`run-for` is required on a Job's template: a Job
exists to complete, and no default duration would be right).

Time 0 of the simulation is the earliest absolute time found among the pods', controllers'
and objects' creationTimestamps and the events' absolute times (or the epoch when there is
none). Pods arriving at the same time keep their order in the file (a controller's pods at
its place, in index order), so do events; at equal times pods arrive before events are
applied.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from extender.engine import registry
from extender.model import k8s
from extender.model.pod import PodView
from extender.model.quantity import QuantityError
from extender.simulator.arrivals import (
    Arrival,
    ObjectArrival,
    WorkloadError,
    creation_time_ns,
    default_requests,
    parse_duration,
    parse_time_ns,
    pod_lifetime,
    typed_pod,
)
from extender.simulator.clock import SECOND, seconds
from extender.state import fieldcheck
from extender.state.snapshot import pod_uid, quantity_problem, read_documents

if TYPE_CHECKING:
    from extender.simulator.controllers import Controller

EVENT_KIND = "SimulationEvent"


def object_kinds() -> dict[str, type]:
    """Objects besides pods that a workload may create over time (kind -> model): a
    PriorityClass, and the objects of every registered plugin's resources (PodGroup,
    ElasticQuota, …)."""
    return {**{r.kind: r.struct for r in registry.WATCHED.values()},
            "PriorityClass": k8s.PriorityClass}


def cluster_scoped() -> frozenset[str]:
    """Of those, the kinds without a namespace."""
    return frozenset({"PriorityClass", *(r.kind for r in registry.WATCHED.values()
                                         if not r.namespaced)})


#: The owners controllers create that reach the cluster state (PodTopologySpread's default
#: constraints read their selectors): ObjectArrivals of these kinds carry a k8s.ReplicaSet or
#: k8s.StatefulSet.
OWNER_KINDS: dict[str, type] = {"ReplicaSet": k8s.ReplicaSet, "StatefulSet": k8s.StatefulSet}
#: The workload controllers a file may hold (see `controllers.py`).
CONTROLLER_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "Job", "DaemonSet")
ACTIONS = ("deletePod", "addNode", "updateNode", "deleteNode", "cordonNode", "uncordonNode")
#: The actions whose value is a node name.
NODE_NAME_ACTIONS = ("deleteNode", "cordonNode", "uncordonNode")


def supported_kinds() -> tuple[str, ...]:
    """The kinds a workload file may hold."""
    return ("Pod", *CONTROLLER_KINDS, *object_kinds(), EVENT_KIND)


_FILE_POD = "a Pod of the file"
#: Where the object is when it is the file's only one (`_located`).
ROOT = "(root)"


@dataclass(slots=True)
class SimEvent:
    time: int
    action: str  # one of ACTIONS
    #: "ns/name" for deletePod; the node's name for the node actions
    target: str = ""
    node: k8s.Node | None = None  # for addNode / updateNode
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Workload:
    #: Pods known when the file is read: the file's Pods and the pods controllers create at
    #: their own creation (ReplicaSet and Deployment replicas, a Parallel StatefulSet's pods,
    #: the first ordinal of an OrderedReady one, a Job's first pods).
    arrivals: list[Arrival] = field(default_factory=list)
    events: list[SimEvent] = field(default_factory=list)
    objects: list[ObjectArrival] = field(default_factory=list)
    #: Every workload controller, by creation time (file order at equal times); a
    #: Deployment is represented by the ReplicaSet it creates. The loop calls their hooks
    #: (`controllers.Controller`) for the pods they create later.
    controllers: list[Controller] = field(default_factory=list)
    epoch_ns: int = 0  # the wall-clock time (ns since the epoch) that virtual time 0 stands for
    #: Things in the file the simulation ignores (unknown field names, a suspended Job,
    #: volume claim templates).
    warnings: list[str] = field(default_factory=list)

    @property
    def epoch(self) -> float:
        """`epoch_ns` in seconds, the unit of PodView's start times."""
        return self.epoch_ns / SECOND


def _fill_identity(obj: dict[str, Any]) -> dict[str, Any]:
    """A copy of a pod object with a namespace and a deterministic uid when they are absent,
    and its spec defaulted as the API server defaults it."""
    obj = dict(obj)
    if isinstance(obj.get("spec"), dict):
        obj["spec"] = default_requests(obj["spec"])
    meta = dict(obj.get("metadata") or {})
    meta.setdefault("namespace", "default")
    if not meta.get("namespace"):
        meta["namespace"] = "default"
    meta["uid"] = pod_uid(meta["namespace"], meta.get("name", ""), meta.get("uid"))
    obj["metadata"] = meta
    return obj


def field_path(loc: str, path: str) -> str:
    """A field of the object at `loc` in the file (`_located`): `[1].at`, or `at` when the
    object is the file's only one."""
    return path if loc == ROOT else f"{loc}.{path}"


def _event_time(doc: Mapping[str, Any], file: str,
                loc: str) -> tuple[float | None, int | None]:
    """(relative seconds, absolute epoch ns): exactly one is set."""
    at = doc.get("at")
    if at is None:
        raise WorkloadError(f"{file}: {loc}: SimulationEvent needs `at`")
    try:
        if isinstance(at, str) and ("T" in at or at.count("-") >= 2):
            return None, parse_time_ns(at)
        return parse_duration(at), None
    except ValueError as exc:
        raise WorkloadError(f"{file}: {field_path(loc, 'at')}: {exc}") from None


def _pod_target(value: Any, where: str) -> str:
    if isinstance(value, str):
        namespace, _, name = value.rpartition("/")
        return f"{namespace or 'default'}/{name}"
    if isinstance(value, Mapping) and value.get("name"):
        return f"{value.get('namespace') or 'default'}/{value['name']}"
    raise WorkloadError(f"{where}: deletePod needs 'namespace/name' or {{namespace, name}}")


def _parse_event(doc: Mapping[str, Any], file: str,
                 loc: str) -> tuple[SimEvent, float | None, int | None]:
    where = f"{file}: {loc}"
    actions = [a for a in ACTIONS if a in doc]
    if len(actions) != 1:
        raise WorkloadError(f"{where}: SimulationEvent needs exactly one of {', '.join(ACTIONS)}")
    action = actions[0]
    relative, absolute = _event_time(doc, file, loc)
    event = SimEvent(0, action, raw=dict(doc))
    value = doc[action]
    if action == "deletePod":
        event.target = _pod_target(value, where)
    elif action in NODE_NAME_ACTIONS:
        if not isinstance(value, str) or not value:
            raise WorkloadError(f"{where}: {action} needs a node name")
        event.target = value
    else:
        if not isinstance(value, Mapping):
            raise WorkloadError(f"{where}: {action} needs a Node object")
        try:
            event.node = k8s.convert(dict(value), k8s.Node)
        except msgspec.ValidationError as exc:
            raise WorkloadError(f"{where}: {action}: {exc}") from None
        problem = quantity_problem("Node", event.node)
        if problem is not None:
            field, what = problem
            raise WorkloadError(f"{file}: {field_path(loc, f'{action}.{field}')}: {what}")
        event.target = event.node.metadata.name
        if not event.target:
            raise WorkloadError(f"{where}: {action}: the node needs metadata.name")
    return event, relative, absolute


def _located(documents: list[Any]) -> Iterator[tuple[str, Any]]:
    """Every object of the file with where it is: `items[3]`, `[1]` (the second YAML
    document), `[1].items[0]`, `[2][0]` (a JSON array in the third document)."""
    def walk(value: Any, path: str) -> Iterator[tuple[str, Any]]:
        if isinstance(value, list):
            for i, item in enumerate(value):
                yield from walk(item, f"{path}[{i}]")
        elif (isinstance(value, dict) and str(value.get("kind", "List")).endswith("List")
              and "items" in value and isinstance(value["items"], list | None)):
            for i, item in enumerate(value.get("items") or ()):
                yield from walk(item, f"{path}{'.' if path else ''}items[{i}]")
        else:
            yield path or ROOT, value

    if len(documents) == 1:
        yield from walk(documents[0], "")
    else:
        for i, doc in enumerate(documents):
            yield from walk(doc, f"[{i}]")


def _describe(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    if not name:
        return ""
    namespace = meta.get("namespace") if isinstance(meta, Mapping) else None
    return f" ({namespace}/{name})" if namespace else f" ({name})"


def _unknown_fields(obj: dict[str, Any], kind: str, where: str, loc: str) -> list[str]:
    """Warnings naming the fields of the object at `loc` that its kind's Kubernetes schema
    does not know (a typo the model would drop silently: `fieldcheck`); a SimulationEvent's
    node (`addNode`, `updateNode`) is checked as a Node."""
    if kind == EVENT_KIND:
        lines = []
        for action in ("addNode", "updateNode"):
            node = obj.get(action)
            if isinstance(node, dict):
                lines += [f"{where}: {field_path(loc, action)}: {line}" for line in
                          _unknown_fields(node, "Node", "", ROOT)]
        return lines
    found = fieldcheck.unknown_fields(obj, kind)
    if not found:
        return []
    meta = obj.get("metadata")
    named = dict(obj)
    if isinstance(meta, dict) and kind not in cluster_scoped() and kind != "Node":
        named["metadata"] = {**meta, "namespace": meta.get("namespace") or "default"}
    at = "" if loc == ROOT else f"{loc} "
    prefix = f"{where}: " if where else ""
    return fieldcheck.warning_lines(f"{prefix}{at}{fieldcheck.describe(kind, named)}", found)


def load_workload(path: str | Path, *, seed: int = 0) -> Workload:
    """Read pods, controllers, objects and events; times are resolved to virtual
    nanoseconds. `seed` seeds the controllers' generated names (`<rs>-<5 chars>`): the same
    file and seed give the same names (and the names do not depend on the file's other
    objects)."""
    from extender.simulator import controllers as ctl

    where = str(path)
    try:
        documents = read_documents(path)
    except ValueError as exc:
        raise WorkloadError(str(exc)) from None
    #: In file order: plain pods (raw, view, created, (run_for, finish)) and controllers.
    entries: list[tuple[dict[str, Any], PodView, int | None, tuple[int | None, str]]
                  | ctl.Controller] = []
    events: list[tuple[SimEvent, float | None, int | None]] = []
    objects: list[tuple[str, Any, int | None]] = []
    seen: set[str] = set()
    #: "namespace/name" of every pod -> whose it is, so that generated names never clash.
    taken: dict[str, str] = {}
    kinds = object_kinds()
    unknown: list[str] = []  # unknown field names, as warnings
    for loc, obj in _located(documents):
        here = f"{where}: {loc}"
        if not isinstance(obj, dict):
            raise WorkloadError(f"{here}: expected a Kubernetes object (a mapping), got "
                                f"{type(obj).__name__}")
        kind = obj.get("kind")
        if kind is None and "containers" in (obj.get("spec") or {}):
            unknown += _unknown_fields(obj, "Pod", where, loc)
        elif isinstance(kind, str):
            unknown += _unknown_fields(obj, kind, where, loc)
        if kind == EVENT_KIND:
            events.append(_parse_event(obj, where, loc))
        elif kind in kinds:
            objects.append(_parse_object(kind, obj, here, seen,
                                         f"{where}: {field_path(loc, 'metadata')}"))
        elif kind == "Pod" or (kind is None and "containers" in (obj.get("spec") or {})):
            raw = _fill_identity(obj)
            name = raw["metadata"].get("name")
            if not name:
                raise WorkloadError(f"{here}: a Pod needs metadata.name")
            key = f"{raw['metadata']['namespace']}/{name}"
            if key in taken:
                also = "" if taken[key] == _FILE_POD else f" (also {taken[key]})"
                raise WorkloadError(f"{where}: Pod {key} appears twice{also}")
            taken[key] = _FILE_POD
            entries.append(_parse_pod(raw, where, loc, key))
        elif kind in CONTROLLER_KINDS:
            entries.append(ctl.parse_controller(kind, obj, here, seed=seed, taken=taken,
                                                seen=seen))
        else:
            what = f"kind {kind!r}" if kind is not None else "an object without a kind"
            raise WorkloadError(
                f"{here}{_describe(obj)}: {what} is not supported in a workload (supported: "
                f"{', '.join(supported_kinds())}); Nodes, PodDisruptionBudgets, Namespaces and "
                "Services belong in the cluster file (--cluster)")
    absolutes = [e[2] for e in entries if isinstance(e, tuple) and e[2] is not None]
    absolutes += [e.created for e in entries if not isinstance(e, tuple) and e.created is not None]
    absolutes += [a for _, _, a in events if a is not None]
    absolutes += [t for _, _, t in objects if t is not None]
    epoch = min(absolutes) if absolutes else 0
    workload = Workload(epoch_ns=epoch, warnings=fieldcheck.capped(unknown, where))
    for entry in entries:
        if isinstance(entry, tuple):
            raw, view, created, (run_for, finish) = entry
            workload.arrivals.append(Arrival(created - epoch if created is not None else 0,
                                             view, raw, run_for, finish))
            continue
        entry.place(epoch)
        workload.controllers.append(entry)
        workload.objects.extend(entry.owned_objects())
        workload.arrivals.extend(entry.initial_pods())
        workload.warnings.extend(entry.warnings)
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
    workload.controllers.sort(key=lambda c: c.time)
    return workload


def _parse_pod(raw: dict[str, Any], where: str, loc: str,
               key: str) -> tuple[dict[str, Any], PodView, int | None, tuple[int | None, str]]:
    """(raw, view, creation time in epoch ns or None, lifetime) of a Pod of the file (`raw`
    with its identity filled); `loc` where it is in the file `where`."""
    created = creation_time_ns(raw["metadata"], f"{where}: {field_path(loc, 'metadata')}")
    _, view = typed_pod(raw, f"{where}: Pod {key}", lambda field: f"{where}: {field_path(loc, field)}")
    lifetime = pod_lifetime(raw["metadata"].get("annotations"), f"{where}: Pod {key}")
    return raw, view, created, lifetime


def _parse_object(kind: str, obj: dict[str, Any], where: str, seen: set[str],
                  meta_at: str) -> tuple[str, Any, int | None]:
    """(kind, typed object, creation time in epoch ns or None) of a PriorityClass or a
    plugin's object (`object_kinds`); `meta_at` names its metadata in the file."""
    raw = dict(obj)
    meta = dict(raw.get("metadata") or {})
    if not meta.get("name"):
        raise WorkloadError(f"{where}: a {kind} needs metadata.name")
    if kind in cluster_scoped():
        meta.pop("namespace", None)
        key = f"{kind} {meta['name']}"
    else:
        meta["namespace"] = meta.get("namespace") or "default"
        key = f"{kind} {meta['namespace']}/{meta['name']}"
    raw["metadata"] = meta
    if key in seen:
        raise WorkloadError(f"{where}: {key} appears twice")
    seen.add(key)
    try:
        typed = k8s.convert(raw, object_kinds()[kind])
        # Its store converts the quantities when it takes the object: check them now.
        store = registry.store_of_kind(kind)
        if store is not None:
            store(_NO_CLOCK).apply(kind, typed)
    except (msgspec.ValidationError, QuantityError, ValueError) as exc:
        raise WorkloadError(f"{where}: {key}: {exc}") from None
    return kind, typed, creation_time_ns(meta, meta_at)


class _NoClock:
    """The host of a store that only checks an object (`_parse_object`)."""

    def clock(self) -> float:
        return 0.0

    def wall_clock(self) -> float:
        return 0.0


_NO_CLOCK = _NoClock()
