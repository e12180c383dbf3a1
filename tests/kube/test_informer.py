"""Informers against the fake API server: sync, incremental updates, recovery, readiness."""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections import Counter
from collections.abc import AsyncIterator

import pytest

from extender.engine.cluster import ClusterState
from extender.kube.client import KubeClient
from extender.kube.config import ClusterConfig
from extender.model import k8s
from extender.model.pod import PodView
from extender.state.informer import LiveState
from tests.kube import kube_objects as ko
from tests.kube.fake_apiserver import FakeApiServer, Fault
from tests.kube.kube_helpers import converged, eventually, summary, truth

pytestmark = pytest.mark.anyio

GIB = 1024**3


def seed(server: FakeApiServer) -> None:
    server.put(ko.priority_class("high", 1000))
    server.put(ko.pdb("web-pdb", match={"app": "web"}))
    for name in ("n1", "n2", "n3"):
        server.put(ko.node(name))
    server.put(ko.pod("web-1", node_name="n1", phase="Running", labels={"app": "web"}))
    server.put(ko.pod("web-2", node_name="n1", cpu="500m", phase="Running", labels={"app": "web"}))
    server.put(ko.pod("db-1", namespace="data", node_name="n2", cpu="2", memory="4Gi", phase="Running"))
    server.put(ko.pod("done", node_name="n2", phase="Succeeded"))
    server.put(ko.pod("pending-1"))


@contextlib.asynccontextmanager
async def live_state(config: ClusterConfig, **options) -> AsyncIterator[LiveState]:
    options = {"page_limit": 2, "watch_timeout": 30, "backoff_initial": 0.05,
               "backoff_max": 0.2, "expire_interval": 0.05, **options}
    async with KubeClient(config) as client:
        live = LiveState(client, ClusterState(), **options)
        live.start()
        try:
            yield live
        finally:
            await live.stop()


async def test_sync_lists_everything_in_pages(apiserver: FakeApiServer, kube_config: ClusterConfig) -> None:
    seed(apiserver)
    async with live_state(kube_config) as live:
        assert await live.wait_synced(5)
        state = live.state
        assert summary(state) == summary(truth(apiserver))
        assert set(state.nodes) == {"n1", "n2", "n3"}
        assert state.nodes["n1"].requested.milli_cpu == 1500
        assert state.nodes["n2"].requested.memory == 4 * GIB
        assert state.pod_by_key("default", "done") is None  # terminal: not kept
        assert state.pod_by_key("default", "pending-1") is not None
        assert live.counters.relists == {"nodes": 1, "pods": 1, "poddisruptionbudgets": 1,
                                         "priorityclasses": 1, "namespaces": 1, "services": 1,
                                         "replicasets": 1, "statefulsets": 1,
                                         "replicationcontrollers": 1}
    pages = [r for r in apiserver.requests if r.path == "/api/v1/pods" and "watch" not in r.query]
    assert len(pages) == 2 and pages[1].query.get("continue")  # 3 live pods, limit 2


async def test_events_update_views_and_totals(apiserver: FakeApiServer, kube_config: ClusterConfig) -> None:
    seed(apiserver)
    async with live_state(kube_config) as live:
        assert await live.wait_synced(5)
        state = live.state
        n3 = lambda: state.nodes["n3"].requested.milli_cpu  # noqa: E731

        # A pending pod getting spec.nodeName adds its requests to the node.
        apiserver.update("Pod", "default", "pending-1", lambda p: p["spec"].update(nodeName="n3"))
        await eventually(lambda: n3() == 1000, what="bound pod counted")
        # Turning Succeeded frees them (the field selector makes it a DELETED event).
        apiserver.update("Pod", "default", "pending-1", lambda p: p["status"].update(phase="Succeeded"))
        await eventually(lambda: n3() == 0, what="succeeded pod freed")
        assert state.pod_by_key("default", "pending-1") is None
        # Deleting a pod frees its resources.
        apiserver.delete("Pod", "default", "web-2")
        await eventually(lambda: state.nodes["n1"].requested.milli_cpu == 1000, what="deleted pod freed")
        # A pod recreated under the same name with a new UID replaces the old one.
        old_uid = state.pod_by_key("default", "web-1").uid
        apiserver.delete("Pod", "default", "web-1")
        apiserver.put(ko.pod("web-1", node_name="n2", phase="Running"))
        await eventually(lambda: (p := state.pod_by_key("default", "web-1")) is not None
                         and p.uid != old_uid, what="recreated pod")
        assert old_uid not in state.pods
        # Node changes keep the pods on the node.
        apiserver.update("Node", "", "n2", lambda n: n["spec"].update(unschedulable=True))
        await eventually(lambda: state.nodes["n2"].node.unschedulable, what="node update")
        assert len(state.nodes["n2"].pods) == 2
        apiserver.delete("Node", "", "n3")
        apiserver.put(ko.node("n4", cpu="16"))
        # PDB and PriorityClass events.
        apiserver.update("PodDisruptionBudget", "default", "web-pdb",
                         lambda p: p["status"].update(disruptionsAllowed=0))
        apiserver.delete("PriorityClass", "", "high")
        apiserver.put(ko.priority_class("low", 10))
        await eventually(lambda: converged(state, apiserver), what="convergence")
        assert state.pdbs[("default", "web-pdb")].disruptions_allowed == 0
        assert set(state.priority_classes) == {"low"}
        # A healthy watch never relists.
        assert set(live.counters.relists.values()) == {1}
        assert live.counters.events[("pods", "DELETED")] == 3


