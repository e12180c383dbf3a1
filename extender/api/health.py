"""Liveness, readiness, version and metrics."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from extender import __version__
from extender.api import metrics
from extender.api.caches import cache_sizes
from extender.api.runtime import Runtime


async def healthz(request: Request) -> Response:
    return Response(b"ok", media_type="text/plain")


async def readyz(request: Request) -> Response:
    runtime: Runtime = request.app.state.runtime
    ready, why = runtime.readiness()
    return Response(f"{'ok' if ready else 'not ready'}: {why}".encode(),
                    status_code=200 if ready else 503, media_type="text/plain")


async def version(request: Request) -> Response:
    runtime: Runtime = request.app.state.runtime
    return JSONResponse({
        "version": __version__,
        "source": runtime.source,
        "filters": list(runtime.profile.filter_names),
        "scorers": [{"name": p.name, "weight": w} for p, w in runtime.profile.scorers],
        "postFilter": runtime.profile.post_filter.name if runtime.profile.post_filter else None,
    })


async def metrics_route(request: Request) -> Response:
    runtime: Runtime = request.app.state.runtime
    metrics.STATE_NODES.set(len(runtime.state.nodes))
    metrics.STATE_PODS.set(len(runtime.state.pods))
    for name, size in cache_sizes(runtime).items():
        metrics.CACHE_ENTRIES.labels(name).set(size)
    metrics.LARGE_REQUESTS.labels("running").set(runtime.offload.running)
    metrics.LARGE_REQUESTS.labels("waiting").set(runtime.offload.waiting)
    payload, content_type = metrics.exposition()
    return Response(payload, media_type=content_type)


async def floor(request: Request) -> Response:
    """Benchmark floor: read the body, answer `{}`."""
    await request.body()
    return Response(b"{}", media_type="application/json")
