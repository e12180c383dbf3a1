"""Workload controllers: what kube-controller-manager does with a Deployment, ReplicaSet,
StatefulSet, Job or DaemonSet, reduced to the pods it creates and deletes.

Each controller of a workload file becomes a `Controller`. The pods a controller creates at
its own creation, without looking at the cluster, are in `Workload.arrivals` already (a
ReplicaSet's replicas, a Parallel StatefulSet's pods, the first ordinal of an OrderedReady one,
a Job's first pods), each `Arrival.controller` naming its controller. Everything later is
asked of the controller by the loop, through its hooks, which return a `Reaction`:

* `start(now, nodes)` once, at `controller.time` (its creation): a DaemonSet creates its pods
  here, one per eligible node; a Job with `activeDeadlineSeconds` asks to be woken at the
  deadline;
* `pod_bound(uid, node, now)`: a StatefulSet (OrderedReady) creates its next ordinal;
* `pod_finished(uid, phase, now)`: the pod's `run_for` has elapsed (phase "Succeeded" or
  "Failed"): a Job counts it and creates the next pods, or completes or fails; a ReplicaSet,
  StatefulSet or DaemonSet replaces it;
* `pod_deleted(uid, now)`: the pod is gone otherwise (deleted, evicted by preemption, lost with
  its node): a Job counts a failure, the others replace it;
* `nodes_changed(nodes, now)`: after every node event (add, update, cordon, uncordon, delete),
  with every node of the cluster: a DaemonSet creates pods on nodes that became eligible and
  deletes the pods of nodes it may no longer run on;
* `sync(now)`: at a `Reaction.wake_at` the controller asked for (a Job's failure backoff, its
  deadline).

Hooks ignore pods they do not know (a pod the controller deleted itself, for instance), so the
loop may call them for every pod whose `Arrival.controller` is set.

Names: `<rs>-<5 chars>` (ReplicaSet, DaemonSet, Job; `<job>-<index>-<5 chars>` for Indexed
Jobs) drawn from `random.Random` seeded with the workload seed and the controller's kind,
namespace and name, in the API server's alphabet (`bcdfghjklmnpqrstvwxz2456789`), the prefix
cut at 58 characters as `names.SimpleNameGenerator` does; a Deployment's ReplicaSet is
`<deploy>-<pod-template-hash>`; StatefulSet pods `<sts>-<ordinal>`. Hashes (`pod-template-hash`,
`controller-revision-hash`) have the controllers' shape (FNV-32a, `rand.SafeEncodeString`) but
are taken over the template's JSON, not over Go's in-memory dump of it, so they differ from a
real cluster's.
"""

from __future__ import annotations

import copy
import json
import random
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import msgspec

from extender.model import k8s
from extender.model.pod import PodView
from extender.model.selectors import label_selector
from extender.model.taints import NO_EXECUTE, NO_SCHEDULE, Taint, tolerates_any
from extender.simulator.arrivals import (
    FAILED,
    RUN_FOR_ANNOTATION,
    SUCCEEDED,
    Arrival,
    ObjectArrival,
    WorkloadError,
    creation_time_ns,
    default_requests,
    pod_lifetime,
    stamp,
    typed_pod,
)
from extender.simulator.clock import MINUTE, SECOND

#: `utilrand.String`'s alphabet (no vowels, no 0/1/3: no words, no look-alikes).
ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
RANDOM_LENGTH = 5
#: `names.SimpleNameGenerator`: the generateName prefix is cut to 63 - 5 characters.
MAX_GENERATED_NAME_LENGTH = 58

POD_TEMPLATE_HASH = "pod-template-hash"
CONTROLLER_REVISION_HASH = "controller-revision-hash"
STATEFULSET_POD_NAME = "statefulset.kubernetes.io/pod-name"
POD_INDEX = "apps.kubernetes.io/pod-index"
POD_TEMPLATE_GENERATION = "pod-template-generation"
JOB_CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
JOB_NAME = "batch.kubernetes.io/job-name"
LEGACY_JOB_CONTROLLER_UID = "controller-uid"
LEGACY_JOB_NAME = "job-name"
JOB_COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"

#: The Job controller's pod failure backoff: 10 s doubling per failure since the last success,
#: at most 10 min (`DefaultJobPodFailureBackOff`, `MaxJobPodFailureBackOff`).
JOB_POD_FAILURE_BACKOFF = 10 * SECOND
MAX_JOB_POD_FAILURE_BACKOFF = 10 * MINUTE
DEFAULT_BACKOFF_LIMIT = 6

