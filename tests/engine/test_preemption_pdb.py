"""Importance order and filterPodsWithPDBViolation (reference §C.5)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from extender.engine.preemption import (
    PdbIndex,
    SelectorMatches,
    by_importance,
    count_pdb_violations,
    earliest_start_of_highest,
    filter_pods_with_pdb_violation,
    more_important_pod,
)
from tests.engine.test_preemption_helpers import T0, pdb, pdb_view, pod, view

NOW = T0


def names(pods):
    return [p.name for p in pods]


# ---- MoreImportantPod ----------------------------------------------------------------------

def test_higher_priority_is_more_important_whatever_the_start_time():
    old_low = view(pod("old-low", "n", priority=1, start=T0 - 9999))
    new_high = view(pod("new-high", "n", priority=2, start=T0 - 1))
    assert more_important_pod(new_high, old_low, NOW)
    assert not more_important_pod(old_low, new_high, NOW)


def test_equal_priority_earlier_start_is_more_important():
    early = view(pod("early", "n", priority=5, start=T0 - 600))
    late = view(pod("late", "n", priority=5, start=T0 - 60))
    assert more_important_pod(early, late, NOW)
    assert not more_important_pod(late, early, NOW)
    assert not more_important_pod(early, early, NOW)


def test_missing_start_time_counts_as_now():
    unstarted = view(pod("unstarted", "n", priority=5, start=None))
    started = view(pod("started", "n", priority=5, start=T0 - 1))
    future = view(pod("future", "n", priority=5, start=T0 + 5))  # clock skew
    assert more_important_pod(started, unstarted, NOW)
    assert more_important_pod(unstarted, future, NOW)


def test_by_importance_is_stable_for_equal_pods():
    a, b, c = (view(pod(n, "n", priority=1, start=T0 - 5)) for n in "abc")
    top = view(pod("top", "n", priority=9))
    assert names(by_importance([a, b, top, c], NOW)) == ["top", "a", "b", "c"]


def test_earliest_start_is_taken_among_the_highest_priority_victims_only():
    victims = [view(pod("hi-late", "n", priority=10, start=T0 - 100)),
               view(pod("hi-early", "n", priority=10, start=T0 - 200)),
               view(pod("lo-earliest", "n", priority=1, start=T0 - 9000))]
    assert earliest_start_of_highest(victims, NOW) == T0 - 200
    assert earliest_start_of_highest([view(pod("x", "n", start=None))], NOW) == NOW


# ---- filterPodsWithPDBViolation -------------------------------------------------------------

def batch(name: str, **kw):
    return view(pod(name, "n", labels={"app": "batch"}, **kw))


def test_budget_is_spent_in_the_order_given():
    pods = [batch("b1"), batch("b2"), batch("b3")]
    violating, ok = filter_pods_with_pdb_violation(pods, [pdb_view(pdb("p", {"app": "batch"}, 1))])
    assert names(ok) == ["b1"]
    assert names(violating) == ["b2", "b3"]


def test_zero_budget_makes_every_matching_pod_violating():
    pods = [batch("b1"), view(pod("web", "n", labels={"app": "web"}))]
    violating, ok = filter_pods_with_pdb_violation(pods, [pdb_view(pdb("p", {"app": "batch"}, 0))])
    assert names(violating) == ["b1"]
    assert names(ok) == ["web"]


def test_pdb_only_matches_pods_of_its_namespace():
    other = view(pod("b1", "n", labels={"app": "batch"}, namespace="other"))
    violating, ok = filter_pods_with_pdb_violation([other], [pdb_view(pdb("p", {"app": "batch"}, 0))])
    assert (names(violating), names(ok)) == ([], ["b1"])


def test_unlabelled_pods_and_empty_or_nil_selectors_match_nothing():
    unlabelled = view(pod("bare", "n"))
    labelled = batch("b1")
    pdbs = [pdb_view(pdb("empty", {}, 0)), pdb_view(pdb("nil", None, 0))]
    violating, ok = filter_pods_with_pdb_violation([unlabelled, labelled], pdbs)
    assert (names(violating), names(ok)) == ([], ["bare", "b1"])


def test_match_expressions_select_too():
    pdbs = [pdb_view(pdb("p", None, 0, expressions=[
        {"key": "app", "operator": "In", "values": ["batch", "etl"]}]))]
    etl = view(pod("etl", "n", labels={"app": "etl"}))
    web = view(pod("web", "n", labels={"app": "web"}))
    violating, ok = filter_pods_with_pdb_violation([etl, web], pdbs)
    assert (names(violating), names(ok)) == (["etl"], ["web"])


def test_already_disrupted_pods_do_not_spend_the_budget():
    pdbs = [pdb_view(pdb("p", {"app": "batch"}, 1, disrupted=("b1",)))]
    violating, ok = filter_pods_with_pdb_violation([batch("b1"), batch("b2"), batch("b3")], pdbs)
    assert names(ok) == ["b1", "b2"]
    assert names(violating) == ["b3"]


def test_a_pod_is_violating_if_any_of_its_pdbs_is_overdrawn():
    tagged = view(pod("t", "n", labels={"app": "batch", "tier": "gold"}))
    pdbs = [pdb_view(pdb("generous", {"app": "batch"}, 5)),
            pdb_view(pdb("strict", {"tier": "gold"}, 0))]
    violating, _ = filter_pods_with_pdb_violation([tagged], pdbs)
    assert names(violating) == ["t"]


def test_violations_are_counted_over_the_nodes_potential_victims():
    # The fixture's case: batch-3 (started first) takes the one allowed disruption, so evicting
    # batch-2 alone still counts as a violation, as kube-scheduler reports it.
    b3 = batch("batch-3", start=T0 - 7000)
    b2 = batch("batch-2", start=T0 - 6000)
    pdbs = [pdb_view(pdb("batch-pdb", {"app": "batch"}, 1))]
    assert count_pdb_violations([b2], by_importance([b2, b3], NOW), pdbs) == 1
    assert count_pdb_violations([b3], by_importance([b2, b3], NOW), pdbs) == 0


@given(st.lists(st.sampled_from(["batch", "web", ""]), max_size=12), st.integers(-2, 6))
def test_grouping_is_a_stable_partition_and_spends_the_budget_exactly(apps, allowed):
    pods = [view(pod(f"p{i}", "n", labels={"app": app} if app else None))
            for i, app in enumerate(apps)]
    violating, ok = filter_pods_with_pdb_violation(pods, [pdb_view(pdb("p", {"app": "batch"}, allowed))])
    order = {p.uid: i for i, p in enumerate(pods)}
    assert sorted(names(violating) + names(ok)) == sorted(names(pods))
    assert [order[p.uid] for p in violating] == sorted(order[p.uid] for p in violating)
    assert [order[p.uid] for p in ok] == sorted(order[p.uid] for p in ok)
    matching = apps.count("batch")
    assert len(violating) == max(0, matching - max(allowed, 0))


# ---- PdbIndex: the per-request index gives the straightforward answers -----------------------

def reference_split(pods, pdbs):
    """filterPodsWithPDBViolation as written upstream: every pod against every PDB."""
    allowed = [p.disruptions_allowed for p in pdbs]
    violating, ok = [], []
    for p in pods:
        violated = False
        for i, budget in enumerate(pdbs):
            if budget.covers(p.namespace, p.name, p.labels):
                allowed[i] -= 1
                violated = violated or allowed[i] < 0
        (violating if violated else ok).append(p)
    return violating, ok


SELECTORS = [({"app": "batch"}, None), ({"app": "web"}, None), ({"app": "batch", "tier": "gold"}, None),
             (None, [{"key": "app", "operator": "In", "values": ["batch", "web"]}]),
             (None, [{"key": "tier", "operator": "DoesNotExist"}]),
             ({}, None), (None, None)]
LABELS = [None, {"app": "batch"}, {"app": "web"}, {"app": "batch", "tier": "gold"}, {"tier": "gold"}]

pdbs_strategy = st.lists(st.tuples(st.sampled_from(range(len(SELECTORS))), st.sampled_from(["a", "b"]),
                                   st.integers(-1, 2), st.sets(st.integers(0, 7), max_size=2)),
                         max_size=5)
index_pods_strategy = st.lists(st.tuples(st.sampled_from(range(len(LABELS))), st.sampled_from(["a", "b", "c"]),
                                         st.booleans()),
                               max_size=8)


#: Shared by every example, as the route shares one across requests; small, so it is emptied often.
SHARED_MATCHES = SelectorMatches(limit=16)


@given(pdbs_strategy, index_pods_strategy)
def test_index_agrees_with_matching_every_pod_against_every_pdb(pdb_specs, pod_specs):
    pdbs = [pdb_view(pdb(f"pdb{i}", SELECTORS[s][0], allowed, namespace=ns,
                         expressions=SELECTORS[s][1], disrupted=tuple(f"p{d}" for d in disrupted)))
            for i, (s, ns, allowed, disrupted) in enumerate(pdb_specs)]
    pods = []
    for i, (labels, ns, own_copy) in enumerate(pod_specs):
        p = view(pod(f"p{i}", "n", labels=LABELS[labels], namespace=ns))
        if own_copy and p.labels:  # equal labels that are not the shared mapping
            p.labels = dict(p.labels)
        pods.append(p)
    index = PdbIndex(pdbs)
    carried = PdbIndex(pdbs, SHARED_MATCHES)
    for p in pods:
        covering = tuple(i for i, budget in enumerate(pdbs)
                         if budget.covers(p.namespace, p.name, p.labels))
        assert index.guarding(p) == covering
        assert carried.guarding(p) == covering
    assert len(SHARED_MATCHES) <= SHARED_MATCHES.limit
    expected = reference_split(pods, pdbs)
    assert index.split(pods) == expected
    assert index.split(pods) == expected, "the index is reusable: budgets are spent per call"
    assert carried.split(pods) == expected
    assert filter_pods_with_pdb_violation(pods, pdbs) == expected
    # Pods no PDB guards spend no budget: leaving them out changes no count.
    guarded = [p for p in pods if index.guarding(p)]
    assert count_pdb_violations(pods, guarded, index) == count_pdb_violations(pods, pods, pdbs)


def test_carried_answers_follow_a_changed_pdb():
    matches = SelectorMatches()
    web = view(pod("w", "n", labels={"app": "web"}))
    assert PdbIndex([pdb_view(pdb("p", {"app": "web"}, 1))], matches).guarding(web) == (0,)
    # The same PDB edited to select other pods: a new view, so no stale answer.
    assert PdbIndex([pdb_view(pdb("p", {"app": "batch"}, 1))], matches).guarding(web) == ()
    assert PdbIndex([pdb_view(pdb("q", {"app": "batch"}, 1)), pdb_view(pdb("p", {"app": "web"}, 1))],
                    matches).guarding(web) == (1,)
