"""The simulated cluster served as a minimal Kubernetes API on loopback (`--serve-api`).

An external extender (`extender simulate --extender URL`) keeps its own view of the cluster. To
make that view the simulated cluster, the simulator serves it as a Kubernetes API and the
extender runs in `--kubeconfig` mode against it (`extender serve --kubeconfig FILE`), listing and
watching it as it would a real cluster. Three parts:

* `ApiServer`: the HTTP API, an asyncio server in a daemon thread on 127.0.0.1 (plain HTTP,
  no credentials: the data is simulated, and kubectl sends no token over plain HTTP). It
  serves what `extender.state.informer`'s `ResourceSpec`s list and watch — nodes, pods,
  PodDisruptionBudgets, PriorityClasses, namespaces, services, ReplicaSets, StatefulSets,
  ReplicationControllers and the plugins' custom resources (PodGroups, ElasticQuotas,
  NodeResourceTopologies, AppGroups, NetworkTopologies) — as the real API server does:
  `list` (`limit`/`continue` over a consistent snapshot, `fieldSelector`), `watch` from a
  `resourceVersion` (every later change of the resource, in order; `ERROR` 410 `Expired` when
  the version is older than the kept history; `BOOKMARK` at the current version as soon as the
  cluster changed when `allowWatchBookmarks=true`; `timeoutSeconds`), `GET` of one object,
  `POST …/pods/{name}/binding` (BindingREST's checks: 404, 409 on a UID mismatch, a bound or a
  terminating pod), `events.k8s.io` Events (accepted and counted, not kept) and enough
  discovery (`/version`, `/api`, `/apis`, each group version) for `kubectl get`. One global
  resourceVersion counter, as etcd's revision: every change gets the next one.
* `ClusterMirror`: renders the simulation's cluster (nodes, bound and pending pods with their
  nominations, terminating victims, the objects of the snapshot and those the workload
  creates) as API objects, and `publish` hands the differences to the server: each object
  that appeared, changed or went away is one ADDED, MODIFIED or DELETED event with a new
  resourceVersion. Changes between two publishes are seen as their net result per object
  (an informer's end state is the same). The simulation is the truth: a Binding made through
  the API (an extender binding with `--extender-bind`) sets `spec.nodeName` at once; the next
  publish writes the pod as the simulation has it.
* `ExtenderSync`: the sync query. Before each scheduling cycle the simulator publishes the
  cluster and then asks every extender `GET <urlPrefix>/readyz?resourceVersion=N` until it
  answers 200 with an `Observed-Resource-Version` header (N or later): every informer of the
  extender has applied the events up to N. Bounded: a first wait long enough to start the
  extender (`--extender-start-timeout`), then `--extender-sync-timeout` per cycle; past it the
  run stops with `SyncError` naming the extender and its last answer. `docs/operations.md`
  ("Sync query") documents the contract; `extender.api.sync` implements it.

`ServedCluster` ties them together for the CLI: start, write the kubeconfig, and
`before_cycle(sim)` (the simulation's hook) publishes and waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import itertools
import json
import os
import secrets
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import msgspec
import yaml

from extender.model.timeparse import parse_time
from extender.simulator.apiwire import (
    CONTINUE_EXPIRED,
    HttpError,
    Key,
    LoopbackServer,
    Request,
    Resource,
    WatchEvent,
    bookmark,
    decode_continue,
    encode_continue,
    events_since,
    key_of,
    kubeconfig_doc,
    matches,
    parse_binding,
    parse_selector,
    read_request,
    route,
    selectable,
    status_body,
    too_old,
    translate,
)
from extender.state import informer

#: The sync query's path (below an extender's urlPrefix) and the header its 200 carries.
SYNC_PATH = "/readyz"
SYNC_HEADER = "Observed-Resource-Version"
#: Events kept for watches from an older resourceVersion (older ones answer 410 Expired).
DEFAULT_HISTORY = 100_000
#: The longest a watch stream stays open without `timeoutSeconds` (kube-apiserver: 30-60 min).
MAX_WATCH_SECONDS = 1800.0
#: Version reported by `/version` (the API surface follows the 1.30 one the extender targets).
SERVER_VERSION = {"major": "1", "minor": "30", "gitVersion": "v1.30.0-extender-simulator",
                  "platform": "linux/amd64"}

_CLUSTER_SCOPED = {"nodes", "priorityclasses", "namespaces", "noderesourcetopologies"}
_SHORT_NAMES = {"nodes": ["no"], "pods": ["po"], "poddisruptionbudgets": ["pdb"],
                "priorityclasses": ["pc"], "namespaces": ["ns"], "services": ["svc"],
                "replicasets": ["rs"], "statefulsets": ["sts"], "replicationcontrollers": ["rc"]}


def _resource(spec: informer.ResourceSpec) -> Resource:
    prefix, _, plural = spec.path.rpartition("/")
    group_version = prefix.removeprefix("/apis/") if prefix.startswith("/apis/") else "v1"
    return Resource(plural, spec.kind.__name__, group_version, prefix, plural not in _CLUSTER_SCOPED)


_SPECS = (*informer.ALL_RESOURCES,
          *dict.fromkeys(s for specs in informer.PLUGIN_RESOURCES.values() for s in specs))
#: Every collection the extender's informers may list and watch, by plural.
RESOURCES: dict[str, Resource] = {r.plural: r for r in map(_resource, _SPECS)}
KIND_TO_PLURAL = {r.kind: r.plural for r in RESOURCES.values()}


class SyncError(RuntimeError):
    """An extender that never observed the simulated cluster's current version."""


