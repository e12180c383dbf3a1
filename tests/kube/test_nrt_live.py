"""NodeResourceTopology objects list+watched from the (fake) API server when
NodeResourceTopologyMatch is enabled: reports arrive in the state, a bind's reservation lasts
until the node's next report, and without the plugin nothing is watched."""

from __future__ import annotations

import pytest

from extender.engine.cluster import ClusterState
from extender.engine.plugins.node_resource_topology.store import TopologyStore
from extender.kube.client import KubeClient
from extender.kube.config import ClusterConfig
from extender.model import k8s
from extender.model.pod import PodView
from extender.state.informer import LiveState, resources_for
from tests.engine.nrt_builders import guaranteed, node_for, nrt
from tests.kube.fake_apiserver import FakeApiServer
from tests.kube.kube_helpers import eventually

pytestmark = pytest.mark.anyio

ZONES = [("node-0", [("cpu", "4", "4"), ("memory", "8Gi", "8Gi")], None),
         ("node-1", [("cpu", "4", "4"), ("memory", "8Gi", "8Gi")], None)]


async def test_reports_are_watched_and_flush_reservations(
        apiserver: FakeApiServer, kube_config: ClusterConfig) -> None:
    apiserver.put(node_for("n1", ZONES))
    apiserver.put(nrt("n1", ZONES, ["SingleNUMANodeContainerLevel"]))
    async with KubeClient(kube_config) as client:
        live = LiveState(client, ClusterState(),
                         resources=resources_for(["NodeResourceTopologyMatch"]),
                         backoff_initial=0.05, backoff_max=0.2)
        live.start()
        try:
            assert await live.wait_synced(5)
            assert "noderesourcetopologies" in live.informers
            state = live.state
            view = state.store(TopologyStore).node_topology("n1")
            assert view is not None and view.manager.policy == "single-numa-node"
            pending = PodView.from_k8s(k8s.convert(guaranteed("p", {"cpu": "3", "memory": "1Gi"}),
                                                   k8s.Pod))
            state.assume(pending, "n1", 30.0)  # what a bind does
            assert len(state.store(TopologyStore).reservations("n1")) == 1
            apiserver.update("NodeResourceTopology", "", "n1",
                             lambda o: o["zones"][0]["resources"][0].update(available="1"))
            await eventually(lambda: not state.store(TopologyStore).reservations("n1"),
                             what="the new report supersedes the reservation")
            view = state.store(TopologyStore).node_topology("n1")
            assert view is not None and view.cells[0].resources["cpu"] == 10**9
            apiserver.delete("NodeResourceTopology", "", "n1")
            await eventually(lambda: state.store(TopologyStore).node_topology("n1") is None, what="report deleted")
        finally:
            await live.stop()


def test_not_watched_without_the_plugin() -> None:
    assert all(spec.name != "noderesourcetopologies" for spec in resources_for(["NodeResourcesFit"]))
    (spec,) = [s for s in resources_for(["NodeResourceTopologyMatch"])
               if s.name == "noderesourcetopologies"]
    assert spec.crd == "noderesourcetopologies.topology.node.k8s.io" and spec.component == "numa"