#: `AddOrUpdateDaemonPodTolerations`, in its order (network-unavailable with hostNetwork only).
DAEMON_TOLERATIONS = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": NO_EXECUTE},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": NO_EXECUTE},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": NO_SCHEDULE},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": NO_SCHEDULE},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": NO_SCHEDULE},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": NO_SCHEDULE},
)
HOST_NETWORK_TOLERATION = {"key": "node.kubernetes.io/network-unavailable", "operator": "Exists",
                           "effect": NO_SCHEDULE}

_UID_NAMESPACE = uuid.UUID("3b0e2f4c-6f4e-4c59-9a53-4f1d9f6f2b7a")


class NodeLike(Protocol):
    """What a DaemonSet reads of a node (`NodeView` has it)."""

    @property
    def name(self) -> str: ...
    @property
    def labels(self) -> Mapping[str, str]: ...
    @property
    def taints(self) -> Sequence[Taint]: ...


@dataclass(slots=True)
class Reaction:
    """What a controller does in answer to a hook, now."""

    #: Pods to create now, in this order (`Arrival.time` is the hook's `now`).
    create: list[Arrival] = field(default_factory=list)
    #: "namespace/name" of pods the controller deletes now (pending or bound).
    delete: list[str] = field(default_factory=list)
    #: Call `sync(t)` at this virtual time (None: no need).
    wake_at: int | None = None


def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def safe_encode(text: str) -> str:
    """`rand.SafeEncodeString`: each character mapped into ALPHANUMS."""
    return "".join(ALPHANUMS[ord(c) % len(ALPHANUMS)] for c in text)


