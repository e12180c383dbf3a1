"""NodeResourceTopologyMatch's overreserve cache in the extender: the pods this extender binds
count against every NUMA cell of the cache's copy of their node's NodeResourceTopology until a
resync takes a report that counts them (`cacheResyncPeriodSeconds` > 0: test_nrt_resync.py);
without it the reports are read as they are."""

from __future__ import annotations

import asyncio

from extender.engine.cluster import ClusterState
from extender.engine.evaluate import cluster_from_objects
from extender.engine.framework import CycleState
from extender.engine.plugins.node_resource_topology import NodeResourceTopologyMatch
from extender.engine.plugins.node_resource_topology.args import NodeResourceTopologyMatchArgs
from extender.engine.plugins.node_resource_topology.store import TopologyStore
from extender.engine.policy import parse_policy
from extender.engine.profile import build_profile
from extender.engine.runner import run_filters
from extender.model import k8s
from extender.model.numa import NRTView, units
from extender.model.pod import PodView
from extender.state.binder import SnapshotBinder
from tests.engine.nrt_builders import container, guaranteed, node_for, nrt, nrt_policy, pod

CPU, MEMORY, NIC = "cpu", "memory", "vendor/nic1"
ZONES = [("node-0", [(CPU, "4", "4"), (MEMORY, "8Gi", "8Gi")], None),
         ("node-1", [(CPU, "4", "4"), (MEMORY, "8Gi", "8Gi")], None)]
POLICY = ["SingleNUMANodeContainerLevel"]
OVERRESERVE = {"cacheResyncPeriodSeconds": 5}


def cluster(*extra: dict) -> ClusterState:
    return cluster_from_objects([node_for("n1", ZONES), nrt("n1", ZONES, POLICY, resource_version="1"),
                                 *extra])


def verdict(state: ClusterState, pending: dict, args: dict | None = OVERRESERVE) -> str | None:
    profile = build_profile(parse_policy(nrt_policy(filters=True, scores=False, args=args)))
    view = PodView.from_k8s(k8s.convert(pending, k8s.Pod))
    result = run_filters(profile, view, [state.nodes["n1"]], state)
    status = result.statuses.get("n1")
    return None if status is None else status.message


def bind(state: ClusterState, pending: dict, node: str = "n1") -> None:
    """What the bind verb does offline: assume the remembered pending pod on the node."""
    view = PodView.from_k8s(k8s.convert(pending, k8s.Pod))
    state.remember_pending(view)
    meta = pending["metadata"]
    asyncio.run(SnapshotBinder(state, 30.0).bind(meta["namespace"], meta["name"], meta["uid"],
                                                 node))


def test_a_pod_bound_by_the_extender_counts_until_a_resync_takes_a_report() -> None:
    state = cluster()
    first, second = guaranteed("first", {CPU: "3", MEMORY: "1Gi"}), guaranteed(
        "second", {CPU: "3", MEMORY: "1Gi"})
    assert verdict(state, first) is None
    bind(state, first)
    # The report still says 4 cpus per cell, but `first` may be on either: 1 left on each.
    assert verdict(state, second) == "cannot align container"
    # The agent's next report shows where `first` went: cell 1 still has 4. It does not
    # replace the cache's copy by itself (it may predate the kubelet's admission of a pod);
    # without a pod fingerprint no resync ever takes it.
    newer = [("node-0", [(CPU, "4", "1"), (MEMORY, "8Gi", "7Gi")], None), ZONES[1]]
    state.apply("NodeResourceTopology", k8s.convert(
        nrt("n1", newer, POLICY, resource_version="2"), k8s.NodeResourceTopology))
    store = state.store(TopologyStore)
    assert len(store.reservations("n1")) == 1
    assert store.resync() == []
    assert verdict(state, second) == "cannot align container"
    # Read as they are (passthrough), the reports show the latest one.
    assert verdict(state, second, args=None) is None


def test_without_the_cache_the_report_is_read_as_it_is() -> None:
    state = cluster()
    bind(state, guaranteed("first", {CPU: "3", MEMORY: "1Gi"}))
    second = guaranteed("second", {CPU: "3", MEMORY: "1Gi"})
    assert verdict(state, second, args=None) is None  # passthrough (cacheResyncPeriodSeconds 0)
    # discardReservedNodes takes precedence over the cache: the extender reserves and binds in
    # one verb, so no node is ever between the two, and the reports are read as they are.
    assert verdict(state, second, args={**OVERRESERVE, "discardReservedNodes": True}) is None


def test_reservations_are_taken_from_every_cell_and_floored_at_zero() -> None:
    state = cluster()
    bind(state, guaranteed("big", {CPU: "3", MEMORY: "1Gi"}))
    bind(state, guaranteed("bigger", {CPU: "3", MEMORY: "1Gi"}))
    view = state.store(TopologyStore).node_topology("n1")
    assert view is not None
    cells = view.with_reserved(state.store(TopologyStore).reservations("n1"))
    # 4 - 3 = 1, then 1 < 3: "cannot decrement resource", zeroed (upstream logs and zeroes).
    assert [units(c.resources[CPU]) for c in cells] == [0, 0]
    assert [c.resources[MEMORY] for c in cells] == [6 * 2**30 * 10**9] * 2
    assert view.cells[0].resources[CPU] == 4 * 10**9  # the report itself is untouched


