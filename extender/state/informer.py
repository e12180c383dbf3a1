"""Informers: keep `ClusterState` equal to the API server's truth by list + watch.

One `Informer` per resource: a paginated list (consistent read), then a watch from the list's
resourceVersion with bookmarks. A 410 (too old version, expired continue token) relists; a
dropped connection re-watches from the last version seen, with backoff; a clean end of the
stream (the server's `timeoutSeconds`) re-watches at once. No periodic resync: a healthy
watch delivers every change.

Order: a watch event (or bookmark) whose resourceVersion is not newer than the informer's is
a duplicate or a late delivery and is ignored, so the informer's version never moves back and
an older object never replaces a newer one (every stored object's version is at most the
informer's). A relist replaces everything, the version included.

State changes go through the state's `StateGate`: applied at once, or, while a large request
reads the state in the worker thread, queued and applied in order right after it.

`LiveState` runs the four informers and the assumption expiry as tasks on the server's
event loop, and answers readiness: synced once, and not stale past a bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import math
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from extender.engine import registry
from extender.engine.cluster import ClusterState
from extender.engine.stores import WatchedResource
from extender.kube.client import ApiError, GoneError, KubeClient, KubeError, WatchEvent
from extender.kube.config import ClusterConfig
from extender.model import k8s
from extender.model.pod import PodView
from extender.state.gate import gate_for

log = logging.getLogger(__name__)

Clock = Callable[[], float]

# Terminal pods hold no resources; kube-scheduler's own informer leaves them out the same way.
# When a pod turns Succeeded/Failed the server sends DELETED for it (it left the selection).
POD_FIELD_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"


#: A watched collection and how its objects decode (declared with each plugin's record for
#: the custom resources it reads).
ResourceSpec = WatchedResource

NODES = ResourceSpec("nodes", "/api/v1/nodes", k8s.Node, namespaced=False)
PODS = ResourceSpec("pods", "/api/v1/pods", k8s.Pod, POD_FIELD_SELECTOR)
PDBS = ResourceSpec("poddisruptionbudgets", "/apis/policy/v1/poddisruptionbudgets", k8s.PodDisruptionBudget)
PRIORITY_CLASSES = ResourceSpec(
    "priorityclasses", "/apis/scheduling.k8s.io/v1/priorityclasses", k8s.PriorityClass,
    namespaced=False)
NAMESPACES = ResourceSpec("namespaces", "/api/v1/namespaces", k8s.Namespace, namespaced=False)
SERVICES = ResourceSpec("services", "/api/v1/services", k8s.Service)
REPLICA_SETS = ResourceSpec("replicasets", "/apis/apps/v1/replicasets", k8s.ReplicaSet)
STATEFUL_SETS = ResourceSpec("statefulsets", "/apis/apps/v1/statefulsets", k8s.StatefulSet)
REPLICATION_CONTROLLERS = ResourceSpec(
    "replicationcontrollers", "/api/v1/replicationcontrollers", k8s.ReplicationController
)
#: What kube-scheduler's own informers watch (the plugins' records add their custom resources).
ALL_RESOURCES = (NODES, PODS, PDBS, PRIORITY_CLASSES, NAMESPACES, SERVICES, REPLICA_SETS,
                 STATEFUL_SETS, REPLICATION_CONTROLLERS)


def resources_for(plugin_names: Iterable[str]) -> tuple[ResourceSpec, ...]:
    """The core resources plus the custom resources the named plugins read."""
    return (*ALL_RESOURCES, *registry.resources_of(plugin_names))


# ---- how each resource is applied to the state ------------------------------------------
class _Sink:
    """Apply, delete and relist for one resource."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state

    def apply(self, obj: Any) -> None:
        raise NotImplementedError

    def delete(self, obj: Any) -> None:
        raise NotImplementedError

    def begin_relist(self) -> None:
        self._items: list[Any] = []

    def relist_page(self, items: Iterable[Any]) -> None:
        self._items.extend(items)

    def end_relist(self) -> None:
        raise NotImplementedError


class _NodeSink(_Sink):
    def apply(self, obj: k8s.Node) -> None:
        self.state.apply_node(obj)

    def delete(self, obj: k8s.Node) -> None:
        self.state.delete_node(obj.metadata.name)

    def end_relist(self) -> None:
        self.state.replace_nodes(self._items)
        self._items = []