def template_hash(template: Mapping[str, Any]) -> str:
    """`controller.ComputeHash`'s shape over the template's canonical JSON."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":"), default=str).encode()
    return safe_encode(str(fnv32a(data)))


def _count(spec: Mapping[str, Any], key: str, default: int | None, where: str) -> int | None:
    value = spec.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise WorkloadError(f"{where}: spec.{key} must be a non-negative integer, got {value!r}")
    return value


class _Template:
    """A controller's `spec.template`: the pods' labels, annotations, spec and lifetime."""

    def __init__(self, spec: Mapping[str, Any], where: str) -> None:
        template = spec.get("template")
        if not isinstance(template, Mapping):
            raise WorkloadError(f"{where}: spec.template (the pods' template) is required")
        meta = template.get("metadata") or {}
        if not isinstance(meta, Mapping):
            raise WorkloadError(f"{where}: spec.template.metadata must be a mapping")
        pod_spec = template.get("spec")
        if not isinstance(pod_spec, Mapping) or not pod_spec.get("containers"):
            raise WorkloadError(f"{where}: spec.template.spec needs containers")
        for key in ("labels", "annotations"):
            if not isinstance(meta.get(key) or {}, Mapping):
                raise WorkloadError(f"{where}: spec.template.metadata.{key} must be a mapping")
        self.raw = template
        self.labels: dict[str, str] = dict(meta.get("labels") or {})
        self.annotations: dict[str, str] = dict(meta.get("annotations") or {})
        self.spec: dict[str, Any] = dict(pod_spec)
        self.run_for, self.finish = pod_lifetime(self.annotations, f"{where}: spec.template")


class Controller:
    """One workload controller. See the module docstring for the hooks' contract."""

    kind: ClassVar[str]
    api_version: ClassVar[str] = "apps/v1"

    def __init__(self, obj: Mapping[str, Any], where: str, *, seed: int,
                 taken: dict[str, str]) -> None:
        raw = copy.deepcopy(dict(obj))
        meta = raw.get("metadata")
        if not isinstance(meta, dict) or not meta.get("name"):
            raise WorkloadError(f"{where}: a {self.kind} needs metadata.name")
        meta["namespace"] = meta.get("namespace") or "default"
        self.namespace: str = meta["namespace"]
        self.name: str = meta["name"]
        if not meta.get("uid"):
            meta["uid"] = str(uuid.uuid5(_UID_NAMESPACE, f"{self.kind}/{self.namespace}/{self.name}"))
        self.uid: str = meta["uid"]
        self.where = f"{where} ({self.kind} {self.namespace}/{self.name})"
        raw.setdefault("apiVersion", self.api_version)
        raw["kind"] = self.kind
        spec = raw.get("spec")
        if not isinstance(spec, dict):
            raise WorkloadError(f"{self.where}: spec is required")
        self.raw: dict[str, Any] = raw
        self.spec: dict[str, Any] = spec
        #: Creation in epoch ns from the file (None: at time 0); `time` is virtual, after `place`.
        self.created = creation_time_ns(meta, f"{self.where}: metadata")
        self.time = 0
        self.epoch_ns = 0
        self.warnings: list[str] = []
        self._rng = random.Random(f"{seed}/{self.kind}/{self.namespace}/{self.name}")
        self._taken = taken
        self._serial = 0
        self.template = _Template(spec, self.where)

    @property
    def key(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"

    def __repr__(self) -> str:
        return f"<{self.key}>"

    # -- set-up, when the file has been read ----------------------------------------------------

    def place(self, epoch_ns: int) -> None:
        """Put the controller on the workload's clock (time 0 = `epoch_ns`)."""
        self.epoch_ns = epoch_ns
        self.time = self.created - epoch_ns if self.created is not None else 0
        if self.created is None:
            self.raw["metadata"]["creationTimestamp"] = stamp(epoch_ns + self.time)

    def owned_objects(self) -> list[ObjectArrival]:
        """The objects of `k8s.KINDS` the controller is or creates, for the cluster state."""
        return []

    def initial_pods(self) -> list[Arrival]:
        """The pods created at `time` without looking at the cluster."""
        return []

    # -- hooks ----------------------------------------------------------------------------------

    def start(self, now: int, nodes: Sequence[NodeLike]) -> Reaction:
        return Reaction()

    def pod_bound(self, uid: str, node: str, now: int) -> Reaction:
        return Reaction()

    def pod_finished(self, uid: str, phase: str, now: int) -> Reaction:
        return Reaction()

    def pod_deleted(self, uid: str, now: int) -> Reaction:
        return Reaction()

    def nodes_changed(self, nodes: Sequence[NodeLike], now: int) -> Reaction:
        return Reaction()

    def sync(self, now: int) -> Reaction:
        return Reaction()

    # -- making pods ----------------------------------------------------------------------------

    def owner_reference(self) -> dict[str, Any]:
        return {"apiVersion": self.api_version, "kind": self.kind, "name": self.name,
                "uid": self.uid, "controller": True, "blockOwnerDeletion": True}

    def _generate_name(self, prefix: str) -> str:
        base = prefix[:MAX_GENERATED_NAME_LENGTH]
        while True:
            name = base + "".join(self._rng.choice(ALPHANUMS) for _ in range(RANDOM_LENGTH))
            if f"{self.namespace}/{name}" not in self._taken:
                return name

    def _pod_raw(self, name: str, *, generate_name: str = "",
                 labels: Mapping[str, str] | None = None,
                 annotations: Mapping[str, str] | None = None, now: int = 0,
                 node: str = "") -> dict[str, Any]:
        meta: dict[str, Any] = {"name": name}
        if generate_name:
            meta["generateName"] = generate_name
        meta["namespace"] = self.namespace
        meta["uid"] = str(uuid.uuid5(_UID_NAMESPACE, f"{self.uid}/{name}/{self._serial}"))
        meta["creationTimestamp"] = stamp(self.epoch_ns + now)
        meta["labels"] = {**self.template.labels, **(labels or {})}
        merged = {**self.template.annotations, **(annotations or {})}
        if merged:
            meta["annotations"] = merged
        meta["ownerReferences"] = [self.owner_reference()]
        spec = default_requests(copy.deepcopy(self.template.spec))
        self._edit_spec(spec, name, node)
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
                "status": {"phase": "Pending"}}

    def _edit_spec(self, spec: dict[str, Any], name: str, node: str) -> None:
        """What the controller changes in the template's spec for one pod."""

    def _new_pod(self, name: str, now: int, **kwargs: Any) -> Arrival:
        raw = self._pod_raw(name, now=now, **kwargs)
        self._serial += 1
        self._taken[f"{self.namespace}/{name}"] = f"a pod of {self.key}"
        view = PodView.from_k8s(k8s.convert(raw, k8s.Pod))
        return Arrival(now, view, raw, self.template.run_for, self.template.finish, self)

    def _check_template(self) -> None:
        """Convert one pod of the template now, so that errors are the file's, not the run's."""
        raw = self._pod_raw(f"{self.name}-check", node="node-check")
        typed_pod(raw, f"{self.where}: spec.template",
                  lambda field: f"{self.where}: spec.template.{field}")

    def _selector(self) -> dict[str, Any]:
        return check_selector(self.spec.get("selector"), self.template.labels, self.where,
                              self.kind)


def check_selector(selector: Any, labels: Mapping[str, str], where: str,
                   kind: str) -> dict[str, Any]:
    """spec.selector, checked as the API server checks it (it must select the template's
    labels); without one, the template's labels (apps/v1 requires a selector: the simulator
    is lenient)."""
    if selector is None:
        if not labels:
            raise WorkloadError(f"{where}: spec.selector is required (or labels in "
                                "spec.template.metadata to default it to)")
        return {"matchLabels": dict(labels)}
    if not isinstance(selector, Mapping):
        raise WorkloadError(f"{where}: spec.selector must be a label selector")
    try:
        typed = k8s.convert(dict(selector), k8s.LabelSelector)
        parsed = label_selector(typed)
    except (msgspec.ValidationError, ValueError) as exc:
        raise WorkloadError(f"{where}: spec.selector: {exc}") from None
    if not (typed.match_labels or typed.match_expressions):
        raise WorkloadError(f"{where}: spec.selector: empty selector is invalid for a {kind}")
    if not parsed.matches(labels):
        raise WorkloadError(f"{where}: spec.selector does not match "
                            "spec.template.metadata.labels (the API server refuses it)")
    return dict(selector)


