"""POST /bind: bind the pod through the binder (the API server, or the offline state).

The binder reports each outcome (bound, already_bound, not_found, ...) to the metrics itself.
"""

from __future__ import annotations

from starlette.responses import Response

from extender import wire
from extender.api.body import BadRequest, json_response
from extender.api.observe import RequestRecord
from extender.api.reading import decode
from extender.api.runtime import Runtime
from extender.state.binder import BindError
from extender.state.events import events_of


def error_reply(message: str, status: int) -> Response:
    code = 200 if status == 503 else status
    return json_response(wire.encode(wire.ExtenderBindingResult(Error=message)), code)


async def handle(runtime: Runtime, body: bytes, record: RequestRecord) -> Response:
    args = decode(body, wire.ExtenderBindingArgs)
    missing = [key for key in ("PodName", "PodNamespace", "PodUID", "Node") if not getattr(args, key)]
    if missing:
        raise BadRequest(f"invalid request: {', '.join(missing)} must be set")
    record.pod = f"{args.PodNamespace}/{args.PodName}"
    record.details["node"] = args.Node
    try:
        await runtime.binder.bind(args.PodNamespace, args.PodName, args.PodUID, args.Node)
    except BindError as exc:
        record.outcome = "bind_failed"
        record.details["error"] = str(exc)
        record.details["bind_outcome"] = exc.outcome
        events_of(runtime).bind_failed(args.PodNamespace, args.PodName, args.PodUID, args.Node,
                                       str(exc))
        return json_response(wire.encode(wire.ExtenderBindingResult(Error=str(exc))))
    return json_response(wire.encode(wire.ExtenderBindingResult()))
