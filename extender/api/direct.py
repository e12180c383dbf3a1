"""The verbs answered from the HTTP parser, without ASGI.

kube-scheduler sends every pod's filter, prioritize and bind as a small `POST` on a keep-alive
connection. Through ASGI each one costs a request scope, a receive/send pair of messages, a
Starlette request and a response rendered in two writes: about a tenth of a millisecond that
depends on nothing the request says, a third of a small prioritize (`bench.traffic`). Here the
protocol (`api.protocol`) collects such a request's body itself and hands the bytes to the same
answer the route gives (`verb.direct_verb`: readiness, error replies, logging, metrics), then
writes the reply's head and body at once.

Only the plain case comes here: `POST` to a verb's exact path, HTTP/1.1 keep-alive, a declared
body within the body limit and not large (`api.offload`), no `Expect`, no request in flight on
the connection. A medium body (past `MEDIUM_BYTES`: a preempt of a few hundred nodes) comes
only when one of the medium-body slots is free as its head ends, and holds it until answered,
as the route would. Everything else (a large or chunked body, a medium one with every slot
taken, `Connection: close`, a pipelined request, `serve --record`) takes the ASGI route, which
answers it the same way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.responses import Response
from uvicorn.protocols.http.httptools_impl import STATUS_LINE

from extender.api.body import BadRequest
from extender.api.offload import MEDIUM_BYTES
from extender.api.runtime import Runtime


@dataclass(frozen=True, slots=True)
class DirectVerb:
    """A verb the protocol may answer directly (`verb.direct_verb` makes them)."""

    #: The verb's response to a body.
    answer: Callable[[bytes], Awaitable[Response]]
    #: Its error reply for a request refused before its body was whole.
    refuse: Callable[[BadRequest], Awaitable[Response]]
    runtime: Runtime

    def takes(self, size: int) -> DirectCycle | None:
        """The cycle for a body of `size` declared bytes, if it comes here (a medium one
        takes a medium-body slot, which the cycle gives back)."""
        offload = self.runtime.offload
        if not 0 < size <= self.runtime.max_body or offload.is_large(size):
            return None
        if size <= MEDIUM_BYTES:
            return DirectCycle(self)
        return DirectCycle(self, holds_slot=True) if offload.take_medium_now() else None


class _NoEvent:
    """What uvicorn's protocol may `set()` on its current cycle: nothing waits here."""

    __slots__ = ()

    def set(self) -> None:
        pass


class DirectCycle:
    """One request answered directly, standing where uvicorn keeps its `RequestResponseCycle`
    (the protocol's `cycle`), so that uvicorn's pipelining, keep-alive timer and graceful
    shutdown treat it as theirs."""

    __slots__ = ("verb", "chunks", "received", "keep_alive", "disconnected",
                 "response_complete", "timer", "holds_slot")
    message_event = _NoEvent()

    def __init__(self, verb: DirectVerb, holds_slot: bool = False) -> None:
        self.verb = verb
        #: A medium-body slot is held for this request (`give_back`).
        self.holds_slot = holds_slot
        self.chunks: list[bytes] = []
        self.received = 0
        self.keep_alive = True
        self.disconnected = False
        self.response_complete = False
        self.timer: asyncio.TimerHandle | None = None

    def add(self, chunk: bytes) -> None:
        self.chunks.append(chunk)
        self.received += len(chunk)

    def body(self) -> bytes:
        chunks = self.chunks
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def give_back(self) -> None:
        """Release the medium-body slot, if held: once its answer is made, or the connection
        is lost before its body is whole."""
        if self.holds_slot:
            self.holds_slot = False
            self.verb.runtime.offload.give_back_medium()

    def stop_timer(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def timed_out(self) -> BadRequest:
        timeout = self.verb.runtime.body_timeout
        return BadRequest(f"request body not received within {timeout:g}s "
                          f"({self.received} bytes arrived)", 408, close=True)


def encode_response(response: Response, default_headers: list[tuple[bytes, bytes]],
                    keep_alive: bool) -> tuple[bytes, bool]:
    """The response's bytes (status line, headers, body) as uvicorn writes them, and whether
    the connection stays open after it."""
    parts = [STATUS_LINE[response.status_code]]
    for name, value in default_headers:
        parts += [name, b": ", value, b"\r\n"]
    for name, value in response.raw_headers:
        if name == b"connection" and b"close" in value.lower():
            keep_alive = False
        parts += [name, b": ", value, b"\r\n"]
    if not keep_alive and not any(name == b"connection" for name, _ in response.raw_headers):
        parts.append(b"connection: close\r\n")
    parts += [b"\r\n", response.body]
    return b"".join(parts), keep_alive


def find_direct(app: Any) -> dict[bytes, DirectVerb]:
    """The direct verbs of the app uvicorn serves (through any middleware wrapping it)."""
    for _ in range(8):
        direct = getattr(app, "direct_verbs", None)
        if direct is not None:
            return direct  # type: ignore[no-any-return]
        app = getattr(app, "app", None)
        if app is None:
            break
    return {}
