"""The fake API server is held to the real API's documented behaviour; these pin it down."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.kube import kube_objects as ko
from tests.kube.fake_apiserver import FakeApiServer, Fault

AUTH = {"Authorization": "Bearer test-token"}


def _client(server: FakeApiServer) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers=AUTH, timeout=5)


def _binding(name: str, uid: str, node: str, namespace: str = "default") -> dict:
    return {"apiVersion": "v1", "kind": "Binding",
            "metadata": {"name": name, "namespace": namespace, "uid": uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node}}


def _watch_lines(client: httpx.Client, path: str, n: int, **params: str) -> list[dict]:
    out = []
    with client.stream("GET", path, params={"watch": "1", **params}) as resp:
        assert resp.status_code == 200
        for line in resp.iter_lines():
            if line:
                out.append(json.loads(line))
            if len(out) >= n:
                break
    return out


def test_binding_subresource_rules(apiserver: FakeApiServer) -> None:
    uid = apiserver.put(ko.pod("p"))["metadata"]["uid"]
    path = "/api/v1/namespaces/default/pods/p/binding"
    with _client(apiserver) as c:
        wrong_uid = c.post(path, json=_binding("p", "not-the-uid", "n1"))
        assert wrong_uid.status_code == 409
        assert wrong_uid.json()["message"] == (
            'Operation cannot be fulfilled on pods "p": Precondition failed: UID in precondition: '
            f"not-the-uid, UID in object meta: {uid}")
        mismatch = c.post(path, json=_binding("q", uid, "n1"))
        assert mismatch.status_code == 400
        created = c.post(path, json=_binding("p", uid, "n1"))
        assert created.status_code == 201
        assert created.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                  "status": "Success", "code": 201}
        again = c.post(path, json=_binding("p", uid, "n1"))
        assert again.status_code == 409 and again.json()["reason"] == "Conflict"
        assert again.json()["message"] == (
            'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n1"')
        missing = c.post("/api/v1/namespaces/default/pods/ghost/binding", json=_binding("ghost", "u", "n1"))
        assert missing.status_code == 404 and missing.json()["message"] == 'pods "ghost" not found'
    pod = apiserver.get("Pod", "default", "p")
    assert pod["spec"]["nodeName"] == "n1"
    assert {"type": "PodScheduled", "status": "True"}.items() <= pod["status"]["conditions"][0].items()
    assert apiserver.bindings == [("default", "p", uid, "n1")]


def test_list_returns_the_collection_version_and_sorted_items(apiserver: FakeApiServer) -> None:
    apiserver.put(ko.pod("b", namespace="x"))
    apiserver.put(ko.pod("a", namespace="y"))
    apiserver.put(ko.pod("c", namespace="x"))
    with _client(apiserver) as c:
        body = c.get("/api/v1/pods").json()
        ns_only = c.get("/api/v1/namespaces/x/pods").json()
    assert body["kind"] == "PodList" and body["metadata"]["resourceVersion"] == str(apiserver.rv)
    assert [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in body["items"]] == [
        ("x", "b"), ("x", "c"), ("y", "a")]
    assert [p["metadata"]["name"] for p in ns_only["items"]] == ["b", "c"]


def test_field_selector_turns_a_terminal_pod_into_deleted(apiserver: FakeApiServer) -> None:
    apiserver.put(ko.pod("job", node_name="n1", phase="Running"))
    start = str(apiserver.rv)
    apiserver.update("Pod", "default", "job", lambda p: p["status"].update(phase="Succeeded"))
    selector = "status.phase!=Succeeded,status.phase!=Failed"
    with _client(apiserver) as c:
        assert c.get("/api/v1/pods", params={"fieldSelector": selector}).json()["items"] == []
        events = _watch_lines(c, "/api/v1/pods", 1, resourceVersion=start, fieldSelector=selector)
        bad = c.get("/api/v1/pods", params={"fieldSelector": "spec.containers=x"})
    assert events[0]["type"] == "DELETED" and events[0]["object"]["status"]["phase"] == "Succeeded"
    assert bad.status_code == 400


def test_watch_without_version_starts_with_synthetic_added(apiserver: FakeApiServer) -> None:
    apiserver.put(ko.node("a"))
    with _client(apiserver) as c:
        events = _watch_lines(c, "/api/v1/nodes", 1)
    assert events[0]["type"] == "ADDED" and events[0]["object"]["metadata"]["name"] == "a"


def test_a_watcher_older_than_the_history_window_gets_410() -> None:
    with FakeApiServer(history=3) as server:
        start = str(server.rv)
        for i in range(5):
            server.put(ko.node(f"n{i}"))
        with _client(server) as c:
            events = _watch_lines(c, "/api/v1/nodes", 1, resourceVersion=start)
            recent = _watch_lines(c, "/api/v1/nodes", 1, resourceVersion=str(server.rv - 1))
    assert events[0]["type"] == "ERROR"
    assert events[0]["object"]["code"] == 410 and events[0]["object"]["reason"] == "Expired"
    assert recent[0]["type"] == "ADDED" and recent[0]["object"]["metadata"]["name"] == "n4"


def test_injected_faults(apiserver: FakeApiServer) -> None:
    apiserver.put(ko.node("a"))
    apiserver.inject(Fault("status", path="/api/v1/nodes", status=500, times=2))
    with _client(apiserver) as c:
        assert [c.get("/api/v1/nodes").status_code for _ in range(3)] == [500, 500, 200]
        apiserver.inject(Fault("drop", method="GET"))
        with pytest.raises(httpx.RemoteProtocolError):
            c.get("/api/v1/nodes")
        apiserver.inject(Fault("hang", hang_seconds=5))
        with pytest.raises(httpx.ReadTimeout):
            c.get("/api/v1/nodes", timeout=0.3)
        uid = apiserver.put(ko.pod("p"))["metadata"]["uid"]
        apiserver.inject(Fault("lose_response", method="POST"))
        with pytest.raises(httpx.RemoteProtocolError):
            c.post("/api/v1/namespaces/default/pods/p/binding", json=_binding("p", uid, "n1"))
    assert apiserver.bindings == [("default", "p", uid, "n1")]  # performed, answer lost


def test_unauthenticated_requests_are_401(apiserver: FakeApiServer) -> None:
    with httpx.Client(base_url=apiserver.url) as c:
        resp = c.get("/api/v1/nodes")
    assert resp.status_code == 401 and resp.json()["reason"] == "Unauthorized"
