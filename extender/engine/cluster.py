"""`ClusterState`: the extender's view of the cluster, updated incrementally.

All mutation happens on the event loop thread (snapshot load, informer events, bind), so no
locks are needed; readers on the same loop always see a consistent state between awaits.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from extender.engine.nodetable import NodeTable
from extender.engine.podindex import PodIndex
from extender.model import k8s
from extender.model.disruption import PdbView, PriorityClassView
from extender.model.loadmetrics import WatcherMetrics
from extender.model.networkaware import AppGroupView, NetworkTopologyView
from extender.model.node import NodeView
from extender.model.nodeinfo import NodeInfo
from extender.model.numa import NRTView, effective_request
from extender.model.pod import PodView
from extender.model.resources import Resources
from extender.model.scheduling import ElasticQuotaView, PodGroupView

Clock = Callable[[], float]
T = TypeVar("T")
_MISSING = object()

#: How long a remembered pending pod (seen in a filter/prioritize request) is kept.
_PENDING_MEMORY = 4096
#: When pods became assigned is remembered as scheduler-plugins' `PodAssignEventHandler` does
#: (TargetLoadPacking's "missing" load): every 5 minutes from its start, the records older than
#: 60 s go. At most this many are kept besides (the oldest go first).
ASSIGNMENT_CLEANUP_SECONDS = 300.0
ASSIGNMENT_MIN_AGE_SECONDS = 60.0
_ASSIGNMENT_LIMIT = 65536


@dataclass(slots=True)
class Assumption:
    pod: PodView
    node_name: str
    expires_at: float
    pending: PodView | None = None  # the pod as it was before the bind, restored on expiry


class ClusterState:
    """Nodes (as `NodeInfo`), pods, PDBs and PriorityClasses.

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
        self._recent_pending: dict[str, PodView] = {}
        self.namespaces: dict[str, Mapping[str, str]] = {}  # name -> labels
        self.services: dict[tuple[str, str], Mapping[str, str] | None] = {}  # -> spec.selector
        #: (kind, namespace, name) -> spec.selector of ReplicaSets, StatefulSets and
        #: ReplicationControllers (a LabelSelector, or a label map for the latter).
        self.controllers: dict[tuple[str, str, str], object] = {}
        self.pod_index = PodIndex()
        #: The nodes as columns for the vectorised filters and scorers (a cache of `nodes`).
        self.table = NodeTable()
        # scheduler-plugins' objects (Coscheduling, CapacityScheduling).
        self.pod_groups: dict[tuple[str, str], PodGroupView] = {}
        self.elastic_quotas: dict[tuple[str, str], ElasticQuotaView] = {}
        # diktyo-io's objects (NetworkOverhead, TopologicalSort), by (namespace, name).
        self.app_groups: dict[tuple[str, str], AppGroupView] = {}
        self.network_topologies: dict[tuple[str, str], NetworkTopologyView] = {}
        # kubernetes-sigs' NodeResourceTopologies (NodeResourceTopologyMatch), by node name.
        self.topologies: dict[str, NRTView] = {}
        #: node -> {pod "namespace/name": effective request in nano-units}: pods this extender
        #: bound to a node that has a NodeResourceTopology since that object last changed (the
        #: overreserve cache's reservations), dropped when the node's next report arrives.
        self.topology_reserved: dict[str, dict[str, dict[str, int]]] = {}
        #: (namespace, pod group) -> {pod uid: gated}: every pod naming the group, pending or
        #: assigned (the scheduler's pod lister, which Coscheduling counts siblings in).
        self.group_members: dict[tuple[str, str], dict[str, bool]] = {}
        self._member_of: dict[str, tuple[tuple[str, str], tuple[str, str]]] = {}  # uid -> (group, key)
        self._member_uid: dict[tuple[str, str], str] = {}  # (namespace, name) -> uid
        #: namespace -> Σ quota requests of the pods assigned a node (bound or assumed).
        self.namespace_used: dict[str, Resources] = {}
        #: uid -> (pod, expiry): pods that passed a quota check and are on their way to a bind
        #: (CapacityScheduling's Reserve), counted in their namespace's use until then.
        self.quota_reservations: dict[str, tuple[PodView, float]] = {}
        #: The newest node load metrics (Trimaran), in load-watcher's shape; None: no source
        #: configured or nothing fetched yet. Nodes without fresh data are absent from it.
        self.node_metrics: WatcherMetrics | None = None
        #: node -> {uid: (Unix seconds, pod)}: pods seen becoming assigned to the node, by this
        #: extender's bind or by the informer (pending, then with a node), for
        #: TargetLoadPacking's load the metrics cannot show yet; `_assigned_order` has the
        #: same records oldest first, for pruning.
        self.assignments: dict[str, dict[str, tuple[float, PodView]]] = {}
        self._assigned_order: dict[str, tuple[str, float]] = {}  # uid -> (node, time)
        #: The cleanups' phase: they run at this time + k × 5 min (k >= 1).
        self.assignments_since = wall_clock()
        self.generation = 0
        #: Bumped on every node add, update or delete: memos over the node set check it.
        self.node_generation = 0
        self._node_memo: dict[object, object] = {}
        self.last_change = clock()

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
        self._note_member(view)
        before = self.pods.get(view.uid)
        if view.node_name and before is not None and not before.node_name:
            self._note_assigned(view)  # pending until now: it has just been bound
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
        member = uid or self._member_uid.get((namespace, name))
        if member:
            self._forget_member(member)
        if found:
            self.release_quota(found)
            self._forget_assigned(found)
            self._forget(found)
            self._touch()

    def _note_member(self, view: PodView) -> None:
        self._forget_member(view.uid)
        # Finished pods are not members: kube-scheduler's pod informer leaves them out.
        if view.pod_group and not view.is_terminal:
            group = (view.namespace, view.pod_group)
            key = (view.namespace, view.name)
            self.group_members.setdefault(group, {})[view.uid] = view.gated
            self._member_of[view.uid] = (group, key)
            self._member_uid[key] = view.uid

    def _forget_member(self, uid: str) -> None:
        found = self._member_of.pop(uid, None)
        if found is None:
            return
        group, key = found
        members = self.group_members.get(group)
        if members is not None:
            members.pop(uid, None)
            if not members:
                del self.group_members[group]
        if self._member_uid.get(key) == uid:
            del self._member_uid[key]

    def _count_used(self, view: PodView, sign: int) -> None:
        used = self.namespace_used.get(view.namespace)
        if used is None:
            used = self.namespace_used[view.namespace] = Resources()
        used.add(view.quota_requests, sign)
        used.allowed_pods += sign * view.quota_requests.allowed_pods

    def _place(self, view: PodView) -> None:
        self._count_used(view, 1)
        self.quota_reservations.pop(view.uid, None)
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
            self._count_used(view, -1)
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
        self._note_assigned(bound)
        self.reserve_topology(bound, node_name)
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
            self._forget_assigned(assumption.pod.uid)
            pending = assumption.pending
            if pending is not None:
                self.pods[pending.uid] = pending
                self._uid_by_key[(pending.namespace, pending.name)] = pending.uid
                if pending.nominated_node_name:
                    self.nominated.setdefault(pending.nominated_node_name, {})[pending.uid] = pending
        if expired:
            self._touch()
        return [a.pod for a in expired]

    # ---- when pods became assigned (TargetLoadPacking) ----------------------------------
    def _note_assigned(self, pod: PodView) -> None:
        """Remember that `pod` has just become assigned to its node (upstream's
        `PodAssignEventHandler`). A pod already remembered on that node keeps its first time:
        the bind verb's assumption comes before the watch confirms it."""
        known = self._assigned_order.get(pod.uid)
        if known is not None:
            if known[0] == pod.node_name:
                return
            self._forget_assigned(pod.uid)
        now = self.wall_clock()
        self.assignments.setdefault(pod.node_name, {})[pod.uid] = (now, pod)
        self._assigned_order[pod.uid] = (pod.node_name, now)
        order = self._assigned_order
        while order:  # oldest first, and what a cleanup removes is always the oldest
            uid, (_, at) = next(iter(order.items()))
            if self._assignment_kept(at, now) and len(order) <= _ASSIGNMENT_LIMIT:
                break
            self._forget_assigned(uid)

    def _assignment_kept(self, at: float, now: float) -> bool:
        """Whether a record made at `at` is still there at `now`: no cleanup has run since it
        became 60 s old (the first cleanup at or after `at` + 60 s is later than `now`)."""
        due = at + ASSIGNMENT_MIN_AGE_SECONDS - self.assignments_since
        ticks = max(1, math.ceil(due / ASSIGNMENT_CLEANUP_SECONDS))
        return self.assignments_since + ticks * ASSIGNMENT_CLEANUP_SECONDS > now

    def _forget_assigned(self, uid: str) -> None:
        found = self._assigned_order.pop(uid, None)
        if found is None:
            return
        on_node = self.assignments.get(found[0])
        if on_node is not None:
            on_node.pop(uid, None)
            if not on_node:
                del self.assignments[found[0]]

    def recent_assignments(self, node_name: str) -> Sequence[tuple[float, PodView]]:
        """(Unix seconds, pod) of the pods remembered as having become assigned to the node,
        that no cleanup has removed yet (a pure read: the records a cleanup would have removed
        are skipped here and dropped when the next is added)."""
        found = self.assignments.get(node_name)
        if not found:
            return ()
        now = self.wall_clock()
        return [entry for entry in found.values() if self._assignment_kept(entry[0], now)]

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

    # ---- scheduler-plugins' PodGroups and ElasticQuotas ---------------------------------
    def apply_pod_group(self, pg: k8s.PodGroup) -> None:
        view = PodGroupView(pg)
        self.pod_groups[(view.namespace, view.name)] = view
        self._touch()

    def delete_pod_group(self, namespace: str, name: str) -> None:
        if self.pod_groups.pop((namespace, name), None) is not None:
            self._touch()

    def apply_elastic_quota(self, eq: k8s.ElasticQuota) -> None:
        view = ElasticQuotaView(eq)
        self.elastic_quotas[(view.namespace, view.name)] = view
        self._touch()

    def delete_elastic_quota(self, namespace: str, name: str) -> None:
        if self.elastic_quotas.pop((namespace, name), None) is not None:
            self._touch()

    def set_node_metrics(self, metrics: WatcherMetrics | None) -> None:
        """Replace the load metrics (the metrics refresher calls this, never a request)."""
        self.node_metrics = metrics
        self._touch()

    def pod_group(self, namespace: str, name: str) -> PodGroupView | None:
        return self.pod_groups.get((namespace, name))

    # ---- diktyo-io's AppGroups and NetworkTopologies (NetworkAware) ----------------------
    def apply_app_group(self, ag: k8s.AppGroup) -> None:
        view = AppGroupView(ag)
        self.app_groups[(view.namespace, view.name)] = view
        self._touch()

    def delete_app_group(self, namespace: str, name: str) -> None:
        if self.app_groups.pop((namespace, name), None) is not None:
            self._touch()

    def apply_network_topology(self, nt: k8s.NetworkTopology) -> None:
        view = NetworkTopologyView(nt)
        self.network_topologies[(view.namespace, view.name)] = view
        self._touch()

    def delete_network_topology(self, namespace: str, name: str) -> None:
        if self.network_topologies.pop((namespace, name), None) is not None:
            self._touch()

    def app_group(self, namespace: str, name: str) -> AppGroupView | None:
        return self.app_groups.get((namespace, name))

    def network_topology(self, namespace: str, name: str) -> NetworkTopologyView | None:
        return self.network_topologies.get((namespace, name))

    # ---- NodeResourceTopologies (NodeResourceTopologyMatch) ------------------------------
    def apply_node_resource_topology(self, nrt: k8s.NodeResourceTopology) -> None:
        """Add or update a node's NodeResourceTopology. A new report (another resourceVersion,
        or none) supersedes what was reserved on the node: the agent has seen those pods."""
        view = NRTView.from_k8s(nrt)
        current = self.topologies.get(view.name)
        if (current is None or not view.resource_version
                or current.resource_version != view.resource_version):
            self.topology_reserved.pop(view.name, None)
        self.topologies[view.name] = view
        self._touch()

    def delete_node_resource_topology(self, name: str) -> None:
        self.topology_reserved.pop(name, None)
        if self.topologies.pop(name, None) is not None:
            self._touch()

    def node_topology(self, node_name: str) -> NRTView | None:
        """The node's NodeResourceTopology (named after it), or None."""
        return self.topologies.get(node_name)

    def topology_reservations(self, node_name: str) -> Sequence[Mapping[str, int]]:
        """Effective requests of the pods bound to the node since its last report."""
        found = self.topology_reserved.get(node_name)
        return tuple(found.values()) if found else ()

    def reserve_topology(self, pod: PodView, node_name: str) -> None:
        """The overreserve cache's Reserve: remember the just-bound pod's effective request
        against the node's report (only nodes that have one: others have nothing to correct)."""
        if node_name in self.topologies and pod.pod_spec is not None:
            self.topology_reserved.setdefault(node_name, {})[pod.key] = effective_request(
                pod.pod_spec)

    def unplaced_pods(self) -> list[PodView]:
        """Pods bound to a node the state does not know (yet): the pod lister lists them, the
        node snapshot has no NodeInfo for them."""
        return [pod for pods in self._orphans.values() for pod in pods.values()]

    def quotas(self) -> dict[str, ElasticQuotaView]:
        """namespace -> its ElasticQuota (the first one known, when there are several)."""
        found: dict[str, ElasticQuotaView] = {}
        for (namespace, _), view in self.elastic_quotas.items():
            found.setdefault(namespace, view)
        return found

    def quota_used(self, namespace: str, exclude: str = "") -> Resources:
        """Σ quota requests of the namespace's assigned pods and live quota reservations
        (but `exclude`'s: the pod being scheduled again)."""
        used = self.namespace_used.get(namespace)
        total = used.copy() if used is not None else Resources()
        if self.quota_reservations:
            now = self.clock()
            for uid, (pod, expires_at) in list(self.quota_reservations.items()):
                if expires_at <= now:
                    del self.quota_reservations[uid]
                elif pod.namespace == namespace and uid != exclude:
                    total.add(pod.quota_requests)
                    total.allowed_pods += pod.quota_requests.allowed_pods
        return total

    def reserve_quota(self, pod: PodView, ttl: float) -> None:
        """Count a pod that passed the quota checks in its namespace's use until it is bound
        (then its assumption counts), deleted, reserved again, or `ttl` runs out."""
        if pod.uid and not pod.node_name and any(
                ns == pod.namespace for ns, _ in self.elastic_quotas):
            self.quota_reservations[pod.uid] = (pod, self.clock() + ttl)

    def release_quota(self, uid: str) -> None:
        self.quota_reservations.pop(uid, None)

    def quota_counted(self, pod: PodView) -> bool:
        """Whether `quota_used` counts the pod: it has a node, or a live reservation."""
        if pod.node_name:
            return True
        found = self.quota_reservations.get(pod.uid)
        return found is not None and found[1] > self.clock()

    def nominated_all(self) -> list[PodView]:
        return [pod for pods in self.nominated.values() for pod in pods.values()]

    def group_pods(self, namespace: str, group: str) -> dict[str, bool]:
        """{uid: gated} of every pod naming the group, pending or assigned."""
        return self.group_members.get((namespace, group), {})

    def apply(self, kind: str, obj: object) -> None:
        """Add or update an object of one of `k8s.KINDS`."""
        if kind in ("ReplicaSet", "StatefulSet", "ReplicationController"):
            self.apply_controller(obj)  # type: ignore[arg-type]
            return
        {"Node": self.apply_node, "Pod": self.apply_pod, "PodDisruptionBudget": self.apply_pdb,
         "PriorityClass": self.apply_priority_class, "Namespace": self.apply_namespace,
         "Service": self.apply_service, "PodGroup": self.apply_pod_group,
         "ElasticQuota": self.apply_elastic_quota, "AppGroup": self.apply_app_group,
         "NetworkTopology": self.apply_network_topology,
         "NodeResourceTopology": self.apply_node_resource_topology}[kind](obj)  # type: ignore[operator]

    def delete(self, kind: str, namespace: str, name: str) -> None:
        """Delete an object of one of the kinds `apply` takes (pods: by namespace and name)."""
        if kind in ("ReplicaSet", "StatefulSet", "ReplicationController"):
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
        elif kind == "PodGroup":
            self.delete_pod_group(namespace, name)
        elif kind == "ElasticQuota":
            self.delete_elastic_quota(namespace, name)
        elif kind == "AppGroup":
            self.delete_app_group(namespace, name)
        elif kind == "NetworkTopology":
            self.delete_network_topology(namespace, name)
        elif kind == "NodeResourceTopology":
            self.delete_node_resource_topology(name)
        else:
            raise KeyError(kind)

    def replace(self, kind: str, objects: Iterable[object]) -> None:
        """Make the objects of a namespace, service, controller, PodGroup or ElasticQuota kind
        exactly `objects` (relist)."""
        if kind == "Namespace":
            self.namespaces.clear()
        elif kind == "Service":
            self.services.clear()
        elif kind == "PodGroup":
            self.pod_groups.clear()
        elif kind == "ElasticQuota":
            self.elastic_quotas.clear()
        elif kind == "AppGroup":
            self.app_groups.clear()
        elif kind == "NetworkTopology":
            self.network_topologies.clear()
        elif kind == "NodeResourceTopology":
            # Reports that did not change keep their reservations (`apply` decides).
            objects = list(objects)
            listed = {obj.metadata.name for obj in objects}  # type: ignore[attr-defined]
            for name in [n for n in self.topologies if n not in listed]:
                self.delete_node_resource_topology(name)
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
            self._forget_assigned(uid)
            self._forget(uid)
        for uid in [u for u in self._member_of if u not in fresh and u not in self.assumed]:
            self._forget_member(uid)
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
                # when pods became assigned (TargetLoadPacking): pruned past 60 s, at most
                # 65 536
                "pod_assignment_times": len(self._assigned_order)}

    def _node_changed(self) -> None:
        self.node_generation += 1
        self._node_memo.clear()
        self._touch()

    def _touch(self) -> None:
        self.generation += 1
        self.last_change = self.clock()
