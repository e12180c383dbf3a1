"""The simulation's cluster as Kubernetes API objects (`--serve-api`): `ClusterMirror` renders
nodes, bound and pending pods (with their nominations), terminating victims and the objects of
the snapshot and the workload, and `publish` hands the differences to the `ApiServer` as watch
events (one ADDED, MODIFIED or DELETED per object that appeared, changed or went away since the
last publish, each with the next resourceVersion). The simulation is the truth: a Binding made
through the API sets `spec.nodeName` at once; the next publish writes the pod as the simulation
has it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from extender.engine import registry
from extender.model.timeparse import parse_time
from extender.simulator.apiserver import ApiServer, kind_to_plural, resources
from extender.simulator.apiwire import Key


def _rfc3339(epoch_seconds: float) -> str:
    """Microsecond precision (the simulation's times are virtual, often a millisecond apart)."""
    return datetime.fromtimestamp(epoch_seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _typed_to_dict(obj: Any, kind: str) -> dict[str, Any]:
    out = msgspec.to_builtins(obj)
    res = resources()[kind_to_plural()[kind]]
    return {"apiVersion": res.group_version, "kind": kind, **out}


def normalized(obj: Mapping[str, Any], kind: str) -> dict[str, Any]:
    """An object as the API server keeps it: apiVersion and kind of its resource, a
    namespace only when namespaced (`default` when missing), no resourceVersion."""
    res = resources()[kind_to_plural()[kind]]
    out = dict(obj)
    out["apiVersion"], out["kind"] = res.group_version, kind
    meta = dict(out.get("metadata") or {})
    meta.pop("resourceVersion", None)
    if res.namespaced:
        meta["namespace"] = meta.get("namespace") or "default"
    else:
        meta.pop("namespace", None)
    out["metadata"] = meta
    return out


class ClusterMirror:
    """Renders a `Simulation`'s cluster as API objects and publishes the differences.

    Reads from the simulation only: `state` (nodes, bound pods and every object kind the
    engine keeps), `pending` (pods waiting to be scheduled, with their nominations; pods held
    at Permit are still pending in the API), `raw_pods`/`raw_nodes` (the objects as written),
    `workload.objects` (objects the workload creates over time) and the virtual clock. Pods
    and nodes are rendered again only when the simulation's view of them changed (views are
    immutable: a change is a new view)."""

    def __init__(self, api: ApiServer, cluster: str | Path | None = None) -> None:
        self.api = api
        #: Objects of the cluster snapshot as written, by (plural, namespace, name); pods also
        #: by uid.
        self.raw: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.raw_pods: dict[str, dict[str, Any]] = {}
        if cluster is not None:
            self._load(cluster)
        self._pod_cache: dict[str, tuple[Any, bool, dict[str, Any]]] = {}
        self._node_cache: dict[str, tuple[Any, Any, dict[str, Any]]] = {}
        self._deleted_at: dict[str, str] = {}  # uid -> deletionTimestamp of a terminating pod
        self._created: dict[tuple[str, str, str], dict[str, Any]] = {}
        self._objects: list[Any] | None = None  # the workload's objects, by creation time
        self._objects_seen = 0
        self._last_generation = -1  # the state's generation at the last publish
        self._last_pending: dict[str, Any] = {}
        self._last_bindings = 0
        #: What could not be served faithfully (moved to the run's warnings).
        self.warnings: list[str] = []
        self._warned: set[str] = set()

    def _load(self, cluster: str | Path) -> None:
        from extender.state.snapshot import iter_objects, pod_uid, read_documents

        for obj in iter_objects(read_documents(cluster)):
            kind = obj.get("kind")
            meta = obj.get("metadata") or {}
            if kind not in kind_to_plural() or not meta.get("name"):
                continue
            normal = normalized(obj, kind)
            nmeta = normal["metadata"]
            self.raw[(kind_to_plural()[kind], nmeta.get("namespace", ""), nmeta["name"])] = normal
            if kind == "Pod":  # by the uid the simulation knows it by, derived when absent
                self.raw_pods[pod_uid(meta.get("namespace"), meta["name"], meta.get("uid"))] = normal

    # -- publishing -----------------------------------------------------------------------
    def publish(self, sim: Any) -> int:
        """Bring the API server's objects to the simulation's cluster; returns the cluster's
        resourceVersion afterwards."""
        now = sim.epoch_now()
        created = self._note_created(sim)
        state = sim.state
        api = self.api
        # Nothing in the state changed and the pending pods are the same views: nothing to do
        # (a cycle that neither binds nor nominates changes nothing).
        pending = sim.pending
        same_pending = (len(pending) == len(self._last_pending)
                        and all(self._last_pending.get(uid) is view for uid, view in pending.items()))
        bindings = len(api.bindings)  # a Binding through the API changed the store
        if (not created and same_pending and state.generation == self._last_generation
                and bindings == self._last_bindings):
            return api.rv
        if not same_pending:
            self._last_pending = dict(pending)
        self._last_generation, self._last_bindings = state.generation, bindings
        api.sync_collection("nodes", self._nodes(sim))
        api.sync_collection("pods", self._pods(sim, now))
        for plural, keys in self._object_keys(state).items():
            desired = {}
            for key in keys:
                obj = self._created.get((plural, *key)) or self.raw.get((plural, *key))
                if obj is None:
                    obj = normalized({"metadata": {"namespace": key[0], "name": key[1]}},
                                      resources()[plural].kind)
                desired[key] = obj
            api.sync_collection(plural, desired)
        return api.rv

    def _note_created(self, sim: Any) -> bool:
        """Take the objects the workload created since the last call (in creation order: a
        later one replaces); whether there were any."""
        if self._objects is None:
            self._objects = sorted(getattr(sim.workload, "objects", ()), key=lambda o: o.time)
        objects = self._objects
        now = sim.clock.now()
        before = self._objects_seen
        while self._objects_seen < len(objects):
            created = objects[self._objects_seen]
            if created.time > now:
                break
            kind = created.kind
            if kind in kind_to_plural():
                obj = created.obj if isinstance(created.obj, dict) else _typed_to_dict(created.obj, kind)
                normal = normalized(obj, kind)
                meta = normal["metadata"]
                self._created[(kind_to_plural()[kind], meta.get("namespace", ""), meta["name"])] = normal
            self._objects_seen += 1
        return self._objects_seen != before

    # -- nodes ----------------------------------------------------------------------------
    def _nodes(self, sim: Any) -> dict[Key, dict[str, Any]]:
        raw_nodes = getattr(sim, "raw_nodes", None) or {}
        out: dict[Key, dict[str, Any]] = {}
        cache = self._node_cache
        for name, info in sim.state.nodes.items():
            raw = raw_nodes.get(name)
            hit = cache.get(name)
            if hit is not None and hit[0] is info.node and hit[1] is raw:
                out[("", name)] = hit[2]
                continue
            source = raw if raw else self.raw.get(("nodes", "", name))
            if source is None:
                source = {"metadata": {"name": name}}
                if name not in self._warned:
                    self._warned.add(name)
                    self.warnings.append(f"node {name}: no object to serve; served with its "
                                         "name only")
            rendered = normalized(source, "Node")
            cache[name] = (info.node, raw, rendered)
            out[("", name)] = rendered
        for name in [n for n in cache if n not in sim.state.nodes]:
            del cache[name]
        return out

    # -- pods -----------------------------------------------------------------------------
    def _pods(self, sim: Any, now: float) -> dict[Key, dict[str, Any]]:
        pending: Mapping[str, Any] = sim.pending
        bound: Mapping[str, Any] = sim.state.pods
        raw_pods = getattr(sim, "raw_pods", None) or {}
        out: dict[Key, dict[str, Any]] = {}
        cache = self._pod_cache
        seen: set[str] = set()
        for views, is_pending in ((pending, True), (bound, False)):
            for uid, view in views.items():
                if uid in seen:
                    continue  # held at Permit: assumed in the state, still pending in the API
                seen.add(uid)
                hit = cache.get(uid)
                if hit is not None and hit[0] is view and hit[1] == is_pending:
                    rendered = hit[2]
                else:
                    raw = raw_pods.get(uid) or self.raw_pods.get(uid)
                    if raw is None and uid not in self._warned:
                        self._warned.add(uid)
                        self.warnings.append(f"pod {view.namespace}/{view.name}: no object to "
                                             "serve; served without its spec")
                    rendered = self._render_pod(view, raw, is_pending, now)
                    cache[uid] = (view, is_pending, rendered)
                out[(rendered["metadata"]["namespace"], rendered["metadata"]["name"])] = rendered
        for uid in [u for u in cache if u not in seen]:
            del cache[uid]
            self._deleted_at.pop(uid, None)
        return out

    def _render_pod(self, view: Any, raw: Mapping[str, Any] | None, pending: bool,
                    now: float) -> dict[str, Any]:
        """The pod as the API would hold it, so that the extender's `PodView.from_k8s` reads
        what the simulation's view says: node, priority (as admission resolves it),
        nomination, start and scheduled times, termination and the scheduler's DisruptionTarget."""
        if raw is None:
            raw = {"metadata": {}, "spec": {}}
        obj = normalized(raw, "Pod")
        meta = obj["metadata"]
        meta.update(name=view.name, namespace=view.namespace, uid=view.uid)
        spec = dict(obj.get("spec") or {})
        status = dict(obj.get("status") or {})
        node = "" if pending else view.node_name
        if node:
            spec["nodeName"] = node
        else:
            spec.pop("nodeName", None)
        spec["priority"] = view.priority
        if view.terminating:
            stamp = self._deleted_at.setdefault(view.uid, meta.get("deletionTimestamp") or _rfc3339(now))
            meta["deletionTimestamp"] = stamp
        else:
            meta.pop("deletionTimestamp", None)
        phase = status.get("phase")
        if phase not in ("Succeeded", "Failed"):
            status["phase"] = "Running" if node else "Pending"
        if pending and view.nominated_node_name:
            status["nominatedNodeName"] = view.nominated_node_name
        else:
            status.pop("nominatedNodeName", None)
        if view.start_time is None:
            status.pop("startTime", None)
        elif parse_time(status.get("startTime")) != view.start_time:
            status["startTime"] = _rfc3339(view.start_time)
        conditions = [c for c in status.get("conditions") or ()
                      if isinstance(c, Mapping) and c.get("type") not in ("DisruptionTarget", "PodScheduled")]
        kept = {c.get("type"): c for c in status.get("conditions") or () if isinstance(c, Mapping)}
        if view.preempted_by_scheduler:
            old = kept.get("DisruptionTarget")
            if old is not None and old.get("status") == "True" \
                    and old.get("reason") == "PreemptionByScheduler":
                conditions.append(old)
            else:
                conditions.append({"type": "DisruptionTarget", "status": "True",
                                   "reason": "PreemptionByScheduler",
                                   "message": "Preempted by the simulated kube-scheduler",
                                   "lastTransitionTime": meta.get("deletionTimestamp")
                                   or _rfc3339(now)})
        if not pending and view.scheduled_time is not None:
            old = kept.get("PodScheduled")
            if (old is not None and old.get("status") == "True"
                    and parse_time(old.get("lastTransitionTime")) == view.scheduled_time):
                conditions.append(old)
            else:
                conditions.append({"type": "PodScheduled", "status": "True",
                                   "lastTransitionTime": _rfc3339(view.scheduled_time)})
        if conditions:
            status["conditions"] = conditions
        else:
            status.pop("conditions", None)
        obj["spec"], obj["status"] = spec, status
        return obj

    # -- everything else ------------------------------------------------------------------
    @staticmethod
    def _object_keys(state: Any) -> dict[str, Iterable[Key]]:
        """Which objects of each other kind exist, from the engine's state."""
        controllers: dict[str, list[Key]] = {"ReplicaSet": [], "StatefulSet": [],
                                             "ReplicationController": []}
        for kind, namespace, name in state.controllers:
            controllers.setdefault(kind, []).append((namespace, name))
        return {
            "poddisruptionbudgets": list(state.pdbs),
            "priorityclasses": [("", n) for n in state.priority_classes],
            "namespaces": [("", n) for n in state.namespaces],
            "services": list(state.services),
            "replicasets": controllers["ReplicaSet"],
            "statefulsets": controllers["StatefulSet"],
            "replicationcontrollers": controllers["ReplicationController"],
            **{resource.name: state.store_of_kind(resource.kind).keys(resource.kind)
               for resource in registry.WATCHED.values()},
        }
