"""The overreserve cache's resync (scheduler-plugins v0.34.7 `pkg/noderesourcetopology/cache`):
a node's copy is replaced only for a node a Filter rejected a pod on, when its latest report's
pod fingerprint matches the relevant pods on it, or when its Topology Manager changed.

Upstream data: `k8stopologyawareschedwg/podfingerprint` `testdata/compat-*` (golden signs),
`cache/overreserve_test.go` (TestDirtyNodes*, TestGetCachedNRTCopyReserve, TestFlush,
TestResync*, TestMakeNodeToPodDataMap), `resourcerequests/exclusive_test.go`."""

from __future__ import annotations

import random

import pytest

from extender.engine.cluster import ClusterState
from extender.engine.evaluate import cluster_from_objects
from extender.engine.plugins.node_resource_topology import NodeResourceTopologyMatch
from extender.engine.plugins.node_resource_topology.args import NodeResourceTopologyMatchArgs
from extender.engine.plugins.node_resource_topology.store import (
    INFORMER_DEDICATED,
    INFORMER_SHARED,
    ListedPod,
    TopologyStore,
    relevant,
)
from extender.model import k8s, podfingerprint
from extender.model.numa import exclusive_resources, units
from extender.model.pod import PodView
from tests.engine.nrt_builders import container, guaranteed, node_for, nrt, pod
from tests.engine.test_nrt_overreserve import bind, verdict

CPU, MEMORY, NIC = "cpu", "memory", "vendor/nic1"
POLICY = ["SingleNUMANodeContainerLevel"]
# makeDefaultTestTopology (cache/cache_test.go): node1, two cells of 30 of 32 cpus, 60 of 64Gi.
DEFAULT_ZONES = [("node-0", [(CPU, "32", "30"), (MEMORY, "64Gi", "60Gi"), (NIC, "16", "16")], None),
                 ("node-1", [(CPU, "32", "30"), (MEMORY, "64Gi", "60Gi"), (NIC, "16", "16")], None)]
# The report TestFlush and TestResync* flush to: cell 1 has the reserved pod.
FLUSHED_ZONES = [DEFAULT_ZONES[0],
                 ("node-1", [(CPU, "32", "22"), (MEMORY, "64Gi", "44Gi"), (NIC, "16", "16")], None)]
POD1_FINGERPRINT = "pfp0v0019e0420efb37746c6"  # namespace1/pod1 (TestResyncMatchFingerprint)


def report(zones: list, *, fingerprint: str | None = None, annotation: str | None = None,
           attributes: dict[str, str] | None = None, name: str = "node1",
           policies: list[str] | None = POLICY) -> k8s.NodeResourceTopology:
    attrs = dict(attributes or {})
    if fingerprint is not None:
        attrs[podfingerprint.ATTRIBUTE] = fingerprint
    obj = nrt(name, zones, policies, attributes=attrs or None)
    if annotation is not None:
        obj["metadata"]["annotations"] = {podfingerprint.ANNOTATION: annotation}
    return k8s.convert(obj, k8s.NodeResourceTopology)


def store_with(*reports: k8s.NodeResourceTopology, foreign: str = "None"
               ) -> tuple[ClusterState, TopologyStore]:
    """A state whose cache lists pods (upstream's tests make the cache without foreign-pod
    detection, which the plugin sets up)."""
    state = ClusterState()
    store = state.store(TopologyStore)
    store.enable("Autodetect", INFORMER_DEDICATED, foreign_detect=foreign)
    for obj in reports:
        state.apply("NodeResourceTopology", obj)
    return state, store


def pod_view(obj: dict) -> PodView:
    return PodView.from_k8s(k8s.convert(obj, k8s.Pod))


TEST_POD = pod("pod1", [container("c", {CPU: "8", MEMORY: "16Gi"}, {CPU: "8", MEMORY: "16Gi"})],
               namespace="namespace1")


