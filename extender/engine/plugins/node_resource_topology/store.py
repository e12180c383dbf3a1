"""NodeResourceTopologyMatch's data: each node's NodeResourceTopology report, and the
overreserve cache (scheduler-plugins' `cache.OverReserve`, v0.34.7) built on them.

The cache keeps its own copy of each node's report and takes from every NUMA cell of it the
pods bound to the node since (`reserved`). A newer report does not replace the copy by
itself: it may predate the kubelet's admission of those pods. The copy is replaced (flushed,
the reservations dropped) by the cache's resync, every `cacheResyncPeriodSeconds`, and only for
a node a Filter rejected a pod on since its last reservation (`maybe_overreserved`), when the
node's latest report carries a pod fingerprint (`model.podfingerprint`) equal to that of the
pods known on the node; or at once when a report changes the node's Topology Manager
configuration. The resync needs the pods as upstream's pod lister has them, so the store
keeps them, once `enable` (serve, live) turns the cache on.

A node where a pod of another scheduler runs (or ran: its events, since the node's last flush)
is stale to the cache (`foreignPodsDetect`): the plugin refuses it ("invalid node topology
data") and scores it 0 until the resync takes a report for it. Upstream knows its own profiles
from its configuration; the extender learns them from the pods kube-scheduler asks it about
(`pod_scheduling`), so until a profile's first request its pods count as another's."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from extender.engine.stores import PluginStore, WatchedResource
from extender.model import k8s, podfingerprint
from extender.model.numa import NRTView, effective_request, exclusive_resources
from extender.model.pod import PodView

# kubernetes-sigs' NodeResourceTopology (manifests/components/numa).
NODE_RESOURCE_TOPOLOGIES = WatchedResource(
    "noderesourcetopologies", "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies",
    k8s.NodeResourceTopology, crd="noderesourcetopologies.topology.node.k8s.io",
    component="numa", namespaced=False)

#: `cache.resyncMethod`: which pods the fingerprint counts.
RESYNC_AUTODETECT = "Autodetect"
RESYNC_ALL = "All"
RESYNC_ONLY_EXCLUSIVE_RESOURCES = "OnlyExclusiveResources"
#: `cache.foreignPodsDetect`: which pods of other schedulers make a node stale.
FOREIGN_NONE = "None"
FOREIGN_ONLY_EXCLUSIVE_RESOURCES = "OnlyExclusiveResources"
#: `cache.informerMode`: which pods the lister holds and counts.
INFORMER_SHARED = "Shared"
INFORMER_DEDICATED = "Dedicated"


class ListedPod(NamedTuple):
    """A pod as the resync reads it from the lister."""

    namespace: str
    name: str
    node_name: str
    phase: str
    scheduler_name: str
    exclusive: bool  # `resourcerequests.AreExclusiveForPod`
    fingerprint_hash: int  # its part of a node's pod fingerprint (`podfingerprint.pod_hash`)


def relevant(pod: ListedPod, informer_mode: str) -> bool:
    """`podprovider.IsPodRelevantShared` / `IsPodRelevantDedicated`: a Running pod with the
    shared informer; a bound pod past Pending (a finished one too) with the dedicated one."""
    if informer_mode == INFORMER_DEDICATED:
        return pod.phase != "Pending" and bool(pod.node_name)
    return pod.phase == "Running"


def expected_fingerprint(report: NRTView, method: str) -> tuple[str, bool]:
    """`podFingerprintForNodeTopology`: the report's fingerprint ("" when it has none) and
    whether only pods with exclusive resources count: the attribute's, counting those with
    `OnlyExclusiveResources` or, with `Autodetect`, when the report's method attribute says
    so; else the annotation's, counting every pod."""
    if report.fingerprint_attribute:
        only_exclusive = method == RESYNC_ONLY_EXCLUSIVE_RESOURCES or (
            method == RESYNC_AUTODETECT
            and report.fingerprint_method == podfingerprint.METHOD_WITH_EXCLUSIVE_RESOURCES)
        return report.fingerprint, only_exclusive
    return report.fingerprint, False


