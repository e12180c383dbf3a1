"""Replayed node utilization: what a metrics source would have said, from a file, on virtual time.

`extender simulate --utilization FILE` reads a time series per node and, at each sample time
on the virtual clock, sets the simulated cluster's load snapshot (`TrimaranStore.metrics`) to one in
load-watcher's shape (`extender.model.loadmetrics.WatcherMetrics`), which is what Trimaran's
scorers (TargetLoadPacking, LoadVariationRiskBalancing, LowRiskOverCommitment) read. The
policy's metrics source settings (`watcherAddress`, `metricProvider`) are not used by the
simulator: the file is the source.

The file is YAML or JSON, one document::

    kind: NodeUtilization          # optional (apiVersion: simulator.extender/v1 too)
    window: 15m                    # optional, default 15m: the window the values stand for
    nodes:
      worker-a1:                   # a node name, then its samples, in time order
        - at: 0s                   # when the metrics source had these values
          cpu: 35.0                # average CPU use over the window, % of capacity (AVG)
          cpuStd: 5.0              # its standard deviation, % (STD); optional
          memory: 20.0             # average memory use, % (AVG); optional
          memoryStd: 2.0           # its standard deviation, % (STD); optional
        - at: 5m
          cpu: 80.0
        - at: 20m                  # no values: no data for the node from then on
                                   # (Trimaran scores a node without metrics 0)

`at` is seconds (a number) or a Go duration ("90s", "1m30s") after the run's start (time 0,
the workload's earliest creationTimestamp), or an RFC 3339 time on the workload's clock
(which the workload then needs). A node's samples must be in increasing time order; values
are percentages from 0 to 100; `cpuStd` needs `cpu` and `memoryStd` needs `memory`.

Semantics. A node's values hold from its sample's time until its next sample. Whenever any
node's values change (each distinct sample time: the metrics source's fetch), the whole
snapshot is replaced: `timestamp` and `window.end` are that time in Unix seconds
(`window.start` = end − window), every node with data has a `CPU` and/or `Memory` metric with
operator `AVG` (and `STD` when given), rollup = the window. Samples before time 0 are in
effect at time 0 (the latest one per node; the snapshot keeps the newest such time as its
timestamp). Nodes without a sample in effect are absent from the map. Samples after the run's
end are never applied. The file is the truth, as a metrics source would be: the load of pods
the simulation places is not added (TargetLoadPacking adds pods bound since the window's end
itself, its "missing" term). A sample change is not a cluster event: it only changes scores,
never whether a pod fits, so it moves no pod in the queue.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from extender.engine.cluster import ClusterState
from extender.engine.plugins.trimaran.store import TrimaranStore
from extender.model.loadmetrics import (
    AVERAGE,
    CPU,
    MEMORY,
    STD,
    Data,
    Metric,
    NodeMetrics,
    WatcherMetrics,
    Window,
)
from extender.simulator.clock import SECOND, Timeline, seconds, to_seconds
from extender.simulator.workload import parse_duration, parse_time_ns
from extender.state.snapshot import SnapshotError, read_documents

KIND = "NodeUtilization"
API_VERSION = "simulator.extender/v1"
DEFAULT_WINDOW = "15m"
SOURCE = "Replay"
#: load-watcher's metric names for its Prometheus provider (the scorers read type and operator).
CPU_METRIC = "instance:node_cpu:ratio"
MEMORY_METRIC = "instance:node_memory_utilisation:ratio"
#: sample key -> (metric type, operator, metric name)
VALUE_KEYS: dict[str, tuple[str, str, str]] = {
    "cpu": (CPU, AVERAGE, CPU_METRIC),
    "cpuStd": (CPU, STD, CPU_METRIC),
    "memory": (MEMORY, AVERAGE, MEMORY_METRIC),
    "memoryStd": (MEMORY, STD, MEMORY_METRIC),
}
_TOP_KEYS = ("apiVersion", "kind", "window", "nodes")


class UtilizationError(ValueError):
    """An invalid utilization file; the message names the file, the node and the sample."""


@dataclass(frozen=True, slots=True)
class Sample:
    """One node's metrics from `time` (virtual ns; negative: before the run's start)."""

    time: int
    at: str  # as written, for messages
    cpu: float | None = None
    cpu_std: float | None = None
    memory: float | None = None
    memory_std: float | None = None

    @property
    def empty(self) -> bool:
        return self.cpu is None and self.memory is None

    def values(self) -> dict[str, float | None]:
        """The values by the file's keys."""
        return {"cpu": self.cpu, "cpuStd": self.cpu_std,
                "memory": self.memory, "memoryStd": self.memory_std}

    def metrics(self, rollup: str) -> NodeMetrics:
        """The node's entry in load-watcher's `NodeMetricsMap`."""
        out = []
        for key, value in self.values().items():
            if value is not None:
                kind, operator, name = VALUE_KEYS[key]
                out.append(Metric(name=name, type=kind, operator=operator, rollup=rollup,
                                  value=value))
        return NodeMetrics(metrics=out)