class ReplicaSetController(Controller):
    """`replicas` pods named `<rs>-<5 chars>`, all at creation; a pod that finishes or is gone
    is replaced by a new one."""

    kind = "ReplicaSet"

    def __init__(self, obj: Mapping[str, Any], where: str, *, seed: int,
                 taken: dict[str, str]) -> None:
        super().__init__(obj, where, seed=seed, taken=taken)
        self.replicas = _count(self.spec, "replicas", 1, self.where) or 0
        self.spec["selector"] = self._selector()
        self._check_template()
        #: uid -> name of the pods alive (created, not finished, not gone).
        self.pods: dict[str, str] = {}
        #: The Deployment that owns this ReplicaSet (as written, namespace and uid filled).
        self.deployment: dict[str, Any] | None = None

    def owned_objects(self) -> list[ObjectArrival]:
        typed = k8s.convert(self.raw, k8s.ReplicaSet)
        return [ObjectArrival(self.time, self.kind, typed, False, self.raw)]

    def initial_pods(self) -> list[Arrival]:
        return self._fill(self.time)

    def _fill(self, now: int) -> list[Arrival]:
        out = []
        prefix = f"{self.name}-"
        while len(self.pods) < self.replicas:
            arrival = self._new_pod(self._generate_name(prefix), now, generate_name=prefix)
            self.pods[arrival.pod.uid] = arrival.pod.name
            out.append(arrival)
        return out

    def pod_finished(self, uid: str, phase: str, now: int) -> Reaction:
        return self.pod_deleted(uid, now)

    def pod_deleted(self, uid: str, now: int) -> Reaction:
        if self.pods.pop(uid, None) is None:
            return Reaction()
        return Reaction(create=self._fill(now))


def deployment_replica_set(obj: Mapping[str, Any], where: str, *, seed: int,
                           taken: dict[str, str]) -> ReplicaSetController:
    """A Deployment's first ReplicaSet, `<deploy>-<pod-template-hash>`, as the deployment
    controller creates it (no rollouts: the Deployment never changes)."""
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping) or not meta.get("name"):
        raise WorkloadError(f"{where}: a Deployment needs metadata.name")
    namespace = meta.get("namespace") or "default"
    name = meta["name"]
    here = f"{where} (Deployment {namespace}/{name})"
    creation_time_ns(meta, f"{here}: metadata")  # its ReplicaSet's: named for the Deployment
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        raise WorkloadError(f"{here}: spec is required")
    uid = meta.get("uid") or str(uuid.uuid5(_UID_NAMESPACE, f"Deployment/{namespace}/{name}"))
    template = spec.get("template")
    checked = _Template(spec, here)  # the template's own errors, named for the Deployment
    assert isinstance(template, Mapping)
    replicas = _count(spec, "replicas", 1, here)
    check_selector(spec.get("selector"), checked.labels, here, "Deployment")
    hash_ = template_hash(template)
    labels = {**((template.get("metadata") or {}).get("labels") or {}), POD_TEMPLATE_HASH: hash_}
    rs_template = copy.deepcopy(dict(template))
    rs_template["metadata"] = {**(rs_template.get("metadata") or {}), "labels": labels}
    selector = copy.deepcopy(spec.get("selector"))
    if isinstance(selector, dict):
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), POD_TEMPLATE_HASH: hash_}
    rs_name = f"{name}-{hash_}"
    rs_meta: dict[str, Any] = {
        "name": rs_name, "namespace": namespace, "labels": labels,
        "annotations": {"deployment.kubernetes.io/desired-replicas": str(replicas),
                        "deployment.kubernetes.io/revision": "1"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name,
                             "uid": uid, "controller": True, "blockOwnerDeletion": True}]}
    if meta.get("creationTimestamp"):
        rs_meta["creationTimestamp"] = meta["creationTimestamp"]
    rs_spec: dict[str, Any] = {"replicas": replicas, "template": rs_template}
    if selector is not None:
        rs_spec["selector"] = selector
    rs = ReplicaSetController({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": rs_meta,
                               "spec": rs_spec}, here, seed=seed, taken=taken)
    if selector is None:  # defaulted from the template's labels, pod-template-hash included
        rs.spec["selector"] = {"matchLabels": dict(labels)}
    rs.deployment = {**dict(obj), "metadata": {**dict(meta), "namespace": namespace, "uid": uid}}
    return rs


