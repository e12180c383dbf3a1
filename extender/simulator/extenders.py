"""kube-scheduler's `HTTPExtender`, for simulating with a running extender in the loop.

Same wire format and semantics as the scheduler's client (reference/protocol.md §2): POST
`<urlPrefix>/<verb>` with PascalCase JSON, built with the project's wire types
(`extender/wire.py`: `ExtenderArgs`, `ExtenderPreemptionArgs`, `ExtenderBindingArgs`; keys in
Go's field order, unset pointers as `null`, pods and nodes as the simulation holds them); a
non-200 reply or a non-empty `Error` is an error; reply keys match case-insensitively;
prioritize errors are ignored; scores are added to the plugin totals as
`Score × weight × 10`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import msgspec

from extender import wire
from extender.engine.preemption.victims import Victims
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

DEFAULT_TIMEOUT = 5.0  # DefaultExtenderTimeout
EXTENDER_PLUGIN = "Extender"  # framework.ExtenderName, recorded as a rejecting "plugin"

_encoder = msgspec.json.Encoder()


def _raw(obj: Mapping[str, Any]) -> Any:
    """A Kubernetes object as the simulation holds it (its JSON map), embedded in a wire type
    as its exact bytes: the wire's typed `Pod` fields decode the reading side, and the sending
    side passes every field of the object on, modelled or not."""
    return msgspec.Raw(_encoder.encode(obj))


class ExtenderError(Exception):
    """A failed call: transport error, non-200, undecodable reply, or `Error` set."""


def _get(reply: Any, key: str) -> Any:
    """A reply field, matched case-insensitively as Go's decoder does."""
    if not isinstance(reply, Mapping):
        return None
    if key in reply:
        return reply[key]
    lowered = key.lower()
    for k, v in reply.items():
        if isinstance(k, str) and k.lower() == lowered:
            return v
    return None


@dataclass(slots=True)
class FilterReply:
    passed: list[NodeInfo]
    failed: dict[str, str] = field(default_factory=dict)
    failed_unresolvable: dict[str, str] = field(default_factory=dict)


#: From this release an ignorable extender's failed bind is skipped, as its failed filter
#: always was: the next interested binder, else kube-scheduler's own, binds the pod
#: (kubernetes#122503, in 1.30; before it the bind failed).
IGNORABLE_BIND_SKIPPED = (1, 30)


def extenders_binding(extenders: Sequence[HttpExtender], pod: PodView, node_name: str,
                      version: tuple[int, int]) -> tuple[bool, str]:
    """kube-scheduler's `extendersBinding`: whether an extender took the bind, and its error
    message ("" when it bound). The first binder interested in the pod binds it."""
    for extender in extenders:
        if not extender.bind_verb or not extender.is_interested(pod):
            continue
        try:
            extender.bind(pod, node_name)
        except ExtenderError as exc:
            if extender.ignorable and version >= IGNORABLE_BIND_SKIPPED:
                continue
            return True, str(exc)
        return True, ""
    return False, ""


