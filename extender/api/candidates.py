"""Turning a request's `NodeNames` or `Nodes` into the engine's `NodeInfo` candidates."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import msgspec

from extender import wire
from extender.api.body import BadRequest, check_utf8
from extender.api.observe import RequestRecord
from extender.api.rowreply import NameList, replies_for
from extender.api.runtime import Runtime
from extender.api.verb import decode, limit_candidates, pod_from_raw
from extender.engine.cluster import ClusterState
from extender.engine.framework import Status, unresolvable, unschedulable
from extender.model import k8s
from extender.model.node import NodeView
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.model.quantity import QuantityError

UNKNOWN_NODE = "node(s) were not found in the extender's cluster state"
INVALID_NODE = "node object is invalid: {}"


@dataclass(slots=True)
class Candidates:
    """Candidate nodes in request order; `raw` holds each node's bytes in Nodes form.

    When every name of a NodeNames request is a node of the state, `listed` holds their
    table rows instead, and `names`/`infos` stay empty: the verbs take the row path."""

    names: list[str]
    infos: list[NodeInfo]
    raw: dict[str, msgspec.Raw] | None = None
    rejected: dict[str, Status] = field(default_factory=dict)
    listed: NameList | None = None

    @property
    def count(self) -> int:
        return len(self.listed.rows) if self.listed is not None else len(self.names)


def from_names(names: list[str], state: ClusterState) -> Candidates:
    found = list(map(state.nodes.get, names))
    if None not in found:  # the common case, decided at C speed
        return Candidates(names, found, None, {})
    infos = []
    rejected: dict[str, Status] = {}
    for name, info in zip(names, found, strict=True):
        if info is None:
            # Our state may lag the scheduler's; preemption or a later retry can still succeed.
            rejected[name] = _UNKNOWN
        else:
            infos.append(info)
    return Candidates(names, infos, None, rejected)


_UNKNOWN = unschedulable("", UNKNOWN_NODE)


class _Identity(msgspec.Struct):
    """Just enough of a Node to recognise it: the rest of its bytes are skipped, not built."""

    metadata: k8s.ObjectMeta = msgspec.field(default_factory=k8s.ObjectMeta)


_identity = msgspec.json.Decoder(_Identity)

# Go marshals ObjectMeta in field order: `name` first, `resourceVersion` a few fields later. When
# a node's first bytes read that way (no escapes), they identify it without decoding ~10 KB.
_HEAD = re.compile(
    rb'\s*\{\s*"metadata"\s*:\s*\{\s*"name"\s*:\s*"([^"\\]*)"\s*,\s*'
    rb'(?:"(?:generateName|namespace|selfLink)"\s*:\s*"[^"\\]*"\s*,\s*)*'
    rb'(?:"uid"\s*:\s*"[^"\\]*"\s*,\s*)?"resourceVersion"\s*:\s*"([^"\\]*)"')


def _name_and_version(item: msgspec.Raw, index: int) -> tuple[str, str]:
    head = _HEAD.match(memoryview(item)[:1024])
    if head is not None:
        return head.group(1).decode(), head.group(2).decode()
    try:
        meta = _identity.decode(item).metadata
    except msgspec.DecodeError as exc:
        raise BadRequest(f"invalid request: Nodes.items[{index}]: {exc}") from None
    return meta.name, meta.resource_version


def from_nodes(items: list[msgspec.Raw], state: ClusterState) -> Candidates:
    """Views of the request's Node objects, with the pods and totals the state holds for them.

    A node the state holds at the same resourceVersion is the same object version, so the
    state's view (and its memos) serve as they are; only other nodes are decoded and built.
    """
    names: list[str] = []
    infos: list[NodeInfo] = []
    raw: dict[str, msgspec.Raw] = {}
    rejected: dict[str, Status] = {}
    known_nodes = state.nodes
    for index, item in enumerate(items):
        name, version = _name_and_version(item, index)
        names.append(name)
        raw[name] = item
        known = known_nodes.get(name)
        if known is not None and version and known.node.resource_version == version:
            infos.append(known)
            continue
        try:
            view = NodeView.from_request(wire.decode_request_node(item))
        except msgspec.DecodeError as exc:
            raise BadRequest(f"invalid request: Nodes.items[{index}]: {exc}") from None
        except QuantityError as exc:
            rejected[name] = unresolvable("", INVALID_NODE.format(exc))
            continue
        infos.append(known.sharing_pods(view) if known is not None else NodeInfo(view))
    return Candidates(names, infos, raw, rejected)


@dataclass(slots=True)
class SchedulingRequest:
    """A filter or prioritize request, decoded."""

    pod: PodView
    #: `verb.pod_signature` of the pod: its content without its identity.
    signature: bytes
    candidates: Candidates


def scheduling_request(runtime: Runtime, body: bytes, record: RequestRecord) -> SchedulingRequest:
    """Decode a filter/prioritize body into the pod's view and its candidate nodes."""
    runtime.state.table.sync()
    listed, args = _known_list(body, runtime.state)
    if args is None:
        args = decode(body, wire.SchedulingArgs)
    pod, signature = pod_from_raw(args.Pod, body)
    record.pod = pod.key
    names = args.NodeNames
    if listed is not None:
        limit_candidates(len(listed.rows), runtime)
        candidates = Candidates([], [], listed=listed)
    elif len(names) and names != _NULL:
        candidates = _listed(names, runtime)
    elif args.Nodes is not None:
        limit_candidates(len(args.Nodes.items or ()), runtime)
        candidates = from_nodes(args.Nodes.items or [], runtime.state)
    else:
        raise BadRequest("invalid request: one of Nodes or NodeNames must be set")
    record.nodes = candidates.count
    # A later bind of this pod needs its requests; the scheduler's bind call does not carry them.
    # (On the loop thread: a large request runs here in the worker, see api.offload.)
    runtime.offload.call_on_loop(runtime.state.remember_pending, pod)
    return SchedulingRequest(pod, signature, candidates)


_NULL = msgspec.Raw(b"null")


def _known_list(body: bytes, state: ClusterState) -> tuple[NameList | None, wire.SchedulingArgs | None]:
    """A body ending with a remembered NodeNames list, decoded without it (see
    `RowReplies.split`); (None, None) when it does not, or its head does not read alone."""
    found = replies_for(state.table).split(body, state.table)
    if found is None:
        return None, None
    listed, cut = found
    head = body[:cut] + b"}"
    try:
        check_utf8(head)
        args = wire.decode(head, wire.SchedulingArgs)
    except (BadRequest, ValueError, RecursionError, OverflowError):  # DecodeError is a ValueError
        return None, None  # worded by decoding the whole body
    # A second NodeNames member in the head loses to the last one, as in a whole decode.
    return listed, args  # type: ignore[return-value]


def _listed(raw: msgspec.Raw, runtime: Runtime) -> Candidates:
    state = runtime.state
    try:
        listed, names = replies_for(state.table).resolve(raw, state.table)
    except msgspec.DecodeError as exc:
        raise BadRequest(f"invalid request: NodeNames: {exc}") from None
    if listed is not None:
        limit_candidates(len(listed.rows), runtime)
        return Candidates([], [], listed=listed)
    assert names is not None
    limit_candidates(len(names), runtime)
    return from_names(names, state)


def resolve(args: wire.ExtenderArgs, state: ClusterState) -> Candidates:
    if args.NodeNames is not None:
        return from_names(args.NodeNames, state)
    if args.Nodes is not None:
        return from_nodes(args.Nodes.items or [], state)
    raise BadRequest("invalid request: one of Nodes or NodeNames must be set")
