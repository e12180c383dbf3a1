"""The FastAPI application. Routes are thin: decode the wire, call the engine, encode."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from extender import __version__
from extender.api import bind, explain, filter, health, preempt, prioritize
from extender.api.runtime import Runtime
from extender.api.verb import verb_route

VERBS = {
    "filter": filter,
    "prioritize": prioritize,
    "preempt": preempt,
    "bind": bind,
}


def create_app(runtime: Runtime, *, floor_endpoint: bool = False) -> FastAPI:
    recorder = getattr(runtime, "recorder", None)  # `serve --record`

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if recorder is not None:
            recorder.start()
        for start in runtime.startup:
            await start()
        try:
            yield
        finally:
            for stop in runtime.shutdown:
                await stop()
            runtime.offload.close()
            if recorder is not None:
                recorder.close()

    app = FastAPI(title="kube-scheduler extender", version=__version__, lifespan=lifespan,
                  docs_url=None, redoc_url=None)
    app.state.runtime = runtime
    for verb, module in VERBS.items():
        # Raw routes: FastAPI's body parsing and response encoding cost too much at 5000 nodes.
        # bind is small and awaits the API server: it always runs on the loop.
        app.add_route(f"/{verb}", verb_route(verb, module.handle, module.error_reply,
                                             needs_ready=verb != "bind", offload=verb != "bind",
                                             recorder=recorder),
                      methods=["POST"])
    # Not a scheduler verb: an operator's "why not this node" (a filter body, read-only).
    app.add_route("/explain", verb_route("explain", explain.handle, explain.error_reply,
                                         recorder=recorder),
                  methods=["POST"])
    app.add_route("/healthz", health.healthz, methods=["GET"])
    app.add_route("/livez", health.livez, methods=["GET"])
    app.add_route("/readyz", health.readyz, methods=["GET"])
    app.add_route("/version", health.version, methods=["GET"])
    app.add_route("/metrics", health.metrics_route, methods=["GET"])
    if floor_endpoint:
        app.add_route("/_floor", health.floor, methods=["POST"])
    return app