class HttpExtender:
    """One `extenders[]` entry of a KubeSchedulerConfiguration."""

    def __init__(
        self,
        url_prefix: str,
        *,
        filter_verb: str = "filter",
        prioritize_verb: str = "prioritize",
        preempt_verb: str = "preempt",
        bind_verb: str = "",
        weight: int = 1,
        node_cache_capable: bool = True,
        ignorable: bool = False,
        managed_resources: Sequence[str] = (),
        timeout: float = DEFAULT_TIMEOUT,
        client: httpx.Client | None = None,
    ) -> None:
        self.url_prefix = url_prefix.rstrip("/")
        self.filter_verb = filter_verb
        self.prioritize_verb = prioritize_verb
        self.preempt_verb = preempt_verb
        self.bind_verb = bind_verb
        self.weight = weight
        self.node_cache_capable = node_cache_capable
        self.ignorable = ignorable
        self.managed_resources = frozenset(managed_resources)
        self._client = client or httpx.Client(timeout=timeout)
        self.calls: dict[str, int] = {}
        #: verb -> failed calls (transport error, non-200, undecodable, `Error` set).
        self.failures: dict[str, int] = {}

    def _failed(self, verb: str, message: str) -> ExtenderError:
        self.failures[verb] = self.failures.get(verb, 0) + 1
        return ExtenderError(message)

    @property
    def name(self) -> str:
        return self.url_prefix

    def close(self) -> None:
        self._client.close()

    def is_interested(self, pod: PodView) -> bool:
        return not self.managed_resources or bool(self.managed_resources & pod.request_names)

    def _post(self, verb: str, body: Any) -> Any:
        url = f"{self.url_prefix}/{verb}"
        self.calls[verb] = self.calls.get(verb, 0) + 1
        try:
            resp = self._client.post(url, content=_encoder.encode(body),
                                     headers={"Content-Type": "application/json"})
        except httpx.HTTPError as exc:
            raise self._failed(verb, f"failed {verb} with extender at URL {url}: {exc}") from None
        if resp.status_code != 200:
            raise self._failed(verb, f"failed {verb} with extender at URL {url}, code {resp.status_code}")
        try:
            return msgspec.json.decode(resp.content)
        except msgspec.DecodeError as exc:
            raise self._failed(verb, f"failed {verb} with extender at URL {url}: {exc}") from None

    def _args(self, pod_raw: Mapping[str, Any], nodes: Sequence[NodeInfo],
              node_raw: Mapping[str, Any] | None) -> wire.ExtenderArgs:
        if self.node_cache_capable:
            return wire.ExtenderArgs(Pod=_raw(pod_raw), Nodes=None,
                                     NodeNames=[n.name for n in nodes])
        items = [msgspec.Raw(_encoder.encode((node_raw or {}).get(n.name)
                                             or {"metadata": {"name": n.name}}))
                 for n in nodes]
        return wire.ExtenderArgs(Pod=_raw(pod_raw), Nodes=wire.NodeList({}, items),
                                 NodeNames=None)

    def filter(self, pod_raw: Mapping[str, Any], nodes: Sequence[NodeInfo],
               node_raw: Mapping[str, Any] | None = None) -> FilterReply:
        if not self.filter_verb:
            return FilterReply(list(nodes))
        reply = self._post(self.filter_verb, self._args(pod_raw, nodes, node_raw))
        error = _get(reply, "Error")
        if error:
            raise self._failed(self.filter_verb, str(error))
        by_name = {n.name: n for n in nodes}
        names = _get(reply, "NodeNames")
        returned = _get(reply, "Nodes")
        passed: list[NodeInfo] = []
        if self.node_cache_capable and names is not None:
            for name in names:
                if name not in by_name:
                    raise ExtenderError(f"extender {self.name!r} claims a filtered node {name!r} "
                                        "which is not found in the input node list")
                passed.append(by_name[name])
        elif returned is not None:
            for item in _get(returned, "items") or ():
                name = ((_get(item, "metadata") or {}).get("name")) if isinstance(item, Mapping) else None
                if name in by_name:
                    passed.append(by_name[name])
        return FilterReply(passed, dict(_get(reply, "FailedNodes") or {}),
                           dict(_get(reply, "FailedAndUnresolvableNodes") or {}))

    def prioritize(self, pod_raw: Mapping[str, Any], nodes: Sequence[NodeInfo],
                   node_raw: Mapping[str, Any] | None = None) -> dict[str, int]:
        """host -> Score (0..10 expected, not clamped); {} on any error, as upstream ignores it."""
        if not self.prioritize_verb:
            return {}
        try:
            reply = self._post(self.prioritize_verb, self._args(pod_raw, nodes, node_raw))
        except ExtenderError:
            return {}
        scores: dict[str, int] = {}
        if not isinstance(reply, list):
            return {}
        for entry in reply:
            host, score = _get(entry, "Host"), _get(entry, "Score")
            if not isinstance(host, str) or not isinstance(score, int) or isinstance(score, bool):
                return {}  # a type mismatch fails Go's decode of the whole reply
            scores[host] = scores.get(host, 0) + score
        return scores

    def process_preemption(self, pod_raw: Mapping[str, Any],
                           victims: Mapping[str, Victims],
                           pod_raw_of: Mapping[str, Any] | None = None) -> dict[str, tuple[list[str], int]]:
        """The candidates (node -> the engine's `Victims`) out; node -> (victim uids,
        NumPDBViolations) as the extender returned them."""
        body: wire.ExtenderPreemptionArgs
        if self.node_cache_capable:
            body = wire.ExtenderPreemptionArgs(Pod=_raw(pod_raw), NodeNameToMetaVictims={
                node: wire.MetaVictims([wire.MetaPod(p.uid) for p in v.pods],
                                       v.num_pdb_violations)
                for node, v in victims.items()})
        else:
            raw = pod_raw_of or {}
            body = wire.ExtenderPreemptionArgs(Pod=_raw(pod_raw), NodeNameToVictims={
                node: wire.Victims([_raw(raw.get(p.uid) or {"metadata": {
                    "uid": p.uid, "name": p.name, "namespace": p.namespace}}) for p in v.pods],
                    v.num_pdb_violations)
                for node, v in victims.items()})
        reply = self._post(self.preempt_verb, body)
        result: dict[str, tuple[list[str], int]] = {}
        for node, meta in (_get(reply, "NodeNameToMetaVictims") or {}).items():
            uids = [str(_get(p, "UID") or "") for p in (_get(meta, "Pods") or ())]
            result[node] = (uids, int(_get(meta, "NumPDBViolations") or 0))
        return result

    def bind(self, pod: PodView, node_name: str) -> None:
        reply = self._post(self.bind_verb, wire.ExtenderBindingArgs(
            PodName=pod.name, PodNamespace=pod.namespace, PodUID=pod.uid, Node=node_name))
        error = _get(reply, "Error")
        if error:
            raise self._failed(self.bind_verb, str(error))
