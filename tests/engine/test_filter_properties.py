"""Filters as properties.

* toleration matching and node-selector-term matching against straightforward reference
  implementations written from algorithms.md §A.5 / §A.6;
* `run_filters` (batch paths, per-node-view memo) against the per-node definition
  `node_fits(prepare_filters(profile, pod), node)`, for random pods and random nodes.

Go's parsing edge cases (`_` in integers, invalid label keys and values) are pinned by
examples in test_filters.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from extender.engine.framework import Code
from extender.engine.runner import run_filters
from extender.model import k8s
from extender.model.selectors import NodeSelectorMatcher
from extender.model.taints import Taint, Toleration
from tests.engine.filter_helpers import (
    DEFAULT_ORDER,
    bound,
    container,
    node,
    one_by_one,
    pod,
    profile,
)

EFFECTS = ["NoSchedule", "NoExecute", "PreferNoSchedule"]
HARD_EFFECTS = ("NoSchedule", "NoExecute")
CORDON_KEY = "node.kubernetes.io/unschedulable"
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
AFFINITY_REASONS = {"node(s) didn't match Pod's node affinity/selector",
                    "node(s) didn't satisfy plugin(s) [NodeAffinity]",
                    "pod affinity terms conflict"}


def sometimes(strategy: st.SearchStrategy, one_in: int, otherwise: Any = None) -> st.SearchStrategy:
    """`strategy` about once in `one_in` draws, else `otherwise` (so most nodes can pass)."""
    return st.integers(1, one_in).flatmap(
        lambda roll: strategy if roll == 1 else st.just(otherwise))


# ---- reference implementations (§A.5, §A.6) --------------------------------------------------

_GO_INT = re.compile(r"[+-]?[0-9]+")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_NAME_PART = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def go_parse_int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64): optional sign, ASCII digits, int64 range."""
    if not _GO_INT.fullmatch(text):
        return None
    number = int(text)
    return number if INT64_MIN <= number <= INT64_MAX else None


def ref_tolerates(tol: Mapping[str, str], taint: Mapping[str, str]) -> bool:
    if tol["effect"] and tol["effect"] != taint["effect"]:
        return False
    if tol["key"] and tol["key"] != taint["key"]:
        return False
    op = tol["operator"]
    if op in ("", "Equal"):
        return tol["value"] == taint["value"]
    if op == "Exists":
        return True
    if op in ("Lt", "Gt"):
        mine, theirs = go_parse_int64(tol["value"]), go_parse_int64(taint["value"])
        if mine is None or theirs is None:
            return False
        return theirs < mine if op == "Lt" else theirs > mine
    return False


def ref_first_untolerated(tolerations: list[dict[str, str]],
                          taints: list[dict[str, str]]) -> dict[str, str] | None:
    for taint in taints:
        if taint["effect"] in HARD_EFFECTS and not any(ref_tolerates(t, taint) for t in tolerations):
            return taint
    return None


def valid_label_key(key: str) -> bool:
    prefix, _, name = key.rpartition("/")
    if "/" in key and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.fullmatch(prefix)):
        return False
    return 0 < len(name) <= 63 and _NAME_PART.fullmatch(name) is not None


def valid_label_value(value: str) -> bool:
    return len(value) <= 63 and _LABEL_VALUE.fullmatch(value) is not None


LabelTest = Callable[[Mapping[str, str]], bool]


def ref_requirement(req: Mapping[str, Any]) -> LabelTest | None:
    """labels.NewRequirement + Matches; None when the requirement does not parse."""
    key, op, values = req["key"], req["operator"], req.get("values") or []
    if not valid_label_key(key) or not all(valid_label_value(v) for v in values):
        return None
    if op == "In" and values:
        return lambda labels: key in labels and labels[key] in values
    if op == "NotIn" and values:
        return lambda labels: key not in labels or labels[key] not in values
    if op == "Exists" and not values:
        return lambda labels: key in labels
    if op == "DoesNotExist" and not values:
        return lambda labels: key not in labels
    if op in ("Gt", "Lt") and len(values) == 1 and go_parse_int64(values[0]) is not None:
        bound_value = go_parse_int64(values[0])

        def compare(labels: Mapping[str, str]) -> bool:
            if key not in labels:
                return False
            number = go_parse_int64(labels[key])
            if number is None:
                return False
            return number > bound_value if op == "Gt" else number < bound_value

        return compare
    return None


