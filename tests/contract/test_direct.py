"""The verbs answered from the parser (`api.direct`) answer exactly as their routes do.

Each exchange feeds the protocol uvicorn runs the bytes a socket would deliver and records
what it writes; the same request then goes through the app's ASGI route on a fresh runtime,
and the two replies (status, type, body) must be equal."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import httpx
import pytest
import uvicorn
from prometheus_client import REGISTRY
from uvicorn.server import ServerState

from extender import serve
from extender.api.app import create_app
from extender.api.direct import DirectCycle
from extender.api.offload import DEFAULT_OFFLOAD_BYTES, MEDIUM_BYTES, MEDIUM_SLOTS
from extender.api.protocol import ConnectionLimits, guarded_protocol
from extender.api.runtime import Runtime
from tests.conftest import fixture_bytes
from tests.contract.rawhttp import RecordingTransport
from tests.serving import serve_args


async def eventually(check: Callable[[], bool], what: object, timeout: float = 5.0) -> None:
    """Poll `check` on the loop until it holds; fail, saying `what`, after `timeout` s."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        assert loop.time() < deadline, what
        await asyncio.sleep(0.001)


class Wire:
    """One connection to a fresh server's protocol."""

    def __init__(self) -> None:
        self.runtime: Runtime = serve.build_runtime(serve_args())
        app = create_app(self.runtime)
        protocol_class = guarded_protocol(ConnectionLimits())
        config = uvicorn.Config(app, http=protocol_class, log_config=None, access_log=False,
                                proxy_headers=False)
        self.protocol = protocol_class(config=config, server_state=ServerState(), app_state={})
        self.raw = RecordingTransport()
        self.protocol.connection_made(self.raw)

    def send(self, data: bytes) -> None:
        self.protocol.data_received(data)

    async def replies(self, count: int) -> list[tuple[int, dict[str, str], bytes]]:
        """The first `count` responses written, parsed (polling until they are)."""
        await eventually(lambda: len(self._answers()) >= count, self.raw.writes, timeout=20)
        out = []
        for write in self._answers():
            head, _, body = write.partition(b"\r\n\r\n")
            lines = head.decode().split("\r\n")
            headers = dict(line.split(": ", 1) for line in lines[1:])
            assert int(headers["content-length"]) == len(body)
            out.append((int(lines[0].split()[1]), headers, body))
        return out[:count]

    def _answers(self) -> list[bytes]:
        """The responses written, interim ones (100 Continue) left out."""
        return [w for w in self.raw.writes
                if w.startswith(b"HTTP/1.1 ") and not w.startswith(b"HTTP/1.1 1")]


