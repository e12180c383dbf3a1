"""The `k8s.io/kube-scheduler/extender/v1` types, with their exact PascalCase keys.

Go's structs carry no json tags, so the keys are the Go field names and every unset pointer is
sent as `null`. Requests are decoded from the raw body in one pass; `Nodes.items` stay raw
bytes (`msgspec.Raw`) so the nodes that pass are echoed exactly as the scheduler sent them.
Replies are encoded straight to bytes.
"""

from __future__ import annotations

import msgspec

from extender.model import k8s

MIN_EXTENDER_PRIORITY = 0
MAX_EXTENDER_PRIORITY = 10


class _Wire(msgspec.Struct, gc=False):
    pass


class NodeList(_Wire):
    """`v1.NodeList` with its items kept as the bytes the scheduler sent."""

    metadata: dict[str, object] = msgspec.field(default_factory=dict)
    items: list[msgspec.Raw] | None = None


class ExtenderArgs(_Wire):
    Pod: k8s.Pod | None = None
    Nodes: NodeList | None = None
    NodeNames: list[str] | None = None


class SchedulingArgs(_Wire):
    """`ExtenderArgs` as filter and prioritize read it: `Pod` and `NodeNames` kept as the bytes
    sent, decoded only when the same bytes were not seen lately (`api.reading.pod_from_raw`,
    `api.rowreply.RowReplies.resolve`). Empty when absent; `null` when sent so."""

    Pod: msgspec.Raw = msgspec.Raw()
    Nodes: NodeList | None = None
    NodeNames: msgspec.Raw = msgspec.Raw()


class SchedulingArgsDecoded(_Wire):
    """`SchedulingArgs` with its pod decoded: what words a bad pod's error, with its path."""

    Pod: k8s.Pod | None = None
    Nodes: NodeList | None = None
    NodeNames: msgspec.Raw = msgspec.Raw()


class ExtenderFilterResult(_Wire):
    Nodes: NodeList | None = None
    NodeNames: list[str] | None = None
    FailedNodes: dict[str, str] | None = None
    FailedAndUnresolvableNodes: dict[str, str] | None = None
    Error: str = ""


class HostPriority(_Wire, array_like=False):
    Host: str
    Score: int


class MetaPod(_Wire):
    UID: str = ""


class MetaVictims(_Wire):
    Pods: list[MetaPod] | None = None
    NumPDBViolations: int = 0


class VictimMeta(_Wire):
    uid: str = ""


class VictimPod(_Wire):
    """A proposed victim in `NodeNameToVictims` form: only its UID is read (the state holds
    the pod); the rest of each whole Pod object is skipped, not built."""

    metadata: VictimMeta = msgspec.field(default_factory=VictimMeta)


class Victims(_Wire):
    Pods: list[VictimPod] | None = None
    NumPDBViolations: int = 0


class ExtenderPreemptionArgs(_Wire):
    Pod: k8s.Pod | None = None
    NodeNameToVictims: dict[str, Victims | None] | None = None
    NodeNameToMetaVictims: dict[str, MetaVictims | None] | None = None


class ExtenderPreemptionResult(_Wire):
    NodeNameToMetaVictims: dict[str, MetaVictims] | None = None


class ExtenderBindingArgs(_Wire):
    PodName: str = ""
    PodNamespace: str = ""
    PodUID: str = ""
    Node: str = ""


class ExtenderBindingResult(_Wire):
    Error: str = ""


class ErrorReply(_Wire):
    """The body of a 4xx/5xx reply for verbs whose protocol type has no `Error` field."""

    Error: str


_decoders = {
    kind: msgspec.json.Decoder(kind)
    for kind in (ExtenderArgs, SchedulingArgs, SchedulingArgsDecoded, ExtenderPreemptionArgs, ExtenderBindingArgs, ExtenderFilterResult,
                 ExtenderPreemptionResult, ExtenderBindingResult)
}
_node_decoder = msgspec.json.Decoder(k8s.Node)
_pod_decoder = msgspec.json.Decoder(k8s.Pod)
_request_node_decoder = msgspec.json.Decoder(k8s.RequestNode)
_encoder = msgspec.json.Encoder()

DecodeError = msgspec.DecodeError  # ValidationError is a subclass


def decode(body: bytes, kind: type) -> msgspec.Struct:
    """Decode a request or reply body into one of the types above."""
    return _decoders[kind].decode(body)


def decode_node(raw: msgspec.Raw | bytes) -> k8s.Node:
    return _node_decoder.decode(raw)


def decode_pod(raw: msgspec.Raw | bytes) -> k8s.Pod:
    return _pod_decoder.decode(raw)


def decode_request_node(raw: msgspec.Raw | bytes) -> k8s.RequestNode:
    """A node of a request's `Nodes.items`, as much of it as `NodeView.from_request` reads."""
    return _request_node_decoder.decode(raw)


def encode(value: object) -> bytes:
    return _encoder.encode(value)


def describe_decode_error(exc: msgspec.DecodeError) -> str:
    """msgspec's message, phrased for an operator reading a scheduler event."""
    text = str(exc)
    if isinstance(exc, msgspec.ValidationError):
        return f"invalid request: {text}"
    return f"malformed JSON: {text}"
