"""Turning a request's `NodeNames` or `Nodes` into the engine's `NodeInfo` candidates.

Which form a body holds, and whether its names are a list of table rows, `api.reading` decides."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import msgspec

from extender import wire
from extender.api.body import BadRequest
from extender.api.rowreply import NameList
from extender.engine.cluster import ClusterState
from extender.engine.framework import Status, unresolvable, unschedulable
from extender.model import k8s
from extender.model.node import NodeView
from extender.model.nodeinfo import NodeInfo
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
    """The names' nodes in order; a name the state does not hold is rejected, not dropped."""
    found = list(map(state.nodes.get, names))
    if None not in found:  # the common case, decided at C speed
        return Candidates(names, found, None, {})
    infos = []
    rejected: dict[str, Status] = {}
    for name, info in zip(names, found, strict=True):
        if info is None:
            # Our watch may lag the scheduler's: the filter verb then reads the node (`api.catchup`).
            rejected[name] = _UNKNOWN
        else:
            infos.append(info)
    return Candidates(names, infos, None, rejected)


_UNKNOWN = unschedulable("", UNKNOWN_NODE)


def unknown_names(candidates: Candidates) -> list[str]:
    """The names the state held no node of, in request order."""
    return [name for name, status in candidates.rejected.items() if status is _UNKNOWN]


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
