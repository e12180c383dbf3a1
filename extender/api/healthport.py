"""`serve --health-port`: `/healthz`, `/livez` and `/readyz` over plain HTTP on a second
listener (`?verbose` lists the checks, as on the main port), and `/metrics` unless the main
port asks clients for a certificate.

Under mutual TLS the kubelet's probes and a container's HEALTHCHECK present no client
certificate, so they cannot reach the main port, while `/metrics` stays behind it (served
here it would bypass the client certificate Prometheus is given); in the sidecar layout the
main port listens on loopback only, and Prometheus scrapes this one. It answers only these
read-only endpoints (never a scheduler verb, so it grants nothing), on the same event loop: a
stalled loop fails the probe, as it should.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.applications import Starlette
from starlette.routing import Route

from extender.api import health
from extender.api.protocol import ConnectionLimits, guarded_protocol
from extender.api.runtime import Runtime


def health_app(runtime: Runtime, metrics: bool = True) -> Starlette:
    routes = [Route("/healthz", health.healthz, methods=["GET"]),
              Route("/livez", health.livez, methods=["GET"]),
              Route("/readyz", health.readyz, methods=["GET"])]
    if metrics:
        routes.append(Route("/metrics", health.metrics_route, methods=["GET"]))
    app = Starlette(routes=routes)
    app.state.runtime = runtime
    return app


class HealthListener:
    """Serves `health_app` on host:port once `start()` runs on the server's loop."""

    def __init__(self, runtime: Runtime, host: str, port: int,
                 limits: ConnectionLimits | None = None, metrics: bool = True) -> None:
        self.runtime, self.host, self.port, self.metrics = runtime, host, port, metrics
        self.limits = limits or ConnectionLimits(header_timeout=5.0, max_connections=64)
        self._server: asyncio.base_events.Server | None = None
        self._connections: set[Any] = set()

    async def start(self) -> None:
        import uvicorn
        from uvicorn.server import ServerState

        config = uvicorn.Config(health_app(self.runtime, self.metrics), host=self.host,
                                port=self.port,
                                http=guarded_protocol(self.limits, "health"), lifespan="off",
                                access_log=False, log_config=None, timeout_keep_alive=5,
                                proxy_headers=False)
        config.load()
        state = ServerState()
        self._connections = state.connections
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            lambda: config.http_protocol_class(config=config, server_state=state, app_state={}),
            host=self.host, port=self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is None:
            return
        self._server.close()
        for connection in list(self._connections):
            connection.shutdown()
        await self._server.wait_closed()
        self._server = None
