"""A loopback fake Kubernetes API server, held to the real API's documented behaviour.

What it honours (and the tests of this module check):

- `list` of nodes, pods, poddisruptionbudgets, priorityclasses (all namespaces or one), with
  `limit`/`continue` pagination over a consistent snapshot; the list's `metadata.resourceVersion`
  is the collection's version; a continue token older than the compaction point answers
  HTTP 410 `Expired`, as etcd compaction makes the real server do.
- `watch=1` from a resourceVersion X: every event with rv > X for that resource, in order;
  X older than the retained history → an `ERROR` event with a 410 `Expired` Status, then the
  stream ends; `allowWatchBookmarks=true` → periodic `BOOKMARK` events; `timeoutSeconds` ends
  the stream cleanly. `fieldSelector` on pods (e.g. `status.phase!=Succeeded`) including the
  ADDED/DELETED translation when an object starts or stops matching.
- `GET` of one object; `POST …/pods/{name}/binding` with BindingREST's rules: 201 + Status
  Success; 404 for a missing pod; 409 for a UID (or resourceVersion) precondition mismatch,
  for a pod already assigned to a node, for a terminating pod; 400 for a name mismatch.
- Bearer-token auth (401 otherwise); optional TLS (trustme) with optional client certificates.
- `events.k8s.io/v1` Events: POST (the API's required fields; 409 for a name taken) and a
  merge-patch PATCH; kept in `events`, patches in `event_patches`.
- `metrics.k8s.io/v1beta1` NodeMetrics (what metrics-server serves): `GET …/nodes` (all of
  them, as metrics-server lists: no pagination) and `GET …/nodes/{name}` (404 if none), from
  `set_node_metrics()`; `without=("nodemetrics",)` answers 404 as an API server without
  metrics-server does.

Fault injection (`inject(Fault(...))`, `drop_watches()`, `compact()`): answer a status
(500, 429, 410 …) n times, hang, drop the connection without an answer, or perform the
request and then drop the connection (a lost response).

The server runs its own event loop in a daemon thread, so sync tests, async tests and
subprocesses can all talk to it. Store methods are thread-safe. The wire-level pieces (Status
bodies, field selectors, watch-event translation, bookmarks, continue tokens, Binding checks,
the thread's start/stop) are `extender.simulator.apiwire`'s, shared with the simulator's
`--serve-api` server; the resource table below stays written out here, as the oracle.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import http
import itertools
import json
import ssl
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from extender.simulator.apiwire import (
    CONTINUE_EXPIRED,
    REASONS,
    HttpError,
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

RESOURCES = {
    r.plural: r
    for r in (
        Resource("nodes", "Node", "v1", "/api/v1", False),
        Resource("pods", "Pod", "v1", "/api/v1", True),
        Resource("poddisruptionbudgets", "PodDisruptionBudget", "policy/v1", "/apis/policy/v1", True),
        Resource("priorityclasses", "PriorityClass", "scheduling.k8s.io/v1", "/apis/scheduling.k8s.io/v1", False),
        Resource("namespaces", "Namespace", "v1", "/api/v1", False),
        Resource("services", "Service", "v1", "/api/v1", True),
        Resource("replicationcontrollers", "ReplicationController", "v1", "/api/v1", True),
        Resource("replicasets", "ReplicaSet", "apps/v1", "/apis/apps/v1", True),
        Resource("statefulsets", "StatefulSet", "apps/v1", "/apis/apps/v1", True),
        # scheduler-plugins' CRDs (served unless the server is made `without` them)
        Resource("podgroups", "PodGroup", "scheduling.x-k8s.io/v1alpha1",
                 "/apis/scheduling.x-k8s.io/v1alpha1", True),
        Resource("elasticquotas", "ElasticQuota", "scheduling.x-k8s.io/v1alpha1",
                 "/apis/scheduling.x-k8s.io/v1alpha1", True),
        # diktyo-io's CRDs (NetworkOverhead)
        Resource("appgroups", "AppGroup", "appgroup.diktyo.x-k8s.io/v1alpha1",
                 "/apis/appgroup.diktyo.x-k8s.io/v1alpha1", True),
        Resource("networktopologies", "NetworkTopology", "networktopology.diktyo.x-k8s.io/v1alpha1",
                 "/apis/networktopology.diktyo.x-k8s.io/v1alpha1", True),
        # kubernetes-sigs' NodeResourceTopology CRD (NodeResourceTopologyMatch), cluster-scoped
        Resource("noderesourcetopologies", "NodeResourceTopology", "topology.node.k8s.io/v1alpha2",
                 "/apis/topology.node.k8s.io/v1alpha2", False),
    )
}
KIND_TO_PLURAL = {r.kind: r.plural for r in RESOURCES.values()}
EVENTS_PREFIX = "/apis/events.k8s.io/v1/"
METRICS_PREFIX = "/apis/metrics.k8s.io/v1beta1/"

@dataclass
class Fault:
    """One injected misbehaviour, applied to the next `times` matching requests.

    action: "status" (answer `status` with a Status body), "hang" (never answer; the
    connection is closed after `hang_seconds`), "drop" (close the connection without an
    answer), "lose_response" (perform the request, then close without an answer),
    "gone" (410: HTTP for a list, an ERROR event for a watch); and what a server does that
    applied a request whose answer went wrong: "apply_then_hang" (perform it, then never
    answer), "apply_then_status" (perform it, then answer `status`), "late_apply" (answer
    `status` at once and perform the request `delay` seconds later, as an etcd write that
    lands after the API server gave up waiting for it).
    """

    action: str
    method: str | None = None
    path: str | None = None  # substring of the path
    query: str | None = None  # substring of the raw query string, e.g. "continue="
    watch: bool | None = None  # True: only watch requests; False: only non-watch
    status: int = 500
    times: int = 1
    hang_seconds: float = 60.0
    delay: float = 0.5
    hits: int = 0

    def matches(self, method: str, path: str, query: str, is_watch: bool) -> bool:
        return (
            (self.method is None or self.method == method)
            and (self.path is None or self.path in path)
            and (self.query is None or self.query in query)
            and (self.watch is None or self.watch == is_watch)
        )


@dataclass
class RequestLog:
    method: str
    path: str
    query: dict[str, str]
    status: int = 0


class FakeApiServer(LoopbackServer):
    """The fake server. Use as a context manager, or `start()` / `stop()`."""

    def __init__(
        self,
        *,
        token: str | None = "test-token",
        tls: bool = False,
        client_certs: bool = False,
        history: int = 10_000,
        bookmark_interval: float = 0.5,
        initial_rv: int = 1000,
        without: tuple[str, ...] = (),
    ) -> None:
        #: Resources (plurals) this server does not serve: a CRD that is not installed.
        self.without = set(without)
        self.tokens: set[str] = {token} if token else set()
        self.tls = tls
        self.client_certs = client_certs
        self.history_size = history
        self.bookmark_interval = bookmark_interval
        self.objects: dict[str, dict[tuple[str, str], dict[str, Any]]] = {p: {} for p in RESOURCES}
        self.rv = initial_rv
        self.compacted_rv = initial_rv
        self.history: deque[WatchEvent] = deque()
        self.faults: list[Fault] = []
        self.bindings: list[tuple[str, str, str, str]] = []  # (namespace, name, uid, node) performed
        self.late_pending = 0  # `late_apply` requests answered but not yet performed
        self.requests: list[RequestLog] = []
        #: events.k8s.io/v1 Events created, by (namespace, name), as stored (patches applied).
        self.events: dict[tuple[str, str], dict[str, Any]] = {}
        #: (namespace, name, patch) of every PATCH of an Event, in order.
        self.event_patches: list[tuple[str, str, dict[str, Any]]] = []
        #: metrics.k8s.io NodeMetrics by node name (`set_node_metrics`).
        self.node_metrics: dict[str, dict[str, Any]] = {}
        self._snapshots: dict[int, tuple[int, list[dict[str, Any]]]] = {}
        self._snapshot_ids = itertools.count(1)
        self._lock = threading.RLock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._changed: asyncio.Event | None = None
        self._watches: set[asyncio.StreamWriter] = set()
        self._watch_resources: dict[asyncio.StreamWriter, str] = {}
        #: plural -> the newest resourceVersion its watches deliver (`hold_watches`).
        self._watch_limits: dict[str, int] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self.port = 0
        self.ca: Any = None
        self._client_cert: Any = None

    # ---- lifecycle -----------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    _thread_name = "fake-apiserver"
    _server_name = "fake API server"

    def _server_ssl(self) -> ssl.SSLContext | None:
        if not self.tls:
            return None
        import trustme

        self.ca = trustme.CA()
        cert = self.ca.issue_cert("127.0.0.1", "localhost")
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        cert.configure_cert(ctx)
        if self.client_certs:
            self.ca.configure_trust(ctx)
            ctx.verify_mode = ssl.CERT_OPTIONAL  # a token is still accepted without a cert
            self._client_cert = self.ca.issue_cert("extender@example.test")
        return ctx

    async def _listen(self) -> asyncio.Server:
        return await asyncio.start_server(self._connection, "127.0.0.1", 0, ssl=self._server_ssl())

    # ---- kubeconfig ----------------------------------------------------------------------
    def kubeconfig(self, *, token: str | None = None, token_file: str | None = None,
                   client_cert: bool = False) -> dict[str, Any]:
        """A kubeconfig document for this server (bearer token by default)."""
        cluster: dict[str, Any] = {"server": self.url}
        if self.tls:
            cluster["certificate-authority-data"] = base64.b64encode(self.ca.cert_pem.bytes()).decode()
        user: dict[str, Any] = {}
        if token_file:
            user["tokenFile"] = token_file
        elif client_cert:
            user["client-certificate-data"] = base64.b64encode(
                b"".join(b.bytes() for b in self._client_cert.cert_chain_pems)).decode()
            user["client-key-data"] = base64.b64encode(self._client_cert.private_key_pem.bytes()).decode()
        else:
            user["token"] = token or next(iter(self.tokens), "")
        return kubeconfig_doc("fake", "fake-cluster", cluster, "fake-user", user)

    def write_kubeconfig(self, path: str | Path, **kwargs: Any) -> Path:
        path = Path(path)
        path.write_text(yaml.safe_dump(self.kubeconfig(**kwargs)))
        return path

    # ---- store (thread-safe) ------------------------------------------------------------
    def _record(self, plural: str, type_: str, old: dict[str, Any] | None, new: dict[str, Any]) -> None:
        super()._record(plural, type_, old, new)
        self._wake()

    def _next_rv(self) -> str:
        self.rv += 1
        return str(self.rv)

    def put(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Create or replace an object (kind from `obj["kind"]`); returns the stored copy."""
        plural = KIND_TO_PLURAL[obj["kind"]]
        res = RESOURCES[plural]
        obj = copy.deepcopy(obj)
        obj["apiVersion"] = res.group_version
        meta = obj.setdefault("metadata", {})
        if res.namespaced:
            meta.setdefault("namespace", "default")
        else:
            meta.pop("namespace", None)
        with self._lock:
            key = key_of(obj)
            old = self.objects[plural].get(key)
            if old is not None and meta.get("uid") not in (None, old["metadata"]["uid"]):
                raise ValueError(f"{key} exists with another uid; delete it first")
            meta.setdefault("uid", old["metadata"]["uid"] if old else str(uuid.uuid4()))
            meta.setdefault("creationTimestamp",
                            old["metadata"]["creationTimestamp"] if old else
                            time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
            meta["resourceVersion"] = self._next_rv()
            self.objects[plural][key] = obj
            self._record(plural, "MODIFIED" if old else "ADDED", old, obj)
            return copy.deepcopy(obj)

    def update(self, kind: str, namespace: str, name: str, mutate: Any) -> dict[str, Any]:
        """Apply `mutate(obj)` to a stored object (a MODIFIED event)."""
        plural = KIND_TO_PLURAL[kind]
        with self._lock:
            current = self.objects[plural][(namespace, name)]
            obj = copy.deepcopy(current)
            mutate(obj)
            obj["metadata"]["resourceVersion"] = self._next_rv()
            self.objects[plural][(namespace, name)] = obj
            self._record(plural, "MODIFIED", current, obj)
            return copy.deepcopy(obj)

    def delete(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        """Delete an object; the DELETED event carries its final state with a new rv."""
        plural = KIND_TO_PLURAL[kind]
        with self._lock:
            old = self.objects[plural].pop((namespace, name), None)
            if old is None:
                return None
            final = copy.deepcopy(old)
            final["metadata"]["resourceVersion"] = self._next_rv()
            self._record(plural, "DELETED", old, final)
            return final

    def get(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        with self._lock:
            obj = self.objects[KIND_TO_PLURAL[kind]].get((namespace, name))
            return copy.deepcopy(obj) if obj else None

    def items(self, kind: str) -> list[dict[str, Any]]:
        with self._lock:
            return [copy.deepcopy(o) for o in self.objects[KIND_TO_PLURAL[kind]].values()]

    def load(self, objects: list[dict[str, Any]]) -> None:
        """`put` every supported object of a list (e.g. a `kubectl get -o json` List's items)."""
        for obj in objects:
            if obj.get("kind") in KIND_TO_PLURAL:
                self.put(obj)

    def compact(self) -> int:
        """Forget all history (etcd compaction): older versions and continue tokens → 410."""
        with self._lock:
            self.history.clear()
            self.compacted_rv = self.rv
            return self.rv

    def deliver_stale(self, obj: dict[str, Any], type_: str = "MODIFIED") -> None:
        """Send watchers `obj` as it is, older resourceVersion included, after newer events,
        as a misbehaving proxy or a lagging cache would; the store keeps what it has. (A real
        API server never does this; the watch-order fault the extender must survive.)"""
        plural = KIND_TO_PLURAL[obj["kind"]]
        with self._lock:
            current = self.objects[plural].get(key_of(obj))
            self.rv += 1
            self._record(plural, type_, current, copy.deepcopy(obj))

    def hold_watches(self, plural: str, through: int | None = None) -> None:
        """Deliver `plural`'s watch events only up to resourceVersion `through` (default: the
        current one) until `release_watches`: a watcher that has fallen behind, in order, as
        one starved of CPU while another client (kube-scheduler) is already ahead."""
        with self._lock:
            self._watch_limits[plural] = self.rv if through is None else through
        self._wake()

    def release_watches(self, plural: str) -> None:
        with self._lock:
            self._watch_limits.pop(plural, None)
        self._wake()

    # ---- metrics.k8s.io ------------------------------------------------------------------
    def set_node_metrics(self, name: str, cpu: str, memory: str, *, window: str = "10.062s",
                         timestamp: str | None = None) -> None:
        """What metrics-server reports for node `name`: usage as quantities ("250m", "1Gi")."""
        with self._lock:
            self.node_metrics[name] = {
                "metadata": {"name": name, "creationTimestamp": None},
                "timestamp": timestamp or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "window": window, "usage": {"cpu": cpu, "memory": memory}}

    def remove_node_metrics(self, name: str | None = None) -> None:
        """metrics-server stops reporting `name` (every node when None)."""
        with self._lock:
            if name is None:
                self.node_metrics.clear()
            else:
                self.node_metrics.pop(name, None)

    def _metrics_request(self, req: Request) -> tuple[int, dict[str, Any]]:
        rest = req.path[len(METRICS_PREFIX):].strip("/").split("/")
        if "nodemetrics" in self.without or rest[0] != "nodes" or len(rest) > 2:
            raise HttpError(404, "the server could not find the requested resource")
        if req.method != "GET":
            raise HttpError(405, f"{req.method} is not supported here")
        with self._lock:
            if len(rest) == 2:
                found = self.node_metrics.get(rest[1])
                if found is None:
                    raise HttpError(404, f'nodemetrics.metrics.k8s.io "{rest[1]}" not found',
                                    details={"name": rest[1], "group": "metrics.k8s.io", "kind": "nodes"})
                return 200, {"kind": "NodeMetrics", "apiVersion": "metrics.k8s.io/v1beta1",
                             **copy.deepcopy(found)}
            items = [copy.deepcopy(self.node_metrics[n]) for n in sorted(self.node_metrics)]
        return 200, {"kind": "NodeMetricsList", "apiVersion": "metrics.k8s.io/v1beta1",
                     "metadata": {}, "items": items}

    # ---- faults --------------------------------------------------------------------------
    def inject(self, fault: Fault) -> Fault:
        with self._lock:
            self.faults.append(fault)
        return fault

    def clear_faults(self) -> None:
        with self._lock:
            self.faults.clear()

    def _take_fault(self, req: Request, is_watch: bool) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.matches(req.method, req.path, req.raw_query, is_watch):
                    fault.hits += 1
                    if fault.hits >= fault.times:
                        self.faults.remove(fault)
                    return fault
        return None

    def drop_watches(self, resource: str | None = None) -> int:
        """Cut open watch connections (all, or one resource's) without a clean end."""
        assert self._loop is not None
        done = threading.Event()
        count = [0]

        def cut() -> None:
            for writer in list(self._watches):
                if resource is None or self._watch_resources.get(writer) == resource:
                    writer.transport.abort()
                    count[0] += 1
            done.set()

        self._loop.call_soon_threadsafe(cut)
        done.wait(5)
        return count[0]

    def active_watches(self, resource: str | None = None) -> int:
        return sum(1 for w in list(self._watches)
                   if resource is None or self._watch_resources.get(w) == resource)

    # ---- HTTP ----------------------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            while True:
                req = await read_request(reader, writer)
                if req is None or not await self._handle(req, reader, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ssl.SSLError):
            pass
        except asyncio.CancelledError:
            pass
        finally:
            self._tasks.discard(task)
            self._watches.discard(writer)
            self._watch_resources.pop(writer, None)
            writer.transport.abort()

    @staticmethod
    async def _respond(writer: asyncio.StreamWriter, code: int, body: dict[str, Any] | bytes,
                       headers: dict[str, str] | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        phrase = http.HTTPStatus(code).phrase
        head = [f"HTTP/1.1 {code} {phrase}", "Content-Type: application/json",
                f"Content-Length: {len(data)}"]
        head += [f"{k}: {v}" for k, v in (headers or {}).items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + data)
        await writer.drain()

    def _authorized(self, req: Request) -> bool:
        if not self.tokens and not self.client_certs:
            return True
        if req.peercert:
            return True
        auth = req.headers.get("authorization", "")
        return auth.startswith("Bearer ") and auth[7:] in self.tokens

    async def _handle(self, req: Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Serve one request; False to close the connection."""
        is_watch = req.query.get("watch") in ("1", "true")
        entry = RequestLog(req.method, req.path, req.query)
        with self._lock:
            self.requests.append(entry)
        if not self._authorized(req):
            entry.status = 401
            await self._respond(writer, 401, status_body(401, "Unauthorized"))
            return True
        fault = self._take_fault(req, is_watch)
        if fault is not None:
            if fault.action == "drop":
                return False
            if fault.action == "hang":
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(reader.read(1), fault.hang_seconds)
                return False
            if fault.action == "late_apply":
                self.late_pending += 1
                asyncio.get_running_loop().call_later(fault.delay, self._perform_late, req)
            if fault.action in ("status", "late_apply") or (fault.action == "gone"
                                                           and not is_watch):
                code = 410 if fault.action == "gone" else fault.status
                reason = REASONS.get(code, "InternalError")
                entry.status = code
                extra = {"Retry-After": "0"} if code == 429 else None
                await self._respond(writer, code, status_body(code, f"injected {code}", reason), extra)
                return True
        try:
            if req.path.startswith(EVENTS_PREFIX):
                code, body = self._event_request(req)
                entry.status = code
                await self._respond(writer, code, body)
                return True
            if req.path.startswith(METRICS_PREFIX):
                code, body = self._metrics_request(req)
                entry.status = code
                await self._respond(writer, code, body)
                return True
            where = route(req.path, RESOURCES.values())
            if where[1].plural in self.without:
                raise HttpError(404, "the server could not find the requested resource")
            if is_watch and req.method == "GET" and where[0] == "collection":
                entry.status = 200
                gone = fault is not None and fault.action == "gone"
                return await self._watch(where[1], where[2], req, reader, writer, force_gone=gone)
            code, body = self._dispatch(where, req)
        except HttpError as exc:
            code, body = exc.code, exc.body
        entry.status = code
        if fault is not None and fault.action == "lose_response":
            return False  # performed, but the answer never leaves
        if fault is not None and fault.action == "apply_then_hang":
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(reader.read(1), fault.hang_seconds)
            return False
        if fault is not None and fault.action == "apply_then_status":
            code = fault.status
            entry.status = code
            await self._respond(writer, code, status_body(code, f"injected {code}",
                                                          REASONS.get(code, "InternalError")))
            return True
        await self._respond(writer, code, body)
        return True

    def _perform_late(self, req: Request) -> None:
        """A request answered with an error, performed now all the same (`late_apply`)."""
        try:
            with contextlib.suppress(HttpError):
                self._dispatch(route(req.path, RESOURCES.values()), req)
        finally:
            self.late_pending -= 1

    def _dispatch(self, where: tuple[str, Resource, str, str], req: Request) -> tuple[int, dict[str, Any]]:
        what, res, ns, name = where
        if what == "collection" and req.method == "GET":
            return 200, self._list(res, ns, req.query)
        if what == "object" and req.method == "GET":
            with self._lock:
                obj = self.objects[res.plural].get((ns, name))
            if obj is None:
                raise HttpError(404, f'{res.plural} "{name}" not found',
                                details={"name": name, "kind": res.plural})
            return 200, obj
        if what == "binding" and req.method == "POST":
            return 201, self._bind(ns, name, req.body)
        raise HttpError(405, f"{req.method} is not supported here")

    # ---- list ----------------------------------------------------------------------------
    def _list(self, res: Resource, ns: str, query: dict[str, str]) -> dict[str, Any]:
        terms = parse_selector(query.get("fieldSelector", ""), selectable(res))
        labels = parse_labels(query.get("labelSelector", ""))
        limit = int(query.get("limit", "0") or 0)
        token = query.get("continue", "")
        with self._lock:
            if token:
                list_rv, snap_id, offset = decode_continue(token)
                snap = self._snapshots.get(snap_id)
                if list_rv < self.compacted_rv or snap is None:
                    raise HttpError(410, CONTINUE_EXPIRED)
                items = snap[1]
            else:
                rv_param = query.get("resourceVersion", "")
                if rv_param not in ("", "0") and int(rv_param) > self.rv:
                    raise HttpError(504, f"Too large resource version: {rv_param}, current: {self.rv}")
                list_rv, offset = self.rv, 0
                items = sorted(
                    (copy.deepcopy(o) for o in self.objects[res.plural].values()
                     if matches(o, terms, ns) and labels_match(o, labels)),
                    key=key_of,
                )
            page = items[offset: offset + limit] if limit > 0 else items[offset:]
            meta: dict[str, Any] = {"resourceVersion": str(list_rv)}
            rest = len(items) - offset - len(page)
            if rest > 0:
                snap_id = snap_id if token else next(self._snapshot_ids)
                self._snapshots[snap_id] = (list_rv, items)
                meta["continue"] = encode_continue(list_rv, snap_id, offset + len(page))
                meta["remainingItemCount"] = rest
            elif token:
                self._snapshots.pop(snap_id, None)
        return {"kind": res.kind + "List", "apiVersion": res.group_version, "metadata": meta, "items": page}

    # ---- watch ---------------------------------------------------------------------------
    async def _watch(self, res: Resource, ns: str, req: Request, reader: asyncio.StreamReader,
                     writer: asyncio.StreamWriter, *, force_gone: bool = False) -> bool:
        terms = parse_selector(req.query.get("fieldSelector", ""), selectable(res))
        bookmarks = req.query.get("allowWatchBookmarks") == "true"
        timeout = float(req.query.get("timeoutSeconds", "1800") or 1800)
        rv_param = req.query.get("resourceVersion", "")
        # One watch per connection: a reader task watches for the client hanging up, so the
        # connection cannot go back to serving requests afterwards.
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")

        async def send(event: dict[str, Any]) -> None:
            data = json.dumps(event).encode() + b"\n"
            writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            await writer.drain()

        async def gone(last: int) -> bool:
            await send(too_old(last, self.compacted_rv))
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return False

        with self._lock:
            if rv_param in ("", "0"):
                # "Start at most recent" / "any": synthetic ADDED for what exists, then changes.
                initial = [o for o in self.objects[res.plural].values() if matches(o, terms, ns)]
                last = self.rv
            else:
                initial, last = [], int(rv_param)
        if force_gone or last < self.compacted_rv:
            return await gone(last)
        self._watches.add(writer)
        self._watch_resources[writer] = res.plural
        eof = asyncio.ensure_future(reader.read(1))  # the client closing the stream
        try:
            for obj in initial:
                await send({"type": "ADDED", "object": obj})
            deadline = time.monotonic() + timeout
            next_bookmark = time.monotonic() + self.bookmark_interval
            while True:
                assert self._changed is not None
                changed = self._changed
                with self._lock:
                    if last < self.compacted_rv:
                        return await gone(last)
                    pending = events_since(self.history, last, res.plural)
                    limit = self._watch_limits.get(res.plural)
                    if limit is None:
                        last = self.rv
                    else:  # held: up to the limit, and the rest when released
                        pending = [ev for ev in pending if ev.rv <= limit]
                        last = max(last, min(limit, self.rv))
                for ev in pending:
                    out = translate(ev, terms, ns)
                    if out is not None:
                        await send(out)
                now = time.monotonic()
                if now >= deadline:
                    if bookmarks:
                        await send(bookmark(res, last))
                    writer.write(b"0\r\n\r\n")
                    await writer.drain()
                    return False
                if bookmarks and now >= next_bookmark:
                    await send(bookmark(res, last))
                    next_bookmark = now + self.bookmark_interval
                wait_until = min(deadline, next_bookmark) if bookmarks else deadline
                waiter = asyncio.ensure_future(changed.wait())
                done, _ = await asyncio.wait({waiter, eof}, timeout=max(0.0, wait_until - now),
                                             return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                if eof in done:
                    return False
        finally:
            eof.cancel()
            with contextlib.suppress(BaseException):
                await eof
            self._watches.discard(writer)
            self._watch_resources.pop(writer, None)

    # ---- binding -------------------------------------------------------------------------
    def _bind(self, ns: str, name: str, raw: bytes) -> dict[str, Any]:
        """BindingREST.Create: validate, check preconditions, set spec.nodeName."""
        meta, node = parse_binding(ns, name, raw)
        with self._lock:
            pod = self.objects["pods"].get((ns, name))
            if pod is None:
                raise HttpError(404, f'pods "{name}" not found', details={"name": name, "kind": "pods"})
            pmeta = pod["metadata"]
            # Storage preconditions are checked before the update function runs.
            if meta.get("uid") and meta["uid"] != pmeta["uid"]:
                raise HttpError(409, (
                    f'Operation cannot be fulfilled on pods "{name}": Precondition failed: '
                    f'UID in precondition: {meta["uid"]}, UID in object meta: {pmeta["uid"]}'),
                    details={"name": name, "kind": "pods"})
            if meta.get("resourceVersion") and meta["resourceVersion"] != pmeta["resourceVersion"]:
                raise HttpError(409, (
                    f'Operation cannot be fulfilled on pods "{name}": Precondition failed: '
                    f'ResourceVersion in precondition: {meta["resourceVersion"]}, '
                    f'ResourceVersion in object meta: {pmeta["resourceVersion"]}'),
                    details={"name": name, "kind": "pods"})
            conflict = None
            if pmeta.get("deletionTimestamp"):
                conflict = f"pod {name} is being deleted, cannot be assigned to a host"
            elif pod.get("spec", {}).get("nodeName"):
                conflict = f'pod {name} is already assigned to node "{pod["spec"]["nodeName"]}"'
            elif pod.get("spec", {}).get("schedulingGates"):
                conflict = f"pod {name} has non-empty .spec.schedulingGates"
            if conflict:
                raise HttpError(409, f'Operation cannot be fulfilled on pods/binding "{name}": {conflict}',
                                details={"name": name, "kind": "pods/binding"})

            def assign(obj: dict[str, Any]) -> None:
                obj.setdefault("spec", {})["nodeName"] = node
                conds = obj.setdefault("status", {}).setdefault("conditions", [])
                conds[:] = [c for c in conds if c.get("type") != "PodScheduled"]
                conds.append({"type": "PodScheduled", "status": "True",
                              "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})

            self.update("Pod", ns, name, assign)
            self.bindings.append((ns, name, pmeta["uid"], node))
        return status_body(201, "")


    # ---- events.k8s.io/v1 ----------------------------------------------------------------
    def _event_request(self, req: Request) -> tuple[int, dict[str, Any]]:
        """POST …/namespaces/{ns}/events (create, with the API's required fields) and PATCH
        …/events/{name} (a JSON merge patch, e.g. `series`); 404 for a missing Event."""
        rest = req.path[len(EVENTS_PREFIX):].split("/")
        if len(rest) < 3 or rest[0] != "namespaces" or rest[2] != "events" or len(rest) > 4:
            raise HttpError(404, "the server could not find the requested resource")
        ns = rest[1]
        try:
            doc = json.loads(req.body or b"null")
        except ValueError:
            raise HttpError(400, "invalid JSON body") from None
        if len(rest) == 3 and req.method == "POST":
            meta = (doc or {}).get("metadata") or {}
            name = meta.get("name", "")
            missing = [f for f in ("eventTime", "reportingController", "reportingInstance",
                                   "action", "reason", "regarding") if not (doc or {}).get(f)]
            if not name or missing:
                raise HttpError(422, f"Event is invalid: required: {missing or ['name']}")
            if meta.get("namespace", ns) != ns or doc["regarding"].get("namespace", ns) != ns:
                raise HttpError(422, "Event is invalid: namespace mismatch")
            if len(doc.get("note", "").encode()) > 1024:
                raise HttpError(422, "Event is invalid: note: must have at most 1024 bytes")
            with self._lock:
                if (ns, name) in self.events:
                    raise HttpError(409, f'events.events.k8s.io "{name}" already exists', "AlreadyExists")
                doc.setdefault("metadata", {})["namespace"] = ns
                self.events[(ns, name)] = doc
            return 201, doc
        if len(rest) == 4 and req.method == "PATCH":
            name = rest[3]
            with self._lock:
                current = self.events.get((ns, name))
                if current is None:
                    raise HttpError(404, f'events.events.k8s.io "{name}" not found')
                self.event_patches.append((ns, name, doc))
                for key, value in (doc or {}).items():
                    current[key] = value
                return 200, copy.deepcopy(current)
        raise HttpError(405, f"{req.method} is not supported here")

