"""TLS and mutual TLS on a real uvicorn server (loopback only), wired as `serve` must wire it."""

from __future__ import annotations

import asyncio
import http.client
import os
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest
import trustme
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from extender.ops.tls import (
    CertificateReloader,
    configure_server_tls,
    install_ssl_context,
    server_ssl_context,
    uvicorn_ssl_options,
)
from tests.conftest import FIXTURE_CASES, fixture_bytes, scheduler_verb_paths
from tests.polling import free_port, until

ROOT = Path(__file__).resolve().parents[2]

LOOPS = ["asyncio"] + (["uvloop"] if __import__("importlib").util.find_spec("uvloop") else [])


def _app(runtime: SimpleNamespace) -> Starlette:
    """A stand-in for extender.api.app: its lifespan runs the runtime's hooks the same way."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        for start in runtime.startup:
            await start()
        yield
        for stop in runtime.shutdown:
            await stop()

    async def healthz(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    return Starlette(lifespan=lifespan, routes=[Route("/healthz", healthz)])


class SecretDir:
    """Files laid out as the kubelet writes a Secret volume: `name -> ..data/name`, and
    `..data -> ..<generation>`, swapped atomically on every update."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.generation = 0

    def write(self, files: dict[str, bytes]) -> None:
        self.generation += 1
        target = self.root / f"..gen{self.generation}"
        target.mkdir()
        for name, data in files.items():
            (target / name).write_bytes(data)
        link = self.root / "..data_tmp"
        link.symlink_to(target.name)
        os.replace(link, self.root / "..data")
        for name in files:
            visible = self.root / name
            if not visible.is_symlink():
                visible.symlink_to(f"..data/{name}")

    def path(self, name: str) -> Path:
        return self.root / name


def _server_files(cert: trustme.LeafCert, client_ca: trustme.CA) -> dict[str, bytes]:
    return {"tls.crt": b"".join(blob.bytes() for blob in cert.cert_chain_pems),
            "tls.key": cert.private_key_pem.bytes(),
            "client-ca.crt": client_ca.cert_pem.bytes()}


@pytest.fixture
def pki(tmp_path: Path) -> dict:
    ca = trustme.CA()
    client_ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1")
    secret = SecretDir(tmp_path)
    secret.write(_server_files(server, client_ca))
    return {"ca": ca, "client_ca": client_ca, "server": server, "secret": secret}


@contextmanager
def serving(secret: SecretDir, *, mutual: bool = True, loop: str = "asyncio",
            check_interval: float = 0.0,
            interval: float = 30.0) -> Iterator[tuple[int, CertificateReloader]]:
    """A uvicorn server configured as `serve` configures it, on a pre-bound loopback socket."""
    runtime = SimpleNamespace(startup=[], shutdown=[])
    config = uvicorn.Config(_app(runtime), loop=loop, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    reloader = configure_server_tls(
        server, runtime, secret.path("tls.crt"), secret.path("tls.key"),
        secret.path("client-ca.crt") if mutual else None,
        interval=interval, check_interval=check_interval)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])),
                              daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "server did not start"
        time.sleep(0.01)
    try:
        yield port, reloader
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def _client_context(ca: trustme.CA, cert: trustme.LeafCert | None = None) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ca.configure_trust(ctx)
    if cert is not None:
        cert.configure_cert(ctx)
    return ctx


def _get(port: int, ctx: ssl.SSLContext) -> tuple[int, bytes]:
    """GET /healthz; returns the status and the DER certificate the server presented."""
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=5)
    try:
        conn.request("GET", "/healthz")
        response = conn.getresponse()
        response.read()
        assert conn.sock is not None
        return response.status, conn.sock.getpeercert(binary_form=True)
    finally:
        conn.close()


def _der(cert: trustme.LeafCert) -> bytes:
    return ssl.PEM_cert_to_DER_cert(cert.cert_chain_pems[0].bytes().decode())


@pytest.mark.parametrize("loop", LOOPS)
def test_client_certificate_signed_by_the_client_ca_gets_200(pki: dict, loop: str) -> None:
    client = pki["client_ca"].issue_cert("kube-scheduler")
    with serving(pki["secret"], loop=loop) as (port, _):
        status, der = _get(port, _client_context(pki["ca"], client))
    assert status == 200
    assert der == _der(pki["server"])


@pytest.mark.parametrize("loop", LOOPS)
def test_client_without_certificate_is_refused(pki: dict, loop: str) -> None:
    with serving(pki["secret"], loop=loop) as (port, _):
        with pytest.raises(OSError):  # ssl.SSLError or a reset, depending on the TLS version
            _get(port, _client_context(pki["ca"]))
        # and the server is still up for a proper client
        client = pki["client_ca"].issue_cert("kube-scheduler")
        assert _get(port, _client_context(pki["ca"], client))[0] == 200


def test_client_certificate_from_another_ca_is_refused(pki: dict) -> None:
    stranger = trustme.CA().issue_cert("kube-scheduler")
    with serving(pki["secret"]) as (port, _):
        with pytest.raises(OSError):
            _get(port, _client_context(pki["ca"], stranger))