def ref_term(term: Mapping[str, Any], labels: Mapping[str, str], name: str) -> bool | None:
    """One NodeSelectorTerm: None when it is dropped (empty or unparsable), else whether it
    matches. Field requirements are skipped for a node without a name."""
    exprs, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
    if not exprs and not fields:
        return None
    tests = [ref_requirement(r) for r in exprs]
    if any(t is None for t in tests):
        return None
    for req in fields:
        values = req.get("values") or []
        if req["key"] != "metadata.name" or req["operator"] not in ("In", "NotIn") \
                or len(values) != 1:
            return None
    if not all(t(labels) for t in tests):
        return False
    if name:
        for req in fields:
            equal = name == req["values"][0]
            if equal != (req["operator"] == "In"):
                return False
    return True


def ref_required(terms: list[dict[str, Any]], labels: Mapping[str, str], name: str) -> bool:
    return any(ref_term(t, labels, name) is True for t in terms)


# ---- toleration matching ---------------------------------------------------------------------

int64_text = st.integers(INT64_MIN, INT64_MAX).map(str)
numberish = st.one_of(
    st.sampled_from(["", "0", "3", "5", "-3", "+5", "007", "1.5", "abc", "-", "+", "5a"]),
    int64_text,
    st.text(alphabet="0123456789+-.a", max_size=4),
)
tolerations_st = st.fixed_dictionaries({
    "key": st.sampled_from(["", "k", "j", CORDON_KEY]),
    "operator": st.sampled_from(["", "Equal", "Exists", "Lt", "Gt", "In"]),
    "value": numberish,
    "effect": st.sampled_from(["", *EFFECTS]),
})
taints_st = st.fixed_dictionaries({
    "key": st.sampled_from(["k", "j", CORDON_KEY]),
    "value": numberish,
    "effect": st.sampled_from(EFFECTS),
})


@settings(max_examples=300, deadline=None)
@given(tol=tolerations_st, taint=taints_st)
def test_toleration_matches_the_reference(tol, taint):
    model = Toleration(tol["key"], tol["operator"], tol["value"], tol["effect"])
    assert model.tolerates(Taint(taint["key"], taint["value"], taint["effect"])) == \
        ref_tolerates(tol, taint)


#: The same filters led by a node-only one (per-node checks, memoised per node view) and led by
#: NodeResourcesFit, which passes these resource-less pods everywhere (the batch paths).
TAINT_PROFILES = (("NodeUnschedulable", "TaintToleration"),
                  ("NodeResourcesFit", "NodeUnschedulable", "TaintToleration"))


@settings(max_examples=80, deadline=None)
@given(tols=st.lists(tolerations_st, max_size=3),
       nodes=st.lists(st.tuples(st.lists(taints_st, max_size=4), st.booleans()),
                      min_size=1, max_size=5))
def test_taint_and_cordon_filters_match_the_reference(tols, nodes):
    incoming = pod(tolerations=tols)
    cordon = {"key": CORDON_KEY, "value": "", "effect": "NoSchedule"}
    tolerates_cordon = any(ref_tolerates(t, cordon) for t in tols)
    expected = {}
    for i, (taints, cordoned) in enumerate(nodes):
        first = ref_first_untolerated(tols, taints)
        if cordoned and not tolerates_cordon:
            expected[f"n{i}"] = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "NodeUnschedulable",
                                 "node(s) were unschedulable")
        elif first is not None:
            expected[f"n{i}"] = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "TaintToleration",
                                 f"node(s) had untolerated taint {{{first['key']}: {first['value']}}}")
    for order in TAINT_PROFILES:
        infos = [node(f"n{i}", taints=taints, unschedulable=cordoned)
                 for i, (taints, cordoned) in enumerate(nodes)]
        # 1.33's wording names the first untolerated taint, which is what this checks.
        result = run_filters(profile(order, kubernetes_version="1.33"), incoming, infos)
        assert {n: (s.code, s.plugin, s.message) for n, s in result.statuses.items()} == expected
        assert [i.node.name for i in result.passed] == [
            f"n{i}" for i in range(len(nodes)) if f"n{i}" not in expected]


