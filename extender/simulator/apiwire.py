"""The wire-level pieces shared by the loopback Kubernetes API servers.

Two servers speak the Kubernetes API on loopback: the simulator's `--serve-api`
(`extender.simulator.apiserver.ApiServer`) and the tests' live-state fake
(`tests/kube/fake_apiserver.py`, with fault injection). What the API itself defines is
written here once and imported by both: `Status` bodies and their reasons, field selectors
(which fields each resource accepts, parsing, matching), watch events (a filtered watcher's
ADDED/MODIFIED/DELETED translation, `BOOKMARK`s), the description of a served resource and
routing a path to it, reading a request, a Binding's checks, `continue` tokens, the kubeconfig document, and the plumbing of an
asyncio server run in a daemon thread (`LoopbackServer`). The servers themselves (their
stores, lists, watches, bindings, faults) stay in their own modules.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import threading
from collections import deque
from collections.abc import Collection, Iterable, Mapping, Reversible
from dataclasses import dataclass
from typing import Any, Self
from urllib.parse import parse_qsl, unquote, urlsplit

#: metav1.StatusReason of each status code the servers answer (`AlreadyExists` for a 409
#: and the like are passed explicitly).
REASONS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
           405: "MethodNotAllowed", 409: "Conflict", 410: "Expired", 422: "Invalid",
           429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable",
           504: "Timeout"}


def status_body(code: int, message: str, reason: str = "",
                details: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A `metav1.Status`: `reason` defaults to the code's (`REASONS`), and is sent for
    failures only."""
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {},
                            "status": "Success" if code < 400 else "Failure", "code": code}
    if message:
        body["message"] = message
    reason = reason or REASONS.get(code, "")
    if reason and code >= 400:
        body["reason"] = reason
    if details:
        body["details"] = dict(details)
    return body


