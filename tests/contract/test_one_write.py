"""A response leaves in one write, and the verbs skip Starlette's stack without changing a byte.

uvicorn writes a response's head and body in two calls; `CoalescingTransport` joins them (one
system call and one loopback packet per response instead of two). `ExtenderApp` sends a verb
`POST` straight to its route. Both are checked here on the protocol uvicorn runs, fed bytes
as a socket would, against a transport that records each write."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import uvicorn
from uvicorn.server import ServerState

from extender import serve
from extender.api.app import create_app
from extender.api.protocol import CoalescingTransport, ConnectionLimits, guarded_protocol
from tests.conftest import fixture_bytes
from tests.contract.rawhttp import RecordingTransport
from tests.serving import serve_args

HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n"


def test_a_head_waits_for_its_body_within_the_loops_turn() -> None:
    async def scenario() -> list[bytes]:
        raw = RecordingTransport()
        t = CoalescingTransport(raw, asyncio.get_running_loop())
        t.write(HEAD)
        assert raw.writes == []
        t.write(b"{}")
        assert raw.writes == [HEAD + b"{}"]
        t.write(b"more")  # anything else goes out as it comes
        # A head no body follows (a HEAD request's) goes out on the next turn.
        t.write(HEAD)
        assert raw.writes == [HEAD + b"{}", b"more"]
        await asyncio.sleep(0)
        return raw.writes
    assert asyncio.run(scenario()) == [HEAD + b"{}", b"more", HEAD]


@pytest.mark.parametrize("head", [
    b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n",
    b"HTTP/1.1 204 No Content\r\n\r\n",
    b"HTTP/1.1 304 Not Modified\r\ncontent-length: 12\r\n\r\n",
    b"HTTP/1.1 100 Continue\r\n\r\n",
])
def test_a_head_without_a_body_goes_out_at_once(head: bytes) -> None:
    raw = RecordingTransport()
    loop = asyncio.new_event_loop()
    try:
        CoalescingTransport(raw, loop).write(head)
    finally:
        loop.close()
    assert raw.writes == [head]


def test_close_flushes_a_held_head() -> None:
    raw = RecordingTransport()
    loop = asyncio.new_event_loop()
    t = CoalescingTransport(raw, loop)
    chunked = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
    t.write(chunked)
    assert raw.writes == []
    t.close()
    loop.close()
    assert raw.writes == [chunked] and raw.closed


async def _exchange(request: bytes, responses: int = 1) -> tuple[RecordingTransport, Any]:
    runtime = serve.build_runtime(serve_args())
    app = create_app(runtime)
    protocol_class = guarded_protocol(ConnectionLimits())
    config = uvicorn.Config(app, http=protocol_class, log_config=None, access_log=False,
                            proxy_headers=False)
    protocol = protocol_class(config=config, server_state=ServerState(), app_state={})
    raw = RecordingTransport()
    protocol.connection_made(raw)
    protocol.data_received(request)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 20
    while sum(w.startswith(b"HTTP/1.1 ") for w in raw.writes) < responses:
        assert loop.time() < deadline, raw.writes
        await asyncio.sleep(0.001)
    protocol.connection_lost(None)
    return raw, app


def _post(path: str, body: bytes) -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def test_a_verbs_reply_is_one_write_and_the_same_bytes_as_through_starlette() -> None:
    body = fixture_bytes("filter-names.request.json")
    raw, app = asyncio.run(_exchange(_post("/filter", body)))
    assert len(raw.writes) == 1
    head, _, reply = raw.writes[0].partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK") and b"content-length: %d" % len(reply) in head
    # The same request through Starlette's routing (the route `app.routes` lists).
    from starlette.testclient import TestClient

    app.verb_routes = {}
    with TestClient(app) as client:
        assert client.post("/filter", content=body).content == reply


def test_keep_alive_requests_each_get_one_write_and_head_gets_no_body() -> None:
    body = fixture_bytes("filter-names.request.json")
    two = _post("/prioritize", body) + b"HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    raw, _ = asyncio.run(_exchange(two, responses=2))
    replies = [w for w in raw.writes if w.startswith(b"HTTP/1.1 ")]
    assert replies[0].startswith(b"HTTP/1.1 200 OK") and replies[0].endswith(b"]")
    assert replies[1].startswith(b"HTTP/1.1 200 OK") and replies[1].endswith(b"\r\n\r\n")
