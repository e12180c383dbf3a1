"""POST /prioritize: a 0..10 score for every candidate node, in the order sent."""

from __future__ import annotations

import logging

from starlette.responses import Response

from extender import wire
from extender.api import metrics
from extender.api.body import error_response, json_response
from extender.api.candidates import Candidates, unknown_names
from extender.api.catchup import catch_up_first
from extender.api.observe import RequestRecord
from extender.api.reading import SchedulingRequest, scheduling_request
from extender.api.rowreply import NameList, ReuseToken, replies_for, reuse_token
from extender.api.runtime import Runtime
from extender.engine.framework import CycleState
from extender.engine.rows import row_extender_scores, score_rows
from extender.engine.runner import extender_scores, run_scores
from extender.model.pod import PodView

log = logging.getLogger(__name__)

error_reply = error_response


async def handle(runtime: Runtime, body: bytes, record: RequestRecord) -> Response:
    request = scheduling_request(runtime, body, record)
    if request.candidates.listed is not None:
        return _by_rows(runtime, request, record)
    pod, candidates = request.pod, request.candidates
    if candidates.rejected and runtime.live is not None:
        # Nodes kube-scheduler has seen and this extender's watch not yet (just added).
        catch_up_first(runtime, record, unknown_names(candidates))
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
    replies.followed = listed.from_filter
    token = _reuse_token(runtime)
    signature = request.signature
    if token is not None:
        entry = replies.reusable(listed, "prioritize", signature, table, token)
        if entry is not None:
            record.details["reused"] = True
            if entry.anticipated:
                record.details["anticipated"] = True
                metrics.labelled(metrics.ANTICIPATED, "used").inc()
            record.details["scorers"] = entry.summary
            return json_response(entry.reply)
    reply, names = _scored(runtime, request.pod, listed)
    if token is not None:
        replies.keep(listed, "prioritize", signature, table, token, reply, names,
                    runtime.reply_reuse)
    record.details["scorers"] = names
    return json_response(reply)


def _reuse_token(runtime: Runtime) -> ReuseToken | None:
    if not runtime.reply_reuse:
        return None
    state = runtime.state
    scorers = [plugin for plugin, _ in runtime.profile.scorers]
    return reuse_token(scorers, state.generation, state.node_generation)


def _scored(runtime: Runtime, pod: PodView, listed: NameList) -> tuple[bytes, list[str]]:
    """The reply scoring `listed` for `pod`, with the scorers that scored."""
    state = runtime.state
    table = state.table
    results = score_rows(runtime.profile, pod, listed.rows, table, state, CycleState())
    scores = row_extender_scores(results, len(listed.rows))
    return replies_for(table).prioritize_reply(table, listed, scores), [r.name for r in results]


def anticipate_prioritize(runtime: Runtime, pod: PodView, signature: bytes,
                          passing: NameList) -> None:
    """After a filter's reply is written (`api.filter`), prepare its pod's prioritize reply
    over the nodes that passed (`passing`), while kube-scheduler's prioritize names a filter's
    passing nodes (it follows each filter with a prioritize of what passed, and this extender
    filters last). kube-scheduler runs its own PreScore and Score plugins in between, so the
    reply is ready when the prioritize comes; it is served by reuse, and only while nothing it
    read has changed. With one node passing, kube-scheduler prioritizes nothing."""
    if len(passing.rows) >= 2 and runtime.anticipate and replies_for(runtime.state.table).followed:
        _anticipate(runtime, pod, signature, passing)


def _anticipate(runtime: Runtime, pod: PodView, signature: bytes, listed: NameList) -> None:
    token = _reuse_token(runtime)
    if token is None:
        return
    table = runtime.state.table
    replies = replies_for(table)
    if replies.reusable(listed, "prioritize", signature, table, token) is not None:
        return
    try:
        reply, names = _scored(runtime, pod, listed)
    except Exception:  # the prioritize itself will meet it, and answer it as it should
        log.debug("could not anticipate the prioritize of %s", pod.key, exc_info=True)
        metrics.labelled(metrics.ANTICIPATED, "failed").inc()
        return
    replies.keep(listed, "prioritize", signature, table, token, reply, names,
                 runtime.reply_reuse, anticipated=True)
    metrics.labelled(metrics.ANTICIPATED, "prepared").inc()


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
