"""The format of `extender serve --record DIR`: one JSON object per line (JSON Lines).

A recording is what one serve process answered and every change its state received from
outside those answers, in the order they happened on the event loop, so the state at each
request can be rebuilt (`extender.api.replay`). The first line is a `Header`; each later line
is one entry, named by its `record` member:

- `in` / `out`: an exchange the extender answered (`id` pairs them). `in` is written when the
  handler starts, after the body was read (the state it reads is the state at that point):
  the request's exact bytes. `out` is written when the reply is complete: its status and exact
  bytes. An `out` without an `in` is a reply given before the body was read (not ready, busy,
  a body limit); it carries the verb, path and readiness itself.
- `load`: one object of the `--snapshot` file, in the order the snapshot load applied them.
- `apply` / `delete` / `relist-begin` / `relist-page` / `relist-end`: what an informer applied
  to the state (watch events that passed its resourceVersion check, and relists), by resource
  (`nodes`, `pods`, ...): the typed object re-encoded with msgspec (it decodes back to the
  identical struct: only the fields the engine reads).
- `expire`: assumptions that expired (the time they were judged by, their UIDs).
- `metrics`: a node load snapshot the metrics refresher handed to the state (Trimaran).
- `bind`: the answer of the binder behind the bind verb (before Coscheduling's Permit): its
  error or none, its outcome label, and the pod it read from the API server to assume, if it
  read one. A replay has no API server: this is its answer.
- `permit-timeout`: a bind held at Coscheduling's Permit whose wait ran out (its timer fired).
- `nrt-resync`: a round of NodeResourceTopologyMatch's overreserve cache resync.
- `reject-held`: every bind held at Permit answered with `reason` (the server stopping, which
  then holds no more binds: `stop`; or a replica that stopped leading).

A new entry type that older recordings never hold keeps `FORMAT`: they replay as before. The
format changes when what an older recording means to the replay would change.

Every entry has `t` (the state's monotonic clock, seconds) and `w` (its wall clock, Unix
seconds) when it was recorded. Bodies are UTF-8 text in `body`; a body that is not UTF-8 is in
`body_base64` instead.
"""

from __future__ import annotations

import base64
import gzip
import re
from collections.abc import Iterator
from pathlib import Path

import msgspec

from extender.model import k8s
from extender.model.loadmetrics import WatcherMetrics

FORMAT = 2
NULL = msgspec.Raw(b"null")
#: Recording files in a `--record` directory: `recording-<n>.jsonl`, one per serve process
#: (a copy may be gzipped: `recording-<n>.jsonl.gz`).
FILE_NAME = re.compile(r"recording-(\d+)\.jsonl(\.gz)?")


class Flags(msgspec.Struct, forbid_unknown_fields=False):
    """The serve flags that change answers."""

    nodes_form: bool = False
    max_body_bytes: int = 0
    max_candidates: int = 0
    offload_bytes: int = 0
    reply_cache: int = 0
    bind_deadline: float = 4.0
    assume_ttl: float = 30.0
    #: As given (None: derived from the policy's permit wait and the bind deadline).
    scheduler_http_timeout: float | None = None


class Header(msgspec.Struct, tag="header", tag_field="record", omit_defaults=True):
    format: int  # FORMAT (always written)
    extender: str
    mode: str  # "live" (--kubeconfig/--in-cluster) or "snapshot"
    source: str
    #: The policy file's exact text; None: the built-in defaults.
    policy: str | None
    policy_source: str
    flags: Flags
    started: str  # ISO 8601, UTC
    t: float
    w: float
    #: `TrimaranStore.since` (the phase of TargetLoadPacking's record cleanups).
    assignments_since: float


class In(msgspec.Struct, tag="in", tag_field="record", omit_defaults=True):
    id: int
    t: float
    w: float
    verb: str
    path: str
    body: str | None = None
    body_base64: str | None = None
    #: Why the extender was not ready when the request came (None: ready, or not asked).
    not_ready: str | None = None


class Out(msgspec.Struct, tag="out", tag_field="record", omit_defaults=True):
    id: int
    t: float
    w: float
    status: int
    body: str | None = None
    body_base64: str | None = None
    #: Set only when no `in` came first (the reply came before the body was read).
    verb: str = ""
    path: str = ""
    not_ready: str | None = None
    unread: bool = False


class Load(msgspec.Struct, tag="load", tag_field="record", omit_defaults=True):
    t: float
    w: float
    kind: str
    object: msgspec.Raw


class Apply(msgspec.Struct, tag="apply", tag_field="record", omit_defaults=True):
    t: float
    w: float
    resource: str
    object: msgspec.Raw


class Delete(msgspec.Struct, tag="delete", tag_field="record", omit_defaults=True):
    t: float
    w: float
    resource: str
    object: msgspec.Raw


class RelistBegin(msgspec.Struct, tag="relist-begin", tag_field="record", omit_defaults=True):
    t: float
    w: float
    resource: str


class RelistPage(msgspec.Struct, tag="relist-page", tag_field="record", omit_defaults=True):
    t: float
    w: float
    resource: str
    items: list[msgspec.Raw]


class RelistEnd(msgspec.Struct, tag="relist-end", tag_field="record", omit_defaults=True):
    t: float
    w: float
    resource: str


class Expire(msgspec.Struct, tag="expire", tag_field="record", omit_defaults=True):
    t: float
    w: float
    now: float
    uids: list[str]


class Metrics(msgspec.Struct, tag="metrics", tag_field="record", omit_defaults=True):
    t: float
    w: float
    snapshot: WatcherMetrics | None


