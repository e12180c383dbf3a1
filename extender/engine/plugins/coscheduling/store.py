"""Coscheduling's data: the PodGroups, and every pod naming one (the pod lister Coscheduling
counts a group's siblings in: pending or assigned, not finished)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from extender.engine.stores import ViewStore, WatchedResource
from extender.model import k8s
from extender.model.pod import PodView
from extender.model.scheduling import PodGroupView

POD_GROUPS = WatchedResource("podgroups", "/apis/scheduling.x-k8s.io/v1alpha1/podgroups",
                             k8s.PodGroup, crd="podgroups.scheduling.x-k8s.io")

Group = tuple[str, str]  # (namespace, name)


@dataclass
class PodGroupStore(ViewStore):
    groups: dict[Group, PodGroupView] = field(default_factory=dict)
    #: (namespace, group) -> {pod uid: gated}.
    members: dict[Group, dict[str, bool]] = field(default_factory=dict)
    _member_of: dict[str, tuple[Group, tuple[str, str]]] = field(default_factory=dict)
    _member_uid: dict[tuple[str, str], str] = field(default_factory=dict)

    def _table(self, kind: str) -> dict[Group, Any]:
        return self.groups

    def _view(self, kind: str, obj: Any) -> PodGroupView:
        return PodGroupView(obj)

    def group(self, namespace: str, name: str) -> PodGroupView | None:
        return self.groups.get((namespace, name))

    def group_pods(self, namespace: str, group: str) -> Mapping[str, bool]:
        """{uid: gated} of every pod naming the group, pending or assigned."""
        return self.members.get((namespace, group), {})

    def with_members(self, members: dict[Group, dict[str, bool]]) -> PodGroupStore:
        """The same groups over another member index (the simulator's pod lister, which
        sees pending pods the cluster state does not hold)."""
        return PodGroupStore(self.host, self.groups, members)

    # ---- members --------------------------------------------------------------------------
    def pod_seen(self, pod: PodView, before: PodView | None) -> None:
        self._forget(pod.uid)
        # Finished pods are not members: kube-scheduler's pod informer leaves them out.
        if pod.pod_group and not pod.is_terminal:
            group = (pod.namespace, pod.pod_group)
            key = (pod.namespace, pod.name)
            self.members.setdefault(group, {})[pod.uid] = pod.gated
            self._member_of[pod.uid] = (group, key)
            self._member_uid[key] = pod.uid

    def pod_deleted(self, namespace: str, name: str, uid: str | None) -> None:
        member = uid or self._member_uid.get((namespace, name))
        if member:
            self._forget(member)

    def pods_relisted(self, kept: Callable[[str], bool]) -> None:
        for uid in [u for u in self._member_of if not kept(u)]:
            self._forget(uid)

    def _forget(self, uid: str) -> None:
        found = self._member_of.pop(uid, None)
        if found is None:
            return
        group, key = found
        members = self.members.get(group)
        if members is not None:
            members.pop(uid, None)
            if not members:
                del self.members[group]
        if self._member_uid.get(key) == uid:
            del self._member_uid[key]
