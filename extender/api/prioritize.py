"""POST /prioritize: a 0..10 score for every candidate node, in the order sent."""

from __future__ import annotations

from starlette.responses import Response

from extender import wire
from extender.api.body import error_response, json_response
from extender.api.candidates import Candidates
from extender.api.observe import RequestRecord
from extender.api.reading import SchedulingRequest, scheduling_request
from extender.api.rowreply import replies_for, reuse_token
from extender.api.runtime import Runtime
from extender.engine.framework import CycleState
from extender.engine.rows import row_extender_scores, score_rows
from extender.engine.runner import extender_scores, run_scores

error_reply = error_response


async def handle(runtime: Runtime, body: bytes, record: RequestRecord) -> Response:
    request = scheduling_request(runtime, body, record)
    if request.candidates.listed is not None:
        return _by_rows(runtime, request, record)
    pod, candidates = request.pod, request.candidates
    infos = candidates.infos
    results = run_scores(runtime.profile, pod, infos, runtime.state)
    scores = extender_scores(results, len(infos))
    record.details["scorers"] = [r.name for r in results]
    return json_response(wire.encode(host_priorities(candidates, scores)))


def _by_rows(runtime: Runtime, request: SchedulingRequest, record: RequestRecord) -> Response:
    """The vectorised path: every candidate is a node of the state (`engine.rows`)."""
    state, listed = runtime.state, request.candidates.listed
    assert listed is not None
    table, replies = state.table, replies_for(state.table)
    token = None
    if runtime.reply_reuse:
        scorers = [plugin for plugin, _ in runtime.profile.scorers]
        token = reuse_token(scorers, state.generation, state.node_generation)
    signature = request.signature
    if token is not None:
        entry = replies.reusable(listed, "prioritize", signature, table, token)
        if entry is not None:
            record.details["reused"] = True
            record.details["scorers"] = entry.summary
            return json_response(entry.reply)
    results = score_rows(runtime.profile, request.pod, listed.rows, table, state, CycleState())
    scores = row_extender_scores(results, len(listed.rows))
    reply = replies.prioritize_reply(table, listed, scores)
    names = [r.name for r in results]
    if token is not None:
        replies.keep(listed, "prioritize", signature, table, token, reply, names,
                    runtime.reply_reuse)
    record.details["scorers"] = names
    return json_response(reply)


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
