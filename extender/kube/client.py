"""`KubeClient`: the few Kubernetes API calls the extender makes, on `lean.LeanPool`'s
connections, or on `httpx.AsyncClient` where a proxy applies.

List pages and watch events are decoded straight into the typed structs of
`extender.model.k8s` (fields the engine does not read are skipped without building objects).
Errors come out as `KubeError` subclasses so callers never need to know about httpx:
`ApiError` (the server answered with a failure `Status`), `GoneError` (410: the resource
version or continue token is too old, relist), `CredentialError` (an exec credential plugin
failed: a 401 without asking the server), `TransportError` (no answer: connect, reset,
timeout).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar
from urllib.parse import quote

import msgspec

from extender.kube.config import ClusterConfig, ConfigError, TokenSource, _pem_file
from extender.kube.exec import Credential, ExecError, ExecPlugin
from extender.kube.lean import LeanPool, Reply, Stream, authorised, lean_target, lines
from extender.model import k8s

if TYPE_CHECKING:
    import httpx

T = TypeVar("T")
R = TypeVar("R")
log = logging.getLogger(__name__)

USER_AGENT = "extender/0.1"


# ---- errors ------------------------------------------------------------------------------
class KubeError(Exception):
    """Any failure talking to the API server."""


class TransportError(KubeError):
    """No (complete) answer: connection refused or dropped, or a timeout."""


@contextlib.contextmanager
def no_answer_is_transport_error(what: str, timeout: float | None = None) -> Iterator[None]:
    """A timeout, or a connection refused, reset, dropped or failing TLS (`ssl.SSLError` is an
    OSError), inside the block becomes `TransportError` naming `what`."""
    try:
        yield
    except TimeoutError:
        late = f" after {timeout:g}s" if timeout is not None else ""
        raise TransportError(f"{what}: timed out{late}") from None
    except OSError as exc:
        raise TransportError(f"{what}: {type(exc).__name__}: {exc}") from exc


class ApiError(KubeError):
    """The API server answered with a failure status."""

    def __init__(self, code: int, reason: str = "", message: str = "") -> None:
        super().__init__(f"{code} {reason}: {message}" if reason else f"{code}: {message}")
        self.code = code
        self.reason = reason
        self.message = message


class GoneError(ApiError):
    """410 Gone / Expired: the resource version or continue token is too old; relist."""


class CredentialError(ApiError):
    """No credential to send: the exec plugin failed (treated as a 401, never retried at once)."""

    def __init__(self, message: str) -> None:
        super().__init__(401, "Unauthorized", message)


# ---- wire types --------------------------------------------------------------------------
class Status(msgspec.Struct, gc=False):
    """`metav1.Status`, as sent with failures and in watch ERROR events."""

    status: str = ""
    message: str = ""
    reason: str = ""
    code: int = 0


class ListMeta(msgspec.Struct, gc=False):
    resourceVersion: str = ""
    # `continue` is a Python keyword.
    continue_: str = msgspec.field(default="", name="continue")


class ListPage(msgspec.Struct, Generic[T]):
    """One page of a list: typed items, the collection's resourceVersion, the continue token."""

    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: list[T] | None = None

    @property
    def resource_version(self) -> str:
        return self.metadata.resourceVersion

    @property
    def continue_token(self) -> str:
        return self.metadata.continue_


class _RawEvent(msgspec.Struct, gc=False):
    type: str
    object: msgspec.Raw = msgspec.Raw(b"null")


class _Versioned(msgspec.Struct, gc=False):
    metadata: k8s.ObjectMeta = msgspec.field(default_factory=k8s.ObjectMeta)


class WatchEvent(msgspec.Struct, gc=False):
    """ADDED / MODIFIED / DELETED with the typed object, or BOOKMARK (object is None)."""

    type: str
    object: Any
    resource_version: str


_event_decoder = msgspec.json.Decoder(_RawEvent)
_status_decoder = msgspec.json.Decoder(Status)
_versioned_decoder = msgspec.json.Decoder(_Versioned)
_list_decoders: dict[type, msgspec.json.Decoder] = {}


def _list_decoder(kind: type) -> msgspec.json.Decoder:
    dec = _list_decoders.get(kind)
    if dec is None:
        dec = _list_decoders[kind] = msgspec.json.Decoder(ListPage[kind])  # type: ignore[valid-type]
    return dec


def _status_error(code: int, body: bytes) -> ApiError:
    try:
        status = _status_decoder.decode(body)
        reason, message = status.reason, status.message
        code = status.code or code
    except (msgspec.DecodeError, msgspec.ValidationError):
        reason, message = "", body[:200].decode("utf-8", "replace")
    cls = GoneError if code == 410 else ApiError
    return cls(code, reason, message)