class _PodSink(_Sink):
    """Pods are applied page by page during a relist, not collected first: 150 000 decoded
    Pod objects at once would cost hundreds of MiB, and applying per page lets requests run
    between pages. Pods the list did not return are deleted at the end (assumed ones stay
    until confirmed or expired, as `ClusterState.replace_pods` does)."""

    def apply(self, obj: k8s.Pod) -> None:
        self.state.apply_pod(obj)

    def delete(self, obj: k8s.Pod) -> None:
        meta = obj.metadata
        self.state.delete_pod(meta.namespace, meta.name, meta.uid)

    def begin_relist(self) -> None:
        self._seen: set[str] = set()

    def relist_page(self, items: Iterable[k8s.Pod]) -> None:
        for pod in items:
            self._seen.add(pod.metadata.uid)
            _guarded(self.apply, pod)

    def end_relist(self) -> None:
        state = self.state
        gone = [v for uid, v in state.pods.items() if uid not in self._seen and uid not in state.assumed]
        for view in gone:
            state.delete_pod(view.namespace, view.name, view.uid)
        self._seen = set()


class _PdbSink(_Sink):
    def apply(self, obj: k8s.PodDisruptionBudget) -> None:
        self.state.apply_pdb(obj)

    def delete(self, obj: k8s.PodDisruptionBudget) -> None:
        self.state.delete_pdb(obj.metadata.namespace, obj.metadata.name)

    def end_relist(self) -> None:
        self.state.replace_pdbs(self._items)
        self._items = []


class _PriorityClassSink(_Sink):
    def apply(self, obj: k8s.PriorityClass) -> None:
        self.state.apply_priority_class(obj)

    def delete(self, obj: k8s.PriorityClass) -> None:
        self.state.delete_priority_class(obj.metadata.name)

    def end_relist(self) -> None:
        self.state.replace_priority_classes(self._items)
        self._items = []


class _KindSink(_Sink):
    """Namespaces, Services and pod controllers: `ClusterState.apply/delete/replace` by kind."""

    kind = ""

    def apply(self, obj: Any) -> None:
        self.state.apply(self.kind, obj)

    def delete(self, obj: Any) -> None:
        self.state.delete(self.kind, obj.metadata.namespace, obj.metadata.name)

    def end_relist(self) -> None:
        self.state.replace(self.kind, self._items)
        self._items = []


def _kind_sink(kind: type) -> type[_Sink]:
    return type(f"_{kind.__name__}Sink", (_KindSink,), {"kind": kind.__name__})


_SINKS: dict[type, type[_Sink]] = {
    k8s.Node: _NodeSink, k8s.Pod: _PodSink,
    k8s.PodDisruptionBudget: _PdbSink, k8s.PriorityClass: _PriorityClassSink,
}


def specs() -> dict[str, ResourceSpec]:
    """Every resource an informer may watch, by its name (`ResourceSpec.name`): kube-scheduler's
    and those of every registered plugin (read when asked: a plugin registered later counts)."""
    return {spec.name: spec for spec in (*ALL_RESOURCES, *registry.WATCHED.values())}


_CORE = {spec.name: spec for spec in ALL_RESOURCES}


def spec_named(name: str) -> ResourceSpec | None:
    """The resource `specs()` has under `name`, without building the whole mapping (a
    recording's replay asks for every entry)."""
    return _CORE.get(name) or registry.WATCHED.get(name)


def sink_for(spec: ResourceSpec, state: ClusterState) -> _Sink:
    """How `spec`'s objects reach `state`: the sink an `Informer` of that resource applies
    watch events and relists through (a recording's replay feeds the state the same way).
    Namespaces, Services, controllers and plugins' resources go through
    `ClusterState.apply/delete/replace` by kind."""
    sink = _SINKS.get(spec.struct)
    if sink is None:
        sink = _SINKS[spec.struct] = _kind_sink(spec.struct)
    return sink(state)


