"""`LoadMetricsRefresher`: reads a node-metrics source in the background and keeps the cluster
state's snapshot (`TrimaranStore.metrics`) fresh, never on a request's path.

- Every `refreshSeconds` (default 30 s, Trimaran's interval) one fetch, bounded by a timeout;
  fetches never overlap. The first one starts with the server.
- Per-node staleness: each node's metrics carry the time of their data: its newest sample
  where the source knows it (`source.sample_times`: Prometheus, for queries whose series it
  knows), else load-watcher's own `timestamp` (which stays old while the watcher serves an old
  cache), else the fetch time. A successful fetch replaces the metrics of the nodes it reports
  and keeps the others; a node whose data is older than `staleAfterSeconds` is dropped from
  the snapshot (at that moment, not at the next fetch), so Trimaran scores it MinNodeScore, as
  upstream scores a node missing from load-watcher's map; a node reported with data already
  that old is not taken (said once, not at every fetch).
- A failed fetch (source down, timeout, error status, undecodable answer) is logged (when it
  starts, when its message changes, then every 5 minutes, and when the source recovers) and
  counted (`on_fetch`); the snapshot is kept until its nodes go stale. Nothing is raised to a
  request: the verbs keep answering with the scores the snapshot allows.
- The snapshot is replaced through the state's gate (`gate_for(state).call`), as watch events
  are, so a large request reading the state off the event loop never sees it change.

`status()` and `detail()` feed `/metrics` and the `load-metrics` line of `/readyz?verbose`
(`status.py`). A node counts as without data when an enabled plugin scores it 0 for lack of
the metrics it reads (`needs.py`): TargetLoadPacking needs a CPU average, which a node with
memory metrics only lacks.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable

from extender.engine.cluster import ClusterState
from extender.engine.plugins.trimaran.store import TrimaranStore
from extender.model.loadmetrics import Data, NodeMetrics, WatcherMetrics
from extender.state.background import cancel_and_wait
from extender.state.gate import gate_for
from extender.state.loadmetrics.needs import ANY_METRIC, Need, need_of
from extender.state.loadmetrics.source import (
    ERROR,
    OK,
    TIMEOUT,
    LoadSource,
    SourceError,
    one_line,
)
from extender.state.loadmetrics.status import (
    RefresherStatus,
    Shortfall,
    count_in,
    shortfall_lines,
)

log = logging.getLogger(__name__)

#: A failure that goes on is logged again this often (seconds).
REPEAT_LOG_SECONDS = 300.0

#: on_fetch(source kind, outcome, seconds the fetch took)
FetchCallback = Callable[[str, str, float], None]


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
        #: The plugins that read this source (named in logs and readiness), and what each needs.
        self.plugins = plugins
        self.needs: dict[str, Need] = ({name: need_of(name) for name in plugins} if plugins
                                       else {"": ANY_METRIC})
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
        #: The nodes of `published` with what each plugin needs (key as `needs`), with what
        #: all need, and with any metric.
        self._served: dict[str, frozenset[str]] = {}
        self._served_all: frozenset[str] = frozenset()
        self._with_any: frozenset[str] = frozenset()
        #: Reported nodes whose data is stale (said once; not taken again until fresh).
        self._expired: set[str] = set()
        #: What the source said of its last successful fetch.
        self.notes: tuple[str, ...] = ()
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
            # No source name here: the log line and the readiness line put it in front.
            self._failed(outcome, f"no answer within {self.fetch_timeout:g}s")
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
        default = self._data_time(metrics, now)
        sampled = self.source.sample_times
        cutoff = now - self.stale_after_seconds
        reported = metrics.data.NodeMetricsMap
        newest: float | None = None
        arrived_stale: list[str] = []
        for name, node in reported.items():
            when = min(now, sampled.get(name, default))  # never in the future (clock skew)
            newest = when if newest is None else max(newest, when)
            if when < cutoff and name not in self._nodes:
                # Stale on arrival (a dead exporter's averages stay in Prometheus' window, a
                # watcher serves an old cache): not taken, and said once, not every fetch.
                if name not in self._expired:
                    arrived_stale.append(name)
                continue
            if when >= cutoff:
                self._expired.discard(name)
            self._nodes[name] = (node, when)
        self._expired.intersection_update(reported)  # only names still reported are kept
        self._head = metrics
        self._dirty = True
        self.last_data_time = newest if newest is not None else default
        self.last_fetch_nodes = len(reported)
        if self.consecutive_failures:
            log.info("load metrics: %s answers again after %d failed fetch(es)",
                     self.source.description, self.consecutive_failures)
        elif self.published is None:
            log.info("load metrics: first fetch from %s: %d node(s)",
                     self.source.description, len(reported))
        self._say_expired(arrived_stale)
        notes = tuple(one_line(note) for note in self.source.notes)
        if notes and notes != self.notes:  # once, not at every fetch
            log.warning("load metrics: %s: %s", self.source.description, "; ".join(notes))
        self.notes = notes
        self.consecutive_failures = 0
        self.failing_since = None
        self.last_error = ""
        self._last_failure_log = -math.inf

    def _failed(self, outcome: str, message: str) -> None:
        now = time.monotonic()
        self.consecutive_failures += 1
        if self.failing_since is None:
            self.failing_since = self.clock()
        message = one_line(message)  # it goes into the one readiness line
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
            log.warning("load metrics: fetch from %s failed (%s, %d in a row); %s: %s",
                        self.source.description, outcome, self.consecutive_failures, kept,
                        message)

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
            self._say_expired(stale)
        head = self._head
        if not self._dirty or head is None:
            return
        self._dirty = False
        nodes = {name: node for name, (node, _) in self._nodes.items()}
        snapshot = WatcherMetrics(timestamp=head.timestamp, window=head.window,
                                  source=head.source, data=Data(NodeMetricsMap=nodes))
        self.published = snapshot
        self._served = {key: frozenset(name for name, node in nodes.items()
                                       if need.met(node.metrics))
                        for key, need in self.needs.items()}
        self._served_all = frozenset.intersection(*self._served.values())
        self._with_any = frozenset(name for name, node in nodes.items() if node.metrics)
        self.gate.call(self.apply_snapshot, snapshot)

    def _say_expired(self, names: list[str]) -> None:
        if not names:
            return
        self._expired.update(names)
        log.info("load metrics: %d node(s) without data for %gs are scored as having none "
                 "(%s%s)", len(names), self.stale_after_seconds, ", ".join(names[:5]),
                 ", ..." if len(names) > 5 else "")

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
        names = self.state.nodes
        with_any = count_in(names, self._with_any)
        shortfalls = []
        for key, need in self.needs.items():
            served = count_in(names, self._served.get(key, ()))
            shortfalls.append(Shortfall(plugin=key, need=need.what, nodes=len(names) - served,
                                        partial=with_any - served))
        last = self._head.data.NodeMetricsMap if self._head is not None else {}
        return RefresherStatus(
            kind=self.source.kind, description=self.source.description, nodes=len(names),
            nodes_with_data=count_in(names, self._served_all),
            age_seconds=(max(0.0, now - self.last_data_time) if self.last_data_time is not None
                         else math.inf),
            consecutive_failures=self.consecutive_failures,
            failing_seconds=(max(0.0, now - self.failing_since)
                             if self.failing_since is not None else 0.0),
            last_error=self.last_error, fetched=self._head is not None,
            last_fetch_nodes=self.last_fetch_nodes, last_fetch_known=count_in(names, last),
            shortfalls=tuple(shortfalls), notes=self.notes)

    def detail(self) -> str | None:
        """Why the load metrics are not all there (None: every node has fresh data). One line:
        the source's trouble, then the nodes each plugin scores 0 for lack of data."""
        status = self.status()
        about: list[str] = []
        if status.consecutive_failures:
            about.append(f"{status.consecutive_failures} failed fetch(es) in "
                         f"{status.failing_seconds:.0f}s: {status.last_error}")
        elif not status.fetched:
            about.append("no metrics fetched yet")
        elif status.last_fetch_nodes == 0:
            about.append("the last fetch reported no node")
        elif status.last_fetch_known == 0 and status.nodes:
            # Names that are no node's (FQDNs, IP:port): every node is then without data.
            example = next(iter(self._head.data.NodeMetricsMap)) if self._head else ""
            about.append(f"the last fetch reported {status.last_fetch_nodes} node name(s), "
                         f"none a node of the cluster (e.g. {example!r})")
        if not status.consecutive_failures:
            about.extend(status.notes)
        problems = [f"{status.description}: {'; '.join(about)}"] if about else []
        problems.extend(shortfall_lines(status))
        return "; ".join(problems) or None

