"""pickOneNodeForPreemption: each criterion, in order (reference §C.7, seed article)."""

from __future__ import annotations

from extender.engine.preemption import Victims, pick_one_node_for_preemption
from tests.engine.test_preemption_helpers import T0, pod, view

NOW = T0
INT32_MIN = -(1 << 31)


def victims(*specs: tuple[int, float | None], violations: int = 0) -> Victims:
    """Victims from (priority, start time) pairs, most important first as the dry run gives."""
    pods = [view(pod(f"v{i}-{prio}", "n", priority=prio, start=start))
            for i, (prio, start) in enumerate(specs)]
    pods.sort(key=lambda p: (-p.priority, p.start_time if p.start_time is not None else NOW))
    return Victims(tuple(pods), violations)


def pick(**nodes: Victims) -> str | None:
    return pick_one_node_for_preemption(nodes, NOW)


def test_no_candidates():
    assert pick() is None


def test_fewest_pdb_violations_first_even_over_lower_priority_victims():
    assert pick(a=victims((10, T0), violations=1), b=victims((900, T0), (900, T0))) == "b"


def test_then_lowest_highest_victim_priority():
    assert pick(a=victims((50, T0)), b=victims((40, T0), (40, T0), (40, T0))) == "b"


def test_then_lowest_sum_of_priorities():
    assert pick(a=victims((10, T0), (10, T0)), b=victims((10, T0), (5, T0))) == "b"


def test_sum_is_offset_so_negative_priorities_still_cost():
    # Summed raw, [-5, -5] = -10 would beat [-5] = -5; offset by 2^31 each, it does not.
    assert pick(a=victims((-5, T0), (-5, T0)), b=victims((-5, T0))) == "b"


def test_then_fewest_victims():
    # Same highest (0) and same offset sum (2^31 + 0 == 2^31 + 2^31 + INT32_MIN).
    assert pick(a=victims((0, T0), (INT32_MIN, T0)), b=victims((0, T0))) == "b"


def test_then_latest_start_among_the_highest_priority_victims():
    a = victims((10, T0 - 50), (5, T0 - 500))
    b = victims((10, T0 - 100), (5, T0 - 5))
    # b's lower-priority victim started later, but only the priority-10 victims count.
    assert pick(a=a, b=b) == "a"
    assert pick(a=victims((10, T0 - 500)), b=victims((10, None))) == "b"  # unstarted = now


def test_then_the_first_node():
    assert pick(a=victims((10, T0)), b=victims((10, T0))) == "a"
    assert pick(b=victims((10, T0)), a=victims((10, T0))) == "b"


def test_one_criterion_decides_only_among_the_survivors_of_the_previous():
    # c has the fewest victims but is out after criterion 2; a and b tie to criterion 3.
    nodes = dict(a=victims((10, T0), (1, T0)), b=victims((10, T0), (2, T0)), c=victims((20, T0)))
    assert pick_one_node_for_preemption(nodes, NOW) == "a"


def test_a_node_needing_no_victims_wins_outright():
    assert pick(a=victims((1, T0)), b=Victims((), 0)) == "b"
