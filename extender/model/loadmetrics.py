"""Node load metrics in load-watcher's JSON shape (paypal/load-watcher `pkg/watcher`).

Every metrics source (load-watcher's `GET /watcher`, Prometheus, metrics.k8s.io) is turned
into this one shape, which Trimaran's scorers read and `evaluate(..., metrics=...)` accepts:

    {"timestamp": 1556987522, "window": {"duration": "15m", "start": 1556984522,
     "end": 1556985422}, "source": "Prometheus",
     "data": {"NodeMetricsMap": {"node-1": {"metrics": [
         {"name": "cpu_usage", "type": "CPU", "operator": "AVG", "rollup": "15m", "value": 30.5}]}}}}

Values are percentages of the node's capacity; times are Unix seconds.
"""

from __future__ import annotations

import msgspec

#: Metric types and operators load-watcher uses.
CPU = "CPU"
MEMORY = "Memory"
AVERAGE = "AVG"
STD = "STD"
LATEST = "Latest"


class _Base(msgspec.Struct, omit_defaults=True):
    pass


class Metric(_Base):
    name: str = ""
    type: str = ""
    operator: str = ""
    rollup: str = ""
    value: float = 0.0


class NodeMetrics(_Base):
    metrics: list[Metric] = msgspec.field(default_factory=list)
    tags: dict[str, str] | None = None
    metadata: dict[str, str] | None = None


class Data(_Base):
    NodeMetricsMap: dict[str, NodeMetrics] = msgspec.field(default_factory=dict)


class Window(_Base):
    duration: str = ""
    start: int = 0
    end: int = 0


class WatcherMetrics(_Base):
    timestamp: int = 0
    window: Window = msgspec.field(default_factory=Window)
    source: str = ""
    data: Data = msgspec.field(default_factory=Data)

    def node(self, name: str) -> NodeMetrics | None:
        return self.data.NodeMetricsMap.get(name)


_decoder = msgspec.json.Decoder(WatcherMetrics)


def without_nulls(value: object) -> object:
    """Go marshals a nil map or slice as `null` (load-watcher's `"NodeMetricsMap": null` when
    it has nothing): every field of the shape has a default, so a null is that default."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def decode_watcher_metrics(raw: bytes | str) -> WatcherMetrics:
    """Decode load-watcher's JSON (msgspec.ValidationError/DecodeError when malformed)."""
    try:
        return _decoder.decode(raw)
    except msgspec.ValidationError:  # the typed fast path refuses Go's nulls
        return watcher_metrics(msgspec.json.decode(raw))


def watcher_metrics(obj: object) -> WatcherMetrics:
    """Build from already-parsed data (a dict in load-watcher's shape; nulls as defaults)."""
    return msgspec.convert(without_nulls(obj), WatcherMetrics, str_keys=True)
