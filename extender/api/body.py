"""Receiving request bodies with a size limit and a time limit, and the error replies every
route shares. What a body says is `api.reading`'s."""

from __future__ import annotations

import asyncio

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from extender import wire


class BadRequest(Exception):
    """A request the extender cannot act on; `status` is the HTTP code to answer with."""

    def __init__(self, message: str, status: int = 400, close: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.close = close  # the body was not read to its end: close the connection after


def declared_length(request: Request, limit: int) -> int | None:
    """The body size the client declared (None if it did not); refuses one over `limit`."""
    declared = request.headers.get("content-length")
    if declared is None:
        return None
    if not declared.isdigit():
        raise BadRequest(f"invalid Content-Length header {declared[:40]!r}", close=True)
    size = int(declared)
    if size > limit:
        raise BadRequest(f"request body of {size} bytes exceeds the limit of {limit} bytes", 413,
                         close=True)
    return size


async def read_body(request: Request, limit: int, timeout: float | None = None) -> bytes:
    """The whole body, at most `limit` bytes, arrived within `timeout` seconds.

    With a declared length (kube-scheduler always sends one) the chunks are copied into one
    buffer of that size as they arrive: no second copy of a large body when it is complete."""
    size = declared_length(request, limit)
    buffer = bytearray(size) if size else None
    chunks = []
    received = 0
    try:
        async with asyncio.timeout(timeout):
            async for chunk in request.stream():
                end = received + len(chunk)
                if end > limit:
                    raise BadRequest(f"request body exceeds the limit of {limit} bytes", 413,
                                     close=True)
                if buffer is not None and end <= size:
                    buffer[received:end] = chunk
                else:
                    chunks.append(chunk)
                received = end
    except ClientDisconnect:
        raise BadRequest("client disconnected before sending the whole body") from None
    except TimeoutError:
        raise BadRequest(f"request body not received within {timeout:g}s "
                         f"({received} bytes arrived)", 408, close=True) from None
    if not received:
        raise BadRequest("empty request body: expected a JSON object")
    if buffer is not None and received == size and not chunks:
        return buffer  # type: ignore[return-value]  # bytes-like; decoders read it in place
    return b"".join(chunks) if buffer is None else bytes(buffer[:received]) + b"".join(chunks)


def json_response(payload: bytes, status: int = 200) -> Response:
    return Response(payload, status_code=status, media_type="application/json")


def error_response(message: str, status: int) -> Response:
    return json_response(wire.encode(wire.ErrorReply(Error=message)), status)