def apply_change(sink: _Sink, change: str, payload: Any = None) -> None:
    """One applied informer change, as `Informer` makes it: `apply`/`delete` one object (a
    failure is logged and skipped), `relist-begin`, `relist-page` (the items), `relist-end`."""
    if change == "apply":
        _guarded(sink.apply, payload)
    elif change == "delete":
        _guarded(sink.delete, payload)
    elif change == "relist-begin":
        sink.begin_relist()
    elif change == "relist-page":
        sink.relist_page(payload)
    elif change == "relist-end":
        sink.end_relist()
    else:
        raise ValueError(f"unknown informer change {change!r}")


def _guarded(fn: Callable[[Any], None], obj: Any) -> bool:
    # One object the engine cannot read (say, an unparseable quantity) must not stop the
    # informer; it is logged and skipped.
    try:
        fn(obj)
        return True
    except Exception:
        meta = getattr(obj, "metadata", None)
        log.exception("cannot apply %s/%s", getattr(meta, "namespace", ""), getattr(meta, "name", "?"))
        return False


class Backoff:
    """Exponential backoff with full jitter."""

    def __init__(self, initial: float = 0.2, maximum: float = 30.0) -> None:
        self.initial, self.maximum = initial, maximum
        self.attempt = 0

    def next(self) -> float:
        ceiling = min(self.maximum, self.initial * (2 ** self.attempt))
        self.attempt += 1
        return random.uniform(ceiling / 2, ceiling)

    def reset(self) -> None:
        self.attempt = 0


class Counters:
    """What `/metrics` exposes about the informers; the hooks feed Prometheus if set."""

    def __init__(self) -> None:
        self.events: Counter[tuple[str, str]] = Counter()  # (resource, event type)
        self.relists: Counter[str] = Counter()  # every complete list, the first one included
        self.watches: Counter[str] = Counter()  # watch requests started
        self.restarts: Counter[str] = Counter()  # after a failure (not clean ends)
        self.errors: Counter[str] = Counter()
        self.stale: Counter[str] = Counter()  # events ignored as not newer (per resource)
        self.expired_assumptions = 0
        #: Pods deleted from the state because the API server no longer had them before the
        #: watch said so (`state.catchup`).
        self.gone_before_watch = 0
        #: Pods added to the state (or placed on their node) because the API server had them
        #: bound before the watch said so (`state.catchup`).
        self.seen_before_watch = 0
        #: Nodes added or updated in the state because the API server had them (newer)
        #: before the watch said so.
        self.nodes_seen_before_watch = 0
        self.on_event: Callable[[str, str], None] | None = None
        self.on_synced: Callable[[str], None] | None = None
        self.on_stale: Callable[[str], None] | None = None
        # Called with the resource: a list starts (`relist`: True after the first), a watch
        # request starts, a list or watch fails.
        self.on_list: Callable[[str, bool], None] | None = None
        self.on_watch: Callable[[str], None] | None = None
        self.on_error: Callable[[str], None] | None = None

    def event(self, resource: str, kind: str) -> None:
        self.events[(resource, kind)] += 1
        if self.on_event is not None:
            self.on_event(resource, kind)

    def stale_event(self, resource: str) -> None:
        self.stale[resource] += 1
        if self.on_stale is not None:
            self.on_stale(resource)


