"""POST /preempt: confirm, extend or drop the scheduler's proposed victims per node.

Both request forms are accepted (`NodeNameToMetaVictims` with UIDs, `NodeNameToVictims` with
whole pods); the reply is always `NodeNameToMetaVictims`, highest-priority victim first.
"""

from __future__ import annotations

from collections import Counter

from starlette.responses import Response

from extender import wire
from extender.api import metrics
from extender.api.body import BadRequest, error_response, json_response
from extender.api.observe import RequestRecord
from extender.api.runtime import Runtime
from extender.api.verb import decode, limit_candidates, pod_view
from extender.engine.preemption import PreemptionMemo, SelectorMatches, process_preemption

error_reply = error_response

#: PDB selector answers, kept from request to request (see `SelectorMatches`).
_selector_matches = SelectorMatches()
#: The fast path's PDB exposures per workload and walks per node, checked before each reuse.
_memo = PreemptionMemo(_selector_matches)


def proposals(args: wire.ExtenderPreemptionArgs) -> dict[str, list[str]]:
    """node name → proposed victim UIDs, from whichever form the scheduler sent."""
    if args.NodeNameToMetaVictims is not None:
        return {node: [p.UID for p in (victims.Pods or ()) if p.UID] if victims else []
                for node, victims in args.NodeNameToMetaVictims.items()}
    if args.NodeNameToVictims is not None:
        return {node: [p.metadata.uid for p in (victims.Pods or ()) if p.metadata.uid] if victims else []
                for node, victims in args.NodeNameToVictims.items()}
    raise BadRequest("invalid request: one of NodeNameToVictims or NodeNameToMetaVictims must be set")


async def handle(runtime: Runtime, body: bytes, record: RequestRecord) -> Response:
    args = decode(body, wire.ExtenderPreemptionArgs)
    pod = pod_view(args.Pod)
    record.pod = pod.key
    proposed = proposals(args)
    limit_candidates(len(proposed), runtime)
    record.nodes = len(proposed)
    outcome = process_preemption(runtime.profile, pod, proposed, runtime.state, runtime.wall_clock(),
                                 selector_matches=_selector_matches, memo=_memo)
    reply = wire.ExtenderPreemptionResult(NodeNameToMetaVictims={
        node: wire.MetaVictims(Pods=[wire.MetaPod(UID=v.uid) for v in victims.pods],
                               NumPDBViolations=victims.num_pdb_violations)
        for node, victims in outcome.victims.items()
    })
    for reason, count in Counter(outcome.dropped.values()).items():
        metrics.PREEMPT_NODE_DROPS.labels(reason).inc(count)
    record.details["kept"] = len(outcome.victims)
    record.details["dropped"] = outcome.dropped
    return json_response(wire.encode(reply))
