"""Reading request bodies with a size limit, and the error replies every route shares."""

from __future__ import annotations

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from extender import wire


class BadRequest(Exception):
    """A request the extender cannot act on; `status` is the HTTP code to answer with."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


async def read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            size = int(declared)
        except ValueError:
            raise BadRequest(f"invalid Content-Length header {declared!r}") from None
        if size > limit:
            raise BadRequest(f"request body of {size} bytes exceeds the limit of {limit} bytes", 413)
    chunks = []
    received = 0
    try:
        async for chunk in request.stream():
            received += len(chunk)
            if received > limit:
                raise BadRequest(f"request body exceeds the limit of {limit} bytes", 413)
            chunks.append(chunk)
    except ClientDisconnect:
        raise BadRequest("client disconnected before sending the whole body") from None
    if not received:
        raise BadRequest("empty request body: expected a JSON object")
    return b"".join(chunks)


def json_response(payload: bytes, status: int = 200) -> Response:
    return Response(payload, status_code=status, media_type="application/json")


def error_response(message: str, status: int) -> Response:
    return json_response(wire.encode(wire.ErrorReply(Error=message)), status)
