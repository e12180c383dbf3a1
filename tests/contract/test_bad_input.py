"""Bad input gets a 4xx with a readable message, and the next valid request still succeeds."""

from __future__ import annotations

import pytest

from tests.conftest import fixture_bytes, fixture_json

BAD_BODIES = [
    (b"garbage", "malformed JSON"),
    (b'{"Pod": {"metadata": {"name": "x"', "malformed JSON"),
    (b"{}", "Pod is required"),
    (b'{"Pod": 3}', "Expected `object | null`, got `int` - at `$.Pod`"),
    (b'{"Pod": {"spec": {"containers": [{"resources": {"requests": {"cpu": "lots"}}}]}}, '
     b'"NodeNames": ["worker-a1"]}', "invalid Pod"),
    (b'{"Pod": {}, "Nodes": null, "NodeNames": null}', "one of Nodes or NodeNames must be set"),
    (b"", "empty request body"),
]


@pytest.mark.parametrize("verb", ["filter", "prioritize", "preempt"])
@pytest.mark.parametrize(("body", "message"), BAD_BODIES)
def test_bad_body_is_400_with_message(client, verb, body, message):
    if verb == "preempt" and b"NodeNames" in body:
        message = "one of NodeNameToVictims or NodeNameToMetaVictims must be set" \
            if b"null" in body else message
    response = client.post(f"/{verb}", content=body)
    assert response.status_code == 400
    error = response.json()["Error"]
    assert message in error
    assert "Traceback" not in response.text
    valid = {"filter": "filter-names.request.json", "prioritize": "prioritize-names.request.json",
             "preempt": "preempt-meta.request.json"}[verb]
    assert client.post(f"/{verb}", content=fixture_bytes(valid)).status_code == 200


def test_filter_errors_use_the_protocol_error_field(client):
    body = client.post("/filter", content=b"{}").json()
    assert set(body) == {"Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error"}
    assert body["Error"] == "invalid request: Pod is required"


@pytest.mark.parametrize("body", [b"nope", b"{}", b'{"PodName": "a"}', b'{"PodName": 1}'])
def test_bind_bad_input(client, body):
    response = client.post("/bind", content=body)
    assert response.status_code == 400
    assert response.json()["Error"]


def test_oversized_body_is_413_and_service_continues(client, runtime):
    runtime.max_body = 10_000
    big = b'{"Pod": {}, "NodeNames": [' + b'"n",' * 5000 + b'"n"]}'
    response = client.post("/filter", content=big)
    assert response.status_code == 413
    assert "exceeds the limit of 10000 bytes" in response.json()["Error"]
    assert client.post("/filter", content=fixture_bytes("filter-names.request.json")).status_code == 200


def test_invalid_node_quantity_rejects_only_that_node(client):
    request = fixture_json("filter-nodes.request.json")
    node = request["Nodes"]["items"][0]
    node["status"]["allocatable"]["cpu"] = "four"
    node["metadata"]["resourceVersion"] = "99999"  # a changed object has a new version
    body = client.post("/filter", json=request).json()
    assert body["Error"] == ""
    assert "worker-a1" in body["FailedAndUnresolvableNodes"]
    assert "four" in body["FailedAndUnresolvableNodes"]["worker-a1"]
    assert [n["metadata"]["name"] for n in body["Nodes"]["items"]] == ["worker-a2"]


def test_wrong_method_and_path(client):
    assert client.get("/filter").status_code == 405
    assert client.post("/nope", content=b"{}").status_code == 404
