"""TLS and mutual TLS for `extender serve`, with certificates reloaded when their files change.

kube-scheduler authenticates to an extender only with a client certificate (its `tlsConfig`
`certFile`/`keyFile`; it verifies the extender with `caFile`). The server side here:

* `server_ssl_context(cert, key, client_ca)` — TLS 1.2+; with `client_ca` the client must
  present a certificate signed by it (CERT_REQUIRED), else the handshake fails.
* `CertificateReloader(ctx, cert, key, client_ca)` — watches the three files. Each new handshake
  checks them (a few `stat` calls, at most once per `check_interval`); when they changed, a fresh
  context is loaded and the handshake is switched to it through the SNI callback, which OpenSSL
  runs for every ClientHello (with or without a server name). New connections get the new
  certificate *and* the new client CA; open connections keep theirs. A half-written rotation
  (key and certificate not matching yet) is logged and the old context kept until the files
  settle. `await reloader.run(interval)` also checks periodically, so a broken rotation shows in
  the logs before the next handshake.

How `serve` wires it into uvicorn (verified against uvicorn 0.54 in /work/venv)::

    config = uvicorn.Config(app, host=host, port=port, ...)   # no ssl_* arguments
    server = uvicorn.Server(config)
    configure_server_tls(server, runtime, cert, key, client_ca)   # before server.run()
    server.run()

`configure_server_tls` builds the context and the reloader, points `server.config` at the
context and appends a start-up hook to `runtime.startup` (run by the app's lifespan) that runs
`reloader.run()` in the background, and a shutdown hook that stops it. Without a Runtime, the
same in pieces::

    ctx = server_ssl_context(cert, key, client_ca)
    reloader = CertificateReloader(ctx, cert, key, client_ca)
    config = uvicorn.Config(app, ..., **uvicorn_ssl_options(ctx, cert, key, client_ca))
    install_ssl_context(config, ctx)   # config.load(), then config.ssl = ctx
    # ... and run `await reloader.run(30.0)` as a task next to `await server.serve()`

uvicorn builds its SSLContext inside `Config.load()` from file names; recent versions take an
`ssl_context_factory`, older ones do not. `uvicorn_ssl_options` passes the factory when the
installed uvicorn has it, else the file names (so uvicorn knows it serves https), and
`install_ssl_context` loads the config and puts our context in `config.ssl` — `Server.serve()`
skips `load()` for a loaded config and hands `config.ssl` to `loop.create_server`. Either way
the listening socket uses `ctx`, the context the reloader switches from.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import ssl
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

StrPath = str | os.PathLike[str]


def server_ssl_context(cert_file: StrPath, key_file: StrPath,
                       client_ca_file: StrPath | None = None) -> ssl.SSLContext:
    """A server context from PEM files; with `client_ca_file`, mutual TLS (CERT_REQUIRED)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2  # kube-scheduler (Go) speaks 1.2 and 1.3
    ctx.load_cert_chain(os.fspath(cert_file), os.fspath(key_file))
    if client_ca_file is not None:
        ctx.load_verify_locations(cafile=os.fspath(client_ca_file))
        ctx.verify_mode = ssl.CERT_REQUIRED
    # Only HTTP/1.1 is served; saying so keeps Go's client from attempting h2.
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx


def _fingerprint(paths: tuple[Path, ...]) -> tuple[tuple[int, int, int], ...] | None:
    """(inode, size, mtime) per file; Secret volumes swap a symlink, which changes the inode."""
    try:
        stats = [p.stat() for p in paths]
    except OSError:
        return None
    return tuple((s.st_ino, s.st_size, s.st_mtime_ns) for s in stats)


