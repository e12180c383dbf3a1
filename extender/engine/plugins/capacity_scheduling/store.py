"""CapacityScheduling's data: the ElasticQuotas, each namespace's use (the quota requests of
its pods assigned a node, bound or assumed), and the reservations of pods that passed the
quota checks and are on their way to a bind (its Reserve)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from extender.engine.stores import ViewStore, WatchedResource
from extender.model import k8s
from extender.model.pod import PodView
from extender.model.resources import Resources
from extender.model.scheduling import ElasticQuotaView

ELASTIC_QUOTAS = WatchedResource(
    "elasticquotas", "/apis/scheduling.x-k8s.io/v1alpha1/elasticquotas", k8s.ElasticQuota,
    crd="elasticquotas.scheduling.x-k8s.io")


@dataclass
class QuotaStore(ViewStore):
    #: (namespace, name) -> the ElasticQuota.
    elastic_quotas: dict[tuple[str, str], ElasticQuotaView] = field(default_factory=dict)
    #: namespace -> Σ quota requests of the pods assigned a node (bound or assumed).
    namespace_used: dict[str, Resources] = field(default_factory=dict)
    #: uid -> (pod, expiry): pods that passed a quota check and are on their way to a bind,
    #: counted in their namespace's use until then.
    reservations: dict[str, tuple[PodView, float]] = field(default_factory=dict)

    def _table(self, kind: str) -> dict[tuple[str, str], Any]:
        return self.elastic_quotas

    def _view(self, kind: str, obj: Any) -> ElasticQuotaView:
        return ElasticQuotaView(obj)

    def quotas(self) -> dict[str, ElasticQuotaView]:
        """namespace -> its ElasticQuota (the first one known, when there are several)."""
        found: dict[str, ElasticQuotaView] = {}
        for (namespace, _), view in self.elastic_quotas.items():
            found.setdefault(namespace, view)
        return found

    def has_quota(self, namespace: str, name: str | None = None) -> bool:
        return any(ns == namespace and (name is None or n == name)
                   for ns, n in self.elastic_quotas)

    def used(self, namespace: str, exclude: str = "") -> Resources:
        """Σ quota requests of the namespace's assigned pods and live reservations (but
        `exclude`'s: the pod being scheduled again)."""
        used = self.namespace_used.get(namespace)
        total = used.copy() if used is not None else Resources()
        if self.reservations:
            now = self.host.clock()
            for uid, (pod, expires_at) in list(self.reservations.items()):
                if expires_at <= now:
                    del self.reservations[uid]
                elif pod.namespace == namespace and uid != exclude:
                    total.add(pod.quota_requests)
                    total.allowed_pods += pod.quota_requests.allowed_pods
        return total

    def reserve(self, pod: PodView, ttl: float) -> None:
        """Count a pod that passed the quota checks in its namespace's use until it is bound
        (then its assumption counts), deleted, reserved again, or `ttl` runs out."""
        if pod.uid and not pod.node_name and self.has_quota(pod.namespace):
            self.reservations[pod.uid] = (pod, self.host.clock() + ttl)

    def release(self, uid: str) -> None:
        self.reservations.pop(uid, None)

    def counted(self, pod: PodView) -> bool:
        """Whether `used` counts the pod: it has a node, or a live reservation."""
        if pod.node_name:
            return True
        found = self.reservations.get(pod.uid)
        return found is not None and found[1] > self.host.clock()

    # ---- pod events -----------------------------------------------------------------------
    def pod_placed(self, pod: PodView) -> None:
        self._count(pod, 1)
        self.reservations.pop(pod.uid, None)

    def pod_unplaced(self, pod: PodView) -> None:
        self._count(pod, -1)

    def pod_deleted(self, namespace: str, name: str, uid: str | None) -> None:
        if uid:
            self.release(uid)

    def _count(self, pod: PodView, sign: int) -> None:
        used = self.namespace_used.get(pod.namespace)
        if used is None:
            used = self.namespace_used[pod.namespace] = Resources()
        used.add(pod.quota_requests, sign)
        used.allowed_pods += sign * pod.quota_requests.allowed_pods
