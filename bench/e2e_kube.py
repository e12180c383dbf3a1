"""The end-to-end bench's own API client: raw HTTP/1.1 over TLS keep-alive connections.

`extender.sandbox.api.Api` (httpx) costs about 4 ms of CPU per request in this process: 5000
pod creations would take 20 s of one of the machine's two cores, away from the scheduler being
measured. This client writes pre-encoded requests on plain asyncio streams (uvloop when
installed) and reads the replies by hand (Content-Length or chunked), about a tenth of that.
It only does what the bench needs: create many objects at once, a watch of bound pods, list,
delete a collection, and GET of component endpoints (metrics, configz) with the same client
certificate.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

import msgspec

from extender.kube.config import load_kubeconfig


class RawError(RuntimeError):
    """A reply the bench did not expect (status, the start of the body)."""

    def __init__(self, status: int, what: str, body: bytes = b"") -> None:
        super().__init__(f"{what}: HTTP {status}: {body[:300].decode(errors='replace')}")
        self.status = status


@dataclass
class Reply:
    status: int
    body: bytes


class Conn:
    """One keep-alive HTTP/1.1 connection (one request at a time)."""

    def __init__(self, host: str, port: int, ctx: ssl.SSLContext | None, headers: bytes) -> None:
        self.host, self.port, self.ctx = host, port, ctx
        self._headers = headers
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self._reader is None or self._writer is None or self._writer.is_closing():
            self._reader, self._writer = await asyncio.open_connection(
                self.host, self.port, ssl=self.ctx,
                server_hostname=self.host if self.ctx is not None else None,
                limit=1 << 22)
        return self._reader, self._writer

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None

    def _head(self, method: str, target: str, body: bytes, content_type: str) -> bytes:
        head = f"{method} {target} HTTP/1.1\r\n".encode() + self._headers
        if body or method in ("POST", "PUT", "PATCH", "DELETE"):
            head += f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n".encode()
        return head + b"\r\n"

    async def _status_and_headers(self, reader: asyncio.StreamReader) -> tuple[int, dict[bytes, bytes]]:
        line = await reader.readline()
        if not line:
            raise ConnectionResetError("connection closed before the reply")
        parts = line.split(None, 2)
        status = int(parts[1])
        headers: dict[bytes, bytes] = {}
        while True:
            line = await reader.readline()
            if line in (b"\r\n", b"\n", b""):
                return status, headers
            key, _, value = line.partition(b":")
            headers[key.strip().lower()] = value.strip()

    async def request(self, method: str, target: str, body: bytes = b"",
                      content_type: str = "application/json") -> Reply:
        for attempt in (0, 1):  # a keep-alive connection the server closed: once more
            reader, writer = await self._open()
            try:
                writer.write(self._head(method, target, body, content_type) + body)
                status, headers = await self._status_and_headers(reader)
                break
            except (ConnectionError, asyncio.IncompleteReadError):
                self.close()
                if attempt:
                    raise
        if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
            chunks = []
            async for chunk in self._chunks(reader):
                chunks.append(chunk)
            data = b"".join(chunks)
        elif b"content-length" in headers:
            data = await reader.readexactly(int(headers[b"content-length"]))
        else:
            data = await reader.read()
            self.close()
        if headers.get(b"connection", b"").lower() == b"close":
            self.close()
        return Reply(status, data)

    @staticmethod
    async def _chunks(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
        while True:
            size_line = await reader.readline()
            if not size_line:
                raise ConnectionResetError("connection closed inside a chunked reply")
            size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return
            data = await reader.readexactly(size + 2)
            yield data[:-2]

    async def stream_lines(self, target: str, on_open: Callable[[], None] | None = None,
                           ) -> AsyncIterator[bytes]:
        """GET `target` and yield its body line by line (a watch); the connection is used up.
        `on_open` is called once the reply's head has come (the API server sends it at once)."""
        reader, writer = await self._open()
        writer.write(self._head("GET", target, b"", ""))
        status, headers = await self._status_and_headers(reader)
        if status != 200:
            body = await reader.read(4096)
            self.close()
            raise RawError(status, f"GET {target}", body)
        if on_open is not None:
            on_open()
        buffer = b""
        try:
            if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
                async for chunk in self._chunks(reader):
                    buffer += chunk
                    *lines, buffer = buffer.split(b"\n")
                    for line in lines:
                        if line.strip():
                            yield line
            else:
                while line := await reader.readline():
                    if line.strip():
                        yield line
        finally:
            self.close()


