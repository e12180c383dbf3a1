"""The sync query: has this extender observed the cluster up to a resourceVersion?

`GET /readyz?resourceVersion=N[&timeoutSeconds=S]` (documented in docs/operations.md, "Sync
query"). A client that changes the cluster and then asks the extender to schedule — the
simulator with `--serve-api` does so before every scheduling cycle — learns whether the
extender's view already includes its change:

* **200** `ok: observed resourceVersion M (asked N)`, with the header
  `Observed-Resource-Version: M` (M ≥ N), once the extender is ready (as `/readyz`) and every
  informer has applied every event of its resource up to N (its version is N or later: an
  event, or a bookmark saying there was none) and no change waits to be applied.
* **503** `not ready: <why>` (the lagging informers and their versions), with the header
  when every informer has listed, after holding the request up to S seconds (default 0,
  at most 30) in case it catches up meanwhile.
* **400** when N is not a resourceVersion, S not a number, or the extender watches no cluster
  (`--snapshot`: there is nothing to observe).

Versions are compared as numbers, as every API server's are (etcd revisions); other opaque
versions only match when equal.
"""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import Response

from extender.api.runtime import Runtime

HEADER = "Observed-Resource-Version"
#: Longest `timeoutSeconds` honoured.
MAX_HOLD_SECONDS = 30.0
#: How often a held query looks again.
_POLL_SECONDS = 0.001


def _text(body: str, status: int, observed: str = "") -> Response:
    headers = {HEADER: observed} if observed else None
    return Response(body.encode(), status_code=status, media_type="text/plain", headers=headers)


def why_not(runtime: Runtime, version: str) -> str | None:
    """None when the extender has observed `version`, else why not."""
    ready, why = runtime.readiness()
    if not ready:
        return why
    assert runtime.live is not None
    return runtime.live.not_observed_reason(version)


async def readyz_at_version(request: Request, runtime: Runtime) -> Response:
    version = request.query_params.get("resourceVersion", "").strip()
    if not version:
        return _text("resourceVersion: a resourceVersion of the watched cluster is required", 400)
    try:
        hold = float(request.query_params.get("timeoutSeconds") or 0)
    except ValueError:
        return _text("timeoutSeconds: not a number", 400)
    if not 0 <= hold <= MAX_HOLD_SECONDS:
        return _text(f"timeoutSeconds: must be 0 to {MAX_HOLD_SECONDS:g}", 400)
    live = runtime.live
    if live is None:
        return _text(f"the sync query needs a watched cluster (--kubeconfig or --in-cluster); "
                     f"this extender serves {runtime.source}, which it never re-reads", 400)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + hold
    while True:
        why = why_not(runtime, version)
        observed = live.observed_version()
        if why is None:
            return _text(f"ok: observed resourceVersion {observed} (asked {version})", 200,
                         observed or version)
        if loop.time() >= deadline:
            return _text(f"not ready: {why}", 503, observed)
        await asyncio.sleep(_POLL_SECONDS)