class StatefulSetController(Controller):
    """Pods `<sts>-<ordinal>` (from `spec.ordinals.start`, default 0). OrderedReady (the
    default): one at a time, the next once the previous is bound (Running and Ready in a
    cluster); Parallel: all at creation. A pod that finishes or is gone is recreated with the
    same name (and, OrderedReady, the ordinals above wait for it)."""

    kind = "StatefulSet"

    def __init__(self, obj: Mapping[str, Any], where: str, *, seed: int,
                 taken: dict[str, str]) -> None:
        super().__init__(obj, where, seed=seed, taken=taken)
        self.replicas = _count(self.spec, "replicas", 1, self.where) or 0
        policy = self.spec.get("podManagementPolicy") or "OrderedReady"
        if policy not in ("OrderedReady", "Parallel"):
            raise WorkloadError(f"{self.where}: spec.podManagementPolicy must be OrderedReady "
                                f"or Parallel, got {policy!r}")
        self.ordered = policy == "OrderedReady"
        ordinals = self.spec.get("ordinals") or {}
        if not isinstance(ordinals, Mapping):
            raise WorkloadError(f"{self.where}: spec.ordinals must be a mapping")
        self.first = _count(ordinals, "start", 0, self.where) or 0
        self.spec["selector"] = self._selector()
        self.revision = f"{self.name}-{template_hash(self.template.raw)}"
        if self.spec.get("volumeClaimTemplates"):
            self.warnings.append(f"{self.where}: volumeClaimTemplates are ignored (the "
                                 "simulator has no volumes)")
        self._check_template()
        #: ordinal -> uid of its pod (None: none now); the bound ordinals.
        self.pods: dict[int, str | None] = {}
        self.bound: set[int] = set()
        for ordinal in self.ordinals():
            key = f"{self.namespace}/{self.pod_name(ordinal)}"
            if key in taken:
                raise WorkloadError(f"{self.where}: its pod {key} is also {taken[key]}")
            taken[key] = f"a pod of {self.key}"

    def ordinals(self) -> range:
        return range(self.first, self.first + self.replicas)

    def pod_name(self, ordinal: int) -> str:
        return f"{self.name}-{ordinal}"

    def owned_objects(self) -> list[ObjectArrival]:
        typed = k8s.convert(self.raw, k8s.StatefulSet)
        return [ObjectArrival(self.time, self.kind, typed, False, self.raw)]

    def initial_pods(self) -> list[Arrival]:
        return self._sync(self.time)

    def _edit_spec(self, spec: dict[str, Any], name: str, node: str) -> None:
        spec["hostname"] = name
        if self.spec.get("serviceName"):
            spec["subdomain"] = self.spec["serviceName"]

    def _sync(self, now: int) -> list[Arrival]:
        out = []
        for ordinal in self.ordinals():
            uid = self.pods.get(ordinal)
            if uid is None:
                name = self.pod_name(ordinal)
                arrival = self._new_pod(name, now, labels={
                    CONTROLLER_REVISION_HASH: self.revision, STATEFULSET_POD_NAME: name,
                    POD_INDEX: str(ordinal)})
                self.pods[ordinal] = arrival.pod.uid
                out.append(arrival)
                if self.ordered:
                    break
            elif self.ordered and ordinal not in self.bound:
                break
        return out

    def _ordinal(self, uid: str) -> int | None:
        return next((o for o, u in self.pods.items() if u == uid), None)

    def pod_bound(self, uid: str, node: str, now: int) -> Reaction:
        ordinal = self._ordinal(uid)
        if ordinal is None:
            return Reaction()
        self.bound.add(ordinal)
        return Reaction(create=self._sync(now)) if self.ordered else Reaction()

    def pod_finished(self, uid: str, phase: str, now: int) -> Reaction:
        return self.pod_deleted(uid, now)

    def pod_deleted(self, uid: str, now: int) -> Reaction:
        ordinal = self._ordinal(uid)
        if ordinal is None:
            return Reaction()
        self.pods[ordinal] = None
        self.bound.discard(ordinal)
        return Reaction(create=self._sync(now))