# ---- node selector terms ---------------------------------------------------------------------

LABEL_KEYS = ["zone", "cores", "example.com/tier"]
LABEL_VALUES = ["a", "b", "", "4", "8", "10", "007", "4.5", "0x10",
                "9223372036854775807", "9223372036854775808"]
NAMES = ["n1", "n2", "n3"]

labels_st = st.dictionaries(st.sampled_from(LABEL_KEYS), st.sampled_from(LABEL_VALUES), max_size=3)
requirement_st = st.fixed_dictionaries({
    "key": st.sampled_from([*LABEL_KEYS, ""]),
    "operator": st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Equals"]),
    "values": st.lists(st.sampled_from(LABEL_VALUES), max_size=2),
})
field_st = st.fixed_dictionaries({
    "key": st.just("metadata.name"),
    "operator": st.sampled_from(["In", "In", "NotIn", "Exists"]),
    "values": st.lists(st.sampled_from(NAMES), max_size=2),
})
term_st = st.fixed_dictionaries({}, optional={
    "matchExpressions": st.lists(requirement_st, max_size=3),
    "matchFields": st.lists(field_st, max_size=2),
})
terms_st = st.lists(term_st, max_size=3)


@st.composite
def affinity_cases(draw: st.DrawFn):
    """(nodeSelector, terms, node labels): nodes that mostly agree (one base label set, each
    node changing at most one label), and a selector that is often part of the base, so nodes
    share some referenced labels, differ in others, and both verdicts come up."""
    base = draw(st.dictionaries(st.sampled_from(LABEL_KEYS), st.sampled_from(LABEL_VALUES),
                                min_size=2, max_size=3))
    nodes = [{**base, **change} for change in draw(st.lists(
        st.dictionaries(st.sampled_from(LABEL_KEYS), st.sampled_from(LABEL_VALUES), max_size=1),
        min_size=1, max_size=5))]
    kind = draw(st.sampled_from(["base", "base-part", "random", "none"]))
    selector = {"base": base, "random": draw(labels_st), "none": None,
                "base-part": {k: v for k, v in base.items() if draw(st.booleans())}}[kind]
    return selector, draw(sometimes(terms_st, 2)), nodes


@settings(max_examples=300, deadline=None)
@given(terms=terms_st, labels=labels_st, name=st.sampled_from([*NAMES, ""]))
def test_node_selector_terms_match_the_reference(terms, labels, name):
    matcher = NodeSelectorMatcher(k8s.convert({"nodeSelectorTerms": terms}, k8s.NodeSelector))
    assert matcher.matches(labels, name) == ref_required(terms, labels, name)


AFFINITY_PROFILES = (("NodeAffinity",), ("NodeResourcesFit", "NodeAffinity"))


@settings(max_examples=200, deadline=None)
@given(case=affinity_cases())
def test_node_affinity_filter_matches_the_reference(case):
    selector, terms, nodes = case
    # Led by NodeAffinity: per-node checks; led by Fit (these pods request nothing): the batch
    # path that evaluates nodes agreeing on the referenced labels once.
    names = [f"n{i + 1}" for i in range(len(nodes))]
    incoming = pod(node_selector=selector, required_terms=terms)
    for order in AFFINITY_PROFILES:
        infos = [node(name, labels=labels) for name, labels in zip(names, nodes, strict=True)]
        result = run_filters(profile(order), incoming, infos)
        for name, labels in zip(names, nodes, strict=True):
            fits = all(labels.get(k) == v for k, v in (selector or {}).items()) and (
                terms is None or ref_required(terms, labels, name))
            status = result.statuses.get(name)
            assert (status is None) == fits
            if status is not None:
                assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
                assert status.plugin == "NodeAffinity" and status.message in AFFINITY_REASONS
        assert [info.node.name for info in result.passed] == [
            name for name in names if name not in result.statuses]


