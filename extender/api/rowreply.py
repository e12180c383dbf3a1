"""Replies over table rows: name lists resolved once, replies built from encoded fragments,
and whole replies reused while nothing they depend on changed.

kube-scheduler names in a pod's prioritize exactly the nodes its filter passed, in the bytes
of the filter's reply, and a client may send one list again and again (a filter list of its
own comes in the order its goroutines found the nodes, so rarely twice alike). So:

- `RowReplies.split` recognises a remembered list at the end of a body as Go encodes it, by
  comparing bytes: the body's head (the pod) is then decoded alone, and the list is neither
  parsed nor hashed; `resolve` maps a list seen for the first time (or sent with other
  spacing) to its table rows, keyed by its length and a hash of three samples;
- the fragments hold each row's node name JSON-encoded (and each `{"Host":…,"Score":s}` entry
  of a prioritize reply), so a reply is joins over numpy gathers, without a per-node
  Python step for passing nodes; the last reply per list is kept with the verdicts or scores
  it was built from, and the same ones give it again;
- `reusable`/`keep` hold a reply per (pod signature, list) with the generations of the rows it
  read, and what else its plugins read (see `framework.REUSE_ROWS`), and serves it again
  while they are unchanged (under the whole state's generation, which every change moves,
  rows need no check of their own);
- a filter's passing nodes are remembered as a list (`remember`, `NameList.from_filter`), and
  `followed` says whether kube-scheduler's last prioritize named such a list: while it does,
  a pod's prioritize reply is prepared as soon as its filter is answered
  (`api.prioritize.anticipate_prioritize`).
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import msgspec
import numpy as np

from extender.api.bounded import DEFAULT_CACHE_BYTES
from extender.engine import registry
from extender.engine.framework import REUSE_ROWS, REUSE_STATE, Code, Status
from extender.engine.nodetable import NodeTable

#: Name lists remembered per state (each holds its rows and up to `REPLIES_PER_LIST` replies).
NAMES_CACHE_SIZE = 64
REPLIES_PER_LIST = 16
#: What the lists with their replies may hold in all (half of `serve --cache-bytes`): at 5 000
#: candidates a list is 150 KB and a reply up to 250 KB, so counting entries alone allowed
#: about 250 MB.
BUDGET = {"bytes": DEFAULT_CACHE_BYTES // 2}
_MAX_PRIORITY = 10

_names_decoder = msgspec.json.Decoder(list[str])
_NAMES_FIELD = b',"NodeNames":'


def _list_key(raw: bytes) -> tuple[int, int]:
    """A list's length and a hash of three samples of it: cheaper than hashing 150 KB, and a
    key only picks the entry whose bytes are then compared whole."""
    middle = len(raw) // 2
    return len(raw), hash((raw[:64], raw[middle - 32:middle + 32], raw[-64:]))
_encode = msgspec.json.encode


@dataclass(frozen=True, slots=True)
class ReuseToken:
    """What a reply depends on besides its rows' generations (`reuse_token`)."""

    generation: int
    #: `generation` is the whole state's: it moves on every change, rows' included, so
    #: while it holds the rows need no check.
    whole_state: bool


@dataclass(slots=True)
class ReplyEntry:
    reply: bytes
    view_gens: np.ndarray | None
    load_gens: np.ndarray | None
    token: ReuseToken
    #: What the handler reports besides the reply (metrics, record details).
    summary: object = None
    #: Prepared before its request came (`api.prioritize.anticipate_prioritize`).
    anticipated: bool = False


