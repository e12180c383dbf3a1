"""NodeResourcesFit's `explain_rows` (failing rows worded once per distinct verdict) against
the per-node path.

`filter_rows` words the rows NodeResourcesFit's `fits_rows` does not pass with
`explain_rows` from `rows.EXPLAIN_FROM` failing rows on; here from the first, so every
generated case goes through it, plus a full cluster where hundreds of rows fail for a handful
of reasons and rows whose amounts are too large for the exact columns.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extender.engine import rows as rows_module
from extender.engine.filters.node_resources_fit import NodeResourcesFit
from tests.engine.filter_helpers import DEFAULT_ORDER, bound, container, node, pod, profile
from tests.engine.test_filter_properties import build_nodes, build_pod, workloads
from tests.engine.test_rows_properties import assert_rows_like_run_filters, table_of


@pytest.fixture(autouse=True)
def explain_every_row() -> Iterator[None]:
    before = rows_module.EXPLAIN_FROM
    rows_module.EXPLAIN_FROM = 1
    yield
    rows_module.EXPLAIN_FROM = before


@pytest.mark.slow
@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(workload=workloads(), order_seed=st.randoms(use_true_random=False))
def test_explained_rows_equal_run_filters(workload, order_seed):
    pod_specs, node_specs = workload
    infos = build_nodes(node_specs)
    table = table_of(infos)
    prof = profile(DEFAULT_ORDER)
    for i, spec in enumerate(pod_specs):
        order = list(range(len(infos)))
        order_seed.shuffle(order)
        assert_rows_like_run_filters(prof, build_pod(spec, i), infos, table, order)


def test_a_full_cluster_is_worded_per_distinct_verdict(monkeypatch: pytest.MonkeyPatch):
    infos = []
    for i in range(300):
        cpu, memory, slots = ("2", "4Gi", "110") if i % 3 else ("8", "1Gi", "3")
        used = [bound(f"n{i}", f"q{i}-{j}", containers=[container(
            {"cpu": "1500m" if i % 2 else "500m", "memory": "512Mi"})]) for j in range(i % 4)]
        infos.append(node(f"n{i}", pods=used,
                          allocatable={"cpu": cpu, "memory": memory, "pods": slots}))
    # Amounts beyond the exact columns (2**60 bytes of memory): asked one by one, whether
    # they fit or not.
    for cpu in ("1", "16", "2"):
        infos.append(node(f"huge-{cpu}", allocatable={"cpu": cpu, "memory": str(2**60),
                                                      "pods": "110"}))
    table = table_of(infos)
    prof = profile(DEFAULT_ORDER)
    check_type = type(NodeResourcesFit().prepare(pod()))
    explain = check_type.explain_rows
    calls = []

    def counting(self, table, rows):  # type: ignore[no-untyped-def]
        calls.append(len(rows))
        return explain(self, table, rows)

    monkeypatch.setattr(check_type, "explain_rows", counting)
    for requests in ({"cpu": "1", "memory": "1Gi"}, {"cpu": "3"}, {"memory": "3Gi"},
                     {"cpu": "100m"}, {}, {"cpu": "9", "memory": "5Gi"}):
        incoming = pod("me", containers=[container(requests)])
        assert_rows_like_run_filters(prof, incoming, infos, table, list(range(len(infos))))
    assert max(calls) > 100  # hundreds of failing rows explained at once
