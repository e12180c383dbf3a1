"""`LeanPool`: keep-alive HTTP/1.1 connections to one API server for its short calls (a bind, a
pod read back, a list page, a Lease) and its watches (`Stream`), on the event loop's own
transports, responses parsed by httptools.

httpx costs about 0.7 ms of CPU a call on this project's machine (its client and auth flow,
httpcore's pool, anyio's streams and a TLS object driven from Python); the same call here
costs about 0.05 ms, and binding through the extender makes one such call a pod. A watch
event read through httpx costs about 85 µs (each event is a chunk of its own), and the
extender reads two or more for every pod. `KubeClient` keeps httpx only where a proxy applies.

A connection is either idle in the pool or owned by exactly one call; a call that ends in any
other way than a complete response the server lets us keep (a timeout, a cancellation, a
dropped or garbled answer) closes its connection, so nothing is ever left half-used
(the httpcore leak `pool.reclaim_orphans` undoes cannot happen here).
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import dataclass
from typing import NamedTuple
from urllib.parse import urlencode, urlsplit

import httptools

#: Idle connections kept, and how long one stays (httpx's defaults, which the client had).
MAX_IDLE = 16
KEEPALIVE_EXPIRY = 5.0
#: A stream's chunks held unread before the connection stops reading (TCP then holds the rest).
STREAM_BUFFER = 64


@dataclass(frozen=True, slots=True)
class Reply:
    """A complete response: its status and its body."""

    status_code: int
    content: bytes


class Target(NamedTuple):
    """Where a pool for one API server connects, and how its requests name it."""

    host: str
    port: int
    #: The server URL's path: every request's path goes after it.
    prefix: str
    host_header: str

    def head(self, method: str, path: str, params: Mapping[str, str] | None, user_agent: str,
             body: bytes | None = None, content_type: str = "application/json") -> str:
        """`request_head` for `path` (with its query, `params`) on this server."""
        target = self.prefix + path + ("?" + urlencode(params) if params else "")
        return request_head(method, target, self.host_header, user_agent, body, content_type)


def lean_target(server: str) -> Target:
    """The `Target` of the API server at URL `server`."""
    url = urlsplit(server)
    default = 443 if url.scheme == "https" else 80
    port = url.port or default
    host = url.hostname or ""
    shown = f"[{host}]" if ":" in host else host
    return Target(host, port, url.path.rstrip("/"),
                  shown if port == default else f"{shown}:{port}")


def request_head(method: str, target: str, host_header: str, user_agent: str,
                 body: bytes | None = None, content_type: str = "application/json") -> str:
    """A request's head, without its Authorization and the blank line that ends it."""
    head = (f"{method} {target} HTTP/1.1\r\nHost: {host_header}\r\n"
            f"User-Agent: {user_agent}\r\nAccept: application/json\r\n")
    if body is not None:
        head += f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
    return head


async def lines(chunks: AsyncIterator[bytes]) -> AsyncGenerator[bytes, None]:
    """The non-blank lines of a streamed body (a watch: one JSON event a line), whatever
    its chunks' boundaries."""
    buf = bytearray()
    async for chunk in chunks:
        buf += chunk
        start = 0
        while (end := buf.find(b"\n", start)) >= 0:
            line = bytes(buf[start:end])
            start = end + 1
            if line.strip():
                yield line
        del buf[:start]
    if bytes(buf).strip():
        yield bytes(buf)


def authorised(head: str, token: str | None) -> bytes:
    """A request head (without its blank line) with the bearer token, ready to send."""
    return (head + (f"Authorization: Bearer {token}\r\n\r\n" if token else "\r\n")
            ).encode("latin-1")


class Dropped(ConnectionError):
    """The connection ended (or its bytes were no HTTP response) before the response did."""


class _Connection(asyncio.Protocol):
    """One keep-alive connection: one exchange at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.parts: list[bytes] = []
        self.waiter: asyncio.Future[Reply] | None = None
        self.closed = False
        self.keep_alive = False
        self.idle_since = 0.0

    # ---- asyncio.Protocol ----------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self._unasked():  # bytes nobody asked for: this connection is not to be trusted
            self.close()
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(Dropped(f"unreadable response: {exc}"))
            self.close()

    def eof_received(self) -> bool:
        self._fail(Dropped("server closed the connection"))
        self.closed = True
        return False  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._fail(exc if isinstance(exc, OSError) else Dropped("connection closed"))

    def _unasked(self) -> bool:
        return self.waiter is None

    # ---- httptools callbacks -------------------------------------------------------------
    def on_body(self, body: bytes) -> None:
        self.parts.append(body)

    def on_message_complete(self) -> None:
        waiter, self.waiter = self.waiter, None
        content = b"".join(self.parts)
        self.parts = []
        self.keep_alive = self.parser.should_keep_alive()
        if waiter is not None and not waiter.done():
            waiter.set_result(Reply(self.parser.get_status_code(), content))

    # ---- use -----------------------------------------------------------------------------
    async def exchange(self, request: bytes) -> Reply:
        assert self.transport is not None and self.waiter is None
        if self.closed or self.transport.is_closing():
            raise Dropped("connection closed")
        self.keep_alive = False
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        return await self.waiter

    def _fail(self, exc: BaseException) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class _StreamConnection(_Connection):
    """A connection whose response body is read as it comes (a watch): its status once the
    head is in, then its chunks; the connection is closed when the stream is."""

    def __init__(self) -> None:
        super().__init__()
        self.chunks: deque[bytes] = deque()
        self.ended = False
        self.error: BaseException | None = None
        self.wakeup: asyncio.Future[None] | None = None
        self.paused = False

    def on_headers_complete(self) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(Reply(self.parser.get_status_code(), b""))

    def on_body(self, body: bytes) -> None:
        self.chunks.append(body)
        if len(self.chunks) >= STREAM_BUFFER and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()
        self._wake()

    def on_message_complete(self) -> None:
        self.ended = True
        self._wake()

    def _unasked(self) -> bool:
        return False  # the body keeps coming after the head has answered the waiter

    def _fail(self, exc: BaseException) -> None:
        super()._fail(exc)
        if not self.ended and self.error is None:
            self.error = exc
        self._wake()

    def _wake(self) -> None:
        wakeup, self.wakeup = self.wakeup, None
        if wakeup is not None and not wakeup.done():
            wakeup.set_result(None)

    async def next_chunk(self) -> bytes | None:
        """The next piece of the body; None at its end; raises if the connection failed
        first."""
        while not self.chunks:
            if self.ended:
                return None
            if self.error is not None:
                raise self.error
            self.wakeup = asyncio.get_running_loop().create_future()
            await self.wakeup
        chunk = self.chunks.popleft()
        if self.paused and len(self.chunks) <= STREAM_BUFFER // 4 and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()
        return chunk


class Stream:
    """A response read as it comes: `status`, then `chunks(read_timeout)`; `close()` (always)
    ends it and closes its connection."""

    def __init__(self, connection: _StreamConnection, status: int, pool: LeanPool) -> None:
        self._connection = connection
        self._pool = pool
        self.status = status

    async def chunks(self, read_timeout: float) -> AsyncGenerator[bytes, None]:
        """The body's pieces; `TimeoutError` when none comes for `read_timeout` seconds."""
        while True:
            async with asyncio.timeout(read_timeout):
                chunk = await self._connection.next_chunk()
            if chunk is None:
                return
            yield chunk

    async def read(self, timeout: float) -> bytes:
        """The whole (short) body: an error's Status."""
        parts = []
        async with asyncio.timeout(timeout):
            while (chunk := await self._connection.next_chunk()) is not None:
                parts.append(chunk)
        return b"".join(parts)

    def close(self) -> None:
        self._pool._discard(self._connection)