def test_resource_store_update() -> None:
    """cache/store_test.go TestResourceStoreUpdate: a pod's effective request (cnt-0 16 cpus,
    4Gi, 2 nics; cnt-1 2 cpus, 2Gi) is taken from every zone that reports the resource."""
    zones = [("node-0", [(CPU, "20", "20"), (MEMORY, "32Gi", "32Gi")], None),
             ("node-1", [(CPU, "20", "20"), (MEMORY, "32Gi", "32Gi"), (NIC, "8", "8")], None)]
    state = cluster_from_objects([node_for("node", zones),
                                  nrt("node", zones, ["SingleNUMANodePodLevel"])])
    bind(state, pod("pod-0", [container("cnt-0", {CPU: "16", MEMORY: "4Gi", NIC: "2"}),
                              container("cnt-1", {CPU: "2", MEMORY: "2Gi"})], namespace="ns-0"),
         node="node")
    view = state.store(TopologyStore).node_topology("node")
    assert view is not None
    cells = view.with_reserved(state.store(TopologyStore).reservations("node"))
    assert [units(c.resources[CPU]) for c in cells] == [2, 2]
    assert [units(c.resources[MEMORY]) for c in cells] == [26 * 2**30] * 2
    assert NIC not in cells[0].resources
    assert units(cells[1].resources[NIC]) == 6


def test_the_effective_request_is_reserved_init_containers_included() -> None:
    state = cluster()
    bind(state, pod("p", [container("a", {CPU: "1"}), container("b", {CPU: "1"})],
                    [container("init", {CPU: "3", MEMORY: "1Gi"})]))
    (reserved,) = state.store(TopologyStore).reservations("n1")
    assert reserved == {CPU: 3 * 10**9, MEMORY: 2**30 * 10**9}  # max(Σ app, largest init)


def test_only_nodes_with_a_report_keep_reservations() -> None:
    state = cluster_from_objects([node_for("bare", ZONES)])
    bind(state, guaranteed("p", {CPU: "1", MEMORY: "1Gi"}), node="bare")
    assert state.store(TopologyStore).reserved == {}


def test_deleting_or_relisting_away_the_report_leaves_the_cache_its_copy() -> None:
    # Upstream's cache never drops a node's copy; without the cache nothing is read.
    state = cluster()
    bind(state, guaranteed("p", {CPU: "1", MEMORY: "1Gi"}))
    state.replace("NodeResourceTopology", [])
    store = state.store(TopologyStore)
    assert store.node_topology("n1") is None
    assert store.cached_topology("n1") is not None and len(store.reservations("n1")) == 1
    state.delete("NodeResourceTopology", "", "n1")
    assert verdict(state, guaranteed("big", {CPU: "4", MEMORY: "1Gi"})) == "cannot align container"
    assert verdict(state, guaranteed("big", {CPU: "4", MEMORY: "1Gi"}), args=None) is None


def test_a_relist_of_the_same_report_keeps_reservations() -> None:
    state = cluster()
    bind(state, guaranteed("p", {CPU: "1", MEMORY: "1Gi"}))
    same = k8s.convert(nrt("n1", ZONES, POLICY, resource_version="1"), k8s.NodeResourceTopology)
    state.replace("NodeResourceTopology", [same])
    assert len(state.store(TopologyStore).reservations("n1")) == 1


def test_scores_read_the_reduced_cells() -> None:
    state = cluster()
    plugin = NodeResourceTopologyMatch(NodeResourceTopologyMatchArgs.model_validate(
        {**OVERRESERVE, "scoringStrategy": {"type": "LeastAllocated"}}))
    second = PodView.from_k8s(k8s.convert(guaranteed("second", {CPU: "1", MEMORY: "1Gi"}), k8s.Pod))
    before = plugin.score(CycleState(), second, [state.nodes["n1"]], state)
    bind(state, guaranteed("first", {CPU: "2", MEMORY: "1Gi"}))
    after = plugin.score(CycleState(), second, [state.nodes["n1"]], state)
    # cpu 1 of 4 and 1Gi of 8Gi: (75 + 87) / 2 = 81; then 1 of 2 and 1Gi of 7Gi: (50 + 85) / 2.
    assert before == [81] and after == [67]


def test_view_keeps_the_topology_manager_configuration() -> None:
    obj = nrt("n", ZONES, ["SingleNUMANodePodLevel"],
              attributes={"topologyManagerScope": "container", "topologyManagerMaxNUMANodes": "2048"})
    view = NRTView.from_k8s(k8s.convert(obj, k8s.NodeResourceTopology))
    # attributes win over the deprecated topologyPolicies; maxNUMANodes is capped at 1024
    assert (view.manager.policy, view.manager.scope, view.manager.max_numa_nodes) == (
        "single-numa-node", "container", 1024)


def test_snapshots_carry_node_resource_topologies(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from extender.state.snapshot import load_snapshot

    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"kind": "List", "items": [
        node_for("n1", ZONES), nrt("n1", ZONES, POLICY, resource_version="7")]}))
    state = load_snapshot(path)
    view = state.store(TopologyStore).node_topology("n1")
    assert view is not None and view.resource_version == "7"
    assert verdict(state, guaranteed("big", {CPU: "5", MEMORY: "1Gi"})) == "cannot align container"


def test_a_watch_that_beats_the_bind_reply_still_leaves_the_reservation() -> None:
    from extender.state.binder import _assume_now

    state = cluster()
    first = guaranteed("first", {CPU: "3", MEMORY: "1Gi"})
    view = PodView.from_k8s(k8s.convert(first, k8s.Pod))
    state.remember_pending(view)
    # The informer's event for the bound pod arrives before the binding call returns.
    bound = {**first, "spec": {**first["spec"], "nodeName": "n1"}}
    state.apply_pod(k8s.convert(bound, k8s.Pod))
    _assume_now(state, view, view.uid, "n1", 30.0)
    assert not state.assumed  # confirmed: nothing to expire
    assert verdict(state, guaranteed("second", {CPU: "3", MEMORY: "1Gi"})) == "cannot align container"
