"""The shape every verb route shares: read, decode, answer, and never leak a trace."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from extender import wire
from extender.api.body import BadRequest, check_utf8, declared_length, read_body
from extender.api.bounded import DEFAULT_CACHE_BYTES, BoundedCache
from extender.api.observe import RequestRecord
from extender.api.offload import Busy
from extender.api.runtime import Runtime
from extender.engine.framework import EngineError
from extender.model import k8s
from extender.model.pod import PodView
from extender.model.quantity import QuantityError
from extender.state.recorder import Recorder

log = logging.getLogger(__name__)

Handler = Callable[[Runtime, bytes, RequestRecord], Awaitable[Response]]
ErrorReply = Callable[[str, int], Response]


#: Recent filter/prioritize requests' pods, by their bytes: a pod's filter is followed by its
#: prioritize with the same bytes, and a retried pod comes back unchanged. Views are never
#: changed in place. Bounded in bytes too (a sixteenth of `--cache-bytes`): a pod too large
#: for it is decoded for each request instead.
RECENT_PODS = 256
_recent_pods: BoundedCache[bytes, tuple[PodView, bytes]] = BoundedCache(
    RECENT_PODS, DEFAULT_CACHE_BYTES // 16)
#: Recent pods' views by `pod_signature`: another replica of a workload (the same spec, its own
#: name and uid) takes a recent replica's view, rebound to its identity, instead of building
#: one (a twentieth of the cost). Bounded like `_recent_pods`.
_views_by_spec: BoundedCache[bytes, PodView] = BoundedCache(RECENT_PODS, DEFAULT_CACHE_BYTES // 16)


def pod_view(pod: k8s.Pod | None) -> PodView:
    """The pod's view; a pod the engine cannot read is a 400."""
    if pod is None:
        raise BadRequest("invalid request: Pod is required")
    try:
        return PodView.from_k8s(pod)
    except QuantityError as exc:
        meta = pod.metadata
        raise BadRequest(f"invalid Pod {meta.namespace}/{meta.name}: {exc}") from None


def pod_from_raw(raw: msgspec.Raw, body: bytes) -> tuple[PodView, bytes]:
    """The view and `pod_signature` of a filter/prioritize request's pod from its bytes (`raw`,
    within `body`): the same bytes as a recent request's reuse its view and signature."""
    key = bytes(raw)
    found = _recent_pods.get(key)
    if found is not None:
        return found
    if key in (b"", b"null"):
        raise BadRequest("invalid request: Pod is required")
    try:
        pod = wire.decode_pod(key)
    except msgspec.DecodeError as exc:
        # Worded as a decode of the whole body words it (the path starts at `$.Pod`).
        decode(body, wire.SchedulingArgsDecoded)
        raise BadRequest(wire.describe_decode_error(exc)) from None
    signature = pod_signature(pod)
    same_spec = _views_by_spec.get(signature)
    if same_spec is not None:
        view = same_spec.rebound(pod.metadata)
    else:
        view = pod_view(pod)
        _views_by_spec.put(signature, view, len(key) + len(signature))  # as `_recent_pods` counts it
    found = view, signature
    _recent_pods.put(key, found, len(key) + len(signature))
    return found


def pod_signature(pod: k8s.Pod) -> bytes:
    """The pod as the plugins read it (the decoded struct holds nothing else), without what
    names one object (name, uid, version, creation time): equal for a workload's pods. Its
    conditions count only when true (`PodView` reads no other): kube-scheduler sends a pod it
    retries with a `PodScheduled: False` condition stamped with its own time."""
    status = pod.status
    if status.conditions and any(c.status != "True" for c in status.conditions):
        status = msgspec.structs.replace(
            status, conditions=[c for c in status.conditions if c.status == "True"] or None)
    return msgspec.json.encode(msgspec.structs.replace(pod, metadata=msgspec.structs.replace(
        pod.metadata, name="", uid="", resource_version="", creation_timestamp=None),
        status=status))


def decode(body: bytes, kind: type) -> msgspec.Struct:
    """The body as `kind`; any failure to decode it is a 400 with a readable message."""
    check_utf8(body)
    try:
        return wire.decode(body, kind)
    except msgspec.DecodeError as exc:
        raise BadRequest(wire.describe_decode_error(exc)) from None
    except RecursionError:
        raise BadRequest("malformed JSON: nested too deeply") from None
    except (ValueError, OverflowError, MemoryError) as exc:  # UnicodeDecodeError is a ValueError
        raise BadRequest(f"malformed JSON: {type(exc).__name__}: {exc}"[:500]) from None


def limit_candidates(count: int, runtime: Runtime) -> None:
    """Refuse a request with more candidate nodes than `runtime.max_candidates`."""
    if count > runtime.max_candidates:
        raise BadRequest(f"{count} candidate nodes exceed the limit of {runtime.max_candidates} "
                         "per request (serve --max-candidates)", 413)


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
            return await handler(runtime, await read_body(request, runtime.max_body,
                                                          runtime.body_timeout), record)
    async with runtime.offload.slot():
        body = await read_body(request, runtime.max_body, runtime.body_timeout)
        record.details["offloaded"] = True
        return await runtime.offload.run(runtime.gate, handler(runtime, body, record))


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
            response = await _answer(request, runtime, handler, record, offload)
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

    route.__name__ = f"{verb}_route"
    return route