def post(path: str, body: bytes, *extra: str) -> bytes:
    head = [f"POST {path} HTTP/1.1", "Host: x", "Content-Type: application/json",
            f"Content-Length: {len(body)}", *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


async def through_the_route(path: str, body: bytes) -> tuple[int, str, bytes]:
    runtime = serve.build_runtime(serve_args())
    app = create_app(runtime)
    app.verb_routes = {}  # through Starlette's routing, as every other endpoint
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://test") as client:
        response = await client.post(path, content=body)
    return response.status_code, response.headers["content-type"], response.content


def padded(body: bytes, size: int) -> bytes:
    """The same JSON request, `size` bytes long (whitespace before its last brace)."""
    return body[:-1] + b" " * (size - len(body)) + body[-1:]


def free_medium_slots(runtime: Runtime) -> int:
    """How many medium-body slots are free now (taken and given back to count them)."""
    taken = 0
    while runtime.offload.take_medium_now():
        taken += 1
    for _ in range(taken):
        runtime.offload.give_back_medium()
    return taken


CASES = [
    ("/filter", fixture_bytes("filter-names.request.json")),
    ("/filter", fixture_bytes("filter-nodes.request.json")),
    ("/prioritize", fixture_bytes("prioritize-names.request.json")),
    ("/preempt", fixture_bytes("preempt-meta.request.json")),
    ("/bind", fixture_bytes("bind.request.json")),
    ("/filter", b'{"Pod": 3}'),
    ("/filter", b"not json"),
    ("/prioritize", b'{"Pod": {"metadata": {"name": "p"}}, "NodeNames": ["no-such-node"]}'),
    ("/filter", b'{"Pod": {"metadata": {"name": "p"}}}'),
    ("/filter", b'{"Pod": "\xff"}'),
    ("/bind", b"{}"),
    ("/preempt", b"[]"),
]


@pytest.mark.parametrize(("path", "body"), CASES, ids=[f"{p}-{i}" for i, (p, _) in enumerate(CASES)])
def test_a_verb_is_answered_directly_with_the_routes_reply(path: str, body: bytes) -> None:
    async def scenario() -> None:
        wire = Wire()
        wire.send(post(path, body))
        [(status, headers, reply)] = await wire.replies(1)
        assert isinstance(wire.protocol.cycle, DirectCycle)  # it did not go through ASGI
        assert (status, headers["content-type"], reply) == await through_the_route(path, body)
        assert not wire.raw.closed  # kept alive for the next request

    asyncio.run(scenario())


def test_requests_one_after_another_and_pipelined_are_answered_in_order() -> None:
    filter_body = fixture_bytes("filter-names.request.json")
    prioritize_body = fixture_bytes("prioritize-names.request.json")

    async def scenario() -> None:
        wire = Wire()
        wire.send(post("/filter", filter_body))
        await wire.replies(1)
        # Two at once: the second waits behind the first (uvicorn's pipeline) and goes
        # through ASGI; a health probe in between is answered in its turn.
        wire.send(post("/prioritize", prioritize_body) + b"GET /livez HTTP/1.1\r\nHost: x\r\n\r\n"
                  + post("/filter", b'{"Pod": 3}'))
        replies = await wire.replies(4)
        assert [status for status, _, _ in replies] == [200, 200, 200, 400]
        assert replies[0][2] == (await through_the_route("/filter", filter_body))[2]
        assert replies[1][2] == (await through_the_route("/prioritize", prioritize_body))[2]
        assert replies[3][2] == (await through_the_route("/filter", b'{"Pod": 3}'))[2]
        # And the connection goes on.
        wire.send(post("/prioritize", prioritize_body))
        assert (await wire.replies(5))[4][2] == replies[1][2]

    asyncio.run(scenario())


def test_a_request_asking_to_close_is_answered_then_the_connection_closes() -> None:
    async def scenario() -> None:
        wire = Wire()
        wire.send(post("/filter", b'{"Pod": 3}', "Connection: close"))
        [(status, headers, _)] = await wire.replies(1)
        assert (status, headers.get("connection")) == (400, "close")
        assert wire.raw.closed

    asyncio.run(scenario())


def test_a_body_that_stops_arriving_is_refused_after_the_body_timeout() -> None:
    body = fixture_bytes("filter-names.request.json")

    async def scenario() -> None:
        wire = Wire()
        wire.runtime.body_timeout = 0.05
        message = post("/filter", body)
        wire.send(message[:-10])
        [(status, headers, reply)] = await wire.replies(1)
        assert status == 408 and headers.get("connection") == "close"
        assert b'"Error":"request body not received within 0.05s (%d bytes arrived)"' % (
            len(body) - 10) in reply
        assert wire.raw.closed
        wire.send(message[-10:])  # what still arrives is dropped
        assert len(await wire.replies(1)) == 1

    asyncio.run(scenario())


def test_a_body_in_pieces_within_the_timeout_is_answered() -> None:
    body = fixture_bytes("filter-names.request.json")

    async def scenario() -> None:
        wire = Wire()
        message = post("/filter", body)
        for start in range(0, len(message), 100):
            wire.send(message[start:start + 100])
            await asyncio.sleep(0)
        [(status, _, reply)] = await wire.replies(1)
        assert (status, reply) == (200, (await through_the_route("/filter", body))[2])

    asyncio.run(scenario())


def test_a_connection_lost_mid_body_leaves_nothing_behind() -> None:
    async def scenario() -> None:
        wire = Wire()
        wire.runtime.body_timeout = 0.02
        wire.send(post("/filter", fixture_bytes("filter-names.request.json"))[:-5])
        wire.protocol.connection_lost(None)
        await asyncio.sleep(0.05)  # past the body's deadline: no timer may fire on it
        assert wire.raw.writes == []

    asyncio.run(scenario())


def test_not_ready_is_the_verbs_error_reply_and_is_counted() -> None:
    def count() -> float:
        return REGISTRY.get_sample_value(
            "extender_requests_total", {"verb": "filter", "outcome": "not_ready"}) or 0.0

    async def scenario() -> None:
        wire = Wire()
        wire.runtime.readiness = lambda: (False, "informers not synced")  # type: ignore[method-assign]
        before = count()
        wire.send(post("/filter", fixture_bytes("filter-names.request.json")))
        [(status, _, reply)] = await wire.replies(1)
        assert status == 200
        assert b'"Error":"extender is not ready: informers not synced"' in reply
        assert count() == before + 1

    asyncio.run(scenario())


@pytest.mark.parametrize("how", ["large", "chunked", "expect", "query"])
def test_other_requests_go_through_asgi_with_the_same_answer(how: str) -> None:
    body = fixture_bytes("filter-names.request.json")
    if how == "large":  # run off the loop: JSON whitespace keeps it the same request
        body = padded(body, DEFAULT_OFFLOAD_BYTES + 1)
    if how == "chunked":
        request = (b"POST /filter HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                   + b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n")
    elif how == "expect":
        request = post("/filter", body, "Expect: 100-continue")
    elif how == "query":
        request = post("/filter?x=1", body)
    else:
        request = post("/filter", body)

    async def scenario() -> None:
        wire = Wire()
        wire.send(request)
        replies = await wire.replies(1)
        assert not isinstance(wire.protocol.cycle, DirectCycle)
        status, _, reply = replies[-1]
        assert (status, reply) == (200, (await through_the_route("/filter", body))[2])

    asyncio.run(scenario())


def test_a_shutdown_mid_request_lets_it_answer_then_closes() -> None:
    async def scenario() -> None:
        wire = Wire()
        release = asyncio.Event()
        started = asyncio.Event()
        binds: list[tuple[str, str]] = []

        async def slow_bind(namespace: str, name: str, uid: str, node: str, **_: object) -> None:
            started.set()
            await release.wait()
            binds.append((f"{namespace}/{name}", node))

        wire.runtime.binder.bind = slow_bind  # type: ignore[method-assign]
        wire.send(post("/bind", fixture_bytes("bind.request.json")))
        await asyncio.wait_for(started.wait(), 5)
        cycle = wire.protocol.cycle
        assert isinstance(cycle, DirectCycle) and not cycle.response_complete
        wire.protocol.shutdown()  # uvicorn's graceful shutdown, as on SIGTERM
        assert not wire.raw.closed  # the request in flight is answered first
        release.set()
        [(status, headers, reply)] = await wire.replies(1)
        assert (status, reply) == (200, b'{"Error":""}')
        assert headers.get("connection") == "close" and wire.raw.closed
        assert binds == [("default/api-7d9f", "worker-a2")]

    asyncio.run(scenario())


MEDIUM_PREEMPT = padded(fixture_bytes("preempt-meta.request.json"), MEDIUM_BYTES + 1000)


def test_a_medium_body_is_answered_directly_holding_a_slot_until_answered() -> None:
    async def scenario() -> None:
        wire = Wire()
        message = post("/preempt", MEDIUM_PREEMPT)
        wire.send(message[:1000])  # the head and the body's start: a slot is taken
        assert isinstance(wire.protocol.cycle, DirectCycle)
        assert free_medium_slots(wire.runtime) == MEDIUM_SLOTS - 1
        wire.send(message[1000:])
        [(status, headers, reply)] = await wire.replies(1)
        assert (status, headers["content-type"], reply) == await through_the_route(
            "/preempt", MEDIUM_PREEMPT)
        assert free_medium_slots(wire.runtime) == MEDIUM_SLOTS

    asyncio.run(scenario())


def test_a_medium_body_with_every_slot_taken_waits_its_turn_through_asgi() -> None:
    async def scenario() -> None:
        wire = Wire()
        offload = wire.runtime.offload
        assert [offload.take_medium_now() for _ in range(MEDIUM_SLOTS + 1)] == \
            [True] * MEDIUM_SLOTS + [False]
        wire.send(post("/preempt", MEDIUM_PREEMPT))
        assert not isinstance(wire.protocol.cycle, DirectCycle)
        await eventually(lambda: offload.waiting_medium == 1, "the route to wait for a slot")
        assert wire.raw.writes == []
        offload.give_back_medium()
        [(status, _, reply)] = await wire.replies(1)
        assert (status, reply) == (200, (await through_the_route("/preempt", MEDIUM_PREEMPT))[2])
        assert free_medium_slots(wire.runtime) == 1  # the route gave its slot back too

    asyncio.run(scenario())


@pytest.mark.parametrize("how", ["lost", "timeout"])
def test_a_medium_body_that_never_completes_gives_its_slot_back(how: str) -> None:
    async def scenario() -> None:
        wire = Wire()
        wire.runtime.body_timeout = 0.02
        wire.send(post("/preempt", MEDIUM_PREEMPT)[:-5])
        assert free_medium_slots(wire.runtime) == MEDIUM_SLOTS - 1
        if how == "lost":
            wire.protocol.connection_lost(None)
        else:
            [(status, _, _)] = await wire.replies(1)
            assert status == 408
        await eventually(lambda: free_medium_slots(wire.runtime) == MEDIUM_SLOTS,
                         "every medium-body slot given back")

    asyncio.run(scenario())
