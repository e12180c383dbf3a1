"""Fuzz: thousands of mutated payloads per verb through the real app never get a 5xx, and every
reply is valid UTF-8 JSON with the protocol's Error field set when the status says failure."""

from __future__ import annotations

import json
import time

import pytest

from tests.conftest import fixture_bytes
from tests.contract.fuzz import INVALID_UTF8, Mutator

SEEDS = {
    "filter": ["filter-names.request.json", "filter-nodes.request.json", "+affinity"],
    "prioritize": ["prioritize-names.request.json", "filter-nodes.request.json", "+affinity"],
    "preempt": ["preempt-meta.request.json", "preempt-full.request.json", "+affinity"],
    "bind": ["bind.request.json"],
}
#: Pod (anti-)affinity and topology spread, so mutations reach their selector parsers too.
AFFINITY = {
    "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "In",
                                                 "values": ["api", "web"]}]},
         "topologyKey": "topology.kubernetes.io/zone", "namespaces": ["default"]}]},
    "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 50, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "api"}},
                                           "topologyKey": "kubernetes.io/hostname",
                                           "matchLabelKeys": ["pod-template-hash"]}}]},
}
SPREAD = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
           "whenUnsatisfiable": "DoNotSchedule", "minDomains": 2,
           "labelSelector": {"matchLabels": {"app": "api"}}}]


def _seed(verb: str, name: str) -> bytes:
    if name != "+affinity":
        return fixture_bytes(name)
    request = json.loads(fixture_bytes(SEEDS[verb][0]))
    spec = request["Pod"]["spec"]
    spec["affinity"] = {**spec.get("affinity", {}), **AFFINITY}
    spec["topologySpreadConstraints"] = SPREAD
    return json.dumps(request).encode()
PER_VERB = 2_000
BUDGET_SECONDS = 60.0  # per verb; the count is normally reached in a fraction of it


def _check_reply(verb: str, body: bytes, status: int, content: bytes) -> None:
    context = f"{verb} {status} for body {body[:200]!r}"
    assert status < 500, context + f": {content[:300]!r}"
    text = content.decode("utf-8")  # strict: invalid UTF-8 raises
    reply = json.loads(text)
    assert "Traceback" not in text, context
    if status >= 400 or (isinstance(reply, dict) and reply.get("Error")):
        assert isinstance(reply, dict) and isinstance(reply["Error"], str) and reply["Error"], context


@pytest.mark.slow
@pytest.mark.parametrize("verb", list(SEEDS))
def test_mutated_payloads_never_get_a_5xx(client, runtime, verb: str) -> None:
    runtime.max_body = 4 * 1024 * 1024
    seeds = [_seed(verb, name) for name in SEEDS[verb]]
    mutator = Mutator(seeds, seed=sum(map(ord, verb)))
    statuses: dict[int, int] = {}
    started = time.monotonic()
    sent = 0
    for body in mutator:
        response = client.post(f"/{verb}", content=body)
        _check_reply(verb, body, response.status_code, response.content)
        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
        sent += 1
        if sent >= PER_VERB or time.monotonic() - started > BUDGET_SECONDS:
            break
    assert sent >= 1_000, f"only {sent} payloads in {BUDGET_SECONDS}s"
    # The mutations reach past the decoder: some are refused, some still answered.
    assert statuses.get(400, 0) > sent // 10, statuses
    # And the service is intact afterwards.
    assert client.post(f"/{verb}", content=seeds[0]).status_code == 200


@pytest.mark.parametrize("verb", list(SEEDS))
@pytest.mark.parametrize("sequence", INVALID_UTF8, ids=lambda s: s.hex())
def test_invalid_utf8_in_any_string_is_400(client, verb: str, sequence: bytes) -> None:
    seed = fixture_bytes(SEEDS[verb][0])
    quotes = [i for i, b in enumerate(seed) if b == 0x22]
    for at in quotes[1::7]:  # inside keys and values all over the payload
        body = seed[:at + 1] + sequence + seed[at + 1:]
        response = client.post(f"/{verb}", content=body)
        assert response.status_code == 400, body[max(0, at - 40):at + 40]
        assert "invalid UTF-8" in response.json()["Error"]


def test_nodes_form_never_echoes_invalid_utf8(client) -> None:
    """A node at the state's resourceVersion is echoed as sent; invalid bytes in it (outside
    the name and version that identify it) must still be refused, not echoed."""
    body = fixture_bytes("filter-nodes.request.json")
    at = body.index(b'"kubernetes.io/hostname"')
    broken = body[:at + 1] + b"\xff" + body[at + 1:]
    response = client.post("/filter", content=broken)
    assert response.status_code == 400
    assert response.content.decode("utf-8")
    assert response.json()["Error"].startswith("malformed JSON: invalid UTF-8 at byte")


@pytest.mark.parametrize(("verb", "body", "message"), [
    ("filter", b'{"Pod": {}, "Nodes": {"items": [' + b"[" * 100_000 + b"]" * 100_000 + b"]}}",
     "nested too deeply"),
    ("preempt", b'{"Pod": {}, "NodeNameToMetaVictims": {"n": ' + b'{"a":' * 5000 + b"1"
     + b"}" * 5001 + b"}", "nested too deeply"),
    ("filter", b'{"Pod": {"spec": {"priority": 1e400}}, "NodeNames": []}', "out of range"),
    ("bind", b'{"PodName": "\\ud800", "PodNamespace": "a", "PodUID": "u", "Node": "n"}',
     "malformed JSON"),
])
def test_pathological_json_is_400(client, verb: str, body: bytes, message: str) -> None:
    response = client.post(f"/{verb}", content=body)
    assert response.status_code == 400
    assert message in response.json()["Error"]


def test_too_many_candidates_is_413(client, runtime) -> None:
    runtime.max_candidates = 100
    names = json.dumps([f"n{i}" for i in range(101)]).encode()
    body = fixture_bytes("filter-names.request.json")
    request = json.loads(body)
    request["NodeNames"] = json.loads(names)
    response = client.post("/filter", json=request)
    assert response.status_code == 413
    assert response.json()["Error"] == (
        "101 candidate nodes exceed the limit of 100 per request (serve --max-candidates)")
    preempt = json.loads(fixture_bytes("preempt-meta.request.json"))
    preempt["NodeNameToMetaVictims"] = {f"n{i}": {"Pods": []} for i in range(101)}
    response = client.post("/preempt", json=preempt)
    assert response.status_code == 413 and "101 candidate nodes" in response.json()["Error"]