# ---- informer ---------------------------------------------------------------------------
class Informer:
    """List + watch for one resource, applied to the state."""

    def __init__(
        self,
        client: KubeClient,
        state: ClusterState,
        spec: ResourceSpec,
        *,
        counters: Counters | None = None,
        page_limit: int = 500,
        watch_timeout: int = 300,
        backoff: Backoff | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        self.client = client
        self.state = state
        self.spec = spec
        self.sink = sink_for(spec, state)
        self.counters = counters or Counters()
        self.page_limit = page_limit
        self.watch_timeout = watch_timeout
        self.backoff = backoff or Backoff()
        self.clock = clock
        self.gate = gate_for(state)
        self.resource_version = ""
        #: Objects (by UID) a catch-up applied from a list newer than this informer's version
        #: (`state.catchup`), with that list's version: their watch events up to it are older
        #: than what the state holds, and are skipped. Emptied as the version passes them.
        self.ahead: dict[str, str] = {}
        self.synced = False
        self.connected = False
        self.last_ok = -math.inf  # the last moment we knew the state equal to the server's
        self.opened_at: float | None = None
        self.last_error = ""  # the last failure, for readiness messages; cleared on success
        self.synced_event = asyncio.Event()

    @property
    def sync_age_seconds(self) -> float:
        """Seconds since the last successful list or watch event (inf before the first list)."""
        return max(0.0, self.clock() - self.last_ok)

    @property
    def stale_seconds(self) -> float:
        """0 while the watch is open, else the time since we were last known in sync."""
        if not self.synced:
            return math.inf
        return 0.0 if self.connected else max(0.0, self.clock() - self.last_ok)

    async def run(self) -> None:
        """Run until cancelled; never returns on errors."""
        name = self.spec.name
        while True:
            self.opened_at = None
            try:
                if not self.resource_version:
                    await self.relist()
                await self.watch_once()
                self.backoff.reset()  # a clean end: re-watch at once from the last version
                continue
            except asyncio.CancelledError:
                raise
            except GoneError as exc:
                # The server no longer has our version: only a full relist can resync.
                log.info("%s: %s; relisting", name, exc)
                self.resource_version = ""
            except ApiError as exc:
                self._failed(exc)
                if exc.code == 504 and "too large resource version" in exc.message.lower():
                    # Our version is ahead of the server's (say, etcd restored from a backup).
                    self.resource_version = ""
            except KubeError as exc:
                self._failed(exc)
            except Exception as exc:
                self._failed(exc, trace=True)
            if self.opened_at is not None and self.clock() - self.opened_at >= 10.0:
                self.backoff.reset()  # the watch was healthy for a while: a fresh failure
            self.counters.restarts[name] += 1
            await asyncio.sleep(self.backoff.next())

    def _failed(self, exc: Exception, trace: bool = False) -> None:
        self.counters.errors[self.spec.name] += 1
        if self.counters.on_error is not None:
            self.counters.on_error(self.spec.name)
        self.last_error = str(exc) or type(exc).__name__
        if self.spec.crd and isinstance(exc, ApiError) and exc.code == 404:
            self.last_error = (f"the CustomResourceDefinition {self.spec.crd} is not installed "
                               f"(enable the {self.spec.component} component in your "
                               "manifests' overlay "
                               f"and apply it): {self.last_error}")
        elif self.spec.crd and isinstance(exc, ApiError) and exc.code == 403:
            self.last_error = (f"the extender's account may not list and watch {self.spec.name} "
                               f"(the {self.spec.component} component of the manifests grants "
                               f"it): {self.last_error}")
        log.warning("%s: %s", self.spec.name, self.last_error, exc_info=trace)

    async def relist(self) -> None:
        """Page through the whole collection and make the state's set equal to it."""
        self.counters.relists[self.spec.name] += 1
        if self.counters.on_list is not None:
            self.counters.on_list(self.spec.name, self.synced)
        self.gate.call(self.sink.begin_relist)
        token, rv = "", ""
        while True:
            page = await self.client.list(
                self.spec.path, self.spec.struct, limit=self.page_limit, continue_token=token,
                field_selector=self.spec.field_selector,
            )
            rv = rv or page.resource_version  # every page carries the first page's version
            self.gate.call(self.sink.relist_page, page.items or ())
            token = page.continue_token
            if not token:
                break
        self.gate.call(self.sink.end_relist)
        self.resource_version = rv
        self._passed()
        self.last_ok = self.clock()
        self.last_error = ""
        if not self.synced:
            self.synced = True
            self.synced_event.set()
            if self.counters.on_synced is not None:
                self.counters.on_synced(self.spec.name)
            log.info("%s: synced at resourceVersion %s", self.spec.name, rv)

    async def watch_once(self) -> None:
        """One watch stream from the current version; returns when the server ends it."""

        def opened() -> None:
            self.connected = True
            self.opened_at = self.last_ok = self.clock()
            self.last_error = ""

        self.counters.watches[self.spec.name] += 1
        if self.counters.on_watch is not None:
            self.counters.on_watch(self.spec.name)
        try:
            events = self.client.watch(
                self.spec.path, self.spec.struct, resource_version=self.resource_version,
                timeout_seconds=random.randint(self.watch_timeout, 2 * self.watch_timeout),
                field_selector=self.spec.field_selector, on_open=opened,
            )
            async with contextlib.aclosing(events):
                async for event in events:
                    self.handle(event)
        finally:
            if self.connected:
                self.last_ok = self.clock()
            self.connected = False

    def handle(self, event: WatchEvent) -> None:
        """Apply one watch event. Bookmarks only advance the version; an event not newer than
        the informer's version is ignored (and counted as stale, bookmarks aside)."""
        kind = event.type
        self.last_ok = self.clock()
        version = event.resource_version
        if version and not is_newer(version, self.resource_version):
            if kind != "BOOKMARK":
                self.counters.stale_event(self.spec.name)
                log.info("%s: ignored a %s event at resourceVersion %s, not newer than %s",
                         self.spec.name, kind, version, self.resource_version)
            return
        self.counters.event(self.spec.name, kind)
        if self.ahead and kind != "BOOKMARK" and self._caught_up_past(event):
            log.debug("%s: skipped a %s event at resourceVersion %s, older than a catch-up's",
                      self.spec.name, kind, version)
        elif kind in ("ADDED", "MODIFIED"):
            self.gate.call(_guarded, self.sink.apply, event.object)
        elif kind == "DELETED":
            self.gate.call(_guarded, self.sink.delete, event.object)
        elif kind != "BOOKMARK":
            log.warning("%s: unknown watch event type %r", self.spec.name, kind)
        if version:
            self.resource_version = version
            if self.ahead:
                self._passed()

    def caught_up(self, uid: str, version: str) -> None:
        """Note that the object `uid` was applied as a list at `version` showed it."""
        if not self.resource_version or is_newer(version, self.resource_version):
            if is_newer(version, self.ahead.get(uid, "")):
                self.ahead[uid] = version

    def _caught_up_past(self, event: WatchEvent) -> bool:
        meta = getattr(event.object, "metadata", None)
        applied = self.ahead.get(getattr(meta, "uid", ""))
        return applied is not None and bool(event.resource_version) and \
            not is_newer(event.resource_version, applied)

    def _passed(self) -> None:
        # Entries at or below the informer's version can no longer shadow an older event.
        self.ahead = {uid: v for uid, v in self.ahead.items()
                      if is_newer(v, self.resource_version)}


def is_newer(version: str, than: str) -> bool:
    """Whether resourceVersion `version` comes after `than` ("" comes before everything).

    Versions are opaque to clients by contract, but every API server serves etcd revisions,
    decimal integers that only grow; versions that are not can only be told equal or not."""
    if not than:
        return True
    if version.isdigit() and than.isdigit():
        return int(version) > int(than)
    return version != than


def _reached(version: str, target: str) -> bool:
    """Whether an informer at `version` has seen everything up to `target` (opaque versions:
    only when equal)."""
    if version.isdigit() and target.isdigit():
        return int(version) >= int(target)
    return bool(version) and version == target


# ---- the live state ---------------------------------------------------------------------
class LiveState:
    """The four informers plus assumption expiry, as asyncio tasks.

    Create it, then `start()` on the running loop; `await stop()` on shutdown.
    """

    def __init__(
        self,
        client: KubeClient,
        state: ClusterState,
        *,
        resources: Iterable[ResourceSpec] = ALL_RESOURCES,
        page_limit: int = 500,
        watch_timeout: int = 300,
        expire_interval: float = 1.0,
        backoff_initial: float = 0.2,
        backoff_max: float = 30.0,
        freeze_gc: bool = False,
        owns_client: bool = False,
        clock: Clock = time.monotonic,
    ) -> None:
        self.client = client
        self.state = state
        self.counters = Counters()
        self.informers = {
            spec.name: Informer(client, state, spec, counters=self.counters, page_limit=page_limit,
                                watch_timeout=watch_timeout, clock=clock,
                                backoff=Backoff(backoff_initial, backoff_max))
            for spec in resources
        }
        self.expire_interval = expire_interval
        #: Told (the time judged by, the pods) whenever assumptions expire (`serve --record`).
        self.on_expired: Callable[[float, list[PodView]], None] | None = None
        self.freeze_gc = freeze_gc
        self.owns_client = owns_client
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def synced(self) -> bool:
        """Every informer has listed once."""
        return all(i.synced for i in self.informers.values())

    @property
    def stale_seconds(self) -> float:
        return max((i.stale_seconds for i in self.informers.values()), default=0.0)

    def is_ready(self, max_staleness: float) -> bool:
        return self.not_ready_reason(max_staleness) is None

    def not_ready_reason(self, max_staleness: float) -> str | None:
        """None when ready, else a message fit for an extender `Error` field."""
        waiting = [name for name, i in self.informers.items() if not i.synced]
        if waiting:
            why = f"cluster state not synced yet (waiting for {', '.join(waiting)})"
            return why + self._last_error(waiting)
        stale = {name: i.stale_seconds for name, i in self.informers.items()}
        worst = max(stale, key=lambda n: stale[n], default=None)
        if worst is not None and stale[worst] > max_staleness:
            return (f"cluster state is stale: the {worst} watch has been down for "
                    f"{stale[worst]:.0f}s (bound {max_staleness:g}s)" + self._last_error([worst]))
        return None

    def observed_version(self) -> str:
        """The oldest resourceVersion among the informers ("" before every one listed):
        each has applied every event of its resource up to it (a bookmark says there were
        none). For the sync query (`extender.api.sync`)."""
        versions = [i.resource_version for i in self.informers.values()]
        if not versions or not all(versions):
            return ""
        if all(v.isdigit() for v in versions):
            return min(versions, key=int)
        return versions[0] if len(set(versions)) == 1 else ""

    def not_observed_reason(self, version: str) -> str | None:
        """None once every informer has applied the events up to `version` (its own version
        is `version` or newer) and no change waits to be applied; else why not."""
        behind = [f"{name} at {i.resource_version or 'none'}"
                  for name, i in self.informers.items()
                  if not i.synced or not _reached(i.resource_version, version)]
        if behind:
            return f"not at resourceVersion {version} yet: " + ", ".join(behind)
        pending = gate_for(self.state).pending
        if pending:
            return f"{pending} change(s) wait for a large request to finish"
        return None

    def _last_error(self, names: list[str]) -> str:
        # An operator reading /readyz (or FailedScheduling) should see why, e.g. missing RBAC.
        for name in names:
            if error := self.informers[name].last_error:
                return f"; last error from {name}: {error}"
        return ""

    def start(self) -> None:
        """Start the tasks on the running event loop."""
        if self._tasks:
            return
        for name, informer in self.informers.items():
            self._tasks.append(asyncio.create_task(informer.run(), name=f"informer-{name}"))
        self._tasks.append(asyncio.create_task(self._expire_loop(), name="assume-expiry"))
        if self.freeze_gc:
            self._tasks.append(asyncio.create_task(self._freeze_after_sync(), name="gc-freeze"))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
        if self.owns_client:
            await self.client.aclose()

    async def wait_synced(self, timeout: float | None = None) -> bool:
        """Wait until every informer listed once; False on timeout."""
        waits = [i.synced_event.wait() for i in self.informers.values()]
        try:
            async with asyncio.timeout(timeout):
                await asyncio.gather(*waits)
        except TimeoutError:
            return False
        return True

    async def _expire_loop(self) -> None:
        while True:
            await asyncio.sleep(self.expire_interval)
            gate_for(self.state).call(self._expire)

    def _expire(self) -> None:
        now = self.state.clock()
        expired = self.state.expire_assumptions(now)
        for pod in expired:
            self.counters.expired_assumptions += 1
            log.warning("assumed pod %s on node %s was not confirmed by the watch; dropped",
                        pod.key, pod.node_name)
        if expired and self.on_expired is not None:
            self.on_expired(now, expired)

    async def _freeze_after_sync(self) -> None:
        # The initial sync builds most long-lived objects; moving them out of the collected
        # generations keeps full GC passes from rescanning hundreds of thousands of them.
        await self.wait_synced()
        gc.collect()
        gc.freeze()


def start_live_state(
    config: ClusterConfig | KubeClient, state: ClusterState, **options: Any
) -> LiveState:
    """Build the client (from a config) and a `LiveState`, and start it on the running loop.

    Options are `LiveState`'s keyword arguments; `freeze_gc` defaults to True here.
    """
    owns = not isinstance(config, KubeClient)
    client = KubeClient(config) if isinstance(config, ClusterConfig) else config
    options.setdefault("freeze_gc", True)
    live = LiveState(client, state, owns_client=owns, **options)
    live.start()
    return live
