"""POST /prioritize: a 0..10 score for every candidate node, in the order sent."""

from __future__ import annotations

from starlette.responses import Response

from extender import wire
from extender.api.body import error_response, json_response
from extender.api.candidates import Candidates, scheduling_request
from extender.api.observe import RequestRecord
from extender.api.runtime import Runtime
from extender.engine.runner import extender_scores, run_scores

error_reply = error_response


async def handle(runtime: Runtime, body: bytes, record: RequestRecord) -> Response:
    pod, candidates = scheduling_request(runtime, body, record)
    infos = candidates.infos
    results = run_scores(runtime.profile, pod, infos, runtime.state)
    scores = extender_scores(results, len(infos))
    record.details["scorers"] = [r.name for r in results]
    return json_response(wire.encode(host_priorities(candidates, scores)))


def host_priorities(candidates: Candidates, scores: list[int]) -> list[wire.HostPriority]:
    """One entry per name sent, in order; `scores` are those of `candidates.infos`."""
    names = candidates.names
    if candidates.raw is None and not candidates.rejected:
        # Every name resolved, so the infos are the names' nodes in order; a repeated name is
        # the same node and scores the same. Built in C: no per-node Python code.
        return list(map(wire.HostPriority, names, scores))
    by_name = dict(zip((i.node.name for i in candidates.infos), scores, strict=True))
    # Unknown or invalid nodes still get an entry (0): the scheduler expects one per node.
    return [wire.HostPriority(name, by_name.get(name, 0)) for name in names]
