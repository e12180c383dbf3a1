"""`extender serve` in process: its runtime built from command-line arguments, its app with
the lifespan on (informers, recorder, refresher), behind an async client."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx

from extender import serve
from extender.api.app import create_app
from extender.api.runtime import Runtime


def serve_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    serve.add_arguments(parser)
    return parser.parse_args(list(argv))


@asynccontextmanager
async def served(args: argparse.Namespace) -> AsyncIterator[tuple[httpx.AsyncClient, Runtime]]:
    """The app `extender serve` would run with `args`, its lifespan on, behind a client."""
    runtime = serve.build_runtime(args)
    app = create_app(runtime)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            yield client, runtime


async def eventually(check: Callable[[], Any], what: str, timeout: float = 20.0) -> None:
    """Poll `check()` on the running loop (letting the app's tasks run) until it holds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)
