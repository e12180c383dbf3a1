"""`LeanPool`: keep-alive HTTP/1.1 connections to one API server for its short calls (a bind, a
pod read back, a list page, a Lease), on the event loop's own transports, responses parsed by
httptools.

httpx costs about 0.7 ms of CPU a call on this project's machine (its client and auth flow,
httpcore's pool, anyio's streams and a TLS object driven from Python); the same call here
costs about 0.05 ms, and binding through the extender makes one such call a pod. `KubeClient`
uses this pool for its calls and keeps httpx for watches and wherever a proxy applies.

A connection is either idle in the pool or owned by exactly one call; a call that ends in any
other way than a complete response the server lets us keep (a timeout, a cancellation, a
dropped or garbled answer) closes its connection, so nothing is ever left half-used
(the httpcore leak `pool.reclaim_orphans` undoes cannot happen here).
"""

from __future__ import annotations

import asyncio
import ssl
import time
from dataclasses import dataclass

import httptools

#: Idle connections kept, and how long one stays (httpx's defaults, which the client had).
MAX_IDLE = 16
KEEPALIVE_EXPIRY = 5.0


@dataclass(frozen=True, slots=True)
class Reply:
    """A complete response: its status and its body."""

    status_code: int
    content: bytes


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
        if self.waiter is None:  # bytes nobody asked for: this connection is not to be trusted
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
