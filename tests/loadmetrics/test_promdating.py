"""Which Prometheus queries the source can date by their newest sample, and the query it runs
for them (against a real Prometheus in test_prometheus_source.py)."""

from __future__ import annotations

import pytest

from extender.state.loadmetrics.promdating import dating_query

CPU_DATING = ("timestamp(instance:node_cpu:ratio) or "
              "max_over_time(timestamp(instance:node_cpu:ratio)[15m:])")


@pytest.mark.parametrize(("promql", "dating"), [
    # load-watcher's defaults ({window} filled in)
    ("avg_over_time(instance:node_cpu:ratio[15m])", CPU_DATING),
    ("stddev_over_time(instance:node_cpu:ratio[15m])", CPU_DATING),
    # docs/operations.md's relabelling: the dating query names the nodes the same way
    ('label_replace(avg_over_time(instance:node_cpu:ratio[15m]), "node", "$1", "instance", '
     '"([^:]+).*")',
     f'label_replace({CPU_DATING}, "node", "$1", "instance", "([^:]+).*")'),
    # matchers (a brace inside a quoted value), spaces, another range
    ("stddev_over_time( node_load1{job='x', path=~\"{.*}\"} [1h30m] )",
     "timestamp(node_load1{job='x', path=~\"{.*}\"}) or "
     "max_over_time(timestamp(node_load1{job='x', path=~\"{.*}\"})[1h30m:])"),
    ('avg_over_time({__name__="x"}[5m])',
     'timestamp({__name__="x"}) or max_over_time(timestamp({__name__="x"})[5m:])'),
])
def test_queries_over_one_selector_are_dated(promql: str, dating: str) -> None:
    assert dating_query(promql) == dating


@pytest.mark.parametrize("promql", [
    "2 * avg_over_time(x[15m])",                       # arithmetic
    "avg_over_time(x[15m] offset 5m)",                 # not the newest samples
    "avg by (instance) (avg_over_time(x[15m]))",       # an aggregation
    "quantile_over_time(0.9, x[15m])",                 # two arguments
    'label_replace(2 * avg_over_time(x[15m]), "node", "$1", "instance", "(.*)")',
    "avg_over_time(rate(x[1m])[15m:])",                # a subquery
    "x",
])
def test_other_queries_are_not(promql: str) -> None:
    assert dating_query(promql) is None
