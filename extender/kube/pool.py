"""Care of httpx's connection pool: taking back the connections httpcore leaves behind."""

from __future__ import annotations

import asyncio

import httpx


def reclaim_orphans(http: httpx.AsyncClient) -> int:
    """Take out of `http`'s connection pools the connections no request will ever use (closing
    them), and say how many.

    httpcore 1.0.9 makes a connection for a request that waits for one; if that request fails
    before using it (its pool timeout, as the connection is made for it under a burst; or a
    cancellation, which `KubeClient` keeps from its calls), the request leaves the pool and
    the connection stays, new for good: neither idle, closed nor expired, so neither reused
    nor cleaned up, holding one of the pool's slots (encode/httpcore#1093, open). Once every
    slot is held so, each later call waits out its pool timeout: under a burst the extender
    stopped binding until restarted (`bench.e2e`'s stall). Every connection in use is held by
    a request of the pool (until its response is closed, when it turns idle or closed), so
    one that no request holds and that is neither idle, closed nor expired is such a
    leftover. The pool's internals are read defensively: where they differ, nothing is taken
    (and the client's tests fail)."""
    found = 0
    for transport in (http._transport, *http._mounts.values()):
        pool = getattr(transport, "_pool", None)
        connections = getattr(pool, "_connections", None)
        requests = getattr(pool, "_requests", None)
        if not isinstance(connections, list) or not isinstance(requests, list):
            continue
        held = {id(request.connection) for request in requests
                if getattr(request, "connection", None) is not None}
        for connection in list(connections):
            if id(connection) in held or connection.is_idle() or connection.is_closed() \
                    or connection.has_expired():
                continue
            connections.remove(connection)
            found += 1
            closing = asyncio.ensure_future(connection.aclose())
            _CLOSING.add(closing)
            closing.add_done_callback(_closed)
    return found


#: The closes `reclaim_orphans` started, held until done (the loop keeps only weak references).
_CLOSING: set[asyncio.Future[None]] = set()


def _closed(close: asyncio.Future[None]) -> None:
    _CLOSING.discard(close)
    if not close.cancelled():
        close.exception()  # a socket that fails to close is closed enough
