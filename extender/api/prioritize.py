"""POST /prioritize: a 0..10 score for every candidate node, in the order sent."""

from __future__ import annotations

from starlette.responses import Response

from extender import wire
from extender.api.body import error_response, json_response
from extender.api.candidates import scheduling_request
from extender.api.observe import RequestRecord
from extender.api.runtime import Runtime
from extender.engine.runner import extender_scores, run_scores

error_reply = error_response


async def handle(runtime: Runtime, body: bytes, record: RequestRecord) -> Response:
    pod, candidates = scheduling_request(runtime, body, record)
    infos = candidates.infos
    results = run_scores(runtime.profile, pod, infos, runtime.state)
    scores = dict(zip((i.node.name for i in infos), extender_scores(results, len(infos)), strict=True))
    record.details["scorers"] = [r.name for r in results]
    # Unknown or invalid nodes still get an entry (0): the scheduler expects one per node.
    reply = [wire.HostPriority(name, scores.get(name, 0)) for name in candidates.names]
    return json_response(wire.encode(reply))
