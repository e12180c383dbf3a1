"""POST /filter: which candidate nodes can run the pod, and why the others cannot."""

from __future__ import annotations

from collections import Counter

from starlette.responses import Response

from extender import wire
from extender.api import metrics
from extender.api.body import json_response
from extender.api.candidates import scheduling_request
from extender.api.observe import RequestRecord
from extender.api.runtime import Runtime
from extender.engine.framework import Code, Status
from extender.engine.runner import run_filters
from extender.state.events import events_of


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
    pod, candidates = scheduling_request(runtime, body, record)
    result = run_filters(runtime.profile, pod, candidates.infos, runtime.state)
    statuses = {**candidates.rejected, **result.statuses}
    failed, unresolvable = split_failures(statuses)
    passed = [info.node.name for info in result.passed]
    if passed and runtime.quota_reservation_ttl:
        # CapacityScheduling's Reserve: kube-scheduler will place the pod on one of these, so
        # the next pod's quota check must already count it.
        runtime.gate.call(runtime.state.reserve_quota, pod, runtime.quota_reservation_ttl)
    if candidates.raw is not None:
        raw = candidates.raw
        reply = wire.ExtenderFilterResult(
            Nodes=wire.NodeList(items=[raw[name] for name in passed]),
            FailedNodes=failed, FailedAndUnresolvableNodes=unresolvable)
    else:
        reply = wire.ExtenderFilterResult(
            NodeNames=passed, FailedNodes=failed, FailedAndUnresolvableNodes=unresolvable)
    events_of(runtime).filter_verdict(pod, len(candidates.names), len(passed), statuses,
                                      result.rejection)
    record.details["passed"] = len(passed)
    record.details["failed"] = len(statuses)
    # By plugin and code, never by the reason text (a taint's value would make a series).
    metrics.count_filter_rejections(Counter((s.plugin, s.code) for s in statuses.values()))
    return json_response(wire.encode(reply))