async def test_watch_cut_rewatches_from_the_last_version(apiserver: FakeApiServer,
                                                         kube_config: ClusterConfig) -> None:
    seed(apiserver)
    async with live_state(kube_config) as live:
        assert await live.wait_synced(5)
        await eventually(lambda: apiserver.active_watches() == 9, what="watches open")
        # Every watch fails for a while; changes happen meanwhile.
        apiserver.inject(Fault("drop", watch=True, times=18))
        assert apiserver.drop_watches() == 9
        apiserver.put(ko.pod("late", node_name="n3", cpu="3"))
        apiserver.delete("Pod", "data", "db-1")
        apiserver.update("Node", "", "n1", lambda n: n["metadata"]["labels"].update(zone="b"))
        await eventually(lambda: converged(live.state, apiserver), what="convergence after cut")
        await eventually(lambda: apiserver.active_watches() == 9, what="watches back")
        assert sum(live.counters.restarts.values()) >= 9
        assert set(live.counters.relists.values()) == {1}  # the history still had our version
        assert live.state.nodes["n3"].requested.milli_cpu == 3000


async def test_410_relists_and_converges_including_deletions(apiserver: FakeApiServer,
                                                             kube_config: ClusterConfig) -> None:
    seed(apiserver)
    async with live_state(kube_config) as live:
        assert await live.wait_synced(5)
        # Keep the watches down while the cluster changes and etcd compacts past our version.
        refused = apiserver.inject(Fault("status", status=500, watch=True, times=10_000))
        apiserver.drop_watches()
        apiserver.delete("Node", "", "n3")
        apiserver.delete("Pod", "default", "web-2")
        apiserver.delete("PodDisruptionBudget", "default", "web-pdb")
        apiserver.delete("PriorityClass", "", "high")
        apiserver.put(ko.node("n5"))
        apiserver.put(ko.pod("new", node_name="n5", cpu="2"))
        apiserver.update("Pod", "default", "pending-1", lambda p: p["spec"].update(nodeName="n2"))
        apiserver.compact()
        await eventually(lambda: refused.hits > 0, what="a watch refused")
        apiserver.clear_faults()
        await eventually(lambda: converged(live.state, apiserver), what="convergence after 410")
        # `converged` compares nodes, pods, PDBs and PriorityClasses; the other informers
        # (namespaces, services, controllers) relist on their own schedule.
        await eventually(lambda: all(live.counters.relists[r] == 2 for r in live.informers),
                         what="every informer relisted once more")
        assert all(live.counters.relists[r] == 2 for r in live.counters.relists)
        state = live.state
        assert "n3" not in state.nodes and state.pdbs == {} and state.priority_classes == {}
        assert state.nodes["n1"].requested.milli_cpu == 1000
        assert state.nodes["n5"].requested.milli_cpu == 2000
        assert state.nodes["n2"].requested.milli_cpu == 3000