class Bind(msgspec.Struct, tag="bind", tag_field="record", omit_defaults=True):
    t: float
    w: float
    namespace: str
    name: str
    uid: str
    node: str
    outcome: str
    #: The binder's error (None: bound).
    error: str | None = None
    #: The pod read from the API server to assume it (`ApiBinder.on_read`); `null`: none was.
    pod: msgspec.Raw = NULL

    def read_pod(self) -> k8s.Pod | None:
        """The pod the binder read, if it read one."""
        if bytes(self.pod) in (b"", b"null"):
            return None
        return k8s.decoder(k8s.Pod).decode(self.pod)


class PermitTimeout(msgspec.Struct, tag="permit-timeout", tag_field="record",
                    omit_defaults=True):
    """A bind held at Permit ran out of time before its group decided. Which of a group's
    holds time out first, when their deadlines fall together, is the event loop's order: an
    input like the API's answers, not something a replay can compute."""

    t: float
    w: float
    uid: str


class NRTResync(msgspec.Struct, tag="nrt-resync", tag_field="record", omit_defaults=True):
    """A round of NodeResourceTopologyMatch's overreserve cache resync that took fresh reports
    for these nodes (a round that takes none changes nothing, and is not recorded)."""

    t: float
    w: float
    nodes: list[str]


class RejectHeld(msgspec.Struct, tag="reject-held", tag_field="record", omit_defaults=True):
    """Every bind held at Permit was answered with `reason` (`PermitBinder.reject_all`); with
    `stop`, the server was stopping and refused to hold any bind after (`stop_holding`). The
    replay answers the holds here: nothing else in the recording says they ended."""

    t: float
    w: float
    reason: str
    stop: bool = False


Entry = In | Out | Load | Apply | Delete | RelistBegin | RelistPage | RelistEnd | Expire | \
    Metrics | Bind | PermitTimeout | NRTResync | RejectHeld
INFORMER_CHANGES = (Apply, Delete, RelistBegin, RelistPage, RelistEnd)

_encoder = msgspec.json.Encoder()
_header = msgspec.json.Decoder(Header)
_entry = msgspec.json.Decoder(Entry)


class RecordingError(ValueError):
    """A recording that cannot be read; the message names the file and line."""


def record_name(entry: Entry) -> str:
    """The entry's `record` member (`in`, `load`, ...)."""
    return str(type(entry).__struct_config__.tag)


def encode(entry: Header | Entry) -> bytes:
    return _encoder.encode(entry) + b"\n"


def decode_entry(line: bytes) -> Entry:
    """One entry line (not the header)."""
    return _entry.decode(line)


def body_fields(body: bytes | bytearray | memoryview) -> tuple[str | None, str | None]:
    """(body, body_base64) for exact bytes: the text when they are UTF-8, else base64."""
    raw = bytes(body)
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError:
        return None, base64.b64encode(raw).decode("ascii")


def body_bytes(entry: In | Out) -> bytes:
    """The exact bytes an `in` or `out` recorded."""
    if entry.body_base64 is not None:
        return base64.b64decode(entry.body_base64)
    return (entry.body or "").encode("utf-8")


class Recording(msgspec.Struct):
    """One recording file read back."""

    path: Path
    header: Header
    entries: list[Entry]
    #: The last line was cut short (the process was killed while writing it): left out.
    truncated: bool = False
    #: The line number of each entry in the file (for errors that name it).
    lines: list[int] = msgspec.field(default_factory=list)


def read(path: str | Path) -> Recording:
    """Read a recording file; a last line cut short is left out (and flagged)."""
    path = Path(path)
    data = path.read_bytes()
    if path.suffix == ".gz":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise RecordingError(f"{path}: {exc}") from None
    lines = data.split(b"\n")
    if not lines or not lines[0].strip():
        raise RecordingError(f"{path}: empty recording")
    try:
        header = _header.decode(lines[0])
    except msgspec.DecodeError as exc:
        raise RecordingError(f"{path}:1: not a recording header: {exc}") from None
    if header.format != FORMAT:
        raise RecordingError(f"{path}: format {header.format}, this extender reads {FORMAT}")
    entries: list[Entry] = []
    numbers: list[int] = []
    truncated = False
    body = lines[1:]
    for number, line in enumerate(body, start=2):
        if not line.strip():
            continue
        try:
            entries.append(_entry.decode(line))
            numbers.append(number)
        except msgspec.DecodeError as exc:
            if number == len(body) + 1:  # the last line, without its newline
                truncated = True
                break
            raise RecordingError(f"{path}:{number}: {exc}") from None
    return Recording(path, header, entries, truncated, numbers)


def files(directory: str | Path) -> list[Path]:
    """The recording files of a `--record` directory, in the order they were started."""
    found = [(int(m.group(1)), path) for path in Path(directory).iterdir()
             if (m := FILE_NAME.fullmatch(path.name)) is not None]
    return [path for _, path in sorted(found)]


def recordings_in(path: str | Path) -> list[Path]:
    """The recordings `path` names: itself if it is not a directory, else every recording
    file in it and below (none: an empty list)."""
    path = Path(path)
    if not path.is_dir():
        return [path]
    folders = sorted({path, *(p.parent for p in path.rglob("recording-*"))})
    return [file for folder in folders for file in files(folder)]


def iter_exchanges(recording: Recording) -> Iterator[tuple[In | None, Out]]:
    """Each exchange's (`in` or None, `out`), in reply order."""
    opened: dict[int, In] = {}
    for entry in recording.entries:
        if isinstance(entry, In):
            opened[entry.id] = entry
        elif isinstance(entry, Out):
            yield opened.pop(entry.id, None), entry
