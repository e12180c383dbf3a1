"""PreemptionToleration (reference §C.10): the policy, exemption, and its effect on preemption."""

from __future__ import annotations

import random

import pytest

from extender.engine.framework import Code, unschedulable
from extender.engine.preemption import (
    MINIMUM_PREEMPTABLE_PRIORITY,
    TOLERATION_SECONDS,
    DefaultPreemption,
    DropReason,
    PreemptionToleration,
    TolerationPolicy,
    Victims,
    exempted_from_preemption,
    preempt,
    process_preemption,
    select_victims_on_node,
    toleration_policy,
)
from extender.engine.runner import prepare_filters
from tests.engine.test_preemption_helpers import (
    T0,
    cluster,
    node,
    pc_view,
    pod,
    priority_class,
    profile,
    view,
)

NOW = T0


def tolerant(minimum: str | None = None, seconds: str | None = None, value: int = 100):
    annotations = {}
    if minimum is not None:
        annotations[MINIMUM_PREEMPTABLE_PRIORITY] = minimum
    if seconds is not None:
        annotations[TOLERATION_SECONDS] = seconds
    return pc_view(priority_class("tolerant", value, annotations))


def victim(scheduled: float | None = T0 - 600, **kw):
    return view(pod("victim", "n", priority=100, priority_class="tolerant", scheduled=scheduled, **kw))


def preemptor(priority: int = 1000, **kw):
    return view(pod("preemptor", priority=priority, **kw))


# ---- the policy --------------------------------------------------------------------------------

def test_policy_defaults_to_class_value_plus_one_and_no_toleration():
    assert toleration_policy(tolerant(value=100)) == TolerationPolicy(101, 0)


def test_policy_reads_both_annotations():
    assert toleration_policy(tolerant("10000", "-1")) == TolerationPolicy(10000, -1)
    assert toleration_policy(tolerant("+7", "3600")) == TolerationPolicy(7, 3600)


@pytest.mark.parametrize("minimum, seconds", [
    ("ten", None), (" 5", None), ("1_000", None), ("2147483648", None),  # not an int32
    (None, "1.5"), (None, "9223372036854775808"), (None, ""),
])
def test_policy_rejects_what_go_parseint_rejects(minimum, seconds):
    with pytest.raises(ValueError):
        toleration_policy(tolerant(minimum, seconds))


# ---- ExemptedFromPreemption ----------------------------------------------------------------

def test_victim_without_priority_class_is_never_exempt():
    bare = view(pod("bare", "n", priority=100, scheduled=T0))
    assert not exempted_from_preemption(bare, preemptor(), tolerant("10000", "-1"), NOW)


def test_unknown_priority_class_exempts_the_victim():
    assert exempted_from_preemption(victim(), preemptor(), None, NOW)


def test_non_preempting_preemptor_is_tolerated():
    never = preemptor(preemption_policy="Never")
    assert exempted_from_preemption(victim(), never, tolerant(), NOW)


def test_preemptor_at_or_above_the_minimum_priority_is_not_tolerated():
    assert not exempted_from_preemption(victim(), preemptor(10000), tolerant("10000", "-1"), NOW)
    assert exempted_from_preemption(victim(), preemptor(9999), tolerant("10000", "-1"), NOW)


def test_default_minimum_lets_any_higher_priority_preempt():
    assert not exempted_from_preemption(victim(), preemptor(101), tolerant(seconds="-1"), NOW)


def test_negative_toleration_seconds_tolerate_forever():
    ancient = victim(scheduled=T0 - 10 * 365 * 86400)
    assert exempted_from_preemption(ancient, preemptor(), tolerant("10000", "-1"), NOW)


def test_positive_toleration_seconds_count_from_the_scheduled_condition():
    policy = tolerant("10000", "3600")
    assert exempted_from_preemption(victim(scheduled=T0 - 3599), preemptor(), policy, NOW)
    assert not exempted_from_preemption(victim(scheduled=T0 - 3600), preemptor(), policy, NOW)
    assert not exempted_from_preemption(victim(scheduled=T0 - 7200), preemptor(), policy, NOW)


def test_zero_toleration_seconds_tolerate_nothing():
    assert not exempted_from_preemption(victim(scheduled=T0), preemptor(), tolerant("10000", "0"), NOW)


def test_victim_not_yet_scheduled_is_tolerated():
    assert exempted_from_preemption(victim(scheduled=None), preemptor(), tolerant("10000", "60"), NOW)


def test_broken_policy_tolerates_nothing():
    assert not exempted_from_preemption(victim(), preemptor(), tolerant("lots", "-1"), NOW)


# ---- in victim selection -------------------------------------------------------------------

FOREVER = {MINIMUM_PREEMPTABLE_PRIORITY: "10000", TOLERATION_SECONDS: "-1"}
HOUR = {MINIMUM_PREEMPTABLE_PRIORITY: "10000", TOLERATION_SECONDS: "3600"}