async def test_error_event_410_in_the_stream_relists(apiserver: FakeApiServer,
                                                     kube_config: ClusterConfig) -> None:
    seed(apiserver)
    async with live_state(kube_config) as live:
        assert await live.wait_synced(5)
        apiserver.inject(Fault("gone", path="/api/v1/pods", watch=True))
        apiserver.drop_watches("pods")
        apiserver.put(ko.pod("after", node_name="n1"))
        await eventually(lambda: live.counters.relists["pods"] == 2, what="pods relist")
        await eventually(lambda: converged(live.state, apiserver), what="convergence")
        assert live.counters.relists["nodes"] == 1


async def test_expired_continue_token_restarts_the_list(apiserver: FakeApiServer,
                                                        kube_config: ClusterConfig) -> None:
    seed(apiserver)
    apiserver.inject(Fault("gone", path="/api/v1/nodes", query="continue=", watch=False))
    async with live_state(kube_config) as live:
        assert await live.wait_synced(5)
        assert live.counters.relists["nodes"] == 2
        assert converged(live.state, apiserver)


async def test_list_errors_are_retried(apiserver: FakeApiServer, kube_config: ClusterConfig) -> None:
    seed(apiserver)
    apiserver.inject(Fault("status", status=500, path="/api/v1/pods", watch=False, times=3))
    apiserver.inject(Fault("drop", path="/api/v1/nodes", watch=False, times=2))
    async with live_state(kube_config) as live:
        assert await live.wait_synced(5)
        assert live.counters.errors["pods"] == 3 and live.counters.errors["nodes"] == 2
        assert converged(live.state, apiserver)


@pytest.mark.slow
async def test_clean_stream_ends_rewatch_without_relisting(apiserver: FakeApiServer,
                                                           kube_config: ClusterConfig) -> None:
    seed(apiserver)
    async with live_state(kube_config, watch_timeout=1) as live:
        assert await live.wait_synced(5)
        def rewatched() -> bool:  # each watch lasts 1-2 s: a second one after a clean end
            per_path = Counter(r.path for r in apiserver.requests if r.query.get("watch") == "1")
            return len(per_path) == len(live.informers) and min(per_path.values()) >= 2

        await eventually(rewatched, what="every informer to watch again", timeout=10)
        apiserver.put(ko.pod("later", node_name="n3"))
        await eventually(lambda: converged(live.state, apiserver), what="convergence")
        watches = [r for r in apiserver.requests if r.query.get("watch") == "1"]
        assert len(watches) > 4
        assert set(live.counters.relists.values()) == {1}
        assert sum(live.counters.restarts.values()) == 0


async def test_readiness_before_and_after_sync_and_when_stale(apiserver: FakeApiServer,
                                                              kube_config: ClusterConfig) -> None:
    seed(apiserver)
    apiserver.inject(Fault("hang", path="/api/v1/pods", watch=False, hang_seconds=0.5))
    async with KubeClient(kube_config, timeout=5) as client:
        live = LiveState(client, ClusterState(), backoff_initial=0.05, backoff_max=0.1)
        assert not live.synced and live.stale_seconds == math.inf
        assert "not synced yet (waiting for nodes, pods" in live.not_ready_reason(60)
        live.start()
        try:
            await eventually(lambda: all(i.synced for n, i in live.informers.items() if n != "pods"),
                             what="all but pods synced")
            assert live.not_ready_reason(60) == "cluster state not synced yet (waiting for pods)"
            assert not live.is_ready(60)
            await eventually(lambda: live.is_ready(60), what="ready")
            assert live.stale_seconds < 1.0  # 0 while watching; a re-watch gap is tiny
            # The API server stops answering watches: the state goes stale, then not ready.
            apiserver.inject(Fault("status", status=503, watch=True, times=10_000))
            apiserver.drop_watches()
            await eventually(lambda: not live.is_ready(0.3), what="stale")
            assert "watch has been down" in live.not_ready_reason(0.3)
            assert live.is_ready(60)  # a generous bound is still met
            apiserver.clear_faults()
            await eventually(lambda: live.is_ready(0.3), what="ready again")
        finally:
            await live.stop()


async def test_unconfirmed_assumptions_expire(apiserver: FakeApiServer, kube_config: ClusterConfig) -> None:
    seed(apiserver)
    async with live_state(kube_config) as live:
        assert await live.wait_synced(5)
        state = live.state
        pod = state.pod_by_key("default", "pending-1")
        state.assume(pod, "n3", ttl=0.2)
        assert state.nodes["n3"].requested.milli_cpu == 1000
        await eventually(lambda: not state.assumed, what="expiry")
        assert state.nodes["n3"].requested.milli_cpu == 0
        assert live.counters.expired_assumptions == 1


