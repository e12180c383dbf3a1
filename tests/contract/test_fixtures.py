"""Every fixture request through the real HTTP app, replies compared key by key."""

from __future__ import annotations

import json

import msgspec
import pytest

from tests.conftest import FIXTURE_CASES, fixture_bytes, fixture_json


@pytest.mark.parametrize(("verb", "request_file", "expected_file"), FIXTURE_CASES)
def test_fixture_reply_matches_exactly(client, verb, request_file, expected_file):
    response = client.post(f"/{verb}", content=fixture_bytes(request_file),
                           headers={"Content-Type": "application/json"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    # json equality is key-by-key: casing, nulls and list order all count.
    assert response.json() == fixture_json(expected_file)


def test_filter_names_keeps_request_order_and_every_node_once(client):
    request = fixture_json("filter-names.request.json")
    request["NodeNames"] = list(reversed(request["NodeNames"]))
    reply = client.post("/filter", json=request).json()
    assert reply["NodeNames"] == ["worker-a2", "worker-a1"]
    seen = reply["NodeNames"] + list(reply["FailedNodes"]) + list(reply["FailedAndUnresolvableNodes"])
    assert sorted(seen) == sorted(request["NodeNames"])


def test_filter_nodes_echoes_node_objects_byte_for_byte(client):
    body = fixture_bytes("filter-nodes.request.json")
    reply = client.post("/filter", content=body).content
    sent = json.loads(body)["Nodes"]["items"]
    echoed = json.loads(reply)["Nodes"]["items"]
    assert echoed == [n for n in sent if n["metadata"]["name"] in ("worker-a1", "worker-a2")]
    # Whole objects, including fields the engine never reads.
    assert "daemonEndpoints" in echoed[0]["status"] and "annotations" in echoed[0]["metadata"]
    # Byte for byte: the passing nodes' original bytes (whitespace included) are in the reply.
    nodes = msgspec.json.decode(body, type=dict[str, msgspec.Raw])["Nodes"]
    first = bytes(msgspec.json.decode(nodes, type=dict[str, msgspec.Raw])["items"])
    first = bytes(msgspec.json.decode(first, type=list[msgspec.Raw])[0])
    assert b"\n" in first and first in reply


def test_prioritize_reply_is_a_bare_array_of_integers(client):
    reply = client.post("/prioritize", content=fixture_bytes("prioritize-names.request.json"))
    body = reply.json()
    assert isinstance(body, list)
    assert all(type(entry["Score"]) is int and set(entry) == {"Host", "Score"} for entry in body)
    assert b"3.0" not in reply.content and b'"Score":3' in reply.content


def test_unknown_node_name_is_reported_not_fatal(client):
    request = fixture_json("filter-names.request.json")
    request["NodeNames"] = ["worker-a1", "ghost-9"]
    reply = client.post("/filter", json=request)
    assert reply.status_code == 200
    body = reply.json()
    assert body["NodeNames"] == ["worker-a1"]
    assert body["FailedNodes"] == {"ghost-9": "node(s) were not found in the extender's cluster state"}
    assert body["Error"] == ""


def test_prioritize_lists_unknown_nodes_with_zero(client):
    request = fixture_json("prioritize-names.request.json")
    request["NodeNames"] = ["ghost-9", "worker-a2"]
    assert client.post("/prioritize", json=request).json() == [
        {"Host": "ghost-9", "Score": 0}, {"Host": "worker-a2", "Score": 7}]


def test_bind_then_filter_sees_the_pod_consumed(client):
    # A filter request makes the pending pod known; binding it assumes it on worker-a2.
    client.post("/filter", content=fixture_bytes("filter-names.request.json"))
    assert client.post("/bind", content=fixture_bytes("bind.request.json")).json() == {"Error": ""}
    prioritize = client.post("/prioritize", content=fixture_bytes("prioritize-names.request.json"))
    # worker-a2 now holds 1500m/1.5Gi of 4000m/8Gi: cpu 62, memory 81 → (62+81)/2 = 71 before;
    # after the 1 cpu/1Gi pod lands: cpu (4000-2500)*100/4000=37, mem (8-2.5)/8 → 68; mean 52 → 5.
    assert prioritize.json() == [{"Host": "worker-a1", "Score": 3}, {"Host": "worker-a2", "Score": 5}]


def test_nodes_form_reads_a_node_whose_version_differs_from_the_state(client):
    request = fixture_json("filter-nodes.request.json")
    node = next(n for n in request["Nodes"]["items"] if n["metadata"]["name"] == "worker-a2")
    node["spec"] = {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]}
    node["metadata"]["resourceVersion"] = "99999"
    body = client.post("/filter", json=request).json()
    assert body["FailedAndUnresolvableNodes"]["worker-a2"] == \
        "node(s) had untolerated taint(s)"
    # Same version as the state: the state's view serves, and the reply still echoes the bytes.
    assert [n["metadata"]["name"] for n in body["Nodes"]["items"]] == ["worker-a1"]


def test_nodes_form_identifies_nodes_whatever_the_key_order(client):
    request = fixture_json("filter-nodes.request.json")
    expected = fixture_json("filter-nodes.expected.json")
    for node in request["Nodes"]["items"]:
        meta = node["metadata"]
        # Not Go's field order: resourceVersion first, then the rest (the slow, decoding path).
        node["metadata"] = {"resourceVersion": meta["resourceVersion"],
                            **{k: v for k, v in meta.items() if k != "resourceVersion"}}
    reply = client.post("/filter", json=request).json()
    assert reply["FailedNodes"] == expected["FailedNodes"]
    assert reply["FailedAndUnresolvableNodes"] == expected["FailedAndUnresolvableNodes"]
    assert [n["metadata"]["name"] for n in reply["Nodes"]["items"]] == ["worker-a1", "worker-a2"]
