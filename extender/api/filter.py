"""POST /filter: which candidate nodes can run the pod, and why the others cannot."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator

import numpy as np
from starlette.responses import Response

from extender import wire
from extender.api import metrics
from extender.api.body import error_response, json_response
from extender.api.candidates import unknown_names
from extender.api.catchup import (
    MAX_NODES,
    catch_up_first,
    nominated_node,
    passed_none,
    pods_first,
    preempted_nodes,
)
from extender.api.observe import RequestRecord
from extender.api.prioritize import anticipate_prioritize
from extender.api.reading import SchedulingRequest, scheduling_request
from extender.api.rowreply import NameList, ReuseToken, replies_for, reuse_token
from extender.api.runtime import Runtime
from extender.engine.framework import Code, Status
from extender.engine.plugins.capacity_scheduling.store import QuotaStore
from extender.engine.rows import RowVerdicts, filter_rows
from extender.engine.runner import prepare_filters, run_filters
from extender.state.events import events_of

Tally = Counter[tuple[str, Code]]


def error_reply(message: str, status: int) -> Response:
    # The Error field is what kube-scheduler surfaces, so bad input and not-ready get it too;
    # readiness failures answer 200 so the scheduler shows our message, not a bare status code.
    code = 200 if status == 503 else status
    return json_response(wire.encode(wire.ExtenderFilterResult(Error=message)), code)


def split_failures(statuses: dict[str, Status]) -> tuple[dict[str, str], dict[str, str]]:
    failed: dict[str, str] = {}
    unresolvable: dict[str, str] = {}
    for name, status in statuses.items():
        target = failed if status.code == Code.UNSCHEDULABLE else unresolvable
        target[name] = status.message
    return failed, unresolvable


async def handle(runtime: Runtime, body: bytes, record: RequestRecord) -> Response:
    request = scheduling_request(runtime, body, record)
    if runtime.live is not None:
        # Back on its nominated node: kube-scheduler may have seen the victims go, and this
        # extender's watch not yet. The nomination may not have reached the pod sent yet:
        # then the nodes the preempt verb kept for it tell.
        pod = request.pod
        waits = nominated_node(runtime, pod) if pod.nominated_node_name else []
        waits += preempted_nodes(runtime, pod, _offered(runtime, request))
        catch_up_first(runtime, record, dict.fromkeys(waits))
    if request.candidates.listed is not None:
        return _by_rows(runtime, request, record)
    pod, candidates = request.pod, request.candidates
    if candidates.rejected and runtime.live is not None:
        # Nodes kube-scheduler has seen and this extender's watch not yet (just added).
        catch_up_first(runtime, record, unknown_names(candidates))
    result = run_filters(runtime.profile, pod, candidates.infos, runtime.state)
    if (behind := pods_first(runtime, record, pod, result.rejection)) is not None:
        return _unsure(record, behind)
    passed = [info.node.name for info in result.passed]
    if not passed and result.rejection is None and runtime.live is not None:
        # Maybe retried on a change this extender's watch has not delivered yet.
        catch_up_first(runtime, record,
                       passed_none(runtime, [info.node.name for info in candidates.infos]))
    statuses = {**candidates.rejected, **result.statuses}
    failed, unresolvable = split_failures(statuses)
    _reserve(runtime, request, bool(passed))
    if candidates.raw is not None:
        raw = candidates.raw
        reply = wire.ExtenderFilterResult(
            Nodes=wire.NodeList(items=[raw[name] for name in passed]),
            FailedNodes=failed, FailedAndUnresolvableNodes=unresolvable)
    else:
        reply = wire.ExtenderFilterResult(
            NodeNames=passed, FailedNodes=failed, FailedAndUnresolvableNodes=unresolvable)
    if not passed:
        events_of(runtime).filter_verdict(pod, len(candidates.names),
                                          Counter(s.reasons for s in statuses.values()),
                                          result.rejection)
    # By plugin and code, never by the reason text (a taint's value would make a series).
    _report(record, len(passed), Counter((s.plugin, s.code) for s in statuses.values()))
    return json_response(wire.encode(reply))


def _unsure(record: RequestRecord, error: str) -> Response:
    """An Error instead of a verdict this extender may be too far behind to give: kube-scheduler
    retries the pod after its backoff, where a rejection would park it until some event."""
    record.outcome = "behind"
    record.details["error"] = error
    return error_response(error, 200)


def _offered(runtime: Runtime, request: SchedulingRequest) -> Callable[[str], bool]:
    """Whether the request names a node (read only for a pod the preempt verb answered)."""
    listed = request.candidates.listed
    if listed is None:
        return lambda name: any(info.node.name == name for info in request.candidates.infos)
    table = runtime.state.table

    def offered(name: str) -> bool:
        row = table.ordinal.get(name)
        return row is not None and bool(np.any(listed.rows == row))
    return offered


def _by_rows(runtime: Runtime, request: SchedulingRequest, record: RequestRecord) -> Response:
    """The vectorised path: every candidate is a node of the state (`engine.rows`)."""
    state, pod, listed = runtime.state, request.pod, request.candidates.listed
    assert listed is not None
    table, replies = state.table, replies_for(state.table)
    prepared = prepare_filters(runtime.profile, pod, state)
    if (behind := pods_first(runtime, record, pod, prepared.rejection)) is not None:
        return _unsure(record, behind)
    token = None
    if prepared.rejection is None and runtime.reply_reuse:
        token = reuse_token(runtime.profile.filters, state.generation, 0)
    signature = request.signature
    if token is not None:
        entry = replies.reusable(listed, "filter", signature, table, token)
        if entry is not None:
            passed, tally = entry.summary  # type: ignore[misc]
            record.details["reused"] = True
            _reserve(runtime, request, passed > 0)
            _report(record, passed, tally)
            return json_response(entry.reply)
    verdicts = filter_rows(runtime.profile, pod, listed.rows, table, state, prepared)
    passed = int(np.count_nonzero(verdicts.codes == 0))
    if not passed and verdicts.rejection is None and runtime.live is not None:
        # Maybe retried on a change this extender's watch has not delivered yet.
        catch_up_first(runtime, record,
                       passed_none(runtime, [table.names[row] for row in verdicts.rows.tolist()]
                                   if len(verdicts.rows) <= MAX_NODES else []))
    reply, passing = replies.filter_reply(table, listed, verdicts.codes, verdicts.statuses)
    _reserve(runtime, request, passed > 0)
    if not passed:
        events_of(runtime).filter_verdict(pod, len(verdicts.rows), _by_reasons(verdicts),
                                          verdicts.rejection)
    _record(record, passed, len(verdicts.rows) - passed)
    # What the reply does not need waits until it is written (kube-scheduler's cycle waits
    # for the reply alone); the next request finds it done, the loop taking callbacks in order.
    after = (runtime, request, listed, token, reply, verdicts, passing, state.generation)
    if not runtime.offload.after_reply(_after_reply, *after, True):
        _after_reply(*after, False)  # in the large-request worker: at once, preparing nothing
    return json_response(reply)


def _after_reply(runtime: Runtime, request: SchedulingRequest, listed: NameList,
                 token: ReuseToken | None, reply: bytes, verdicts: RowVerdicts, passing: bytes,
                 generation: int, anticipate: bool) -> None:
    """A filter's bookkeeping: rejections counted, the reply kept for reuse, the passing
    nodes remembered as the list the pod's prioritize will name, and (`anticipate`) that
    prioritize's reply prepared. What it keeps describes the state the reply read
    (`generation`): if anything changed since (an event handled before this turn), only the
    rejections are counted."""
    tally = _tally(verdicts)
    metrics.count_filter_rejections(tally)
    state = runtime.state
    if state.generation != generation:
        return
    table, replies = state.table, replies_for(state.table)
    rows = listed.rows[verdicts.codes == 0]
    if len(rows) and token is not None:
        replies.keep(listed, "filter", request.signature, table, token, reply, (len(rows), tally),
                    runtime.reply_reuse)
    remembered = replies.remember(passing, rows, table)
    if anticipate:
        anticipate_prioritize(runtime, request.pod, request.signature, remembered)


def _tally(verdicts: RowVerdicts) -> Tally:
    tally: Tally = Counter()
    for status, count in _counted(verdicts):
        tally[(status.plugin, status.code)] += count
    return tally


def _by_reasons(verdicts: RowVerdicts) -> Counter[tuple[str, ...]]:
    """How many rows gave each tuple of reasons: from the codes' counts, not a row at a time
    (a pending pod's filter at 5 000 nodes names 500 of them)."""
    by_reasons: Counter[tuple[str, ...]] = Counter()
    for status, count in _counted(verdicts):
        by_reasons[status.reasons] += count
    return by_reasons


def _counted(verdicts: RowVerdicts) -> Iterator[tuple[Status, int]]:
    """Each failing status with how many rows got it."""
    counts = np.bincount(verdicts.codes, minlength=len(verdicts.statuses)).tolist()
    for status, count in zip(verdicts.statuses, counts, strict=False):
        if status is not None and count:
            yield status, count


def _reserve(runtime: Runtime, request: SchedulingRequest, passed: bool) -> None:
    if not runtime.quota_reservation_ttl:
        return
    if passed:
        # CapacityScheduling's Reserve: kube-scheduler will place the pod on one of these, so
        # the next pod's quota check must already count it.
        runtime.gate.call(runtime.state.store(QuotaStore).reserve, request.pod,
                          runtime.reservation_ttl(request.pod))
    else:
        # A new cycle of the pod supersedes the last one, and this one reserves nothing.
        runtime.gate.call(runtime.state.store(QuotaStore).release, request.pod.uid)


def _report(record: RequestRecord, passed: int, tally: Tally) -> None:
    _record(record, passed, sum(tally.values()))
    metrics.count_filter_rejections(tally)


def _record(record: RequestRecord, passed: int, failed: int) -> None:
    record.details["passed"] = passed
    record.details["failed"] = failed
