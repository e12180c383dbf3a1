"""NodeResourceTopology objects list+watched from the (fake) API server when
NodeResourceTopologyMatch is enabled: reports arrive in the state, a bind's reservation lasts
until the overreserve cache's resync takes a report whose pod fingerprint counts the pod
(`extender serve`, as a user runs it), and without the plugin nothing is watched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extender.engine.cluster import ClusterState
from extender.engine.plugins.node_resource_topology.store import TopologyStore
from extender.kube.client import KubeClient
from extender.kube.config import ClusterConfig
from extender.model import k8s, podfingerprint
from extender.model.pod import PodView
from extender.state.informer import LiveState, resources_for
from tests.engine.nrt_builders import guaranteed, node_for, nrt, nrt_policy
from tests.kube.fake_apiserver import FakeApiServer
from tests.kube.kube_helpers import eventually
from tests.kube.test_gang_quota_live import Extender
from tests.polling import until

pytestmark = pytest.mark.anyio

ZONES = [("node-0", [("cpu", "4", "4"), ("memory", "8Gi", "8Gi")], None),
         ("node-1", [("cpu", "4", "4"), ("memory", "8Gi", "8Gi")], None)]


async def test_reports_are_watched_and_the_cache_keeps_its_copy(
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
            store = state.store(TopologyStore)
            view = store.node_topology("n1")
            assert view is not None and view.manager.policy == "single-numa-node"
            pending = PodView.from_k8s(k8s.convert(guaranteed("p", {"cpu": "3", "memory": "1Gi"}),
                                                   k8s.Pod))
            state.assume(pending, "n1", 30.0)  # what a bind does
            assert len(store.reservations("n1")) == 1
            apiserver.update("NodeResourceTopology", "", "n1",
                             lambda o: o["zones"][0]["resources"][0].update(available="1"))
            await eventually(lambda: store.node_topology("n1").cells[0].resources["cpu"] == 10**9,  # type: ignore[union-attr]
                             what="the new report arrives")
            # The cache keeps its copy and the reservation until a resync takes a report.
            assert len(store.reservations("n1")) == 1
            assert store.cached_topology("n1").cells[0].resources["cpu"] == 4 * 10**9  # type: ignore[union-attr]
            apiserver.delete("NodeResourceTopology", "", "n1")
            await eventually(lambda: store.node_topology("n1") is None, what="report deleted")
        finally:
            await live.stop()


def test_not_watched_without_the_plugin() -> None:
    assert all(spec.name != "noderesourcetopologies" for spec in resources_for(["NodeResourcesFit"]))
    (spec,) = [s for s in resources_for(["NodeResourceTopologyMatch"])
               if s.name == "noderesourcetopologies"]
    assert spec.crd == "noderesourcetopologies.topology.node.k8s.io" and spec.component == "numa"


# ---- `extender serve`, as a user runs it -----------------------------------------------------
def _metric(extender: Extender, name: str, **labels: str) -> float:
    wanted = ",".join(f'{k}="{v}"' for k, v in labels.items())
    head = f"{name}{{{wanted}}} " if labels else f"{name} "
    with extender.client() as client:
        for line in client.get("/metrics").text.splitlines():
            if line.startswith(head):
                return float(line.split()[1])
    return 0.0


@pytest.mark.slow
def test_serve_keeps_a_bind_until_a_report_counts_the_pod(
        apiserver: FakeApiServer, tmp_path: Path) -> None:
    """A report made before the kubelet admitted the bound pod (its fingerprint counts no pod)
    leaves the pod reserved; the one that counts it is taken at the next resync. A pod another
    scheduler binds then makes the node stale."""
    policy = nrt_policy(filters=True, scores=False, args={"cacheResyncPeriodSeconds": 1})
    policy_path = tmp_path / "policy.json"
    policy_path.write_text(json.dumps(policy))
    apiserver.put(node_for("n1", ZONES))
    apiserver.put(nrt("n1", ZONES, ["SingleNUMANodeContainerLevel"]))
    first = apiserver.put(guaranteed("first", {"cpu": "3", "memory": "1Gi"}))
    second = apiserver.put(guaranteed("second", {"cpu": "3", "memory": "1Gi"}))
    extender = Extender(apiserver, tmp_path, policy_path)
    try:
        extender.wait_ready()
        with extender.client() as client:
            def passes(pod: dict) -> bool:
                reply = client.post("/filter", json={"Pod": pod, "NodeNames": ["n1"]}).json()
                assert not reply.get("Error"), reply
                return reply["NodeNames"] == ["n1"]

            assert passes(first)
            meta = first["metadata"]
            bound = client.post("/bind", json={"PodName": meta["name"], "PodNamespace": "default",
                                               "PodUID": meta["uid"], "Node": "n1"}).json()
            assert not bound.get("Error"), bound
            assert not passes(second)  # 1 cpu left on each cell: a rejection marks n1
            # The agent reports before the kubelet admitted `first`: no pod counted.
            events = _metric(extender, "extender_informer_events_total",
                             resource="noderesourcetopologies", type="MODIFIED")
            apiserver.update("NodeResourceTopology", "", "n1", lambda o: o.update(attributes=[
                {"name": podfingerprint.ATTRIBUTE, "value": podfingerprint.sign([])}]))
            until(lambda: _metric(extender, "extender_informer_events_total",
                                  resource="noderesourcetopologies", type="MODIFIED") > events,
                  "the extender to see the report")
            rounds = _metric(extender, "extender_nrt_cache_resyncs_total")
            until(lambda: _metric(extender, "extender_nrt_cache_resyncs_total") >= rounds + 2,
                  "two resyncs after the report")
            assert not passes(second)
            assert _metric(extender, "extender_nrt_cache_flushed_nodes_total") == 0
            # The kubelet runs `first` on cell 0, and the agent's report counts it.
            apiserver.update("Pod", "default", "first",
                             lambda o: o.setdefault("status", {}).update(phase="Running"))

            def counted(o: dict) -> None:
                o["zones"][0]["resources"][0].update(available="1")
                o["attributes"] = [{"name": podfingerprint.ATTRIBUTE,
                                    "value": podfingerprint.sign([("default", "first")])}]

            apiserver.update("NodeResourceTopology", "", "n1", counted)
            until(lambda: passes(second), "the resync to take the report")
            assert _metric(extender, "extender_nrt_cache_flushed_nodes_total") == 1
            # A pod another scheduler bound makes the node stale to the cache.
            other = guaranteed("other", {"cpu": "1", "memory": "1Gi"})
            other["spec"].update(nodeName="n1", schedulerName="default-scheduler")
            apiserver.put(other)
            until(lambda: client.post("/filter", json={"Pod": second, "NodeNames": ["n1"]}).json()
                  ["FailedNodes"] == {"n1": "invalid node topology data"},
                  "the foreign pod to make n1 stale")
    finally:
        extender.stop()


def test_a_recorded_resync_replays_and_its_absence_is_a_mismatch(tmp_path: Path) -> None:
    """`serve --record`: a resync that took a fresh report is an entry of its own; the replay
    resyncs there (and only there), so the filter after it answers as recorded."""
    import asyncio

    from extender.api.replay import replay_file
    from extender.state import recording
    from tests.serving import eventually as served_eventually
    from tests.serving import serve_args, served

    policy_path = tmp_path / "policy.json"
    policy_path.write_text(json.dumps(nrt_policy(filters=True, scores=False,
                                                 args={"cacheResyncPeriodSeconds": 1})))
    first, second = guaranteed("first", {"cpu": "3", "memory": "1Gi"}), guaranteed(
        "second", {"cpu": "3", "memory": "1Gi"})
    with FakeApiServer(bookmark_interval=0.2) as server:
        server.put(node_for("n1", ZONES))
        server.put(nrt("n1", ZONES, ["SingleNUMANodeContainerLevel"]))
        first, second = server.put(first), server.put(second)
        args = serve_args("--kubeconfig", str(server.write_kubeconfig(tmp_path / "kubeconfig")),
                          "--policy", str(policy_path), "--record", str(tmp_path / "rec"))

        async def session() -> list[list[str]]:
            passed = []
            async with served(args) as (client, runtime):
                await served_eventually(lambda: runtime.readiness()[0], "the informers' sync")

                async def nodes(pod: dict) -> list[str]:
                    reply = (await client.post("/filter", json={"Pod": pod,
                                                                "NodeNames": ["n1"]})).json()
                    return reply["NodeNames"]

                passed.append(await nodes(first))
                meta = first["metadata"]
                await client.post("/bind", json={"PodName": "first", "PodNamespace": "default",
                                                 "PodUID": meta["uid"], "Node": "n1"})
                passed.append(await nodes(second))
                server.update("Pod", "default", "first",
                              lambda o: o.setdefault("status", {}).update(phase="Running"))
                server.update("NodeResourceTopology", "", "n1", lambda o: o.update(attributes=[
                    {"name": podfingerprint.ATTRIBUTE,
                     "value": podfingerprint.sign([("default", "first")])}]))
                store = runtime.state.store(TopologyStore)
                await served_eventually(lambda: store.generation == 1, "the resync's flush")
                passed.append(await nodes(second))
            return passed

        assert asyncio.run(session()) == [["n1"], [], ["n1"]]
    path = tmp_path / "rec" / "recording-1.jsonl"
    rec = recording.read(path)
    assert [e.nodes for e in rec.entries if isinstance(e, recording.NRTResync)] == [["n1"]]
    report = replay_file(path)
    assert report.ok, report.summary()
    without = tmp_path / "without.jsonl"
    without.write_bytes(b"".join(recording.encode(e) for e in [
        rec.header, *(e for e in rec.entries if not isinstance(e, recording.NRTResync))]))
    report = replay_file(without)
    assert len(report.mismatches) == 1 and "reply differs" in str(report.mismatches[0])
