"""End to end: NetworkOverhead with `extender serve --kubeconfig` against the loopback API server.
The extender lists and watches AppGroups and NetworkTopologies (only because its policy enables
NetworkOverhead, here as a scorer alone), and its prioritize answers follow them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.engine.upstream import networkaware_data as data
from tests.engine.upstream.test_networkaware_rows import app_group, network_topology
from tests.kube import kube_objects as ko
from tests.kube.fake_apiserver import FakeApiServer
from tests.kube.test_gang_quota_live import Extender
from tests.polling import until

AG = "appgroup.diktyo.x-k8s.io"


@pytest.fixture
def apiserver() -> Iterator[FakeApiServer]:
    with FakeApiServer(bookmark_interval=0.5) as server:
        yield server


def _member(name: str, selector: str, node: str = "") -> dict:
    pod = ko.pod(name, cpu="100m", memory="128Mi", node_name=node,
                 phase="Running" if node else "Pending",
                 labels={AG: "basic", f"{AG}.workload": selector})
    return pod


@pytest.mark.slow
def test_prioritize_follows_the_app_group_and_the_network_topology(
        apiserver: FakeApiServer, tmp_path: Path) -> None:
    server = apiserver
    server.load([ko.node(name, labels={data.REGION: region, data.ZONE: zone})
                 for name, region, zone in data.NODES_BASIC])
    server.put(app_group(data.APP_GROUP_BASIC))
    server.put(network_topology(data.NETWORK_TOPOLOGY_BASIC))
    server.put(_member("p2-0", "p2", "n-5"))
    pending = server.put(_member("p1-0", "p1"))
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({
        "apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
        "plugins": {"score": {"enabled": [{"name": "NetworkOverhead", "weight": 1}]}},
        "pluginConfig": [{"name": "NetworkOverhead", "args": {"networkTopologyName": "nt-test"}}]}))
    extender = Extender(server, tmp_path, policy)
    names = [name for name, _, _ in data.NODES_BASIC]
    body = {"Pod": pending, "Nodes": None, "NodeNames": names}

    def scores_now(client: httpx.Client) -> list[int]:
        return [e["Score"] for e in client.post("/prioritize", json=body).json()]

    try:
        extender.wait_ready()
        with extender.client() as client:
            # Upstream's "p1 to allocate" costs {20,20,20,20,0,1,10,10} -> {0,0,0,0,100,95,50,50}.
            assert scores_now(client) == [0, 0, 0, 0, 10, 10, 5, 5]
            # Z4 -> Z3 gets cheap (1): n-7 and n-8 now score like n-6.
            topology = network_topology(data.NETWORK_TOPOLOGY_BASIC)
            zone = topology["spec"]["weights"][0]["topologyList"][1]
            zone["originList"][3]["costList"][0]["networkCost"] = 1  # Z4 -> Z3
            server.put(topology)
            until(lambda: scores_now(client) == [0, 0, 0, 0, 10, 10, 10, 10],
                  "the NetworkTopology update to reach the extender", 15)
            # The AppGroup loses p1's dependency: every node scores equally (0).
            server.put(app_group({**data.APP_GROUP_BASIC,
                                  "workloads": [("p1", []), ("p2", ["p3"]), ("p3", [])]}))
            until(lambda: scores_now(client) == [0] * 8,
                  "the AppGroup update to reach the extender", 15)
    finally:
        extender.stop()
