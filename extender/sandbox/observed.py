"""What a real kube-scheduler did, written as the simulator writes its runs.

`extender simulate --on-sandbox` watches the sandbox's pods and events and reads
kube-scheduler's own log (`-v=2`: one line per scheduling attempt: "Successfully bound pod to
node", "Unable to schedule pod; no fit; waiting" with the FitError, "Error scheduling pod;
retrying"). `Observations` gathers those facts as they come; `build_result` turns them into a
`SimulationResult`, so `simulator.report.build_report` writes the same report (and
`event_lines` the same event log) the simulator does, and the HTML report, `--compare` and
`--agreement` read both alike.

Times are the wall clock's since the workload started, multiplied by the replay's time scale:
seconds of the workload's own time, like the simulator's virtual seconds.
"""

from __future__ import annotations

import datetime
import json
import math
import re
import statistics
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from extender.model import k8s
from extender.simulator.clock import SECOND
from extender.simulator.follow import workload_owner
from extender.simulator.records import (
    DELETED,
    FAILED,
    PENDING,
    PREEMPTED,
    REJECTED,
    SCHEDULED,
    SETTLED,
    SUCCEEDED,
    NodeUsage,
    PodRecord,
    SimulationConfig,
    SimulationResult,
    node_usage,
)

#: kube-scheduler's log lines (klog text) that end a scheduling attempt, and their result.
ATTEMPT_LINES = {
    "Successfully bound pod to node": "scheduled",
    "Unable to schedule pod; no fit; waiting": "unschedulable",
    "Unable to schedule pod, possibly due to node not found; waiting": "error",
    "Error scheduling pod; retrying": "error",
}
_KLOG = re.compile(r'^[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6})\s+\d+ [^\]]*\] "'
                   r'(?P<msg>(?:[^"\\]|\\.)*)"(?P<rest>.*)$')
_FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')
#: The victim's event when kube-scheduler preempts it: "Preempted by pod <uid> on node <n>"
#: (before 1.26: "by <namespace>/<name>").
_PREEMPTED = re.compile(r"^Preempted by (?:pod )?(?P<by>\S+) on node (?P<node>\S+)")
#: A FitError's histogram entries, "<count> <reason>".
_HISTOGRAM = re.compile(r"nodes are available: (?P<body>.*?)\.(?: |$)")


@dataclass
class Attempt:
    wall: float
    result: str  # scheduled, unschedulable, error
    node: str = ""
    message: str = ""


def parse_scheduler_log(lines: Iterable[str], year: int) -> Iterator[tuple[str, Attempt]]:
    """(namespace/name, attempt) for each attempt line of a kube-scheduler `-v=2` log."""
    for line in lines:
        m = _KLOG.match(line)
        if m is None:
            continue
        result = ATTEMPT_LINES.get(m["msg"])
        if result is None:
            continue
        fields = {k: _unquote(v) for k, v in _FIELD.findall(m["rest"])}
        pod = fields.get("pod")
        if not pod:
            continue
        month, day, hh, mm, ss, us = (int(m[i]) for i in range(1, 7))
        wall = datetime.datetime(year, month, day, hh, mm, ss, us).timestamp()  # klog: local
        yield pod, Attempt(wall, result, fields.get("node", "") if result == "scheduled" else "",
                           fields.get("err", ""))


def _unquote(value: str) -> str:
    if value.startswith('"'):
        try:
            return str(json.loads(value))
        except ValueError:
            return value[1:-1]
    return value


def histogram(message: str) -> dict[str, int]:
    """{reason: nodes} of a FitError message (for the event log's `reasons`)."""
    m = _HISTOGRAM.search(message)
    out: dict[str, int] = {}
    if m is None:
        return out
    for part in m["body"].split(", "):
        count, _, reason = part.partition(" ")
        if count.isdigit() and reason:
            out[reason] = out.get(reason, 0) + int(count)
    return dict(sorted(out.items()))


