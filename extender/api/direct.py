"""The verbs answered from the HTTP parser, without ASGI.

kube-scheduler sends every pod's filter, prioritize and bind as a small `POST` on a keep-alive
connection. Through ASGI each one costs a request scope, a receive/send pair of messages, a
Starlette request and a response rendered in two writes: about a tenth of a millisecond that
depends on nothing the request says, a third of a small prioritize (`bench.traffic`). Here the
protocol (`api.protocol`) collects such a request's body itself and hands the bytes to the same
answer the route gives (`verb.direct_verb`: readiness, error replies, logging, metrics), then
writes the reply's head and body at once.

Only the plain case comes here: `POST` to a verb's exact path, HTTP/1.1 keep-alive, a declared
body of 1 byte to `MEDIUM_BYTES` within the body limit, no `Expect`, no request in flight on
the connection. Everything else (a large or chunked body, `Connection: close`, a pipelined
request, `serve --record`) takes the ASGI route, which answers it the same way.
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

    def takes(self, size: int) -> bool:
        """Whether a body of `size` declared bytes is small enough to come here."""
        return 0 < size <= MEDIUM_BYTES and size <= self.runtime.max_body and \
            not self.runtime.offload.is_large(size)


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
                 "response_complete", "timer")
    message_event = _NoEvent()

    def __init__(self, verb: DirectVerb) -> None:
        self.verb = verb
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
