"""The preempt reply assembled from encoded pieces: each node's key, each victim's
`{"UID":…}` (encoded once per pod and kept beside the pod's columns), each node's closing
`NumPDBViolations`; the bytes are exactly what `wire.encode(wire.ExtenderPreemptionResult(...))`
writes for the same outcome (`encode_outcome`)."""

from __future__ import annotations

import numpy as np

from extender import wire
from extender.engine.preemption.process import BatchOutcome, PreemptionOutcome

_EMPTY = wire.encode(wire.ExtenderPreemptionResult(NodeNameToMetaVictims={}))
_OPEN = b'{"NodeNameToMetaVictims":{'
_CLOSE = b"}}"
#: Each node's opening (its encoded name and `:{"Pods":[`), kept across requests.
_heads: dict[str, bytes] = {}
HEADS = 1 << 16
#: `],"NumPDBViolations":n},` for the usual counts.
_TAILS = np.array([b'],"NumPDBViolations":%d},' % n for n in range(64)], dtype=object)
#: The annotation columns (`PodColumns.annotation`) holding each pod's encoded `{"UID":…}`,
#: without and with the comma that follows all but a node's last victim.
_UID_LAST = "preempt.uid"
_UID_NEXT = "preempt.uid,"
#: The row annotation holding each node's opening.
_HEAD = "preempt.head"


def _head(name: str) -> bytes:
    found = _heads.get(name)
    if found is None:
        if len(_heads) >= HEADS:
            _heads.clear()
        found = _heads[name] = wire.encode(name) + b':{"Pods":['
    return found


def _heads_of(batch: BatchOutcome) -> np.ndarray:
    """Each kept node's opening, kept beside its table row (`PodColumns.row_annotation`)."""
    rows = batch.rows[batch.kept]
    cache = batch.columns.row_annotation(_HEAD)
    found = cache[np.maximum(rows, 0)]
    missing = np.flatnonzero(np.equal(found, None) | (rows < 0))
    if len(missing):
        names = batch.names
        kept = batch.kept
        for k in missing.tolist():
            head = found[k] = _head(names[kept[k]])
            if rows[k] >= 0:
                cache[rows[k]] = head
    return found  # type: ignore[no-any-return]


def reply_bytes(batch: BatchOutcome) -> bytes | None:
    """The reply for `batch`, from pieces (None when some victim has no ordinal: the caller
    encodes `batch.outcome()`). Runs while the columns are held (`vet_batch`'s `finish`)."""
    kept = batch.kept
    if not len(kept):
        return _EMPTY
    victims = batch.victims
    if len(victims) and int(victims.min()) < 0:
        return None
    columns = batch.columns
    last_of = columns.annotation(_UID_LAST)
    next_of = columns.annotation(_UID_NEXT)
    missing = np.flatnonzero(np.equal(last_of[victims], None))
    if len(missing):
        pods = columns.pods
        for o in np.unique(victims[missing]).tolist():
            piece = b'{"UID":' + wire.encode(pods[o].uid) + b"}"
            next_of[o] = piece + b","
            last_of[o] = piece
    bounds = batch.bounds
    lengths = np.diff(bounds)
    k = len(kept)
    pieces = np.empty(2 * k + len(victims), dtype=object)
    heads = np.arange(k) * 2 + bounds[:-1]
    tails = heads + lengths + 1
    body = np.ones(len(pieces), dtype=bool)
    body[heads] = False
    body[tails] = False
    fragments = next_of[victims]
    ends = bounds[1:] - 1
    fragments[ends] = last_of[victims[ends]]
    pieces[body] = fragments
    pieces[heads] = _heads_of(batch)
    counts = batch.counts
    if int(counts.max()) < len(_TAILS) and int(counts.min()) >= 0:
        pieces[tails] = _TAILS[counts]
    else:
        pieces[tails] = [b'],"NumPDBViolations":%d},' % n for n in counts.tolist()]
    joined = b"".join(pieces.tolist())
    return b"".join((_OPEN, memoryview(joined)[:-1], _CLOSE))


def finish(batch: BatchOutcome) -> bytes | PreemptionOutcome:
    found = reply_bytes(batch)
    return batch.outcome() if found is None else found


def encode_outcome(outcome: PreemptionOutcome) -> bytes:
    return wire.encode(wire.ExtenderPreemptionResult(NodeNameToMetaVictims={
        node: wire.MetaVictims(Pods=[wire.MetaPod(UID=v.uid) for v in victims.pods],
                               NumPDBViolations=victims.num_pdb_violations)
        for node, victims in outcome.victims.items()
    }))
