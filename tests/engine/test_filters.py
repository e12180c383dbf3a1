"""The filter plugins against algorithms.md §A: each plugin's cases and exact reason strings,
then the whole pipeline (policy order, first failure wins) and the filter fixture.

Expectations are computed by hand from the reference.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from extender import wire
from extender.engine.filters.taint_toleration import REASON as TAINT_REASON
from extender.engine.framework import Code, Status
from extender.engine.policy import load_policy
from extender.engine.profile import build_profile
from extender.engine.runner import prepare_filters, run_filters
from extender.model.pod import PodView
from extender.state.snapshot import load_snapshot
from tests.engine.filter_helpers import (
    DEFAULT_ORDER,
    UNRESOLVABLE,
    UNSCHEDULABLE,
    bound,
    container,
    expr,
    filter_nodes,
    name_field,
    node,
    pod,
    port,
    profile,
    status_of,
    taint,
    term,
    toleration,
)

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"

UNSCHEDULABLE_REASON = "node(s) were unschedulable"
NODE_NAME_REASON = "node(s) didn't match the requested node name"
AFFINITY_REASON = "node(s) didn't match Pod's node affinity/selector"
PREFILTER_REASON = "node(s) didn't satisfy plugin(s) [NodeAffinity]"
CONFLICT_REASON = "pod affinity terms conflict"
PORTS_REASON = "node(s) didn't have free ports for the requested pod ports"
CORDON_KEY = "node.kubernetes.io/unschedulable"


def judge(plugin: str, incoming: PodView, info, **profile_args: Any) -> tuple[Code, str] | None:
    """One node through a profile holding only `plugin`: None, or (code, message)."""
    status = status_of(profile([plugin], **profile_args), incoming, info)
    if status is None:
        return None
    assert status.plugin == plugin
    return status.code, status.message


# ---- NodeUnschedulable (A.4) ---------------------------------------------------------------


def test_cordoned_node_is_unschedulable_and_unresolvable():
    verdict = status_of(profile(["NodeUnschedulable"]), pod(), node(unschedulable=True))
    assert verdict == Status(UNRESOLVABLE, (UNSCHEDULABLE_REASON,), "NodeUnschedulable")
    assert not verdict.resolvable


def test_schedulable_node_passes_node_unschedulable():
    assert judge("NodeUnschedulable", pod(), node()) is None


@pytest.mark.parametrize("tol", [
    toleration(CORDON_KEY, "Exists", effect="NoSchedule"),
    toleration(operator="Exists"),
    toleration(CORDON_KEY, "Exists"),
    toleration(operator="Exists", effect="NoSchedule"),
    toleration(CORDON_KEY, "Equal", "", "NoSchedule"),
    toleration(CORDON_KEY, "", "", "NoSchedule"),
], ids=["key-exists-noschedule", "exists-everything", "key-exists-any-effect",
        "exists-any-key-noschedule", "equal-empty-value", "empty-operator"])
def test_tolerating_the_cordon_taint_lifts_node_unschedulable(tol):
    assert judge("NodeUnschedulable", pod(tolerations=[tol]), node(unschedulable=True)) is None


@pytest.mark.parametrize("tol", [
    toleration(CORDON_KEY, "Exists", effect="NoExecute"),
    toleration(CORDON_KEY, "Exists", effect="PreferNoSchedule"),
    toleration(CORDON_KEY, "Equal", "true", "NoSchedule"),
    toleration("node.kubernetes.io/not-ready", "Exists"),
], ids=["wrong-effect-noexecute", "wrong-effect-prefer", "wrong-value", "other-key"])
def test_other_tolerations_do_not_lift_node_unschedulable(tol):
    assert judge("NodeUnschedulable", pod(tolerations=[tol]), node(unschedulable=True)) == (
        UNRESOLVABLE, UNSCHEDULABLE_REASON)


def test_node_unschedulable_reads_the_flag_not_the_taint_list():
    # The cordon taint alone is TaintToleration's business; the flag alone is enough here.
    tainted_only = node("t", taints=[taint(CORDON_KEY)])
    assert judge("NodeUnschedulable", pod(), tainted_only) is None
    assert judge("TaintToleration", pod(), tainted_only) == (UNRESOLVABLE, TAINT_REASON)
    flag_only = node("f", unschedulable=True)
    assert judge("NodeUnschedulable", pod(), flag_only) == (UNRESOLVABLE, UNSCHEDULABLE_REASON)


# ---- NodeName (A.2) --------------------------------------------------------------------------


def test_node_name_fits_only_the_named_node():
    passed, statuses = filter_nodes(profile(["NodeName"]), pod(node_name="n2"),
                                    [node("n1"), node("n2"), node("n3")])
    assert passed == ["n2"]
    assert statuses == {"n1": (UNRESOLVABLE, "NodeName", NODE_NAME_REASON),
                        "n3": (UNRESOLVABLE, "NodeName", NODE_NAME_REASON)}


def test_pod_without_node_name_fits_every_node_for_node_name():
    passed, statuses = filter_nodes(profile(["NodeName"]), pod(), [node("n1"), node("n2")])
    assert passed == ["n1", "n2"] and statuses == {}


def test_pod_with_node_name_keeps_its_tolerations_and_node_selector():
    prof = profile()
    tolerant = pod(node_name="n1", tolerations=[toleration("dedicated", "Exists")])
    assert status_of(prof, tolerant, node("n1", taints=[taint("dedicated", "db")])) is None
    picky = pod(node_name="n1", node_selector={"zone": "b"})
    assert status_of(prof, picky, node("n1", labels={"zone": "a"})) == Status(
        UNRESOLVABLE, (AFFINITY_REASON,), "NodeAffinity")


# ---- TaintToleration (A.5) -------------------------------------------------------------------


def test_node_without_taints_passes():
    assert judge("TaintToleration", pod(), node()) is None


def test_prefer_no_schedule_is_ignored_by_the_filter():
    info = node(taints=[taint("spot", "true", "PreferNoSchedule")])
    assert judge("TaintToleration", pod(), info) is None


@pytest.mark.parametrize("effect", ["NoSchedule", "NoExecute"])
def test_untolerated_taint_rejects_with_the_newest_reason(effect):
    info = node(taints=[taint("dedicated", "gpu", effect)])
    assert judge("TaintToleration", pod(), info) == (UNRESOLVABLE, TAINT_REASON)


@pytest.mark.parametrize("effect", ["NoSchedule", "NoExecute"])
def test_untolerated_taint_rejects_with_its_key_and_value_before_1_34(effect):
    info = node(taints=[taint("dedicated", "gpu", effect)])
    assert judge("TaintToleration", pod(), info, kubernetes_version="1.33") == (
        UNRESOLVABLE, "node(s) had untolerated taint {dedicated: gpu}")
    assert judge("TaintToleration", pod(), info, kubernetes_version="1.34") == (
        UNRESOLVABLE, TAINT_REASON)


def test_empty_taint_value_renders_as_key_colon_space():
    info = node(taints=[taint("node-role.kubernetes.io/control-plane")])
    assert judge("TaintToleration", pod(), info, kubernetes_version="v1.30") == (
        UNRESOLVABLE, "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }")


def test_first_untolerated_taint_in_node_order_is_reported():
    taints = [taint("a", "1"), taint("b", "2", "PreferNoSchedule"), taint("c", "3", "NoExecute"),
              taint("d", "4")]
    tolerant_of_a = pod(tolerations=[toleration("a", "Equal", "1")])
    old = {"kubernetes_version": "1.33"}
    assert judge("TaintToleration", tolerant_of_a, node(taints=taints), **old) == (
        UNRESOLVABLE, "node(s) had untolerated taint {c: 3}")
    assert judge("TaintToleration", tolerant_of_a, node(taints=taints[::-1]), **old) == (
        UNRESOLVABLE, "node(s) had untolerated taint {d: 4}")
    assert judge("TaintToleration", pod(), node(taints=taints), **old) == (
        UNRESOLVABLE, "node(s) had untolerated taint {a: 1}")


def test_every_hard_taint_must_be_tolerated():
    taints = [taint("a", "1"), taint("c", "3", "NoExecute")]
    both = pod(tolerations=[toleration("a", "Equal", "1"), toleration("c", "Exists")])
    assert judge("TaintToleration", both, node(taints=taints)) is None


# (toleration, taint, tolerated?) — one row per rule of §A.5.
TOLERATION_CASES = [
    (toleration("k", "Equal", "v"), taint("k", "v"), True),
    (toleration("k", "Equal", "v"), taint("k", "w"), False),
    (toleration("k", "", "v"), taint("k", "v"), True),
    (toleration("k", "", "v"), taint("k", "V"), False),
    (toleration("k", "Equal", ""), taint("k", ""), True),
    (toleration("k", "Exists"), taint("k", "anything"), True),
    (toleration("k", "Exists"), taint("other", "v"), False),
    (toleration("", "Exists"), taint("any.example/key", "v", "NoExecute"), True),
    (toleration("", "Equal", "v"), taint("whatever", "v"), True),
    (toleration("", "Equal", "v"), taint("whatever", "w"), False),
    (toleration("k", "Exists", effect=""), taint("k", "v", "NoExecute"), True),
    (toleration("k", "Exists", effect="NoSchedule"), taint("k", "v", "NoSchedule"), True),
    (toleration("k", "Exists", effect="NoSchedule"), taint("k", "v", "NoExecute"), False),
    (toleration("k", "Exists", effect="NoExecute"), taint("k", "v", "NoSchedule"), False),
    (toleration("k", "Lt", "5"), taint("k", "3"), True),
    (toleration("k", "Lt", "5"), taint("k", "5"), False),
    (toleration("k", "Lt", "5"), taint("k", "7"), False),
    (toleration("k", "Lt", "2"), taint("k", "-3"), True),
    (toleration("k", "Gt", "5"), taint("k", "7"), True),
    (toleration("k", "Gt", "5"), taint("k", "5"), False),
    (toleration("k", "Gt", "5"), taint("k", "3"), False),
    (toleration("k", "Gt", "-10"), taint("k", "-2"), True),
    (toleration("k", "Lt", "5"), taint("k", "abc"), False),
    (toleration("k", "Lt", "5"), taint("k", "1.5"), False),
    (toleration("k", "Lt", "5"), taint("k", ""), False),
    (toleration("k", "Gt", "x"), taint("k", "7"), False),
    (toleration("k", "Gt", ""), taint("k", "7"), False),
    (toleration("k", "In", "v"), taint("k", "v"), False),
    (toleration("k", "exists"), taint("k", "v"), False),
]


@pytest.mark.parametrize(("tol", "hard_taint", "tolerated"), TOLERATION_CASES,
                         ids=[f"{t['operator'] or 'empty'}-{t['key'] or 'nokey'}-{t['value']}"
                              f"-{t['effect'] or 'any'}-vs-{h['key']}={h['value']}:{h['effect']}"
                              for t, h, _ in TOLERATION_CASES])
def test_toleration_matching_rules(tol, hard_taint, tolerated):
    verdict = judge("TaintToleration", pod(tolerations=[tol]), node(taints=[hard_taint]))
    if tolerated:
        assert verdict is None
    else:
        assert verdict == (UNRESOLVABLE, TAINT_REASON)


@pytest.mark.parametrize(("tol", "hard_taint"), [
    (toleration("k", "Lt", "2000"), taint("k", "1_000")),
    (toleration("k", "Gt", "5"), taint("k", "99999999999999999999")),
    (toleration("k", "Gt", "1_0"), taint("k", "500")),
], ids=["underscore-taint", "int64-overflow", "underscore-toleration"])
def test_toleration_numeric_values_parse_like_go(tol, hard_taint):
    verdict = judge("TaintToleration", pod(tolerations=[tol]), node(taints=[hard_taint]))
    assert verdict == (UNRESOLVABLE, TAINT_REASON)


# ---- NodeAffinity (A.6) ----------------------------------------------------------------------


def test_pod_without_selector_or_affinity_skips_node_affinity():
    assert prepare_filters(profile(["NodeAffinity"]), pod()).checks == []
    assert judge("NodeAffinity", pod(), node(labels={})) is None


@pytest.mark.parametrize(("selector", "labels", "fits"), [
    ({"zone": "a"}, {"zone": "a", "disk": "ssd"}, True),
    ({"zone": "a"}, {"zone": "b"}, False),
    ({"zone": "a"}, {}, False),
    ({"zone": "a", "disk": "ssd"}, {"zone": "a", "disk": "hdd"}, False),
    ({"zone": "a", "disk": "ssd"}, {"zone": "a", "disk": "ssd"}, True),
    ({"flag": ""}, {"flag": ""}, True),
    ({"flag": ""}, {}, False),
])
def test_node_selector_needs_every_key_with_equal_value(selector, labels, fits):
    verdict = judge("NodeAffinity", pod(node_selector=selector), node(labels=labels))
    assert verdict == (None if fits else (UNRESOLVABLE, AFFINITY_REASON))


OPERATOR_CASES = [
    (expr("zone", "In", "a", "b"), {"zone": "b"}, True),
    (expr("zone", "In", "a", "b"), {"zone": "c"}, False),
    (expr("zone", "In", "a", "b"), {}, False),
    (expr("zone", "NotIn", "a"), {"zone": "b"}, True),
    (expr("zone", "NotIn", "a"), {}, True),
    (expr("zone", "NotIn", "a", "b"), {"zone": "a"}, False),
    (expr("zone", "Exists"), {"zone": "x"}, True),
    (expr("zone", "Exists"), {"zone": ""}, True),
    (expr("zone", "Exists"), {"disk": "ssd"}, False),
    (expr("zone", "DoesNotExist"), {"disk": "ssd"}, True),
    (expr("zone", "DoesNotExist"), {"zone": ""}, False),
    (expr("cores", "Gt", "4"), {"cores": "8"}, True),
    (expr("cores", "Gt", "4"), {"cores": "4"}, False),
    (expr("cores", "Gt", "4"), {"cores": "eight"}, False),
    (expr("cores", "Gt", "4"), {"cores": "4.5"}, False),
    (expr("cores", "Gt", "4"), {"cores": ""}, False),
    (expr("cores", "Gt", "4"), {"cores": "0x10"}, False),
    (expr("cores", "Gt", "4"), {"cores": "9223372036854775808"}, False),
    (expr("cores", "Gt", "4"), {}, False),
    (expr("cores", "Gt", "007"), {"cores": "8"}, True),
    (expr("cores", "Lt", "4"), {"cores": "2"}, True),
    (expr("cores", "Lt", "4"), {"cores": "4"}, False),
    (expr("cores", "Lt", "4"), {"cores": "two"}, False),
    (expr("cores", "Lt", "9223372036854775807"), {"cores": "9223372036854775806"}, True),
    (expr("cores", "Lt", "4"), {}, False),
]


@pytest.mark.parametrize(("requirement", "labels", "fits"), OPERATOR_CASES,
                         ids=[f"{r['key']}-{r['operator']}-{'|'.join(r.get('values', []))}-{labels}"
                              for r, labels, _ in OPERATOR_CASES])
def test_match_expression_operators(requirement, labels, fits):
    incoming = pod(required_terms=[term(requirement)])
    verdict = judge("NodeAffinity", incoming, node(labels=labels))
    assert verdict == (None if fits else (UNRESOLVABLE, AFFINITY_REASON))


def test_node_selector_and_required_affinity_must_both_match():
    incoming = pod(node_selector={"disk": "ssd"}, required_terms=[term(expr("zone", "In", "a"))])
    prof = profile(["NodeAffinity"])
    passed, statuses = filter_nodes(prof, incoming, [
        node("both", labels={"disk": "ssd", "zone": "a"}),
        node("selector-only", labels={"disk": "ssd", "zone": "b"}),
        node("affinity-only", labels={"disk": "hdd", "zone": "a"}),
    ])
    assert passed == ["both"]
    assert statuses == {"selector-only": (UNRESOLVABLE, "NodeAffinity", AFFINITY_REASON),
                        "affinity-only": (UNRESOLVABLE, "NodeAffinity", AFFINITY_REASON)}


def test_terms_are_ored_and_expressions_within_a_term_anded():
    incoming = pod(required_terms=[
        term(expr("zone", "In", "a"), expr("disk", "In", "ssd")),
        term(expr("gpu", "Exists")),
    ])
    passed, statuses = filter_nodes(profile(["NodeAffinity"]), incoming, [
        node("a-ssd", labels={"zone": "a", "disk": "ssd"}),
        node("a-hdd", labels={"zone": "a", "disk": "hdd"}),
        node("gpu", labels={"gpu": "a100"}),
        node("b-ssd", labels={"zone": "b", "disk": "ssd"}),
    ])
    assert passed == ["a-ssd", "gpu"]
    assert set(statuses) == {"a-hdd", "b-ssd"}
    assert {v for v in statuses.values()} == {(UNRESOLVABLE, "NodeAffinity", AFFINITY_REASON)}


@pytest.mark.parametrize("terms", [[term()], [], [term(), term()]],
                         ids=["one-empty-term", "no-terms", "two-empty-terms"])
def test_empty_terms_match_nothing(terms):
    incoming = pod(required_terms=terms)
    for labels in ({}, {"zone": "a"}):
        assert judge("NodeAffinity", incoming, node(labels=labels)) == (UNRESOLVABLE, AFFINITY_REASON)


@pytest.mark.parametrize("invalid", [
    expr("zone", "In"),
    expr("zone", "NotIn"),
    expr("zone", "Exists", "a"),
    expr("zone", "DoesNotExist", "a"),
    expr("cores", "Gt", "4", "5"),
    expr("cores", "Gt"),
    expr("cores", "Lt", "four"),
    expr("zone", "Equals", "a"),
    expr("zone", "in", "a"),
    expr("", "Exists"),
], ids=["in-no-values", "notin-no-values", "exists-with-values", "doesnotexist-with-values",
        "gt-two-values", "gt-no-value", "lt-non-integer", "unknown-operator", "lowercase-in",
        "empty-key"])
def test_invalid_term_is_dropped_while_another_term_can_match(invalid):
    # Alone, the invalid term matches nothing — even a node its other requirement would pass.
    alone = pod(required_terms=[term(invalid, expr("zone", "NotIn", "x"))])
    assert judge("NodeAffinity", alone, node(labels={"zone": "a", "cores": "8"})) == (
        UNRESOLVABLE, AFFINITY_REASON)
    # Beside a valid term, that term still decides.
    beside = pod(required_terms=[term(invalid), term(expr("disk", "In", "ssd"))])
    assert judge("NodeAffinity", beside, node(labels={"disk": "ssd", "zone": "a"})) is None
    assert judge("NodeAffinity", beside, node(labels={"disk": "hdd", "zone": "a"})) == (
        UNRESOLVABLE, AFFINITY_REASON)


@pytest.mark.parametrize(("requirement", "labels"), [
    (expr("zone", "NotIn", "not a label value!"), {"zone": "a"}),
    (expr("bad key", "DoesNotExist"), {"zone": "a"}),
    (expr("cores", "Gt", "-2"), {"cores": "8"}),
    (expr("cores", "Lt", "-5"), {"cores": "-10"}),
], ids=["notin-invalid-value", "doesnotexist-invalid-key", "gt-negative-bound",
        "lt-negative-bound"])
def test_requirement_with_invalid_key_or_value_matches_nothing(requirement, labels):
    incoming = pod(required_terms=[term(requirement)])
    assert judge("NodeAffinity", incoming, node(labels=labels)) == (UNRESOLVABLE, AFFINITY_REASON)


@pytest.mark.parametrize(("requirement", "labels"), [
    (expr("cores", "Gt", "5"), {"cores": "1_000"}),
    (expr("cores", "Gt", "1_0"), {"cores": "100"}),
], ids=["underscore-label", "underscore-requirement"])
def test_gt_lt_parse_like_go(requirement, labels):
    incoming = pod(required_terms=[term(requirement)])
    assert judge("NodeAffinity", incoming, node(labels=labels)) == (UNRESOLVABLE, AFFINITY_REASON)


def test_match_fields_name_in_restricts_the_nodes_in_prefilter():
    incoming = pod(required_terms=[term(fields=[name_field("In", "n1")])])
    passed, statuses = filter_nodes(profile(["NodeAffinity"]), incoming,
                                    [node("n1"), node("n2"), node("n3")])
    assert passed == ["n1"]
    assert statuses == {"n2": (UNRESOLVABLE, "NodeAffinity", PREFILTER_REASON),
                        "n3": (UNRESOLVABLE, "NodeAffinity", PREFILTER_REASON)}


def test_match_fields_name_not_in():
    incoming = pod(required_terms=[term(fields=[name_field("NotIn", "n1")])])
    passed, statuses = filter_nodes(profile(["NodeAffinity"]), incoming, [node("n1"), node("n2")])
    assert passed == ["n2"]
    assert statuses == {"n1": (UNRESOLVABLE, "NodeAffinity", AFFINITY_REASON)}


@pytest.mark.parametrize("fields", [
    [name_field("NotIn", "n1", "n2")],
    [name_field("NotIn")],
    [{"key": "metadata.name", "operator": "Exists"}],
], ids=["notin-two-values", "notin-no-value", "exists-operator"])
def test_invalid_match_fields_match_nothing(fields):
    incoming = pod(required_terms=[term(fields=fields)])
    passed, statuses = filter_nodes(profile(["NodeAffinity"]), incoming, [node("n1"), node("n3")])
    assert passed == []
    assert statuses == {"n1": (UNRESOLVABLE, "NodeAffinity", AFFINITY_REASON),
                        "n3": (UNRESOLVABLE, "NodeAffinity", AFFINITY_REASON)}


def test_name_and_labels_in_one_term_are_anded():
    incoming = pod(required_terms=[term(expr("zone", "In", "a"), fields=[name_field("In", "n1")])])
    prof = profile(["NodeAffinity"])
    assert filter_nodes(prof, incoming, [node("n1", labels={"zone": "a"}),
                                         node("n2", labels={"zone": "a"})]) == (
        ["n1"], {"n2": (UNRESOLVABLE, "NodeAffinity", PREFILTER_REASON)})
    assert filter_nodes(prof, incoming, [node("n1", labels={"zone": "b"})]) == (
        [], {"n1": (UNRESOLVABLE, "NodeAffinity", AFFINITY_REASON)})


def test_prefilter_names_are_the_union_over_terms():
    incoming = pod(required_terms=[term(fields=[name_field("In", "n1")]),
                                   term(fields=[name_field("In", "n3")])])
    passed, statuses = filter_nodes(profile(["NodeAffinity"]), incoming,
                                    [node("n1"), node("n2"), node("n3")])
    assert passed == ["n1", "n3"]
    assert statuses == {"n2": (UNRESOLVABLE, "NodeAffinity", PREFILTER_REASON)}


def test_a_term_without_a_name_lifts_the_prefilter_restriction():
    incoming = pod(required_terms=[term(fields=[name_field("In", "n1")]),
                                   term(expr("zone", "In", "a"))])
    passed, statuses = filter_nodes(profile(["NodeAffinity"]), incoming, [
        node("n1", labels={"zone": "b"}), node("n2", labels={"zone": "b"}),
        node("n3", labels={"zone": "a"})])
    assert passed == ["n1", "n3"]
    assert statuses == {"n2": (UNRESOLVABLE, "NodeAffinity", AFFINITY_REASON)}


def test_node_selector_still_applies_inside_the_prefilter_names():
    incoming = pod(node_selector={"zone": "b"},
                   required_terms=[term(fields=[name_field("In", "n1")])])
    passed, statuses = filter_nodes(profile(["NodeAffinity"]), incoming, [
        node("n1", labels={"zone": "a"}), node("n2", labels={"zone": "b"})])
    assert passed == []
    assert statuses == {"n1": (UNRESOLVABLE, "NodeAffinity", AFFINITY_REASON),
                        "n2": (UNRESOLVABLE, "NodeAffinity", PREFILTER_REASON)}


def test_conflicting_name_requirements_reject_every_node():
    incoming = pod(required_terms=[term(fields=[name_field("In", "n1"), name_field("In", "n2")])])
    passed, statuses = filter_nodes(profile(["NodeAffinity"]), incoming,
                                    [node("n1"), node("n2"), node("n3")])
    assert passed == []
    assert statuses == {name: (UNRESOLVABLE, "NodeAffinity", CONFLICT_REASON)
                        for name in ("n1", "n2", "n3")}


def test_a_conflicting_term_beside_a_satisfiable_one_only_narrows_the_names():
    incoming = pod(required_terms=[
        term(fields=[name_field("In", "n1"), name_field("In", "n2")]),
        term(fields=[name_field("In", "n3")]),
    ])
    passed, statuses = filter_nodes(profile(["NodeAffinity"]), incoming,
                                    [node("n1"), node("n2"), node("n3")])
    assert passed == ["n3"]
    assert statuses == {"n1": (UNRESOLVABLE, "NodeAffinity", PREFILTER_REASON),
                        "n2": (UNRESOLVABLE, "NodeAffinity", PREFILTER_REASON)}


def test_prefilter_restriction_is_reported_before_earlier_filters():
    incoming = pod(required_terms=[term(fields=[name_field("In", "n1")])])
    passed, statuses = filter_nodes(profile(), incoming, [
        node("n1"), node("n2", unschedulable=True), node("n3", taints=[taint("k", "v")])])
    assert passed == ["n1"]
    assert {n: (code, message) for n, (code, _, message) in statuses.items()} == {
        "n2": (UNRESOLVABLE, PREFILTER_REASON), "n3": (UNRESOLVABLE, PREFILTER_REASON)}


def test_conflict_is_reported_on_every_node():
    incoming = pod(required_terms=[term(fields=[name_field("In", "n1"), name_field("In", "n2")])])
    passed, statuses = filter_nodes(profile(), incoming, [
        node("n1"), node("n2", unschedulable=True), node("n3", taints=[taint("k", "v")])])
    assert passed == []
    assert {n: (code, message) for n, (code, _, message) in statuses.items()} == {
        name: (UNRESOLVABLE, CONFLICT_REASON) for name in ("n1", "n2", "n3")}


def test_empty_term_beside_a_name_term_lifts_the_prefilter_restriction():
    incoming = pod(required_terms=[term(), term(fields=[name_field("In", "n1")])])
    passed, statuses = filter_nodes(profile(["NodeAffinity"]), incoming, [node("n1"), node("n2")])
    assert passed == ["n1"]
    assert statuses == {"n2": (UNRESOLVABLE, "NodeAffinity", AFFINITY_REASON)}


def test_prefilter_restriction_counts_terms_that_fail_to_parse():
    incoming = pod(required_terms=[term(expr("cores", "Gt", "many"),
                                        fields=[name_field("In", "n1")])])
    passed, statuses = filter_nodes(profile(["NodeAffinity"]), incoming, [node("n1"), node("n2")])
    assert passed == []
    assert statuses == {"n1": (UNRESOLVABLE, "NodeAffinity", AFFINITY_REASON),
                        "n2": (UNRESOLVABLE, "NodeAffinity", PREFILTER_REASON)}


# ---- NodePorts (A.3) -------------------------------------------------------------------------


def ports_pod(*ports: dict[str, Any], name: str = "p") -> PodView:
    return pod(name, containers=[container({"cpu": "100m"}, ports=ports)])


def node_using(*ports: dict[str, Any]) -> Any:
    return node("n1", pods=[bound("n1", "user", containers=[container(ports=ports)])])


@pytest.mark.parametrize(("used", "wanted", "conflict"), [
    (port(80), port(80), True),
    (port(80, host_ip="10.0.0.1"), port(80), True),
    (port(80), port(80, host_ip="10.0.0.1"), True),
    (port(80, host_ip="0.0.0.0"), port(80, host_ip="10.0.0.1"), True),
    (port(80, host_ip="10.0.0.1"), port(80, host_ip="10.0.0.1"), True),
    (port(80, host_ip="10.0.0.1"), port(80, host_ip="10.0.0.2"), False),
    (port(80), port(80, protocol="UDP"), False),
    (port(80, protocol="UDP"), port(80, protocol="UDP"), True),
    (port(80, protocol="SCTP"), port(80, protocol="TCP"), False),
    (port(80), port(80, protocol="TCP"), True),
    (port(80, protocol="TCP"), port(80), True),
    (port(80), port(8080), False),
    (port(53, host_ip="10.0.0.1", protocol="UDP"), port(53, protocol="UDP"), True),
    (port(53, host_ip="10.0.0.1", protocol="UDP"), port(53, host_ip="10.0.0.2", protocol="UDP"),
     False),
], ids=["any-vs-any", "specific-used-any-wanted", "any-used-specific-wanted",
        "explicit-0.0.0.0-used", "same-specific-ip", "different-specific-ips", "tcp-vs-udp",
        "udp-vs-udp", "sctp-vs-tcp", "empty-protocol-is-tcp", "tcp-vs-empty-protocol",
        "different-port", "udp-any-vs-specific", "udp-different-ips"])
def test_host_port_conflicts(used, wanted, conflict):
    verdict = judge("NodePorts", ports_pod(wanted), node_using(used))
    assert verdict == ((UNSCHEDULABLE, PORTS_REASON) if conflict else None)


def test_port_conflict_is_unschedulable_not_unresolvable():
    verdict = status_of(profile(["NodePorts"]), ports_pod(port(80)), node_using(port(80)))
    assert verdict == Status(UNSCHEDULABLE, (PORTS_REASON,), "NodePorts")
    assert verdict.resolvable


def test_one_conflicting_port_among_several_rejects():
    wanted = ports_pod(port(8080), port(9090, protocol="UDP"), port(443))
    assert judge("NodePorts", wanted, node_using(port(443), port(22))) == (UNSCHEDULABLE, PORTS_REASON)
    assert judge("NodePorts", wanted, node_using(port(9090), port(22))) is None


def test_container_ports_without_host_port_are_ignored():
    no_host = {"containerPort": 80}
    incoming = pod(containers=[container(ports=[no_host])])
    assert prepare_filters(profile(["NodePorts"]), incoming).checks == []
    assert judge("NodePorts", incoming, node_using(port(80))) is None
    assert judge("NodePorts", ports_pod(port(80)), node_using(no_host)) is None


def test_sidecar_init_container_ports_of_the_incoming_pod_count():
    sidecar = pod(containers=[container()],
                  init_containers=[container(ports=[port(9000)], restart_policy="Always",
                                             name="proxy")])
    assert judge("NodePorts", sidecar, node_using(port(9000))) == (UNSCHEDULABLE, PORTS_REASON)
    regular = pod(containers=[container()],
                  init_containers=[container(ports=[port(9000)], name="setup")])
    assert prepare_filters(profile(["NodePorts"]), regular).checks == []
    assert judge("NodePorts", regular, node_using(port(9000))) is None


def test_sidecar_init_container_ports_of_pods_on_the_node_count():
    with_sidecar = node("n1", pods=[bound("n1", "mesh", containers=[container()], init_containers=[
        container(ports=[port(15001)], restart_policy="Always", name="proxy")])])
    assert judge("NodePorts", ports_pod(port(15001)), with_sidecar) == (UNSCHEDULABLE, PORTS_REASON)
    with_regular = node("n1", pods=[bound("n1", "job", containers=[container()], init_containers=[
        container(ports=[port(15001)], name="setup")])])
    assert judge("NodePorts", ports_pod(port(15001)), with_regular) is None


def test_removing_one_of_two_users_keeps_the_port_taken():
    first = bound("n1", "first", containers=[container(ports=[port(80)])])
    second = bound("n1", "second", containers=[container(ports=[port(80)])])
    info = node("n1", pods=[first, second])
    wanted = ports_pod(port(80))
    info.remove_pod(first)
    assert judge("NodePorts", wanted, info) == (UNSCHEDULABLE, PORTS_REASON)
    info.remove_pod(second)
    assert judge("NodePorts", wanted, info) is None


# ---- NodeResourcesFit (A.1) ------------------------------------------------------------------


def fit(incoming: PodView, info, **profile_args: Any) -> tuple[Code, str] | None:
    return judge("NodeResourcesFit", incoming, info, **profile_args)


def loaded(allocatable: dict[str, Any], *requests: dict[str, Any]) -> Any:
    """Node n1 with one running pod per `requests` entry."""
    return node("n1", allocatable=allocatable,
                pods=[bound("n1", f"q{i}", requests=r) for i, r in enumerate(requests)])


NODE = {"cpu": "4", "memory": "8Gi", "ephemeral-storage": "100Gi", "pods": "110"}


def test_pod_that_fits_passes():
    assert fit(pod(requests={"cpu": "1", "memory": "1Gi"}), loaded(NODE, {"cpu": "2"})) is None


def test_request_equal_to_what_is_left_fits():
    info = loaded(NODE, {"cpu": "3500m", "memory": "7Gi"})
    assert fit(pod(requests={"cpu": "500m", "memory": "1Gi"}), info) is None
    assert fit(pod(requests={"cpu": "501m"}), info) == (UNSCHEDULABLE, "Insufficient cpu")
    assert fit(pod(requests={"memory": str(1024**3 + 1)}), info) == (
        UNSCHEDULABLE, "Insufficient memory")


def test_too_many_pods_is_resolvable_even_for_an_empty_request():
    full = loaded({**NODE, "pods": "2"}, {}, {})
    verdict = status_of(profile(["NodeResourcesFit"]), pod(requests={"cpu": "100m"}), full)
    assert verdict == Status(UNSCHEDULABLE, ("Too many pods",), "NodeResourcesFit")
    assert fit(pod(requests={}), full) == (UNSCHEDULABLE, "Too many pods")
    assert fit(pod(requests={"cpu": "100m"}), loaded({**NODE, "pods": "2"}, {})) is None


def test_node_without_a_pods_entry_admits_no_pod():
    assert fit(pod(requests={}), node(allocatable={"cpu": "4", "memory": "8Gi"})) == (
        UNSCHEDULABLE, "Too many pods")


@pytest.mark.parametrize(("requests", "used", "reason"), [
    ({"cpu": "1"}, {"cpu": "3500m"}, "Insufficient cpu"),
    ({"memory": "2Gi"}, {"memory": "7Gi"}, "Insufficient memory"),
    ({"ephemeral-storage": "4Gi"}, {"ephemeral-storage": "97Gi"}, "Insufficient ephemeral-storage"),
])
def test_insufficient_resource_above_what_is_free_is_unschedulable(requests, used, reason):
    assert fit(pod(requests=requests), loaded(NODE, used)) == (UNSCHEDULABLE, reason)


@pytest.mark.parametrize(("requests", "reason"), [
    ({"cpu": "4001m"}, "Insufficient cpu"),
    ({"memory": "9Gi"}, "Insufficient memory"),
    ({"ephemeral-storage": "101Gi"}, "Insufficient ephemeral-storage"),
])
def test_request_above_allocatable_is_unresolvable(requests, reason):
    assert fit(pod(requests=requests), loaded(NODE)) == (UNRESOLVABLE, reason)
    # ...also when other pods use part of the node.
    assert fit(pod(requests=requests), loaded(NODE, {"cpu": "1", "memory": "1Gi"})) == (
        UNRESOLVABLE, reason)


def test_node_lacking_ephemeral_storage_cannot_take_a_pod_requesting_it():
    info = node(allocatable={"cpu": "4", "memory": "8Gi", "pods": "110"})
    assert fit(pod(requests={"ephemeral-storage": "1"}), info) == (
        UNRESOLVABLE, "Insufficient ephemeral-storage")


BIG_NODE = {"cpu": "4", "memory": "8Gi", "ephemeral-storage": "100Gi", "pods": "1",
            "example.com/gpu": "4", "a.example/fpga": "2", "hugepages-2Mi": "1Gi"}
BIG_USED = {"cpu": "3", "memory": "7Gi", "ephemeral-storage": "99Gi", "example.com/gpu": "3",
            "a.example/fpga": "1", "hugepages-2Mi": "768Mi"}
ALL_REASONS = ("Too many pods, Insufficient cpu, Insufficient memory, "
               "Insufficient ephemeral-storage, Insufficient a.example/fpga, "
               "Insufficient example.com/gpu, Insufficient hugepages-2Mi")


def test_every_reason_in_order_pods_cpu_memory_storage_then_sorted_scalars():
    incoming = pod(requests={"hugepages-2Mi": "512Mi", "example.com/gpu": "2", "cpu": "2",
                             "a.example/fpga": "2", "memory": "2Gi", "ephemeral-storage": "2Gi"})
    verdict = status_of(profile(["NodeResourcesFit"]), incoming, loaded(BIG_NODE, BIG_USED))
    assert verdict is not None
    assert verdict.reasons == tuple(ALL_REASONS.split(", "))
    assert verdict.message == ALL_REASONS
    assert verdict.code == UNSCHEDULABLE


def test_one_request_above_allocatable_makes_the_whole_status_unresolvable():
    incoming = pod(requests={"hugepages-2Mi": "512Mi", "example.com/gpu": "5", "cpu": "2",
                             "a.example/fpga": "2", "memory": "2Gi", "ephemeral-storage": "2Gi"})
    assert fit(incoming, loaded(BIG_NODE, BIG_USED)) == (UNRESOLVABLE, ALL_REASONS)


def test_too_many_pods_beside_an_unresolvable_insufficiency_is_unresolvable():
    full = loaded({**NODE, "pods": "1"}, {})
    assert fit(pod(requests={"cpu": "5"}), full) == (UNRESOLVABLE, "Too many pods, Insufficient cpu")


def test_zero_request_never_fails_on_an_over_committed_node():
    # 6 cpu and 10Gi already placed on a 4 cpu / 8Gi node (allocatable shrank after binding).
    over = loaded(NODE, {"cpu": "3", "memory": "5Gi"}, {"cpu": "3", "memory": "5Gi"})
    assert fit(pod(requests={"cpu": "0", "memory": "0"}), over) is None
    assert fit(pod(requests={"ephemeral-storage": "1Gi"}), over) is None
    assert fit(pod(requests={"cpu": "0", "memory": "1Mi"}), over) == (
        UNSCHEDULABLE, "Insufficient memory")
    assert fit(pod(requests={"cpu": "100m"}), over) == (UNSCHEDULABLE, "Insufficient cpu")


def test_pod_requesting_nothing_only_checks_the_pod_count():
    over = loaded({"cpu": "1", "memory": "1Gi", "pods": "3"},
                  {"cpu": "2", "memory": "2Gi", "example.com/gpu": "1"},
                  {"cpu": "2", "memory": "2Gi"})
    for incoming in (pod(requests=None), pod(requests={}), pod(requests={"example.com/gpu": "0"})):
        assert fit(incoming, over) is None
        assert fit(incoming, loaded({"cpu": "1", "memory": "1Gi", "pods": "2"}, {}, {})) == (
            UNSCHEDULABLE, "Too many pods")


@pytest.mark.parametrize(("requests", "used", "verdict"), [
    ({"hugepages-2Mi": "512Mi"}, {"hugepages-2Mi": "512Mi"}, None),
    ({"hugepages-2Mi": "512Mi"}, {"hugepages-2Mi": "768Mi"},
     (UNSCHEDULABLE, "Insufficient hugepages-2Mi")),
    ({"hugepages-2Mi": "2Gi"}, {}, (UNRESOLVABLE, "Insufficient hugepages-2Mi")),
    ({"hugepages-1Gi": "1Gi"}, {}, (UNRESOLVABLE, "Insufficient hugepages-1Gi")),
    ({"example.com/gpu": "1"}, {"example.com/gpu": "3"}, None),
    ({"example.com/gpu": "2"}, {"example.com/gpu": "3"},
     (UNSCHEDULABLE, "Insufficient example.com/gpu")),
    ({"example.com/gpu": "5"}, {}, (UNRESOLVABLE, "Insufficient example.com/gpu")),
    ({"other.io/fpga": "1"}, {}, (UNRESOLVABLE, "Insufficient other.io/fpga")),
], ids=["hugepages-fit", "hugepages-free-short", "hugepages-above-allocatable",
        "hugepages-missing-on-node", "gpu-fit", "gpu-free-short", "gpu-above-allocatable",
        "extended-missing-on-node"])
def test_hugepages_and_extended_resources(requests, used, verdict):
    allocatable = {"cpu": "4", "memory": "8Gi", "pods": "110", "hugepages-2Mi": "1Gi",
                   "example.com/gpu": "4"}
    assert fit(pod(requests=requests), loaded(allocatable, used)) == verdict


@pytest.mark.parametrize(("args", "requests", "verdict"), [
    ({"ignoredResources": ["example.com/gpu"]}, {"example.com/gpu": "8"}, None),
    ({"ignoredResources": ["example.com/gpu"]}, {"example.com/gpu": "8", "example.com/fpga": "1"},
     (UNRESOLVABLE, "Insufficient example.com/fpga")),
    ({"ignoredResourceGroups": ["example.com"]},
     {"example.com/gpu": "8", "example.com/fpga": "1"}, None),
    ({"ignoredResourceGroups": ["example.com"]}, {"example.com/gpu": "8", "other.io/x": "1"},
     (UNRESOLVABLE, "Insufficient other.io/x")),
    ({"ignoredResourceGroups": ["example"]}, {"example.com/gpu": "8"},
     (UNRESOLVABLE, "Insufficient example.com/gpu")),
    ({"ignoredResources": ["hugepages-2Mi"]}, {"hugepages-2Mi": "2Gi"},
     (UNRESOLVABLE, "Insufficient hugepages-2Mi")),
    ({"ignoredResourceGroups": ["hugepages-2Mi"]}, {"hugepages-2Mi": "2Gi"},
     (UNRESOLVABLE, "Insufficient hugepages-2Mi")),
    ({"ignoredResources": ["cpu", "memory"]}, {"cpu": "5", "memory": "9Gi"},
     (UNRESOLVABLE, "Insufficient cpu, Insufficient memory")),
], ids=["ignored-name", "ignored-name-only", "ignored-group", "group-only-its-own",
        "group-is-whole-prefix", "hugepages-not-ignorable-by-name",
        "hugepages-not-ignorable-by-group", "native-not-ignorable"])
def test_ignored_resources_only_ignore_extended_resources(args, requests, verdict):
    allocatable = {"cpu": "4", "memory": "8Gi", "pods": "110", "hugepages-2Mi": "1Gi"}
    assert fit(pod(requests=requests), loaded(allocatable), fit_args=args) == verdict


def test_init_containers_are_maxed_with_the_containers_sum():
    # Worked example of A.1: IC1 {2, 1G}, IC2 {2, 3G}, C1 {2, 1G}, C2 {1, 1G} -> cpu 3, memory 3G.
    incoming = pod(containers=[container({"cpu": "2", "memory": "1G"}),
                               container({"cpu": "1", "memory": "1G"}, name="c2")],
                   init_containers=[container({"cpu": "2", "memory": "1G"}, name="i1"),
                                    container({"cpu": "2", "memory": "3G"}, name="i2")])
    assert fit(incoming, node(allocatable={"cpu": "3", "memory": "3G", "pods": "1"})) is None
    assert fit(incoming, node(allocatable={"cpu": "2999m", "memory": "3G", "pods": "1"})) == (
        UNRESOLVABLE, "Insufficient cpu")
    assert fit(incoming, node(allocatable={"cpu": "3", "memory": "2999999999", "pods": "1"})) == (
        UNRESOLVABLE, "Insufficient memory")


def test_sidecars_keep_running_beside_later_init_containers():
    # A.1's derived example: C1 1; I1 2; S1 (sidecar) 0.5; I2 1.8 -> 2.3 cpu.
    incoming = pod(containers=[container({"cpu": "1"})],
                   init_containers=[container({"cpu": "2"}, name="i1"),
                                    container({"cpu": "500m"}, name="s1", restart_policy="Always"),
                                    container({"cpu": "1800m"}, name="i2")])
    assert fit(incoming, node(allocatable={"cpu": "2300m", "pods": "1"})) is None
    assert fit(incoming, node(allocatable={"cpu": "2299m", "pods": "1"})) == (
        UNRESOLVABLE, "Insufficient cpu")


# ---- the pipeline (A.0) ----------------------------------------------------------------------


def test_first_failure_wins_in_policy_order():
    incoming = pod(requests={"cpu": "2"}, node_selector={"zone": "a"},
                   containers=[container({"cpu": "2"}, ports=[port(80)])])
    nodes = [
        node("cordoned-short", unschedulable=True, labels={"zone": "b"},
             taints=[taint("dedicated", "db")], allocatable={"cpu": "1", "pods": "110"}),
        node("tainted-mismatch", labels={"zone": "b"}, taints=[taint("dedicated", "db")]),
        node("mismatch-port-short", labels={"zone": "b"}, allocatable={"cpu": "1", "pods": "110"},
             pods=[bound("mismatch-port-short", "web", containers=[container(ports=[port(80)])])]),
        node("port-short", labels={"zone": "a"}, allocatable={"cpu": "1", "pods": "110"},
             pods=[bound("port-short", "web", containers=[container(ports=[port(80)])])]),
        node("short", labels={"zone": "a"}, allocatable={"cpu": "3", "pods": "110"},
             pods=[bound("short", "batch", requests={"cpu": "1500m"})]),
        node("fits", labels={"zone": "a"}),
    ]
    passed, statuses = filter_nodes(profile(), incoming, nodes)
    assert passed == ["fits"]
    assert statuses == {
        "cordoned-short": (UNRESOLVABLE, "NodeUnschedulable", UNSCHEDULABLE_REASON),
        "tainted-mismatch": (UNRESOLVABLE, "TaintToleration",
                             TAINT_REASON),
        "mismatch-port-short": (UNRESOLVABLE, "NodeAffinity", AFFINITY_REASON),
        "port-short": (UNSCHEDULABLE, "NodePorts", PORTS_REASON),
        "short": (UNSCHEDULABLE, "NodeResourcesFit", "Insufficient cpu"),
    }


def test_reversed_policy_order_reports_the_other_failure():
    incoming = pod(requests={"cpu": "2"})
    cordoned_short = node("c", unschedulable=True, allocatable={"cpu": "1", "pods": "110"})
    assert filter_nodes(profile(), incoming, [cordoned_short])[1] == {
        "c": (UNRESOLVABLE, "NodeUnschedulable", UNSCHEDULABLE_REASON)}
    reversed_order = profile(DEFAULT_ORDER[::-1])
    assert filter_nodes(reversed_order, incoming, [cordoned_short])[1] == {
        "c": (UNRESOLVABLE, "NodeResourcesFit", "Insufficient cpu")}


def test_every_node_lands_in_exactly_one_place_and_passed_keeps_input_order():
    incoming = pod(requests={"cpu": "1"}, tolerations=[toleration("spot", "Exists")])
    nodes = [node(f"n{i}", unschedulable=(i % 3 == 0), taints=[taint("spot")] if i % 2 else [],
                  allocatable={"cpu": str(i % 4), "pods": "110"}) for i in range(12)]
    result = run_filters(profile(), incoming, nodes)
    passed = [info.node.name for info in result.passed]
    assert passed == ["n1", "n2", "n5", "n7", "n10", "n11"]
    assert not set(passed) & set(result.statuses)
    assert set(passed) | set(result.statuses) == {f"n{i}" for i in range(12)}
    assert {name: s.plugin for name, s in result.statuses.items()} == {
        "n0": "NodeUnschedulable", "n3": "NodeUnschedulable", "n4": "NodeResourcesFit",
        "n6": "NodeUnschedulable", "n8": "NodeResourcesFit", "n9": "NodeUnschedulable"}


def test_no_nodes_no_verdicts():
    result = run_filters(profile(), pod(), [])
    assert result.passed == [] and result.statuses == {}


def test_memo_is_not_shared_between_pods_whose_memoised_prefix_differs():
    order = ("TaintToleration", "NodePorts", "NodeUnschedulable", "NodeName", "NodeAffinity",
             "NodeResourcesFit")
    prof = profile(order)
    cordoned = node("c1", unschedulable=True,
                    pods=[bound("c1", "web", containers=[container(ports=[port(80)])])])
    with_port = pod("with-port", containers=[container({"cpu": "1"}, ports=[port(80)])])
    without_port = pod("without-port", requests={"cpu": "1"})
    assert filter_nodes(prof, with_port, [cordoned]) == (
        [], {"c1": (UNSCHEDULABLE, "NodePorts", PORTS_REASON)})
    assert filter_nodes(prof, without_port, [cordoned]) == (
        [], {"c1": (UNRESOLVABLE, "NodeUnschedulable", UNSCHEDULABLE_REASON)})


# ---- the filter fixture ----------------------------------------------------------------------


def test_filter_names_fixture_through_run_filters():
    state = load_snapshot(ROOT / "config" / "examples" / "cluster.json")
    prof = build_profile(load_policy(FIXTURES / "policy-leastallocated.json"))
    args = wire.decode((FIXTURES / "filter-names.request.json").read_bytes(), wire.ExtenderArgs)
    incoming = PodView.from_k8s(args.Pod)
    result = run_filters(prof, incoming, [state.nodes[name] for name in args.NodeNames])
    failed = {n: s.message for n, s in result.statuses.items() if s.code == UNSCHEDULABLE}
    unresolvable = {n: s.message for n, s in result.statuses.items() if s.code == UNRESOLVABLE}
    got = {"NodeNames": [info.node.name for info in result.passed], "FailedNodes": failed,
           "FailedAndUnresolvableNodes": unresolvable}
    expected = json.loads((FIXTURES / "filter-names.expected.json").read_text())
    assert got == {key: expected[key] for key in got}
    # By hand: the pod asks 1 cpu / 1Gi in zones us-east-1a|b, tolerating only NoExecute taints.
    assert got == {
        "NodeNames": ["worker-a1", "worker-a2"],  # 1.5 and 3.5 cpu free
        "FailedNodes": {"worker-b2": "Insufficient cpu"},  # 2 cpu, 1.9 used
        "FailedAndUnresolvableNodes": {
            "gpu-b1": TAINT_REASON,
            "cordoned-c1": UNSCHEDULABLE_REASON,  # also zone c and tainted: the first filter wins
            "tiny-c2": AFFINITY_REASON,  # zone c; its 2/2 pods would also be Too many pods
        },
    }
    assert {n: s.plugin for n, s in result.statuses.items()} == {
        "worker-b2": "NodeResourcesFit", "gpu-b1": "TaintToleration",
        "cordoned-c1": "NodeUnschedulable", "tiny-c2": "NodeAffinity"}
