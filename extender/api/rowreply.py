"""Replies over table rows: name lists resolved once, replies built from encoded fragments,
and whole replies reused while nothing they depend on changed.

kube-scheduler sends the same `NodeNames` list for pod after pod (every candidate, when
`percentageOfNodesToScore` is 100; a ReplicaSet's pods one after another). So:

- `RowReplies.resolve` maps a list's bytes to its table rows: a repeated list costs a CRC and a
  `memcmp`, not 5 000 string decodes and dict lookups;
- the fragments hold each row's node name JSON-encoded (and each `{"Host":…,"Score":s}` entry
  of a prioritize reply), so a reply is joins over numpy gathers, without a per-node
  Python step for passing nodes;
- `reusable`/`keep` hold a reply per (pod signature, list) with the generations of the rows it
  read, and what else its plugins read (see `framework.REUSE_ROWS`), and serves it again
  while they are unchanged.
"""

from __future__ import annotations

import weakref
import zlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import msgspec
import numpy as np

from extender.engine.framework import REUSE_ROWS, REUSE_STATE, Code, Status
from extender.engine.nodetable import NodeTable

#: Name lists remembered per state (each holds its rows and up to `REPLIES_PER_LIST` replies).
NAMES_CACHE_SIZE = 64
REPLIES_PER_LIST = 16
_MAX_PRIORITY = 10

_names_decoder = msgspec.json.Decoder(list[str])
_encode = msgspec.json.encode


@dataclass(slots=True)
class ReplyEntry:
    reply: bytes
    view_gens: np.ndarray
    load_gens: np.ndarray
    token: tuple[int, ...]
    #: What the handler reports besides the reply (metrics, record details).
    summary: object = None


@dataclass(slots=True)
class NameList:
    raw: bytes
    layout: int
    rows: np.ndarray
    replies: OrderedDict[tuple[str, bytes], ReplyEntry] = field(default_factory=OrderedDict)


