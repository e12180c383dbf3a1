"""Liveness, readiness, version and metrics.

`/livez` and `/healthz` answer while the process serves; `/readyz` once the cluster state is
synced. With `?verbose`, each answers one line per check, as kube-apiserver does
(`[+]informer-pods ok`, `[-]informer-nodes failed: <reason>`), then
`readyz check passed` or `readyz check failed`. Detail lines (`DetailedReadiness`: the node load
metrics) follow the checks, `[+]load-metrics ok` or `[!]load-metrics warning: <why>`, and never
make the extender unready: what they report degrades scores, not answers.
`/readyz?resourceVersion=N` is the sync query (`extender.api.sync`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from extender import __version__
from extender.api import metrics, sync
from extender.api.caches import cache_bytes, cache_sizes
from extender.api.runtime import Runtime

#: A named check and why it fails (None: it passes).
CheckResult = tuple[str, str | None]


class CheckedReadiness:
    """`Runtime.readiness` that also names its checks for `/readyz?verbose`.

    `reason()` is None when ready, else why not (the message verbs answer with); `checks()`
    lists (name, failure reason or None), one per informer for a live cluster."""

    def __init__(self, reason: Callable[[], str | None],
                 checks: Callable[[], list[CheckResult]], ok: str = "cluster state synced") -> None:
        self.reason, self.checks, self.ok = reason, checks, ok

    def __call__(self) -> tuple[bool, str]:
        why = self.reason()
        return (why is None, why or self.ok)


class DetailedReadiness:
    """`Runtime.readiness` (`inner`) plus detail lines for `/readyz?verbose` that never fail it.

    `details()` lists (name, warning or None); readiness itself is `inner`'s."""

    def __init__(self, inner: Callable[[], tuple[bool, str]],
                 details: list[tuple[str, Callable[[], str | None]]]) -> None:
        self.inner, self._details = inner, details

    def __call__(self) -> tuple[bool, str]:
        return self.inner()

    def details(self) -> list[CheckResult]:
        return [(name, detail()) for name, detail in self._details]


def with_detail(readiness: Callable[[], tuple[bool, str]], name: str,
                detail: Callable[[], str | None]) -> DetailedReadiness:
    """`readiness` with one more detail line `name` (`detail()`: a warning, or None when ok)."""
    if isinstance(readiness, DetailedReadiness):
        return DetailedReadiness(readiness.inner, [*readiness._details, (name, detail)])
    return DetailedReadiness(readiness, [(name, detail)])


def with_check(readiness: Callable[[], tuple[bool, str]], name: str,
               check: Callable[[], str | None]) -> Callable[[], tuple[bool, str]]:
    """`readiness` with one more check `name` that fails it (`check()`: why not, or None)."""
    if isinstance(readiness, DetailedReadiness):
        return DetailedReadiness(with_check(readiness.inner, name, check), readiness._details)
    inner = readiness
    if isinstance(inner, CheckedReadiness):
        checked = inner

        def reason() -> str | None:
            return checked.reason() or check()

        def checks() -> list[CheckResult]:
            return [*checked.checks(), (name, check())]
        return CheckedReadiness(reason, checks, checked.ok)

    def plain_reason() -> str | None:
        ready, why = inner()
        return check() if ready else why

    def plain_checks() -> list[CheckResult]:
        ready, why = inner()
        return [("cluster-state", None if ready else why), (name, check())]
    return CheckedReadiness(plain_reason, plain_checks)


def readiness_checks(runtime: Runtime) -> list[CheckResult]:
    readiness = runtime.readiness
    if isinstance(readiness, DetailedReadiness):
        readiness = readiness.inner
    checks = getattr(readiness, "checks", None)
    if callable(checks):
        return [("ping", None), *checks()]
    ready, why = readiness()
    return [("ping", None), ("cluster-state", None if ready else why)]


def readiness_details(runtime: Runtime) -> list[CheckResult]:
    readiness = runtime.readiness
    return readiness.details() if isinstance(readiness, DetailedReadiness) else []


def _verbose(kind: str, checks: list[CheckResult],
             details: Sequence[CheckResult] = ()) -> Response:
    lines = [f"[+]{name} ok" if why is None else f"[-]{name} failed: {why}"
             for name, why in checks]
    lines += [f"[+]{name} ok" if why is None else f"[!]{name} warning: {why}"
              for name, why in details]
    passed = all(why is None for _, why in checks)
    lines.append(f"{kind} check {'passed' if passed else 'failed'}")
    return Response(("\n".join(lines) + "\n").encode(), status_code=200 if passed else 503,
                    media_type="text/plain")


def _wants_verbose(request: Request) -> bool:
    return "verbose" in request.query_params


async def livez(request: Request) -> Response:
    """The process answers (its event loop runs): liveness."""
    if _wants_verbose(request):
        return _verbose(request.url.path.strip("/") or "livez", [("ping", None)])
    return Response(b"ok", media_type="text/plain")


healthz = livez


async def readyz(request: Request) -> Response:
    runtime: Runtime = request.app.state.runtime
    if "resourceVersion" in request.query_params:  # the sync query (extender.api.sync)
        return await sync.readyz_at_version(request, runtime)
    if _wants_verbose(request):
        return _verbose("readyz", readiness_checks(runtime), readiness_details(runtime))
    ready, why = runtime.readiness()
    if ready:  # "ok", as Kubernetes' own /readyz, with what it rests on when that says more
        text = "ok" if why in ("", "ok") else f"ok: {why}"
    else:
        text = f"not ready: {why}"
    return Response(text.encode(), status_code=200 if ready else 503, media_type="text/plain")


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
    metrics.raise_to(metrics.LATE_POD_EVENTS, runtime.state.late_pod_events)
    if runtime.live is not None:
        metrics.raise_to(metrics.PODS_GONE_BEFORE_WATCH, runtime.live.counters.gone_before_watch)
        metrics.raise_to(metrics.PODS_SEEN_BEFORE_WATCH, runtime.live.counters.seen_before_watch)
        metrics.raise_to(metrics.NODES_SEEN_BEFORE_WATCH,
                         runtime.live.counters.nodes_seen_before_watch)
    for name, size in cache_sizes(runtime).items():
        metrics.CACHE_ENTRIES.labels(name).set(size)
    for name, size in cache_bytes(runtime).items():
        metrics.CACHE_BYTES.labels(name).set(size)
    metrics.LARGE_REQUESTS.labels("running").set(runtime.offload.running)
    metrics.LARGE_REQUESTS.labels("waiting").set(runtime.offload.waiting)
    metrics.BINDS_HELD.set(runtime.held_binds())
    payload, content_type = metrics.exposition()
    return Response(payload, media_type=content_type)


async def floor(request: Request) -> Response:
    """Benchmark floor: read the body, answer `{}`."""
    await request.body()
    return Response(b"{}", media_type="application/json")
