"""What a request body says: decided here, and only here.

Every verb's body is checked and decoded by `decode` (a 400 with a readable message when it
cannot be). Filter and prioritize bodies, sent over and over with the same candidate list and
the same pod bytes, become one `SchedulingRequest` the cheapest way that gives what a whole
decode would (`scheduling_request`):

1. a `NodeNames` list remembered at the body's end (`RowReplies.split`): only the head (the
   pod) is decoded; the list's bytes are compared, never parsed;
2. otherwise the whole body, with `Pod` and `NodeNames` kept as bytes (`wire.SchedulingArgs`);
3. its pod recognised by those bytes (a recent request's view and signature), or taken from a
   recent replica of the same spec (rebound to its identity), or decoded and built;
4. its candidates in the form sent: the table rows of a known list, names, or Node objects.

The verbs get the request, never look at the body again, and know none of these ways.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from typing import TypeVar

import msgspec

from extender import wire
from extender.api.body import BadRequest
from extender.api.bounded import DEFAULT_CACHE_BYTES, BoundedCache
from extender.api.candidates import Candidates, from_names, from_nodes
from extender.api.observe import RequestRecord
from extender.api.rowreply import NameList, replies_for
from extender.api.runtime import Runtime
from extender.engine.nodetable import NodeTable
from extender.model import k8s
from extender.model.pod import PodView
from extender.model.quantity import QuantityError


@dataclass(slots=True)
class SchedulingRequest:
    """A filter, prioritize or explain body, read: all its verb needs of it."""

    pod: PodView
    #: `pod_signature` of the pod, the key of its reusable replies (explain keeps none: empty).
    signature: bytes
    #: The nodes in the form sent (`Candidates.listed`: the table rows of a NodeNames list).
    candidates: Candidates


def scheduling_request(runtime: Runtime, body: bytes, record: RequestRecord) -> SchedulingRequest:
    """A filter/prioritize body, read as the module says; its pod is remembered for its bind."""
    state = runtime.state
    state.table.sync()
    listed, args = _after_known_list(body, state.table)
    if args is None:
        args = decode(body, wire.SchedulingArgs)
    pod, signature = pod_from_raw(args.Pod, body)
    record.pod = pod.key
    candidates = _candidates(args, listed, runtime)
    record.nodes = candidates.count
    runtime.offload.free_in_slices(candidates.names, candidates.infos, candidates.rejected,
                                   *([candidates.raw] if candidates.raw is not None else []))
    # A later bind of this pod needs its requests; the scheduler's bind call does not carry them.
    # (On the loop thread: a large request runs here in the worker, see api.offload.)
    runtime.offload.call_on_loop(state.remember_pending, pod)
    return SchedulingRequest(pod, signature, candidates)


def explain_request(runtime: Runtime, body: bytes, record: RequestRecord) -> SchedulingRequest:
    """An /explain body (a filter body), decoded whole and read afresh: an explanation must not
    depend on what earlier requests left, nor leave anything behind."""
    args = decode(body, wire.ExtenderArgs)
    pod = pod_view(args.Pod)
    record.pod = pod.key
    state = runtime.state
    if args.NodeNames is not None:
        limit_candidates(len(args.NodeNames), runtime)
        candidates = from_names(args.NodeNames, state)
    elif args.Nodes is not None:
        items = args.Nodes.items or []
        limit_candidates(len(items), runtime)
        candidates = from_nodes(items, state)
    else:
        raise BadRequest("invalid request: one of Nodes or NodeNames must be set")
    record.nodes = candidates.count
    return SchedulingRequest(pod, b"", candidates)


S = TypeVar("S", bound=msgspec.Struct)


def decode(body: bytes, kind: type[S]) -> S:
    """The body as `kind`; any failure to decode it is a 400 with a readable message."""
    check_utf8(body)
    try:
        return wire.decode(body, kind)  # type: ignore[return-value]
    except msgspec.DecodeError as exc:
        raise BadRequest(wire.describe_decode_error(exc)) from None
    except RecursionError:
        raise BadRequest("malformed JSON: nested too deeply") from None
    except (ValueError, OverflowError, MemoryError) as exc:  # UnicodeDecodeError is a ValueError
        raise BadRequest(f"malformed JSON: {type(exc).__name__}: {exc}"[:500]) from None


_CHECK_CHUNK = 1 << 20


def check_utf8(body: bytes) -> None:
    """Refuse a body that is not valid UTF-8 (JSON text must be): nothing decoded from it, and
    nothing of it echoed in a reply, can then carry invalid UTF-8. ASCII bodies (the usual
    case) are recognised at memory speed; others are checked 1 MiB at a time."""
    if body.isascii():
        return
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(body)
    try:
        for start in range(0, len(view), _CHECK_CHUNK):
            decoder.decode(view[start:start + _CHECK_CHUNK], final=start + _CHECK_CHUNK >= len(view))
    except UnicodeDecodeError as exc:
        raise BadRequest(f"malformed JSON: invalid UTF-8 at byte {start + exc.start}: "
                         f"{exc.reason}") from None


def limit_candidates(count: int, runtime: Runtime) -> None:
    """Refuse a request with more candidate nodes than `runtime.max_candidates`."""
    if count > runtime.max_candidates:
        raise BadRequest(f"{count} candidate nodes exceed the limit of {runtime.max_candidates} "
                         "per request (serve --max-candidates)", 413)


# ---- 1. a known list at the body's end ----------------------------------------------------------
def _after_known_list(body: bytes, table: NodeTable) -> tuple[NameList | None, wire.SchedulingArgs | None]:
    """A body ending with a remembered NodeNames list, decoded without it; (None, None) when it
    does not, or its head does not read alone (the whole body is then decoded, and words any
    error as sent)."""
    found = replies_for(table).split(body, table)
    if found is None:
        return None, None
    listed, cut = found
    head = body[:cut] + b"}"
    try:
        check_utf8(head)
        args = wire.decode(head, wire.SchedulingArgs)
    except (BadRequest, ValueError, RecursionError, OverflowError):  # DecodeError is a ValueError
        return None, None
    # A second NodeNames member in the head loses to the last one, as in a whole decode.
    return listed, args  # type: ignore[return-value]


# ---- 3. the pod, recognised by its bytes ---------------------------------------------------------
#: Recent filter/prioritize requests' pods, by their bytes: a pod's filter is followed by its
#: prioritize with the same bytes, and a retried pod comes back unchanged. Views are never
#: changed in place. Bounded in bytes too (a sixteenth of `--cache-bytes`): a pod too large
#: for it is decoded for each request instead.
RECENT_PODS = 256
_recent_pods: BoundedCache[bytes, tuple[PodView, bytes]] = BoundedCache(
    RECENT_PODS, DEFAULT_CACHE_BYTES // 16)
#: Recent pods' views by `pod_signature`: another replica of a workload (the same spec, its own
#: name and uid) takes a recent replica's view, rebound to its identity, instead of building
#: one (a twentieth of the cost). Bounded like `_recent_pods`.
_views_by_spec: BoundedCache[bytes, PodView] = BoundedCache(RECENT_PODS, DEFAULT_CACHE_BYTES // 16)


def pod_from_raw(raw: msgspec.Raw, body: bytes) -> tuple[PodView, bytes]:
    """The view and `pod_signature` of a filter/prioritize request's pod from its bytes (`raw`,
    within `body`): the same bytes as a recent request's reuse its view and signature."""
    key = bytes(raw)
    found = _recent_pods.get(key)
    if found is not None:
        return found
    if key in (b"", b"null"):
        raise BadRequest("invalid request: Pod is required")
    try:
        pod = wire.decode_pod(key)
    except msgspec.DecodeError as exc:
        # Worded as a decode of the whole body words it (the path starts at `$.Pod`).
        decode(body, wire.SchedulingArgsDecoded)
        raise BadRequest(wire.describe_decode_error(exc)) from None
    found = _view_by_spec(pod, len(key))
    _recent_pods.put(key, found, len(key) + len(found[1]))
    return found