@dataclass(slots=True)
class NameList:
    raw: bytes
    layout: int
    rows: np.ndarray
    replies: OrderedDict[tuple[str, bytes], ReplyEntry] = field(default_factory=OrderedDict)
    #: The nodes that passed a filter, as kube-scheduler's prioritize of the same pod names
    #: them when this is its only filtering extender (`RowReplies.remember`).
    from_filter: bool = False
    #: The last filter and prioritize replies built over this list, with what they were built
    #: from (the same verdicts or scores give the same bytes: a workload's pods, one after
    #: another, mostly do); the filter's with its passing names' list, as JSON.
    last_filter: tuple[np.ndarray, tuple[tuple[bool, str] | None, ...], bytes, bytes] | None = None
    last_scores: tuple[np.ndarray, bytes] | None = None
    #: The bytes of `replies`, and of the last replies with their inputs.
    reply_bytes: int = 0
    last_bytes: dict[str, int] = field(default_factory=dict)
    #: All it holds (its bytes, rows, kept and last replies), kept as it changes; `account`
    #: is the running total of the `RowReplies` holding it, changed along.
    size: int = 0
    account: list[int] = field(default_factory=lambda: [0])

    def __post_init__(self) -> None:
        self.size = len(self.raw) + self.rows.nbytes

    def grow(self, delta: int) -> None:
        self.size += delta
        self.account[0] += delta

    def set_last(self, kind: str, size: int) -> None:
        self.grow(size - self.last_bytes.get(kind, 0))
        self.last_bytes[kind] = size

    def nbytes(self) -> int:
        """What this list holds, roughly: its bytes, rows, kept and last replies."""
        return self.size


