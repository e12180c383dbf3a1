"""SelectVictimsOnNode and the nominated-pods filter pass (reference §C.5, §A.0 step 4)."""

from __future__ import annotations

from extender.engine.framework import Code
from extender.engine.preemption import (
    NO_VICTIMS,
    Victims,
    fits_with_nominated,
    select_victims_on_node,
)
from extender.engine.runner import prepare_filters
from tests.engine.test_preemption_helpers import T0, cluster, node, pdb, pod, profile, view

NOW = T0
PROFILE = profile()


def select(state, me, node_name="n", *, pinned=(), now=NOW):
    checks = prepare_filters(PROFILE, me)
    return select_victims_on_node(checks, me, state.nodes[node_name], state.pdb_list(),
                                  state.nominated_pods(node_name), now, pinned=pinned)


def names(victims: Victims) -> list[str]:
    return [p.name for p in victims.pods]


def test_seed_scenario_reprieves_from_the_highest_priority_down():
    # 1.8's selectVictimsOnNode: remove every lower-priority pod (a, b, c; not d), then offer
    # them back most important first: c fits back (1.5 cpu used), b does not (3), a does not.
    state = cluster(node("n", cpu="4"),
                    pod("a", "n", priority=10, cpu="1"), pod("b", "n", priority=20, cpu="1500m"),
                    pod("c", "n", priority=30, cpu="1"), pod("d", "n", priority=200, cpu="500m"))
    result = select(state, view(pod("me", priority=100, cpu="2")))
    assert names(result) == ["b", "a"]
    assert result.num_pdb_violations == 0


def test_equal_priority_the_earlier_started_pod_is_reprieved_first():
    state = cluster(node("n", cpu="2"),
                    pod("late", "n", priority=10, start=T0 - 60),
                    pod("early", "n", priority=10, start=T0 - 600))
    assert names(select(state, view(pod("me", priority=100)))) == ["late"]


def test_unstarted_pod_counts_as_started_now():
    state = cluster(node("n", cpu="2"),
                    pod("unstarted", "n", priority=10, start=None),
                    pod("started", "n", priority=10, start=T0 - 1))
    assert names(select(state, view(pod("me", priority=100)))) == ["unstarted"]


def test_pdb_violating_pods_are_reprieved_before_more_important_ones():
    # Without the PDB `important` would be reprieved first and `guarded` evicted.
    objects = [node("n", cpu="2"),
               pod("important", "n", priority=50, labels={"app": "web"}),
               pod("guarded", "n", priority=10, labels={"app": "db"})]
    plain = select(cluster(*objects), view(pod("me", priority=100)))
    assert (names(plain), plain.num_pdb_violations) == (["guarded"], 0)
    guarded = select(cluster(*objects, pdb("db", {"app": "db"}, 0)), view(pod("me", priority=100)))
    assert (names(guarded), guarded.num_pdb_violations) == (["important"], 0)


def test_victims_from_both_groups_come_back_most_important_first():
    state = cluster(node("n", cpu="2"),
                    pod("important", "n", priority=50, labels={"app": "web"}),
                    pod("guarded", "n", priority=10, labels={"app": "db"}),
                    pdb("db", {"app": "db"}, 0))
    result = select(state, view(pod("me", priority=100, cpu="2")))
    assert names(result) == ["important", "guarded"]
    assert result.num_pdb_violations == 1


def test_fixture_worker_b2():
    # tests/fixtures/README.md: batch-3 started first; batch-pdb allows one disruption, so
    # batch-2 is the violating one; reprieving it fails, reprieving batch-3 succeeds.
    state = cluster(node("n", cpu="2", memory="4Gi"),
                    pod("batch-2", "n", priority=100, cpu="1800m", memory="1Gi",
                        labels={"app": "batch"}, start=T0 - 5400),
                    pod("batch-3", "n", priority=100, cpu="100m", memory="256Mi",
                        labels={"app": "batch"}, start=T0 - 6600),
                    pdb("batch-pdb", {"app": "batch"}, 1))
    result = select(state, view(pod("critical", priority=1000, cpu="1500m", memory="1Gi")))
    assert (names(result), result.num_pdb_violations) == (["batch-2"], 1)