# ---- run_filters against the per-node definition ---------------------------------------------

NODE_NAMES = [f"n{i}" for i in range(6)]
PORTS = st.fixed_dictionaries({
    "containerPort": st.just(80),
    "hostPort": st.sampled_from([80, 443]),
    "hostIP": st.sampled_from(["", "10.0.0.1", "10.0.0.2"]),
    "protocol": st.sampled_from(["", "TCP", "UDP"]),
})
requests_st = st.fixed_dictionaries({}, optional={
    "cpu": st.integers(0, 12).map(lambda q: f"{q * 250}m"),
    "memory": st.integers(0, 6).map(lambda g: f"{g}Gi"),
    "ephemeral-storage": st.integers(0, 4).map(lambda g: f"{g}Gi"),
    "example.com/gpu": st.integers(0, 2).map(str),
})
allocatable_st = st.fixed_dictionaries({
    "cpu": st.integers(0, 16).map(lambda q: f"{q * 500}m"),
    "memory": st.integers(0, 16).map(lambda g: f"{g}Gi"),
    "pods": st.sampled_from(["0", "1", "2", "3", "110", "110"]),
}, optional={
    "ephemeral-storage": st.integers(0, 8).map(lambda g: f"{g}Gi"),
    "example.com/gpu": st.integers(0, 4).map(str),
})
node_taint_st = st.fixed_dictionaries({
    "key": st.sampled_from(["dedicated", "gpu", CORDON_KEY]),
    "value": st.sampled_from(["", "a", "3"]),
    "effect": st.sampled_from(EFFECTS),
})
node_st = st.fixed_dictionaries({
    "labels": st.fixed_dictionaries({}, optional={
        "zone": st.sampled_from(["a", "b"]), "disk": st.sampled_from(["ssd", "hdd"]),
        "cores": st.sampled_from(["2", "4", "8", "x"])}),
    "taints": sometimes(st.lists(node_taint_st, min_size=1, max_size=2), 2, []),
    "unschedulable": st.sampled_from([False, False, False, True]),
    "allocatable": allocatable_st,
    "pods": st.lists(st.tuples(requests_st, st.lists(PORTS, max_size=2)), max_size=3),
})
pod_toleration_st = st.fixed_dictionaries({
    "key": st.sampled_from(["", "dedicated", "gpu", CORDON_KEY]),
    "operator": st.sampled_from(["", "Equal", "Exists", "Exists", "Lt", "Gt"]),
    "value": st.sampled_from(["", "a", "3", "5"]),
    "effect": st.sampled_from(["", *EFFECTS]),
})
pod_requirement_st = st.fixed_dictionaries({
    "key": st.sampled_from(["zone", "disk", "cores"]),
    "operator": st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]),
    "values": st.lists(st.sampled_from(["a", "b", "ssd", "4"]), max_size=2),
})
pod_field_st = st.fixed_dictionaries({
    "key": st.just("metadata.name"),
    "operator": st.sampled_from(["In", "NotIn"]),
    "values": st.lists(st.sampled_from(NODE_NAMES[:4]), min_size=1, max_size=1),
})
pod_term_st = st.fixed_dictionaries({}, optional={
    "matchExpressions": st.lists(pod_requirement_st, min_size=1, max_size=2),
    "matchFields": st.lists(pod_field_st, min_size=1, max_size=2),
})
placement_st = st.fixed_dictionaries({
    "tolerations": st.lists(pod_toleration_st, max_size=3),
    "node_selector": sometimes(st.fixed_dictionaries({}, optional={
        "zone": st.sampled_from(["a", "b"]), "disk": st.sampled_from(["ssd", "hdd"])}), 4),
    "required_terms": sometimes(st.lists(pod_term_st, max_size=2), 4),
    "node_name": sometimes(st.just("n1"), 10, ""),
})