class JobController(Controller):
    """The Job controller's `manageJob`: up to `parallelism` pods active, new ones as others
    finish, until `completions` succeeded (NonIndexed: `<job>-<5 chars>`; Indexed: one success
    per index, `<job>-<index>-<5 chars>`, lowest missing index first; without `completions`,
    a work queue: no new pod after the first success, complete when none is active). A failed
    or vanished pod counts against `backoffLimit` (default 6: failing the Job deletes its
    active pods) and delays the next pods by 10 s × 2^(failures since the last success − 1),
    at most 10 min. `activeDeadlineSeconds` fails the Job at that age. `suspend: true` creates
    nothing."""

    kind = "Job"
    api_version = "batch/v1"

    def __init__(self, obj: Mapping[str, Any], where: str, *, seed: int,
                 taken: dict[str, str]) -> None:
        super().__init__(obj, where, seed=seed, taken=taken)
        spec = self.spec
        parallelism = _count(spec, "parallelism", None, self.where)
        completions = _count(spec, "completions", None, self.where)
        if parallelism is None and completions is None:
            completions = 1  # the API server's defaults: both 1
        self.parallelism = 1 if parallelism is None else parallelism
        self.completions = completions
        mode = spec.get("completionMode") or "NonIndexed"
        if mode not in ("NonIndexed", "Indexed"):
            raise WorkloadError(f"{self.where}: spec.completionMode must be NonIndexed or "
                                f"Indexed, got {mode!r}")
        self.indexed = mode == "Indexed"
        if self.indexed and completions is None:
            raise WorkloadError(f"{self.where}: spec.completions is required when "
                                "completionMode is Indexed")
        limit = _count(spec, "backoffLimit", DEFAULT_BACKOFF_LIMIT, self.where)
        self.backoff_limit = DEFAULT_BACKOFF_LIMIT if limit is None else limit
        deadline = spec.get("activeDeadlineSeconds")
        if deadline is not None and (isinstance(deadline, bool) or not isinstance(deadline, int)
                                     or deadline <= 0):
            raise WorkloadError(f"{self.where}: spec.activeDeadlineSeconds must be a positive "
                                f"integer, got {deadline!r}")
        self.deadline = None if deadline is None else deadline * SECOND
        self.suspended = spec.get("suspend") is True
        restart = self.template.spec.get("restartPolicy")
        if restart not in ("Never", "OnFailure"):
            raise WorkloadError(f"{self.where}: spec.template.spec.restartPolicy must be Never "
                                f"or OnFailure, got {restart!r} (the API server refuses it)")
        if self.template.run_for is None:
            raise WorkloadError(
                f"{self.where}: its pods need a lifetime: set the annotation "
                f"{RUN_FOR_ANNOTATION} (e.g. \"5m\") in spec.template.metadata.annotations; a "
                "Job's pods complete, and the simulator cannot guess when")
        if spec.get("selector") is not None and not spec.get("manualSelector"):
            raise WorkloadError(f"{self.where}: spec.selector is set without manualSelector "
                                "(the API server generates a Job's selector)")
        if spec.get("manualSelector"):
            self.warnings.append(f"{self.where}: manualSelector is ignored: the pods get the "
                                 "generated labels")
        # The labels the API server adds to the template (and the generated selector).
        self.job_labels = {JOB_CONTROLLER_UID: self.uid, JOB_NAME: self.name,
                           LEGACY_JOB_CONTROLLER_UID: self.uid, LEGACY_JOB_NAME: self.name}
        self.template.labels.update(self.job_labels)
        spec["selector"] = {"matchLabels": {JOB_CONTROLLER_UID: self.uid}}
        if self.suspended:
            self.warnings.append(f"{self.where}: suspended: it creates no pod")
        self._check_template()
        #: uid -> (name, completion index or None) of the active pods.
        self.active: dict[str, tuple[str, int | None]] = {}
        self.succeeded = 0
        self.failed = 0
        self.succeeded_indexes: set[int] = set()
        self.failures_since_success = 0
        self.last_failure: int | None = None
        #: "" while running; then "Complete" or "Failed".
        self.condition = ""
        self.reason = ""

    def initial_pods(self) -> list[Arrival]:
        return self._manage(self.time).create

    def start(self, now: int, nodes: Sequence[NodeLike]) -> Reaction:
        if self.deadline is None or self.condition:
            return Reaction()
        return Reaction(wake_at=self.time + self.deadline)

    def sync(self, now: int) -> Reaction:
        return self._manage(now)

    def _complete(self) -> bool:
        if self.completions is None:
            return self.succeeded > 0 and not self.active
        done = len(self.succeeded_indexes) if self.indexed else self.succeeded
        return done >= self.completions

    def backoff_remaining(self, now: int) -> int:
        """`getRemainingTimeForFailuresCount`."""
        if not self.failures_since_success or self.last_failure is None:
            return 0
        backoff = JOB_POD_FAILURE_BACKOFF
        for _ in range(1, self.failures_since_success):
            backoff *= 2
            if backoff >= MAX_JOB_POD_FAILURE_BACKOFF:
                backoff = MAX_JOB_POD_FAILURE_BACKOFF
                break
        elapsed = now - self.last_failure
        return max(0, backoff - elapsed)

    def _manage(self, now: int) -> Reaction:
        if self.condition or self.suspended:
            return Reaction()
        if self.deadline is not None and now >= self.time + self.deadline:
            return self._fail("DeadlineExceeded")
        if self._complete():
            self.condition, self.reason = "Complete", ""
            return Reaction()
        wait = self.backoff_remaining(now)
        if wait > 0:
            return Reaction(wake_at=now + wait)
        active = len(self.active)
        if self.completions is None:
            want = active if self.succeeded > 0 else self.parallelism
        else:
            done = len(self.succeeded_indexes) if self.indexed else self.succeeded
            want = max(0, min(self.completions - done, self.parallelism))
        diff = want - active
        out: list[Arrival] = []
        if diff <= 0:
            return Reaction()
        indexes: list[int | None] = [None] * diff
        if self.indexed:
            assert self.completions is not None
            busy = self.succeeded_indexes | {i for _, i in self.active.values() if i is not None}
            indexes = [i for i in range(self.completions) if i not in busy]
            del indexes[diff:]
        for index in indexes:
            if index is None:
                prefix = f"{self.name}-"
                arrival = self._new_pod(self._generate_name(prefix), now, generate_name=prefix)
            else:
                prefix = f"{self.name}-{index}-"
                arrival = self._new_pod(
                    self._generate_name(prefix), now, generate_name=prefix,
                    labels={JOB_COMPLETION_INDEX: str(index)},
                    annotations={JOB_COMPLETION_INDEX: str(index)})
            self.active[arrival.pod.uid] = (arrival.pod.name, index)
            out.append(arrival)
        return Reaction(create=out)

    def _fail(self, reason: str) -> Reaction:
        self.condition, self.reason = "Failed", reason
        doomed = [f"{self.namespace}/{name}" for name, _ in self.active.values()]
        self.active.clear()
        return Reaction(delete=doomed)

    def pod_finished(self, uid: str, phase: str, now: int) -> Reaction:
        found = self.active.pop(uid, None)
        if found is None:
            return Reaction()
        if phase == SUCCEEDED:
            self.succeeded += 1
            if found[1] is not None:
                self.succeeded_indexes.add(found[1])
            self.failures_since_success = 0
        else:
            self.failed += 1
            self.failures_since_success += 1
            self.last_failure = now
            if self.failed > self.backoff_limit:
                return self._fail("BackoffLimitExceeded")
        return self._manage(now)

    def pod_deleted(self, uid: str, now: int) -> Reaction:
        return self.pod_finished(uid, FAILED, now)


