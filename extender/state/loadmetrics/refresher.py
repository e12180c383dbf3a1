"""`LoadMetricsRefresher`: reads a node-metrics source in the background and keeps the cluster
state's snapshot (`TrimaranStore.metrics`) fresh, never on a request's path.

- Every `refreshSeconds` (default 30 s, Trimaran's interval) one fetch, bounded by a timeout;
  fetches never overlap. The first one starts with the server.
- Per-node staleness: each node's metrics carry the time of their data (the fetch time, or
  load-watcher's own `timestamp`, which stays old while the watcher serves an old cache). A
  successful fetch replaces the metrics of the nodes it reports and keeps the others; a node
  whose data is older than `staleAfterSeconds` is dropped from the snapshot (at that moment,
  not at the next fetch), so Trimaran scores it MinNodeScore, as upstream scores a node
  missing from load-watcher's map.
- A failed fetch (source down, timeout, error status, undecodable answer) is logged (when it
  starts, when its message changes, then every 5 minutes, and when the source recovers) and
  counted (`on_fetch`); the snapshot is kept until its nodes go stale. Nothing is raised to a
  request: the verbs keep answering with the scores the snapshot allows.
- The snapshot is replaced through the state's gate (`gate_for(state).call`), as watch events
  are, so a large request reading the state off the event loop never sees it change.

`status()` and `detail()` feed `/metrics` and the `load-metrics` line of `/readyz?verbose`.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from extender.engine.cluster import ClusterState
from extender.engine.plugins.trimaran.store import TrimaranStore
from extender.model.loadmetrics import Data, NodeMetrics, WatcherMetrics
from extender.state.background import cancel_and_wait
from extender.state.gate import gate_for
from extender.state.loadmetrics.source import ERROR, OK, TIMEOUT, LoadSource, SourceError

log = logging.getLogger(__name__)

#: A failure that goes on is logged again this often (seconds).
REPEAT_LOG_SECONDS = 300.0

#: on_fetch(source kind, outcome, seconds the fetch took)
FetchCallback = Callable[[str, str, float], None]


@dataclass(frozen=True)
class RefresherStatus:
    """What the refresher knows now (for `/metrics` and readiness)."""

    kind: str
    description: str
    nodes: int                     # nodes of the cluster state
    nodes_with_data: int           # ... with fresh metrics in the snapshot
    age_seconds: float             # since the newest successful fetch's data (inf: none yet)
    consecutive_failures: int
    failing_seconds: float         # since the first of those failures (0 when none)
    last_error: str
    fetched: bool                  # a fetch has succeeded at least once
    last_fetch_nodes: int          # nodes in the last successful fetch

    @property
    def nodes_without_data(self) -> int:
        return self.nodes - self.nodes_with_data


class LoadMetricsRefresher:
    """One source, one cluster state. Loop thread only (start it from the app's lifespan)."""

    def __init__(self, source: LoadSource, state: ClusterState, *,
                 refresh_seconds: float = 30.0, stale_after_seconds: float = 300.0,
                 fetch_timeout: float | None = None, clock: Callable[[], float] = time.time,
                 on_fetch: FetchCallback | None = None, plugins: tuple[str, ...] = ()) -> None:
        self.source = source
        self.state = state
        self.refresh_seconds = refresh_seconds
        self.stale_after_seconds = stale_after_seconds
        #: A fetch that takes longer fails as `timeout` (the source's own HTTP timeout may be
        #: longer): between 1 and 30 seconds, the refresh interval if it lies between.
        self.fetch_timeout = (fetch_timeout if fetch_timeout is not None
                              else max(1.0, min(30.0, refresh_seconds)))
        self.clock = clock
        self.on_fetch = on_fetch
        #: The plugins that read this source (named in logs and readiness).
        self.plugins = plugins
        self.gate = gate_for(state)
        #: How a new snapshot reaches the state (through the gate); `serve --record` records it.
        self.apply_snapshot: Callable[[WatcherMetrics | None], None] = state.store(TrimaranStore).set_metrics
        #: node -> (its metrics, the time of their data)
        self._nodes: dict[str, tuple[NodeMetrics, float]] = {}
        #: The newest successful fetch (its timestamp, window and source head the snapshot).
        self._head: WatcherMetrics | None = None
        self._dirty = False
        #: The snapshot last handed to the state (None: nothing fetched yet).
        self.published: WatcherMetrics | None = None
        self.last_data_time: float | None = None
        self.last_fetch_nodes = 0
        self.consecutive_failures = 0
        self.failing_since: float | None = None
        self.last_error = ""
        self._last_failure_log = -math.inf
        self._task: asyncio.Task[None] | None = None

    # ---- one refresh -------------------------------------------------------------------
    async def refresh(self) -> bool:
        """Fetch once, merge, publish; True on success. Never raises (but cancellation)."""
        started = time.monotonic()
        outcome = OK
        try:
            metrics = await asyncio.wait_for(self.source.fetch(), self.fetch_timeout)
        except TimeoutError:
            outcome = TIMEOUT
            self._failed(outcome, f"{self.source.description}: no answer within "
                                  f"{self.fetch_timeout:g}s")
        except SourceError as exc:
            outcome = exc.outcome
            self._failed(outcome, str(exc))
        except Exception as exc:  # a bug, not the source: say where, keep refreshing
            outcome = ERROR
            log.exception("load metrics: fetch from %s failed", self.source.description)
            self._failed(outcome, f"{type(exc).__name__}: {exc}")
        else:
            self._merge(metrics, self.clock())
        if self.on_fetch is not None:
            self.on_fetch(self.source.kind, outcome, time.monotonic() - started)
        self.publish()
        return outcome == OK

    def _data_time(self, metrics: WatcherMetrics, now: float) -> float:
        if self.source.dated and metrics.timestamp > 0:
            return min(now, float(metrics.timestamp))  # never in the future (clock skew)
        return now

    def _merge(self, metrics: WatcherMetrics, now: float) -> None:
        when = self._data_time(metrics, now)
        reported = metrics.data.NodeMetricsMap
        for name, node in reported.items():
            self._nodes[name] = (node, when)
        self._head = metrics
        self._dirty = True
        self.last_data_time = when
        self.last_fetch_nodes = len(reported)
        if self.consecutive_failures:
            log.info("load metrics: %s answers again after %d failed fetch(es)",
                     self.source.description, self.consecutive_failures)
        elif self.published is None:
            log.info("load metrics: first fetch from %s: %d node(s)",
                     self.source.description, len(reported))
        self.consecutive_failures = 0
        self.failing_since = None
        self.last_error = ""
        self._last_failure_log = -math.inf

    def _failed(self, outcome: str, message: str) -> None:
        now = time.monotonic()
        self.consecutive_failures += 1
        if self.failing_since is None:
            self.failing_since = self.clock()
        changed = message != self.last_error
        self.last_error = message
        if changed or now - self._last_failure_log >= REPEAT_LOG_SECONDS:
            self._last_failure_log = now
            if self._nodes:
                kept = (f"keeping the nodes' last data until it is "
                        f"{self.stale_after_seconds:g}s old")
            elif self.published is None:
                kept = "no data yet: every node scored as having none"
            else:
                kept = "every node's data has expired: every node scored as having none"
            log.warning("load metrics: fetch failed (%s, %d in a row); %s: %s", outcome,
                        self.consecutive_failures, kept, message)

    # ---- the snapshot ------------------------------------------------------------------
    def publish(self, now: float | None = None) -> None:
        """Drop nodes whose data is stale; hand a changed snapshot to the state (via its gate)."""
        now = self.clock() if now is None else now
        cutoff = now - self.stale_after_seconds
        stale = [name for name, (_, when) in self._nodes.items() if when < cutoff]
        for name in stale:
            del self._nodes[name]
        if stale:
            self._dirty = True
            log.info("load metrics: %d node(s) without data for %gs are scored as having none "
                     "(%s%s)", len(stale), self.stale_after_seconds, ", ".join(stale[:5]),
                     ", ..." if len(stale) > 5 else "")
        head = self._head
        if not self._dirty or head is None:
            return
        self._dirty = False
        snapshot = WatcherMetrics(
            timestamp=head.timestamp, window=head.window, source=head.source,
            data=Data(NodeMetricsMap={name: node for name, (node, _) in self._nodes.items()}))
        self.published = snapshot
        self.gate.call(self.apply_snapshot, snapshot)

    def seconds_to_next_expiry(self, now: float | None = None) -> float | None:
        """Seconds until the oldest node's data goes stale (None: no node has data)."""
        if not self._nodes:
            return None
        now = self.clock() if now is None else now
        oldest = min(when for _, when in self._nodes.values())
        return oldest + self.stale_after_seconds - now

    # ---- background task ---------------------------------------------------------------
    async def run(self) -> None:
        """Refresh every `refresh_seconds` and expire nodes on time, until cancelled."""
        next_fetch = time.monotonic()
        while True:
            try:
                if time.monotonic() >= next_fetch:
                    await self.refresh()
                    next_fetch = max(next_fetch + self.refresh_seconds, time.monotonic())
                else:
                    self.publish()
                wait = next_fetch - time.monotonic()
                expiry = self.seconds_to_next_expiry()
                if expiry is not None:
                    wait = min(wait, max(expiry, 0.0) + 0.01)
            except Exception:  # never let the task die: the snapshot would silently freeze
                log.exception("load metrics: refresher step failed")
                wait = self.refresh_seconds
            await asyncio.sleep(max(wait, 0.0))

    async def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self.run(), name=f"load-metrics-{self.source.kind}")

    async def stop(self) -> None:
        task, self._task = self._task, None
        await cancel_and_wait(task)
        await self.source.aclose()

    # ---- what it knows -----------------------------------------------------------------
    def status(self, now: float | None = None) -> RefresherStatus:
        now = self.clock() if now is None else now
        reported = self.published.data.NodeMetricsMap if self.published is not None else {}
        names = self.state.nodes
        with_data = (sum(1 for name in reported if name in names) if len(reported) < len(names)
                     else sum(1 for name in names if name in reported))
        return RefresherStatus(
            kind=self.source.kind, description=self.source.description, nodes=len(names),
            nodes_with_data=with_data,
            age_seconds=(max(0.0, now - self.last_data_time) if self.last_data_time is not None
                         else math.inf),
            consecutive_failures=self.consecutive_failures,
            failing_seconds=(max(0.0, now - self.failing_since)
                             if self.failing_since is not None else 0.0),
            last_error=self.last_error, fetched=self._head is not None,
            last_fetch_nodes=self.last_fetch_nodes)

    def detail(self) -> str | None:
        """Why the load metrics are not all there (None: every node has fresh data)."""
        status = self.status()
        problems: list[str] = []
        if status.consecutive_failures:
            problems.append(f"{status.description}: {status.consecutive_failures} failed "
                            f"fetch(es) in {status.failing_seconds:.0f}s: {status.last_error}")
        elif not status.fetched:
            problems.append(f"{status.description}: no metrics fetched yet")
        elif status.last_fetch_nodes == 0:
            problems.append(f"{status.description}: the last fetch reported no node")
        if status.nodes_without_data:
            who = " by " + ", ".join(self.plugins) if self.plugins else ""
            problems.append(f"{status.nodes_without_data} of {status.nodes} node(s) without "
                            f"fresh metrics (scored 0{who})")
        return "; ".join(problems) or None