@dataclass
class TopologyStore(PluginStore):
    #: Each node's latest report, as the watch delivered it: what the plugin reads without
    #: the cache (passthrough), and what a resync takes (upstream reads it from the API).
    topologies: dict[str, NRTView] = field(default_factory=dict)
    #: The cache's copy of each node's report: the first one seen, then what a flush put there.
    cached: dict[str, NRTView] = field(default_factory=dict)
    #: node -> {pod "namespace/name": effective request in nano-units} (`assumedResources`).
    reserved: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    #: Nodes a Filter rejected a pod on since their last reservation (`nodesMaybeOverreserved`).
    maybe_overreserved: set[str] = field(default_factory=set)
    #: Nodes whose report changed their Topology Manager configuration (`nodesWithAttrUpdate`).
    reconfigured: set[str] = field(default_factory=set)
    #: Flushes so far (`OverReserve.generation`).
    generation: int = 0
    #: The cache's `resyncMethod` and `informerMode` (any other value than Dedicated: the
    #: shared informer), set by `enable`, which turns the pod lister on.
    method: str = RESYNC_AUTODETECT
    informer_mode: str = INFORMER_DEDICATED
    listing: bool = False
    #: `resyncScope` All: reports are watched for a change of configuration (else not).
    watches_configuration: bool = True
    #: `foreignPodsDetect`: None, All or OnlyExclusiveResources (any other value: All).
    foreign_detect: str = FOREIGN_NONE
    #: Every pod object seen, by uid, once listing (the resync's pod lister), and by node.
    pods: dict[str, ListedPod] = field(default_factory=dict)
    by_node: dict[str, dict[str, ListedPod]] = field(default_factory=dict)
    #: node -> the report the resync last found not to match the node's pods: checked again
    #: only once the report or one of the node's pods changed.
    mismatched: dict[str, NRTView] = field(default_factory=dict)
    #: The schedulerNames of the pods kube-scheduler asked about: the profiles calling us.
    profiles: set[str] = field(default_factory=set)
    #: node -> the schedulerNames of the pods that had an event there since its last flush.
    scheduled_by: dict[str, set[str]] = field(default_factory=dict)
    #: node -> uids of the pods whose bind is under way there, from the bind verb's Reserve to
    #: its end (upstream's PostBind or Unreserve): the nodes `discardReservedNodes` discards.
    binding: dict[str, set[str]] = field(default_factory=dict)

    def enable(self, method: str, informer_mode: str, resync_scope: str = "All",
               foreign_detect: str = "All") -> None:
        """Turn the pod lister on, before the pods are listed: the resync counts them."""
        self.method, self.informer_mode, self.listing = method, informer_mode, True
        self.watches_configuration = resync_scope == "All"
        self.foreign_detect = foreign_detect

    # ---- the reports ----------------------------------------------------------------------
    def apply(self, kind: str, obj: Any) -> None:
        """A report: the latest of its node. The cache takes it only as the node's first one;
        one that changes the Topology Manager's configuration marks the node for a flush
        (upstream's cache takes only the reports listed at its start: see the plugin's
        docstring)."""
        view = NRTView.from_k8s(obj)
        cached = self.cached.get(view.name)
        if cached is None:
            self.cached[view.name] = view
        elif self.watches_configuration and cached.manager != view.manager:
            self.reconfigured.add(view.name)
        self.topologies[view.name] = view

    def delete(self, kind: str, namespace: str, name: str) -> bool:
        """The report is gone; the cache keeps its copy (as upstream's, which never drops one)."""
        return self.topologies.pop(name, None) is not None

    def keys(self, kind: str) -> list[tuple[str, str]]:
        return [("", name) for name in self.topologies]

    def replace(self, kind: str, objects: Iterable[Any]) -> None:
        objects = list(objects)
        listed = {obj.metadata.name for obj in objects}
        for name in [n for n in self.topologies if n not in listed]:
            self.delete(kind, "", name)
        super().replace(kind, objects)

    def node_topology(self, node_name: str) -> NRTView | None:
        """The node's latest report, or None (what passthrough reads)."""
        return self.topologies.get(node_name)

    def cached_topology(self, node_name: str) -> NRTView | None:
        """The cache's copy of the node's report, or None."""
        return self.cached.get(node_name)

    # ---- reservations -----------------------------------------------------------------------
    def reservations(self, node_name: str) -> Sequence[Mapping[str, int]]:
        """Effective requests of the pods reserved on the node since its last flush."""
        found = self.reserved.get(node_name)
        return tuple(found.values()) if found else ()

    def pod_assumed(self, pod: PodView, node_name: str) -> None:
        self.reserve(pod, node_name)

    def reserve(self, pod: PodView, node_name: str) -> None:
        """`ReserveNodeResources`: the pod counts against every cell of the node's copy, and
        the node is no longer taken for overreserved (only nodes with a report: the others
        have nothing to correct)."""
        if node_name in self.cached and pod.pod_spec is not None:
            request = effective_request(pod.pod_spec)
            on_node = self.reserved.setdefault(node_name, {})
            if on_node.get(pod.key) != request:
                on_node[pod.key] = request
                self.host.changed()
        self.maybe_overreserved.discard(node_name)

    def unreserve(self, pod_key: str, node_name: str) -> None:
        """`UnreserveNodeResources`: the pod ("namespace/name") no longer counts on the node
        (its bind failed)."""
        found = self.reserved.get(node_name)
        if found is None or found.pop(pod_key, None) is None:
            return
        if not found:
            del self.reserved[node_name]
        self.host.changed()

    def bind_started(self, uid: str, node_name: str) -> None:
        """`DiscardReserved.ReserveNodeResources`: the node is discarded until the bind ends."""
        self.binding.setdefault(node_name, set()).add(uid)
        self.host.changed()

    def bind_ended(self, uid: str, node_name: str) -> None:
        """`DiscardReserved.PostBind` (bound) or `UnreserveNodeResources` (failed)."""
        found = self.binding.get(node_name)
        if found is None or uid not in found:
            return
        found.discard(uid)
        if not found:
            del self.binding[node_name]
        self.host.changed()

    def node_maybe_overreserved(self, node_name: str) -> None:
        """`NodeMaybeOverReserved`: a Filter rejected a pod on the node."""
        self.maybe_overreserved.add(node_name)

    # ---- foreign pods -------------------------------------------------------------------------
    def pod_scheduling(self, pod: PodView) -> None:
        if pod.scheduler_name not in self.profiles:
            self.profiles.add(pod.scheduler_name)
            if self.scheduled_by:
                self.host.changed()  # a node's pods of that profile are no longer foreign

    def has_foreign_pods(self, node_name: str) -> bool:
        """Whether a pod of another scheduler had an event on the node since its last flush
        (`nodesWithForeignPods`): the cache takes it for stale."""
        seen = self.scheduled_by.get(node_name)
        return seen is not None and not seen <= self.profiles

    def _pod_event(self, pod: ListedPod) -> None:
        """`foreignCache` on a pod's add, update or delete (`IsForeignPod`, then
        `NodeHasForeignPods`, which ignores a node without a report)."""
        if self.foreign_detect == FOREIGN_NONE or not pod.node_name \
                or pod.node_name not in self.cached:
            return
        if self.foreign_detect == FOREIGN_ONLY_EXCLUSIVE_RESOURCES and not pod.exclusive:
            return
        self.scheduled_by.setdefault(pod.node_name, set()).add(pod.scheduler_name)

    # ---- the pod lister ---------------------------------------------------------------------
    def pod_object(self, pod: k8s.Pod, view: PodView) -> None:
        if not self.listing:
            return
        # Only the exclusive-resource methods read it (`Autodetect`: when a report says so).
        exclusive = (self.method != RESYNC_ALL
                     or self.foreign_detect == FOREIGN_ONLY_EXCLUSIVE_RESOURCES) \
            and exclusive_resources(pod.spec)
        listed = ListedPod(view.namespace, view.name, view.node_name, view.phase,
                           view.scheduler_name, exclusive,
                           podfingerprint.pod_hash(view.namespace, view.name))
        self._unlist(view.uid)
        self.pods[view.uid] = listed
        self.by_node.setdefault(listed.node_name, {})[view.uid] = listed
        self.mismatched.pop(listed.node_name, None)
        self._pod_event(listed)

    def _unlist(self, uid: str) -> ListedPod | None:
        listed = self.pods.pop(uid, None)
        if listed is not None:
            on_node = self.by_node[listed.node_name]
            del on_node[uid]
            if not on_node:
                del self.by_node[listed.node_name]
            self.mismatched.pop(listed.node_name, None)
        return listed

    def pod_deleted(self, namespace: str, name: str, uid: str | None) -> None:
        keys = [uid] if uid is not None else [
            k for k, p in self.pods.items() if (p.namespace, p.name) == (namespace, name)]
        for key in keys:
            listed = self._unlist(key)
            if listed is not None:
                self._pod_event(listed)

    def pods_relisted(self, kept: Callable[[str], bool]) -> None:
        for uid in [u for u in self.pods if not kept(u)]:
            listed = self._unlist(uid)
            assert listed is not None
            self._pod_event(listed)  # a relist's deletion is a delete event

    # ---- the resync ---------------------------------------------------------------------------
    def resync(self) -> list[str]:
        """`OverReserve.Resync`: flush each node marked overreserved or with foreign pods whose
        latest report's pod fingerprint matches the relevant pods the lister holds on it (a
        node with none is left), and each node whose configuration changed; returns the
        flushed nodes."""
        desynced = self.maybe_overreserved | {n for n in self.scheduled_by
                                              if self.has_foreign_pods(n)}
        if not desynced and not self.reconfigured:
            return []
        flushed: list[NRTView] = []
        for node in sorted(desynced):
            report = self.topologies.get(node)
            if report is None or self.mismatched.get(node) is report:
                continue
            if self._matches(report, node):
                flushed.append(report)
            else:
                self.mismatched[node] = report
        taken = {report.name for report in flushed}
        flushed += [self.topologies[n] for n in sorted(self.reconfigured)
                    if n in self.topologies and n not in taken]
        return self.flush(flushed)

    def _matches(self, report: NRTView, node: str) -> bool:
        """Whether the report's pod fingerprint is that of the relevant pods on the node (a
        node without any, or a report without a fingerprint, never matches)."""
        listed = [p for p in self.by_node.get(node, {}).values()
                  if relevant(p, self.informer_mode)]
        expected, only_exclusive = expected_fingerprint(report, self.method)
        if not listed or not expected:
            return False
        return podfingerprint.matches(expected, [p.fingerprint_hash for p in listed
                                                 if p.exclusive or not only_exclusive])

    def flush(self, reports: Iterable[NRTView]) -> list[str]:
        """`FlushNodes`: each report becomes its node's copy, its reservations and marks gone."""
        names = []
        for report in reports:
            name = report.name
            self.cached[name] = report
            self.reserved.pop(name, None)
            self.maybe_overreserved.discard(name)
            self.reconfigured.discard(name)
            self.scheduled_by.pop(name, None)
            self.mismatched.pop(name, None)
            names.append(name)
        if names:
            self.generation += 1
            self.host.changed()
        return names