class HttpError(Exception):
    """An answer with a failure `Status` body (raised inside a request's handling)."""

    def __init__(self, code: int, message: str, reason: str = "",
                 details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.body = status_body(code, message, reason, details)


# ---- requests ----------------------------------------------------------------------------

@dataclass
class Request:
    method: str
    path: str  # unquoted
    query: dict[str, str]
    headers: dict[str, str]  # names lowercase
    body: bytes
    raw_query: str = ""
    peercert: Any = None  # the client's certificate (TLS with client certificates)


async def read_request(reader: asyncio.StreamReader,
                       writer: asyncio.StreamWriter | None = None) -> Request | None:
    """The next HTTP/1.1 request of a connection (a `Content-Length` or chunked body); None
    when the client closed it between requests."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, target, _version = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = bytearray()
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            chunk = await reader.readexactly(size + 2)
            if size == 0:
                break
            body += chunk[:-2]
        data = bytes(body)
    else:
        data = await reader.readexactly(int(headers.get("content-length", "0") or 0))
    parts = urlsplit(target)
    peercert = writer.get_extra_info("peercert") if writer is not None else None
    return Request(method, unquote(parts.path), dict(parse_qsl(parts.query)), headers, data,
                   parts.query, peercert)


# ---- resources ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Resource:
    """A served collection."""

    plural: str
    kind: str
    group_version: str  # "v1", "apps/v1": the objects' apiVersion
    prefix: str  # "/api/v1", "/apis/apps/v1"
    namespaced: bool


Key = tuple[str, str]  # (namespace or "", name)


def key_of(obj: Mapping[str, Any]) -> Key:
    meta = obj["metadata"]
    return meta.get("namespace", ""), meta["name"]


def route(path: str, resources: Iterable[Resource]) -> tuple[str, Resource, str, str]:
    """(collection|object|binding, resource, namespace, name) of a resource path; 404 when
    it names none of `resources`."""
    for res in resources:
        if not path.startswith(res.prefix + "/"):
            continue
        rest = path[len(res.prefix) + 1:].split("/")
        ns = ""
        if rest[0] == "namespaces" and len(rest) >= 3 and res.namespaced:
            ns, rest = rest[1], rest[2:]
        if not rest or rest[0] != res.plural:
            continue
        if len(rest) == 1:
            return "collection", res, ns, ""
        if len(rest) == 2 and (ns or not res.namespaced):
            return "object", res, ns, rest[1]
        if len(rest) == 3 and rest[2] == "binding" and res.plural == "pods" and ns:
            return "binding", res, ns, rest[1]
    raise HttpError(404, "the server could not find the requested resource")


def parse_binding(ns: str, name: str, raw: bytes) -> tuple[dict[str, Any], str]:
    """(metadata, node) of a `POST …/pods/{name}/binding` body, after BindingREST's
    validation (400 for a body or a name/namespace that does not fit, 422 without a node)."""
    try:
        binding = json.loads(raw)
    except ValueError:
        raise HttpError(400, "invalid Binding body") from None
    if not isinstance(binding, dict):
        raise HttpError(400, "invalid Binding body")
    meta = binding.get("metadata") or {}
    target = binding.get("target") or {}
    if meta.get("name") != name:
        raise HttpError(400, "name in URL does not match name in Binding object")
    if meta.get("namespace", ns) != ns:
        raise HttpError(400, "the namespace of the provided object does not match the "
                             "namespace sent on the request")
    if not target.get("name"):
        raise HttpError(422, f'Binding.core "{name}" is invalid: target.name: Required value')
    if target.get("kind", "Node") not in ("", "Node"):
        raise HttpError(422, f'Binding.core "{name}" is invalid: target.kind: Not supported')
    return meta, target["name"]


# ---- field selectors ---------------------------------------------------------------------

#: Fields a selector may name beyond `metadata.name` (and `metadata.namespace` on a
#: namespaced resource): the subset of the real server's field label conversions served.
SELECTABLE = {"pods": {"spec.nodeName", "spec.schedulerName", "status.phase"},
              "nodes": {"spec.unschedulable"}}

Selector = list[tuple[str, bool, str]]  # (field, negated, value)


def selectable(res: Resource) -> set[str]:
    base = {"metadata.name", "metadata.namespace"} if res.namespaced else {"metadata.name"}
    return base | SELECTABLE.get(res.plural, set())


def parse_selector(text: str, allowed: Collection[str]) -> Selector:
    """A `fieldSelector` (`a=b`, `a==b`, `a!=b`, comma-separated); 400 for a term that is
    not one, or a field not in `allowed`."""
    terms = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        if "!=" in part:
            key, value = part.split("!=", 1)
            negate = True
        elif "==" in part:
            key, value = part.split("==", 1)
            negate = False
        elif "=" in part:
            key, value = part.split("=", 1)
            negate = False
        else:
            raise HttpError(400, f"invalid field selector: {part!r}")
        if key not in allowed:
            raise HttpError(400, f"field label not supported: {key}")
        terms.append((key, negate, value))
    return terms


def parse_labels(text: str) -> Selector:
    """A `labelSelector` of equality terms (`a=b`, `a==b`, `a!=b`, comma-separated); 400 for
    any other (set-based terms are not served here)."""
    terms = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, negate, value = part, False, None
        for op, neg in (("!=", True), ("==", False), ("=", False)):
            if op in part:
                key, value = part.split(op, 1)
                negate = neg
                break
        if value is None or not key.strip():
            raise HttpError(400, f"unable to parse requirement: {part!r}")
        terms.append((key.strip(), negate, value.strip()))
    return terms


def labels_match(obj: Mapping[str, Any], terms: Selector) -> bool:
    labels = obj["metadata"].get("labels") or {}
    return all((labels.get(key) != value) if negate else (labels.get(key) == value)
               for key, negate, value in terms)


def field(obj: Mapping[str, Any], dotted: str) -> str:
    """A field's value as a selector compares it ("" when missing, booleans lowercase)."""
    cur: Any = obj
    for part in dotted.split("."):
        cur = cur.get(part) if isinstance(cur, Mapping) else None
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return "" if cur is None else str(cur)


def matches(obj: Mapping[str, Any] | None, terms: Selector, namespace: str) -> bool:
    if obj is None:
        return False
    if namespace and obj["metadata"].get("namespace") != namespace:
        return False
    return all((field(obj, key) != value) if negate else (field(obj, key) == value)
               for key, negate, value in terms)


# ---- watch events ------------------------------------------------------------------------

@dataclass(slots=True)
class WatchEvent:
    """One change of the store, as the history keeps it."""

    rv: int
    plural: str
    type: str  # ADDED / MODIFIED / DELETED
    old: dict[str, Any] | None
    new: dict[str, Any]


def events_since(history: Reversible[WatchEvent], rv: int, plural: str) -> list[WatchEvent]:
    """The events of `plural` after `rv`, in order (history is in version order: walked
    back from the newest, as a soak keeps thousands of events and a dozen watches)."""
    pending = []
    for ev in reversed(history):
        if ev.rv <= rv:
            break
        if ev.plural == plural:
            pending.append(ev)
    pending.reverse()
    return pending


def translate(ev: WatchEvent, terms: Selector, namespace: str) -> dict[str, Any] | None:
    """The event a watcher with this selector sees (an object entering or leaving the
    selection is ADDED or DELETED for it, as the API server's filtered watch does)."""
    was, now = matches(ev.old, terms, namespace), matches(ev.new, terms, namespace)
    if ev.type == "DELETED":
        return {"type": "DELETED", "object": ev.new} if was else None
    if was and now:
        return {"type": "MODIFIED", "object": ev.new}
    if now:
        return {"type": "ADDED", "object": ev.new}
    if was:
        return {"type": "DELETED", "object": ev.new}
    return None


def bookmark(res: Resource, rv: int) -> dict[str, Any]:
    return {"type": "BOOKMARK", "object": {"kind": res.kind, "apiVersion": res.group_version,
                                           "metadata": {"resourceVersion": str(rv)}}}


def too_old(rv: int, compacted_rv: int) -> dict[str, Any]:
    """The `ERROR` event of a watch from a version older than the kept history."""
    return {"type": "ERROR", "object": status_body(
        410, f"too old resource version: {rv} ({compacted_rv})")}


# ---- list pagination ---------------------------------------------------------------------

CONTINUE_EXPIRED = ("The provided continue parameter is too old to display a consistent list "
                    "result. You can start a new list without the continue parameter.")


def encode_continue(rv: int, snapshot: int, offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps(
        {"rv": rv, "id": snapshot, "offset": offset}).encode()).decode()


def decode_continue(token: str) -> tuple[int, int, int]:
    """(list resourceVersion, snapshot id, offset) of a `continue` token; 400 if invalid."""
    try:
        state = json.loads(base64.urlsafe_b64decode(token.encode()))
        return int(state["rv"]), int(state["id"]), int(state["offset"])
    except (ValueError, KeyError, TypeError):
        raise HttpError(400, "continue key is not valid") from None


# ---- kubeconfig --------------------------------------------------------------------------

def kubeconfig_doc(context: str, cluster_name: str, cluster: Mapping[str, Any],
                   user_name: str, user: Mapping[str, Any]) -> dict[str, Any]:
    """A kubeconfig of one cluster, one user and one context, the current one."""
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": context,
        "clusters": [{"name": cluster_name, "cluster": dict(cluster)}],
        "users": [{"name": user_name, "user": dict(user)}],
        "contexts": [{"name": context, "context": {"cluster": cluster_name, "user": user_name}}],
    }