@dataclass
class PodTrack:
    """One pod as the watch saw it."""

    namespace: str
    name: str
    uid: str
    origin: str  # "workload" or "cluster"
    priority: int = 0
    owner: str = ""
    arrived: float | None = None
    node: str = ""
    bound: float | None = None
    nominated: str = ""
    phase: str = "Pending"
    finished: float | None = None
    deleted: float | None = None
    preempted_by: str = ""  # uid, then namespace/name
    evicted_on: str = ""
    grace: float | None = None
    evicted: float | None = None  # when its deletion began
    rejected: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass
class Observations:
    """Everything the replay saw, in wall-clock seconds."""

    start: float  # wall time of the workload's time 0
    scale: float = 1.0
    pods: dict[str, PodTrack] = field(default_factory=dict)  # by uid
    attempts: dict[str, list[Attempt]] = field(default_factory=dict)  # by namespace/name
    #: (wall, "nominate", pod key, node) as the watch saw nominations.
    nominations: list[tuple[float, str, str]] = field(default_factory=list)
    node_changes: list[tuple[float, str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    last_change: float = 0.0

    def t(self, wall: float) -> float:
        """Workload seconds of a wall time."""
        return round(max(0.0, wall - self.start) * self.scale, 6)

    def track(self, pod: Mapping[str, Any], origin: str, wall: float) -> PodTrack:
        meta = pod.get("metadata") or {}
        uid = meta.get("uid", "")
        track = self.pods.get(uid)
        if track is None:
            ref = next((o for o in meta.get("ownerReferences") or () if o.get("controller")),
                       None)
            owner = workload_owner(ref["kind"], ref["name"], meta.get("labels")) if ref else ""
            track = self.pods[uid] = PodTrack(meta.get("namespace", "default"), meta["name"],
                                              uid, origin, owner=owner)
        return track

    def pod_event(self, kind: str, pod: Mapping[str, Any], wall: float, origin: str) -> None:
        """A watch event (ADDED, MODIFIED, DELETED) of a pod."""
        track = self.track(pod, origin, wall)
        spec, status = pod.get("spec") or {}, pod.get("status") or {}
        self.last_change = wall
        if track.arrived is None:
            track.arrived = wall
        track.priority = int(spec.get("priority") or 0)
        if spec.get("nodeName") and not track.node:
            track.node, track.bound = spec["nodeName"], wall
        nominated = status.get("nominatedNodeName") or ""
        if nominated and nominated != track.nominated:
            self.nominations.append((wall, track.key, nominated))
        track.nominated = nominated
        phase = status.get("phase") or "Pending"
        if phase in (SUCCEEDED, FAILED) and track.finished is None:
            track.finished = wall
        track.phase = phase
        if any(c.get("type") == "DisruptionTarget" and c.get("reason") == "PreemptionByScheduler"
               for c in status.get("conditions") or ()):
            track.evicted_on = track.evicted_on or track.node
        meta = pod.get("metadata") or {}
        if meta.get("deletionTimestamp") and track.grace is None:
            track.grace = float(meta.get("deletionGracePeriodSeconds") or 0)
            track.evicted = wall
        if kind == "DELETED":
            track.deleted = wall

    def preempted_event(self, event: Mapping[str, Any]) -> None:
        """A `Preempted` event on a victim: who preempted it."""
        involved = event.get("involvedObject") or event.get("regarding") or {}
        m = _PREEMPTED.match(event.get("message") or event.get("note") or "")
        track = self.pods.get(involved.get("uid", ""))
        if track is None or m is None or track.preempted_by:
            # A terminating victim chosen again counts once, by its first preemptor (as the
            # simulator counts it).
            return
        related = event.get("related") or {}
        track.preempted_by = (f"{related['namespace']}/{related['name']}"
                              if related.get("name") else m["by"])
        track.evicted_on = track.evicted_on or m["node"]

    def read_log(self, path: Path, year: int) -> None:
        try:
            lines = path.read_text(errors="replace").splitlines()
        except OSError:
            return
        self.attempts.clear()
        for pod, attempt in parse_scheduler_log(lines, year):
            self.attempts.setdefault(pod, []).append(attempt)

    def settle_key(self) -> tuple[int, int]:
        """Changes to wait out: attempts logged and pods still terminating."""
        terminating = sum(1 for p in self.pods.values()
                          if p.grace is not None and p.deleted is None)
        return sum(len(a) for a in self.attempts.values()), terminating


def _preemptor_key(track: PodTrack, by_uid: Mapping[str, PodTrack]) -> str:
    by = track.preempted_by
    if by in by_uid:
        return by_uid[by].key
    return by


def _status(track: PodTrack) -> str:
    if track.rejected:
        return REJECTED
    if track.phase in (SUCCEEDED, FAILED):
        return track.phase
    if track.deleted is not None or track.grace is not None:
        return PREEMPTED if (track.preempted_by or track.evicted_on) else DELETED
    return SCHEDULED if track.node else PENDING


def records(obs: Observations) -> dict[str, PodRecord]:
    """One `PodRecord` per pod that arrived in the workload, or that the run touched."""
    out: dict[str, PodRecord] = {}
    ns = SECOND
    for uid, track in obs.pods.items():
        status = _status(track)
        if track.origin == "cluster" and status == SCHEDULED and track.bound is None:
            continue  # a bound pod of the cluster the run did not touch
        tries = obs.attempts.get(track.key, [])
        rec = PodRecord(uid, track.namespace, track.name, track.priority, track.origin,
                        status=status, owner=track.owner)
        if track.node and track.bound is not None and track.bound > obs.start:
            rec.node, rec.scheduled_at = track.node, int(obs.t(track.bound) * ns)
        elif track.node:
            rec.node = track.node
        if status == PENDING:
            rec.nominated_node = track.nominated
            failures = [a for a in tries if a.result != "scheduled"]
            rec.failure = failures[-1].message if failures else ""
        if status == REJECTED:
            rec.failure = track.rejected
        rec.attempts = len(tries)
        if track.origin == "workload" and track.arrived is not None:
            rec.arrived_at = int(obs.t(track.arrived) * ns)
        end = track.finished if track.finished is not None else track.deleted
        if end is not None and status != SCHEDULED:
            rec.finished_at = int(obs.t(end) * ns)
        out[uid] = rec
    by_uid = obs.pods
    for uid, track in obs.pods.items():
        if track.preempted_by and uid in out:
            out[uid].preempted_by = _preemptor_key(track, by_uid)
            preemptor = next((r for r in out.values() if r.key == out[uid].preempted_by), None)
            if preemptor is not None:
                preemptor.preemptions_caused.append(out[uid].key)
    return out


def usage(nodes: Sequence[Mapping[str, Any]], pods: Iterable[Mapping[str, Any]],
          ) -> dict[str, NodeUsage]:
    """Each node's requests from the pods bound to it and still running."""
    from extender.engine.cluster import ClusterState
    from extender.state.snapshot import apply_object

    state = ClusterState()
    for node in nodes:
        state.apply("Node", k8s.convert(dict(node), k8s.Node))
    for pod in pods:
        spec = pod.get("spec") or {}
        phase = (pod.get("status") or {}).get("phase")
        if spec.get("nodeName") and phase not in (SUCCEEDED, FAILED) \
                and not (pod.get("metadata") or {}).get("deletionTimestamp"):
            # As a snapshot's pods are applied: the replay's objects, before creation, have no
            # uid, which the state keys pods by (`apply_object` derives one).
            apply_object(state, "Pod", k8s.convert(dict(pod), k8s.Pod))
    return node_usage(state)


def build_result(obs: Observations, config: SimulationConfig, *, end: float,
                 nodes_before: dict[str, NodeUsage], nodes_after: dict[str, NodeUsage],
                 truncated: bool, warnings: list[str]) -> SimulationResult:
    recs = records(obs)
    binds = [r.scheduled_at for r in recs.values() if r.scheduled_at is not None]
    cycles = sum(len(a) for a in obs.attempts.values())
    return SimulationResult(
        records=recs, nodes_before=nodes_before, nodes_after=nodes_after, cycles=cycles,
        virtual_time=int(obs.t(end) * SECOND), last_bind_time=max(binds) if binds else None,
        truncated=truncated, config=config, warnings=warnings, extender_calls={},
        end_reason="horizon" if truncated else SETTLED)


#: A gap between two attempts longer than this was idle time, not one cycle.
_BUSY_GAP = 0.2
#: How close to its attempt's log line the watch sees a preemption's nomination.
_NOMINATION_LAG = 0.05
#: Fewer gaps than this measure nothing.
_MIN_GAPS = 5
#: Fewer preemption cycles than this draw no line (a few gaps' noise would make a slope).
_MIN_LINE = 20


def cycle_seconds(obs: Observations) -> dict[str, float]:
    """How long the scheduler's cycles took (wall seconds, medians), from its log: those that
    found no node ("failure") and those whose preemption nominated one ("preemption"); and,
    for each kind that grew with the other pods nominated when a cycle began, a least-squares
    line through them (`<kind>Base` + `<kind>PerNominated` × pods).

    kube-scheduler logs a failed attempt when its cycle ends, PostFilter included, so the gap
    from the attempt logged before is the cycle (and the pop before it) while the scheduler is
    busy. Only gaps after a failed attempt count: a placed pod is logged when its binding
    ends, asynchronously. A node's filters run with its nominated pods added, twice, on a
    clone of the cycle's state, and the preemption dry run runs them on every candidate node:
    in a burst of 100 preemptors on 200 nodes (ten runs of `bench.agreement` on
    kube-scheduler 1.37.2, 2026-12-03) a preemption cycle took 0.30–0.76 ms more for each pod
    nominated, a failed one 0.12–0.73 ms."""
    attempts = sorted(((a.wall, pod, a.result) for pod, tries in obs.attempts.items()
                       for a in tries), key=lambda x: x[0])
    nominated: dict[str, list[float]] = {}
    for wall, pod, _ in obs.nominations:
        nominated.setdefault(pod, []).append(wall)
    outstanding = _nominated_at(obs)
    gaps: dict[str, list[tuple[int, float]]] = {"failure": [], "preemption": []}
    for (before, _, before_result), (wall, pod, result) in zip(attempts, attempts[1:],
                                                              strict=False):
        if result != "unschedulable" or before_result != "unschedulable" or \
                wall - before > _BUSY_GAP:
            continue
        preempted = any(0 <= t - wall <= _NOMINATION_LAG for t in nominated.get(pod, ()))
        gaps["preemption" if preempted else "failure"].append(
            (outstanding(before, pod), wall - before))
    out: dict[str, float] = {}
    for kind, found in gaps.items():
        if len(found) < _MIN_GAPS:
            continue
        out[kind] = round(statistics.median(gap for _, gap in found), 6)
        if len(found) >= _MIN_LINE and len({n for n, _ in found}) > 1:
            slope, base = statistics.linear_regression([float(n) for n, _ in found],
                                                       [gap for _, gap in found])
            if slope > 0:
                out[f"{kind}Base"] = round(max(base, 0.0), 6)
                out[f"{kind}PerNominated"] = round(slope, 7)
    return out


def _nominated_at(obs: Observations) -> Callable[[float, str], int]:
    """How many pods other than `pod` were nominated at a wall time: each counts from its
    first nomination the watch saw until it was bound or deleted."""
    ends = {track.key: min((t for t in (track.bound, track.deleted) if t is not None),
                           default=math.inf) for track in obs.pods.values()}
    spans: dict[str, tuple[float, float]] = {}
    for wall, pod, _ in obs.nominations:
        if pod not in spans:
            spans[pod] = (wall, ends.get(pod, math.inf))

    def count(wall: float, pod: str) -> int:
        return sum(1 for other, (start, end) in spans.items()
                   if start <= wall < end and other != pod)
    return count


#: Victims of one preemptor on one node whose deletions began this close together (wall
#: seconds) were one preemption: kube-scheduler deletes a preemption's victims within
#: milliseconds (the last one after the others, 1.34+).
_ONE_PREEMPTION = 2.0


def _eviction_began(track: PodTrack, end: float) -> float:
    return track.evicted or track.deleted or end


def _preemptions(tracks: list[PodTrack], end: float) -> list[list[PodTrack]]:
    """One preemptor's victims as its preemptions, in time order: a pod whose nominated node
    was taken before its victims left preempts again, elsewhere or later."""
    out: list[list[PodTrack]] = []
    last: dict[str, list[PodTrack]] = {}
    for track in sorted(tracks, key=lambda t: (_eviction_began(t, end), t.key)):
        group = last.get(track.evicted_on)
        if group is None or \
                _eviction_began(track, end) - _eviction_began(group[0], end) > _ONE_PREEMPTION:
            group = last[track.evicted_on] = []
            out.append(group)
        group.append(track)
    return out


def event_lines(obs: Observations, end: float, truncated: bool) -> list[dict[str, Any]]:
    """The run as the simulator's event log (`--events`): arrivals, attempts (from the
    scheduler's log: the FitError's reasons; plugins are not in the log), nominations,
    binds, preemptions, evictions, deletions, completions, node changes, the end."""
    out: list[tuple[float, int, dict[str, Any]]] = []
    seq = 0

    def emit(wall: float, action: str, **fields: Any) -> None:
        nonlocal seq
        seq += 1
        out.append((obs.t(wall), seq, {"t": obs.t(wall), "action": action, **fields}))

    by_uid = obs.pods
    cycle = 0
    attempts = sorted(((a.wall, pod, a) for pod, tries in obs.attempts.items() for a in tries),
                      key=lambda x: x[0])
    for track in obs.pods.values():
        if track.origin == "workload" and track.arrived is not None:
            emit(track.arrived, "arrive", pod=track.key, priority=track.priority)
    for wall, pod, a in attempts:
        cycle += 1
        fields: dict[str, Any] = {"pod": pod, "cycle": cycle, "result": a.result}
        if a.result == "scheduled":
            fields["node"] = a.node
        else:
            fields["message"] = a.message
        fields["plugins"] = {}
        fields["reasons"] = histogram(a.message)
        emit(wall, "attempt", **fields)
    for wall, pod, node in obs.nominations:
        emit(wall, "nominate", pod=pod, node=node)
    victims: dict[str, list[PodTrack]] = {}
    for track in obs.pods.values():
        if track.bound is not None and track.bound > obs.start:
            emit(track.bound, "bind", pod=track.key, node=track.node)
        if track.preempted_by:
            victims.setdefault(_preemptor_key(track, by_uid), []).append(track)
        elif track.deleted is not None and track.phase not in (SUCCEEDED, FAILED):
            emit(track.deleted, "delete", pod=track.key)
        if track.finished is not None:
            emit(track.finished, "complete", pod=track.key, phase=track.phase)
    for preemptor, tracks in victims.items():
        for preemption in _preemptions(tracks, end):
            emit(_eviction_began(preemption[0], end), "preempt", pod=preemptor,
                 node=preemption[0].evicted_on, victims=sorted(t.key for t in preemption))
            for t in preemption:
                emit(_eviction_began(t, end), "evict", pod=t.key, node=t.evicted_on,
                     by=preemptor, gracePeriodSeconds=t.grace if t.grace is not None else 30.0)
                if t.deleted is not None:
                    emit(t.deleted, "evict", pod=t.key, node=t.evicted_on, by=preemptor,
                         terminated=True)
    for wall, node, change in obs.node_changes:
        emit(wall, "node", node=node, change=change)
    emit(end, "end", reason="horizon" if truncated else SETTLED)
    out.sort(key=lambda x: (x[0], x[1]))
    return [e for _, _, e in out]
