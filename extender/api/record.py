"""The verb routes' side of `serve --record`: each exchange's `in` and `out` entries.

`recorded_route` wraps a verb route (`api.verb.verb_route`) and `recorded_handler` its handler;
`verb_route` applies them only when a recorder is given, so a server that does not record
runs exactly the routes it runs without this module. The `in` entry is written on the event
loop when the handler is called, after the body was read and before the handler reads the
state (for a large request, before it is handed to the worker thread, whose state is held
still until it returns); the `out` entry when the route has its reply.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar

from starlette.requests import Request
from starlette.responses import Response

from extender.api.observe import RequestRecord
from extender.api.runtime import Runtime
from extender.state import recording
from extender.state.recorder import Recorder

Handler = Callable[[Runtime, bytes, RequestRecord], Awaitable[Response]]
Route = Callable[[Request], Awaitable[Response]]


class _Exchange:
    __slots__ = ("id", "verb", "path", "not_ready", "opened")

    def __init__(self, id: int, verb: str, path: str, not_ready: str | None) -> None:
        self.id, self.verb, self.path, self.not_ready = id, verb, path, not_ready
        self.opened = False


#: The exchange the current request's task is answering.
_current: ContextVar[_Exchange | None] = ContextVar("extender_record_exchange", default=None)


def recorded_handler(recorder: Recorder, handler: Handler) -> Handler:
    """`handler`, writing the exchange's `in` entry when called (on the loop)."""

    def handle(runtime: Runtime, body: bytes, record: RequestRecord) -> Awaitable[Response]:
        exchange = _current.get()
        if exchange is not None:
            exchange.opened = True
            t, w = recorder.now()
            data = body  # read_body's buffer is the request's own: never changed afterwards

            def make() -> recording.In:
                text, encoded = recording.body_fields(data)
                return recording.In(id=exchange.id, t=t, w=w, verb=exchange.verb,
                                    path=exchange.path, body=text, body_base64=encoded,
                                    not_ready=exchange.not_ready)

            recorder.write(make)
        return handler(runtime, body, record)

    return handle


def recorded_route(recorder: Recorder, verb: str, route: Route, needs_ready: bool) -> Route:
    """`route`, writing the exchange's `out` entry with its reply."""

    async def answer(request: Request) -> Response:
        not_ready = None
        if needs_ready:
            # The route asks again, at once (no await between): the same answer.
            runtime: Runtime = request.app.state.runtime
            ready, why = runtime.readiness()
            not_ready = None if ready else why
        exchange = _Exchange(recorder.next_id(), verb, request.scope.get("path", f"/{verb}"),
                             not_ready)
        token = _current.set(exchange)
        try:
            response = await route(request)
        finally:
            _current.reset(token)
        t, w = recorder.now()
        body, status, opened = bytes(getattr(response, "body", b"")), response.status_code, \
            exchange.opened

        def make() -> recording.Out:
            text, encoded = recording.body_fields(body)
            if opened:
                return recording.Out(id=exchange.id, t=t, w=w, status=status, body=text,
                                     body_base64=encoded)
            return recording.Out(id=exchange.id, t=t, w=w, status=status, body=text,
                                 body_base64=encoded, verb=exchange.verb, path=exchange.path,
                                 not_ready=exchange.not_ready, unread=True)

        recorder.write(make)
        return response

    answer.__name__ = getattr(route, "__name__", f"{verb}_route")
    return answer
