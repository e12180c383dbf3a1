"""Reading filter/prioritize bodies through the real app: a remembered NodeNames list split off
the end of a body (`RowReplies.split`) and a pod recognised by its bytes (`reading.pod_from_raw`)
give exactly the reply a cold server gives for the same bytes, odd bodies included.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from extender.api import reading, rowreply
from extender.api.app import create_app
from extender.api.runtime import Runtime
from extender.engine.evaluate import DEFAULT_POLICY, cluster_from_objects
from extender.engine.policy import parse_policy
from extender.engine.profile import build_profile
from extender.state.binder import SnapshotBinder
from tests.contract.test_reply_reuse import NAMES, PENDING, cluster_objects, pending_pod


def compact(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def spaced(value: object) -> bytes:
    return json.dumps(value).encode()


class Server:
    """An app over a fresh state built from `seed`; `cold()` answers from empty caches."""

    def __init__(self, seed: int) -> None:
        state = cluster_from_objects(cluster_objects(random.Random(seed)))
        self.runtime = Runtime(build_profile(parse_policy(DEFAULT_POLICY)), state,
                               SnapshotBinder(state, 30.0))
        self.client = TestClient(create_app(self.runtime))

    def post(self, path: str, body: bytes) -> tuple[int, object]:
        reply = self.client.post(path, content=body)
        return reply.status_code, reply.json()


def cold(seed: int, path: str, body: bytes) -> tuple[int, object]:
    reading._recent_pods.clear()
    reading._views_by_spec.clear()
    return Server(seed).post(path, body)


@pytest.fixture
def splits(monkeypatch):
    """How many bodies had a remembered list split off their end."""
    taken: list[bool] = []
    original = rowreply.RowReplies.split

    def spy(self, body, table):
        found = original(self, body, table)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(rowreply.RowReplies, "split", spy)
    return taken


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_warm_replies_equal_cold_ones(seed, splits):
    rng = random.Random(seed)
    server = Server(seed)
    lists = [NAMES, NAMES[:3], NAMES[::-1], [NAMES[0], NAMES[0], NAMES[2]], [NAMES[1], "ghost"]]
    sent = []
    for _ in range(12):
        path = rng.choice(["/filter", "/prioritize"])
        body = rng.choice([compact, spaced])(
            {"Pod": pending_pod(rng.randrange(len(PENDING)), rng.randrange(3)), "Nodes": None,
             "NodeNames": rng.choice(lists)})
        sent.append((path, body, server.post(path, body)))
    for path, body, reply in sent:
        # Again, warm: the list and the pod are remembered now.
        assert server.post(path, body) == reply
    reading._recent_pods.clear()
    reading._views_by_spec.clear()
    for path, body, reply in sent[:4]:
        assert cold(seed, path, body) == reply
    assert any(splits)


PRIMED = [NAMES[0], NAMES[2], NAMES[4]]


def odd_bodies() -> dict[str, bytes]:
    pod = pending_pod(0, 7)
    listed = compact(PRIMED).decode()
    bad = {**pod, "spec": {**pod["spec"], "containers": "not a list"}}
    noted = {**pod, "metadata": {**pod["metadata"], "annotations": {
        "note": f',"NodeNames":{listed}}}'}}}
    return {
        # Two NodeNames members: the last one counts, as when the body decodes as a whole.
        "duplicate NodeNames": (f'{{"Pod":{compact(pod).decode()},"Nodes":null,'
                                f'"NodeNames":["{NAMES[1]}"],"NodeNames":{listed}}}').encode(),
        "invalid pod": compact({"Pod": bad, "Nodes": None, "NodeNames": PRIMED}),
        "no pod": compact({"Pod": None, "Nodes": None, "NodeNames": PRIMED}),
        "pod absent": compact({"Nodes": None, "NodeNames": PRIMED}),
        "list quoted inside the pod": compact({"Pod": noted, "Nodes": None,
                                               "NodeNames": PRIMED}),
        "list as a string": compact({"Pod": pod, "Nodes": None, "X": f',"NodeNames":{listed}'}),
        "not UTF-8 in the pod": compact({"Pod": pod, "Nodes": None, "NodeNames": PRIMED}).replace(
            b'"p0-7"', b'"p0-\xff"', 1),
        "unterminated": compact({"Pod": pod, "Nodes": None, "NodeNames": PRIMED})[:-1],
    }


@pytest.mark.parametrize("case", sorted(odd_bodies()))
@pytest.mark.parametrize("path", ["/filter", "/prioritize"])
def test_odd_bodies_after_their_list_is_remembered(case, path):
    body = odd_bodies()[case]
    expected = cold(3, path, body)
    server = Server(3)
    primer = compact({"Pod": pending_pod(1, 1), "Nodes": None, "NodeNames": PRIMED})
    assert server.post(path, primer)[0] == 200
    assert server.post(path, body) == expected
    if case in ("invalid pod", "no pod", "pod absent", "not UTF-8 in the pod", "unterminated"):
        assert expected[0] == 400


def test_an_invalid_pod_is_worded_with_its_path():
    server = Server(3)
    primer = compact({"Pod": pending_pod(1, 1), "Nodes": None, "NodeNames": PRIMED})
    server.post("/filter", primer)
    status, reply = server.post("/filter", odd_bodies()["invalid pod"])
    assert status == 400
    assert reply["Error"] == "invalid request: Expected `array | null`, got `str` - at `$.Pod.spec.containers`"


def test_a_retried_pods_signature_ignores_its_false_conditions() -> None:
    # kube-scheduler sends a pod it retries with a PodScheduled=False condition stamped with
    # the time of its last failure: nothing a plugin reads, so pods of one workload keep
    # sharing their memos and replies from their second attempt on.
    from extender.model import k8s

    def signature(status: dict) -> bytes:
        pod = {**pending_pod(0, 1), "status": status}
        return reading.pod_signature(k8s.decoder(k8s.Pod).decode(compact(pod)))

    first = signature({"phase": "Pending", "qosClass": "Burstable"})
    retried = [signature({"phase": "Pending", "conditions": [
        {"type": "PodScheduled", "status": "False", "observedGeneration": 1,
         "lastProbeTime": None, "lastTransitionTime": f"2026-11-28T19:35:{s:02d}Z",
         "reason": "Unschedulable", "message": "0/3 nodes are available"}]})
        for s in (10, 40)]
    assert retried[0] == retried[1] == first
    # A true condition is read (a preemption victim's DisruptionTarget): it still counts.
    victim = signature({"phase": "Running", "conditions": [
        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
         "lastTransitionTime": "2026-11-28T19:35:10Z"}]})
    assert victim != first


def test_a_prioritize_of_the_nodes_a_filter_passed_finds_its_list_remembered(splits) -> None:
    """kube-scheduler's prioritize names exactly the nodes the filter reply passed, in its
    order and bytes: the filter remembers that list, so the prioritize is read without it,
    and answers as a cold server does."""
    server = Server(0)
    pod = pending_pod(1, 0)
    status, reply = server.post("/filter", compact({"Pod": pod, "Nodes": None,
                                                      "NodeNames": NAMES}))
    assert status == 200
    passed = reply["NodeNames"]
    assert passed and len(passed) < len(NAMES)  # some nodes fail: a list of its own
    body = compact({"Pod": pod, "Nodes": None, "NodeNames": passed})
    splits.clear()
    warm = server.post("/prioritize", body)
    assert splits == [True]
    assert warm == cold(0, "/prioritize", body)


def test_a_preemptors_replica_takes_its_view_and_is_answered_as_if_built(monkeypatch) -> None:
    """Preempt decodes its body whole; its pod's view still comes from a recent pod of the same
    content (a workload's replica), rebound to its own identity, and answers the same."""
    from extender import serve
    from extender.model.pod import PodView
    from tests.conftest import fixture_bytes
    from tests.serving import serve_args

    body = json.loads(fixture_bytes("preempt-meta.request.json"))
    replica = json.loads(json.dumps(body))
    replica["Pod"]["metadata"].update(name="critical-job-2", uid="uid-critical-job-2",
                                      creationTimestamp="2026-11-20T10:00:07Z")
    built: list[str] = []
    original = PodView.from_k8s.__func__  # type: ignore[attr-defined]

    def counted(cls, pod, slim=False):  # type: ignore[no-untyped-def]
        view = original(cls, pod, slim)
        if not slim:
            built.append(pod.metadata.name)
        return view

    monkeypatch.setattr(PodView, "from_k8s", classmethod(counted))

    def answers(*bodies: dict) -> list[object]:
        reading._recent_pods.clear()
        reading._views_by_spec.clear()
        with TestClient(create_app(serve.build_runtime(serve_args()))) as client:
            replies = [client.post("/preempt", content=compact(b)) for b in bodies]
        assert all(reply.status_code == 200 for reply in replies)
        return [reply.json() for reply in replies]

    warm = answers(body, replica)
    assert built == ["critical-job"]  # the replica's view was taken from it, not built
    built.clear()
    assert answers(replica) == warm[1:]
    assert built == ["critical-job-2"]
    assert warm[1]["NodeNameToMetaVictims"]  # type: ignore[index]
