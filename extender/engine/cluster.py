"""`ClusterState`: the extender's view of the cluster, updated incrementally.

All mutation happens on the event loop thread (snapshot load, informer events, bind), so no
locks are needed; readers on the same loop always see a consistent state between awaits.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from extender.engine import registry
from extender.engine.nodetable import NodeTable
from extender.engine.podindex import PodIndex
from extender.engine.stores import PluginStore
from extender.model import k8s
from extender.model.disruption import PdbView, PriorityClassView
from extender.model.node import NodeView
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

Clock = Callable[[], float]
T = TypeVar("T")
S = TypeVar("S", bound=PluginStore)
_MISSING = object()

#: How long a remembered pending pod (seen in a filter/prioritize request) is kept.
_PENDING_MEMORY = 4096
@dataclass(slots=True)
class Assumption:
    pod: PodView
    node_name: str
    expires_at: float
    pending: PodView | None = None  # the pod as it was before the bind, restored on expiry


class ClusterState:
    """What kube-scheduler's cache keeps: nodes (as `NodeInfo`), pods, PDBs, PriorityClasses
    and what the default spread reads; and one store per registered plugin store
    (`engine.stores`), fed the objects of its kinds and the pod events.

    Pods bound to a node count on it; pending pods are kept for nominations and for binding
    (their requests are needed when a bind assumes them). Succeeded/Failed pods are dropped.
    """

    def __init__(self, clock: Clock = time.monotonic, wall_clock: Clock = time.time) -> None:
        self.clock = clock
        #: Unix seconds (load metrics windows are stamped so): when pods became assigned.
        self.wall_clock = wall_clock
        self.nodes: dict[str, NodeInfo] = {}
        self.pods: dict[str, PodView] = {}  # uid -> pod (bound or pending)
        self._uid_by_key: dict[tuple[str, str], str] = {}
        self._orphans: dict[str, dict[str, PodView]] = {}  # bound to a node we do not know yet
        self.pdbs: dict[tuple[str, str], PdbView] = {}
        self.priority_classes: dict[str, PriorityClassView] = {}
        self.image_nodes: Counter[str] = Counter()
        self.nominated: dict[str, dict[str, PodView]] = {}
        self.assumed: dict[str, Assumption] = {}
        #: Pod events older than the bind that assumed the pod (`apply_pod`): how often the
        #: watch ran behind the bind verb (`extender_informer_late_pod_events_total`).
        self.late_pod_events = 0
        self._recent_pending: dict[str, PodView] = {}
        self.namespaces: dict[str, Mapping[str, str]] = {}  # name -> labels
        self.services: dict[tuple[str, str], Mapping[str, str] | None] = {}  # -> spec.selector
        #: (kind, namespace, name) -> spec.selector of ReplicaSets, StatefulSets and
        #: ReplicationControllers (a LabelSelector, or a label map for the latter).
        self.controllers: dict[tuple[str, str, str], object] = {}
        self.pod_index = PodIndex()
        #: The nodes as columns for the vectorised filters and scorers (a cache of `nodes`).
        self.table = NodeTable()
        self.generation = 0
        #: Bumped on every node add, update or delete: memos over the node set check it.
        self.node_generation = 0
        self._node_memo: dict[object, object] = {}
        self.last_change = clock()
        #: Every registered plugin's store (`engine.stores`), by its class.
        self.stores: dict[type[PluginStore], PluginStore] = {
            cls: cls(self) for cls in registry.STORES}
        self._store_of_kind = {kind: self.stores[cls]
                               for kind, cls in registry.STORE_OF_KIND.items()}
        self._pod_stores = tuple(self.stores.values())
        self._object_stores = tuple(s for s in self._pod_stores
                                    if type(s).pod_object is not PluginStore.pod_object)
        self._scheduling_stores = tuple(s for s in self._pod_stores
                                        if type(s).pod_scheduling is not PluginStore.pod_scheduling)

    def store(self, cls: type[S]) -> S:
        """The plugin store of that class (`ClusterContext.store`)."""
        return self.stores[cls]  # type: ignore[return-value]

    def store_of_kind(self, kind: str) -> PluginStore:
        """The store that keeps objects of `kind` (KeyError: none does)."""
        return self._store_of_kind[kind]

    # ---- nodes -------------------------------------------------------------------------
    def apply_node(self, node: k8s.Node) -> NodeInfo:
        view = NodeView.from_k8s(node)
        current = self.nodes.get(view.name)
        if current is not None:
            self._count_images(current.node, -1)
            info = current.with_node(view)
        else:
            info = NodeInfo(view, list(self._orphans.pop(view.name, {}).values()))
            for pod in info.pods.values():
                self.pod_index.add(pod, view.name)
        self._count_images(view, 1)
        self.nodes[view.name] = info
        self.table.put(info)
        self._node_changed()
        return info

    def set_node_unschedulable(self, name: str, unschedulable: bool) -> NodeInfo | None:
        """`kubectl cordon` / `uncordon`: the node with `spec.unschedulable` set or cleared
        (None: no such node). The simulator's node events use it."""
        current = self.nodes.get(name)
        if current is None:
            return None
        old = current.node
        view = NodeView.__new__(NodeView)
        for slot in NodeView.__slots__:
            setattr(view, slot, getattr(old, slot))
        view.unschedulable = unschedulable
        view.memo = {}
        info = current.with_node(view)
        self.nodes[name] = info
        self.table.put(info)
        self._node_changed()
        return info

    def delete_node(self, name: str) -> None:
        info = self.nodes.pop(name, None)
        if info is None:
            return
        self.table.drop(name)
        self._count_images(info.node, -1)
        if info.pods:
            self._orphans[name] = dict(info.pods)
            for pod in info.pods.values():
                self.pod_index.remove(pod, name)
        self._node_changed()

    def _count_images(self, view: NodeView, sign: int) -> None:
        counts = self.image_nodes
        for image in view.images:
            counts[image] += sign
            if counts[image] <= 0:
                del counts[image]

    # ---- pods --------------------------------------------------------------------------
    def apply_pod(self, pod: k8s.Pod) -> PodView | None:
        """Add or update a pod from its object. Returns the view kept, or None if dropped."""
        view = PodView.from_k8s(pod, slim=bool(pod.spec.node_name))
        before = self.pods.get(view.uid)
        for store in self._pod_stores:
            store.pod_seen(view, before)
        for store in self._object_stores:
            store.pod_object(pod, view)
        assumption = self.assumed.get(view.uid)
        if assumption is not None and not view.node_name and not view.is_terminal:
            # The watch delivers a pod's events in order, so one without a node after the bind
            # assumed it is older than the binding (our informer behind kube-scheduler's, or a
            # relist page read before the bind). kube-scheduler's cache keeps an assumed pod
            # through such events; forgetting it would free its node and quota for another pod.
            # The stores have still seen the object (a PodGroup counts its members as its
            # lister does).
            self.late_pod_events += 1
            assumption.pending = view
            self._touch()  # what the stores keep may have changed (replies are kept by generation)
            return before
        self._forget(view.uid)
        key = (view.namespace, view.name)
        stale_uid = self._uid_by_key.get(key)
        if stale_uid is not None and stale_uid != view.uid:
            self._forget(stale_uid)
        self._touch()
        if view.is_terminal:
            return None
        self.pods[view.uid] = view
        self._uid_by_key[key] = view.uid
        if view.node_name:
            self.assumed.pop(view.uid, None)
            self._place(view)
        elif view.nominated_node_name:
            self.nominated.setdefault(view.nominated_node_name, {})[view.uid] = view
        return view

    def delete_pod(self, namespace: str, name: str, uid: str | None = None) -> None:
        found = uid or self._uid_by_key.get((namespace, name))
        for store in self._pod_stores:
            store.pod_deleted(namespace, name, found)
        if found:
            self._forget(found)
            self._touch()

    def _place(self, view: PodView) -> None:
        for store in self._pod_stores:
            store.pod_placed(view)
        info = self.nodes.get(view.node_name)
        if info is None:
            self._orphans.setdefault(view.node_name, {})[view.uid] = view
        else:
            info.add_pod(view)
            self.table.touch(info)
            self.pod_index.add(view, view.node_name)

    def _forget(self, uid: str) -> None:
        view = self.pods.pop(uid, None)
        self.assumed.pop(uid, None)
        if view is None:
            return
        if self._uid_by_key.get((view.namespace, view.name)) == uid:
            del self._uid_by_key[(view.namespace, view.name)]
        if view.node_name:
            for store in self._pod_stores:
                store.pod_unplaced(view)
            info = self.nodes.get(view.node_name)
            if info is not None and info.remove_pod(view):
                self.table.touch(info)
                self.pod_index.remove(view, view.node_name)
            orphans = self._orphans.get(view.node_name)
            if orphans is not None:
                orphans.pop(uid, None)
                if not orphans:
                    del self._orphans[view.node_name]
        if view.nominated_node_name:
            nominated = self.nominated.get(view.nominated_node_name)
            if nominated is not None:
                nominated.pop(uid, None)
                if not nominated:
                    del self.nominated[view.nominated_node_name]

    def replace_view(self, view: PodView) -> None:
        """Put a changed view of a known bound pod in place of the old one (what an update
        event does, for callers that build the view themselves: the simulator)."""
        self._forget(view.uid)
        self.pods[view.uid] = view
        self._uid_by_key[(view.namespace, view.name)] = view.uid
        self._place(view)
        self._touch()

    def pod_by_uid(self, uid: str) -> PodView | None:
        return self.pods.get(uid)

    def pod_by_key(self, namespace: str, name: str) -> PodView | None:
        uid = self._uid_by_key.get((namespace, name))
        return self.pods.get(uid) if uid else None

    # ---- pending pods seen in requests, and binding ------------------------------------
    def remember_pending(self, pod: PodView) -> None:
        """Keep a pod seen in a filter/prioritize request so a later bind can assume it."""
        for store in self._scheduling_stores:
            store.pod_scheduling(pod)
        if not pod.uid or pod.node_name:
            return
        recent = self._recent_pending
        recent.pop(pod.uid, None)
        recent[pod.uid] = pod
        if len(recent) > _PENDING_MEMORY:
            del recent[next(iter(recent))]

    def pending_pod(self, uid: str) -> PodView | None:
        pod = self.pods.get(uid)
        if pod is not None and not pod.node_name:
            return pod
        return self._recent_pending.get(uid)

    def assume(self, pod: PodView, node_name: str, ttl: float) -> None:
        """Count a just-bound pod on its node before the watch confirms it."""
        bound = pod.bound_to(node_name)
        known = self.pods.get(pod.uid)
        pending = known if known is not None and not known.node_name else None
        self._forget(pod.uid)
        self._recent_pending.pop(pod.uid, None)
        self.pods[bound.uid] = bound
        self._uid_by_key[(bound.namespace, bound.name)] = bound.uid
        self._place(bound)
        self.assumed[bound.uid] = Assumption(bound, node_name, self.clock() + ttl, pending)
        for store in self._pod_stores:
            store.pod_assumed(bound, node_name)
        self._touch()

    def expire_assumptions(self, now: float | None = None) -> list[PodView]:
        """Drop assumed pods the watch has not confirmed by `now` (default: the clock's
        time); returns them.

        Their resources are freed; a pod the informer knew as pending goes back to pending,
        as kube-scheduler's cache forgets an assumed pod."""
        now = self.clock() if now is None else now
        expired = [a for a in self.assumed.values() if a.expires_at <= now]
        for assumption in expired:
            self._forget(assumption.pod.uid)
            for store in self._pod_stores:
                store.assumption_dropped(assumption.pod.uid)
            pending = assumption.pending
            if pending is not None:
                self.pods[pending.uid] = pending
                self._uid_by_key[(pending.namespace, pending.name)] = pending.uid
                if pending.nominated_node_name:
                    self.nominated.setdefault(pending.nominated_node_name, {})[pending.uid] = pending
        if expired:
            self._touch()
        return [a.pod for a in expired]

    # ---- PDBs and PriorityClasses ------------------------------------------------------
    def apply_pdb(self, pdb: k8s.PodDisruptionBudget) -> None:
        view = PdbView(pdb)
        self.pdbs[(view.namespace, view.name)] = view
        self._touch()

    def delete_pdb(self, namespace: str, name: str) -> None:
        if self.pdbs.pop((namespace, name), None) is not None:
            self._touch()

    def apply_priority_class(self, pc: k8s.PriorityClass) -> None:
        view = PriorityClassView(pc)
        self.priority_classes[view.name] = view
        self._touch()

    def delete_priority_class(self, name: str) -> None:
        if self.priority_classes.pop(name, None) is not None:
            self._touch()

    # ---- namespaces and the owners of pods (PodTopologySpread's default selectors) ---------
    def apply_namespace(self, ns: k8s.Namespace) -> None:
        self.namespaces[ns.metadata.name] = ns.metadata.labels or {}
        self._touch()

    def delete_namespace(self, name: str) -> None:
        if self.namespaces.pop(name, None) is not None:
            self._touch()

    def apply_service(self, svc: k8s.Service) -> None:
        self.services[(svc.metadata.namespace, svc.metadata.name)] = svc.spec.selector
        self._touch()

    def delete_service(self, namespace: str, name: str) -> None:
        if self.services.pop((namespace, name), None) is not None:
            self._touch()

    def apply_controller(self, obj: k8s.ReplicaSet | k8s.StatefulSet | k8s.ReplicationController) -> None:
        kind = type(obj).__name__
        self.controllers[(kind, obj.metadata.namespace, obj.metadata.name)] = obj.spec.selector
        self._touch()

    def delete_controller(self, kind: str, namespace: str, name: str) -> None:
        if self.controllers.pop((kind, namespace, name), None) is not None:
            self._touch()

    def unplaced_pods(self) -> list[PodView]:
        """Pods bound to a node the state does not know (yet): the pod lister lists them, the
        node snapshot has no NodeInfo for them."""
        return [pod for pods in self._orphans.values() for pod in pods.values()]

    def nominated_all(self) -> list[PodView]:
        return [pod for pods in self.nominated.values() for pod in pods.values()]

    def apply(self, kind: str, obj: object) -> None:
        """Add or update an object of one of `k8s.KINDS` or of a plugin store's kinds."""
        store = self._store_of_kind.get(kind)
        if store is not None:
            store.apply(kind, obj)
            self._touch()
            return
        if kind in ("ReplicaSet", "StatefulSet", "ReplicationController"):
            self.apply_controller(obj)  # type: ignore[arg-type]
            return
        {"Node": self.apply_node, "Pod": self.apply_pod, "PodDisruptionBudget": self.apply_pdb,
         "PriorityClass": self.apply_priority_class, "Namespace": self.apply_namespace,
         "Service": self.apply_service}[kind](obj)  # type: ignore[operator]

    def delete(self, kind: str, namespace: str, name: str) -> None:
        """Delete an object of one of the kinds `apply` takes (pods: by namespace and name)."""
        store = self._store_of_kind.get(kind)
        if store is not None:
            if store.delete(kind, namespace, name):
                self._touch()
        elif kind in ("ReplicaSet", "StatefulSet", "ReplicationController"):
            self.delete_controller(kind, namespace, name)
        elif kind == "Node":
            self.delete_node(name)
        elif kind == "Pod":
            self.delete_pod(namespace, name)
        elif kind == "PodDisruptionBudget":
            self.delete_pdb(namespace, name)
        elif kind == "PriorityClass":
            self.delete_priority_class(name)
        elif kind == "Namespace":
            self.delete_namespace(name)
        elif kind == "Service":
            self.delete_service(namespace, name)
        else:
            raise KeyError(kind)

    def replace(self, kind: str, objects: Iterable[object]) -> None:
        """Make the objects of a namespace, service, controller or plugin-store kind exactly
        `objects` (relist)."""
        store = self._store_of_kind.get(kind)
        if store is not None:
            store.replace(kind, objects)
            self._touch()
            return
        if kind == "Namespace":
            self.namespaces.clear()
        elif kind == "Service":
            self.services.clear()
        else:
            for key in [k for k in self.controllers if k[0] == kind]:
                del self.controllers[key]
        for obj in objects:
            self.apply(kind, obj)
        self._touch()

    # ---- relist ------------------------------------------------------------------------
    def replace_nodes(self, nodes: Iterable[k8s.Node]) -> None:
        """Make the node set exactly `nodes` (after a relist)."""
        fresh = {n.metadata.name: n for n in nodes}
        for name in [n for n in self.nodes if n not in fresh]:
            self.delete_node(name)
        for node in fresh.values():
            self.apply_node(node)

    def replace_pods(self, pods: Iterable[k8s.Pod]) -> None:
        """Make the pod set exactly `pods` (after a relist); assumed pods survive until expiry."""
        fresh = {p.metadata.uid: p for p in pods}
        for uid in [u for u in self.pods if u not in fresh and u not in self.assumed]:
            self._forget(uid)
        for store in self._pod_stores:
            store.pods_relisted(lambda uid: uid in fresh or uid in self.assumed)
        for pod in fresh.values():
            self.apply_pod(pod)
        self._touch()

    def replace_pdbs(self, pdbs: Iterable[k8s.PodDisruptionBudget]) -> None:
        self.pdbs.clear()
        for pdb in pdbs:
            self.apply_pdb(pdb)
        self._touch()

    def replace_priority_classes(self, pcs: Iterable[k8s.PriorityClass]) -> None:
        self.priority_classes.clear()
        for pc in pcs:
            self.apply_priority_class(pc)
        self._touch()

    # ---- reads for the engine (engine.framework.ClusterContext) ------------------------
    def node_count(self) -> int:
        return len(self.nodes)

    def image_node_count(self, image: str) -> int:
        return self.image_nodes.get(image, 0)

    def nominated_pods(self, node_name: str) -> Sequence[PodView]:
        found = self.nominated.get(node_name)
        return tuple(found.values()) if found else ()

    def pdb_list(self) -> Sequence[PdbView]:
        return tuple(self.pdbs.values())

    def priority_class(self, name: str) -> PriorityClassView | None:
        return self.priority_classes.get(name)

    def namespace_labels(self, name: str) -> Mapping[str, str] | None:
        return self.namespaces.get(name)

    def services_in(self, namespace: str) -> list[Mapping[str, str]]:
        """The selectors of the namespace's Services that have one."""
        return [sel for (ns, _), sel in self.services.items() if ns == namespace and sel is not None]

    def controller_selector(self, kind: str, namespace: str, name: str) -> object | None:
        return self.controllers.get((kind, namespace, name))

    def node_memo(self, key: object, compute: Callable[[], T]) -> T:
        """`compute()`, remembered until the node set or any node changes."""
        found = self._node_memo.get(key, _MISSING)
        if found is _MISSING:
            if len(self._node_memo) > 1024:
                self._node_memo.clear()
            found = self._node_memo[key] = compute()
        return found  # type: ignore[return-value]

    def label_column(self, key: str) -> Mapping[NodeInfo, str | None]:
        """Every node's value for one label key (None: absent), keyed by the node's info;
        remembered until a node changes."""
        return self.node_memo(("label-column", key), lambda: {
            info: info.node.labels.get(key) for info in self.nodes.values()})

    def cache_sizes(self) -> dict[str, int]:
        """Entries of the state's own caches (exported as metrics; each is bounded)."""
        return {"remembered_pending_pods": len(self._recent_pending),
                "node_set_memos": len(self._node_memo),
                "pod_selector_matches": self.pod_index.cached_matches(),
                **{name: size for store in self._pod_stores
                   for name, size in store.sizes().items()}}

    def _node_changed(self) -> None:
        self.node_generation += 1
        self._node_memo.clear()
        self._touch()

    def changed(self) -> None:
        """A plugin store's data changed outside an event (`StoreHost.changed`)."""
        self._touch()

    def _touch(self) -> None:
        self.generation += 1
        self.last_change = self.clock()
