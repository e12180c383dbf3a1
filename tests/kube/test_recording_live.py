"""`serve --kubeconfig --record` against the fake API server, in process: what the informers
apply, the binder's answers (API errors and the pod it read included) and the readiness a
request saw are recorded, and the replay — with no API server — answers byte for byte."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import msgspec
import pytest

from extender.api.replay import ReplayBinder, _Quiet, replay_file
from extender.engine.cluster import ClusterState
from extender.kube.client import ApiError
from extender.model import k8s
from extender.state import recording
from extender.state.binder import ApiBinder, BindError
from extender.state.informer import NODES, Informer, LiveState
from extender.state.recorder import Recorder, RecordingBinder, record_informers
from tests.kube import kube_objects as ko
from tests.kube.fake_apiserver import FakeApiServer, Fault
from tests.serving import eventually, serve_args, served

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
POLICY = FIXTURES / "policy-leastallocated.json"
FILTER = (FIXTURES / "filter-names.request.json").read_bytes()
UID = "uid-default-api-7d9f"


def test_a_live_session_replays_without_the_api_server(tmp_path: Path) -> None:
    with FakeApiServer(bookmark_interval=0.2) as server:
        server.load(json.loads((FIXTURES / "cluster.json").read_text())["items"])
        server.put({**json.loads(FILTER)["Pod"], "kind": "Pod"})
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        server.inject(Fault("hang", path="/api/v1/pods", watch=False, hang_seconds=0.5))
        args = serve_args("--kubeconfig", str(kubeconfig), "--policy", str(POLICY),
                          "--record", str(tmp_path / "rec"), "--bind-deadline", "10")
        fresh = dict(json.loads(FILTER), NodeNames=["fresh-1", "worker-a1"])

        async def session() -> list[bytes]:
            replies = []
            async with served(args) as (client, runtime):
                early = await client.post("/filter", content=FILTER)
                replies.append(early.content)
                await eventually(lambda: runtime.readiness()[0], "the informers' sync")
                for path, body in (("/filter", FILTER), ("/prioritize", FILTER),
                                   ("/bind", (FIXTURES / "bind.request.json").read_bytes())):
                    replies.append((await client.post(path, content=body)).content)
                await eventually(lambda: UID not in runtime.state.assumed,
                                 "the watch to confirm the bind")
                ghost = {"PodName": "ghost", "PodNamespace": "default", "PodUID": "u",
                         "Node": "worker-a1"}
                replies.append((await client.post("/bind", json=ghost)).content)
                server.put(ko.node("fresh-1", cpu="32", memory="64Gi",
                                   labels={"topology.kubernetes.io/zone": "us-east-1a"}))
                await eventually(lambda: "fresh-1" in runtime.state.nodes, "the new node")
                replies.append((await client.post("/filter", json=fresh)).content)
            return replies

        replies = asyncio.run(session())
    assert json.loads(replies[0])["Error"].startswith(
        "extender is not ready: cluster state not synced yet")
    assert replies[3] == b'{"Error":""}'
    assert replies[4] == b'{"Error":"pod default/ghost not found"}'
    assert json.loads(replies[5])["NodeNames"] == ["fresh-1", "worker-a1"]

    path = tmp_path / "rec" / "recording-1.jsonl"
    rec = recording.read(path)
    assert rec.header.mode == "live"
    # Answered not ready before its body was read: an `out` alone, with the reason it saw.
    first = next(e for e in rec.entries if isinstance(e, recording.In | recording.Out))
    assert isinstance(first, recording.Out) and first.unread and first.verb == "filter"
    assert first.not_ready is not None and first.not_ready.startswith(
        "cluster state not synced yet")
    binds = [e for e in rec.entries if isinstance(e, recording.Bind)]
    assert [(b.name, b.outcome, b.error) for b in binds] == [
        ("api-7d9f", "bound", None), ("ghost", "not_found", "pod default/ghost not found")]
    report = replay_file(path)
    assert report.ok, report.summary()
    assert report.compared == 6

    # The new node's watch event, changed: the last filter's reply changes with it.
    def small_fresh_node(entry: recording.Entry) -> recording.Entry:
        if isinstance(entry, recording.Apply) and entry.resource == "nodes":
            obj = msgspec.json.decode(entry.object)
            if obj["metadata"]["name"] == "fresh-1":
                obj["status"]["allocatable"]["cpu"] = "100m"
                return msgspec.structs.replace(entry, object=msgspec.Raw(msgspec.json.encode(obj)))
        return entry

    changed = tmp_path / "changed.jsonl"
    changed.write_bytes(b"".join(recording.encode(e) for e in
                                 [rec.header, *map(small_fresh_node, rec.entries)]))
    report = replay_file(changed)
    assert len(report.mismatches) == 1
    assert str(report.mismatches[0]).startswith(
        "exchange 6: POST /filter, pod default/api-7d9f: reply differs")
    assert '"FailedAndUnresolvableNodes":{"fresh-1":"Insufficient cpu"}' in \
        str(report.mismatches[0])


class _Client:
    """`create_binding` and `get_pod` of a KubeClient: the binding succeeds (or 404s), and
    the pod read back is `pod`."""

    def __init__(self, pod: k8s.Pod, missing: bool = False) -> None:
        self.pod, self.missing = pod, missing

    async def create_binding(self, namespace: str, name: str, uid: str, node: str, *,
                             timeout: float | None = None) -> None:
        if self.missing:
            raise ApiError(404, "NotFound", f'pods "{name}" not found')

    async def get_pod(self, namespace: str, name: str, *, timeout: float | None = None) -> k8s.Pod:
        return self.pod


def entries_of(path: Path) -> list[recording.Entry]:
    """The entries of a file a bare `Recorder` wrote (no header)."""
    return [recording.decode_entry(line) for line in path.read_bytes().splitlines()]


def _state() -> ClusterState:
    state = ClusterState()
    state.apply_node(k8s.convert(ko.node("n1", cpu="4", memory="8Gi"), k8s.Node))
    return state


def test_the_pod_the_binder_read_is_recorded_and_assumed_again(tmp_path: Path) -> None:
    pod = k8s.convert(ko.pod("p", uid="uid-p", cpu="1"), k8s.Pod)
    uid = pod.metadata.uid
    state = _state()  # never saw the pod: the binder reads it to assume it
    with (tmp_path / "r.jsonl").open("wb") as file:
        recorder = Recorder(file, tmp_path / "r.jsonl", state)
        binder = RecordingBinder(ApiBinder(_Client(pod), state), recorder)  # type: ignore[arg-type]
        asyncio.run(binder.bind("default", "p", uid, "n1"))
        recorder.close()
    [entry] = entries_of(tmp_path / "r.jsonl")
    assert isinstance(entry, recording.Bind) and entry.error is None
    assert entry.read_pod() == pod
    assert state.assumed[uid].node_name == "n1"

    replayed = _state()

    async def again() -> None:
        binder = ReplayBinder(replayed, 30.0, _Quiet(), api=True)
        binder.release(entry)
        await binder.bind("default", "p", uid, "n1")

    asyncio.run(again())
    assert replayed.assumed[uid].pod.requests == state.assumed[uid].pod.requests
    assert replayed.nodes["n1"].requested.milli_cpu == state.nodes["n1"].requested.milli_cpu == 1000


def test_an_api_error_is_recorded_and_answered_again(tmp_path: Path) -> None:
    pod = k8s.convert(ko.pod("p", uid="uid-p", cpu="1"), k8s.Pod)
    state = _state()
    with (tmp_path / "r.jsonl").open("wb") as file:
        recorder = Recorder(file, tmp_path / "r.jsonl", state)
        binder = RecordingBinder(ApiBinder(_Client(pod, missing=True), state),  # type: ignore[arg-type]
                                 recorder)
        with pytest.raises(BindError, match="pod default/p not found"):
            asyncio.run(binder.bind("default", "p", "uid-p", "n1"))
        recorder.close()
    [entry] = entries_of(tmp_path / "r.jsonl")

    async def again() -> None:
        binder = ReplayBinder(_state(), 30.0, _Quiet(), api=True)
        binder.release(entry)
        await binder.bind("default", "p", "uid-p", "n1")

    with pytest.raises(BindError, match="pod default/p not found") as raised:
        asyncio.run(again())
    assert raised.value.outcome == "not_found"


def test_informer_changes_and_expiries_are_recorded_where_applied(tmp_path: Path) -> None:
    now = [100.0]
    state = ClusterState(clock=lambda: now[0])
    with (tmp_path / "r.jsonl").open("wb") as file:
        recorder = Recorder(file, tmp_path / "r.jsonl", state)
        live = LiveState(None, state, resources=(NODES,))  # type: ignore[arg-type]
        record_informers(live, recorder)
        informer: Informer = live.informers["nodes"]
        node = k8s.convert(ko.node("n1", cpu="4", memory="8Gi"), k8s.Node)
        from extender.kube.client import WatchEvent

        informer.handle(WatchEvent("ADDED", node, "7"))
        informer.handle(WatchEvent("MODIFIED", node, "6"))  # not newer: ignored, not recorded
        pending = k8s.convert(ko.pod("p", uid="uid-p", cpu="1"), k8s.Pod)
        from extender.model.pod import PodView

        state.assume(PodView.from_k8s(pending), "n1", ttl=5.0)
        now[0] = 106.0
        live._expire()
        recorder.close()
    entries = entries_of(tmp_path / "r.jsonl")
    assert [type(e).__name__ for e in entries] == ["Apply", "Expire"]
    apply, expire = entries
    assert isinstance(apply, recording.Apply) and apply.resource == "nodes"
    assert k8s.decoder(k8s.Node).decode(apply.object) == node
    assert isinstance(expire, recording.Expire)
    assert (expire.now, expire.uids, expire.t) == (106.0, [pending.metadata.uid], 106.0)
