"""The shape every verb route shares: read the bytes, answer, and never leak a trace.

What a body means is its handler's to read (`api.reading` for filter and prioritize)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response

from extender.api.body import BadRequest, declared_length, read_body
from extender.api.catchup import Behind, catch_up_behind
from extender.api.direct import DirectVerb
from extender.api.observe import RequestRecord
from extender.api.offload import Busy
from extender.api.runtime import Runtime
from extender.engine.framework import EngineError
from extender.state.recorder import Recorder

log = logging.getLogger(__name__)

Handler = Callable[[Runtime, bytes, RequestRecord], Awaitable[Response]]
ErrorReply = Callable[[str, int], Response]


async def _answer(request: Request, runtime: Runtime, handler: Handler, record: RequestRecord,
                  offload: bool) -> Response:
    """Read the body and run the handler: on the loop for a small body (a medium one holding
    one of a few medium slots), in the worker thread (holding the one large-request slot, with
    the state held still) for a large one."""
    size = declared_length(request, runtime.max_body)
    if not (offload and runtime.offload.is_large(size)):
        held = runtime.offload.medium_slot() if runtime.offload.is_medium(size) \
            else contextlib.nullcontext()
        async with held:
            body = await read_body(request, runtime.max_body, runtime.body_timeout)
            return await answer_caught_up(handler, runtime, body, record)
    async with runtime.offload.slot():
        body = await read_body(request, runtime.max_body, runtime.body_timeout)
        record.details["offloaded"] = True

        def offloaded(runtime: Runtime, body: bytes, record: RequestRecord) -> Awaitable[Response]:
            return runtime.offload.run(runtime.gate, handler(runtime, body, record))

        return await answer_caught_up(offloaded, runtime, body, record)


def verb_route(verb: str, handler: Handler, error_reply: ErrorReply,
               needs_ready: bool = True, offload: bool = True,
               recorder: Recorder | None = None) -> Callable[[Request], Awaitable[Response]]:
    """Wrap a handler with body limits, readiness, error replies, logging and metrics.

    With `offload`, a large body is decoded and worked on off the event loop (`api.offload`);
    the handler must then only mutate the state through `runtime.offload.call_on_loop`.
    With a `recorder` (`serve --record`), every exchange is recorded (`api.record`); without
    one the route is exactly the plain route."""
    if recorder is not None:
        from extender.api.record import recorded_handler, recorded_route

        plain = verb_route(verb, recorded_handler(recorder, handler), error_reply,
                           needs_ready=needs_ready, offload=offload)
        return recorded_route(recorder, verb, plain, needs_ready)

    async def route(request: Request) -> Response:
        runtime: Runtime = request.app.state.runtime

        def work(record: RequestRecord) -> Awaitable[Response]:
            return _answer(request, runtime, handler, record, offload)

        return await guarded(verb, runtime, work, error_reply, needs_ready)

    route.__name__ = f"{verb}_route"
    return route


def direct_verb(verb: str, handler: Handler, error_reply: ErrorReply, runtime: Runtime,
                needs_ready: bool = True) -> DirectVerb:
    """The same answers as `verb_route`'s, for a small body the protocol has read
    (`api.direct`)."""

    def answer(body: bytes) -> Awaitable[Response]:
        def work(record: RequestRecord) -> Awaitable[Response]:
            return answer_caught_up(handler, runtime, body, record)

        return guarded(verb, runtime, work, error_reply, needs_ready)

    def refuse(problem: BadRequest) -> Awaitable[Response]:
        async def work(record: RequestRecord) -> Response:
            raise problem

        return guarded(verb, runtime, work, error_reply, needs_ready=False)

    return DirectVerb(answer, refuse, runtime)


async def answer_caught_up(handler: Handler, runtime: Runtime, body: bytes,
                           record: RequestRecord) -> Response:
    """The handler's response; if it finds nodes behind the API server instead
    (`Behind`), once more after catching them up."""
    try:
        return await handler(runtime, body, record)
    except Behind as behind:
        record.caught_up = behind.what
        record.details["caught_up"] = list(behind.what)
        await catch_up_behind(runtime, behind)
        return await handler(runtime, body, record)


async def guarded(verb: str, runtime: Runtime, work: Callable[[RequestRecord], Awaitable[Response]],
                  error_reply: ErrorReply, needs_ready: bool = True) -> Response:
    """`work`'s response, or the verb's error reply for a replica not leading, a server not
    ready, bad input or a failure; every request logged and counted once."""
    record = RequestRecord(verb)
    response: Response | None = None
    try:
        if runtime.not_leading is not None and (why := runtime.not_leading()) is not None:
            # Holds, reservations and assumptions live in the leader alone: another
            # replica answers nothing, binds included (kube-scheduler retries).
            record.outcome = "not_ready"
            response = error_reply(f"extender is not ready: {why}", 503)
            return response
        if needs_ready:
            ready, why = runtime.readiness()
            if not ready:
                record.outcome = "not_ready"
                response = error_reply(f"extender is not ready: {why}", 503)
                return response
        response = await work(record)
        return response
    except BadRequest as exc:
        record.outcome = "bad_request"
        record.details["error"] = exc.message
        response = error_reply(exc.message, exc.status)
        if exc.close:
            response.headers["Connection"] = "close"
        return response
    except Busy as exc:
        record.outcome = "busy"
        response = error_reply(f"extender is {exc}", 503)
        response.headers["Retry-After"] = "1"
        return response
    except EngineError as exc:
        record.outcome = "error"
        record.details["error"] = str(exc)
        log.exception("%s failed", verb)
        response = error_reply(str(exc), 500)
        return response
    except Exception as exc:
        record.outcome = "error"
        log.exception("unexpected failure in %s", verb)
        response = error_reply(f"internal error in {verb}: {type(exc).__name__}: {exc}", 500)
        return response
    finally:
        record.finish(response.status_code if response is not None else 500)