async def test_confirmed_assumptions_do_not_expire(apiserver: FakeApiServer,
                                                   kube_config: ClusterConfig) -> None:
    seed(apiserver)
    async with live_state(kube_config) as live:
        assert await live.wait_synced(5)
        state = live.state
        view = PodView.from_k8s(k8s.convert(apiserver.get("Pod", "default", "pending-1"), k8s.Pod))
        state.assume(view, "n3", ttl=0.5)
        apiserver.update("Pod", "default", "pending-1", lambda p: p["spec"].update(nodeName="n3"))
        await eventually(lambda: not state.assumed, what="confirmation")
        await asyncio.sleep(0.7)
        assert state.nodes["n3"].requested.milli_cpu == 1000
        assert live.counters.expired_assumptions == 0


def test_bound_pods_are_kept_slim_pending_pods_whole() -> None:
    raw = ko.pod("p", node_name="n1", phase="Running", labels={"app": "web"})
    raw["spec"]["tolerations"] = [{"key": "k", "operator": "Exists"}]
    raw["spec"]["nodeSelector"] = {"disk": "ssd"}
    raw["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}}
    state = ClusterState()
    bound = state.apply_pod(k8s.convert(raw, k8s.Pod))  # what the informer does per event
    assert bound.tolerations == () and bound.node_selector is None and bound.required_affinity is None
    assert bound.labels == {"app": "web"} and bound.requests.milli_cpu == 1000
    del raw["spec"]["nodeName"]
    raw["metadata"]["uid"] = "pending-uid"
    pending = state.apply_pod(k8s.convert(raw, k8s.Pod))
    assert pending.tolerations and pending.node_selector and pending.required_affinity is not None


async def test_readiness_says_why_a_list_keeps_failing(apiserver: FakeApiServer,
                                                       kube_config: ClusterConfig) -> None:
    seed(apiserver)
    apiserver.inject(Fault("status", status=403, path="/api/v1/pods", watch=False, times=10_000))
    async with live_state(kube_config) as live:
        await eventually(lambda: live.counters.errors["pods"] >= 2, what="failed lists")
        why = live.not_ready_reason(60)
        assert why.startswith("cluster state not synced yet (waiting for pods")
        assert "; last error from pods: 403" in why
        apiserver.clear_faults()
        assert await live.wait_synced(5)
        assert live.is_ready(60) and live.informers["pods"].last_error == ""


async def test_start_live_state_factory(apiserver: FakeApiServer, kube_config: ClusterConfig) -> None:
    from extender.state.informer import start_live_state

    seed(apiserver)
    state = ClusterState()
    live = start_live_state(kube_config, state, freeze_gc=False)
    try:
        assert await live.wait_synced(5)
        assert live.is_ready(60) and converged(state, apiserver)
    finally:
        await live.stop()
    assert live.client.closed  # the factory's client is owned and closed


def test_a_custom_resource_refused_names_the_component_that_grants_it() -> None:
    """A 404 names the CRD and the component shipping it; a 403 (the CRD there, the extender's
    account without the rule) the component granting the access: the readiness message."""
    from extender.engine.plugins.node_resource_topology.store import NODE_RESOURCE_TOPOLOGIES
    from extender.kube.client import ApiError
    from extender.state.informer import Informer

    informer = Informer(None, ClusterState(), NODE_RESOURCE_TOPOLOGIES)  # type: ignore[arg-type]
    informer._failed(ApiError(403, "Forbidden", 'noderesourcetopologies is forbidden: User '
                              '"system:serviceaccount:scheduler-extender:scheduler-extender" '
                              "cannot list resource"))
    assert informer.last_error.startswith(
        "the extender's account may not list and watch noderesourcetopologies (the numa "
        "component of the manifests grants it): 403 Forbidden: ")
    informer._failed(ApiError(404, "NotFound", "the server could not find the requested resource"))
    assert informer.last_error.startswith(
        "the CustomResourceDefinition noderesourcetopologies.topology.node.k8s.io is not "
        "installed (enable the numa component")