def toleration_cluster():
    """n1 (4 cpu): `guarded` (tolerates forever, 2 cpu) + `plain` (2 cpu).
    n2 (4 cpu): `young` (tolerates an hour, scheduled 10 min ago, 4 cpu)."""
    return cluster(
        priority_class("guarded", 100, FOREVER), priority_class("hourly", 100, HOUR),
        priority_class("plain", 100),
        node("n1"), node("n2"),
        pod("guarded", "n1", priority=100, cpu="2", priority_class="guarded", scheduled=T0 - 86400),
        pod("plain", "n1", priority=100, cpu="2", priority_class="plain", scheduled=T0 - 86400),
        pod("young", "n2", priority=100, cpu="4", priority_class="hourly", scheduled=T0 - 600),
    )


def test_exempt_pods_are_never_victims():
    state = toleration_cluster()
    me = view(pod("me", priority=1000, cpu="2"))
    can = PreemptionToleration().can_preempt(me, state, NOW)
    checks = prepare_filters(profile("PreemptionToleration"), me)
    result = select_victims_on_node(checks, me, state.nodes["n1"], state.pdb_list(), (), NOW,
                                    can_preempt=can)
    assert isinstance(result, Victims)
    assert [p.name for p in result.pods] == ["plain"]
    # Needing 3 cpu, n1 could only be freed by evicting `guarded` too.
    big = view(pod("big", priority=1000, cpu="3"))
    result = select_victims_on_node(prepare_filters(profile("PreemptionToleration"), big), big,
                                    state.nodes["n1"], state.pdb_list(), (), NOW,
                                    can_preempt=PreemptionToleration().can_preempt(big, state, NOW))
    assert result.code == Code.UNSCHEDULABLE
    assert result.reasons == ("Insufficient cpu",)


def test_default_preemption_ignores_the_annotations():
    state = toleration_cluster()
    big = view(pod("big", priority=1000, cpu="3"))
    result = select_victims_on_node(prepare_filters(profile(), big), big, state.nodes["n1"],
                                    state.pdb_list(), (), NOW,
                                    can_preempt=DefaultPreemption().can_preempt(big, state, NOW))
    # Equal priority and start time: the node's order decides.
    assert [p.name for p in result.pods] == ["guarded", "plain"]


def test_toleration_expires():
    state = toleration_cluster()
    me = view(pod("me", priority=1000, cpu="4"))
    checks = prepare_filters(profile("PreemptionToleration"), me)
    for now, expected in ((T0, None), (T0 + 3000, ["young"])):
        plugin = PreemptionToleration()
        result = select_victims_on_node(checks, me, state.nodes["n2"], (), (), now,
                                        can_preempt=plugin.can_preempt(me, state, now),
                                        no_victims=plugin.no_victims)
        if expected is None:
            # scheduler-plugins v0.34.7 preemption_toleration.go words it its own way (the
            # conformance oracle of that release showed it).
            assert result.reasons == ("No victims found on node n2 for preemptor pod me",)
        else:
            assert [p.name for p in result.pods] == expected


def test_extender_ignores_exempt_proposals_and_drops_nodes_that_need_them():
    state = toleration_cluster()
    me = view(pod("me", priority=1000, cpu="3"))
    outcome = process_preemption(profile("PreemptionToleration"), me,
                                 {"n1": ["uid-guarded", "uid-plain"], "n2": ["uid-young"]},
                                 state, NOW)
    assert outcome.victims == {}
    assert outcome.dropped == {"n1": DropReason.NOT_ENOUGH_VICTIMS,
                               "n2": DropReason.NOT_ENOUGH_VICTIMS}
    assert outcome.ignored == {"n1": ("uid-guarded",), "n2": ("uid-young",)}
    # Needing only 2 cpu, n1 works with `plain` alone.
    small = view(pod("small", priority=1000, cpu="2"))
    outcome = process_preemption(profile("PreemptionToleration"), small,
                                 {"n1": ["uid-guarded", "uid-plain"]}, state, NOW)
    assert [p.name for p in outcome.victims["n1"].pods] == ["plain"]


def test_preempt_under_toleration_reports_without_prefix():
    state = toleration_cluster()
    me = view(pod("me", priority=1000, cpu="3"))
    insufficient = unschedulable("NodeResourcesFit", "Insufficient cpu")
    statuses = {"n1": insufficient, "n2": insufficient}
    result = preempt(profile("PreemptionToleration"), me, statuses, state, NOW, random.Random(1))
    assert result.status.code == Code.UNSCHEDULABLE
    assert result.status.message == (
        "0/2 nodes are available: 1 Insufficient cpu, "
        "1 No victims found on node n2 for preemptor pod me.")
    # An hour later `young` no longer tolerates preemption: n2 becomes the candidate.
    result = preempt(profile("PreemptionToleration"), me, statuses, state, T0 + 3600,
                     random.Random(1))
    assert result.node_name == "n2"
    assert [p.name for p in result.victims.pods] == ["young"]