def test_tls_without_client_ca_accepts_any_client(pki: dict) -> None:
    with serving(pki["secret"], mutual=False) as (port, _):
        assert _get(port, _client_context(pki["ca"]))[0] == 200


@pytest.mark.parametrize("loop", LOOPS)
def test_rotated_server_certificate_is_served_to_new_connections(pki: dict, loop: str) -> None:
    client = pki["client_ca"].issue_cert("kube-scheduler")
    renewed = pki["ca"].issue_cert("127.0.0.1")
    with serving(pki["secret"], loop=loop) as (port, reloader):
        assert _get(port, _client_context(pki["ca"], client))[1] == _der(pki["server"])
        pki["secret"].write(_server_files(renewed, pki["client_ca"]))
        status, der = _get(port, _client_context(pki["ca"], client))
        assert status == 200
        assert der == _der(renewed)
        assert reloader.reloads == 1


def test_rotated_client_ca_replaces_the_old_one(pki: dict) -> None:
    old_client = pki["client_ca"].issue_cert("kube-scheduler")
    new_ca = trustme.CA()
    new_client = new_ca.issue_cert("kube-scheduler")
    with serving(pki["secret"]) as (port, _):
        assert _get(port, _client_context(pki["ca"], old_client))[0] == 200
        pki["secret"].write(_server_files(pki["server"], new_ca))
        assert _get(port, _client_context(pki["ca"], new_client))[0] == 200
        with pytest.raises(OSError):
            _get(port, _client_context(pki["ca"], old_client))


def test_half_written_rotation_keeps_the_old_certificate(pki: dict) -> None:
    client = pki["client_ca"].issue_cert("kube-scheduler")
    renewed = pki["ca"].issue_cert("127.0.0.1")
    secret: SecretDir = pki["secret"]
    with serving(secret) as (port, reloader):
        # new certificate, old key: an updater that writes file by file, caught in between
        files = _server_files(renewed, pki["client_ca"])
        files["tls.key"] = pki["server"].private_key_pem.bytes()
        secret.write(files)
        status, der = _get(port, _client_context(pki["ca"], client))
        assert (status, der) == (200, _der(pki["server"]))
        assert reloader.last_error is not None
        secret.write(_server_files(renewed, pki["client_ca"]))
        assert _get(port, _client_context(pki["ca"], client))[1] == _der(renewed)
        assert reloader.last_error is None


def test_handshakes_check_the_files_at_most_once_per_interval(pki: dict) -> None:
    now = [100.0]
    secret: SecretDir = pki["secret"]
    cert, key, ca = secret.path("tls.crt"), secret.path("tls.key"), secret.path("client-ca.crt")
    ctx = server_ssl_context(cert, key, ca)
    reloader = CertificateReloader(ctx, cert, key, ca, check_interval=5.0, clock=lambda: now[0])
    secret.write(_server_files(pki["ca"].issue_cert("127.0.0.1"), pki["client_ca"]))

    class FakeConnection:
        context = ctx

    conn = FakeConnection()
    reloader._on_client_hello(conn, None, ctx)  # type: ignore[arg-type]
    assert reloader.reloads == 0 and conn.context is ctx
    now[0] += 5.0
    reloader._on_client_hello(conn, None, ctx)  # type: ignore[arg-type]
    assert reloader.reloads == 1 and conn.context is reloader.current is not ctx


def test_run_reloads_periodically_without_handshakes(pki: dict) -> None:
    secret: SecretDir = pki["secret"]
    cert, key = secret.path("tls.crt"), secret.path("tls.key")
    reloader = CertificateReloader(server_ssl_context(cert, key), cert, key, check_interval=3600)
    secret.write(_server_files(pki["ca"].issue_cert("127.0.0.1"), pki["client_ca"]))

    async def watch() -> None:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(reloader.run(0.01), 0.3)

    asyncio.run(watch())
    assert reloader.reloads == 1


def test_periodic_check_runs_from_the_runtime_hooks(pki: dict) -> None:
    client = pki["client_ca"].issue_cert("kube-scheduler")
    renewed = pki["ca"].issue_cert("127.0.0.1")
    # handshakes never look (check_interval 1h): only the background task can reload
    with serving(pki["secret"], check_interval=3600, interval=0.02) as (port, reloader):
        pki["secret"].write(_server_files(renewed, pki["client_ca"]))
        deadline = time.monotonic() + 5
        while reloader.reloads == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert reloader.reloads == 1
        assert _get(port, _client_context(pki["ca"], client))[1] == _der(renewed)


def test_pieces_without_a_runtime(pki: dict) -> None:
    """The lower-level recipe: options for uvicorn.Config, then install the context."""
    secret: SecretDir = pki["secret"]
    cert, key, ca = secret.path("tls.crt"), secret.path("tls.key"), secret.path("client-ca.crt")
    ctx = server_ssl_context(cert, key, ca)
    config = uvicorn.Config(_app(SimpleNamespace(startup=[], shutdown=[])),
                            **uvicorn_ssl_options(ctx, cert, key, ca))
    install_ssl_context(config, ctx)
    assert config.loaded and config.ssl is ctx and config.is_ssl
    assert ctx.verify_mode == ssl.CERT_REQUIRED
    assert ctx.minimum_version == ssl.TLSVersion.TLSv1_2


