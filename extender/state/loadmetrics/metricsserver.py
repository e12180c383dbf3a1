"""metrics.k8s.io (metrics-server's NodeMetrics) through the extender's Kubernetes client.

As load-watcher's Kubernetes provider (paypal/load-watcher
`pkg/watcher/internal/metricsprovider/k8s.go`, `FetchAllHostsMetrics`): list
`/apis/metrics.k8s.io/v1beta1/nodes`; for each node the extender knows, two metrics with
operator `Latest` (metrics-server has no average or deviation):

    CPU    = 100 * usage.cpu.MilliValue() / capacity.cpu.MilliValue()
    Memory = 100 * usage.memory.Value()   / capacity.memory.Value()

(Go float64 division; `MilliValue` and `Value` round up, as `extender.model.quantity` does).
Capacity is the node's `status.capacity`, read from the extender's cluster state rather than
listed again every refresh. Nodes metrics-server reports but the state does not know, or
whose capacity is zero, are left out (load-watcher skips unknown nodes as well; a zero
capacity would make the percentage infinite). The snapshot's window is the 15 minutes
ending now, as load-watcher's library client labels every fetch.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import msgspec

from extender.kube.client import ApiError, KubeClient, TransportError
from extender.model import k8s
from extender.model.loadmetrics import (
    CPU,
    LATEST,
    MEMORY,
    Data,
    Metric,
    NodeMetrics,
    WatcherMetrics,
)
from extender.model.quantity import QuantityError, milli_value, value
from extender.state.loadmetrics.source import (
    SourceHttpError,
    SourceInvalid,
    SourceTimeout,
    SourceUnreachable,
    current_window,
)

log = logging.getLogger(__name__)

PATH = "/apis/metrics.k8s.io/v1beta1/nodes"
#: load-watcher's `K8sClientName`: the snapshot's `source`.
SOURCE_NAME = "KubernetesMetricsServer"

#: node name -> (capacity cpu in millicores, capacity memory in bytes), None if unknown.
CapacityOf = Callable[[str], tuple[int, int] | None]


class NodeMetricsMeta(msgspec.Struct):
    name: str = ""


class NodeMetricsItem(msgspec.Struct):
    """`metrics.k8s.io/v1beta1` NodeMetrics (the fields read)."""

    metadata: NodeMetricsMeta = msgspec.field(default_factory=NodeMetricsMeta)
    timestamp: str = ""
    window: str = ""
    usage: dict[str, k8s.QuantityValue] | None = None


def node_percentages(item: NodeMetricsItem, capacity: tuple[int, int]) -> tuple[float, float]:
    """(cpu %, memory %) of one NodeMetrics against the node's capacity (both non-zero)."""
    usage = item.usage or {}
    cpu_capacity, memory_capacity = capacity
    cpu = float(100 * milli_value(usage.get("cpu", 0))) / float(cpu_capacity)
    memory = float(100 * value(usage.get("memory", 0))) / float(memory_capacity)
    return cpu, memory


class MetricsServerSource:
    kind = "metrics-server"
    dated = False

    def __init__(self, client: KubeClient, capacity: CapacityOf, *,
                 clock: Callable[[], float] = time.time) -> None:
        self.client = client
        self.capacity = capacity
        self.clock = clock
        self.description = f"metrics.k8s.io at {client.config.server}"
        # Dated by the fetch: metrics-server serves only the nodes of its latest scrape (a
        # node whose kubelet it cannot scrape leaves the list), each item's `timestamp` being
        # at most its resolution old; dating by it would only age healthy nodes.
        self.sample_times: dict[str, float] = {}
        self.notes: tuple[str, ...] = ()

    async def list_items(self) -> list[NodeMetricsItem]:
        items: list[NodeMetricsItem] = []
        token = ""
        while True:
            try:
                page = await self.client.list(PATH, NodeMetricsItem, continue_token=token)
            except TransportError as exc:
                cause = exc.__cause__
                kind = SourceTimeout if "Timeout" in type(cause).__name__ else SourceUnreachable
                raise kind(str(exc)) from None
            except ApiError as exc:
                if exc.reason == "BadResponse":
                    raise SourceInvalid(str(exc)) from None
                hint = (" (is metrics-server installed?)" if exc.code in (404, 503) else
                        " (the extender's ClusterRole needs list on nodes in the metrics.k8s.io "
                        "API group)" if exc.code == 403 else "")
                raise SourceHttpError(f"GET {PATH}: {exc}{hint}", exc.code) from None
            items.extend(page.items or ())
            token = page.continue_token
            if not token:
                return items

    async def fetch(self) -> WatcherMetrics:
        now = self.clock()
        items = await self.list_items()
        nodes: dict[str, NodeMetrics] = {}
        for item in items:
            name = item.metadata.name
            capacity = self.capacity(name)
            if capacity is None or not capacity[0] or not capacity[1]:
                log.debug("node metrics of %s left out: %s", name,
                          "node unknown" if capacity is None else "zero capacity")
                continue
            try:
                cpu, memory = node_percentages(item, capacity)
            except QuantityError as exc:
                log.debug("node metrics of %s left out: %s", name, exc)
                continue
            nodes[name] = NodeMetrics(metrics=[
                Metric(type=CPU, operator=LATEST, value=cpu),
                Metric(type=MEMORY, operator=LATEST, value=memory)])
        return WatcherMetrics(timestamp=int(now), window=current_window(now), source=SOURCE_NAME,
                              data=Data(NodeMetricsMap=nodes))

    async def aclose(self) -> None:
        """The client belongs to the live state (or whoever built it): not closed here."""