# ---- the server's thread -----------------------------------------------------------------

class LoopbackServer:
    """An asyncio server on its own event loop in a daemon thread: `start()` / `stop()`, or
    a context manager. A subclass listens (`_listen`) and keeps the history `_record` fills;
    `_wake()` (thread-safe) tells the watches that the store changed."""

    #: The thread's name and the server's, for a failure to start.
    _thread_name = "loopback-apiserver"
    _server_name = "the API server"

    port: int
    rv: int
    compacted_rv: int
    history_size: int
    history: deque[WatchEvent]
    _loop: asyncio.AbstractEventLoop | None
    _changed: asyncio.Event | None
    _stop: asyncio.Event | None
    _tasks: set[asyncio.Task[Any]]
    _thread: threading.Thread | None

    async def _listen(self) -> asyncio.Server:
        raise NotImplementedError

    def start(self) -> Self:
        ready = threading.Event()
        errors: list[BaseException] = []

        def run() -> None:
            try:
                asyncio.run(self._serve(ready))
            except BaseException as exc:  # noqa: BLE001 - surfaced to start()
                errors.append(exc)
                ready.set()

        self._thread = threading.Thread(target=run, name=self._thread_name, daemon=True)
        self._thread.start()
        if not ready.wait(10) or errors:
            raise OSError(f"{self._server_name} did not start: "
                          f"{errors[0] if errors else 'timeout'}")
        return self

    def stop(self) -> None:
        """Stop serving and close every connection (idempotent)."""
        if self._thread is None:
            return
        if self._loop is not None and self._stop is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended
                self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _serve(self, ready: threading.Event) -> None:
        self._loop = asyncio.get_running_loop()
        self._changed = asyncio.Event()
        self._stop = asyncio.Event()
        server = await self._listen()
        self.port = server.sockets[0].getsockname()[1]
        ready.set()
        try:
            await self._stop.wait()
        finally:
            server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2)

    def _wake(self) -> None:
        loop = self._loop
        if loop is None:
            return

        def notify() -> None:
            assert self._changed is not None
            self._changed.set()
            self._changed = asyncio.Event()

        with contextlib.suppress(RuntimeError):  # the loop is closing
            loop.call_soon_threadsafe(notify)

    def _record(self, plural: str, type_: str, old: dict[str, Any] | None,
                new: dict[str, Any]) -> None:
        """Keep a change at the current version; the oldest beyond `history_size` are
        forgotten (a watch from before them answers 410)."""
        self.history.append(WatchEvent(self.rv, plural, type_, old, new))
        while len(self.history) > self.history_size:
            self.compacted_rv = self.history.popleft().rv