def _versioned(obj: Mapping[str, Any], rv: int) -> dict[str, Any]:
    out = dict(obj)
    out["metadata"] = {**obj.get("metadata", {}), "resourceVersion": str(rv)}
    return out


def _unversioned(obj: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(obj)
    meta = dict(obj.get("metadata", {}))
    meta.pop("resourceVersion", None)
    out["metadata"] = meta
    return out


class ApiServer(LoopbackServer):
    """The loopback API server. `start()` / `stop()`, or a context manager.

    Stored objects are never mutated in place (a change stores a new dict), so lists, watch
    events and history share them without copies. Store methods are thread-safe: the
    simulation publishes from its thread while the server's loop answers."""

    def __init__(self, *, token: str | None = None, host: str = "127.0.0.1", port: int = 0,
                 history: int = DEFAULT_HISTORY, initial_rv: int = 1) -> None:
        #: A bearer token to require (None: none; kubectl sends no token over plain HTTP).
        self.token = token
        self.host = host
        self.requested_port = port
        self.port = 0
        self.history_size = history
        self.rv = initial_rv
        self.compacted_rv = initial_rv
        self.objects: dict[str, dict[Key, dict[str, Any]]] = {p: {} for p in RESOURCES}
        #: The object `sync_collection` stored last per key (dropped when anything else
        #: writes there: a Binding).
        self._origins: dict[str, dict[Key, dict[str, Any]]] = {p: {} for p in RESOURCES}
        self.history: deque[WatchEvent] = deque()
        #: (namespace, name, uid, node) of every Binding performed through the API.
        self.bindings: list[tuple[str, str, str, str]] = []
        #: Events (events.k8s.io or core) posted or patched: accepted, counted, not kept.
        self.events_received = 0
        self._snapshots: dict[int, tuple[int, list[dict[str, Any]]]] = {}
        self._snapshot_ids = itertools.count(1)
        self._lock = threading.RLock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._changed: asyncio.Event | None = None
        self._stop: asyncio.Event | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._thread: threading.Thread | None = None

    # ---- lifecycle -----------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    _thread_name = "simulator-apiserver"
    _server_name = "the simulator's API server"

    async def _listen(self) -> asyncio.Server:
        return await asyncio.start_server(self._connection, self.host, self.requested_port,
                                          limit=1 << 20)

    # ---- kubeconfig ----------------------------------------------------------------------
    def kubeconfig(self) -> dict[str, Any]:
        return kubeconfig_doc("simulator", "simulator", {"server": self.url}, "simulator",
                              {"token": self.token} if self.token else {})

    def write_kubeconfig(self, path: str | Path) -> Path:
        """Write the kubeconfig atomically (a watcher never reads half a file), mode 0600."""
        path = Path(path)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(yaml.safe_dump(self.kubeconfig(), sort_keys=False))
        os.replace(tmp, path)
        return path

    # ---- the store (thread-safe) ---------------------------------------------------------
    def _put(self, plural: str, key: Key, obj: dict[str, Any]) -> None:
        """Store `obj` (unversioned) as the next version; caller holds the lock."""
        old = self.objects[plural].get(key)
        self.rv += 1
        stored = _versioned(obj, self.rv)
        self.objects[plural][key] = stored
        self._record(plural, "MODIFIED" if old is not None else "ADDED", old, stored)

    def _delete(self, plural: str, key: Key) -> None:
        self._origins[plural].pop(key, None)
        old = self.objects[plural].pop(key, None)
        if old is None:
            return
        self.rv += 1
        self._record(plural, "DELETED", old, _versioned(old, self.rv))

    def sync_collection(self, plural: str, desired: Mapping[Key, dict[str, Any]]) -> int:
        """Make the collection exactly `desired` (unversioned objects, not changed afterwards
        by the caller): one event per object that differs. An object that is the very one
        this method stored last for its key, with nothing else written there since, is
        not compared again. Returns the number of events."""
        events = 0
        with self._lock:
            store = self.objects[plural]
            origins = self._origins[plural]
            for key, obj in desired.items():
                if origins.get(key) is obj:
                    continue
                current = store.get(key)
                if current is None or _unversioned(current) != obj:
                    self._put(plural, key, obj)
                    events += 1
                origins[key] = obj
            for key in [k for k in store if k not in desired]:
                self._delete(plural, key)
                events += 1
        if events:
            self._wake()
        return events

    def get(self, plural: str, namespace: str, name: str) -> dict[str, Any] | None:
        with self._lock:
            return self.objects[plural].get((namespace, name))

    def items(self, plural: str) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.objects[plural].values())

    def compact(self) -> int:
        """Forget all history (etcd compaction): older versions and continue tokens → 410."""
        with self._lock:
            self.history.clear()
            self.compacted_rv = self.rv
            self._snapshots.clear()
            return self.rv

    # ---- HTTP ----------------------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            while True:
                req = await read_request(reader)
                if req is None or not await self._handle(req, reader, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                asyncio.CancelledError, ValueError):
            pass
        finally:
            self._tasks.discard(task)
            writer.transport.abort()

    @staticmethod
    async def _respond(writer: asyncio.StreamWriter, code: int, body: Any) -> None:
        data = json.dumps(body, separators=(",", ":")).encode()
        head = (f"HTTP/1.1 {code} {http.HTTPStatus(code).phrase}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n")
        writer.write(head.encode() + data)
        await writer.drain()

    async def _handle(self, req: Request, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> bool:
        """Serve one request; False closes the connection."""
        if req.path in ("/healthz", "/livez", "/readyz"):
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                         b"Content-Length: 2\r\n\r\nok")
            await writer.drain()
            return True
        auth = req.headers.get("authorization", "")
        if self.token is not None and not (auth.startswith("Bearer ")
                                           and secrets.compare_digest(auth[7:], self.token)):
            await self._respond(writer, 401, status_body(401, "Unauthorized"))
            return True
        try:
            if req.query.get("watch") in ("1", "true") and req.method == "GET":
                what, res, ns, _name = route(req.path, RESOURCES.values())
                if what == "collection":
                    return await self._watch(res, ns, req, reader, writer)
            code, body = self._dispatch(req)
        except HttpError as exc:
            code, body = exc.code, exc.body
        await self._respond(writer, code, body)
        return True

    def _dispatch(self, req: Request) -> tuple[int, Any]:
        path = req.path.rstrip("/") or "/"
        discovery = self._discovery(path)
        if discovery is not None:
            if req.method != "GET":
                raise HttpError(405, f"{req.method} is not supported here")
            return 200, discovery
        if _is_event_path(path):
            return self._event(req)
        what, res, ns, name = route(path, RESOURCES.values())
        if what == "collection" and req.method == "GET":
            return 200, self._list(res, ns, req.query)
        if what == "object" and req.method == "GET":
            obj = self.get(res.plural, ns, name)
            if obj is None:
                raise HttpError(404, f'{res.plural} "{name}" not found',
                                details={"name": name, "kind": res.plural})
            return 200, obj
        if what == "binding" and req.method == "POST":
            return 201, self._bind(ns, name, req.body)
        raise HttpError(405, f"{req.method} is not supported by the simulator's API")

    # ---- discovery (enough for kubectl) --------------------------------------------------
    def _discovery(self, path: str) -> Any:
        if path == "/version":
            return SERVER_VERSION
        if path == "/api":
            return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
                {"clientCIDR": "0.0.0.0/0", "serverAddress": f"{self.host}:{self.port}"}]}
        groups: dict[str, list[Resource]] = {}
        for res in RESOURCES.values():
            groups.setdefault(res.group_version, []).append(res)
        if path == "/apis":
            out = []
            for gv in groups:
                if "/" not in gv:
                    continue
                group, version = gv.split("/", 1)
                preferred = {"groupVersion": gv, "version": version}
                out.append({"name": group, "versions": [preferred], "preferredVersion": preferred})
            return {"kind": "APIGroupList", "apiVersion": "v1", "groups": out}
        gv = "v1" if path == "/api/v1" else path.removeprefix("/apis/")
        if (path == "/api/v1" or path.startswith("/apis/")) and gv in groups:
            resources: list[dict[str, Any]] = []
            for res in groups[gv]:
                entry: dict[str, Any] = {
                    "name": res.plural, "singularName": res.kind.lower(),
                    "namespaced": res.namespaced, "kind": res.kind,
                    "verbs": ["get", "list", "watch"]}
                if res.plural in _SHORT_NAMES:
                    entry["shortNames"] = _SHORT_NAMES[res.plural]
                resources.append(entry)
                if res.plural == "pods":
                    resources.append({"name": "pods/binding", "singularName": "",
                                      "namespaced": True, "kind": "Binding", "verbs": ["create"]})
            return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
                    "resources": resources}
        return None

    # ---- list ----------------------------------------------------------------------------
    def _list(self, res: Resource, ns: str, query: Mapping[str, str]) -> dict[str, Any]:
        if query.get("labelSelector"):
            raise HttpError(400, "labelSelector is not supported by the simulator's API")
        terms = parse_selector(query.get("fieldSelector", ""), selectable(res))
        try:
            limit = int(query.get("limit", "0") or 0)
        except ValueError:
            raise HttpError(400, "limit must be an integer") from None
        token = query.get("continue", "")
        with self._lock:
            if token:
                list_rv, snap_id, offset = decode_continue(token)
                snap = self._snapshots.get(snap_id)
                if list_rv < self.compacted_rv or snap is None:
                    raise HttpError(410, CONTINUE_EXPIRED)
                items = snap[1]
            else:
                snap_id = 0
                list_rv, offset = self.rv, 0
                items = sorted((o for o in self.objects[res.plural].values()
                                if matches(o, terms, ns)), key=key_of)
            page = items[offset: offset + limit] if limit > 0 else items[offset:]
            meta: dict[str, Any] = {"resourceVersion": str(list_rv)}
            rest = len(items) - offset - len(page)
            if rest > 0:
                if not snap_id:
                    snap_id = next(self._snapshot_ids)
                    self._snapshots[snap_id] = (list_rv, items)
                    while len(self._snapshots) > 64:  # abandoned lists
                        del self._snapshots[next(iter(self._snapshots))]
                meta["continue"] = encode_continue(list_rv, snap_id, offset + len(page))
                meta["remainingItemCount"] = rest
            elif snap_id:
                self._snapshots.pop(snap_id, None)
        return {"kind": res.kind + "List", "apiVersion": res.group_version, "metadata": meta,
                "items": page}

    # ---- watch ---------------------------------------------------------------------------
    async def _watch(self, res: Resource, ns: str, req: Request, reader: asyncio.StreamReader,
                     writer: asyncio.StreamWriter) -> bool:
        terms = parse_selector(req.query.get("fieldSelector", ""), selectable(res))
        bookmarks = req.query.get("allowWatchBookmarks") == "true"
        try:
            timeout = min(float(req.query.get("timeoutSeconds") or MAX_WATCH_SECONDS),
                          MAX_WATCH_SECONDS)
            rv_param = req.query.get("resourceVersion", "")
            since = None if rv_param in ("", "0") else int(rv_param)
        except ValueError:
            raise HttpError(400, "invalid resourceVersion or timeoutSeconds") from None
        with self._lock:
            if since is None:  # "most recent": synthetic ADDED for what exists, then changes
                initial = sorted((o for o in self.objects[res.plural].values()
                                  if matches(o, terms, ns)), key=key_of)
                last = self.rv
            else:
                initial, last = [], since
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")

        async def send(event: dict[str, Any]) -> None:
            data = json.dumps(event, separators=(",", ":")).encode() + b"\n"
            writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            await writer.drain()

        async def end() -> bool:
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return False

        eof = asyncio.ensure_future(reader.read(1))  # the client hanging up
        try:
            for obj in initial:
                await send({"type": "ADDED", "object": obj})
            delivered = last  # the version the watcher knows it has everything up to
            deadline = time.monotonic() + timeout
            while True:
                assert self._changed is not None
                changed = self._changed
                with self._lock:
                    if last < self.compacted_rv:
                        await send(too_old(last, self.compacted_rv))
                        return await end()
                    pending = events_since(self.history, last, res.plural)
                    last = self.rv
                for ev in pending:
                    out = translate(ev, terms, ns)
                    if out is not None:
                        await send(out)
                        delivered = ev.rv
                if bookmarks and last > delivered:
                    # Everything up to the cluster's version is delivered: say so at once, so
                    # an informer of an unchanged resource reaches the current version too.
                    await send(bookmark(res, last))
                    delivered = last
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return await end()
                waiter = asyncio.ensure_future(changed.wait())
                done, _ = await asyncio.wait({waiter, eof}, timeout=remaining,
                                             return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                if eof in done:
                    return False
        finally:
            eof.cancel()
            with contextlib.suppress(BaseException):
                await eof

    # ---- binding -------------------------------------------------------------------------
    def _bind(self, ns: str, name: str, raw: bytes) -> dict[str, Any]:
        """BindingREST.Create: validate, check the preconditions, set spec.nodeName."""
        meta, node = parse_binding(ns, name, raw)
        details = {"name": name, "kind": "pods"}
        with self._lock:
            pod = self.objects["pods"].get((ns, name))
            if pod is None:
                raise HttpError(404, f'pods "{name}" not found', details=details)
            pmeta = pod["metadata"]
            if meta.get("uid") and meta["uid"] != pmeta.get("uid"):
                raise HttpError(409, f'Operation cannot be fulfilled on pods "{name}": '
                                     f'Precondition failed: UID in precondition: {meta["uid"]}, '
                                     f'UID in object meta: {pmeta.get("uid")}', details=details)
            conflict = None
            if pmeta.get("deletionTimestamp"):
                conflict = f"pod {name} is being deleted, cannot be assigned to a host"
            elif (pod.get("spec") or {}).get("nodeName"):
                conflict = f'pod {name} is already assigned to node "{pod["spec"]["nodeName"]}"'
            if conflict:
                raise HttpError(409, f'Operation cannot be fulfilled on pods/binding "{name}": '
                                     f"{conflict}", details={"name": name, "kind": "pods/binding"})
            bound = _unversioned(pod)
            bound["spec"] = {**(pod.get("spec") or {}), "nodeName": node}
            self._put("pods", (ns, name), bound)
            self._origins["pods"].pop((ns, name), None)
            self.bindings.append((ns, name, pmeta.get("uid", ""), node))
        self._wake()
        return status_body(201, "")

    # ---- Events: accepted and counted ----------------------------------------------------
    def _event(self, req: Request) -> tuple[int, Any]:
        if req.method not in ("POST", "PATCH", "PUT"):
            raise HttpError(405, f"{req.method} is not supported for events here")
        try:
            doc = json.loads(req.body or b"{}")
        except ValueError:
            raise HttpError(400, "invalid JSON body") from None
        with self._lock:
            self.events_received += 1
        return (201 if req.method == "POST" else 200), doc


def _is_event_path(path: str) -> bool:
    """`…/namespaces/{ns}/events[/{name}]` of events.k8s.io/v1 or core v1."""
    for prefix in ("/apis/events.k8s.io/v1/", "/api/v1/"):
        if path.startswith(prefix):
            rest = path[len(prefix):].split("/")
            return len(rest) in (3, 4) and rest[0] == "namespaces" and rest[2] == "events"
    return False


# ---- the simulation's cluster as API objects ---------------------------------------------

def _rfc3339(epoch_seconds: float) -> str:
    """Microsecond precision (the simulation's times are virtual, often a millisecond apart)."""
    return datetime.fromtimestamp(epoch_seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _typed_to_dict(obj: Any, kind: str) -> dict[str, Any]:
    out = msgspec.to_builtins(obj)
    res = RESOURCES[KIND_TO_PLURAL[kind]]
    return {"apiVersion": res.group_version, "kind": kind, **out}


def _normalized(obj: Mapping[str, Any], kind: str) -> dict[str, Any]:
    """An object as the API server keeps it: apiVersion and kind of its resource, a
    namespace only when namespaced (`default` when missing), no resourceVersion."""
    res = RESOURCES[KIND_TO_PLURAL[kind]]
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
        from extender.state.snapshot import iter_objects, read_documents

        for obj in iter_objects(read_documents(cluster)):
            kind = obj.get("kind")
            meta = obj.get("metadata") or {}
            if kind not in KIND_TO_PLURAL or not meta.get("name"):
                continue
            normal = _normalized(obj, kind)
            nmeta = normal["metadata"]
            self.raw[(KIND_TO_PLURAL[kind], nmeta.get("namespace", ""), nmeta["name"])] = normal
            if kind == "Pod" and meta.get("uid"):
                self.raw_pods[meta["uid"]] = normal

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
                    obj = _normalized({"metadata": {"namespace": key[0], "name": key[1]}},
                                      RESOURCES[plural].kind)
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
            if kind in KIND_TO_PLURAL:
                obj = created.obj if isinstance(created.obj, dict) else _typed_to_dict(created.obj, kind)
                normal = _normalized(obj, kind)
                meta = normal["metadata"]
                self._created[(KIND_TO_PLURAL[kind], meta.get("namespace", ""), meta["name"])] = normal
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
            rendered = _normalized(source, "Node")
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
        obj = _normalized(raw, "Pod")
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
            "podgroups": list(state.pod_groups),
            "elasticquotas": list(state.elastic_quotas),
            "appgroups": list(state.app_groups),
            "networktopologies": list(state.network_topologies),
            "noderesourcetopologies": [("", n) for n in state.topologies],
        }



# ---- the sync query ---------------------------------------------------------------------

@dataclass(slots=True)
class _Answer:
    status: int | None  # None: no answer (connection refused, timeout)
    text: str
    observed: str = ""


class ExtenderSync:
    """Waits until extenders have observed a resourceVersion, through their sync query:
    `GET <urlPrefix>/readyz?resourceVersion=N&timeoutSeconds=S` answers 200 with an
    `Observed-Resource-Version: M` header (M ≥ N) once every informer of the extender has
    applied the events up to N, 503 until then (held up to S seconds first), 400 when it
    cannot (an extender serving a snapshot, which watches nothing).

    The first wait of each extender is bounded by `start_timeout` (the time to start it
    against the kubeconfig), each later one by `timeout`; a version already confirmed is not
    asked again."""

    def __init__(self, url_prefixes: Sequence[str], *, start_timeout: float = 120.0,
                 timeout: float = 30.0, client: httpx.Client | None = None,
                 hold: float = 1.0) -> None:
        self.urls = [u.rstrip("/") for u in url_prefixes]
        self.start_timeout = start_timeout
        self.timeout = timeout
        self.hold = hold  # seconds each query may be held by the extender
        self._client = client or httpx.Client(timeout=hold + 5.0)
        self._owns_client = client is None
        self.confirmed: dict[str, int] = {}  # url -> the newest version it observed
        self.queries = 0
        self.wait_seconds = 0.0

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    def wait(self, version: int) -> None:
        started = time.monotonic()
        for url in self.urls:
            if self.confirmed.get(url, -1) >= version:
                continue
            first = url not in self.confirmed
            self._wait_one(url, version, self.start_timeout if first else self.timeout)
        self.wait_seconds += time.monotonic() - started

    def _ask(self, url: str, version: int, hold: float) -> _Answer:
        self.queries += 1
        try:
            resp = self._client.get(url + SYNC_PATH, params={
                "resourceVersion": str(version), "timeoutSeconds": f"{hold:g}"})
        except httpx.HTTPError as exc:
            return _Answer(None, f"{type(exc).__name__}: {exc}")
        return _Answer(resp.status_code, resp.text.strip()[:500], resp.headers.get(SYNC_HEADER, ""))

    def _wait_one(self, url: str, version: int, bound: float) -> None:
        deadline = time.monotonic() + bound
        pause = 0.001
        while True:
            asked = time.monotonic()
            hold = max(0.0, min(self.hold, deadline - asked))
            answer = self._ask(url, version, hold)
            if answer.status == 200:
                if not answer.observed:
                    raise SyncError(
                        f"the extender at {url} answered {SYNC_PATH}?resourceVersion={version} "
                        f"with 200 but without an {SYNC_HEADER} header: it does not implement "
                        "the sync query (docs/operations.md, \"Sync query\"), so the simulator "
                        "cannot know what it has seen")
                observed = int(answer.observed) if answer.observed.isdigit() else version
                self.confirmed[url] = max(observed, version)
                return
            if answer.status is not None and answer.status not in (429, 503):
                raise SyncError(f"the extender at {url} cannot follow the simulated cluster: "
                                f"{SYNC_PATH}?resourceVersion={version} answered "
                                f"{answer.status}: {answer.text}")
            if time.monotonic() >= deadline:
                last = (f"{answer.status}: {answer.text}" if answer.status is not None
                        else f"no answer ({answer.text})")
                raise SyncError(
                    f"the extender at {url} did not observe the simulated cluster's "
                    f"resourceVersion {version} within {bound:g}s (last answer: {last}); is it "
                    "running with --kubeconfig pointing at the simulator's kubeconfig?")
            # Not listening yet (being started), or answering at once without holding the
            # query: pause before asking again (a holding extender is asked again at once).
            if answer.status is None or time.monotonic() - asked < hold / 2:
                time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
                pause = min(pause * 2, 0.25)


class ServedCluster:
    """`--serve-api`: the API server, its kubeconfig, and the per-cycle publish and sync.

    Use as a context manager around the run; `before_cycle` is the simulation's hook."""

    def __init__(self, cluster: str | Path | None, kubeconfig: str | Path, *,
                 extenders: Sequence[str] = (), port: int = 0,
                 start_timeout: float = 120.0, sync_timeout: float = 30.0,
                 history: int = DEFAULT_HISTORY) -> None:
        self.api = ApiServer(port=port, history=history)
        self.mirror = ClusterMirror(self.api, cluster)
        self.kubeconfig = Path(kubeconfig)
        self.sync = ExtenderSync(extenders, start_timeout=start_timeout, timeout=sync_timeout)
        self.publishes = 0

    def __enter__(self) -> ServedCluster:
        self.api.start()
        try:
            self.api.write_kubeconfig(self.kubeconfig)
        except OSError:
            self.api.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.sync.close()
        self.api.stop()

    def publish(self, sim: Any) -> int:
        self.publishes += 1
        version = self.mirror.publish(sim)
        if self.mirror.warnings:
            sim.warnings.extend(f"--serve-api: {w}" for w in self.mirror.warnings)
            self.mirror.warnings.clear()
        return version

    def before_cycle(self, sim: Any) -> None:
        """Publish the cluster as it is now, then wait until every extender observed it."""
        version = self.publish(sim)
        if self.sync.urls:
            self.sync.wait(version)


def unsynced_warning(url: str) -> str:
    """The report's warning for an extender in the loop without `--serve-api`."""
    return (f"the extender at {url} was told only of binds (with --extender-bind): it does not "
            "see arrivals, evictions, deletions or node events, so its answers may be about "
            "another cluster; --serve-api FILE serves the simulated cluster for it to watch "
            "(extender serve --kubeconfig FILE) and waits for it before each cycle")


def serve_for_cli(stack: contextlib.ExitStack, args: Any, config: Any,
                  extenders: Sequence[str]) -> ServedCluster | None:
    """`extender simulate --serve-api FILE`: start the API, write FILE, hook the per-cycle
    publish and sync into `config`, and say what to run. None (after a message) when the
    server cannot start or FILE cannot be written."""
    from extender.simulator.clock import SECOND

    served = ServedCluster(args.cluster, args.serve_api, extenders=extenders,
                           port=args.serve_api_port,
                           start_timeout=args.extender_start_timeout / SECOND,
                           sync_timeout=args.extender_sync_timeout / SECOND)
    try:
        stack.enter_context(served)
    except OSError as exc:
        print(f"extender simulate: --serve-api: {exc}", file=sys.stderr)
        return None
    config.before_cycle = served.before_cycle
    where = f"serving the simulated cluster at {served.api.url}, kubeconfig {args.serve_api}"
    if extenders:
        print(f"{where}; waiting up to {args.extender_start_timeout / SECOND:g}s for "
              f"{', '.join(extenders)} to observe it (extender serve --kubeconfig "
              f"{args.serve_api} --policy {args.policy} ...)", file=sys.stderr, flush=True)
    else:
        print(where, file=sys.stderr, flush=True)
    return served
