"""An API server whose watches reach one client late: a loopback HTTP proxy to kube-apiserver
that passes every request and its answer at once, but each watch's events `delay` seconds
after they came, in order. Given to the extender as its kubeconfig, it makes the extender's
watch run behind kube-scheduler's, as a CPU-starved or far-away replica's does, while its
own calls (a bind, a list) are answered at once. The proxy speaks plain HTTP to the
extender and authenticates to kube-apiserver with the kubeconfig's client certificate."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from extender.kube.config import load_kubeconfig
from tests.polling import free_port

if TYPE_CHECKING:
    from tests.e2e.realcluster import Scenario

_HOP = {"host", "connection", "keep-alive", "transfer-encoding", "content-length",
        "content-encoding"}


class WatchLag:
    def __init__(self, kubeconfig: Path, delay: float) -> None:
        config = load_kubeconfig(str(kubeconfig))
        self.delay = delay
        self._upstream = httpx.AsyncClient(base_url=config.server, verify=config.ssl_context(),
                                           timeout=None, trust_env=False)
        self.port = free_port()
        app = Starlette(routes=[Route("/{path:path}", self._forward,
                                      methods=["GET", "POST", "PUT", "PATCH", "DELETE"])])
        self._server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port,
                                                     log_level="warning", lifespan="off"))
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    def __enter__(self) -> WatchLag:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            assert time.monotonic() < deadline, "the lagging proxy did not start"
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(10)

    def kubeconfig(self, target: Path) -> Path:
        """A kubeconfig that reaches the API server through this proxy."""
        target.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: lagged, cluster: {{server: "http://127.0.0.1:{self.port}"}}}}]
users: [{{name: lagged, user: {{}}}}]
contexts: [{{name: lagged, context: {{cluster: lagged, user: lagged}}}}]
current-context: lagged
""")
        return target

    async def _forward(self, request: Request) -> Response:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        headers["accept-encoding"] = "identity"  # the bytes pass as they come
        upstream = self._upstream.build_request(
            request.method, request.url.path, params=request.query_params.multi_items(),
            headers=headers, content=await request.body())
        answer = await self._upstream.send(upstream, stream=True)
        reply_headers = {k: v for k, v in answer.headers.items() if k.lower() not in _HOP}
        if request.query_params.get("watch") not in ("true", "1"):
            body = await answer.aread()
            await answer.aclose()
            return Response(body, answer.status_code, reply_headers)
        return StreamingResponse(self._late(answer), answer.status_code, reply_headers)

    async def _late(self, answer: httpx.Response) -> AsyncIterator[bytes]:
        queue: asyncio.Queue[tuple[float, bytes | None]] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        async def collect() -> None:
            try:
                async for chunk in answer.aiter_raw():
                    queue.put_nowait((loop.time() + self.delay, chunk))
            except httpx.HTTPError:
                pass
            finally:
                queue.put_nowait((loop.time() + self.delay, None))

        reader = asyncio.create_task(collect())
        try:
            while True:
                due, chunk = await queue.get()
                await asyncio.sleep(max(0.0, due - loop.time()))  # the lag itself
                if chunk is None:
                    return
                yield chunk
        finally:
            reader.cancel()
            await answer.aclose()


@contextmanager
def lagged(scenario: Scenario, tmp_path: Path, policy: str, *,
           delay: float = 3.0) -> Iterator[None]:
    """The scenario started (its extender with `policy`, and kube-scheduler) with the
    extender's watch `delay` seconds behind kube-scheduler's. The extender logs a line per
    request (`-v 4`), which a failing test can show (`Sandbox.log_tail`)."""
    with WatchLag(scenario.sandbox.state_dir / "extender.kubeconfig", delay=delay) as lag:
        scenario.start(policy=policy, extender_args=[
            "--kubeconfig", str(lag.kubeconfig(tmp_path / "lagged.kubeconfig")), "-v", "4"])
        yield
