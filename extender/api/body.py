"""Reading request bodies with a size limit and a time limit, checking their encoding, and the
error replies every route shares."""

from __future__ import annotations

import asyncio
import codecs

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


_CHECK_CHUNK = 1 << 20


def check_utf8(body: bytes) -> None:
    """Refuse a body that is not valid UTF-8 (JSON text must be): nothing decoded from it, and
    nothing of it echoed in a reply, can then carry invalid UTF-8. ASCII bodies (the usual
    case) are recognised at memory speed; others are checked 1 MiB at a time."""
    if body.isascii():
        return
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(body)
    try:
        for start in range(0, len(view), _CHECK_CHUNK):
            decoder.decode(view[start:start + _CHECK_CHUNK], final=start + _CHECK_CHUNK >= len(view))
    except UnicodeDecodeError as exc:
        raise BadRequest(f"malformed JSON: invalid UTF-8 at byte {start + exc.start}: "
                         f"{exc.reason}") from None


def json_response(payload: bytes, status: int = 200) -> Response:
    return Response(payload, status_code=status, media_type="application/json")


def error_response(message: str, status: int) -> Response:
    return json_response(wire.encode(wire.ErrorReply(Error=message)), status)
