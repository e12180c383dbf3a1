"""The simulator's pod arrivals and their vocabulary: what a workload file yields and what
the workload controllers (`controllers.py`) create, with the time and lifetime helpers both
read. `workload.py` parses files into these; it re-exports them for its callers."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from extender.model import k8s
from extender.model.pod import PodView
from extender.simulator.clock import MICROSECOND, SECOND, seconds
from extender.state.snapshot import quantity_problem

#: Pod (or pod template) annotations giving a pod a lifetime.
RUN_FOR_ANNOTATION = "simulator.extender/run-for"
FINISH_ANNOTATION = "simulator.extender/finish"
SUCCEEDED = "Succeeded"
FAILED = "Failed"
FINISH_PHASES = (SUCCEEDED, FAILED)
_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(h|ms|us|µs|ns|m|s)")
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class WorkloadError(ValueError):
    """An invalid workload file; the message names the file and the object."""


#: RFC 3339 as the API server reads a time (Go's `time.RFC3339`): date, `T`, time with an
#: optional fraction, and `Z` or a `±hh:mm` offset. Python's `fromisoformat` alone would also
#: take `2026-11-20 10:00` or a time without a zone, which the API server refuses.
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})")


def parse_time_ns(text: object) -> int | None:
    """An RFC 3339 time as exact integer nanoseconds since the epoch (microsecond precision,
    as Kubernetes writes them); None when absent (null or empty). Floats would lose the
    sub-microsecond digits at today's epoch values and make arrival times drift.

    A time that is there but is not RFC 3339 is a ValueError saying so: the API server
    refuses it, and taking it for an absent one would move its object to time 0."""
    if text is None or text == "":
        return None
    if not isinstance(text, str) or not _RFC3339.fullmatch(text):
        raise ValueError(f"invalid time {text!r}: expected an RFC 3339 time, such as "
                         "2026-11-20T10:00:00Z")
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:  # the shape is right, a field is out of range
        raise ValueError(f"invalid time {text!r}: {exc}") from None
    return (dt - _EPOCH) // timedelta(microseconds=1) * MICROSECOND


def typed_pod(raw: dict[str, Any], whole: str,
              at: Callable[[str], str]) -> tuple[k8s.Pod, PodView]:
    """A Pod of the workload (a pod, or a controller's template) typed, its resource amounts
    held to the API server's rules (a negative request would free room on its node), and its
    view; else a WorkloadError naming `whole` (the object) or `at(field)` (the amount)."""
    try:
        typed = k8s.convert(raw, k8s.Pod)
    except msgspec.ValidationError as exc:
        raise WorkloadError(f"{whole}: {exc}") from None
    problem = quantity_problem("Pod", typed)
    if problem is not None:
        field, what = problem
        raise WorkloadError(f"{at(field)}: {what}")
    try:
        return typed, PodView.from_k8s(typed)
    except ValueError as exc:  # a quantity PodView reads that is none
        raise WorkloadError(f"{whole}: {exc}") from None


def creation_time_ns(meta: Mapping[str, Any], where: str) -> int | None:
    """`metadata.creationTimestamp` of an object of the workload in epoch ns (None: absent,
    time 0); `where` names the object's metadata in the file (`w.yaml: [2].metadata`)."""
    try:
        return parse_time_ns(meta.get("creationTimestamp"))
    except ValueError as exc:
        raise WorkloadError(f"{where}.creationTimestamp: {exc}") from None


@dataclass(slots=True)
class Arrival:
    """A pod entering the simulation at `time` (virtual ns)."""

    time: int
    pod: PodView
    raw: dict[str, Any]  # the object as written (with uid/namespace filled), for the wire
    #: Virtual ns the pod runs once bound (from its bind, or its arrival when it comes with
    #: spec.nodeName); None: for ever.
    run_for: int | None = None
    #: Its phase when `run_for` has elapsed: "Succeeded" or "Failed".
    finish: str = SUCCEEDED
    #: The controller that created the pod (its hooks want to hear what becomes of it), or
    #: None for a pod written in the file.
    controller: Any = None  # a controllers.Controller


@dataclass(slots=True)
class ObjectArrival:
    """A PodGroup or ElasticQuota, or a ReplicaSet/StatefulSet a controller owns, created at
    `time` (virtual ns)."""

    time: int
    kind: str  # one of OBJECT_KINDS or OWNER_KINDS
    obj: Any  # the typed object (k8s.PodGroup, k8s.ElasticQuota, k8s.ReplicaSet, ...)
    #: Whether the file gave no creationTimestamp (the simulation stamps the arrival time).
    stamp: bool = False
    #: The whole object as the API server would hold it (owners only; None otherwise).
    raw: dict[str, Any] | None = None


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


def default_requests(spec: dict[str, Any]) -> dict[str, Any]:
    """The API server's defaulting of a pod spec (`SetDefaults_Pod`): a container's missing
    request for a resource it limits is its limit. Returns a copy when it changes anything."""
    changed = False
    out = dict(spec)
    for field_name in ("containers", "initContainers"):
        containers = spec.get(field_name)
        if not isinstance(containers, list):
            continue
        fixed = []
        for container in containers:
            resources = container.get("resources") if isinstance(container, dict) else None
            limits = resources.get("limits") if isinstance(resources, dict) else None
            if isinstance(limits, dict) and limits:
                requests = dict(resources.get("requests") or {})
                missing = {k: v for k, v in limits.items() if k not in requests}
                if missing:
                    container = {**container,
                                 "resources": {**resources, "requests": {**requests, **missing}}}
                    changed = True
            fixed.append(container)
        out[field_name] = fixed
    return out if changed else spec


def stamp(epoch_ns: int) -> str:
    """An RFC 3339 time in whole seconds, as the API server stamps creationTimestamp."""
    return datetime.fromtimestamp(epoch_ns // SECOND, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def pod_lifetime(annotations: Mapping[str, Any] | None, where: str) -> tuple[int | None, str]:
    """(run_for in virtual ns or None, finish phase) from a pod's (or template's) annotations."""
    annotations = annotations or {}
    run_for: int | None = None
    text = annotations.get(RUN_FOR_ANNOTATION)
    if text is not None:
        try:
            value = parse_duration(text)
        except ValueError as exc:
            raise WorkloadError(f"{where}: annotation {RUN_FOR_ANNOTATION}: {exc}") from None
        if value < 0:
            raise WorkloadError(f"{where}: annotation {RUN_FOR_ANNOTATION}: negative duration "
                                f"{text!r}")
        run_for = seconds(value)
    finish = annotations.get(FINISH_ANNOTATION, SUCCEEDED)
    if finish not in FINISH_PHASES:
        raise WorkloadError(f"{where}: annotation {FINISH_ANNOTATION}: {finish!r} is not one of "
                            f"{', '.join(FINISH_PHASES)}")
    return run_for, finish