# ---- auth --------------------------------------------------------------------------------
class ExecCredentials:
    """The exec plugin's credential: a bearer token and/or a client certificate.

    The plugin runs in a worker thread (never on the event loop) when no valid credential is
    cached. A new client certificate is handed to `on_certificate`.
    """

    def __init__(self, plugin: ExecPlugin,
                 on_certificate: Callable[[Credential], Any] | None = None) -> None:
        self.plugin = plugin
        self.on_certificate = on_certificate
        self.installed: Credential | None = None

    def get(self) -> Credential:
        try:
            return self.plugin.get()
        except ExecError as exc:
            raise CredentialError(str(exc)) from None

    async def aget(self) -> Credential:
        cred = self.plugin.cached()
        if cred is None:
            cred = await asyncio.to_thread(self.get)
        if cred.has_certificate and cred is not self.installed and self.on_certificate is not None:
            self.installed = cred
            result = self.on_certificate(cred)
            if asyncio.iscoroutine(result):
                await result
        return cred


# ---- client ------------------------------------------------------------------------------
class KubeClient:
    """List, watch, get and bind against one API server.

    `lean=False` (or a `transport`, a kubeconfig `proxy-url`, or a proxy variable in the
    environment with `trust_env`) sends every call, watches included, through httpx."""

    def __init__(
        self,
        config: ClusterConfig,
        *,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
        trust_env: bool = True,
        lean: bool = True,
    ) -> None:
        self.config = config
        self._timeout = timeout
        ctx = config.ssl_context()
        self._ssl_context = ctx
        self._extensions = {"sni_hostname": config.tls_server_name} if config.tls_server_name else {}
        #: The exec credential plugin, when the kubeconfig user has one.
        self.exec_plugin: ExecPlugin | None = None
        self._exec: ExecCredentials | None = None
        self._tokens: TokenSource | None = None
        if config.exec is not None:
            self.exec_plugin = ExecPlugin(config.exec)
            self._exec = ExecCredentials(self.exec_plugin, self._install_certificate)
        else:
            self._tokens = config.token_source()
        #: The calls' own connections, where no proxy applies (made at the first call).
        self._lean_target = lean_target(config.server) if lean and transport is None \
            and config.proxy_url is None \
            and not (trust_env and _proxy_in_environment(config.server)) else None
        self._lean: LeanPool | None = None
        #: Otherwise httpx's client (`kube.viahttpx`, imported only then).
        self._http: httpx.AsyncClient | None = None
        if self._lean_target is None:
            from extender.kube.viahttpx import make_client
            self._http = make_client(
                config, ctx, credentials=self._exec, tokens=self._tokens, timeout=timeout,
                headers={"User-Agent": USER_AGENT, "Accept": "application/json"},
                transport=transport, trust_env=trust_env)
        #: Pool connections taken back from failed calls (`reclaim_orphans`), and who is told.
        self.reclaimed = 0
        self.on_reclaim: Callable[[int], None] | None = None
        #: Calls whose caller stopped waiting, left to end on their own timeouts (`_request`).
        self._abandoned: set[asyncio.Future[Reply]] = set()
        self._closed = False

    @property
    def closed(self) -> bool:
        """Whether `aclose` has run."""
        return self._closed

    async def aclose(self) -> None:
        self._closed = True
        for call in list(self._abandoned):
            call.cancel()
        if self._lean is not None:
            self._lean.close()
        if self._http is not None:
            await self._http.aclose()

    # ---- exec credentials ----------------------------------------------------------------
    def prepare_credentials(self) -> None:
        """Run the exec credential plugin now (if any), so that a broken one is a start-up
        error rather than a stream of 401s; raises `ConfigError` with the plugin's message."""
        if self.exec_plugin is None:
            return
        try:
            cred = self.exec_plugin.get()
        except ExecError as exc:
            raise ConfigError(f"{self.config.source}: {exc}") from None
        if cred.has_certificate:
            self._load_certificate(cred)
            assert self._exec is not None
            self._exec.installed = cred

    def _load_certificate(self, cred: Credential) -> None:
        ctx = self._ssl_context
        if ctx is None:
            log.warning("exec plugin returned a client certificate, but %s is plain http: not used",
                        self.config.server)
            return
        with _pem_file(cred.client_certificate, None) as cert, \
                _pem_file(cred.client_key, None) as key:
            try:
                ctx.load_cert_chain(cert, key)
            except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
                raise CredentialError(f"exec plugin returned an unusable client certificate: {exc}"
                                      ) from None

    async def _install_certificate(self, cred: Credential) -> None:
        """A new client certificate from the plugin: new connections present it, and idle
        pooled ones (which presented the old one) are closed, as client-go closes them."""
        self._load_certificate(cred)
        if self._lean is not None:
            self._lean.close_idle()
        if self._http is not None:
            from extender.kube.viahttpx import close_idle

            await close_idle(self._http)

    async def __aenter__(self) -> KubeClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # ---- plumbing ------------------------------------------------------------------------
    async def _request(
        self, method: str, path: str, *, params: dict[str, str] | None = None,
        body: bytes | None = None, timeout: float | None = None,
        content_type: str = "application/json",
    ) -> Reply:
        # The call runs in a task of its own, which its caller's cancellation (a bind given up
        # at its deadline) never reaches: cancelled from outside, httpx and httpcore can leave
        # a response read but never closed (their closes are shielded from anyio's cancel
        # scopes, not from a task asyncio cancels again), and its connection stays busy for
        # good. Left alone, the call ends on its own timeout.
        call = asyncio.ensure_future(self._call(
            method, path, params, body, content_type,
            timeout if timeout is not None else self._timeout))
        try:
            return await asyncio.shield(call)
        except asyncio.CancelledError:
            if call.done():
                self._forget(call)
            else:
                self._abandoned.add(call)
                call.add_done_callback(self._forget)
            raise

    async def _call(self, method: str, path: str, params: dict[str, str] | None,
                    body: bytes | None, content_type: str, timeout: float) -> Reply:
        if self._lean_target is not None:
            return await self._lean_call(method, path, params, body, content_type, timeout)
        resp = await self._send(
            method, path, params=params, content=body, timeout=timeout,
            headers={"Content-Type": content_type} if body is not None else None)
        return Reply(resp.status_code, resp.content)

    async def _send(self, method: str, path: str, **options: Any) -> httpx.Response:
        import httpx  # imported already: this is the httpx path

        assert self._http is not None
        try:
            return await self._http.request(method, path, extensions=self._extensions, **options)
        except httpx.TransportError as exc:
            self._reclaim()
            raise TransportError(f"{method} {path}: {type(exc).__name__}: {exc}") from exc

    async def _lean_call(self, method: str, path: str, params: dict[str, str] | None,
                         body: bytes | None, content_type: str, timeout: float) -> Reply:
        """The call on the lean pool, authorised as httpx's auth flows do (a rotated token
        file, or the exec plugin's credential, tried once more after a 401)."""
        lean = self._lean_pool()
        head = self._lean_head(method, path, params, body, content_type)

        async def send(token: str | None) -> Reply:
            request = authorised(head, token)
            return await lean.request(request + body if body else request, timeout)

        with no_answer_is_transport_error(f"{method} {path}", timeout):
            return await self._lean_authorised(send, lambda reply: reply.status_code)

    def _lean_pool(self) -> LeanPool:
        if self._lean is None:
            assert self._lean_target is not None
            target = self._lean_target
            self._lean = LeanPool(target.host, target.port, self._ssl_context,
                                  self.config.tls_server_name)
        return self._lean

    def _lean_head(self, method: str, path: str, params: dict[str, str] | None,
                   body: bytes | None, content_type: str) -> str:
        assert self._lean_target is not None
        return self._lean_target.head(method, path, params, USER_AGENT, body, content_type)

    async def _lean_authorised(self, send: Callable[[str | None], Awaitable[R]],
                               status: Callable[[R], int]) -> R:
        """`send(token)` with the current credential, and once more with a new one after a
        401 when there is one (a rotated token file; the exec plugin run again)."""
        if self._exec is not None:
            assert self.exec_plugin is not None
            cred = await self._exec.aget()
            answer = await send(cred.token)
            if status(answer) != 401:
                return answer
            self.exec_plugin.invalidate(cred)
            fresh = await self._exec.aget()
            return answer if fresh is cred else await send(fresh.token)
        tokens = self._tokens
        assert tokens is not None
        answer = await send(tokens.get())
        if status(answer) != 401 or not (tokens.rotates and tokens.refresh()):
            return answer
        return await send(tokens.get())

    def _forget(self, call: asyncio.Future[Reply]) -> None:
        self._abandoned.discard(call)
        if not call.cancelled():
            call.exception()  # retrieved: nobody awaits it any more

    @property
    def abandoned(self) -> int:
        """Calls still running whose callers stopped waiting for them."""
        return len(self._abandoned)

    def _reclaim(self) -> None:
        from extender.kube.pool import reclaim_orphans

        assert self._http is not None
        if found := reclaim_orphans(self._http):
            self.reclaimed += found
            log.debug("took back %d pool connection(s) a failed call left behind", found)
            if self.on_reclaim is not None:
                self.on_reclaim(found)

    # ---- list / get ----------------------------------------------------------------------
    async def list(
        self, path: str, kind: type[T], *, limit: int = 500, continue_token: str = "",
        field_selector: str = "", label_selector: str = "",
    ) -> ListPage[T]:
        """One page of a collection (a consistent read: no resourceVersion is sent)."""
        params = {"limit": str(limit)}
        if continue_token:
            params["continue"] = continue_token
        if field_selector:
            params["fieldSelector"] = field_selector
        if label_selector:
            params["labelSelector"] = label_selector
        resp = await self._request("GET", path, params=params)
        if resp.status_code != 200:
            raise _status_error(resp.status_code, resp.content)
        try:
            return _list_decoder(kind).decode(resp.content)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise ApiError(resp.status_code, "BadResponse", f"undecodable list from {path}: {exc}") from None

    async def get(self, path: str, kind: type[T], *, timeout: float | None = None) -> T:
        resp = await self._request("GET", path, timeout=timeout)
        if resp.status_code != 200:
            raise _status_error(resp.status_code, resp.content)
        try:
            return k8s.decoder(kind).decode(resp.content)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise ApiError(resp.status_code, "BadResponse", f"undecodable object from {path}: {exc}") from None

    async def get_pod(self, namespace: str, name: str, *, timeout: float | None = None) -> k8s.Pod:
        return await self.get(pod_path(namespace, name), k8s.Pod, timeout=timeout)

    # ---- untyped objects (the leader election's Lease) ------------------------------------
    async def get_object(self, path: str) -> dict[str, Any]:
        """An object as JSON; `ApiError` (404 included) on failure."""
        resp = await self._request("GET", path)
        if resp.status_code != 200:
            raise _status_error(resp.status_code, resp.content)
        return msgspec.json.decode(resp.content)

    async def create_object(self, collection: str, obj: dict[str, Any]) -> dict[str, Any]:
        resp = await self._request("POST", collection, body=msgspec.json.encode(obj))
        if resp.status_code not in (200, 201):
            raise _status_error(resp.status_code, resp.content)
        return msgspec.json.decode(resp.content)

    async def replace_object(self, path: str, obj: dict[str, Any]) -> dict[str, Any]:
        """PUT: the object's `metadata.resourceVersion` makes it conditional (409 if it moved)."""
        resp = await self._request("PUT", path, body=msgspec.json.encode(obj))
        if resp.status_code != 200:
            raise _status_error(resp.status_code, resp.content)
        return msgspec.json.decode(resp.content)

    # ---- watch ---------------------------------------------------------------------------
    async def watch(
        self, path: str, kind: type, *, resource_version: str, timeout_seconds: int = 300,
        field_selector: str = "", bookmarks: bool = True, on_open: Callable[[], None] | None = None,
    ) -> AsyncIterator[WatchEvent]:
        """Events after `resource_version`, until the server ends the stream.

        Raises `GoneError` when the version is too old (HTTP 410 or an ERROR event with a
        410 Status), `ApiError` for other failures, `TransportError` when the connection
        drops or goes silent (no byte for `timeout_seconds` + 30 s). A clean end of the
        stream just ends the iteration: re-watch from the last version seen. `on_open` is
        called once the server has accepted the watch (before any event).
        Use it with `contextlib.aclosing` so an abandoned stream is closed at once.
        """
        params = {
            "watch": "1",
            "resourceVersion": resource_version,
            "timeoutSeconds": str(timeout_seconds),
        }
        if bookmarks:
            params["allowWatchBookmarks"] = "true"
        if field_selector:
            params["fieldSelector"] = field_selector
        decode_object = k8s.decoder(kind).decode
        if self._lean_target is not None:
            chunks = self._lean_watch(path, params, timeout_seconds + 30.0, on_open)
        else:
            chunks = self._httpx_watch(path, params, timeout_seconds + 30.0, on_open)
        async with contextlib.aclosing(chunks), contextlib.aclosing(lines(chunks)) as events:
            async for line in events:
                yield _watch_event(line, decode_object)

    async def _httpx_watch(self, path: str, params: dict[str, str], read_timeout: float,
                           on_open: Callable[[], None] | None) -> AsyncGenerator[bytes, None]:
        import httpx  # imported already: this is the httpx path

        assert self._http is not None
        timeout = httpx.Timeout(self._timeout, read=read_timeout)
        try:
            async with self._http.stream(
                "GET", path, params=params, timeout=timeout, extensions=self._extensions,
            ) as resp:
                if resp.status_code != 200:
                    raise _status_error(resp.status_code, await resp.aread())
                if on_open is not None:
                    on_open()
                async for chunk in resp.aiter_bytes():
                    yield chunk
        except httpx.TransportError as exc:
            self._reclaim()
            raise TransportError(f"watch {path}: {type(exc).__name__}: {exc}") from exc

    async def _lean_watch(self, path: str, params: dict[str, str], read_timeout: float,
                          on_open: Callable[[], None] | None) -> AsyncGenerator[bytes, None]:
        lean = self._lean_pool()
        head = self._lean_head("GET", path, params, None, "")

        opened: list[Stream] = []

        async def open_stream(token: str | None) -> Stream:
            opened.append(await lean.stream(authorised(head, token), self._timeout))
            return opened[-1]

        # A head late past the client's timeout, or silence past the read's.
        with no_answer_is_transport_error(f"watch {path}"):
            try:
                stream = await self._lean_authorised(open_stream, lambda s: s.status)
            except BaseException:
                for failed in opened:
                    failed.close()
                raise
            for refused in opened:  # a 401 tried again with a new credential
                if refused is not stream:
                    refused.close()
            try:
                if stream.status != 200:
                    raise _status_error(stream.status, await stream.read(self._timeout))
                if on_open is not None:
                    on_open()
                async with contextlib.aclosing(stream.chunks(read_timeout)) as chunks:
                    async for chunk in chunks:
                        yield chunk
            finally:
                stream.close()

    # ---- binding -------------------------------------------------------------------------
    async def create_binding(
        self, namespace: str, name: str, uid: str, node: str, *, timeout: float | None = None,
    ) -> None:
        """POST pods/binding with the pod's UID as precondition; raises on any failure."""
        body = msgspec.json.encode({
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": namespace, "uid": uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        })
        resp = await self._request(
            "POST", pod_path(namespace, name) + "/binding", body=body, timeout=timeout,
        )
        if resp.status_code not in (200, 201):
            raise _status_error(resp.status_code, resp.content)


    # ---- events (events.k8s.io/v1) ------------------------------------------------------
    async def create_event(self, namespace: str, event: dict[str, Any], *,
                           timeout: float | None = None) -> None:
        """POST an `events.k8s.io/v1` Event; raises on any failure."""
        resp = await self._request("POST", events_path(namespace), body=msgspec.json.encode(event),
                                   timeout=timeout)
        if resp.status_code not in (200, 201):
            raise _status_error(resp.status_code, resp.content)

    async def patch_event(self, namespace: str, name: str, patch: dict[str, Any], *,
                          timeout: float | None = None) -> None:
        """A JSON merge patch of an Event (its `series`); raises on any failure (404: gone)."""
        resp = await self._request(
            "PATCH", f"{events_path(namespace)}/{quote(name, safe='')}",
            body=msgspec.json.encode(patch), timeout=timeout,
            content_type="application/merge-patch+json")
        if resp.status_code != 200:
            raise _status_error(resp.status_code, resp.content)


def events_path(namespace: str) -> str:
    return f"/apis/events.k8s.io/v1/namespaces/{quote(namespace, safe='')}/events"


def _watch_event(line: bytes, decode_object: Any) -> WatchEvent:
    try:
        raw = _event_decoder.decode(line)
        if raw.type == "ERROR":
            raise _status_error(500, bytes(raw.object))
        if raw.type == "BOOKMARK":
            meta = _versioned_decoder.decode(raw.object).metadata
            return WatchEvent("BOOKMARK", None, meta.resource_version)
        obj = decode_object(raw.object)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ApiError(200, "BadResponse", f"undecodable watch event: {exc}") from None
    return WatchEvent(raw.type, obj, obj.metadata.resource_version)


def _proxy_in_environment(server: str) -> bool:
    """Whether a proxy variable httpx would read (`trust_env`) is set for the server's scheme;
    then every call goes through httpx, which applies it and NO_PROXY."""
    scheme = "https" if server.startswith("https://") else "http"
    return any(os.environ.get(name) for name in (
        f"{scheme}_proxy", f"{scheme.upper()}_PROXY", "all_proxy", "ALL_PROXY"))


def pod_path(namespace: str, name: str) -> str:
    return f"/api/v1/namespaces/{quote(namespace, safe='')}/pods/{quote(name, safe='')}"