def cached_cells(state: ClusterState, node: str = "node1") -> list[tuple[int, int, int]]:
    """(cpus, GiB of memory, nics) per cell, as the plugin reads them with the cache on."""
    plugin = NodeResourceTopologyMatch(NodeResourceTopologyMatchArgs.model_validate(
        {"cacheResyncPeriodSeconds": 5}))
    _, cells = plugin.topology(node, state)
    return [(units(c.resources[CPU]), units(c.resources[MEMORY]) // 2**30, units(c.resources[NIC]))
            for c in cells]


# ---- the fingerprint ------------------------------------------------------------------------
TINY = ["production jaeger-dpgjk", "production nginx-rt684", "production envoy-g9m22"]
SMALL = ["analytics controller-69dkj", "kube-public subscriber-tq6v7",
         "kube-public transformer-hfbng", "kube-public validator-c6pn5", "kube-system proxy-wszrd",
         "middleware processor-jkrl4", "network gateway-vsll5", "network importer-kzdfr",
         "network importer-q5vt9", "staging prometheus-bwgbn"]


@pytest.mark.parametrize(("listing", "golden"), [
    (TINY, "pfp0v001607b76a0e9d3aeb4"),  # testdata/compat-tiny-3pods-1ns
    (SMALL, "pfp0v001567144e4a561bb5a"),  # testdata/compat-small-10pods-3ns
    (["namespace1 pod1"], POD1_FINGERPRINT),  # cache/overreserve_test.go
], ids=["tiny-3pods-1ns", "small-10pods-3ns", "namespace1-pod1"])
def test_golden_signs_in_any_order(listing: list[str], golden: str) -> None:
    """TestCompatGoldenSign, TestCompatGoldenCheck, TestCompatGoldenOrderIndependent."""
    pods = [tuple(line.split()) for line in listing]
    assert podfingerprint.sign(pods) == golden  # type: ignore[arg-type]
    random.Random(12345).shuffle(pods)
    assert podfingerprint.sign(pods) == golden  # type: ignore[arg-type]
    hashes = [podfingerprint.pod_hash(namespace, name) for namespace, name in pods]
    assert podfingerprint.matches(golden, hashes)
    assert not podfingerprint.matches(golden, hashes[1:])


def test_a_malformed_or_other_version_fingerprint_never_matches() -> None:
    pods = [podfingerprint.pod_hash("namespace1", "pod1")]
    assert podfingerprint.matches(POD1_FINGERPRINT, pods)
    assert not podfingerprint.matches("pfp0v001", pods)  # too short: ErrMalformed
    assert not podfingerprint.matches("pfp1v001" + POD1_FINGERPRINT[8:], pods)  # prefix
    assert not podfingerprint.matches("pfp0v002" + POD1_FINGERPRINT[8:], pods)  # version
    assert not podfingerprint.matches(POD1_FINGERPRINT.upper(), pods)


# ---- which pods count (TestMakeNodeToPodDataMap; podprovider) --------------------------------
@pytest.mark.parametrize(("phase", "mode", "counted"), [
    ("Succeeded", INFORMER_DEDICATED, True),  # single pod NOT running - succeeded (jobs) - dedicated
    ("Failed", INFORMER_DEDICATED, True),  # single pod NOT running - failed
    ("Succeeded", INFORMER_SHARED, False),  # ... succeeded (kubernetes jobs) - shared
    ("Failed", INFORMER_SHARED, False),  # single pod NOT running - failed - shared
    ("Running", INFORMER_DEDICATED, True),  # single pod running - dedicated
    ("Running", INFORMER_SHARED, True),  # single pod running - shared
    ("Pending", INFORMER_DEDICATED, False),  # IsPodRelevantDedicated: Pending never counts
])
def test_which_pods_the_lister_counts(phase: str, mode: str, counted: bool) -> None:
    assert relevant(ListedPod("namespace1", "pod1", "node1", phase, "", False, 0), mode) is counted


def test_an_unbound_pod_never_counts() -> None:
    assert not relevant(ListedPod("ns", "p", "", "Failed", "", False, 0), INFORMER_DEDICATED)


# ---- exclusive resources (resourcerequests/exclusive_test.go) --------------------------------
GU = {CPU: "4", MEMORY: "2Gi"}
FPGA = {"veryfast.io/fpga": "1"}


@pytest.mark.parametrize(("containers", "inits", "exclusive"), [
    ([], [], False),  # no containers
    ([container("c", GU, GU)], [], True),  # single-container-gu-no-devs
    ([], [container("i", GU, GU)], True),  # single-initcontainer-gu-no-devs
    ([container("c", FPGA, FPGA)], [], True),  # single-container-devs-only
    ([], [container("i", FPGA, FPGA)], True),  # single-initcontainer-devs-only
    ([container("c", {CPU: "8", MEMORY: "16Gi", **FPGA}, {CPU: "8", MEMORY: "16Gi", **FPGA})], [],
     True),  # single-container-gu-core-and-devs
    ([container("c", {CPU: "8", **FPGA}, {CPU: "8", **FPGA})], [], True),  # nongu-cpus-and-devs
    ([container("c", {CPU: "8"}, {CPU: "8"})], [], False),  # single-container-nongu-cpus-only
])
def test_exclusive_resources(containers: list, inits: list, exclusive: bool) -> None:
    spec = k8s.convert(pod("p", containers, inits), k8s.Pod).spec
    assert exclusive_resources(spec) is exclusive


def test_fractional_cpus_of_a_guaranteed_pod_are_not_exclusive_but_its_memory_is() -> None:
    # IsExclusive: cpu only when Value() * 1000 == MilliValue(); memory whenever > 0.
    half = k8s.convert(pod("p", [container("c", {CPU: "1500m"}, {CPU: "1500m"})]), k8s.Pod).spec
    assert not exclusive_resources(half)  # not Guaranteed (no memory) and fractional
    gu = k8s.convert(pod("p", [container("c", {CPU: "1500m", MEMORY: "1Gi"},
                                         {CPU: "1500m", MEMORY: "1Gi"})]), k8s.Pod).spec
    assert exclusive_resources(gu)


# ---- marks (TestDirtyNodesMarkDiscarded, TestDirtyNodesUnmarkedOnReserve) --------------------
def test_rejections_mark_nodes_and_a_reservation_clears_the_mark() -> None:
    state, store = store_with()
    empty = pod_view(pod("p", []))
    for name in ("node-1", "node-4"):
        store.reserve(empty, name)
    assert store.maybe_overreserved == set()  # a pristine cache has no dirty node
    for name in ("node-1", "node-4"):
        store.node_maybe_overreserved(name)
    assert store.maybe_overreserved == {"node-1", "node-4"}
    store.reserve(empty, "node-4")  # an update that unblocks node-4
    assert store.maybe_overreserved == {"node-1"}


# ---- the cached copy (TestGetCachedNRTCopyReserve, TestFlush) --------------------------------
def test_a_reservation_is_taken_from_every_cell_of_the_cached_copy() -> None:
    state, store = store_with(report(DEFAULT_ZONES))
    store.reserve(pod_view(TEST_POD), "node1")
    assert cached_cells(state) == [(22, 44, 16), (22, 44, 16)]


def test_a_flush_takes_the_report_and_drops_reservations_and_marks() -> None:
    state, store = store_with(report(DEFAULT_ZONES))
    store.reserve(pod_view(TEST_POD), "node1")
    store.node_maybe_overreserved("node1")
    generation = store.generation
    flushed = report(FLUSHED_ZONES)
    from extender.model.numa import NRTView

    assert store.flush([NRTView.from_k8s(flushed)]) == ["node1"]
    assert store.generation == generation + 1
    assert store.maybe_overreserved == set() and store.reservations("node1") == ()
    assert cached_cells(state) == [(30, 60, 16), (22, 44, 16)]
    assert store.flush([]) == [] and store.generation == generation + 1  # nothing dirty


# ---- the resync (TestResyncNoPodFingerprint, TestResyncMatchFingerprint) ---------------------
def running(obj: dict, node: str = "node1") -> k8s.Pod:
    return k8s.convert({**obj, "spec": {**obj["spec"], "nodeName": node},
                        "status": {"phase": "Running"}}, k8s.Pod)


def test_a_report_without_a_fingerprint_leaves_the_node_dirty() -> None:
    state, store = store_with(report(DEFAULT_ZONES))
    store.reserve(pod_view(TEST_POD), "node1")
    store.node_maybe_overreserved("node1")
    state.apply("NodeResourceTopology", report(FLUSHED_ZONES))  # what the API now holds
    state.apply_pod(running(TEST_POD))
    assert store.resync() == []
    assert store.maybe_overreserved == {"node1"}
    assert cached_cells(state) == [(22, 44, 16), (22, 44, 16)]  # still the copy, reserved


def test_a_matching_fingerprint_flushes_the_node() -> None:
    state, store = store_with(report(DEFAULT_ZONES))
    store.reserve(pod_view(TEST_POD), "node1")
    store.node_maybe_overreserved("node1")
    state.apply("NodeResourceTopology", report(FLUSHED_ZONES, fingerprint=POD1_FINGERPRINT,
                                               annotation=POD1_FINGERPRINT))
    state.apply_pod(running(TEST_POD))
    assert store.resync() == ["node1"]
    assert store.maybe_overreserved == set()
    assert cached_cells(state) == [(30, 60, 16), (22, 44, 16)]


def test_only_a_marked_node_with_a_pod_on_it_is_resynced() -> None:
    state, store = store_with(report(DEFAULT_ZONES))
    store.reserve(pod_view(TEST_POD), "node1")
    state.apply("NodeResourceTopology", report(FLUSHED_ZONES, fingerprint=POD1_FINGERPRINT))
    state.apply_pod(running(TEST_POD))
    assert store.resync() == []  # reserved, never rejected on: not dirty (Resync's trigger)
    store.node_maybe_overreserved("node1")
    state.delete_pod("namespace1", "pod1", "uid-namespace1-pod1")
    assert store.resync() == []  # "cannot find any pod for node"
    state.apply_pod(running(TEST_POD))
    assert store.resync() == ["node1"]


def test_the_annotation_counts_when_no_attribute_has_the_fingerprint() -> None:
    state, store = store_with(report(DEFAULT_ZONES))
    store.node_maybe_overreserved("node1")
    state.apply("NodeResourceTopology", report(FLUSHED_ZONES, annotation=POD1_FINGERPRINT))
    state.apply_pod(running(TEST_POD))
    assert store.resync() == ["node1"]


@pytest.mark.parametrize(("method", "report_method", "flushed"), [
    ("Autodetect", None, False),  # every pod counts: pod1 and the burstable one
    ("Autodetect", "with-exclusive-resources", True),  # the report says: exclusive ones only
    ("OnlyExclusiveResources", None, True),
    ("All", "with-exclusive-resources", False),
])
def test_the_resync_method_decides_which_pods_the_fingerprint_counts(
        method: str, report_method: str | None, flushed: bool) -> None:
    state = ClusterState()
    store = state.store(TopologyStore)
    store.enable(method, INFORMER_DEDICATED, foreign_detect="None")
    state.apply("NodeResourceTopology", report(DEFAULT_ZONES))
    store.node_maybe_overreserved("node1")
    attributes = {podfingerprint.ATTRIBUTE_METHOD: report_method} if report_method else None
    state.apply("NodeResourceTopology", report(FLUSHED_ZONES, fingerprint=POD1_FINGERPRINT,
                                               attributes=attributes))
    state.apply_pod(running(TEST_POD))  # Guaranteed, whole cpus: exclusive
    state.apply_pod(running(pod("burstable", [container("c", {CPU: "1"})], namespace="other")))
    assert store.resync() == (["node1"] if flushed else [])


def test_a_changed_topology_manager_is_taken_at_the_next_resync() -> None:
    state, store = store_with(report(DEFAULT_ZONES))
    store.reserve(pod_view(TEST_POD), "node1")
    state.apply("NodeResourceTopology", report(FLUSHED_ZONES))  # same configuration
    assert store.reconfigured == set()
    state.apply("NodeResourceTopology", report(FLUSHED_ZONES, policies=["SingleNUMANodePodLevel"]))
    assert store.reconfigured == {"node1"}
    assert store.resync() == ["node1"]  # whatever its fingerprint (it has none)
    assert cached_cells(state) == [(30, 60, 16), (22, 44, 16)]
    assert store.cached_topology("node1").manager.scope == "pod"  # type: ignore[union-attr]


def test_resync_scope_only_resources_does_not_watch_the_configuration() -> None:
    state = ClusterState()
    store = state.store(TopologyStore)
    store.enable("Autodetect", INFORMER_DEDICATED, "OnlyResources", "None")
    state.apply("NodeResourceTopology", report(DEFAULT_ZONES))
    state.apply("NodeResourceTopology", report(FLUSHED_ZONES, policies=["SingleNUMANodePodLevel"]))
    assert store.reconfigured == set() and store.resync() == []


# ---- through the extender: a report older than the bind does not undo it ---------------------
ZONES = [("node-0", [(CPU, "4", "4"), (MEMORY, "8Gi", "8Gi")], None),
         ("node-1", [(CPU, "4", "4"), (MEMORY, "8Gi", "8Gi")], None)]


def test_a_report_from_before_the_kubelet_admitted_the_pod_keeps_its_reservation() -> None:
    """The agent reports on its own schedule: a report made before the kubelet admitted the
    pod the extender bound still shows both cells free. The cache keeps the reservation
    until a report's fingerprint says the agent counted the pod (upstream's resync)."""
    state = cluster_from_objects([node_for("n1", ZONES), nrt("n1", ZONES, POLICY)])
    state.store(TopologyStore).enable("Autodetect", INFORMER_DEDICATED)
    first = guaranteed("first", {CPU: "3", MEMORY: "1Gi"})
    second = guaranteed("second", {CPU: "3", MEMORY: "1Gi"})
    bind(state, first)
    assert verdict(state, second) == "cannot align container"  # marks n1
    store = state.store(TopologyStore)
    assert store.maybe_overreserved == {"n1"}
    empty = podfingerprint.sign([])
    state.apply("NodeResourceTopology", k8s.convert(
        nrt("n1", ZONES, POLICY, attributes={podfingerprint.ATTRIBUTE: empty}),
        k8s.NodeResourceTopology))
    assert store.resync() == []  # the lister has no running pod on n1 yet: nothing to match
    assert verdict(state, second) == "cannot align container"
    # The kubelet runs `first` on cell 0; the agent's next report counts it.
    state.apply_pod(running(first, "n1"))
    assert store.resync() == []  # that old report's fingerprint (no pod) does not match
    newer = [("node-0", [(CPU, "4", "1"), (MEMORY, "8Gi", "7Gi")], None), ZONES[1]]
    state.apply("NodeResourceTopology", k8s.convert(
        nrt("n1", newer, POLICY, attributes={
            podfingerprint.ATTRIBUTE: podfingerprint.sign([("default", "first")])}),
        k8s.NodeResourceTopology))
    assert verdict(state, second) == "cannot align container"  # not until the resync
    assert store.resync() == ["n1"]
    assert store.reservations("n1") == ()
    assert verdict(state, second) is None  # cell 1 has its 4 cpus


def _exclusive_reference(spec: k8s.PodSpec) -> bool:
    """AreExclusiveForPod as upstream writes it: each container's requests, each judged with
    the pod's QoS."""
    from extender.model.numa import (
        QOS_GUARANTEED,
        container_requests,
        is_hugepages,
        is_native_resource,
        qos_class,
    )

    qos = qos_class(spec)
    for c in [*(spec.init_containers or ()), *(spec.containers or ())]:
        for name, amount in container_requests(c).items():
            if not is_native_resource(name):
                return True
            if qos != QOS_GUARANTEED:
                continue
            if name == CPU and amount > 0 and units(amount) * 1000 == -(-amount // 10**6):
                return True
            if (name == MEMORY or is_hugepages(name)) and amount > 0:
                return True
    return False


def test_exclusive_resources_fast_path_is_the_reference_on_random_pods() -> None:
    rng = random.Random(7)
    amounts = {CPU: ["0", "100m", "1", "1500m", "2", "2001m"], MEMORY: ["0", "1Gi", "512Mi"],
               "hugepages-2Mi": ["0", "2Mi"], "vendor/nic": ["0", "1"]}

    def resources() -> dict[str, str] | None:
        if rng.random() < 0.15:
            return None
        names = [n for n in amounts if rng.random() < (0.8 if n in (CPU, MEMORY) else 0.1)]
        return {n: rng.choice(amounts[n]) for n in names}

    seen = {True: 0, False: 0}
    for i in range(3000):
        def one(name: str) -> dict:
            requests = resources()
            limits = dict(requests) if requests is not None and rng.random() < 0.6 else resources()
            return container(name, requests, limits)

        obj = pod(f"p{i}", [one(f"c{j}") for j in range(rng.randint(0, 3))],
                  [one(f"i{j}") for j in range(rng.randint(0, 2))])
        if rng.random() < 0.1:
            obj["spec"]["resources"] = {"requests": {CPU: "1", MEMORY: "1Gi"},
                                        "limits": {CPU: "1", MEMORY: "1Gi"}}
        spec = k8s.convert(obj, k8s.Pod).spec
        expected = _exclusive_reference(spec)
        assert exclusive_resources(spec) is expected, obj
        seen[expected] += 1
    assert min(seen.values()) > 300  # both answers drawn often


# ---- foreign pods (cache/foreign_pods_test.go, TestNodeWithForeignPods) ----------------------
def bound_pod(name: str, scheduler: str | None, node: str | None, requests: dict | None = None
              ) -> k8s.Pod:
    obj = pod(name, [container("c", requests, requests)], namespace="namespace1",
              node=node or "")
    if scheduler is not None:
        obj["spec"]["schedulerName"] = scheduler
    return k8s.convert(obj, k8s.Pod)


@pytest.mark.parametrize(("scheduler", "node", "profiles", "foreign"), [
    (None, None, [], False),  # empty
    (None, None, ["secondary-scheduler"], False),  # no-node-no-profile
    (None, "node1", ["secondary-scheduler"], True),  # node-no-profile-no-devs (and -devs-only)
    ("secondary-scheduler", "node1", ["secondary-scheduler"], False),  # node-profile
    ("secondary-scheduler-B", "node1",
     ["secondary-scheduler-A", "secondary-scheduler-B", "fancy-scheduler"], False),  # multi
])
def test_which_pods_are_foreign(scheduler: str | None, node: str | None, profiles: list[str],
                                foreign: bool) -> None:
    state, store = store_with(report(DEFAULT_ZONES), foreign="All")
    for name in profiles:
        state.remember_pending(pod_view({**pod("asking", []), "spec": {
            "containers": [], "schedulerName": name}}))
    state.apply_pod(bound_pod("pod1", scheduler, node))
    assert store.has_foreign_pods("node1") is foreign


def test_a_node_with_foreign_pods_is_stale_until_a_resync_matches() -> None:
    state, store = store_with(report(DEFAULT_ZONES), report(DEFAULT_ZONES, name="node2"),
                              foreign="All")
    state.remember_pending(pod_view(pod("asking", [])))  # our profile: "" here
    state.apply_pod(bound_pod("ours", "", "node1"))
    state.apply_pod(bound_pod("theirs", "default-scheduler", "node2"))
    assert not store.has_foreign_pods("node1") and store.has_foreign_pods("node2")
    plugin = NodeResourceTopologyMatch(NodeResourceTopologyMatchArgs.model_validate(
        {"cacheResyncPeriodSeconds": 5}))
    assert plugin.topology("node2", state) is None  # GetCachedNRTCopy: not Fresh
    state.apply_pod(running(pod("theirs", [container("c", None)], namespace="namespace1"),
                            "node2"))
    assert store.resync() == []  # its report has no fingerprint: still stale
    state.apply("NodeResourceTopology", report(
        DEFAULT_ZONES, name="node2", fingerprint=podfingerprint.sign([("namespace1", "theirs")])))
    assert store.resync() == ["node2"]
    assert not store.has_foreign_pods("node2") and plugin.topology("node2", state) is not None


def test_a_node_without_a_report_never_has_foreign_pods() -> None:
    """TestUnknownNodeWithForeignPods."""
    state, store = store_with(report(DEFAULT_ZONES), foreign="All")
    state.apply_pod(bound_pod("theirs", "default-scheduler", "node-bogus"))
    assert not store.has_foreign_pods("node-bogus") and store.resync() == []


def test_only_exclusive_resources_and_none_modes() -> None:
    state, store = store_with(report(DEFAULT_ZONES), foreign="OnlyExclusiveResources")
    state.apply_pod(bound_pod("burstable", "default-scheduler", "node1", {CPU: "1"}))
    assert not store.has_foreign_pods("node1")
    state.apply_pod(bound_pod("devices", "default-scheduler", "node1", {NIC: "1"}))
    assert store.has_foreign_pods("node1")
    state, store = store_with(report(DEFAULT_ZONES), foreign="None")
    state.apply_pod(bound_pod("devices", "default-scheduler", "node1", {NIC: "1"}))
    assert not store.has_foreign_pods("node1")


def test_a_deleted_foreign_pod_still_marks_its_node_and_a_learned_profile_clears_it() -> None:
    state, store = store_with(report(DEFAULT_ZONES), foreign="All")
    store.enable("Autodetect", INFORMER_DEDICATED, foreign_detect="None")
    state.apply_pod(bound_pod("theirs", "other", "node1"))  # not detecting yet
    store.enable("Autodetect", INFORMER_DEDICATED, foreign_detect="All")
    state.delete_pod("namespace1", "theirs", "uid-namespace1-theirs")  # DeleteFunc marks too
    assert store.has_foreign_pods("node1")
    generation = state.generation
    state.remember_pending(pod_view({**pod("asking", []), "spec": {
        "containers": [], "schedulerName": "other"}}))
    assert not store.has_foreign_pods("node1") and state.generation > generation


def test_filter_refuses_a_stale_node_and_score_gives_it_zero() -> None:
    state = cluster_from_objects([node_for("n1", ZONES), nrt("n1", ZONES, POLICY)])
    state.store(TopologyStore).enable("Autodetect", INFORMER_DEDICATED)
    state.apply_pod(bound_pod("theirs", "default-scheduler", "n1"))
    wanted = guaranteed("p", {CPU: "1", MEMORY: "1Gi"})
    assert verdict(state, wanted) == "invalid node topology data"
    plugin = NodeResourceTopologyMatch(NodeResourceTopologyMatchArgs.model_validate(
        {"cacheResyncPeriodSeconds": 5}))
    from extender.engine.framework import CycleState

    assert plugin.score(CycleState(), pod_view(wanted), [state.nodes["n1"]], state) == [0]
    assert verdict(state, wanted, args=None) is None  # passthrough: no cache, nothing stale


def test_a_node_both_marked_and_reconfigured_is_taken_once() -> None:
    state, store = store_with(report(DEFAULT_ZONES))
    store.node_maybe_overreserved("node1")
    state.apply("NodeResourceTopology", report(FLUSHED_ZONES, fingerprint=POD1_FINGERPRINT,
                                               policies=["SingleNUMANodePodLevel"]))
    state.apply_pod(running(TEST_POD))
    generation = store.generation
    assert store.resync() == ["node1"] and store.generation == generation + 1


def test_a_relist_that_drops_a_foreign_pod_marks_its_node() -> None:
    state, store = store_with(report(DEFAULT_ZONES), foreign="None")
    state.apply_pod(bound_pod("theirs", "other", "node1"))
    store.enable("Autodetect", INFORMER_DEDICATED, foreign_detect="All")
    state.replace_pods([])  # the relist no longer has it: a delete event
    assert store.has_foreign_pods("node1") and "uid-namespace1-theirs" not in store.pods


def test_skipping_known_mismatches_resyncs_as_checking_every_node() -> None:
    """A node whose report was found not to match is checked again only once the report or
    one of its pods changed: on random event sequences that gives the flushes checking every
    marked node each round gives."""
    rng = random.Random(11)
    nodes = ["a", "b", "c"]
    flushes = 0
    for _ in range(150):
        states = [ClusterState(), ClusterState()]
        for state in states:
            state.store(TopologyStore).enable("Autodetect", INFORMER_DEDICATED,
                                              foreign_detect="None")
            for name in nodes:
                state.apply("NodeResourceTopology", report(DEFAULT_ZONES, name=name))
        running_on: dict[str, set[tuple[str, str]]] = {n: set() for n in nodes}
        for step in range(40):
            kind = rng.random()
            node = rng.choice(nodes)
            if kind < 0.4:
                name = f"p{rng.randint(0, 5)}"
                phase = rng.choice(["Pending", "Running", "Succeeded"])
                obj = running(pod(name, [], namespace="ns"), node)
                obj = msgspec_replace_phase(obj, phase)
                for state in states:
                    state.apply_pod(obj)
                for pods in running_on.values():
                    pods.discard(("ns", name))
                if phase != "Pending":
                    running_on[node].add(("ns", name))
            elif kind < 0.5:
                name = f"p{rng.randint(0, 5)}"
                for state in states:
                    state.delete_pod("ns", name, f"uid-ns-{name}")
                for pods in running_on.values():
                    pods.discard(("ns", name))
            elif kind < 0.7:
                # The agent reports: the node's pods, a stale set, or no fingerprint.
                choice = rng.random()
                pods = list(running_on[node]) if choice < 0.5 else [("ns", "gone")]
                fingerprint = podfingerprint.sign(pods) if choice < 0.9 else None
                for state in states:
                    state.apply("NodeResourceTopology", report(DEFAULT_ZONES, name=node,
                                                               fingerprint=fingerprint))
            elif kind < 0.85:
                for state in states:
                    state.store(TopologyStore).node_maybe_overreserved(node)
            else:
                fast, slow = (s.store(TopologyStore) for s in states)
                slow.mismatched.clear()
                taken = fast.resync()
                assert taken == slow.resync(), step
                flushes += len(taken)
        assert states[0].store(TopologyStore).cached.keys() == \
            states[1].store(TopologyStore).cached.keys()
    assert flushes > 50  # the sequences reach matching reports often (81)


def msgspec_replace_phase(obj: k8s.Pod, phase: str) -> k8s.Pod:
    import msgspec

    return msgspec.structs.replace(obj, status=msgspec.structs.replace(obj.status, phase=phase))


# ---- DiscardReserved (cache/discardreserved_test.go) ------------------------------------------
def discarding() -> NodeResourceTopologyMatch:
    return NodeResourceTopologyMatch(NodeResourceTopologyMatchArgs.model_validate(
        {"discardReservedNodes": True, "cacheResyncPeriodSeconds": 5}))


def test_discard_reserved_nodes_ignores_foreign_pods() -> None:
    # TestDiscardReservedNodesGetCachedNRTCopy, "data present with foreign pods": the report,
    # fresh (NodeHasForeignPods does nothing in that cache).
    state, store = store_with(report(DEFAULT_ZONES, name="worker-node-1"), foreign="All")
    state.apply_pod(bound_pod("theirs", "default-scheduler", "worker-node-1"))
    assert store.has_foreign_pods("worker-node-1")
    found = discarding().topology("worker-node-1", state)
    assert found is not None and found[0] is store.node_topology("worker-node-1")


def test_discard_reserved_nodes_a_reserved_node_is_not_fresh() -> None:
    # TestDiscardReservedNodesGetNRTCopyFails: node1 with a reservation: no report, not fresh.
    state, store = store_with(report(DEFAULT_ZONES))
    store.bind_started("some-uid", "node1")
    assert discarding().topology("node1", state) is None


def test_discard_reserved_nodes_reserve_and_remove() -> None:
    # TestDiscardReservedNodesReserveNodeResources and ...RemoveReservationForNode: test/pod
    # (uid some-uid) reserved on node1, then its reservation removed (PostBind or Unreserve).
    state, store = store_with(report(DEFAULT_ZONES))
    store.bind_started("some-uid", "node1")
    assert store.binding == {"node1": {"some-uid"}}
    store.bind_ended("some-uid", "node1")
    assert store.binding.get("node1", set()) == set()
    found = discarding().topology("node1", state)
    assert found is not None and found[0] is store.node_topology("node1")
