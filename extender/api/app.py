"""The ASGI application. Routes are thin: decode the wire, call the engine, encode.

A plain Starlette app: every route is raw (no request models, no OpenAPI document), so
FastAPI's layer would add nothing served, and its OpenAPI models, built as it is imported,
cost about a tenth of a start's CPU."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response

from extender.api import bind, explain, filter, health, preempt, prioritize
from extender.api.direct import DirectVerb
from extender.api.runtime import Runtime
from extender.api.verb import direct_verb, verb_route

VERBS = {
    "filter": filter,
    "prioritize": prioritize,
    "preempt": preempt,
    "bind": bind,
}


def create_app(runtime: Runtime, *, floor_endpoint: bool = False) -> ExtenderApp:
    recorder = getattr(runtime, "recorder", None)  # `serve --record`

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
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

    app = ExtenderApp(lifespan=lifespan)
    app.state.runtime = runtime
    routes: dict[str, Route] = {}
    app.direct_verbs = {}
    for verb, module in VERBS.items():
        # Raw routes: a framework's request models and response encoding cost too much at 5000
        # nodes.
        # bind is small and awaits the API server: it always runs on the loop.
        routes[f"/{verb}"] = verb_route(verb, module.handle, module.error_reply,
                                        needs_ready=verb != "bind", offload=verb != "bind",
                                        recorder=recorder)
        if recorder is None:  # a recorded exchange goes through its recorded route
            app.direct_verbs[f"/{verb}".encode()] = direct_verb(
                verb, module.handle, module.error_reply, runtime, needs_ready=verb != "bind")
    # Not a scheduler verb: an operator's "why not this node" (a filter body, read-only).
    routes["/explain"] = verb_route("explain", explain.handle, explain.error_reply,
                                    recorder=recorder)
    app.verb_routes = routes
    for path, route in routes.items():  # also routed: `app.routes` lists every endpoint
        app.add_route(path, route, methods=["POST"])
    app.add_route("/healthz", health.healthz, methods=["GET"])
    app.add_route("/livez", health.livez, methods=["GET"])
    app.add_route("/readyz", health.readyz, methods=["GET"])
    app.add_route("/version", health.version, methods=["GET"])
    app.add_route("/metrics", health.metrics_route, methods=["GET"])
    if floor_endpoint:
        app.add_route("/_floor", health.floor, methods=["POST"])
    return app


Route = Callable[[Request], Awaitable[Response]]
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class ExtenderApp(Starlette):
    """Starlette, but a `POST` to a verb goes straight to its route.

    The verbs are what kube-scheduler calls for every pod, and their routes already do what
    the middleware stack would (every failure becomes the verb's error reply, bodies are
    bounded): going round Starlette's routing and middleware saves about a tenth of a small
    request's cost (`bench.traffic`). Everything else, lifespan included, goes through it."""

    verb_routes: dict[str, Route]
    #: The verbs the protocol answers without ASGI (`api.direct`), by path.
    direct_verbs: dict[bytes, DirectVerb]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            route = self.verb_routes.get(scope["path"])
            if route is not None:
                scope["app"] = self
                response = await route(Request(scope, receive))
                await response(scope, receive, send)
                return
        await super().__call__(scope, receive, send)  # type: ignore[arg-type]