class RawApi:
    """Connections to the API server a kubeconfig names, with its client credentials."""

    def __init__(self, kubeconfig: str) -> None:
        config = load_kubeconfig(kubeconfig)
        self.ctx = config.ssl_context()
        url = urlsplit(config.server)
        self.host = url.hostname or "127.0.0.1"
        self.port = url.port or (443 if url.scheme == "https" else 80)
        self.tls = url.scheme == "https"
        headers = f"Host: {self.host}:{self.port}\r\nAccept: application/json\r\nUser-Agent: extender-bench-e2e\r\n"
        token = config.token_source().get() if config.token_source() else None
        if token:
            headers += f"Authorization: Bearer {token}\r\n"
        self._headers = headers.encode()
        self._pool: list[Conn] = []

    def conn(self) -> Conn:
        return Conn(self.host, self.port, self.ctx if self.tls else None, self._headers)

    async def _pooled(self) -> Conn:
        return self._pool.pop() if self._pool else self.conn()

    async def request(self, method: str, target: str, body: Any = None, *,
                      ok: Sequence[int] = (200, 201), content_type: str = "application/json") -> Any:
        data = b"" if body is None else (body if isinstance(body, bytes) else msgspec.json.encode(body))
        conn = await self._pooled()
        try:
            reply = await conn.request(method, target, data, content_type)
        except BaseException:
            conn.close()
            raise
        self._pool.append(conn)
        if reply.status not in ok:
            raise RawError(reply.status, f"{method} {target}", reply.body)
        return msgspec.json.decode(reply.body) if reply.body else None

    async def get(self, target: str, **params: str) -> Any:
        return await self.request("GET", target + (f"?{urlencode(params)}" if params else ""))

    async def list(self, target: str, **params: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        query = {"limit": "500", **params}
        while True:
            page = await self.get(target, **query)
            items.extend(page.get("items") or [])
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return items
            query["continue"] = token

    async def delete_collection(self, target: str, grace: int = 0, **params: str) -> None:
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": grace}
        await self.request("DELETE", target + (f"?{urlencode(params)}" if params else ""), body,
                           ok=(200, 202))

    def close(self) -> None:
        for conn in self._pool:
            conn.close()
        self._pool.clear()


# --------------------------------------------------------------------------- creating at once


@dataclass
class Created:
    """What `create_all` did: per object, when its request was written and when the reply came
    (time.monotonic), and the failures."""

    sent: list[float]
    done: list[float]
    failures: list[str] = field(default_factory=list)
    cpu_seconds: float = 0.0

    @property
    def first_sent(self) -> float:
        return min(self.sent)

    @property
    def last_done(self) -> float:
        return max(self.done)


async def create_all(api: RawApi, collection: str, bodies: Sequence[bytes], connections: int,
                     on_start: Callable[[], None] | None = None) -> Created:
    """POST every body to `collection` over `connections` keep-alive connections, each taking
    the next body as soon as its previous one is answered: all of them \"at once\", as fast as
    the API server takes them."""
    n = len(bodies)
    sent = [0.0] * n
    done = [0.0] * n
    failures: list[str] = []
    next_index = 0
    conns = [api.conn() for _ in range(max(1, min(connections, n)))]
    # Open (TLS handshakes) before the clock starts.
    await asyncio.gather(*(c._open() for c in conns))

    async def worker(conn: Conn) -> None:
        nonlocal next_index
        while next_index < n:
            i = next_index
            next_index += 1
            sent[i] = time.monotonic()
            try:
                reply = await conn.request("POST", collection, bodies[i])
            except (OSError, asyncio.IncompleteReadError) as exc:
                failures.append(f"#{i}: {type(exc).__name__}: {exc}")
                conn.close()
                continue
            done[i] = time.monotonic()
            if reply.status != 201:
                failures.append(f"#{i}: HTTP {reply.status}: {reply.body[:200].decode(errors='replace')}")

    cpu0 = time.process_time()
    if on_start is not None:
        on_start()
    try:
        await asyncio.gather(*(worker(c) for c in conns))
    finally:
        for c in conns:
            c.close()
    return Created(sent, done, failures, time.process_time() - cpu0)


# --------------------------------------------------------------------------- watching binds


class _Meta(msgspec.Struct):
    name: str = ""
    uid: str = ""
    resourceVersion: str = ""  # noqa: N815 - the API's spelling


class _Spec(msgspec.Struct):
    nodeName: str = ""  # noqa: N815


class _Object(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    spec: _Spec = msgspec.field(default_factory=_Spec)
    code: int = 0
    message: str = ""


class _Event(msgspec.Struct):
    type: str
    object: _Object


_decode_event = msgspec.json.Decoder(_Event).decode


@dataclass
class Binds:
    """Pods seen bound by the watch: name -> (node, time.monotonic() the event was read)."""

    expected: int
    bound: dict[str, tuple[str, float]] = field(default_factory=dict)
    #: Pods seen bound a second time to another node (never expected).
    rebound: list[str] = field(default_factory=list)
    events: int = 0
    restarts: int = 0
    all_bound: asyncio.Event = field(default_factory=asyncio.Event)
    #: Called once, when the first pod is seen bound.
    on_first: Callable[[], None] | None = None


async def watch_binds(api: RawApi, namespace: str, resource_version: str, binds: Binds,
                      opened: asyncio.Event) -> None:
    """Follow the pods of `namespace` that have a node (`spec.nodeName!=`): a pod enters that
    selection, as an ADDED event, the moment it is bound. Runs until cancelled; reconnects
    from the last version seen if the stream ends."""
    version = resource_version
    while True:
        params = {"watch": "1", "resourceVersion": version, "fieldSelector": "spec.nodeName!=",
                  "allowWatchBookmarks": "true", "timeoutSeconds": "3600"}
        target = f"/api/v1/namespaces/{namespace}/pods?{urlencode(params)}"
        conn = api.conn()
        try:
            async for line in conn.stream_lines(target, opened.set):
                now = time.monotonic()
                event = _decode_event(line)
                if event.type == "ERROR":
                    raise RawError(event.object.code or 500, "watch", event.object.message.encode())
                if event.object.metadata.resourceVersion:
                    version = event.object.metadata.resourceVersion
                if event.type not in ("ADDED", "MODIFIED"):
                    continue
                binds.events += 1
                name, node = event.object.metadata.name, event.object.spec.nodeName
                if not node:
                    continue
                seen = binds.bound.get(name)
                if seen is None:
                    binds.bound[name] = (node, now)
                    if len(binds.bound) == 1 and binds.on_first is not None:
                        binds.on_first()
                    if len(binds.bound) >= binds.expected:
                        binds.all_bound.set()
                elif seen[0] != node:
                    binds.rebound.append(f"{name}: {seen[0]} then {node}")
        except (OSError, asyncio.IncompleteReadError, ConnectionError):
            await asyncio.sleep(0.1)  # a broken stream: reconnect from `version`
        finally:
            conn.close()
        binds.restarts += 1


async def open_watch(api: RawApi, namespace: str, binds: Binds) -> asyncio.Task[None]:
    """Start `watch_binds` from the namespace's current version; return once the API server has
    answered the watch request (so nothing created afterwards can be missed)."""
    listing = await api.get(f"/api/v1/namespaces/{namespace}/pods", limit="1")
    version = listing["metadata"]["resourceVersion"]
    opened = asyncio.Event()
    task = asyncio.create_task(watch_binds(api, namespace, version, binds, opened))
    waiter = asyncio.create_task(opened.wait())
    await asyncio.wait({task, waiter}, timeout=30, return_when=asyncio.FIRST_COMPLETED)
    if not opened.is_set():
        waiter.cancel()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task  # re-raises what stopped the watch, if anything
        raise RawError(0, f"the watch of pods in {namespace} did not open")
    return task


# --------------------------------------------------------------------------- component endpoints


def client_context(cert: str, key: str) -> ssl.SSLContext:
    """TLS to a component's secure port (its self-signed serving certificate is not checked)
    with a client certificate."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.load_cert_chain(cert, key)
    return ctx