class LeanPool:
    """Up to `max_connections` calls at once to `host:port` (TLS with `ssl_context`, unless
    None); a call waits for a free slot within its own timeout."""

    def __init__(self, host: str, port: int, ssl_context: ssl.SSLContext | None,
                 server_hostname: str | None = None, *, max_connections: int = 64) -> None:
        self.host = host
        self.port = port
        self.ssl_context = ssl_context
        self.server_hostname = (server_hostname or host) if ssl_context is not None else None
        self._slots = asyncio.Semaphore(max_connections)
        self._idle: list[_Connection] = []  # most recently used last
        self._open: set[_Connection] = set()
        self._closed = False

    async def request(self, data: bytes, timeout: float) -> Reply:
        """Send `data` (a whole HTTP/1.1 request) and read its response; `TimeoutError` when
        the slot, the connection and the answer together take over `timeout` seconds, OSError
        (`Dropped` among them) when the connection fails."""
        if self._closed:
            raise Dropped("the client is closed")
        async with asyncio.timeout(timeout):
            async with self._slots:
                connection = await self._connection(timeout)
                try:
                    reply = await connection.exchange(data)
                except BaseException:
                    self._discard(connection)
                    raise
                self._release(connection)
                return reply

    async def stream(self, data: bytes, timeout: float) -> Stream:
        """Send `data` on a connection of its own and return once the response's head is in
        (within `timeout`); the caller reads the body and closes the `Stream`. Streams (the
        few watches) do not take the short calls' slots."""
        if self._closed:
            raise Dropped("the client is closed")
        loop = asyncio.get_running_loop()
        connection: _StreamConnection | None = None
        try:
            async with asyncio.timeout(timeout):
                _, connection = await loop.create_connection(
                    _StreamConnection, self.host, self.port, ssl=self.ssl_context,
                    server_hostname=self.server_hostname,
                    ssl_handshake_timeout=timeout if self.ssl_context is not None else None)
                self._open.add(connection)
                if self._closed:
                    raise Dropped("the client is closed")
                head = await connection.exchange(data)
        except BaseException:
            if connection is not None:
                self._discard(connection)
            raise
        return Stream(connection, head.status_code, self)

    async def _connection(self, timeout: float) -> _Connection:
        now = time.monotonic()
        while self._idle:
            connection = self._idle.pop()
            if not connection.closed and now - connection.idle_since < KEEPALIVE_EXPIRY:
                return connection
            self._discard(connection)
        loop = asyncio.get_running_loop()
        _, connection = await loop.create_connection(
            _Connection, self.host, self.port, ssl=self.ssl_context,
            server_hostname=self.server_hostname,
            ssl_handshake_timeout=timeout if self.ssl_context is not None else None)
        if self._closed:
            connection.close()
            raise Dropped("the client is closed")
        self._open.add(connection)
        return connection

    def _release(self, connection: _Connection) -> None:
        if connection.keep_alive and not connection.closed and not self._closed \
                and len(self._idle) < MAX_IDLE:
            connection.idle_since = time.monotonic()
            self._idle.append(connection)
        else:
            self._discard(connection)

    def _discard(self, connection: _Connection) -> None:
        connection.close()
        self._open.discard(connection)

    @property
    def open_connections(self) -> int:
        """Connections open now, idle or in use."""
        return len(self._open)

    @property
    def idle_connections(self) -> int:
        return len(self._idle)

    def close_idle(self) -> None:
        """Close the idle connections (a new client certificate: later calls connect anew)."""
        idle, self._idle = self._idle, []
        for connection in idle:
            self._discard(connection)

    def close(self) -> None:
        """Close every connection; calls still running fail with `Dropped`."""
        self._closed = True
        self.close_idle()
        for connection in list(self._open):
            self._discard(connection)
