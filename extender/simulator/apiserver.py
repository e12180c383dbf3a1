"""The simulated cluster served as a minimal Kubernetes API on loopback (`--serve-api`).

An external extender (`extender simulate --extender URL`) keeps its own view of the cluster. To
make that view the simulated cluster, the simulator serves it as a Kubernetes API and the
extender runs in `--kubeconfig` mode against it (`extender serve --kubeconfig FILE`), listing and
watching it as it would a real cluster. Three parts, one per module:

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
* `ClusterMirror` (`apimirror.py`): renders the simulation's cluster (nodes, bound and pending pods with their
  nominations, terminating victims, the objects of the snapshot and those the workload
  creates) as API objects, and `publish` hands the differences to the server: each object
  that appeared, changed or went away is one ADDED, MODIFIED or DELETED event with a new
  resourceVersion. Changes between two publishes are seen as their net result per object
  (an informer's end state is the same). The simulation is the truth: a Binding made through
  the API (an extender binding with `--extender-bind`) sets `spec.nodeName` at once; the next
  publish writes the pod as the simulation has it.
* `ExtenderSync` (`apisync.py`): the sync query. Before each scheduling cycle the simulator publishes the
  cluster and then asks every extender `GET <urlPrefix>/readyz?resourceVersion=N` until it
  answers 200 with an `Observed-Resource-Version` header (N or later): every informer of the
  extender has applied the events up to N. Bounded: a first wait long enough to start the
  extender (`--extender-start-timeout`), then `--extender-sync-timeout` per cycle; past it the
  run stops with `SyncError` naming the extender and its last answer. `docs/operations.md`
  ("Sync query") documents the contract; `extender.api.sync` implements it.

`ServedCluster` (`apisync.py`) ties them together for the CLI: start, write the kubeconfig, and
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
import threading
import time
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from extender.engine import registry
from extender.files import replacing
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
    labels_match,
    matches,
    parse_binding,
    parse_labels,
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

_SHORT_NAMES = {"nodes": ["no"], "pods": ["po"], "poddisruptionbudgets": ["pdb"],
                "priorityclasses": ["pc"], "namespaces": ["ns"], "services": ["svc"],
                "replicasets": ["rs"], "statefulsets": ["sts"], "replicationcontrollers": ["rc"]}


def _resource(spec: informer.ResourceSpec) -> Resource:
    prefix, _, plural = spec.path.rpartition("/")
    return Resource(plural, spec.kind, spec.group_version, prefix, spec.namespaced)


_served: tuple[object, dict[str, Resource], dict[str, str]] = ((), {}, {})


def resources() -> dict[str, Resource]:
    """Every collection the extender's informers may list and watch, by plural: kube-scheduler's
    and every registered plugin's (made again when a plugin is registered)."""
    return _derived()[0]


def kind_to_plural() -> dict[str, str]:
    return _derived()[1]


def _derived() -> tuple[dict[str, Resource], dict[str, str]]:
    global _served
    records, found, plurals = _served
    if records is not registry.RECORDS:
        found = {r.plural: r for r in map(_resource, informer.specs().values())}
        plurals = {r.kind: r.plural for r in found.values()}
        _served = (registry.RECORDS, found, plurals)
    return found, plurals


class SyncError(RuntimeError):
    """An extender that never observed the simulated cluster's current version."""


def versioned(obj: Mapping[str, Any], rv: int) -> dict[str, Any]:
    out = dict(obj)
    out["metadata"] = {**obj.get("metadata", {}), "resourceVersion": str(rv)}
    return out


def unversioned(obj: Mapping[str, Any]) -> dict[str, Any]:
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
        self.objects: dict[str, dict[Key, dict[str, Any]]] = {p: {} for p in resources()}
        #: The object `sync_collection` stored last per key (dropped when anything else
        #: writes there: a Binding).
        self._origins: dict[str, dict[Key, dict[str, Any]]] = {p: {} for p in resources()}
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
        with replacing(path) as tmp:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as out:
                out.write(yaml.safe_dump(self.kubeconfig(), sort_keys=False))
        return path

    # ---- the store (thread-safe) ---------------------------------------------------------
    def _put(self, plural: str, key: Key, obj: dict[str, Any]) -> None:
        """Store `obj` (unversioned) as the next version; caller holds the lock."""
        old = self.objects[plural].get(key)
        self.rv += 1
        stored = versioned(obj, self.rv)
        self.objects[plural][key] = stored
        self._record(plural, "MODIFIED" if old is not None else "ADDED", old, stored)

    def _delete(self, plural: str, key: Key) -> None:
        self._origins[plural].pop(key, None)
        old = self.objects[plural].pop(key, None)
        if old is None:
            return
        self.rv += 1
        self._record(plural, "DELETED", old, versioned(old, self.rv))

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
                if current is None or unversioned(current) != obj:
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
                what, res, ns, _name = route(req.path, resources().values())
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
        what, res, ns, name = route(path, resources().values())
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
        for res in resources().values():
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
            listed: list[dict[str, Any]] = []
            for res in groups[gv]:
                entry: dict[str, Any] = {
                    "name": res.plural, "singularName": res.kind.lower(),
                    "namespaced": res.namespaced, "kind": res.kind,
                    "verbs": ["get", "list", "watch"]}
                if res.plural in _SHORT_NAMES:
                    entry["shortNames"] = _SHORT_NAMES[res.plural]
                listed.append(entry)
                if res.plural == "pods":
                    listed.append({"name": "pods/binding", "singularName": "",
                                   "namespaced": True, "kind": "Binding", "verbs": ["create"]})
            return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
                    "resources": listed}
        return None

    # ---- list ----------------------------------------------------------------------------
    def _list(self, res: Resource, ns: str, query: Mapping[str, str]) -> dict[str, Any]:
        terms = parse_selector(query.get("fieldSelector", ""), selectable(res))
        labels = parse_labels(query.get("labelSelector", ""))
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
                                if matches(o, terms, ns) and labels_match(o, labels)),
                               key=key_of)
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
            bound = unversioned(pod)
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
