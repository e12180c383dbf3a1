"""What a plugin watches and the data it keeps: kube-scheduler gives a plugin the listers it
asks the informer factory for and the event handlers it registers; here a plugin's record
(`engine.registry.PluginRecord`) names the resources it watches (`WatchedResource`) and the
store it owns (a `PluginStore`).

`ClusterState` makes one instance of every registered store and feeds it: the objects of
its kinds (apply, delete, relist) and the pod events kube-scheduler's cache sees (a pod
seen, placed on or taken off a node, deleted, assumed by a bind, its assumption dropped).
A plugin reaches its store through `ClusterContext.store(TheStore)`. The informer, the
snapshot loader, the simulator's cluster and its loopback API server derive what to list,
watch, load and serve from the records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from extender.model import k8s
from extender.model.pod import PodView


@dataclass(frozen=True)
class WatchedResource:
    """A collection the informer lists and watches, and how its objects decode."""

    #: The API's plural name (`podgroups`).
    name: str
    #: The list path (`/apis/scheduling.x-k8s.io/v1alpha1/podgroups`).
    path: str
    #: The decoded object's type (a `msgspec.Struct`); its class name is the object's kind.
    struct: type
    field_selector: str = ""
    #: For a custom resource: its CRD's name (while it is missing the informer retries and
    #: its error names the CRD and `component`).
    crd: str = ""
    #: The kustomize component (manifests/components/<name>) shipping the CRD and the RBAC.
    component: str = "gang-quota"
    #: Whether the objects have a namespace (the loopback API server serves them so).
    namespaced: bool = True

    @property
    def kind(self) -> str:
        return self.struct.__name__

    @property
    def prefix(self) -> str:
        """The path before the plural (`/apis/scheduling.x-k8s.io/v1alpha1`)."""
        return self.path.rpartition("/")[0]

    @property
    def event_resource(self) -> str:
        """kube-scheduler's name of its cluster events' resource
        (`podgroups.v1alpha1.scheduling.x-k8s.io`; `nodes` for the core group)."""
        group, _, version = self.group_version.rpartition("/")
        return f"{self.name}.{version}.{group}" if group else self.name

    @property
    def group_version(self) -> str:
        """`scheduling.x-k8s.io/v1alpha1`, or `v1` for the core group."""
        parts = self.path.strip("/").split("/")
        return parts[1] if parts[0] == "api" else f"{parts[1]}/{parts[2]}"


class StoreHost(Protocol):
    """What a store may read from the state that feeds it."""

    def clock(self) -> float:
        """Monotonic seconds (TTLs)."""

    def wall_clock(self) -> float:
        """Unix seconds."""

    def changed(self) -> None:
        """A store's data changed outside an object or pod event: what was computed over the
        state (a reused reply) is stale."""


@dataclass
class PluginStore:
    """A plugin's own data. Every hook does nothing unless the store needs it; `apply`,
    `delete` and `replace` take only the kinds of the resources its records name."""

    host: StoreHost = field(repr=False)

    def apply(self, kind: str, obj: Any) -> None:
        """Add or update an object of one of its records' resources' kinds."""

    def delete(self, kind: str, namespace: str, name: str) -> bool:
        """Delete one; whether it was there."""
        return False

    def keys(self, kind: str) -> list[tuple[str, str]]:
        """(namespace, name) of every object of `kind` it holds ("" for cluster-scoped)."""
        return []

    def replace(self, kind: str, objects: Iterable[Any]) -> None:
        """Make the objects of `kind` exactly `objects` (a relist)."""
        for obj in objects:
            self.apply(kind, obj)

    # ---- pod events, as kube-scheduler's cache sees them ----------------------------------
    def pod_seen(self, pod: PodView, before: PodView | None) -> None:
        """A pod's object added or updated (`before`: the view it replaces, if any)."""

    def pod_object(self, pod: k8s.Pod, view: PodView) -> None:
        """A pod's object added or updated, terminal ones too, with its view: only for a store
        that reads more of the object than the view keeps (`ClusterState` calls the stores
        that define it)."""

    def pod_scheduling(self, pod: PodView) -> None:
        """kube-scheduler asked this extender about the pending pod (a filter or prioritize):
        its `schedulerName` is a profile that calls this extender (`ClusterState` calls the
        stores that define it)."""

    def pod_placed(self, pod: PodView) -> None:
        """A bound (or assumed) pod starts counting on its node."""

    def pod_unplaced(self, pod: PodView) -> None:
        """A bound (or assumed) pod stops counting on its node."""

    def pod_deleted(self, namespace: str, name: str, uid: str | None) -> None:
        """A pod's object deleted (`uid` when the event carries it)."""

    def pod_assumed(self, pod: PodView, node_name: str) -> None:
        """The bind verb assumed `pod` (already bound to `node_name`) before the watch."""

    def assumption_dropped(self, uid: str) -> None:
        """An assumed pod the watch never confirmed was forgotten."""

    def pods_relisted(self, kept: Callable[[str], bool]) -> None:
        """After a pod relist: forget the pods whose uid `kept` says are gone."""

    def sizes(self) -> dict[str, int]:
        """Entries of the store's own bounded caches (exported as metrics)."""
        return {}


class ViewStore(PluginStore):
    """A store that keeps each object of its kinds as a view, by (namespace, name), in one table
    per kind: `apply`, `delete`, `keys` and `replace` over `_table(kind)`, the view made by
    `_view(kind, obj)` (which has `namespace` and `name`)."""

    def _table(self, kind: str) -> dict[tuple[str, str], Any]:
        raise NotImplementedError

    def _view(self, kind: str, obj: Any) -> Any:
        raise NotImplementedError

    def apply(self, kind: str, obj: Any) -> None:
        view = self._view(kind, obj)
        self._table(kind)[(view.namespace, view.name)] = view

    def delete(self, kind: str, namespace: str, name: str) -> bool:
        return self._table(kind).pop((namespace, name), None) is not None

    def keys(self, kind: str) -> list[tuple[str, str]]:
        return list(self._table(kind))

    def replace(self, kind: str, objects: Iterable[Any]) -> None:
        self._table(kind).clear()
        super().replace(kind, objects)