@pytest.mark.parametrize(("cert", "key", "ca"), [("a.crt", None, None), (None, None, "ca.crt")])
def test_incomplete_files_are_rejected(cert: str | None, key: str | None, ca: str | None) -> None:
    server = uvicorn.Server(uvicorn.Config(Starlette()))
    with pytest.raises(ValueError, match="--tls-cert-file and --tls-private-key-file"):
        configure_server_tls(server, SimpleNamespace(startup=[], shutdown=[]), cert, key, ca)


def test_unreadable_files_are_an_os_error(tmp_path: Path) -> None:
    (tmp_path / "bad.crt").write_text("not a certificate")
    server = uvicorn.Server(uvicorn.Config(Starlette()))
    with pytest.raises(OSError):  # ssl.SSLError is an OSError
        configure_server_tls(server, SimpleNamespace(startup=[], shutdown=[]),
                             tmp_path / "bad.crt", tmp_path / "bad.crt")


@pytest.mark.slow
def test_real_serve_process_with_mutual_tls(pki: dict) -> None:
    """`serve --tls-*` end to end on the default demo state, certificate rotation included."""
    secret: SecretDir = pki["secret"]
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "extender", "serve", "--host", "127.0.0.1", "--port", str(port),
         "--tls-cert-file", str(secret.path("tls.crt")), "--tls-key-file",
         str(secret.path("tls.key")), "--tls-client-ca-file", str(secret.path("client-ca.crt"))],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    client = pki["client_ca"].issue_cert("kube-scheduler")
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, process.stdout.read().decode()  # type: ignore[union-attr]
            try:
                status, der = _get(port, _client_context(pki["ca"], client))
                break
            except ConnectionRefusedError:
                assert time.monotonic() < deadline, "serve did not start listening"
                time.sleep(0.1)
        assert (status, der) == (200, _der(pki["server"]))
        # kube-scheduler configured from config/scheduler-config-tls.yaml reaches every verb.
        paths = scheduler_verb_paths("scheduler-config-tls.yaml")
        for verb, request_file, _ in FIXTURE_CASES:
            conn = http.client.HTTPSConnection(
                "127.0.0.1", port, context=_client_context(pki["ca"], client), timeout=5)
            try:
                conn.request("POST", paths[verb], body=fixture_bytes(request_file),
                             headers={"Content-Type": "application/json"})
                response = conn.getresponse()
                assert response.status == 200, (verb, response.read())
                assert response.read()
            finally:
                conn.close()
        with pytest.raises(OSError):
            _get(port, _client_context(pki["ca"]))
        renewed = pki["ca"].issue_cert("127.0.0.1")
        secret.write(_server_files(renewed, pki["client_ca"]))
        # serve checks the files at most once a second per handshake: a new handshake soon
        # presents the renewed certificate.
        until(lambda: _get(port, _client_context(pki["ca"], client)) == (200, _der(renewed)),
              what="the renewed certificate", timeout=10, interval=0.1)
    finally:
        process.terminate()
        process.wait(10)


def test_dockerfile_healthcheck_passes_against_mutual_tls(pki: dict) -> None:
    """The image's HEALTHCHECK, run as Docker runs it, against `serve` with mutual TLS: it
    probes the plain health port, so no client certificate is needed; the verbs stay behind
    mutual TLS."""
    from tests.ops.test_dockerfile import healthcheck_command

    secret: SecretDir = pki["secret"]
    port, health_port = free_port(), free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "extender", "serve", "--host", "127.0.0.1", "--port", str(port),
         "--health-port", str(health_port), "--tls-cert-file", str(secret.path("tls.crt")),
         "--tls-key-file", str(secret.path("tls.key")),
         "--tls-client-ca-file", str(secret.path("client-ca.crt"))],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    command = [sys.executable if part == "python" else part.replace(":8081/", f":{health_port}/")
               for part in healthcheck_command()]
    try:
        deadline = time.monotonic() + 30
        while subprocess.run(command, capture_output=True, timeout=10).returncode != 0:
            assert process.poll() is None, process.stdout.read().decode()  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "the HEALTHCHECK never passed"
            time.sleep(0.2)
        with pytest.raises(OSError):  # the main port still demands a client certificate
            _get(port, _client_context(pki["ca"]))
        client = pki["client_ca"].issue_cert("kube-scheduler")
        assert _get(port, _client_context(pki["ca"], client))[0] == 200
        # /metrics stays behind the client certificate: the plain port does not serve it.
        plain = http.client.HTTPConnection("127.0.0.1", health_port, timeout=10)
        plain.request("GET", "/metrics")
        response = plain.getresponse()
        response.read()
        assert response.status == 404
        plain.request("GET", "/readyz")
        assert plain.getresponse().read() == b"ok"
        plain.close()
    finally:
        process.terminate()
        process.wait(10)
