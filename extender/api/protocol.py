"""uvicorn's httptools protocol with the limits it lacks: a deadline and a size bound for each
request head, and a cap on open connections.

uvicorn closes idle keep-alive connections, but a connection that opens and sends nothing,
or trickles a request head a byte at a time, stays open for ever, and httptools accepts a head
of any size. Here:

- a request head (request line and headers) must arrive within `header_timeout` seconds of the
  connection opening or of its first byte; otherwise the connection gets `408` and is closed;
- a head larger than `max_head_bytes` gets `431` and the connection is closed;
- beyond `max_connections` open connections, a new one gets `503` and is closed at once (the
  connections already open, kube-scheduler's keep-alive ones among them, are not disturbed).
  Connections whose bind is held at Coscheduling's Permit (`parked`) do not count: kube-scheduler
  binds each pod of a gang on its own connection, and a gang of thousands must neither be
  refused nor crowd out the filter calls (held binds have their own bound,
  `serve --max-held-binds`).

The body's deadline is the route's (`read_body`): it starts once the route reads the body, so
a large request waiting for its turn is not cut off. Verified against uvicorn 0.54.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.responses import Response
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from extender.api import metrics
from extender.api.direct import DirectCycle, DirectVerb, encode_response, find_direct

log = logging.getLogger(__name__)

DEFAULT_HEADER_TIMEOUT = 10.0
DEFAULT_MAX_HEAD_BYTES = 64 * 1024
DEFAULT_MAX_CONNECTIONS = 512
#: How long a connection refused for its head is kept reading (and dropping) what the client
#: still sends, so that its answer arrives before the connection closes.
LINGER_SECONDS = 2.0


def _none_parked() -> int:
    return 0


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    max_head_bytes: int = DEFAULT_MAX_HEAD_BYTES
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    #: How many open connections wait on a held bind (`Runtime.held_binds`).
    parked: Callable[[], int] = _none_parked
    #: Connections past `max_connections` accepted on probation, for binds only
    #: (`serve --max-held-binds`; 0: none).
    max_parked: int = 0


def _reply(status: str, text: str) -> bytes:
    body = text.encode()
    return (f"HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n").encode() + body


class CoalescingTransport:
    """A connection's transport that writes a response's head together with its body.

    uvicorn writes the head (status line and headers) and the body in two calls, and each write
    to a socket is a system call and, on loopback, a packet the kernel carries to the reader
    at once: two per response where one does. A head announcing a body is held for the body's
    first write, which follows in the same turn of the event loop; a head no body follows (a
    HEAD request's) goes out on the next turn, and any other call writes it first."""

    __slots__ = ("transport", "loop", "held")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self.transport = transport
        self.loop = loop
        self.held: bytes | None = None

    def write(self, data: bytes) -> None:
        held = self.held
        if held is not None:
            self.held = None
            self.transport.write(held + data)
        elif data.startswith(b"HTTP/1.1 ") and data.endswith(b"\r\n\r\n") and \
                _announces_body(data):
            self.held = data
            self.loop.call_soon(self.flush)
        else:
            self.transport.write(data)

    def flush(self) -> None:
        if self.held is not None:
            held, self.held = self.held, None
            self.transport.write(held)

    def close(self) -> None:
        self.flush()
        self.transport.close()

    def write_eof(self) -> None:
        self.flush()
        self.transport.write_eof()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


def _announces_body(head: bytes) -> bool:
    """Whether a response head promises body bytes: a positive content-length, or chunks; and
    not a 1xx, 204 or 304."""
    status = head[9:12]
    if status[:1] == b"1" or status in (b"204", b"304"):
        return False
    lowered = head.lower()
    at = lowered.find(b"\r\ncontent-length: ")
    if at >= 0:
        end = lowered.find(b"\r\n", at + 2)
        return lowered[at + 18:end].strip() not in (b"0", b"")
    return b"\r\ntransfer-encoding: chunked" in lowered


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """`HttpToolsProtocol` with `limits` (set on the subclass `guarded_protocol` makes)."""

    limits = ConnectionLimits()
    listener = "main"

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._probation = False
        self._head_timer: asyncio.TimerHandle | None = None
        self._head_bytes = 0
        self._head_refused = False
        limits = self.limits
        open_now = len(self.connections)
        over = open_now - limits.parked() >= limits.max_connections
        # Past the cap a connection may still carry a gang member's bind (kube-scheduler binds
        # each pod on a connection of its own, all at once when a gang is released): it is
        # accepted on probation and refused at its head unless that is a bind.
        self._probation = over and open_now < limits.max_connections + limits.max_parked
        self._refused = over and not self._probation
        if self._refused:
            metrics.CONNECTIONS_REFUSED.labels(self.listener).inc()
            transport.write(_reply("503 Service Unavailable", "too many open connections\n"))
            transport.close()
            return
        super().connection_made(transport)
        self.transport = CoalescingTransport(transport, self.loop)  # type: ignore[assignment]
        self._direct: dict[bytes, DirectVerb] = find_direct(self.app)
        self._reading: DirectCycle | None = None  # a direct request whose body is arriving
        metrics.OPEN_CONNECTIONS.labels(self.listener).inc()
        self._start_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._refused:
            return
        metrics.OPEN_CONNECTIONS.labels(self.listener).dec()
        self._stop_head_timer()
        if self._reading is not None:
            self._reading.stop_timer()
            self._reading.give_back()
            self._reading = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._head_refused:
            return
        super().data_received(data)
        reading = self._reading
        if reading is not None and reading.timer is None:
            # The body's deadline, as the route's `read_body` gives it (once it is not whole
            # in the chunk that ended its head: the usual case costs no timer).
            timeout = reading.verb.runtime.body_timeout
            if timeout is not None:
                reading.timer = self.loop.call_later(timeout, self._body_timed_out)

    # The head is counted as the parser reads it (the request target, and each header's name
    # and value with its separators), however it is split into chunks, and whether or not the
    # chunk that ends it also carries the body.
    def _count_head(self, size: int) -> bool:
        """Add `size` bytes to the head; False (and the connection answered 431) past the
        bound."""
        if self._head_refused:
            return False
        self._head_bytes += size
        if self._head_bytes <= self.limits.max_head_bytes:
            return True
        self._refuse_head("431 Request Header Fields Too Large", "request head too large\n",
                          "too_large")
        return False

    def _refuse_head(self, status: str, text: str, why: str) -> None:
        """Answer `status` instead of the request, and close."""
        self._head_refused = True
        self._stop_head_timer()
        if why == "probation":
            metrics.CONNECTIONS_REFUSED.labels(self.listener).inc()
        else:
            metrics.REQUEST_HEADS_REFUSED.labels(why).inc()
        self.transport.write(_reply(status, text))
        # A lingering close: end our side, then drop what the client still sends for a moment.
        # Closing at once with its bytes unread would reset the connection, and the reset can
        # overtake the answer.
        if self.transport.can_write_eof():
            self.transport.write_eof()
            self.loop.call_later(LINGER_SECONDS, self.transport.close)
        else:
            self.transport.close()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._head_bytes = 0
        if self._head_timer is None:  # the next request on a keep-alive connection
            self._start_head_timer()

    def on_url(self, url: bytes) -> None:
        if self._count_head(len(url) + 16):  # method, spaces, version and CRLF, roughly
            super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._count_head(len(name) + len(value) + 4):
            super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._stop_head_timer()
        if self._probation:
            self._probation = False
            if not (self.parser.get_method() == b"POST" and self.url.split(b"?")[0] == b"/bind"):
                self._refuse_head("503 Service Unavailable", "too many open connections\n",
                                  "probation")
                return
        if not self._head_refused and not self._read_directly():
            super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        if self._reading is not None:
            self._reading.add(body)
        elif not self._head_refused:
            super().on_body(body)

    def on_message_complete(self) -> None:
        reading = self._reading
        if reading is not None:
            self._reading = None
            reading.stop_timer()
            self._answer_directly(reading, reading.verb.answer(reading.body()))
        elif not self._head_refused:
            super().on_message_complete()

    # ---- the verbs without ASGI (`api.direct`)
    def _read_directly(self) -> bool:
        """Take the request whose head just ended on the direct path, if it is a plain one."""
        verb = self._direct.get(self.url)
        if verb is None or self.expect_100_continue:
            return False
        parser = self.parser
        if parser.get_method() != b"POST" or parser.get_http_version() != "1.1" or \
                not parser.should_keep_alive() or parser.should_upgrade():
            return False
        if self.cycle is not None and not self.cycle.response_complete:
            return False  # pipelined behind a request in flight: uvicorn queues it
        size = None
        for name, value in self.headers:
            if name == b"content-length":
                if size is not None or not value.isdigit():
                    return False
                size = int(value)
            elif name == b"transfer-encoding":
                return False
        cycle = verb.takes(size) if size is not None else None
        if cycle is None:
            return False
        self.cycle = self._reading = cycle  # type: ignore[assignment]
        return True

    def _answer_directly(self, cycle: DirectCycle, pending: Awaitable[Response]) -> None:
        task = self.loop.create_task(self._reply_directly(cycle, pending))
        task.add_done_callback(self.tasks.discard)
        self.tasks.add(task)

    async def _reply_directly(self, cycle: DirectCycle, pending: Awaitable[Response]) -> None:
        try:
            try:
                response = await pending
            finally:
                cycle.give_back()
            if self.flow.write_paused and not cycle.disconnected:
                await self.flow.drain()
            data, keep_alive = encode_response(response, self.server_state.default_headers,
                                               cycle.keep_alive)
        except Exception:
            log.exception("could not answer a request")
            self.transport.close()
            return
        cycle.response_complete = True
        if cycle.disconnected or self.transport.is_closing():
            return
        self.transport.write(data)
        if not keep_alive:
            self.transport.close()
        self.on_response_complete()

    def _body_timed_out(self) -> None:
        cycle = self._reading
        if cycle is None:
            return
        cycle.timer = None
        self._reading = None
        self._head_refused = True  # whatever still arrives of it is dropped
        self._answer_directly(cycle, cycle.verb.refuse(cycle.timed_out()))

    def _start_head_timer(self) -> None:
        self._head_timer = self.loop.call_later(self.limits.header_timeout, self._head_timed_out)

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.transport.is_closing():
            return
        metrics.REQUEST_HEADS_REFUSED.labels("timeout").inc()
        self.transport.write(_reply("408 Request Timeout", "request head not received within "
                                    f"{self.limits.header_timeout:g}s\n"))
        self.transport.close()


def guarded_protocol(limits: ConnectionLimits, listener: str = "main") -> type[Any]:
    """A protocol class for `uvicorn.Config(http=...)` enforcing `limits`."""
    return type("GuardedHttpToolsProtocol", (GuardedHttpToolsProtocol,),
                {"limits": limits, "listener": listener})
