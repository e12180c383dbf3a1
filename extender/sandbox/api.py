"""A small untyped Kubernetes API client for the sandbox: objects as dicts.

The extender's own `KubeClient` decodes into the engine's typed structs and makes only the
calls the extender needs; the sandbox creates nodes, patches pod status, renews leases and
applies manifests, so it works on plain JSON. Credentials come from a kubeconfig through
`extender.kube.config` (the same resolution the extender uses), and the calls go over
`extender.kube.lean`'s connections (a node agent with thousands of nodes renews their Leases
every heartbeat). A call that gets no complete answer raises `TransportError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, Mapping
from typing import Any
from urllib.parse import quote

from extender.engine import registry
from extender.kube.client import TransportError, no_answer_is_transport_error
from extender.kube.config import load_kubeconfig
from extender.kube.lean import LeanPool, Reply, authorised, lean_target, lines

USER_AGENT = "extender-sandbox"

__all__ = ["Api", "ApiError", "TransportError", "object_path", "path", "wait_for", "where"]


class ApiError(Exception):
    """A failure `Status` from the API server."""

    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(f"{code} {reason}: {message}")
        self.code = code
        self.reason = reason
        self.message = message


def _error(status: int, content: bytes) -> ApiError:
    try:
        body = json.loads(content)
        return ApiError(status, str(body.get("reason", "")), str(body.get("message", "")))
    except (ValueError, AttributeError):
        return ApiError(status, "", content[:200].decode("utf-8", "replace"))


#: Where each kind lives: (API prefix, plural, namespaced).
KINDS: dict[str, tuple[str, str, bool]] = {
    "Node": ("/api/v1", "nodes", False),
    "Pod": ("/api/v1", "pods", True),
    "Namespace": ("/api/v1", "namespaces", False),
    "Service": ("/api/v1", "services", True),
    "ServiceAccount": ("/api/v1", "serviceaccounts", True),
    "Event": ("/api/v1", "events", True),
    "ReplicationController": ("/api/v1", "replicationcontrollers", True),
    "Deployment": ("/apis/apps/v1", "deployments", True),
    "ReplicaSet": ("/apis/apps/v1", "replicasets", True),
    "StatefulSet": ("/apis/apps/v1", "statefulsets", True),
    "DaemonSet": ("/apis/apps/v1", "daemonsets", True),
    "Job": ("/apis/batch/v1", "jobs", True),
    "PodDisruptionBudget": ("/apis/policy/v1", "poddisruptionbudgets", True),
    "PriorityClass": ("/apis/scheduling.k8s.io/v1", "priorityclasses", False),
    "Lease": ("/apis/coordination.k8s.io/v1", "leases", True),
    "ClusterRole": ("/apis/rbac.authorization.k8s.io/v1", "clusterroles", False),
    "Role": ("/apis/rbac.authorization.k8s.io/v1", "roles", True),
    "RoleBinding": ("/apis/rbac.authorization.k8s.io/v1", "rolebindings", True),
    "ClusterRoleBinding": ("/apis/rbac.authorization.k8s.io/v1", "clusterrolebindings", False),
    "CustomResourceDefinition": ("/apis/apiextensions.k8s.io/v1", "customresourcedefinitions",
                                 False),
}


def where(kind: str) -> tuple[str, str, bool]:
    """(API prefix, plural, namespaced) of `kind`: Kubernetes' own above, or a plugin
    record's resource (PodGroup, ElasticQuota, …). ValueError for one the sandbox does not
    know."""
    found = KINDS.get(kind)
    if found is not None:
        return found
    resource = registry.resource_of_kind(kind)
    if resource is None:
        raise ValueError(f"the sandbox does not know kind {kind!r}")
    return resource.prefix, resource.name, resource.namespaced


def path(kind: str, namespace: str | None = None, name: str | None = None,
         sub: str | None = None) -> str:
    """The URL path of a collection, an object or its subresource."""
    prefix, plural, namespaced = where(kind)
    out = prefix
    if namespaced and namespace:
        out += f"/namespaces/{quote(namespace, safe='')}"
    out += f"/{plural}"
    if name:
        out += f"/{quote(name, safe='')}"
    if sub:
        out += f"/{sub}"
    return out


def object_path(obj: Mapping[str, Any], sub: str | None = None) -> str:
    meta = obj.get("metadata") or {}
    return path(str(obj.get("kind")), meta.get("namespace") or "default", meta.get("name"), sub)


class Api:
    """Async JSON calls against the API server a kubeconfig names."""

    def __init__(self, kubeconfig: str, *, timeout: float = 30.0,
                 max_connections: int = 32) -> None:
        config = load_kubeconfig(kubeconfig)
        self.server = config.server
        self._target = lean_target(config.server)
        self._token = config.token
        self._timeout = timeout
        self._pool = LeanPool(self._target.host, self._target.port, config.ssl_context(),
                              config.tls_server_name, max_connections=max_connections)

    async def aclose(self) -> None:
        self._pool.close()

    async def __aenter__(self) -> Api:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _request_head(self, method: str, url: str, params: Mapping[str, str] | None,
                      data: bytes | None = None, content_type: str = "application/json",
                      ) -> bytes:
        return authorised(self._target.head(method, url, params, USER_AGENT, data, content_type),
                          self._token)

    async def _send(self, method: str, url: str, *, data: bytes | None = None,
                    params: Mapping[str, str] | None = None,
                    content_type: str = "application/json") -> Reply:
        request = self._request_head(method, url, params, data, content_type)
        with no_answer_is_transport_error(f"{method} {url}", self._timeout):
            return await self._pool.request(request + data if data else request, self._timeout)

    async def request(self, method: str, url: str, *, body: Any = None,
                      params: Mapping[str, str] | None = None,
                      content_type: str = "application/json", ok: tuple[int, ...] = (200, 201),
                      ) -> Any:
        data = None if body is None else json.dumps(body).encode()
        reply = await self._send(method, url, data=data, params=params, content_type=content_type)
        if reply.status_code not in ok:
            raise _error(reply.status_code, reply.content)
        return json.loads(reply.content) if reply.content else None

    async def get(self, url: str, params: Mapping[str, str] | None = None) -> Any:
        return await self.request("GET", url, params=params)

    async def ok(self, url: str) -> bool:
        """True when GET `url` answers 200 (health endpoints answer text, not JSON)."""
        return (await self._send("GET", url)).status_code == 200

    async def exists(self, url: str) -> bool:
        try:
            await self.get(url)
            return True
        except ApiError as exc:
            if exc.code == 404:
                return False
            raise

    async def list(self, url: str, **params: str) -> list[dict[str, Any]]:
        """Every item of a collection, page by page."""
        items: list[dict[str, Any]] = []
        query = {"limit": "500", **params}
        while True:
            page = await self.get(url, query)
            items.extend(page.get("items") or [])
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return items
            query["continue"] = token

    async def create(self, obj: Mapping[str, Any], *, exist_ok: bool = False) -> Any:
        meta = obj.get("metadata") or {}
        url = path(str(obj["kind"]), meta.get("namespace") or "default")
        try:
            return await self.request("POST", url, body=obj)
        except ApiError as exc:
            if exist_ok and exc.code == 409:
                return None
            raise

    async def apply(self, obj: Mapping[str, Any]) -> Any:
        """Create, or replace what exists (server-side apply, as `kubectl apply
        --server-side --force-conflicts`)."""
        return await self.request(
            "PATCH", object_path(obj), body=obj, content_type="application/apply-patch+yaml",
            params={"fieldManager": "extender-sandbox", "force": "true"})

    async def patch(self, url: str, patch: Any, *, kind: str = "merge") -> Any:
        content = {"merge": "application/merge-patch+json",
                   "strategic": "application/strategic-merge-patch+json",
                   "json": "application/json-patch+json"}[kind]
        return await self.request("PATCH", url, body=patch, content_type=content)

    async def delete(self, url: str, *, grace: int | None = None, uid: str | None = None,
                     missing_ok: bool = True) -> Any:
        body: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if grace is not None:
            body["gracePeriodSeconds"] = grace
        if uid is not None:
            body["preconditions"] = {"uid": uid}
        try:
            return await self.request("DELETE", url, body=body, ok=(200, 202))
        except ApiError as exc:
            if missing_ok and exc.code in (404, 409):
                return None
            raise

    async def watch(self, url: str, resource_version: str, **params: str,
                    ) -> AsyncGenerator[tuple[str, dict[str, Any]], None]:
        """(type, object) events until the server ends the stream; ERROR events raise."""
        query = {"watch": "1", "resourceVersion": resource_version,
                 "allowWatchBookmarks": "true", "timeoutSeconds": "300", **params}
        with no_answer_is_transport_error(f"watch {url}"):
            stream = await self._pool.stream(self._request_head("GET", url, query), self._timeout)
            try:
                if stream.status != 200:
                    raise _error(stream.status, await stream.read(self._timeout))
                async with contextlib.aclosing(stream.chunks(360.0)) as chunks, \
                        contextlib.aclosing(lines(chunks)) as events:
                    async for line in events:
                        yield _watch_event(line)
            finally:
                stream.close()


def _watch_event(line: bytes) -> tuple[str, dict[str, Any]]:
    event = json.loads(line)
    if event.get("type") == "ERROR":
        status = event.get("object") or {}
        raise ApiError(int(status.get("code") or 500), str(status.get("reason", "")),
                       str(status.get("message", "")))
    return event["type"], event["object"]


async def wait_for(condition: Any, *, timeout: float, interval: float = 0.2,
                   what: str = "condition") -> Any:
    """Poll an async `condition()` until it returns something truthy; TimeoutError names
    `what` and the last exception, if any."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: BaseException | None = None
    while True:
        try:
            result = await condition()
            if result:
                return result
        except (ApiError, TransportError, OSError) as exc:
            last = exc
        if loop.time() >= deadline:
            detail = f" (last error: {last})" if last else ""
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}{detail}")
        await asyncio.sleep(interval)
