"""`api.reading`, the one place that decides how a body is read: each way decodes what it must
and nothing more, and hands the verbs a request in the form the body was sent in."""

from __future__ import annotations

import random

import pytest

from extender import wire
from extender.api import reading
from extender.api.body import BadRequest
from extender.api.observe import RequestRecord
from tests.contract.test_reply_reuse import NAMES, pending_pod
from tests.contract.test_request_reading import Server, compact


@pytest.fixture
def server() -> Server:
    reading._recent_pods.clear()
    reading._views_by_spec.clear()
    return Server(5)


@pytest.fixture
def decodes(monkeypatch) -> dict[str, int]:
    """How many whole bodies and how many pods were decoded."""
    counts = {"body": 0, "pod": 0}
    whole, pod = reading.decode, wire.decode_pod

    def count_body(body, kind):
        counts["body"] += 1
        return whole(body, kind)

    def count_pod(raw):
        counts["pod"] += 1
        return pod(raw)

    monkeypatch.setattr(reading, "decode", count_body)
    monkeypatch.setattr(wire, "decode_pod", count_pod)
    return counts


def read(server: Server, body: bytes) -> reading.SchedulingRequest:
    return reading.scheduling_request(server.runtime, body, RequestRecord("filter"))


def test_a_known_list_and_pod_are_read_without_a_decode(server, decodes) -> None:
    body = compact({"Pod": pending_pod(0, 1), "Nodes": None, "NodeNames": NAMES})
    first = read(server, body)
    assert decodes == {"body": 1, "pod": 1}
    again = read(server, body)
    assert decodes == {"body": 1, "pod": 1}  # the list split off the end, the pod recognised
    assert again.pod is first.pod and again.signature == first.signature
    assert again.candidates.listed is first.candidates.listed is not None
    assert again.candidates.count == len(NAMES)


def test_a_replica_takes_its_workloads_view(server, decodes) -> None:
    one = read(server, compact({"Pod": pending_pod(0, 1), "Nodes": None, "NodeNames": NAMES}))
    other = read(server, compact({"Pod": pending_pod(0, 2), "Nodes": None, "NodeNames": NAMES}))
    assert decodes == {"body": 1, "pod": 2}
    assert other.signature == one.signature and other.pod.key != one.pod.key


def test_the_form_sent_is_the_form_read(server) -> None:
    pod = pending_pod(0, 1)
    unknown = read(server, compact({"Pod": pod, "Nodes": None, "NodeNames": [NAMES[0], "ghost"]}))
    assert unknown.candidates.listed is None and unknown.candidates.raw is None
    assert unknown.candidates.names == [NAMES[0], "ghost"]
    assert list(unknown.candidates.rejected) == ["ghost"]
    nodes = read(server, compact({"Pod": pod, "Nodes": {"items": [
        {"metadata": {"name": NAMES[1]}, "status": {"allocatable": {"cpu": "1"}}}]},
        "NodeNames": None}))
    assert nodes.candidates.listed is None and nodes.candidates.names == [NAMES[1]]
    assert nodes.candidates.raw is not None and list(nodes.candidates.raw) == [NAMES[1]]
    with pytest.raises(BadRequest, match="one of Nodes or NodeNames must be set"):
        read(server, compact({"Pod": pod, "Nodes": None, "NodeNames": None}))


def test_an_explanation_is_read_afresh_and_leaves_nothing(server, decodes) -> None:
    body = compact({"Pod": pending_pod(0, 1), "Nodes": None,
                    "NodeNames": random.Random(0).sample(NAMES, 3)})
    for _ in range(2):
        request = reading.explain_request(server.runtime, body, RequestRecord("explain"))
        assert request.signature == b"" and request.candidates.count == 3
    assert decodes == {"body": 2, "pod": 0}  # decoded whole each time, the pod with it
    assert len(reading._recent_pods) == 0 and len(reading._views_by_spec) == 0
