"""The shape every verb route shares: read, decode, answer, and never leak a trace."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from extender import wire
from extender.api.body import BadRequest, read_body
from extender.api.observe import RequestRecord
from extender.api.runtime import Runtime
from extender.engine.framework import EngineError
from extender.model import k8s
from extender.model.pod import PodView
from extender.model.quantity import QuantityError

log = logging.getLogger(__name__)

Handler = Callable[[Runtime, bytes, RequestRecord], Awaitable[Response]]
ErrorReply = Callable[[str, int], Response]


def pod_view(pod: k8s.Pod | None) -> PodView:
    if pod is None:
        raise BadRequest("invalid request: Pod is required")
    try:
        return PodView.from_k8s(pod)
    except QuantityError as exc:
        raise BadRequest(f"invalid Pod {pod.metadata.namespace}/{pod.metadata.name}: {exc}") from None


def decode(body: bytes, kind: type) -> msgspec.Struct:
    try:
        return wire.decode(body, kind)
    except msgspec.DecodeError as exc:
        raise BadRequest(wire.describe_decode_error(exc)) from None


def verb_route(verb: str, handler: Handler, error_reply: ErrorReply,
               needs_ready: bool = True) -> Callable[[Request], Awaitable[Response]]:
    """Wrap a handler with body limits, readiness, error replies, logging and metrics."""

    async def route(request: Request) -> Response:
        runtime: Runtime = request.app.state.runtime
        record = RequestRecord(verb)
        response: Response | None = None
        try:
            if needs_ready:
                ready, why = runtime.readiness()
                if not ready:
                    record.outcome = "not_ready"
                    response = error_reply(f"extender is not ready: {why}", 503)
                    return response
            body = await read_body(request, runtime.max_body)
            response = await handler(runtime, body, record)
            return response
        except BadRequest as exc:
            record.outcome = "bad_request"
            record.details["error"] = exc.message
            response = error_reply(exc.message, exc.status)
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

    route.__name__ = f"{verb}_route"
    return route