class DaemonSetController(Controller):
    """One pod per eligible node, `<ds>-<5 chars>`, pinned to it with the required node
    affinity term `matchFields: metadata.name In [node]` (replacing the template's required
    terms, which decided eligibility) and the DaemonSet tolerations added. Eligible: the
    template's nodeName, nodeSelector and required node affinity match, and every NoSchedule
    and NoExecute taint is tolerated. Nodes that appear or change later get theirs; the pod
    of a node with an untolerated NoExecute taint is deleted, as is a pending pod whose node is
    gone; a pod that finishes or is gone is replaced while its node is eligible."""

    kind = "DaemonSet"

    def __init__(self, obj: Mapping[str, Any], where: str, *, seed: int,
                 taken: dict[str, str]) -> None:
        super().__init__(obj, where, seed=seed, taken=taken)
        self.spec["selector"] = self._selector()
        self.revision = template_hash(self.template.raw)
        self._check_template()
        # Eligibility reads the template as the controller does: with the daemon tolerations,
        # before the node-name pin.
        probe = self._pod_raw(f"{self.name}-probe")
        probe["spec"] = copy.deepcopy(self.template.spec)
        self._add_tolerations(probe["spec"])
        self.probe = PodView.from_k8s(k8s.convert(probe, k8s.Pod))
        self.node_pods: dict[str, str] = {}  # node -> uid of its pod
        self.pod_nodes: dict[str, tuple[str, str]] = {}  # uid -> (node, pod name)
        self.bound: set[str] = set()
        self.nodes: dict[str, NodeLike] = {}

    @staticmethod
    def _add_tolerations(spec: dict[str, Any]) -> None:
        """`AddOrUpdateDaemonPodTolerations`: each default toleration unless already there."""
        tolerations = list(spec.get("tolerations") or [])
        wanted = list(DAEMON_TOLERATIONS)
        if spec.get("hostNetwork"):
            wanted.append(HOST_NETWORK_TOLERATION)
        for toleration in wanted:
            if not any(_same_toleration(t, toleration) for t in tolerations):
                tolerations.append(dict(toleration))
        spec["tolerations"] = tolerations

    def _edit_spec(self, spec: dict[str, Any], name: str, node: str) -> None:
        self._add_tolerations(spec)
        # `ReplaceDaemonSetPodNodeNameNodeAffinity`: the required terms become the one pin.
        affinity = dict(spec.get("affinity") or {})
        node_affinity = dict(affinity.get("nodeAffinity") or {})
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}
        affinity["nodeAffinity"] = node_affinity
        spec["affinity"] = affinity

    def predicates(self, node: NodeLike) -> tuple[bool, bool]:
        """(should run, should continue running) of `NodeShouldRunDaemonPod`."""
        pod = self.probe
        fits_name = not self.template.spec.get("nodeName") or \
            self.template.spec.get("nodeName") == node.name
        labels = node.labels
        fits_affinity = (
            all(labels.get(k) == v for k, v in (pod.node_selector or {}).items())
            and (pod.required_affinity is None or pod.required_affinity.matches(labels, node.name)))
        if not fits_name or not fits_affinity:
            return False, False
        untolerated = [t for t in node.taints if t.effect in (NO_SCHEDULE, NO_EXECUTE)
                       and not tolerates_any(pod.tolerations, t)]
        if untolerated:
            return False, not any(t.effect == NO_EXECUTE for t in untolerated)
        return True, True

    def _create(self, node: str, now: int) -> Arrival:
        prefix = f"{self.name}-"
        arrival = self._new_pod(self._generate_name(prefix), now, generate_name=prefix, node=node,
                                labels={CONTROLLER_REVISION_HASH: self.revision,
                                        POD_TEMPLATE_GENERATION: "1"})
        self.node_pods[node] = arrival.pod.uid
        self.pod_nodes[arrival.pod.uid] = (node, arrival.pod.name)
        return arrival

    def _forget(self, uid: str) -> tuple[str, str] | None:
        found = self.pod_nodes.pop(uid, None)
        if found is not None:
            self.node_pods.pop(found[0], None)
            self.bound.discard(uid)
        return found

    def start(self, now: int, nodes: Sequence[NodeLike]) -> Reaction:
        return self.nodes_changed(nodes, now)

    def nodes_changed(self, nodes: Sequence[NodeLike], now: int) -> Reaction:
        self.nodes = {node.name: node for node in nodes}
        reaction = Reaction()
        for node in nodes:
            should_run, should_continue = self.predicates(node)
            uid = self.node_pods.get(node.name)
            if uid is None and should_run:
                reaction.create.append(self._create(node.name, now))
            elif uid is not None and not should_continue:
                _, name = self._forget(uid)  # type: ignore[misc]
                reaction.delete.append(f"{self.namespace}/{name}")
        for node_name, uid in list(self.node_pods.items()):
            if node_name not in self.nodes and uid not in self.bound:
                _, name = self._forget(uid)  # type: ignore[misc]
                reaction.delete.append(f"{self.namespace}/{name}")
        return reaction

    def pod_bound(self, uid: str, node: str, now: int) -> Reaction:
        if uid in self.pod_nodes:
            self.bound.add(uid)
        return Reaction()

    def pod_finished(self, uid: str, phase: str, now: int) -> Reaction:
        return self.pod_deleted(uid, now)

    def pod_deleted(self, uid: str, now: int) -> Reaction:
        found = self._forget(uid)
        if found is None:
            return Reaction()
        node = self.nodes.get(found[0])
        if node is None or not self.predicates(node)[0]:
            return Reaction()
        return Reaction(create=[self._create(node.name, now)])


def _same_toleration(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """`Toleration.MatchToleration`: equal key, operator, value and effect."""
    return all((a.get(k) or "") == (b.get(k) or "") for k in ("key", "operator", "value", "effect"))


CONTROLLERS: dict[str, type[Controller]] = {
    "ReplicaSet": ReplicaSetController, "StatefulSet": StatefulSetController,
    "Job": JobController, "DaemonSet": DaemonSetController,
}


def parse_controller(kind: str, obj: Mapping[str, Any], where: str, *, seed: int,
                     taken: dict[str, str], seen: set[str]) -> Controller:
    """The controller of one workload object (a Deployment: its ReplicaSet)."""
    if kind == "Deployment":
        controller: Controller = deployment_replica_set(obj, where, seed=seed, taken=taken)
        deployment = controller.deployment or {}  # type: ignore[attr-defined]
        keys = [f"Deployment {controller.namespace}/{deployment['metadata']['name']}",
                controller.key]
    else:
        controller = CONTROLLERS[kind](obj, where, seed=seed, taken=taken)
        keys = [controller.key]
    for key in keys:
        if key in seen:
            raise WorkloadError(f"{where}: {key} appears twice")
        seen.add(key)
    return controller