@st.composite
def workloads(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(pods, nodes): 1–4 pods alternating between two placements (tolerations, selector,
    affinity, nodeName) A, B, A, B, so the same node views see pods that share a placement key
    (and so a memo entry) and pods that do not."""
    placements = [draw(placement_st), draw(placement_st)]
    pods = [{**placements[i % 2], "requests": draw(requests_st),
             "ports": draw(st.lists(PORTS, max_size=2))}
            for i in range(draw(st.integers(1, 4)))]
    nodes = draw(st.lists(node_st, max_size=6))
    return pods, nodes


def build_pod(spec: dict[str, Any], i: int):
    return pod(f"incoming-{i}", containers=[container(spec["requests"], ports=spec["ports"])],
               tolerations=spec["tolerations"], node_selector=spec["node_selector"],
               required_terms=spec["required_terms"], node_name=spec["node_name"])


def build_nodes(specs: list[dict[str, Any]]):
    infos = []
    for i, spec in enumerate(specs):
        name = NODE_NAMES[i]
        running = [bound(name, f"{name}-q{j}", containers=[container(req, ports=ports)])
                   for j, (req, ports) in enumerate(spec["pods"])]
        infos.append(node(name, pods=running, labels=spec["labels"], taints=spec["taints"],
                          unschedulable=spec["unschedulable"], allocatable=spec["allocatable"]))
    return infos


def assert_like_one_by_one(prof, incoming, infos) -> list[str]:
    """run_filters twice on the same node objects equals the per-node definition."""
    passed, statuses = one_by_one(prof, incoming, infos)
    for _ in range(2):
        result = run_filters(prof, incoming, infos)
        assert [i.node.name for i in result.passed] == [i.node.name for i in passed]
        assert result.statuses == statuses
        assert len(result.passed) + len(result.statuses) == len(infos)
    return [i.node.name for i in passed]


FIT_FIRST = ("NodeResourcesFit", "NodeUnschedulable", "NodeName", "TaintToleration",
             "NodeAffinity", "NodePorts")
_settings = settings(max_examples=120, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@_settings
@given(workload=workloads())
def test_run_filters_equals_node_by_node_in_default_order(workload):
    pod_specs, node_specs = workload
    infos = build_nodes(node_specs)  # shared by every pod, so memo entries carry over
    prof = profile(DEFAULT_ORDER)
    for i, spec in enumerate(pod_specs):
        assert_like_one_by_one(prof, build_pod(spec, i), infos)


@_settings
@given(workload=workloads())
def test_run_filters_equals_node_by_node_with_fit_first(workload):
    # No leading node-only filter, so no memo: the batch paths of every filter run instead.
    pod_specs, node_specs = workload
    infos = build_nodes(node_specs)
    fit_first, default = profile(FIT_FIRST), profile(DEFAULT_ORDER)
    for i, spec in enumerate(pod_specs):
        incoming = build_pod(spec, i)
        passed = assert_like_one_by_one(fit_first, incoming, infos)
        # A node passes iff every filter passes it: the order changes reasons, never the set.
        assert passed == [info.node.name for info in run_filters(default, incoming, infos).passed]


_MEMO_COLLISION = (
    ["TaintToleration", "NodePorts", "NodeUnschedulable", "NodeName", "NodeAffinity",
     "NodeResourcesFit"],
    ([{"tolerations": [], "node_selector": None, "required_terms": None, "node_name": "",
       "requests": {}, "ports": [{"containerPort": 80, "hostPort": 443, "hostIP": "",
                                  "protocol": ""}]},
      {"tolerations": [], "node_selector": None, "required_terms": None, "node_name": "",
       "requests": {}, "ports": []}],
     [{"labels": {}, "taints": [], "unschedulable": True,
       "allocatable": {"cpu": "0m", "memory": "0Gi", "pods": "1"}, "pods": []}]),
)


@pytest.mark.slow
@_settings
@example(order=_MEMO_COLLISION[0], workload=_MEMO_COLLISION[1])
@given(order=st.permutations(list(DEFAULT_ORDER)), workload=workloads())
def test_run_filters_equals_node_by_node_in_any_order_across_pods(order, workload):
    pod_specs, node_specs = workload
    infos = build_nodes(node_specs)
    prof = profile(order)
    for i, spec in enumerate(pod_specs):
        assert_like_one_by_one(prof, build_pod(spec, i), infos)