class RowReplies:
    """One state table's name lists, fragments and reusable replies."""

    def __init__(self, table: NodeTable) -> None:
        self._lists: OrderedDict[tuple[int, int], NameList] = OrderedDict()
        self._names_layout = self._hosts_layout = -1
        self._names: np.ndarray = np.empty(0, dtype=object)
        self._hosts: np.ndarray = np.empty((0, _MAX_PRIORITY + 1), dtype=object)

    # ---- names ------------------------------------------------------------------------------
    def resolve(self, raw: msgspec.Raw, table: NodeTable) -> tuple[NameList | None, list[str] | None]:
        """The rows of the list `raw` (JSON), as a remembered `NameList`; or (None, names)
        when some name is not a node of the table (the caller takes the per-node path).
        Raises `msgspec.DecodeError` when `raw` is not a list of strings."""
        key = (len(raw), zlib.crc32(raw))
        found = self._lists.get(key)
        if found is not None and found.layout == table.layout and found.raw == bytes(raw):
            try:
                self._lists.move_to_end(key)
            except KeyError:  # evicted by the other thread (api.offload) meanwhile
                pass
            return found, None
        names = _names_decoder.decode(raw)
        rows = table.rows(names)
        if rows is None:
            return None, names
        entry = NameList(bytes(raw), table.layout, rows)
        self._lists[key] = entry
        if len(self._lists) > NAMES_CACHE_SIZE:
            self._lists.popitem(last=False)
        return entry, None

    def sizes(self) -> dict[str, int]:
        return {"candidate_lists": len(self._lists),
                "kept_replies": sum(len(entry.replies) for entry in list(self._lists.values()))}

    # ---- fragments --------------------------------------------------------------------------
    def _encoded_names(self, table: NodeTable) -> np.ndarray:
        """Each row's node name, JSON-encoded (rebuilt when rows are assigned or freed)."""
        if self._names_layout != table.layout:
            self._names = np.array([None if n is None else _encode(n)
                                    for n in table.names.tolist()], dtype=object)
            self._names_layout = table.layout
        return self._names

    def _host_entries(self, table: NodeTable) -> np.ndarray:
        """Each row's `{"Host":…,"Score":s}` for s in 0..10 (only prioritize needs them)."""
        if self._hosts_layout != table.layout:
            hosts = np.empty((table.capacity, _MAX_PRIORITY + 1), dtype=object)
            for row, name in enumerate(self._encoded_names(table).tolist()):
                if name is not None:
                    head = b'{"Host":' + name + b',"Score":'
                    hosts[row] = [head + b"%d}" % s for s in range(_MAX_PRIORITY + 1)]
            self._hosts, self._hosts_layout = hosts, table.layout
        return self._hosts

    def filter_reply(self, table: NodeTable, rows: np.ndarray, codes: np.ndarray,
                     statuses: Sequence[Status | None]) -> bytes:
        """`ExtenderFilterResult` in NodeNames form, as `wire.encode` writes it."""
        names = self._encoded_names(table)
        passing = b",".join(names[rows[codes == 0]].tolist())
        failed: list[bytes] = []
        unresolvable: list[bytes] = []
        failing = np.flatnonzero(codes)
        if len(failing):
            # Grouped by code with one sort: each status's message is encoded once.
            order = failing[np.argsort(codes[failing], kind="stable")]
            sorted_codes = codes[order]
            bounds = np.flatnonzero(np.diff(sorted_codes)) + 1
            starts = [0, *bounds.tolist()]
            ends = [*bounds.tolist(), len(order)]
            failing_names = names[rows[order]].tolist()
            for start, end, code in zip(starts, ends, sorted_codes[starts].tolist(), strict=True):
                status = statuses[code]
                assert status is not None
                message = b":" + _encode(status.message)
                target = failed if status.code == Code.UNSCHEDULABLE else unresolvable
                target.extend([name + message for name in failing_names[start:end]])
        return b"".join((b'{"Nodes":null,"NodeNames":[', passing, b'],"FailedNodes":{',
                         b",".join(failed), b'},"FailedAndUnresolvableNodes":{',
                         b",".join(unresolvable), b'},"Error":""}'))

    def prioritize_reply(self, table: NodeTable, rows: np.ndarray, scores: np.ndarray) -> bytes:
        """The `HostPriorityList`, one entry per row in order, as `wire.encode` writes it."""
        return b"[" + b",".join(self._host_entries(table)[rows, scores].tolist()) + b"]"

    # ---- reuse --------------------------------------------------------------------------------
    @staticmethod
    def reusable(names: NameList, verb: str, signature: bytes, table: NodeTable,
                 token: tuple[int, ...]) -> ReplyEntry | None:
        entry = names.replies.get((verb, signature))
        if entry is None or entry.token != token:
            return None
        rows = names.rows
        if not (np.array_equal(entry.view_gens, table.view_gen[rows])
                and np.array_equal(entry.load_gens, table.load_gen[rows])):
            return None
        return entry

    @staticmethod
    def keep(names: NameList, verb: str, signature: bytes, table: NodeTable,
             token: tuple[int, ...], reply: bytes, summary: object = None,
             limit: int = REPLIES_PER_LIST) -> None:
        rows = names.rows
        names.replies[(verb, signature)] = ReplyEntry(
            reply, table.view_gen[rows], table.load_gen[rows], token, summary)
        while len(names.replies) > limit:
            names.replies.popitem(last=False)


_replies: weakref.WeakKeyDictionary[NodeTable, RowReplies] = weakref.WeakKeyDictionary()


def replies_for(table: NodeTable) -> RowReplies:
    found = _replies.get(table)
    if found is None:
        found = _replies[table] = RowReplies(table)
    return found


def reuse_token(plugins: Sequence[object], generation: int, node_generation: int) -> tuple[int, ...] | None:
    """What a reply over these plugins depends on besides its rows: nothing more, the node
    set, or the whole state's generation; None when some plugin forbids reuse."""
    levels = {getattr(plugin, "reply_reuse", None) for plugin in plugins}
    if None in levels:
        return None
    if REUSE_STATE in levels:
        return (generation,)
    assert levels <= {REUSE_ROWS}
    return (node_generation,)
