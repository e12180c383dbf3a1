"""Node load metrics for Trimaran's scorers: one source interface, three back ends
(load-watcher, Prometheus, metrics.k8s.io), and the background refresher that keeps
`TrimaranStore.metrics` fresh. See `source.py` for the interface, `refresher.py` for
refresh, staleness and failures, `status.py` and `needs.py` for what readiness and `/metrics`
count, `promdating.py` for how Prometheus' data is dated, `config.py` for how the policy picks
a source."""

from extender.state.loadmetrics.config import (
    LoadSourceConfigError,
    build_refresher,
    build_source,
    trimaran_specs,
)
from extender.state.loadmetrics.refresher import LoadMetricsRefresher
from extender.state.loadmetrics.source import OUTCOMES, LoadSource, SourceError
from extender.state.loadmetrics.status import RefresherStatus

__all__ = ["OUTCOMES", "LoadMetricsRefresher", "LoadSource", "LoadSourceConfigError",
           "RefresherStatus", "SourceError", "build_refresher", "build_source", "trimaran_specs"]
