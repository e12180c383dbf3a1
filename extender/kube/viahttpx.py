"""The httpx side of `KubeClient`: used only where a proxy applies (or with `lean=False`), so
it is imported only then (httpx, with the rich and click its command line imports, is about a
sixth of the extender's start-up)."""

from __future__ import annotations

import logging
import ssl
from collections.abc import AsyncGenerator, Generator
from typing import TYPE_CHECKING, Protocol

import httpx

if TYPE_CHECKING:
    from extender.kube.config import ClusterConfig, TokenSource
    from extender.kube.exec import Credential, ExecPlugin


class ExecCredentials(Protocol):
    """The exec plugin's credentials as `client.ExecCredentials` gives them."""

    plugin: ExecPlugin

    def get(self) -> Credential: ...

    async def aget(self) -> Credential: ...

log = logging.getLogger("extender.kube.client")

#: Four long-lived watches plus lists and concurrent binds.
LIMITS = httpx.Limits(max_connections=64, max_keepalive_connections=16)


class BearerAuth(httpx.Auth):
    """Bearer token read at every request, so a rotated token file is picked up.

    On a 401 the file is re-read at once and the request sent once more: the token may
    have been rotated between our read and the server's check.
    """

    def __init__(self, tokens: TokenSource) -> None:
        self.tokens = tokens

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        token = self.tokens.get()
        if token:
            request.headers["Authorization"] = f"Bearer {token}"
        response = yield request
        if response.status_code == 401 and self.tokens.rotates and self.tokens.refresh():
            request.headers["Authorization"] = f"Bearer {self.tokens.get()}"
            yield request


class ExecAuth(httpx.Auth):
    """The exec plugin's credential (`ExecCredentials`) on each request; on a 401 the
    credential that was sent is discarded, and the request is sent once more with a new one
    (client-go refreshes on a 401 too, for the next request)."""

    def __init__(self, credentials: ExecCredentials) -> None:
        self.credentials = credentials

    @staticmethod
    def _apply(request: httpx.Request, cred: Credential) -> None:
        if cred.token:
            request.headers["Authorization"] = f"Bearer {cred.token}"
        else:
            request.headers.pop("Authorization", None)

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        cred = self.credentials.get()
        self._apply(request, cred)
        response = yield request
        if response.status_code == 401:
            self.credentials.plugin.invalidate(cred)
            fresh = self.credentials.get()
            if fresh is not cred:
                self._apply(request, fresh)
                yield request

    async def async_auth_flow(self, request: httpx.Request,
                              ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        cred = await self.credentials.aget()
        self._apply(request, cred)
        response = yield request
        if response.status_code == 401:
            self.credentials.plugin.invalidate(cred)
            fresh = await self.credentials.aget()
            if fresh is not cred:
                self._apply(request, fresh)
                yield request


def make_client(config: ClusterConfig, ctx: ssl.SSLContext | None, *,
                credentials: ExecCredentials | None, tokens: TokenSource | None,
                timeout: float, headers: dict[str, str],
                transport: httpx.AsyncBaseTransport | None, trust_env: bool) -> httpx.AsyncClient:
    """The `httpx.AsyncClient` for `config`, authorised by the exec plugin's `credentials`
    or else by `tokens`."""
    auth: httpx.Auth
    if credentials is not None:
        auth = ExecAuth(credentials)
    else:
        assert tokens is not None
        auth = BearerAuth(tokens)
    return httpx.AsyncClient(
        base_url=config.server, verify=ctx if ctx is not None else True, auth=auth,
        timeout=timeout, headers=headers, transport=transport, proxy=config.proxy_url,
        trust_env=trust_env, limits=LIMITS)


async def close_idle(http: httpx.AsyncClient) -> None:
    """Close the client's idle pooled connections (they presented an old client certificate):
    best effort, the next handshake presents the new one either way."""
    pool = getattr(getattr(http, "_transport", None), "_pool", None)
    for connection in list(getattr(pool, "connections", ())):
        try:
            if connection.is_idle():
                await connection.aclose()
        except Exception as exc:
            log.debug("could not close an idle connection: %s", exc)
