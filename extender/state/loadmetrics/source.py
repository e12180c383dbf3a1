"""The node-metrics source interface and what every back end shares.

A source answers one question, `await source.fetch()`: the nodes' load now, in load-watcher's
JSON shape (`extender.model.loadmetrics.WatcherMetrics`, values in percent of the node's
capacity). Three back ends implement it: load-watcher's `GET /watcher` (`watcher.py`),
Prometheus' HTTP API (`prometheus.py`) and metrics.k8s.io (`metricsserver.py`). A failure is
a `SourceError` whose `outcome` names its kind with a fixed word (the `outcome` label of
`extender_load_metrics_fetch_total`); sources never raise anything else on purpose. Its text is
one line, whatever the source quoted (an HTTP body, an API server's message): it ends up in
the `/readyz?verbose` line, where a newline would start a line of its own.

After a successful fetch a source also says when each node's data was sampled, where it can
know (`sample_times`), and what the fetch returned for no node at all (`notes`).

Sources are only ever called by the background refresher (`refresher.py`), never on a
request's path.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Protocol

from extender.model.loadmetrics import WatcherMetrics, Window

#: load-watcher serves the newest 15-minute window (`watcher.FifteenMinutes`).
WINDOW = "15m"
WINDOW_SECONDS = 15 * 60

#: load-watcher's `DefaultPromAddress`, used when `metricProvider.address` is empty.
DEFAULT_PROMETHEUS_ADDRESS = "http://prometheus-k8s:9090"

#: `outcome` label values of a fetch (a fixed set).
OK = "ok"
UNREACHABLE = "unreachable"  # no answer: connection refused or reset, DNS, TLS
TIMEOUT = "timeout"          # no complete answer in time
HTTP_ERROR = "http_error"    # an answer with a failure status
INVALID = "invalid"          # an answer that is not what the API documents
ERROR = "error"              # anything else (a bug: logged with its trace)
OUTCOMES = (OK, UNREACHABLE, TIMEOUT, HTTP_ERROR, INVALID, ERROR)


def one_line(text: str) -> str:
    """`text` with every run of whitespace (newlines included) one space."""
    return " ".join(text.split())


class SourceError(Exception):
    """A fetch failed; `outcome` is one of `OUTCOMES` (never `ok`). The message is one line."""

    outcome = ERROR

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message))


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
    #: Set by each successful fetch: what the operator should know of it, one line each (e.g. a
    #: configured query that returned no node); empty when nothing.
    notes: tuple[str, ...]

    @property
    def sample_times(self) -> Mapping[str, float]:
        """Set by each successful fetch: node -> Unix time of its newest sample, for the nodes
        the source can date so (Prometheus, for the queries whose series it knows); the others
        are dated by `timestamp` when `dated`, else by the fetch."""
        ...

    async def fetch(self) -> WatcherMetrics:
        ...

    async def aclose(self) -> None:
        ...


def prometheus_address(address: str) -> str:
    """The Prometheus a `metricProvider.address` names, as the source reads it (the default
    when empty, no trailing `/`): plugins naming the same one share a source (`config.py`)."""
    return (address or DEFAULT_PROMETHEUS_ADDRESS).rstrip("/")


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