def replica_pod_view(pod: k8s.Pod | None) -> PodView:
    """`pod_view`, taken from a recent pod of the same content when there is one (a
    workload's replica, or the pod itself from its filter): for a body decoded whole, as
    preempt's is."""
    if pod is None:
        raise BadRequest("invalid request: Pod is required")
    return _view_by_spec(pod, None)[0]


def _view_by_spec(pod: k8s.Pod, size: int | None) -> tuple[PodView, bytes]:
    """The pod's view and `pod_signature`: a recent same-content view rebound to its identity,
    or a new one, kept (counted as `size` bytes of pod and its signature; `size` None: the
    signature's length, about the pod's)."""
    signature = pod_signature(pod)
    same_spec = _views_by_spec.get(signature)
    if same_spec is not None:
        return same_spec.rebound(pod.metadata), signature
    view = pod_view(pod)
    size = len(signature) if size is None else size
    _views_by_spec.put(signature, view, size + len(signature))  # as `_recent_pods` counts it
    return view, signature


def pod_view(pod: k8s.Pod | None) -> PodView:
    """The pod's view; a pod the engine cannot read is a 400."""
    if pod is None:
        raise BadRequest("invalid request: Pod is required")
    try:
        return PodView.from_k8s(pod)
    except QuantityError as exc:
        meta = pod.metadata
        raise BadRequest(f"invalid Pod {meta.namespace}/{meta.name}: {exc}") from None


def pod_signature(pod: k8s.Pod) -> bytes:
    """The pod as the plugins read it (the decoded struct holds nothing else), without what
    names one object (name, uid, version, creation time): equal for a workload's pods. Its
    conditions count only when true (`PodView` reads no other): kube-scheduler sends a pod it
    retries with a `PodScheduled: False` condition stamped with its own time."""
    status = pod.status
    if status.conditions and any(c.status != "True" for c in status.conditions):
        status = msgspec.structs.replace(
            status, conditions=[c for c in status.conditions if c.status == "True"] or None)
    return msgspec.json.encode(msgspec.structs.replace(pod, metadata=msgspec.structs.replace(
        pod.metadata, name="", uid="", resource_version="", creation_timestamp=None),
        status=status))


# ---- 4. the candidates, in the form sent --------------------------------------------------------
_NULL = msgspec.Raw(b"null")


def _candidates(args: wire.SchedulingArgs, listed: NameList | None, runtime: Runtime) -> Candidates:
    """Table rows when every name is a node of the state (the verbs' row path); the names'
    or the Node objects' infos otherwise."""
    state = runtime.state
    names = args.NodeNames
    if listed is None and len(names) and names != _NULL:  # a list not known from the body's end
        try:
            listed, decoded = replies_for(state.table).resolve(names, state.table)
        except msgspec.DecodeError as exc:
            raise BadRequest(f"invalid request: NodeNames: {exc}") from None
        if decoded is not None:  # some name is no node of the state
            limit_candidates(len(decoded), runtime)
            return from_names(decoded, state)
    if listed is not None:
        limit_candidates(len(listed.rows), runtime)
        return Candidates([], [], listed=listed)
    if args.Nodes is not None:
        items = args.Nodes.items or []
        limit_candidates(len(items), runtime)
        return from_nodes(items, state)
    raise BadRequest("invalid request: one of Nodes or NodeNames must be set")
