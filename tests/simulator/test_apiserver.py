"""The simulator's API server (`--serve-api`), its mirror of the simulated cluster, and the
sync query on both sides: the extender's `GET /readyz?resourceVersion=N` and the simulator's
bounded wait for it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from extender.api.app import create_app
from extender.cli import build_parser
from extender.engine.cluster import ClusterState
from extender.kube.client import ApiError, GoneError, KubeClient
from extender.kube.config import load_kubeconfig
from extender.model import k8s
from extender.model.pod import PodView
from extender.serve import build_runtime
from extender.simulator.apimirror import ClusterMirror, normalized
from extender.simulator.apiserver import SYNC_HEADER, ApiServer, SyncError, resources, unversioned
from extender.simulator.apisync import ExtenderSync
from extender.simulator.loop import pod_with
from extender.simulator.workload import ObjectArrival
from extender.state.informer import LiveState, resources_for
from extender.state.snapshot import load_snapshot
from tests.polling import until

from .helpers import node, pod, write

GIB = 1024**3


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def api() -> Iterator[ApiServer]:
    with ApiServer() as server:
        yield server


def _normal(obj: dict[str, Any]) -> dict[str, Any]:
    return normalized(obj, obj["kind"])


def put(api: ApiServer, plural: str, *objects: dict[str, Any]) -> None:
    """Add or replace `objects` in the collection, keeping the others."""
    desired = {key: unversioned(obj) for key, obj in api.objects[plural].items()}
    for obj in map(_normal, objects):
        desired[(obj["metadata"].get("namespace", ""), obj["metadata"]["name"])] = obj
    api.sync_collection(plural, desired)


@contextlib.asynccontextmanager
async def live_state(api: ApiServer, tmp_path: Path, **options: Any) -> AsyncIterator[LiveState]:
    config = load_kubeconfig(api.write_kubeconfig(tmp_path / "kubeconfig"))
    options = {"page_limit": 1, "watch_timeout": 30, "backoff_initial": 0.05,
               "backoff_max": 0.2, "expire_interval": 0.05, **options}
    async with KubeClient(config) as client:
        live = LiveState(client, ClusterState(), **options)
        live.start()
        try:
            yield live
        finally:
            await live.stop()


async def eventually(predicate: Any, timeout: float = 5.0, what: str = "") -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await asyncio.sleep(0.01)


# ---- the server as the extender's informers see it -----------------------------------------

@pytest.mark.anyio
async def test_informers_list_watch_and_reach_every_new_version(api: ApiServer, tmp_path: Path) -> None:
    put(api, "nodes", node("n1", "4", "8Gi"), node("n2", "4", "8Gi"))
    put(api, "pods", pod("a", "1", node_name="n1"), pod("b", "2"))
    async with live_state(api, tmp_path) as live:
        assert await live.wait_synced(5)
        state = live.state
        assert set(state.nodes) == {"n1", "n2"}  # listed a page (one object) at a time
        assert state.nodes["n1"].requested.milli_cpu == 1000
        assert state.pod_by_key("default", "b") is not None
        await eventually(lambda: live.not_observed_reason(str(api.rv)) is None, what="observed")
        assert live.observed_version() == str(api.rv)

        before = api.rv
        # One event per changed object: b bound to n2, a deleted, c added; nodes unchanged.
        api.sync_collection("pods", {
            ("default", "b"): _normal(pod("b", "2", node_name="n2")),
            ("default", "c"): _normal(pod("c", "1"))})
        assert api.rv == before + 3
        assert [e.type for e in list(api.history)[-3:]] == ["MODIFIED", "ADDED", "DELETED"]
        assert api.sync_collection("pods", {k: unversioned(v)
                                            for k, v in api.objects["pods"].items()}) == 0
        # The nodes informer saw no node event, but a bookmark at the new version.
        await eventually(lambda: live.not_observed_reason(str(api.rv)) is None, what="synced")
        assert live.informers["nodes"].resource_version == str(api.rv)
        assert state.nodes["n2"].requested.milli_cpu == 2000
        assert state.pod_by_key("default", "a") is None
        assert state.pods[state.pod_by_key("default", "c").uid].node_name == ""
        reason = live.not_observed_reason(str(api.rv + 5))
        assert reason is not None and reason.startswith(f"not at resourceVersion {api.rv + 5} yet: ")
        assert f"nodes at {api.rv}" in reason


@pytest.mark.anyio
async def test_a_pod_leaving_the_field_selector_is_deleted_for_the_watcher(api, tmp_path) -> None:
    put(api, "nodes", node("n1", "4", "8Gi"))
    put(api, "pods", pod("job", "1", node_name="n1"))
    async with live_state(api, tmp_path) as live:
        assert await live.wait_synced(5)
        assert live.state.pod_by_key("default", "job") is not None
        done = _normal(pod("job", "1", node_name="n1"))
        done["status"] = {"phase": "Succeeded"}
        put(api, "pods", done)
        await eventually(lambda: live.state.pod_by_key("default", "job") is None, what="gone")
        assert live.state.nodes["n1"].requested.milli_cpu == 0


@pytest.mark.anyio
async def test_too_old_versions_answer_410(api: ApiServer, tmp_path: Path) -> None:
    put(api, "nodes", node("n1", "4", "8Gi"), node("n2", "4", "8Gi"))
    config = load_kubeconfig(api.write_kubeconfig(tmp_path / "kubeconfig"))
    async with KubeClient(config) as client:
        page = await client.list("/api/v1/nodes", k8s.Node, limit=1)
        assert len(page.items) == 1 and page.continue_token
        old = page.resource_version
        put(api, "nodes", node("n3", "4", "8Gi"))
        api.compact()
        with pytest.raises(ApiError) as listed:
            await client.list("/api/v1/nodes", k8s.Node, limit=1, continue_token=page.continue_token)
        assert listed.value.code == 410
        with pytest.raises(GoneError):
            async for _ in client.watch("/api/v1/nodes", k8s.Node, resource_version=old,
                                        timeout_seconds=5):
                pass
    # An informer that was behind relists and ends up equal to the server.
    async with live_state(api, tmp_path, watch_timeout=1) as live:
        assert await live.wait_synced(5)
        put(api, "nodes", node("n4", "4", "8Gi"))
        await eventually(lambda: set(live.state.nodes) == {"n1", "n2", "n3", "n4"}, what="n4")


@pytest.mark.anyio
async def test_binding_follows_binding_rest(api: ApiServer, tmp_path: Path) -> None:
    put(api, "nodes", node("n1", "4", "8Gi"))
    pending = _normal(pod("web", "1"))
    put(api, "pods", pending)
    config = load_kubeconfig(api.write_kubeconfig(tmp_path / "kubeconfig"))
    async with KubeClient(config) as client:
        with pytest.raises(ApiError) as wrong_uid:
            await client.create_binding("default", "web", "other-uid", "n1")
        assert wrong_uid.value.code == 409
        before = api.rv
        await client.create_binding("default", "web", "uid-web", "n1")
        assert api.rv == before + 1 and api.bindings == [("default", "web", "uid-web", "n1")]
        assert api.get("pods", "default", "web")["spec"]["nodeName"] == "n1"
        with pytest.raises(ApiError) as again:
            await client.create_binding("default", "web", "uid-web", "n1")
        assert again.value.code == 409 and "already assigned" in again.value.message
        with pytest.raises(ApiError) as missing:
            await client.create_binding("default", "nope", "uid-nope", "n1")
        assert missing.value.code == 404
    # The simulation is the truth: publishing the pod as it has it (still pending) writes it
    # back, although it is the very object published before the binding.
    api.sync_collection("pods", {("default", "web"): pending})
    assert "nodeName" not in api.get("pods", "default", "web")["spec"]


def test_every_resource_the_informers_read_is_served(api: ApiServer, tmp_path: Path) -> None:
    served = {f"{r.prefix}/{r.plural}" for r in resources().values()}
    wanted = {spec.path for spec in resources_for(["Coscheduling", "CapacityScheduling",
                                                   "NetworkOverhead", "NodeResourceTopologyMatch"])}
    assert wanted <= served
    with httpx.Client(base_url=api.url) as http:
        for path in sorted(wanted):
            reply = http.get(path, params={"limit": "10"})
            assert reply.status_code == 200, path
            assert reply.json()["items"] == []
        assert http.get("/api/v1/pods", params={"fieldSelector": "spec.bogus=1"}).status_code == 400
        assert http.get("/api/v1/nodes/none").status_code == 404
        assert http.post("/apis/events.k8s.io/v1/namespaces/default/events",
                         json={"metadata": {"name": "e"}}).status_code == 201
        assert http.post("/api/v1/namespaces/default/events", json={}).status_code == 201
        put(api, "pods", pod("events-1", "1"))  # a pod, not an Event, whatever its name
        assert http.get("/api/v1/namespaces/default/pods/events-1").json()["kind"] == "Pod"
    assert api.events_received == 2


def test_a_token_is_required_when_set(tmp_path: Path) -> None:
    with ApiServer(token="secret") as server, httpx.Client(base_url=server.url) as http:
        assert http.get("/api/v1/nodes").status_code == 401
        assert http.get("/api/v1/nodes", headers={"Authorization": "Bearer secret"}).status_code == 200
        doc = server.kubeconfig()
        assert doc["users"][0]["user"] == {"token": "secret"}


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_reads_the_served_cluster(api: ApiServer, tmp_path: Path) -> None:
    put(api, "nodes", node("n1", "4", "8Gi"))
    put(api, "pods", pod("web", "1", node_name="n1"))
    kubeconfig = api.write_kubeconfig(tmp_path / "kubeconfig")
    assert kubeconfig.stat().st_mode & 0o077 == 0
    run = subprocess.run(["kubectl", "--kubeconfig", str(kubeconfig), "get", "nodes,pods", "-A",
                          "-o", "name"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["node/n1", "pod/web"]


# ---- the mirror: the simulation's views as API objects -------------------------------------

def test_the_mirror_renders_what_the_simulation_sees(api: ApiServer, tmp_path: Path) -> None:
    snapshot = write(tmp_path / "cluster.json", [
        node("n1", "4", "8Gi"), pod("victim", "2", node_name="n1", priority=5),
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team",
                                                                "labels": {"tier": "a"}}}])
    state = load_snapshot(snapshot)
    epoch = 1_704_067_200.0  # 2024-01-01T00:00:00Z
    victim = state.pod_by_key("default", "victim")
    terminating = pod_with(victim, terminating=True, preempted_by_scheduler=True)
    state.replace_view(terminating)
    waiting_raw = pod("preemptor", "3", priority=100)
    waiting = pod_with(PodView.from_k8s(k8s.convert(waiting_raw, k8s.Pod)),
                       nominated_node_name="n1")
    placed_raw = pod("placed", "1")
    placed = PodView.from_k8s(k8s.convert(placed_raw, k8s.Pod))
    state.assume(pod_with(placed, start_time=epoch + 12.345), "n1", float("inf"))
    group = k8s.convert({"metadata": {"name": "g", "namespace": "team"}, "spec": {"minMember": 2}},
                        k8s.PodGroup)
    state.apply("PodGroup", group)
    sim = SimpleNamespace(
        state=state, pending={waiting.uid: waiting},
        raw_pods={waiting.uid: waiting_raw, placed.uid: placed_raw}, raw_nodes={},
        workload=SimpleNamespace(objects=[ObjectArrival(0, "PodGroup", group)]),
        clock=SimpleNamespace(now=lambda: 5_000_000_000), epoch_now=lambda: epoch + 5)
    mirror = ClusterMirror(api, snapshot)
    version = mirror.publish(sim)
    assert version == api.rv

    def view(name: str) -> PodView:
        return PodView.from_k8s(k8s.convert(api.get("pods", "default", name), k8s.Pod))

    got = view("victim")  # terminating since the eviction (the virtual time), by the scheduler
    assert (got.node_name, got.priority, got.terminating, got.preempted_by_scheduler) == (
        "n1", 5, True, True)
    assert api.get("pods", "default", "victim")["metadata"]["deletionTimestamp"] == \
        "2024-01-01T00:00:05.000000Z"
    got = view("preemptor")  # pending, nominated, priority as admission resolves it
    assert (got.node_name, got.nominated_node_name, got.priority) == ("", "n1", 100)
    assert api.get("pods", "default", "preemptor")["status"]["phase"] == "Pending"
    got = view("placed")
    assert got.node_name == "n1" and got.start_time == pytest.approx(epoch + 12.345, abs=1e-6)
    assert api.get("namespaces", "", "team")["metadata"]["labels"] == {"tier": "a"}
    assert api.get("podgroups", "team", "g")["spec"]["minMember"] == 2

    # Nothing changed: nothing published. The victim leaves: one DELETED event.
    assert mirror.publish(sim) == version
    state.delete_pod("default", "victim")
    assert mirror.publish(sim) == version + 1
    assert api.history[-1].type == "DELETED" and api.get("pods", "default", "victim") is None


def test_a_snapshot_pod_without_a_uid_is_served_with_its_spec(api: ApiServer, tmp_path: Path) -> None:
    # A hand-written snapshot: the loader gives the pod a derived uid, and the mirror, which
    # looked its object up by the uid written, served it without labels or spec (an extender
    # then found no pod for a podAffinity term).
    db = pod("db", "1", node_name="n1")
    del db["metadata"]["uid"]
    db["metadata"]["labels"] = {"app": "db"}
    snapshot = write(tmp_path / "cluster.json", [node("n1", "4", "8Gi"), db])
    state = load_snapshot(snapshot)
    sim = SimpleNamespace(state=state, pending={}, raw_pods={}, raw_nodes={},
                          workload=SimpleNamespace(objects=[]),
                          clock=SimpleNamespace(now=lambda: 0), epoch_now=lambda: 1_704_067_200.0)
    mirror = ClusterMirror(api, snapshot)
    mirror.publish(sim)
    served = api.get("pods", "default", "db")
    assert served["metadata"]["uid"] == state.pod_by_key("default", "db").uid
    assert served["metadata"]["labels"] == {"app": "db"}
    assert served["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "1",
                                                                         "memory": "1Gi"}}
    assert mirror.warnings == []


def test_the_extender_wire_has_a_snapshot_pod_without_a_uid(tmp_path: Path) -> None:
    from extender.simulator.cli import _raw_objects

    pending = pod("api", "1")
    del pending["metadata"]["uid"]
    snapshot = write(tmp_path / "cluster.json", [node("n1", "4", "8Gi"), pending])
    uid = load_snapshot(snapshot).pod_by_key("default", "api").uid
    pods, nodes = _raw_objects(str(snapshot))
    # It was left out: the extender was sent a pending pod without its spec.
    assert list(pods) == [uid] and list(nodes) == ["n1"]
    assert pods[uid]["metadata"]["uid"] == uid
    assert pods[uid]["spec"] == pending["spec"]


# ---- the sync query, extender side ---------------------------------------------------------

def test_the_sync_query_on_a_snapshot_extender_is_a_400(runtime) -> None:
    with TestClient(create_app(runtime)) as client:
        reply = client.get("/readyz?resourceVersion=12")
        assert reply.status_code == 400 and SYNC_HEADER not in reply.headers
        assert "needs a watched cluster (--kubeconfig or --in-cluster)" in reply.text
        assert client.get("/readyz").status_code == 200  # plain readiness is unchanged


def test_the_sync_query_on_a_live_extender(api: ApiServer, tmp_path: Path) -> None:
    put(api, "nodes", node("n1", "4", "8Gi"))
    put(api, "pods", pod("web", "1"))
    kubeconfig = api.write_kubeconfig(tmp_path / "kubeconfig")
    args = build_parser("serve").parse_args(["serve", "--kubeconfig", str(kubeconfig)])
    runtime = build_runtime(args)
    with TestClient(create_app(runtime)) as client:
        current = api.rv

        def observed() -> bool:
            return client.get(f"/readyz?resourceVersion={current}").status_code == 200

        until(observed, "the extender to observe the cluster", 10)
        reply = client.get(f"/readyz?resourceVersion={current}")
        assert reply.text == f"ok: observed resourceVersion {current} (asked {current})"
        assert reply.headers[SYNC_HEADER] == str(current)
        # A version nobody has made yet: 503 after the hold, with what it did observe.
        ahead = client.get(f"/readyz?resourceVersion={current + 10}&timeoutSeconds=0.2")
        assert ahead.status_code == 503 and ahead.headers[SYNC_HEADER] == str(current)
        assert ahead.text.startswith(f"not ready: not at resourceVersion {current + 10} yet: ")
        # A change, and a held query answers as soon as the extender has it.
        put(api, "pods", pod("web", "1", node_name="n1"))
        held = client.get(f"/readyz?resourceVersion={api.rv}&timeoutSeconds=5")
        assert held.status_code == 200 and int(held.headers[SYNC_HEADER]) >= api.rv
        assert runtime.state.nodes["n1"].requested.milli_cpu == 1000
        for bad in ("resourceVersion=", "resourceVersion=1&timeoutSeconds=x",
                    "resourceVersion=1&timeoutSeconds=99"):
            assert client.get(f"/readyz?{bad}").status_code == 400


# ---- the sync query, simulator side ---------------------------------------------------------

def sync_with(handler: Any, **kw: Any) -> ExtenderSync:
    client = httpx.Client(transport=httpx.MockTransport(handler))
    return ExtenderSync(["http://ext.test/"], client=client, **kw)


def test_the_simulator_waits_for_the_version_and_asks_once_per_version() -> None:
    asked: list[str] = []
    observed = {"rv": 5}

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/readyz"
        version = int(request.url.params["resourceVersion"])
        asked.append(request.url.params["resourceVersion"])
        if len(asked) % 2:  # every other answer lags
            return httpx.Response(503, text="not ready: pods at 4",
                                  headers={SYNC_HEADER: str(observed["rv"])})
        observed["rv"] = version
        return httpx.Response(200, text="ok", headers={SYNC_HEADER: str(version)})

    sync = sync_with(handler, start_timeout=5, timeout=5, hold=0.1)
    sync.wait(7)
    sync.wait(7)  # already confirmed: not asked again
    sync.wait(6)
    sync.wait(9)
    assert asked == ["7", "7", "9", "9"]
    assert sync.confirmed == {"http://ext.test": 9}


def test_an_extender_without_the_sync_query_is_refused() -> None:
    sync = sync_with(lambda request: httpx.Response(200, text="ok"))  # a plain /readyz
    with pytest.raises(SyncError, match="without an Observed-Resource-Version header: it does "
                                        "not implement the sync query"):
        sync.wait(3)
    sync = sync_with(lambda request: httpx.Response(404, text="404 page not found"))
    with pytest.raises(SyncError, match="cannot follow the simulated cluster: "
                                        r"/readyz\?resourceVersion=3 answered 404"):
        sync.wait(3)


def test_an_extender_that_lags_for_ever_stops_the_run() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, text="not ready: not at resourceVersion 8 yet: pods at 6",
                              headers={SYNC_HEADER: "6"})

    sync = sync_with(handler, start_timeout=0.3, timeout=0.2, hold=0.05)
    with pytest.raises(SyncError) as error:
        sync.wait(8)
    assert str(error.value).startswith(
        "the extender at http://ext.test did not observe the simulated cluster's "
        "resourceVersion 8 within 0.3s (last answer: 503: not ready: not at resourceVersion 8 "
        "yet: pods at 6)")


def test_serve_api_without_extenders_just_serves(tmp_path: Path, capsys) -> None:
    from extender.cli import main

    cluster = write(tmp_path / "cluster.json", [node("n1", "4", "8Gi")])
    workload = write(tmp_path / "workload.json", [pod("web", "1")])
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy"}))
    kubeconfig = tmp_path / "kc.yaml"
    assert main(["simulate", "--cluster", str(cluster), "--workload", str(workload),
                 "--policy", str(policy), "--serve-api", str(kubeconfig)]) == 0
    out = capsys.readouterr()
    assert "1 scheduled" in out.out
    assert "serving the simulated cluster at http://127.0.0.1:" in out.err
    assert kubeconfig.exists()
    assert main(["simulate", "--cluster", str(cluster), "--workload", str(workload),
                 "--policy", str(policy), "--serve-api", str(tmp_path / "no" / "kc.yaml")]) == 2
    assert "--serve-api:" in capsys.readouterr().err