class RowReplies:
    """One state table's name lists, fragments and reusable replies."""

    def __init__(self, table: NodeTable) -> None:
        self._lists: OrderedDict[tuple[int, int], NameList] = OrderedDict()
        #: The lists' bytes in all, kept as they change (counted afresh now and then: the
        #: large-request worker may change a list beside the loop).
        self._account = [0]
        self._inserts = 0
        self._names_layout = self._hosts_layout = -1
        #: Whether the last prioritize named a filter's passing nodes (`NameList.from_filter`).
        self.followed = False
        self._names: np.ndarray = np.empty(0, dtype=object)
        self._name_lengths: np.ndarray = np.empty(0, dtype=np.int64)
        self._hosts: np.ndarray = np.empty((0, _MAX_PRIORITY + 1), dtype=object)

    # ---- names ------------------------------------------------------------------------------
    def resolve(self, raw: msgspec.Raw, table: NodeTable) -> tuple[NameList | None, list[str] | None]:
        """The rows of the list `raw` (JSON), as a remembered `NameList`; or (None, names)
        when some name is not a node of the table (the caller takes the per-node path).
        Raises `msgspec.DecodeError` when `raw` is not a list of strings."""
        raw = bytes(raw)
        key, found = self._find(raw, table)
        if found is not None:
            return found, None
        names = _names_decoder.decode(raw)
        rows = table.rows(names)
        if rows is None:
            return None, names
        entry = NameList(raw, table.layout, rows)
        self._insert(key, entry)
        return entry, None

    def nbytes(self) -> int:
        return self._account[0]

    def _insert(self, key: tuple[int, int], entry: NameList) -> None:
        old = self._lists.pop(key, None)
        if old is not None:
            self._forget(old)
        entry.account = self._account
        self._account[0] += entry.size
        self._lists[key] = entry
        self._inserts += 1
        if self._inserts % 256 == 0:
            self._account[0] = sum(e.size for e in list(self._lists.values()))
        self.trim()

    def _forget(self, entry: NameList) -> None:
        self._account[0] -= entry.size
        entry.account = [0]  # its later changes count nowhere

    def trim(self) -> None:
        """Forget the least recently used lists past `NAMES_CACHE_SIZE` or the byte budget
        (the newest is kept: the request at hand uses it)."""
        lists = self._lists
        while len(lists) > NAMES_CACHE_SIZE or (len(lists) > 1
                                                and self._account[0] > BUDGET["bytes"]):
            try:
                _, entry = lists.popitem(last=False)
            except KeyError:  # the other thread (api.offload) took it first
                break
            self._forget(entry)

    def split(self, body: bytes, table: NodeTable) -> tuple[NameList, int] | None:
        """A remembered list that ends `body` as Go's encoder writes `ExtenderArgs` (its last
        field, `,"NodeNames":[…]}`), with where that field starts; None if no list does.

        The body's head (the pod) then decodes alone: the list's 150 KB at 5 000 nodes are
        neither parsed nor hashed, only compared. The head decodes as `{…}` only when the
        list really is the object's last member (a string left open in it would not)."""
        if not body.endswith(b"]}"):
            return None
        # The field's last occurrence is the list's: a name (a JSON string of a node's name)
        # cannot hold it. One search and one lookup, however many lists are remembered.
        cut = body.rfind(_NAMES_FIELD)
        if cut <= 0:
            return None
        _, entry = self._find(bytes(body[cut + len(_NAMES_FIELD):len(body) - 1]), table)
        return (entry, cut) if entry is not None else None

    def _find(self, raw: bytes, table: NodeTable) -> tuple[tuple[int, int], NameList | None]:
        """The key of the list `raw` (its JSON bytes) and, when remembered for the table's
        layout, the list (marked as used)."""
        key = _list_key(raw)
        found = self._lists.get(key)
        if found is None or found.layout != table.layout or found.raw != raw:
            return key, None
        self._used(key)
        return key, found

    def _used(self, key: tuple[int, int]) -> None:
        try:
            self._lists.move_to_end(key)
        except KeyError:  # evicted by the other thread (api.offload) meanwhile
            pass

    def sizes(self) -> dict[str, int]:
        return {"candidate_lists": len(self._lists),
                "kept_replies": sum(len(entry.replies) for entry in list(self._lists.values()))}

    def byte_sizes(self) -> dict[str, int]:
        return {"candidate_lists": self.nbytes()}

    # ---- fragments --------------------------------------------------------------------------
    def _encoded_names(self, table: NodeTable) -> np.ndarray:
        """Each row's node name, JSON-encoded (rebuilt when rows are assigned or freed)."""
        if self._names_layout != table.layout:
            self._names = np.array([None if n is None else _encode(n)
                                    for n in table.names.tolist()], dtype=object)
            self._name_lengths = np.array([0 if n is None else len(n)
                                           for n in self._names.tolist()], dtype=np.int64)
            self._names_layout = table.layout
        return self._names

    def _as_encoded(self, raw: bytes, rows: np.ndarray, table: NodeTable) -> bool:
        """Whether the JSON list `raw` of the rows' names is written as `wire.encode` writes
        it: no escape (each name then written as it is) and no byte between them but a comma
        (its length then that of the encoded names, their commas and brackets)."""
        if b"\\" in raw or not len(rows):
            return False
        self._encoded_names(table)  # the lengths are made with the names, for this layout
        return len(raw) == int(self._name_lengths[rows].sum()) + len(rows) + 1

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

    def filter_reply(self, table: NodeTable, listed: NameList, codes: np.ndarray,
                     statuses: Sequence[Status | None]) -> tuple[bytes, bytes]:
        """`ExtenderFilterResult` in NodeNames form for the list's rows, as `wire.encode`
        writes it, and the passing nodes' names as a JSON list (for `remember`); `codes`
        index `statuses` (0: passed)."""
        worded = tuple(None if status is None else (status.code == Code.UNSCHEDULABLE,
                                                    status.message) for status in statuses)
        last = listed.last_filter
        if last is not None and last[1] == worded and np.array_equal(last[0], codes):
            return last[2], last[3]
        reply, passing = self._filter_reply(table, listed.rows, codes, statuses, listed.raw)
        passing_list = b"[" + passing + b"]"
        listed.last_filter = codes, worded, reply, passing_list
        listed.set_last("filter", codes.nbytes + len(reply) + len(passing_list))
        return reply, passing_list

    def remember(self, raw: bytes, rows: np.ndarray, table: NodeTable) -> NameList:
        """A filter's passing nodes (`raw`, their JSON list, and their `rows`) as a list of
        their own: kube-scheduler's prioritize for that pod names exactly them, in this order
        and these bytes (when this is its only filtering extender), so it is found without
        being read."""
        key, found = self._find(raw, table)
        if found is None:
            found = NameList(raw, table.layout, rows)
            self._insert(key, found)
        found.from_filter = True
        return found

    def _filter_reply(self, table: NodeTable, rows: np.ndarray, codes: np.ndarray,
                      statuses: Sequence[Status | None], raw: bytes = b"") -> tuple[bytes, bytes]:
        """The reply, and the passing names as they appear in it (comma-separated); `raw`,
        the request's list of the rows' names: where every row passed and it is written as
        the reply writes them (as kube-scheduler's encoder does), the reply's list is it."""
        names = self._encoded_names(table)
        if not codes.any() and self._as_encoded(raw, rows, table):
            # What a filter whose nodes kube-scheduler's own filters all passed mostly gets.
            passing = raw[1:-1]
        else:
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
                # `name:message` entries, comma-separated: one join per status.
                target.append((message + b",").join(failing_names[start:end]) + message)
        return b"".join((b'{"Nodes":null,"NodeNames":[', passing, b'],"FailedNodes":{',
                         b",".join(failed), b'},"FailedAndUnresolvableNodes":{',
                         b",".join(unresolvable), b'},"Error":""}')), passing

    def prioritize_reply(self, table: NodeTable, listed: NameList, scores: np.ndarray) -> bytes:
        """The `HostPriorityList`, one entry per row of the list in order, as `wire.encode`
        writes it."""
        last = listed.last_scores
        if last is not None and np.array_equal(last[0], scores):
            return last[1]
        reply = b"[" + b",".join(self._host_entries(table)[listed.rows, scores].tolist()) + b"]"
        listed.last_scores = scores, reply
        listed.set_last("scores", scores.nbytes + len(reply))
        return reply

    # ---- reuse --------------------------------------------------------------------------------
    @staticmethod
    def reusable(names: NameList, verb: str, signature: bytes, table: NodeTable,
                 token: ReuseToken) -> ReplyEntry | None:
        entry = names.replies.get((verb, signature))
        if entry is None or entry.token != token:
            return None
        if token.whole_state:
            return entry
        rows = names.rows
        if not (np.array_equal(entry.view_gens, table.view_gen[rows])  # type: ignore[arg-type]
                and np.array_equal(entry.load_gens, table.load_gen[rows])):  # type: ignore[arg-type]
            return None
        return entry

    @staticmethod
    def keep(names: NameList, verb: str, signature: bytes, table: NodeTable,
             token: ReuseToken, reply: bytes, summary: object = None,
             limit: int = REPLIES_PER_LIST, anticipated: bool = False) -> None:
        rows = names.rows
        view_gens = load_gens = None
        if not token.whole_state:
            view_gens, load_gens = table.view_gen[rows], table.load_gen[rows]
        replaced = names.replies.pop((verb, signature), None)
        if replaced is not None:
            names.reply_bytes -= len(replaced.reply)
            names.grow(-len(replaced.reply))
        names.replies[(verb, signature)] = ReplyEntry(reply, view_gens, load_gens, token, summary,
                                                      anticipated)
        names.reply_bytes += len(reply)
        names.grow(len(reply))
        # A list's replies stay within a sixteenth of the budget (the lists' own bound,
        # `RowReplies.trim`, runs when a new list comes).
        share = BUDGET["bytes"] // 16
        while len(names.replies) > limit or (names.replies and names.reply_bytes > share):
            _, dropped = names.replies.popitem(last=False)
            names.reply_bytes -= len(dropped.reply)
            names.grow(-len(dropped.reply))


_replies: weakref.WeakKeyDictionary[NodeTable, RowReplies] = weakref.WeakKeyDictionary()


def replies_for(table: NodeTable) -> RowReplies:
    found = _replies.get(table)
    if found is None:
        found = _replies[table] = RowReplies(table)
    return found


def reuse_token(plugins: Sequence[object], generation: int, node_generation: int) -> ReuseToken | None:
    """What a reply over these plugins depends on besides its rows: nothing more, the node
    set, or the whole state's generation; None when some plugin forbids reuse."""
    levels = {registry.reply_reuse(plugin) for plugin in plugins}
    if None in levels:
        return None
    if REUSE_STATE in levels:
        return ReuseToken(generation, whole_state=True)
    assert levels <= {REUSE_ROWS}
    return ReuseToken(node_generation, whole_state=False)
