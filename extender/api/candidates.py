"""Turning a request's `NodeNames` or `Nodes` into the engine's `NodeInfo` candidates."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import msgspec

from extender import wire
from extender.api.body import BadRequest
from extender.api.observe import RequestRecord
from extender.api.runtime import Runtime
from extender.api.verb import decode, limit_candidates, pod_view
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
    """Candidate nodes in request order; `raw` holds each node's bytes in Nodes form."""

    names: list[str]
    infos: list[NodeInfo]
    raw: dict[str, msgspec.Raw] | None = None
    rejected: dict[str, Status] = field(default_factory=dict)


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
            view = NodeView.from_k8s(wire.decode_node(item))
        except msgspec.DecodeError as exc:
            raise BadRequest(f"invalid request: Nodes.items[{index}]: {exc}") from None
        except QuantityError as exc:
            rejected[name] = unresolvable("", INVALID_NODE.format(exc))
            continue
        infos.append(known.sharing_pods(view) if known is not None else NodeInfo(view))
    return Candidates(names, infos, raw, rejected)


def scheduling_request(runtime: Runtime, body: bytes,
                       record: RequestRecord) -> tuple[PodView, Candidates]:
    """Decode a filter/prioritize body into the pod's view and its candidate nodes."""
    args = decode(body, wire.ExtenderArgs)
    pod = pod_view(args.Pod)
    record.pod = pod.key
    limit_candidates(_count(args), runtime)
    candidates = resolve(args, runtime.state)
    record.nodes = len(candidates.names)
    # A later bind of this pod needs its requests; the scheduler's bind call does not carry them.
    # (On the loop thread: a large request runs here in the worker, see api.offload.)
    runtime.offload.call_on_loop(runtime.state.remember_pending, pod)
    return pod, candidates


def _count(args: wire.ExtenderArgs) -> int:
    if args.NodeNames is not None:
        return len(args.NodeNames)
    return len(args.Nodes.items or ()) if args.Nodes is not None else 0


def resolve(args: wire.ExtenderArgs, state: ClusterState) -> Candidates:
    if args.NodeNames is not None:
        return from_names(args.NodeNames, state)
    if args.Nodes is not None:
        return from_nodes(args.Nodes.items or [], state)
    raise BadRequest("invalid request: one of Nodes or NodeNames must be set")
