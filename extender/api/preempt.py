"""POST /preempt: confirm, extend or drop the scheduler's proposed victims per node.

Both request forms are accepted (`NodeNameToMetaVictims` with UIDs, `NodeNameToVictims` with
whole pods); the reply is always `NodeNameToMetaVictims`, highest-priority victim first.

The proposals are read flat (node names, every UID in one list, a count per node) and go to
`process_preemption_batch`. When it answers with columns (`BatchOutcome`), the reply is
assembled from encoded pieces (`api.preemptreply`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import chain
from operator import attrgetter

from starlette.responses import Response

from extender import wire
from extender.api import metrics
from extender.api.body import BadRequest, error_response, json_response
from extender.api.catchup import catch_up_first, remember_kept, unplaced_victims
from extender.api.observe import RequestRecord
from extender.api.preemptreply import encode_outcome, finish
from extender.api.reading import decode, limit_candidates, replica_pod_view
from extender.api.runtime import Runtime
from extender.engine.preemption import PreemptionMemo, SelectorMatches
from extender.engine.preemption.outcome import DropReason
from extender.engine.preemption.process import (
    BatchOutcome,
    grouped_proposals,
    process_preemption_batch,
)

error_reply = error_response

#: PDB selector answers, kept from request to request (see `SelectorMatches`).
_selector_matches = SelectorMatches()
#: The fast path's PDB exposures per workload, walks per node and pod columns, checked
#: before each reuse.
_memo = PreemptionMemo(_selector_matches)

_uid = attrgetter("UID")


def proposals(args: wire.ExtenderPreemptionArgs) -> dict[str, list[str]]:
    """node name → proposed victim UIDs, from whichever form the scheduler sent."""
    return grouped_proposals(*flat_proposals(args))


def flat_proposals(args: wire.ExtenderPreemptionArgs) -> tuple[list[str], list[str], list[int]]:
    """The proposed nodes, all their UIDs in one list (empty UIDs left out) and how many
    belong to each node."""
    if args.NodeNameToMetaVictims is not None:
        meta = args.NodeNameToMetaVictims
        names = list(meta)
        lists: list[Sequence[object]] = [v.Pods or () if v is not None else ()
                                         for v in meta.values()]
        uids: list[str] = list(map(_uid, chain.from_iterable(lists)))
    elif args.NodeNameToVictims is not None:
        whole = args.NodeNameToVictims
        names = list(whole)
        lists = [v.Pods or () if v is not None else () for v in whole.values()]
        uids = [p.metadata.uid for p in chain.from_iterable(lists)]  # type: ignore[attr-defined]
    else:
        raise BadRequest("invalid request: one of NodeNameToVictims or NodeNameToMetaVictims must be set")
    lengths = list(map(len, lists))
    if "" in uids:  # a pod without a UID proposes nothing
        kept: list[str] = []
        start = 0
        for i, length in enumerate(lengths):
            mine = [uid for uid in uids[start:start + length] if uid]
            start += length
            lengths[i] = len(mine)
            kept.extend(mine)
        uids = kept
    return names, uids, lengths


async def handle(runtime: Runtime, body: bytes, record: RequestRecord) -> Response:
    args = decode(body, wire.ExtenderPreemptionArgs)
    pod = replica_pod_view(args.Pod)
    record.pod = pod.key
    names, uids, lengths = flat_proposals(args)
    limit_candidates(len(names), runtime)
    record.nodes = len(names)
    found = process_preemption_batch(runtime.profile, pod, names, uids, lengths, runtime.state,
                                     runtime.wall_clock(), selector_matches=_selector_matches,
                                     memo=_memo, finish=finish)
    if isinstance(found, BatchOutcome):
        dropped = found.dropped
        kept = len(found.kept)
        result = found.result
        reply = result if isinstance(result, bytes) else encode_outcome(result)  # type: ignore[arg-type]
    else:
        dropped = found.dropped
        kept = len(found.victims)
        reply = encode_outcome(found)
    remember_kept(runtime, pod, found)
    if runtime.live is not None and (found.ignored
                                     or DropReason.NODE_NOT_FOUND in dropped.values()):
        # Victims or nodes kube-scheduler has seen and this extender's watch not yet.
        catch_up_first(runtime, record, chain(
            unplaced_victims(runtime, found.ignored),
            (node for node, reason in dropped.items() if reason == DropReason.NODE_NOT_FOUND)))
    for reason, count in Counter(dropped.values()).items():
        metrics.PREEMPT_NODE_DROPS.labels(reason).inc(count)
    record.details["kept"] = kept
    record.details["dropped"] = dropped
    return json_response(reply)
