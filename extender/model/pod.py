"""`PodView`: what the engine reads of a Pod, decoded once with its matchers pre-built."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from sys import intern
from typing import Any, TypeVar

import msgspec

from extender.model import k8s
from extender.model.podaffinity import PodAffinityTerms
from extender.model.podamounts import derived_load, pod_amounts
from extender.model.podload import PodLoad
from extender.model.resources import Resources
from extender.model.scheduling import pod_group_name
from extender.model.selectors import (
    NodeSelectorMatcher,
    NodeTermMatcher,
    compile_terms,
    node_term_errors,
)
from extender.model.taints import Toleration
from extender.model.timeparse import parse_time

HostPort = tuple[str, str, int]  # (hostIP, protocol, port), normalised

_EMPTY_LABELS: Mapping[str, str] = {}
_NO_NAMES: frozenset[str] = frozenset()  # one object: each `frozenset()` is a new one
_placement_encoder = msgspec.json.Encoder(order="deterministic")

# Pods of one workload share labels and requests: keep one copy of each. Bounded so a
# pathological cluster cannot grow the tables without limit.
_SHARED_LIMIT = 100_000
_labels_table: dict[tuple[tuple[str, str], ...], Mapping[str, str]] = {}
_resources_table: dict[tuple, Resources] = {}
_values_table: dict[object, object] = {}
T = TypeVar("T")


def _shared_labels(labels: Mapping[str, str]) -> Mapping[str, str]:
    key = tuple(labels.items())
    found = _labels_table.get(key)
    if found is None:
        if len(_labels_table) >= _SHARED_LIMIT:
            _labels_table.clear()
        found = _labels_table[key] = {intern(k): intern(v) for k, v in key}
    return found


def _shared_resources(res: Resources) -> Resources:
    # allowed_pods too: a quota request can count the `pods` resource (the request vector
    # never does), and must not be taken for the vector without it.
    key = (res.milli_cpu, res.memory, res.ephemeral_storage, res.allowed_pods,
           tuple(sorted(res.scalar.items())))
    found = _resources_table.get(key)
    if found is None:
        if len(_resources_table) >= _SHARED_LIMIT:
            _resources_table.clear()
        found = _resources_table[key] = res
    return found


def _shared_value(value: T) -> T:
    """The one object kept for values equal to `value` (image tuples, priorities)."""
    found = _values_table.get(value)
    if found is None:
        if len(_values_table) >= _SHARED_LIMIT:
            _values_table.clear()
        found = _values_table[value] = value
    return found  # type: ignore[return-value]


NodeAffinityParts = tuple[NodeSelectorMatcher | None, frozenset[str] | None,
                          tuple[tuple[int, NodeTermMatcher], ...], str, bytes]
_node_affinity_table: dict[bytes, NodeAffinityParts] = {}


def _node_affinity_parts(affinity: k8s.NodeAffinity | None) -> NodeAffinityParts:
    """The view's NodeAffinity parts, parsed once per distinct affinity (a workload's pods
    share theirs; the parts are immutable): the required terms' matcher and pinned names, the
    preferred terms, their parse error, and their key (equal keys mean equal preferred terms,
    so equal NodeAffinity sums on any node view)."""
    key = _placement_encoder.encode(affinity)
    found = _node_affinity_table.get(key)
    if found is None:
        required = affinity.required_during_scheduling_ignored_during_execution if affinity else None
        found = (NodeSelectorMatcher(required) if required is not None else None,
                 _affinity_node_names(required), preferred_terms(affinity),
                 preferred_terms_error(affinity),
                 _placement_encoder.encode(
                     affinity.preferred_during_scheduling_ignored_during_execution if affinity else None))
        if len(_node_affinity_table) >= _SHARED_LIMIT:
            _node_affinity_table.clear()
        _node_affinity_table[key] = found
    return found


def _host_ports(spec: k8s.PodSpec) -> tuple[HostPort, ...]:
    """Host ports of containers and sidecar init containers, normalised as NodePorts does."""
    ports: list[HostPort] = []
    sidecars = [c for c in spec.init_containers or () if c.restart_policy == "Always"]
    for container in [*(spec.containers or ()), *sidecars]:
        for port in container.ports or ():
            if port.host_port > 0:
                ports.append((port.host_ip or "0.0.0.0", port.protocol or "TCP", port.host_port))
    return tuple(ports)


def preferred_terms(affinity: k8s.NodeAffinity | None) -> tuple[tuple[int, NodeTermMatcher], ...]:
    if affinity is None:
        return ()
    terms = []
    for pref in affinity.preferred_during_scheduling_ignored_during_execution or ():
        if pref.weight == 0 or pref.preference is None:
            continue
        compiled = compile_terms([pref.preference])
        if compiled:
            terms.append((pref.weight, compiled[0]))
    return tuple(terms)


def preferred_terms_error(affinity: k8s.NodeAffinity | None) -> str:
    """`NewPreferredSchedulingTerms`' error for the terms it would parse (weight 0 and empty
    terms are skipped), aggregated as Go aggregates errors; "" when they all parse."""
    if affinity is None:
        return ""
    errors: list[str] = []
    for i, pref in enumerate(affinity.preferred_during_scheduling_ignored_during_execution or ()):
        term = pref.preference
        if pref.weight == 0 or term is None or not (term.match_expressions or term.match_fields):
            continue
        errors.extend(node_term_errors(term, f"[{i}]"))
    return errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]" if errors else ""


def _affinity_node_names(required: k8s.NodeSelector | None) -> frozenset[str] | None:
    """NodeAffinity's PreFilter, on the raw terms as Go reads them: when every term pins
    `metadata.name In` values, the union over terms of each term's intersection; None when some
    term does not (the terms are ORed, so any node may match). Empty means the terms conflict."""
    if required is None or not required.node_selector_terms:
        return None
    names: set[str] = set()
    for term in required.node_selector_terms:
        term_names: set[str] | None = None
        for req in term.match_fields or ():
            if req.key == "metadata.name" and req.operator == "In":
                values = set(req.values or ())
                term_names = values if term_names is None else term_names & values
        if term_names is None:
            return None
        names |= term_names
    return frozenset(names)


class PodView:
    """An immutable view of a Pod. Build with `PodView.from_k8s`."""

    __slots__ = (
        "uid", "namespace", "name", "labels", "priority", "priority_class_name",
        "preemption_policy", "node_name", "nominated_node_name", "phase", "start_time",
        "terminating", "preempted_by_scheduler", "scheduled_time", "requests", "non_zero_cpu",
        "non_zero_memory", "host_ports", "tolerations", "node_selector", "required_affinity",
        "preferred_affinity", "images", "num_containers", "scheduler_name", "creation_time",
        "request_names", "scoring_non_zero_cpu", "scoring_non_zero_memory", "placement_key", "affinity_node_names",
        "preferred_affinity_key", "affinity_terms", "spread_constraints", "controller_ref",
        "preferred_affinity_error", "quota_requests", "pod_group", "gated", "_load",
        "pod_spec", "termination_grace_period",
    )

    uid: str
    namespace: str
    name: str
    labels: Mapping[str, str]
    priority: int
    priority_class_name: str
    preemption_policy: str
    node_name: str
    nominated_node_name: str
    phase: str
    start_time: float | None
    terminating: bool
    preempted_by_scheduler: bool
    scheduled_time: float | None
    requests: Resources
    non_zero_cpu: int
    non_zero_memory: int
    host_ports: tuple[HostPort, ...]
    tolerations: tuple[Toleration, ...]
    node_selector: Mapping[str, str] | None
    required_affinity: NodeSelectorMatcher | None
    preferred_affinity: tuple[tuple[int, NodeTermMatcher], ...]
    images: tuple[str, ...]
    num_containers: int
    scheduler_name: str
    creation_time: float | None
    request_names: frozenset[str]
    scoring_non_zero_cpu: int  # the pod as an incoming pod in scorers (differs only with
    scoring_non_zero_memory: int  # pod-level requests: calculatePodResourceRequest)
    placement_key: bytes  # what node-only filters read of the pod, as one hashable value
    affinity_node_names: frozenset[str] | None  # NodeAffinity PreFilter's node-name restriction
    preferred_affinity_key: bytes  # the preferred node-affinity terms, as one hashable value
    affinity_terms: PodAffinityTerms | None  # pod (anti-)affinity, kept for bound pods too
    spread_constraints: tuple[k8s.TopologySpreadConstraint, ...]
    controller_ref: tuple[str, str, str] | None  # (apiVersion, kind, name) of the controller
    preferred_affinity_error: str  # why a preferred node-affinity term does not parse
    quota_requests: Resources  # CapacityScheduling's request arithmetic (model.scheduling)
    pod_group: str  # the PodGroup the pod's label names, or ""
    gated: bool  # has scheduling gates
    #: What Trimaran's load-aware scorers read (requests, limits, cpu prediction): the `load`
    #: property. Most pods' figures follow from `requests`, and are built on first read only
    #: (an int: `podamounts.DERIVED_CPU` / `DERIVED_NO_CPU`); a copy that changed `requests`
    #: would have to set this too.
    _load: PodLoad | int
    #: The spec itself, for pending pods only (None for slim views): per-container requests
    #: (NodeResourceTopologyMatch aligns each container on a NUMA cell, `model.numa`).
    pod_spec: k8s.PodSpec | None
    #: `spec.terminationGracePeriodSeconds`, in seconds (None: not set; the API's default is 30).
    termination_grace_period: int | None

    def rebound(self, meta: k8s.ObjectMeta) -> PodView:
        """This view for another pod whose content differs only in what names one object
        (name, uid, creation time; `api.reading.pod_signature`): a workload's replicas. Every
        other part is shared, as views are immutable; copying them costs a twentieth of
        building them."""
        view = PodView.__new__(PodView)
        _copy_slots(self, view)
        view.uid, view.name = meta.uid, meta.name
        view.creation_time = parse_time(meta.creation_timestamp)
        return view

    @classmethod
    def from_k8s(cls, pod: k8s.Pod, slim: bool = False) -> PodView:
        """The view of a pod; repeated strings, label maps and request vectors are shared.

        `slim` (for bound pods the state keeps: up to 150 000 of them, each only load on its
        node or a preemption victim) skips the matchers that schedule a pod: tolerations, node
        selector and node affinity."""
        meta, spec, status = pod.metadata, pod.spec, pod.status
        self = cls.__new__(cls)
        self.uid = meta.uid
        self.namespace = namespace = intern(meta.namespace)
        self.name = meta.name
        self.labels = labels = _shared_labels(meta.labels) if meta.labels else _EMPTY_LABELS
        priority = spec.priority
        self.priority = _shared_value(priority) if priority else 0
        self.priority_class_name = intern(spec.priority_class_name)
        self.preemption_policy = intern(spec.preemption_policy or "PreemptLowerPriority")
        self.node_name = intern(spec.node_name)
        self.nominated_node_name = status.nominated_node_name
        self.phase = intern(status.phase)
        self.start_time = parse_time(status.start_time)
        self.creation_time = parse_time(meta.creation_timestamp)
        self.terminating = meta.deletion_timestamp is not None
        self.termination_grace_period = spec.termination_grace_period_seconds
        preempted = False
        scheduled = None
        for cond in status.conditions or ():
            kind = cond.type
            if kind == "PodScheduled":
                if cond.status == "True":
                    scheduled = parse_time(cond.last_transition_time)
            elif kind == "DisruptionTarget" and cond.status == "True" and cond.reason == "PreemptionByScheduler":
                preempted = True
        self.preempted_by_scheduler = preempted
        self.scheduled_time = scheduled
        # Every request arithmetic in one pass (model.podamounts); the quota request is the
        # request vector itself unless CapacityScheduling's arithmetic differs for the pod.
        (requests, self.non_zero_cpu, self.non_zero_memory, self.scoring_non_zero_cpu,
         self.scoring_non_zero_memory, quota, self._load) = pod_amounts(spec)
        self.requests = requests = _shared_resources(requests)
        self.quota_requests = requests if quota is None else _shared_resources(quota)
        # The shared vector's own int objects where the figures are equal (most pods).
        if self.non_zero_memory == requests.memory:
            self.non_zero_memory = requests.memory
        if self.scoring_non_zero_memory == requests.memory:
            self.scoring_non_zero_memory = requests.memory
        self.pod_group = intern(pod_group_name(labels)) if labels else ""
        self.gated = bool(spec.scheduling_gates)
        inits = spec.init_containers
        containers = [*inits, *(spec.containers or ())] if inits else spec.containers or ()
        if inits or any(c.ports for c in containers):
            self.host_ports = _host_ports(spec)
        else:
            self.host_ports = ()
        self.images = _shared_value(tuple([intern(c.image) for c in containers]))
        self.num_containers = len(containers)
        self.scheduler_name = intern(spec.scheduler_name)
        # Existing pods' terms matter too (anti-affinity symmetry, preferred terms), so even
        # slim views keep them; few pods have any.
        self.affinity_terms = PodAffinityTerms.of(namespace, spec) if spec.affinity else None
        if slim:
            self.pod_spec = None
            self.spread_constraints = ()
            self.controller_ref = None
            self.preferred_affinity_error = ""
            self.tolerations = ()
            self.node_selector = None
            self.required_affinity = None
            self.preferred_affinity = ()
            self.request_names = _NO_NAMES
            self.placement_key = b""
            self.preferred_affinity_key = b""
            self.affinity_node_names = None
            return self
        self.pod_spec = spec
        self.spread_constraints = tuple(spec.topology_spread_constraints or ())
        self.controller_ref = next(((o.api_version, o.kind, o.name)
                                    for o in meta.owner_references or () if o.controller), None)
        self.tolerations = tuple(
            Toleration(t.key, t.operator, t.value, t.effect) for t in spec.tolerations or ()
        )
        self.node_selector = spec.node_selector or None
        node_affinity = spec.affinity.node_affinity if spec.affinity else None
        required = node_affinity.required_during_scheduling_ignored_during_execution if node_affinity else None
        (self.required_affinity, self.affinity_node_names, self.preferred_affinity,
         self.preferred_affinity_error, self.preferred_affinity_key) = _node_affinity_parts(node_affinity)
        # Pods of one workload share these parts of the spec; equal keys mean equal verdicts of
        # the node-only filters on any node.
        self.placement_key = _placement_encoder.encode(
            (spec.node_name, spec.node_selector, spec.tolerations, required))
        names: set[str] = set()
        for c in containers:
            if c.resources:
                names.update(c.resources.requests or ())
                names.update(c.resources.limits or ())
        self.request_names = frozenset(names)
        return self

    def bound_to(self, node_name: str) -> PodView:
        """A copy of the pod placed on `node_name` (what an assumed bind looks like)."""
        clone = PodView.__new__(PodView)
        for slot in PodView.__slots__:
            setattr(clone, slot, getattr(self, slot))
        clone.node_name = node_name
        clone.nominated_node_name = ""
        return clone

    @property
    def load(self) -> PodLoad:
        """The pod's Trimaran figures (`podload.pod_load`), built on first read when they
        follow from `requests`."""
        load = self._load
        if isinstance(load, PodLoad):
            return load
        found = self._load = derived_load(self.requests, load)
        return found

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def is_terminal(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    def __repr__(self) -> str:
        return f"PodView({self.key}, uid={self.uid!r}, priority={self.priority}, node={self.node_name!r})"


def _slot_copier(slots: tuple[str, ...]) -> Callable[[Any, Any], None]:
    """`copy(source, target)`: each of `slots` assigned from one to the other in straight
    code, as dataclasses write their methods: a loop of `getattr`/`setattr` by name cost a
    replica's view 26 µs of a filter in `bench.stages` (1 000 nodes), four times as much."""
    body = "\n".join(f"    target.{slot} = source.{slot}" for slot in slots)
    namespace: dict[str, Any] = {}
    exec(f"def copy(source, target):\n{body}\n", namespace)  # our own slot names only
    return namespace["copy"]  # type: ignore[no-any-return]


_copy_slots = _slot_copier(PodView.__slots__)


def shared_sizes() -> dict[str, int]:
    """Entries in the tables of shared label maps, request vectors and other values (image
    lists, priorities) (exported as metrics); each is cleared when it reaches `_SHARED_LIMIT`
    (100 000) entries."""
    return {"shared_labels": len(_labels_table), "shared_requests": len(_resources_table),
            "shared_pod_values": len(_values_table)}
