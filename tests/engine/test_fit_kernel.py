"""`fit_kernel`: NodeResourcesFit's rule in one place, its int and numpy forms held together.

Every path (the filter, its row passes, the preempt verb's fast and batch paths, the
simulator's victim sums) reads the rule through `FitRequest`; here its forms are held to each
other and to the reference `verdict` on random requests and free amounts: `fits` and
`fits_columns`, `short_bits` and `shortfall_columns`, `unresolvable` and the columns' verdict,
and the words `verdict` gives follow from `short_bits` alone (what the wording memos of
`explain_rows` and the fast paths rely on).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extender.engine.filters.fit_kernel import (
    PODS_SHORT,
    RESOURCES,
    TOO_MANY_PODS,
    FitRequest,
    Ignored,
    insufficient,
)
from extender.engine.filters.node_resources_fit import FitCheck, NodeResourcesFit
from extender.engine.framework import Code
from extender.model.resources import Resources
from tests.engine.filter_helpers import container, node, pod

#: Small amounts collide often (exact fits, zero and negative requests); large ones stay in
#: int64 as the columns require.
amount = st.one_of(st.integers(-3, 12), st.integers(-(2**40), 2**40))
rows = st.lists(st.tuples(st.integers(-2, 4), st.integers(0, 5),
                          st.tuples(amount, amount, amount), st.tuples(amount, amount, amount)),
                min_size=1, max_size=12)


def fake_node(alloc_pods: int, pod_count: int, whole: tuple[int, ...],
              used: tuple[int, ...]) -> SimpleNamespace:
    """What `FitRequest.verdict` reads of a `NodeInfo`."""
    return SimpleNamespace(node=SimpleNamespace(allocatable=Resources(*whole, alloc_pods)),
                           requested=Resources(*used), pods=[None] * pod_count)


def worded(bits: int) -> tuple[str, ...]:
    reasons = [TOO_MANY_PODS] if bits & PODS_SHORT else []
    return (*reasons, *(insufficient(name) for d, name in enumerate(RESOURCES)
                        if bits >> (d + 1) & 1))


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(request=st.tuples(amount, amount, amount), table=rows)
def test_int_and_column_forms_agree_with_the_reference(request, table):
    fit = FitRequest(request)
    free_pods = np.array([a - c for a, c, _, _ in table], dtype=np.int64)
    whole = [np.array([w[d] for _, _, w, _ in table], dtype=np.int64) for d in range(3)]
    free = [whole[d] - np.array([u[d] for _, _, _, u in table], dtype=np.int64)
            for d in range(3)]
    fits = fit.fits_columns(free_pods, free)
    bits, beyond = fit.shortfall_columns(free_pods, free, whole)
    for i, (alloc_pods, pod_count, w, u) in enumerate(table):
        left = tuple(w[d] - u[d] for d in range(3))
        one = fit.fits(alloc_pods - pod_count, *left)
        short = fit.short_bits(alloc_pods - pod_count, left)
        unresolvable = fit.unresolvable(left, w)
        assert (one, short, unresolvable) == (bool(fits[i]), int(bits[i]), bool(beyond[i]))
        assert one == (short == 0)
        assert one == (fit.spare_slots(alloc_pods - pod_count) >= 0
                       and all(room >= 0 for _, room in fit.rooms(left)))
        verdict = fit.verdict(fake_node(alloc_pods, pod_count, w, u))  # type: ignore[arg-type]
        assert verdict == (None if one else (worded(short), unresolvable))


@pytest.mark.parametrize(("names", "groups", "requested", "checked"), [
    ((), (), {"example.com/gpu": 2, "example.com/fpga": 0}, ("example.com/gpu",)),
    (("example.com/gpu",), (), {"example.com/gpu": 2, "other.io/x": 1}, ("other.io/x",)),
    ((), ("example.com",), {"example.com/gpu": 2, "other.io/x": 1}, ("other.io/x",)),
    # Only extended resources can be ignored.
    (("hugepages-2Mi",), ("hugepages-2Mi",), {"hugepages-2Mi": 4096}, ("hugepages-2Mi",)),
])
def test_ignored_and_zero_scalar_requests_are_not_checked(names, groups, requested, checked):
    incoming = pod("me", containers=[container({"cpu": "1", **requested})])
    fit = FitRequest.of(incoming, Ignored(frozenset(names), frozenset(groups)))
    assert tuple(name for name, _ in fit.scalars) == checked
    assert fit.needs == ((0, 1000),) and not fit.nothing_requested


def test_the_filter_words_what_the_kernel_decides():
    full = node("n", allocatable={"cpu": "1", "memory": "1Gi", "pods": "1",
                                  "example.com/gpu": "1"},
                pods=[pod("q", node_name="n", containers=[container({"cpu": "500m"})])])
    incoming = pod("me", containers=[container({"cpu": "2", "memory": "512Mi",
                                                "example.com/gpu": "2"})])
    check = NodeResourcesFit().prepare(incoming)
    assert isinstance(check, FitCheck)
    status = check(full)
    assert status is not None and status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == (TOO_MANY_PODS, "Insufficient cpu", "Insufficient example.com/gpu")
