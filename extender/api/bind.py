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
from extender.engine.plugins.node_resource_topology import discards_reserved_nodes
from extender.state.binder import BindError, bind_ended, reserve
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
    # Upstream's Reserve, Permit, bind and PostBind (or Unreserve) all happen in this verb.
    reserve(runtime.state, args.PodUID, args.Node,
            discarding=discards_reserved_nodes(runtime.profile))
    failed = False
    try:
        await runtime.binder.bind(args.PodNamespace, args.PodName, args.PodUID, args.Node)
    except BindError as exc:
        failed = True
        record.outcome = "bind_failed"
        record.details["error"] = str(exc)
        record.details["bind_outcome"] = exc.outcome
        events_of(runtime).bind_failed(args.PodNamespace, args.PodName, args.PodUID, args.Node,
                                       str(exc))
        return json_response(wire.encode(wire.ExtenderBindingResult(Error=str(exc))))
    finally:
        # Cancelled (the caller gone), the bind may still have happened: its reservation
        # stays until a resync, as an overreserve cache errs.
        bind_ended(runtime.state, args.PodNamespace, args.PodName, args.PodUID, args.Node,
                   unreserve=failed)
    return json_response(wire.encode(wire.ExtenderBindingResult()))