@dataclass
class Utilization:
    """A parsed utilization file: per-node samples on the simulation's virtual time."""

    path: str
    window: str  # as load-watcher writes it in `window.duration` ("15m")
    window_ns: int
    nodes: dict[str, list[Sample]]
    #: Unix time (ns) of virtual time 0, for the snapshots' timestamps.
    epoch_ns: int = 0

    @property
    def sample_count(self) -> int:
        return sum(len(samples) for samples in self.nodes.values())

    def change_times(self) -> list[int]:
        """The virtual times at which the snapshot changes (samples before 0 apply at 0)."""
        return sorted({max(s.time, 0) for samples in self.nodes.values() for s in samples})

    def _snapshot(self, fetched: int, current: Mapping[str, Sample]) -> WatcherMetrics:
        end = (self.epoch_ns + fetched) // SECOND
        return WatcherMetrics(
            timestamp=end,
            window=Window(duration=self.window, start=end - self.window_ns // SECOND, end=end),
            source=SOURCE,
            data=Data(NodeMetricsMap={name: sample.metrics(self.window)
                                      for name, sample in sorted(current.items())
                                      if not sample.empty}))

    def snapshot_at(self, t: int) -> WatcherMetrics | None:
        """The snapshot a scorer sees at virtual time `t` (None before the first sample)."""
        current: dict[str, Sample] = {}
        for name, samples in self.nodes.items():
            latest = None
            for sample in samples:
                if max(sample.time, 0) > t:
                    break
                latest = sample
            if latest is not None:
                current[name] = latest
        if not current:
            return None
        return self._snapshot(max(s.time for s in current.values()), current)

    def snapshots(self) -> Iterator[tuple[int, WatcherMetrics, list[tuple[str, Sample]]]]:
        """(virtual time, snapshot, the samples that took effect then) at each change time,
        in time order; incremental, so a long file costs O(nodes) per change."""
        pending = sorted(((max(s.time, 0), i, name, s)
                          for name, samples in self.nodes.items()
                          for i, s in enumerate(samples)), key=lambda x: (x[0], x[2], x[1]))
        current: dict[str, Sample] = {}
        fetched = None
        k = 0
        while k < len(pending):
            t = pending[k][0]
            changed: dict[str, Sample] = {}
            while k < len(pending) and pending[k][0] == t:
                _, _, name, sample = pending[k]
                changed[name] = sample  # the latest of several samples at or before 0
                k += 1
            current.update(changed)
            newest = max(s.time for s in changed.values())
            fetched = newest if fetched is None else max(fetched, newest)
            yield t, self._snapshot(fetched, current), sorted(changed.items())


def _where(path: str, node: str | None = None, index: int | None = None,
           at: object = None) -> str:
    out = path
    if node is not None:
        out += f": nodes.{node}"
        if index is not None:
            out += f"[{index}]"
            if at is not None:
                out += f" (at {at})"
    return out


def _number(value: object, key: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UtilizationError(f"{where}: {key}: expected a percentage (a number from 0 to 100), "
                               f"got {value!r}")
    number = float(value)
    if not math.isfinite(number) or not 0.0 <= number <= 100.0:
        raise UtilizationError(f"{where}: {key}: {value!r} is not a percentage from 0 to 100")
    return number


def _sample_time(at: object, epoch_ns: int, has_epoch: bool, where: str) -> int:
    """Virtual ns of a sample's `at`: seconds, a Go duration, or an RFC 3339 time."""
    if at is None:
        raise UtilizationError(f"{where}: a sample needs `at` (a duration from the start, "
                               f"e.g. 5m, or an RFC 3339 time)")
    absolute: int | None = None
    if isinstance(at, str) and ("T" in at or at.count("-") >= 2):
        try:
            absolute = parse_time_ns(at)
        except ValueError as exc:
            raise UtilizationError(f"{where}: at: {exc}") from None
    if absolute is not None:
        if not has_epoch:
            raise UtilizationError(
                f"{where}: at: {at} is an absolute time, but the workload has none (no "
                f"creationTimestamp or absolute event time) to say when the run starts; "
                f"give a duration from the start instead (e.g. 5m)")
        return absolute - epoch_ns
    try:
        if isinstance(at, str) and at.strip().startswith("-"):
            relative = -parse_duration(at.strip()[1:])
        else:
            relative = parse_duration(at)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        raise UtilizationError(f"{where}: at: invalid duration {at!r} (seconds, a Go duration "
                               f"such as 90s or 1m30s, or an RFC 3339 time)") from None
    if not math.isfinite(relative) or relative < 0:
        raise UtilizationError(f"{where}: at: {at!r} is before the start (durations count "
                               f"from time 0)")
    return seconds(relative)


def _parse_sample(raw: object, epoch_ns: int, has_epoch: bool, path: str, node: str,
                  index: int) -> Sample:
    if not isinstance(raw, Mapping):
        raise UtilizationError(f"{_where(path, node, index)}: a sample is a mapping "
                               f"{{at, cpu, cpuStd, memory, memoryStd}}, got {raw!r}")
    at = raw.get("at")
    where = _where(path, node, index, at)
    unknown = sorted(str(k) for k in raw if k != "at" and k not in VALUE_KEYS)
    if unknown:
        raise UtilizationError(f"{where}: unknown key(s) {', '.join(unknown)} (a sample has at, "
                               f"{', '.join(VALUE_KEYS)})")
    time = _sample_time(at, epoch_ns, has_epoch, where)
    values = {key: None if raw.get(key) is None else _number(raw[key], key, where)
              for key in VALUE_KEYS}
    for std, avg in (("cpuStd", "cpu"), ("memoryStd", "memory")):
        if values[std] is not None and values[avg] is None:
            raise UtilizationError(f"{where}: {std} without {avg} (the average is what the "
                                   f"scorers read first)")
    return Sample(time, str(at), values["cpu"], values["cpuStd"], values["memory"],
                  values["memoryStd"])


def parse_utilization(doc: object, path: str = "utilization", *, epoch_ns: int = 0,
                      has_epoch: bool | None = None) -> Utilization:
    """Validate a parsed file (see the module docstring). `epoch_ns` is the Unix time of
    virtual time 0 (the workload's), needed for RFC 3339 sample times."""
    if has_epoch is None:
        has_epoch = epoch_ns != 0
    if not isinstance(doc, Mapping):
        raise UtilizationError(f"{path}: expected a mapping with `nodes` (and optionally "
                               f"`window`), got {type(doc).__name__}")
    unknown = sorted(str(k) for k in doc if k not in _TOP_KEYS)
    if unknown:
        raise UtilizationError(f"{path}: unknown key(s) {', '.join(unknown)} (expected "
                               f"{', '.join(_TOP_KEYS)})")
    kind = doc.get("kind")
    if kind is not None and kind != KIND:
        raise UtilizationError(f"{path}: kind is {kind!r}, expected {KIND}")
    api_version = doc.get("apiVersion")
    if api_version is not None and api_version != API_VERSION:
        raise UtilizationError(f"{path}: apiVersion is {api_version!r}, expected {API_VERSION}")
    window_raw = doc.get("window", DEFAULT_WINDOW)
    try:
        window_seconds = parse_duration(window_raw)
    except (ValueError, TypeError):
        raise UtilizationError(f"{path}: window: invalid duration {window_raw!r} "
                               f"(e.g. 15m)") from None
    if not math.isfinite(window_seconds) or window_seconds < 1:
        raise UtilizationError(f"{path}: window: {window_raw!r} must be at least 1s")
    window = window_raw if isinstance(window_raw, str) else f"{window_seconds:g}s"
    nodes_raw = doc.get("nodes")
    if not isinstance(nodes_raw, Mapping) or not nodes_raw:
        raise UtilizationError(f"{path}: `nodes` must map node names to lists of samples")
    nodes: dict[str, list[Sample]] = {}
    for key, samples_raw in nodes_raw.items():
        name = str(key)
        if not name or isinstance(key, bool) or key is None:
            raise UtilizationError(f"{path}: nodes: {key!r} is not a node name")
        if not isinstance(samples_raw, list) or not samples_raw:
            raise UtilizationError(f"{_where(path, name)}: expected a list of samples "
                                   f"[{{at, cpu, ...}}, ...], got {samples_raw!r}")
        samples: list[Sample] = []
        for index, raw in enumerate(samples_raw):
            sample = _parse_sample(raw, epoch_ns, has_epoch, path, name, index)
            if samples and sample.time <= samples[-1].time:
                raise UtilizationError(
                    f"{_where(path, name, index, sample.at)}: not after the previous sample "
                    f"(at {samples[-1].at}); a node's samples must be in increasing time order")
            samples.append(sample)
        nodes[name] = samples
    return Utilization(path, window, seconds(window_seconds), nodes, epoch_ns)


def load_utilization(path: str | Path, *, epoch_ns: int = 0,
                     has_epoch: bool | None = None) -> Utilization:
    """Read and validate a utilization file (`UtilizationError` naming what is wrong)."""
    where = str(path)
    try:
        documents = read_documents(path)
    except (SnapshotError, OSError) as exc:
        raise UtilizationError(str(exc) if isinstance(exc, SnapshotError)
                               else f"{where}: {exc.strerror or exc}") from None
    if len(documents) != 1:
        raise UtilizationError(f"{where}: expected one document, found {len(documents)}")
    return parse_utilization(documents[0], where, epoch_ns=epoch_ns, has_epoch=has_epoch)


# -- the replay in a simulation -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Point:
    """A node's replayed values when they took effect, with its allocation at that moment."""

    time: int  # virtual ns at which it took effect
    sample: Sample
    #: (cpu milli, memory bytes, pods) requested and (cpu milli, memory bytes) allocatable;
    #: None when the node was not in the cluster then.
    requested: tuple[int, int, int] | None
    allocatable: tuple[int, int] | None


@dataclass
class ReplayRecord:
    """What the replay applied during a run, for the report."""

    utilization: Utilization
    points: dict[str, list[Point]] = field(default_factory=dict)
    applied: int = 0  # snapshots set
    samples_applied: int = 0


class UtilizationReplay:
    """Sets the load snapshot (`TrimaranStore.metrics`) at each change time on the simulation's timeline.

    The timeline entries are background ones: they fire when virtual time passes them but do
    not keep a run alive (a run that has nothing left to schedule ends before the file does).
    """

    def __init__(self, utilization: Utilization, state: ClusterState, timeline: Timeline, *,
                 warnings: list[str] | None = None,
                 later_nodes: Iterable[str] = ()) -> None:
        self.utilization = utilization
        self.state = state
        self.record = ReplayRecord(utilization, {name: [] for name in sorted(utilization.nodes)})
        self._warnings = warnings if warnings is not None else []
        self._absent: set[str] = set()
        self._snapshots = utilization.snapshots()
        missing = sorted((set(state.nodes) | set(later_nodes)) - set(utilization.nodes))
        if missing:
            self._warnings.append(
                f"utilization: {utilization.path} has no samples for node(s) "
                f"{', '.join(missing)}: load-aware scorers score them 0 (no metrics)")
        self._timeline = timeline
        self._next()

    def _next(self) -> None:
        item = next(self._snapshots, None)
        if item is not None:
            t, snapshot, changed = item
            # At equal times after arrivals, events and evictions (ranks 0-2): a node added at
            # a sample's time is in the cluster when its first sample is recorded.
            self._timeline.at(t, lambda: self._apply(t, snapshot, changed), rank=3,
                              background=True)

    def _apply(self, t: int, snapshot: WatcherMetrics,
               changed: list[tuple[str, Sample]]) -> None:
        self.state.store(TrimaranStore).set_metrics(snapshot)
        self.record.applied += 1
        for name, sample in changed:
            info = self.state.nodes.get(name)
            if info is None:
                requested = allocatable = None
                if name not in self._absent:
                    self._absent.add(name)
                    self._warnings.append(
                        f"utilization: node {name} is not in the cluster at "
                        f"{to_seconds(t):g}s (its sample at {sample.at} is in the metrics "
                        f"all the same)")
            else:
                alloc = info.node.allocatable
                requested = (info.requested.milli_cpu, info.requested.memory, len(info.pods))
                allocatable = (alloc.milli_cpu, alloc.memory)
            self.record.points[name].append(Point(t, sample, requested, allocatable))
            self.record.samples_applied += 1
        self._next()  # one timeline entry at a time: a long file costs no heap


def _percent(used: int, total: int) -> float | None:
    return round(100.0 * used / total, 4) if total > 0 else None


def report_section(record: ReplayRecord) -> dict[str, Any]:
    """The report's `utilization`: per node, each replayed sample as it took effect, with the
    node's allocation (requests / allocatable) at that moment."""
    util = record.utilization
    nodes: dict[str, list[dict[str, Any]]] = {}
    for name, points in sorted(record.points.items()):
        rows = []
        for point in points:
            s = point.sample
            row: dict[str, Any] = {
                "atSeconds": to_seconds(s.time),
                "appliedAtSeconds": to_seconds(point.time),
                "cpuPercent": s.cpu, "cpuStdPercent": s.cpu_std,
                "memoryPercent": s.memory, "memoryStdPercent": s.memory_std,
                "cpuRequestedPercent": None, "memoryRequestedPercent": None, "pods": None,
            }
            if point.requested is not None and point.allocatable is not None:
                row["cpuRequestedPercent"] = _percent(point.requested[0], point.allocatable[0])
                row["memoryRequestedPercent"] = _percent(point.requested[1], point.allocatable[1])
                row["pods"] = point.requested[2]
            rows.append(row)
        nodes[name] = rows
    return {  # the file and window are in the report's inputs
        "samples": util.sample_count,
        "samplesApplied": record.samples_applied,
        "snapshots": record.applied,
        "nodes": nodes,
    }
