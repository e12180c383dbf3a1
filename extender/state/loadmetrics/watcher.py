"""load-watcher as a service: `GET <watcherAddress>/watcher`, its JSON as it is.

What Trimaran's `NewServiceClient` does (paypal/load-watcher `pkg/watcher/api/client.go`): the
address with `/watcher` appended, 200 → the body decoded as `WatcherMetrics` (the newest
15-minute window the watcher holds, else its 10- or 5-minute one), anything else → an error.
The watcher's `timestamp` is when *it* last fetched from its own back end: a watcher that
keeps serving an old cache is seen as old (the refresher ages nodes by that timestamp).
"""

from __future__ import annotations

import httpx
import msgspec

from extender.model.loadmetrics import WatcherMetrics, decode_watcher_metrics
from extender.state.loadmetrics.source import SourceHttpError, SourceInvalid, http_failure

USER_AGENT = "extender/0.1"


class LoadWatcherSource:
    kind = "load-watcher"
    dated = True

    def __init__(self, address: str, *, timeout: float = 10.0,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.address = address
        self.url = address.rstrip("/") + "/watcher"
        self.description = f"load-watcher at {self.url}"
        # The watcher's JSON dates the whole snapshot (its `timestamp`), never a node's sample:
        # a watcher over Prometheus keeps a dead exporter's averages as this extender's own
        # Prometheus source would without its dating queries.
        self.sample_times: dict[str, float] = {}
        self.notes: tuple[str, ...] = ()
        self._http = httpx.AsyncClient(timeout=timeout, transport=transport,
                                       headers={"User-Agent": USER_AGENT,
                                                "Accept": "application/json"})

    async def fetch(self) -> WatcherMetrics:
        try:
            resp = await self._http.get(self.url)
        except httpx.HTTPError as exc:
            raise http_failure(f"GET {self.url}", exc) from None
        if resp.status_code != 200:
            raise SourceHttpError(f"GET {self.url}: HTTP {resp.status_code}", resp.status_code)
        try:
            return decode_watcher_metrics(resp.content)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise SourceInvalid(f"GET {self.url}: not load-watcher's JSON: {exc}") from None

    async def aclose(self) -> None:
        await self._http.aclose()
