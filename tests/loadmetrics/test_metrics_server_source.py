"""metrics.k8s.io NodeMetrics through the extender's Kubernetes client, against the fake API
server (which serves metrics-server's API additively)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from extender.kube.client import KubeClient
from extender.kube.config import load_kubeconfig
from extender.model.loadmetrics import CPU, LATEST, MEMORY
from extender.state.loadmetrics.metricsserver import MetricsServerSource
from extender.state.loadmetrics.source import HTTP_ERROR, UNREACHABLE, SourceError
from tests.kube.fake_apiserver import FakeApiServer, Fault

pytestmark = pytest.mark.anyio

GI = 1024 ** 3
#: node -> (capacity cpu millicores, capacity memory bytes), as the cluster state has them.
CAPACITY = {"node-a": (4000, 8 * GI), "node-b": (2000, 4 * GI), "node-zero": (0, 4 * GI)}


@pytest.fixture
def apiserver() -> Iterator[FakeApiServer]:
    with FakeApiServer(bookmark_interval=0.2) as server:
        yield server


@pytest.fixture
async def client(apiserver: FakeApiServer, tmp_path: Path) -> AsyncIterator[KubeClient]:
    config = load_kubeconfig(apiserver.write_kubeconfig(tmp_path / "kubeconfig"))
    async with KubeClient(config, timeout=2.0) as client:
        yield client


def source(client: KubeClient) -> MetricsServerSource:
    return MetricsServerSource(client, CAPACITY.get, clock=lambda: 1_700_000_000.0)


async def test_usage_as_percent_of_capacity_latest(apiserver: FakeApiServer, client) -> None:
    apiserver.set_node_metrics("node-a", "1500m", "2Gi")
    apiserver.set_node_metrics("node-b", "1", "1073741824")
    apiserver.set_node_metrics("node-c", "100m", "1Gi")        # not in the cluster state
    apiserver.set_node_metrics("node-zero", "100m", "1Gi")     # capacity 0: left out
    snapshot = await source(client).fetch()
    nodes = snapshot.data.NodeMetricsMap
    assert set(nodes) == {"node-a", "node-b"}
    # load-watcher's k8s provider: 100 * usage.MilliValue() / capacity.MilliValue(), Latest.
    assert [(m.type, m.operator, m.value) for m in nodes["node-a"].metrics] == [
        (CPU, LATEST, 37.5), (MEMORY, LATEST, 25.0)]
    assert [(m.type, m.operator, m.value) for m in nodes["node-b"].metrics] == [
        (CPU, LATEST, 50.0), (MEMORY, LATEST, 25.0)]
    assert snapshot.source == "KubernetesMetricsServer"
    assert (snapshot.window.duration, snapshot.window.end - snapshot.window.start) == ("15m", 900)
    assert snapshot.timestamp == 1_700_000_000


async def test_quantities_round_up_as_milli_value(apiserver: FakeApiServer, client) -> None:
    # 1n of cpu is 1m (MilliValue rounds up); 1 byte short of 1Gi stays bytes.
    apiserver.set_node_metrics("node-a", "1n", "1073741823")
    metrics = (await source(client).fetch()).data.NodeMetricsMap["node-a"].metrics
    assert metrics[0].value == 100 * 1 / 4000
    assert metrics[1].value == float(100 * 1073741823) / float(8 * GI)


async def test_without_metrics_server(client, tmp_path: Path) -> None:
    with FakeApiServer(without=("nodemetrics",)) as bare:
        config = load_kubeconfig(bare.write_kubeconfig(tmp_path / "bare"))
        async with KubeClient(config, timeout=2.0) as bare_client:
            with pytest.raises(SourceError) as caught:
                await source(bare_client).fetch()
    assert caught.value.outcome == HTTP_ERROR
    assert "404" in str(caught.value) and "is metrics-server installed?" in str(caught.value)


async def test_api_failures(apiserver: FakeApiServer, client) -> None:
    apiserver.inject(Fault("status", path="/apis/metrics.k8s.io", status=500))
    with pytest.raises(SourceError) as caught:
        await source(client).fetch()
    assert caught.value.outcome == HTTP_ERROR
    apiserver.inject(Fault("status", path="/apis/metrics.k8s.io", status=403))
    with pytest.raises(SourceError) as caught:
        await source(client).fetch()
    assert "needs list on nodes in the metrics.k8s.io API group" in str(caught.value)
    apiserver.inject(Fault("drop", path="/apis/metrics.k8s.io"))
    with pytest.raises(SourceError) as caught:
        await source(client).fetch()
    assert caught.value.outcome == UNREACHABLE
    # and it recovers
    apiserver.set_node_metrics("node-a", "400m", "1Gi")
    assert set((await source(client).fetch()).data.NodeMetricsMap) == {"node-a"}


async def test_the_fake_serves_one_node_and_404s(apiserver: FakeApiServer, client) -> None:
    import httpx

    apiserver.set_node_metrics("node-a", "400m", "1Gi")
    headers = {"Authorization": "Bearer test-token"}
    async with httpx.AsyncClient(base_url=apiserver.url, headers=headers) as http:
        one = await http.get("/apis/metrics.k8s.io/v1beta1/nodes/node-a")
        assert one.status_code == 200
        assert one.json()["kind"] == "NodeMetrics"
        assert one.json()["usage"] == {"cpu": "400m", "memory": "1Gi"}
        assert (await http.get("/apis/metrics.k8s.io/v1beta1/nodes/nope")).status_code == 404
        listed = (await http.get("/apis/metrics.k8s.io/v1beta1/nodes")).json()
        assert listed["kind"] == "NodeMetricsList"
        assert [i["metadata"]["name"] for i in listed["items"]] == ["node-a"]
    apiserver.remove_node_metrics()
    assert (await source(client).fetch()).data.NodeMetricsMap == {}