def test_equal_or_higher_priority_pods_are_never_victims():
    state = cluster(node("n", cpu="2"), pod("peer", "n", priority=100, cpu="2"))
    result = select(state, view(pod("me", priority=100)))
    assert result.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert result.reasons == (NO_VICTIMS,)


def test_node_that_cannot_fit_the_pod_even_empty_of_victims_fails_with_the_filter_status():
    state = cluster(node("n", cpu="2"), pod("vip", "n", priority=500, cpu="1500m"),
                    pod("low", "n", priority=1, cpu="500m"))
    result = select(state, view(pod("me", priority=100, cpu="1")))
    assert result.code == Code.UNSCHEDULABLE
    assert (result.plugin, result.reasons) == ("NodeResourcesFit", ("Insufficient cpu",))


def test_unresolvable_filters_are_reported_as_such():
    state = cluster(node("n", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]),
                    pod("low", "n", priority=1))
    result = select(state, view(pod("me", priority=100)))
    assert result.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert result.plugin == "TaintToleration"


def test_host_port_conflicts_are_freed_by_preemption():
    state = cluster(node("n"), pod("low", "n", priority=1, cpu="100m", host_port=8080),
                    pod("other", "n", priority=1, cpu="100m"))
    result = select(state, view(pod("me", priority=100, host_port=8080)))
    assert names(result) == ["low"]


def test_pinned_pods_stay_victims():
    state = cluster(node("n", cpu="2"), pod("a", "n", priority=10), pod("b", "n", priority=5))
    me = view(pod("me", priority=100))
    assert names(select(state, me)) == ["b"]
    assert names(select(state, me, pinned={"uid-a"})) == ["a"]
    assert names(select(state, me, pinned={"uid-a", "uid-b"})) == ["a", "b"]


def test_node_info_is_left_untouched():
    state = cluster(node("n", cpu="2"), pod("a", "n", priority=10), pod("b", "n", priority=5))
    before = (dict(state.nodes["n"].pods), state.nodes["n"].requested.milli_cpu)
    select(state, view(pod("me", priority=100)))
    assert (dict(state.nodes["n"].pods), state.nodes["n"].requested.milli_cpu) == before


def test_fitting_without_any_eviction_gives_no_victims():
    state = cluster(node("n", cpu="4"), pod("a", "n", priority=10))
    result = select(state, view(pod("me", priority=100)))
    assert isinstance(result, Victims)
    assert result.pods == ()


# ---- nominated pods -----------------------------------------------------------------------

def nominated_cluster(nominated_priority: int):
    """n (4 cpu) runs `low` (2 cpu); `waiting` (2 cpu) is nominated to n."""
    return cluster(node("n", cpu="4"), pod("low", "n", priority=1, cpu="2"),
                   pod("waiting", priority=nominated_priority, cpu="2", nominated="n"))


def test_room_reserved_for_a_nominated_pod_of_higher_or_equal_priority_is_respected():
    for priority in (100, 500):
        result = select(nominated_cluster(priority), view(pod("me", priority=100, cpu="2")))
        assert names(result) == ["low"]


def test_lower_priority_nominated_pods_are_ignored():
    result = select(nominated_cluster(50), view(pod("me", priority=100, cpu="2")))
    assert names(result) == []


def test_fits_with_nominated_runs_both_passes():
    state = nominated_cluster(500)
    info = state.nodes["n"]
    checks = prepare_filters(PROFILE, me := view(pod("me", priority=100, cpu="2")))
    nominated = state.nominated_pods("n")
    status = fits_with_nominated(checks, me, info, nominated)
    assert status is not None and status.reasons == ("Insufficient cpu",)
    assert fits_with_nominated(checks, me, info, ()) is None
    # The pod's own nomination never reserves room against itself.
    itself = view(pod("me", priority=100, cpu="2", nominated="n"))
    assert fits_with_nominated(checks, itself, info, [itself]) is None
    assert len(info.pods) == 1  # the nominated pods were added to a copy only
