"""The node-metrics source interface and what every back end shares.

A source answers one question, `await source.fetch()`: the nodes' load now, in load-watcher's
JSON shape (`extender.model.loadmetrics.WatcherMetrics`, values in percent of the node's
capacity). Three back ends implement it: load-watcher's `GET /watcher` (`watcher.py`),
Prometheus' HTTP API (`prometheus.py`) and metrics.k8s.io (`metricsserver.py`). A failure is
a `SourceError` whose `outcome` names its kind with a fixed word (the `outcome` label of
`extender_load_metrics_fetch_total`); sources never raise anything else on purpose.

Sources are only ever called by the background refresher (`refresher.py`), never on a
request's path.
"""

from __future__ import annotations

import time
from typing import Protocol

from extender.model.loadmetrics import WatcherMetrics, Window

#: load-watcher serves the newest 15-minute window (`watcher.FifteenMinutes`).
WINDOW = "15m"
WINDOW_SECONDS = 15 * 60

#: `outcome` label values of a fetch (a fixed set).
OK = "ok"
UNREACHABLE = "unreachable"  # no answer: connection refused or reset, DNS, TLS
TIMEOUT = "timeout"          # no complete answer in time
HTTP_ERROR = "http_error"    # an answer with a failure status
INVALID = "invalid"          # an answer that is not what the API documents
ERROR = "error"              # anything else (a bug: logged with its trace)
OUTCOMES = (OK, UNREACHABLE, TIMEOUT, HTTP_ERROR, INVALID, ERROR)


class SourceError(Exception):
    """A fetch failed; `outcome` is one of `OUTCOMES` (never `ok`)."""

    outcome = ERROR


class SourceUnreachable(SourceError):
    outcome = UNREACHABLE


class SourceTimeout(SourceError):
    outcome = TIMEOUT


class SourceHttpError(SourceError):
    outcome = HTTP_ERROR

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class SourceInvalid(SourceError):
    outcome = INVALID


class LoadSource(Protocol):
    """What the refresher needs from a back end."""

    #: `source` label value: "load-watcher", "prometheus" or "metrics-server".
    kind: str
    #: For logs and the readiness line: the back end and where it is ("Prometheus at …").
    description: str
    #: True when a snapshot's `timestamp` is the source's own time of the data (load-watcher's
    #: cache); False when the data is as of the fetch.
    dated: bool

    async def fetch(self) -> WatcherMetrics:
        ...

    async def aclose(self) -> None:
        ...


def current_window(now: float | None = None) -> Window:
    """load-watcher's `CurrentFifteenMinuteWindow()`: the 15 minutes ending now."""
    end = int(now if now is not None else time.time())
    return Window(duration=WINDOW, start=end - WINDOW_SECONDS, end=end)


def http_failure(what: str, exc: BaseException) -> SourceError:
    """An httpx exception turned into a `SourceError` (httpx stays inside the back ends)."""
    import httpx

    text = f"{what}: {type(exc).__name__}: {exc}".rstrip(": ")
    if isinstance(exc, httpx.TimeoutException):
        return SourceTimeout(text)
    return SourceUnreachable(text)
