"""NodeResourceTopologyMatch's overreserve cache, live: its pod lister turned on and its resync
loop (scheduler-plugins' `wait.Forever(nrtCache.Resync, cacheResyncPeriodSeconds)`), when the
profile enables the plugin with the cache. Each round goes through the state's gate, as every
state change does (`TopologyStore.resync`: docs in the store)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from extender.engine.cluster import ClusterState
from extender.engine.plugins.node_resource_topology import (
    NodeResourceTopologyMatch,
    topology_plugin,
)
from extender.engine.plugins.node_resource_topology.store import TopologyStore
from extender.state.background import cancel_and_wait
from extender.state.gate import gate_for

log = logging.getLogger("extender.nrtcache")


def cache_plugin(profile: Any) -> NodeResourceTopologyMatch | None:
    """The profile's NodeResourceTopologyMatch when it runs the overreserve cache, else None."""
    found = topology_plugin(profile)
    return found if found is not None and found.args.overreserve else None


class TopologyResync:
    """The resync loop: a round at the start, then one every period (loop thread only)."""

    def __init__(self, state: ClusterState, period: float,
                 on_flush: Callable[[list[str]], None] | None = None,
                 on_round: Callable[[], None] | None = None) -> None:
        self.state = state
        self.period = period
        self.on_flush = on_flush
        self.on_round = on_round
        self._task: asyncio.Task[None] | None = None

    def round(self) -> None:
        gate_for(self.state).call(self._resync)

    def _resync(self) -> None:
        flushed = self.state.store(TopologyStore).resync()
        if self.on_round is not None:
            self.on_round()
        if flushed:
            log.info("NodeResourceTopology cache: fresh reports taken for %s", ", ".join(flushed))
            if self.on_flush is not None:
                self.on_flush(flushed)

    async def run(self) -> None:
        while True:
            try:
                self.round()
            except Exception:  # never let the loop die: the cache would stop resyncing
                log.exception("NodeResourceTopology cache: resync failed")
            await asyncio.sleep(self.period)

    async def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self.run(), name="nrt-cache-resync")

    async def stop(self) -> None:
        task, self._task = self._task, None
        await cancel_and_wait(task)


def enable_cache(profile: Any, state: ClusterState,
                 on_flush: Callable[[list[str]], None] | None = None,
                 on_round: Callable[[], None] | None = None) -> TopologyResync | None:
    """Turn the store's pod lister on (before the informers list) and make the loop; None
    when the profile runs no overreserve cache."""
    plugin = cache_plugin(profile)
    if plugin is None:
        return None
    cache = plugin.args.cache
    state.store(TopologyStore).enable(cache.resync_method, cache.informer_mode, cache.resync_scope,
                                      cache.foreign_pods_detect)
    return TopologyResync(state, float(plugin.args.cache_resync_period_seconds), on_flush,
                          on_round)
