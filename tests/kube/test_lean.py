"""`LeanPool` and `KubeClient`'s use of it, against hand-made servers on loopback: what an
answer may look like (chunked, `Connection: close`), what a broken one does (dropped, garbled,
an idle connection the server closed), connection reuse, and when httpx is used instead."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import yaml

from extender.kube import lean as lean_module
from extender.kube.client import KubeClient, TransportError
from extender.kube.config import load_kubeconfig
from extender.kube.lean import Dropped, LeanPool, lean_target
from extender.model import k8s

pytestmark = pytest.mark.anyio

OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"


class Server:
    """Answers each request with what `answer(request_head)` returns (None: drop the
    connection); counts connections and keeps the request heads."""

    def __init__(self, answer: Callable[[bytes], bytes | None]) -> None:
        self.answer = answer
        self.connections = 0
        self.heads: list[bytes] = []
        self.writers: list[asyncio.StreamWriter] = []
        self.port = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.writers.append(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                if length:
                    await reader.readexactly(length)
                self.heads.append(head)
                reply = self.answer(head)
                if reply is None:
                    break
                writer.write(reply)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@asynccontextmanager
async def serving(answer: Callable[[bytes], bytes | None]) -> AsyncIterator[Server]:
    server = Server(answer)
    listening = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    server.port = listening.sockets[0].getsockname()[1]
    try:
        yield server
    finally:
        listening.close()
        for writer in server.writers:
            writer.close()


def kubeconfig(tmp_path: Path, server: str, **cluster: str) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": server, **cluster}}],
        "users": [{"name": "u", "user": {"token": "secret"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
    return path


async def test_sequential_calls_share_one_connection() -> None:
    async with serving(lambda head: OK) as server:
        pool = LeanPool("127.0.0.1", server.port, None)
        replies = [await pool.request(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 5) for _ in range(5)]
        assert {(r.status_code, r.content) for r in replies} == {(200, b"{}")}
        assert server.connections == 1
        assert (pool.open_connections, pool.idle_connections) == (1, 1)
        pool.close()
        assert pool.open_connections == 0


async def test_a_chunked_answer_is_joined_and_connection_close_is_obeyed() -> None:
    chunked = (b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
               b"5\r\n{\"a\":\r\n3\r\n 1}\r\n0\r\n\r\n")
    async with serving(lambda head: chunked) as server:
        pool = LeanPool("127.0.0.1", server.port, None)
        first = await pool.request(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 5)
        assert (first.status_code, first.content) == (404, b'{"a": 1}')
        assert pool.open_connections == 0  # the server said it closes: not kept
        await pool.request(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 5)
        assert server.connections == 2


@pytest.mark.parametrize(("reply", "message"), [
    (b"", "closed"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{\"a\"", "closed"),
    (b"SMTP ready\r\n\r\n", "unreadable response"),
], ids=["dropped", "cut short", "not http"])
async def test_a_broken_answer_fails_the_call_and_loses_the_connection(
        reply: bytes, message: str) -> None:
    """Each broken answer is followed by the server closing (where the client could not tell
    otherwise); the next call gets a new connection and a good answer."""
    def answer(head: bytes) -> bytes | None:
        if b"/broken" not in head:
            return OK
        for writer in server.writers[-1:]:
            writer.write(reply)
        return None  # and close

    async with serving(answer) as server:
        pool = LeanPool("127.0.0.1", server.port, None)
        with pytest.raises(Dropped, match=message):
            await pool.request(b"GET /broken HTTP/1.1\r\nHost: x\r\n\r\n", 5)
        assert pool.open_connections == 0
        ok = await pool.request(b"GET /fine HTTP/1.1\r\nHost: x\r\n\r\n", 5)
        assert ok.status_code == 200 and server.connections == 2


async def test_an_idle_connection_the_server_closed_is_not_used() -> None:
    async with serving(lambda head: OK) as server:
        pool = LeanPool("127.0.0.1", server.port, None)
        await pool.request(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 5)
        for writer in server.writers:  # the API server ends an idle keep-alive connection
            writer.close()
        async with asyncio.timeout(5):
            while pool._idle and not pool._idle[0].closed:
                await asyncio.sleep(0.01)
        assert (await pool.request(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 5)).status_code == 200
        assert server.connections == 2


async def test_an_expired_idle_connection_is_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lean_module, "KEEPALIVE_EXPIRY", 0.0)
    async with serving(lambda head: OK) as server:
        pool = LeanPool("127.0.0.1", server.port, None)
        for _ in range(3):
            await pool.request(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 5)
        assert server.connections == 3 and pool.open_connections == 1


async def test_a_call_waits_for_a_free_slot_within_its_timeout() -> None:
    async with serving(lambda head: OK) as server:
        pool = LeanPool("127.0.0.1", server.port, None, max_connections=1)
        holder = asyncio.ensure_future(pool._slots.acquire())
        await holder
        with pytest.raises(TimeoutError):
            await pool.request(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 0.2)
        pool._slots.release()
        assert (await pool.request(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 5)).status_code == 200
        assert server.connections == 1


async def test_the_client_sends_its_prefix_host_and_token(tmp_path: Path) -> None:
    pod = (b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default",'
           b'"uid":"u1","resourceVersion":"7"},"spec":{"containers":[]}}')
    reply = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(pod), pod)
    async with serving(lambda head: reply) as server:
        url = f"http://127.0.0.1:{server.port}/k8s/clusters/c-1/"
        async with KubeClient(load_kubeconfig(kubeconfig(tmp_path, url)), trust_env=False) as client:
            got = await client.get_pod("default", "p")
            await client.list("/api/v1/pods", k8s.Pod, field_selector="spec.nodeName=")
    assert got.metadata.uid == "u1"
    first, second = (head.split(b"\r\n") for head in server.heads)
    assert first[0] == b"GET /k8s/clusters/c-1/api/v1/namespaces/default/pods/p HTTP/1.1"
    assert f"Host: 127.0.0.1:{server.port}".encode() in first
    assert b"Authorization: Bearer secret" in first
    assert second[0] == (b"GET /k8s/clusters/c-1/api/v1/pods?limit=500&fieldSelector=spec.nodeName%3D"
                         b" HTTP/1.1")


async def test_a_dropped_answer_is_a_transport_error(tmp_path: Path) -> None:
    async with serving(lambda head: None) as server:
        url = f"http://127.0.0.1:{server.port}"
        async with KubeClient(load_kubeconfig(kubeconfig(tmp_path, url)), trust_env=False) as client:
            with pytest.raises(TransportError, match="GET /api/v1/nodes: Dropped"):
                await client.list("/api/v1/nodes", k8s.Node)


@pytest.mark.parametrize(("server", "expected"), [
    ("https://10.0.0.1:6443", ("10.0.0.1", 6443, "", "10.0.0.1:6443")),
    ("https://api.example.com/k8s/clusters/c-1/", ("api.example.com", 443, "/k8s/clusters/c-1",
                                                   "api.example.com")),
    ("http://[::1]:8080", ("::1", 8080, "", "[::1]:8080")),
    ("http://localhost", ("localhost", 80, "", "localhost")),
])
def test_where_the_lean_pool_connects(tmp_path: Path, server: str,
                                      expected: tuple[str, int, str, str]) -> None:
    assert lean_target(load_kubeconfig(kubeconfig(tmp_path, server)).server) == expected


async def test_a_proxy_sends_every_call_through_httpx(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    plain = load_kubeconfig(kubeconfig(tmp_path, "https://10.0.0.1:6443"))
    proxied = load_kubeconfig(kubeconfig(tmp_path, "https://10.0.0.1:6443",
                                         **{"proxy-url": "http://proxy:3128"}))
    monkeypatch.delenv("HTTPS_PROXY", raising=False)
    monkeypatch.delenv("https_proxy", raising=False)
    monkeypatch.delenv("ALL_PROXY", raising=False)
    monkeypatch.delenv("all_proxy", raising=False)
    async with KubeClient(plain) as client:
        assert client._lean_target is not None
    async with KubeClient(proxied) as client:
        assert client._lean_target is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    async with KubeClient(plain) as client:
        assert client._lean_target is None
    async with KubeClient(plain, trust_env=False) as client:
        assert client._lean_target is not None


def _chunked(pieces: list[bytes]) -> bytes:
    body = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces)
    return b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body + b"0\r\n\r\n"


async def test_a_stream_gives_every_chunk_in_order_and_stops_reading_while_unread() -> None:
    pieces = [b'{"n":%d}\n' % i for i in range(500)]
    async with serving(lambda head: _chunked(pieces)) as server:
        pool = LeanPool("127.0.0.1", server.port, None)
        stream = await pool.stream(b"GET /watch HTTP/1.1\r\nHost: x\r\n\r\n", 5)
        assert stream.status == 200
        connection = stream._connection
        async with asyncio.timeout(5):  # nothing read yet: the connection stops reading
            while not connection.paused:
                await asyncio.sleep(0.01)
        assert len(connection.chunks) >= lean_module.STREAM_BUFFER
        got = [chunk async for chunk in stream.chunks(5)]
        assert b"".join(got) == b"".join(pieces) and not connection.paused
        stream.close()
        assert pool.open_connections == 0


async def test_a_silent_stream_times_out_and_closes() -> None:
    head_only = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    async with serving(lambda head: head_only) as server:
        pool = LeanPool("127.0.0.1", server.port, None)
        stream = await pool.stream(b"GET /watch HTTP/1.1\r\nHost: x\r\n\r\n", 5)
        with pytest.raises(TimeoutError):
            async for _ in stream.chunks(0.2):
                pass
        stream.close()
        assert pool.open_connections == 0


async def test_a_stream_cut_short_is_dropped() -> None:
    def cut(head: bytes) -> bytes | None:
        server.writers[-1].write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                 b"3\r\nabc\r\n")
        return None  # and close before the last chunk

    async with serving(cut) as server:
        pool = LeanPool("127.0.0.1", server.port, None)
        stream = await pool.stream(b"GET /watch HTTP/1.1\r\nHost: x\r\n\r\n", 5)
        got = []
        with pytest.raises(Dropped, match="closed"):
            async for chunk in stream.chunks(5):
                got.append(chunk)
        assert got == [b"abc"]
        stream.close()