class CertificateReloader:
    """Serves the newest certificate (and client CA) found in the files behind `ctx`.

    Installs an SNI callback on `ctx`; keep using `ctx` as the server's context. The files'
    verify mode is fixed at start: a client CA cannot be added or removed by a reload.
    """

    def __init__(self, ctx: ssl.SSLContext, cert_file: StrPath, key_file: StrPath,
                 client_ca_file: StrPath | None = None, *, check_interval: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.front = ctx
        self.cert_file, self.key_file = Path(cert_file), Path(key_file)
        self.client_ca_file = Path(client_ca_file) if client_ca_file is not None else None
        self.check_interval = check_interval
        self._clock = clock
        self._paths = tuple(p for p in (self.cert_file, self.key_file, self.client_ca_file) if p)
        self._seen = _fingerprint(self._paths)
        self._checked_at = clock()
        self.current = ctx
        self.reloads = 0
        self.last_error: str | None = None
        ctx.sni_callback = self._on_client_hello

    def _on_client_hello(self, conn: ssl.SSLObject | ssl.SSLSocket, server_name: str | None,
                         ctx: ssl.SSLContext) -> None:
        try:
            if self._clock() - self._checked_at >= self.check_interval:
                self.reload_if_changed()
            if self.current is not self.front:
                conn.context = self.current
        except Exception:  # a failing callback would abort the handshake; keep serving
            log.exception("TLS certificate reload check failed")
        return None

    def reload_if_changed(self) -> bool:
        """Load a fresh context if any file changed; True when the served context was replaced."""
        self._checked_at = self._clock()
        seen = _fingerprint(self._paths)
        if seen is None or seen == self._seen:
            return False
        try:
            fresh = server_ssl_context(self.cert_file, self.key_file, self.client_ca_file)
        except (OSError, ssl.SSLError, ValueError) as exc:
            # Mid-rotation (new certificate, old key) or a broken file: keep the old context and
            # look again at the next check.
            if str(exc) != self.last_error:
                log.warning("TLS files changed but cannot be loaded, keeping the previous "
                            "certificate: %s", exc)
            self.last_error = str(exc)
            return False
        self._seen = seen
        self.current = fresh
        self.reloads += 1
        self.last_error = None
        log.info("TLS certificate reloaded from %s", self.cert_file)
        return True

    async def run(self, interval: float = 30.0) -> None:
        """Check the files every `interval` seconds until cancelled."""
        while True:
            await asyncio.sleep(interval)
            self.reload_if_changed()


def uvicorn_ssl_options(ctx: ssl.SSLContext, cert_file: StrPath, key_file: StrPath,
                        client_ca_file: StrPath | None = None) -> dict[str, Any]:
    """Keyword arguments for `uvicorn.Config` that make it serve https with `ctx`."""
    import uvicorn

    if "ssl_context_factory" in inspect.signature(uvicorn.Config.__init__).parameters:
        return {"ssl_context_factory": lambda config, default_factory: ctx}
    options: dict[str, Any] = {"ssl_certfile": os.fspath(cert_file),
                               "ssl_keyfile": os.fspath(key_file)}
    if client_ca_file is not None:
        options.update(ssl_ca_certs=os.fspath(client_ca_file), ssl_cert_reqs=ssl.CERT_REQUIRED)
    return options


def install_ssl_context(config: Any, ctx: ssl.SSLContext) -> None:
    """Load a `uvicorn.Config` and make `ctx` its listening context (call before serve())."""
    if not config.loaded:
        config.load()
    config.ssl = ctx


def configure_server_tls(server: Any, runtime: Any, cert_file: StrPath | None,
                         key_file: StrPath | None, client_ca_file: StrPath | None = None, *,
                         interval: float = 30.0, check_interval: float = 1.0,
                         ) -> CertificateReloader:
    """Make a not-yet-started `uvicorn.Server` serve TLS (mutual TLS with `client_ca_file`),
    reloading the files; the periodic check runs through `runtime.startup`/`runtime.shutdown`.

    Raises ValueError for an incomplete set of files and OSError (ssl.SSLError included) for
    files that cannot be loaded.
    """
    _require_pair(cert_file, key_file, client_ca_file)
    ctx = server_ssl_context(cert_file, key_file, client_ca_file)
    reloader = CertificateReloader(ctx, cert_file, key_file, client_ca_file,
                                   check_interval=check_interval)
    config = server.config
    for name, value in uvicorn_ssl_options(ctx, cert_file, key_file, client_ca_file).items():
        setattr(config, name, value)  # what uvicorn.Config(...) would have stored
    install_ssl_context(config, ctx)
    tasks: list[asyncio.Task[None]] = []

    async def start() -> None:
        tasks.append(asyncio.create_task(reloader.run(interval), name="tls-reloader"))

    async def stop() -> None:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    runtime.startup.append(start)
    runtime.shutdown.append(stop)
    return reloader


def _require_pair(cert: Any, key: Any, client_ca: Any) -> None:
    if not cert or not key:
        raise ValueError("--tls-cert-file and --tls-private-key-file must be given together"
                         + (" (--client-ca-file needs them)" if client_ca else ""))
