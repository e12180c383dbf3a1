"""InterPodAffinity PreFilter/Filter: kube-scheduler's own test tables, run through `evaluate`.

Source: kubernetes/kubernetes
`pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go` @ 072825f9a367 (the modern
table: `wantPreFilterStatus` / `wantFilterStatus`, one reason per status, `backend/cache`).
Every row cites its upstream test function and case `name` (the pytest id is that name).

Mapping: upstream's snapshot (`cache.NewSnapshot(pods, nodes)`) -> the objects given to
`evaluate`; the Namespace objects its informers hold (`namespaces` from scoring_test.go for
TestRequiredAffinitySingleNode, a bare `NS1` for TestRequiredAffinityMultipleNodes) -> Namespace
objects; policy = only the InterPodAffinity filter. Upstream's `wantPreFilterStatus` Skip ->
every node passes; a PreFilter rejection -> `ev.prefilter`; `wantFilterStatus(es)` per node ->
`ev.filter[node]` (nil -> None).

Transcription notes:
  * "Test incoming pod's anti-affinity: even if labelSelector matches, we still check if
    topologyKey matches": upstream's incoming pod carries `.Node("nodeA")` (spec.nodeName); it is
    left out here, since the incoming pod is the pending pod and InterPodAffinity never reads its
    nodeName.
  * "pod matches its own Label in PodAffinity and that matches the existing pod Labels": the
    existing pod is bound to `node2`, which is not in the snapshot; kept as is.

Not transcribed (not observable through `evaluate`):
  * TestPreFilterDisabled: Filter called without PreFilter state (an internal Error).
  * TestPreFilterStateAddRemovePod: compares the internal preFilterState maps after AddPod/RemovePod.
  * TestPreFilterStateClone: the internal state's Clone.
  * TestGetTPMapMatchingIncomingAffinityAntiAffinity: the internal topology-pair count maps of
    getIncomingAffinityAntiAffinityCounts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.engine.upstream import builders as b
from tests.engine.upstream._ipa import (
    AFFINITY_FAIL,
    ANTI_FAIL,
    DEFAULT_NS,
    EXISTING_FAIL,
    SKIP,
    UNRESOLVABLE,
    affinity,
    bound,
    filter_policy,
    incoming,
    node,
    run,
    sel,
    status,
    t_exists,
    t_in,
    t_not_in,
    term,
)

Obj = dict[str, Any]

# scoring_test.go `namespaces` (the informer objects of TestRequiredAffinitySingleNode).
NS_LABEL_T1 = {"team": "team1"}
NS_LABEL_T2 = {"team": "team2"}
NAMESPACES = [
    b.namespace("subteam1.team1", NS_LABEL_T1),
    b.namespace("subteam2.team1", NS_LABEL_T1),
    b.namespace("subteam1.team2", NS_LABEL_T2),
    b.namespace("subteam2.team2", NS_LABEL_T2),
]

# PreFilter message for a selector value that fails label-value validation (both rows).
BAD_VALUE_MESSAGE = (
    'parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: "{{.bad-value.}}": '
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


@dataclass(frozen=True)
class SingleCase:
    name: str
    pod: Obj
    pods: list[Obj] = field(default_factory=list)
    want_filter: Obj | None = None          # status on node1 (None: Success)
    want_prefilter: Obj | str | None = None  # None (Success), SKIP, or a rejection status


@dataclass(frozen=True)
class MultiCase:
    name: str
    pod: Obj
    pods: list[Obj]
    nodes: list[Obj]
    want_filter: list[Obj | None]            # per node, in `nodes` order
    want_prefilter: str | None = None        # None (Success) or SKIP


# =============================================================================================
# TestRequiredAffinitySingleNode
# =============================================================================================
POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
NODE1 = node("node1", {"region": "r1", "zone": "z11"})


def _pod() -> Obj:
    """upstream `pod := st.MakePod().Labels(podLabel).Node("node1").Obj()`"""
    return bound("node1", POD_LABEL)


SINGLE: list[SingleCase] = [
    # filtering_test.go TestRequiredAffinitySingleNode: "A pod that has no required pod affinity
    # scheduling rules can schedule onto a node with no existing pods"
    SingleCase(
        name="A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
        pod=incoming(),
        want_prefilter=SKIP,
    ),
    # filtering_test.go TestRequiredAffinitySingleNode: "satisfies with requiredDuringSchedulingIgnoredDuringExecution
    # in PodAffinity using In operator that matches the existing pod"
    SingleCase(
        name="satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches the existing pod",
        pod=incoming(POD_LABEL2, aff=affinity(required=[t_in("service", "region", ["securityscan", "value2"])])),
        pods=[_pod()],
    ),
    # filtering_test.go TestRequiredAffinitySingleNode: "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution
    # in PodAffinity using not in operator in labelSelector that matches the existing pod"
    SingleCase(
        name="satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in labelSelector that matches the existing pod",
        pod=incoming(POD_LABEL2, aff=affinity(required=[t_not_in("service", "region", ["securityscan3", "value3"])])),
        pods=[_pod()],
    ),
    # filtering_test.go TestRequiredAffinitySingleNode: "Does not satisfy the PodAffinity with labelSelector because of diff Namespace"
    SingleCase(
        name="Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
        pod=incoming(POD_LABEL2, aff=affinity(required=[
            term(sel(b.in_("service", "securityscan", "value2")), namespaces=["DiffNameSpace"]),
        ])),
        pods=[bound("node1", {"service": "securityscan"}, ns="ns")],
        want_filter=AFFINITY_FAIL,
    ),
    # filtering_test.go TestRequiredAffinitySingleNode: "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod"
    SingleCase(
        name="Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
        pod=incoming(POD_LABEL, aff=affinity(required=[t_in("service", "", ["antivirusscan", "value2"])])),
        pods=[_pod()],
        want_filter=AFFINITY_FAIL,
    ),
    # filtering_test.go TestRequiredAffinitySingleNode: "satisfies the PodAffinity with different label Operators in
    # multiple RequiredDuringSchedulingIgnoredDuringExecution " (sic, trailing space)
    SingleCase(
        name="satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution ",
        pod=incoming(POD_LABEL2, aff=affinity(required=[
            term(sel(b.exists("service"), b.does_not_exist("wrongkey")), "region"),
            term(sel(b.in_("service", "securityscan"), b.not_in("service", "WrongValue")), "region"),
        ])),
        pods=[_pod()],
    ),
    # filtering_test.go TestRequiredAffinitySingleNode: "The labelSelector requirements(items of matchExpressions) are
    # ANDed, the pod cannot schedule onto the node because one of the matchExpression item don't match."
    SingleCase(
        name="The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node because one of the matchExpression item don't match.",
        pod=incoming(POD_LABEL2, aff=affinity(required=[
            term(sel(b.exists("service"), b.does_not_exist("wrongkey")), "region"),
            term(sel(b.in_("service", "securityscan2"), b.not_in("service", "WrongValue")), "region"),
        ])),
        pods=[_pod()],
        want_filter=AFFINITY_FAIL,
    ),
    # filtering_test.go TestRequiredAffinitySingleNode: "satisfies the PodAffinity and PodAntiAffinity with the existing pod"
    SingleCase(
        name="satisfies the PodAffinity and PodAntiAffinity with the existing pod",
        pod=incoming(POD_LABEL2, aff=affinity(
            required=[t_in("service", "region", ["securityscan", "value2"])],
            anti_required=[t_in("service", "node", ["antivirusscan", "value2"])],
        )),
        pods=[_pod()],
    ),
    # filtering_test.go TestRequiredAffinitySingleNode: "satisfies the PodAffinity and PodAntiAffinity and
    # PodAntiAffinity symmetry with the existing pod"
    SingleCase(
        name="satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
        pod=incoming(POD_LABEL2, aff=affinity(
            required=[t_in("service", "region", ["securityscan", "value2"])],
            anti_required=[t_in("service", "node", ["antivirusscan", "value2"])],
        )),
        pods=[bound("node1", POD_LABEL, aff=affinity(anti_required=[t_in("service", "node", ["antivirusscan", "value2"])]))],
    ),
    # filtering_test.go TestRequiredAffinitySingleNode: "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod"
    SingleCase(
        name="satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
        pod=incoming(POD_LABEL2, aff=affinity(
            required=[t_in("service", "region", ["securityscan", "value2"])],
            anti_required=[t_in("service", "zone", ["securityscan", "value2"])],
        )),
        pods=[_pod()],
        want_filter=ANTI_FAIL,
    ),
    # filtering_test.go TestRequiredAffinitySingleNode: "satisfies the PodAffinity and PodAntiAffinity but doesn't
    # satisfy PodAntiAffinity symmetry with the existing pod"
    SingleCase(
        name="satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
        pod=incoming(POD_LABEL, aff=affinity(
            required=[t_in("service", "region", ["securityscan", "value2"])],
            anti_required=[t_in("service", "node", ["antivirusscan", "value2"])],
        )),
        pods=[bound("node1", POD_LABEL, aff=affinity(anti_required=[t_in("service", "zone", ["securityscan", "value2"])]))],
        want_filter=EXISTING_FAIL,
    ),
    # filtering_test.go TestRequiredAffinitySingleNode: "pod matches its own Label in PodAffinity and that matches the existing pod Labels"
    SingleCase(
        name="pod matches its own Label in PodAffinity and that matches the existing pod Labels",
        pod=incoming(POD_LABEL, aff=affinity(required=[t_not_in("service", "region", ["securityscan", "value2"])])),
        pods=[bound("node2", {"service": "securityscan"})],
        want_filter=AFFINITY_FAIL,
    ),
    # filtering_test.go TestRequiredAffinitySingleNode: "verify that PodAntiAffinity from existing pod is respected when
    # pod has no AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod"
    SingleCase(
        name="verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
        pod=incoming(POD_LABEL),
        pods=[bound("node1", POD_LABEL, aff=affinity(anti_required=[t_in("service", "zone", ["securityscan", "value2"])]))],
        want_filter=EXISTING_FAIL,
    ),
    # filtering_test.go TestRequiredAffinitySingleNode: "verify that PodAntiAffinity from existing pod is respected when
    # pod has no AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod"
    SingleCase(
        name="verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod",
        pod=incoming(POD_LABEL),
        pods=[bound("node1", POD_LABEL, aff=affinity(anti_required=[t_not_in("service", "zone", ["securityscan", "value2"])]))],
        want_prefilter=SKIP,
    ),
    # filtering_test.go TestRequiredAffinitySingleNode: "satisfies the PodAntiAffinity with existing pod but doesn't
    # satisfy PodAntiAffinity symmetry with incoming pod"
    SingleCase(
        name="satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with incoming pod",
        pod=incoming(POD_LABEL, aff=affinity(anti_required=[t_exists("service", "region"), t_exists("security", "region")])),
        pods=[bound("node1", POD_LABEL2, aff=affinity(anti_required=[t_exists("security", "zone")]))],
        want_filter=ANTI_FAIL,
    ),
    # filtering_test.go TestRequiredAffinitySingleNode: "PodAntiAffinity symmetry check a1: incoming pod and existing pod
    # partially match each other on AffinityTerms"
    SingleCase(
        name="PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
        pod=incoming(POD_LABEL, aff=affinity(anti_required=[t_exists("service", "zone"), t_exists("security", "zone")])),
        pods=[bound("node1", POD_LABEL2, aff=affinity(anti_required=[t_exists("security", "zone")]))],
        want_filter=ANTI_FAIL,
    ),
    # filtering_test.go TestRequiredAffinitySingleNode: "PodAntiAffinity symmetry check a2: incoming pod and existing pod
    # partially match each other on AffinityTerms"
    SingleCase(
        name="PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
        pod=incoming(POD_LABEL2, aff=affinity(anti_required=[t_exists("security", "zone")])),
        pods=[bound("node1", POD_LABEL, aff=affinity(anti_required=[t_exists("service", "zone"), t_exists("security", "zone")]))],
        want_filter=EXISTING_FAIL,
    ),
    # filtering_test.go TestRequiredAffinitySingleNode: "PodAntiAffinity symmetry check b1: incoming pod and existing pod
    # partially match each other on AffinityTerms"
    SingleCase(
        name="PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
        pod=incoming({"abc": "", "xyz": ""}, aff=affinity(anti_required=[t_exists("abc", "zone"), t_exists("def", "zone")])),
        pods=[bound("node1", {"def": "", "xyz": ""},
                    aff=affinity(anti_required=[t_exists("abc", "zone"), t_exists("def", "zone")]))],
        want_filter=ANTI_FAIL,
    ),
    # filtering_test.go TestRequiredAffinitySingleNode: "PodAntiAffinity symmetry check b2: incoming pod and existing pod
    # partially match each other on AffinityTerms"
    SingleCase(
        name="PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on AffinityTerms",
        pod=incoming({"def": "", "xyz": ""}, aff=affinity(anti_required=[t_exists("abc", "zone"), t_exists("def", "zone")])),
        pods=[bound("node1", {"abc": "", "xyz": ""},
                    aff=affinity(anti_required=[t_exists("abc", "zone"), t_exists("def", "zone")]))],
        want_filter=ANTI_FAIL,
    ),
    # filtering_test.go TestRequiredAffinitySingleNode: "PodAffinity fails PreFilter with an invalid affinity label syntax"
    SingleCase(
        name="PodAffinity fails PreFilter with an invalid affinity label syntax",
        pod=incoming(POD_LABEL, aff=affinity(required=[
            t_in("service", "region", ["{{.bad-value.}}"]),
            t_in("service", "node", ["antivirusscan", "value2"]),
        ])),
        want_prefilter=status(UNRESOLVABLE, BAD_VALUE_MESSAGE),
    ),
    # filtering_test.go TestRequiredAffinitySingleNode: "PodAntiAffinity fails PreFilter with an invalid antiaffinity
    # label syntax" (upstream builds both terms with PodAffinityIn ... PodAffinityWithRequiredReq, i.e. as
    # required *affinity* terms, hence "requiredAffinityTerms" in the message)
    SingleCase(
        name="PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax",
        pod=incoming(POD_LABEL, aff=affinity(required=[
            t_in("service", "region", ["foo"]),
            t_in("service", "node", ["{{.bad-value.}}"]),
        ])),
        want_prefilter=status(UNRESOLVABLE, BAD_VALUE_MESSAGE),
    ),
    # filtering_test.go TestRequiredAffinitySingleNode: "affinity with NamespaceSelector"
    SingleCase(
        name="affinity with NamespaceSelector",
        pod=incoming(POD_LABEL2, aff=affinity(required=[
            term(sel(b.in_("service", "securityscan", "value2")), "region",
                 namespace_selector=sel(b.in_("team", "team1"))),
        ])),
        pods=[bound("node1", POD_LABEL, ns="subteam1.team1")],
    ),
    # filtering_test.go TestRequiredAffinitySingleNode: "affinity with non-matching NamespaceSelector"
    SingleCase(
        name="affinity with non-matching NamespaceSelector",
        pod=incoming(POD_LABEL2, aff=affinity(required=[
            term(sel(b.in_("service", "securityscan", "value2")), "region",
                 namespace_selector=sel(b.in_("team", "team1"))),
        ])),
        pods=[bound("node1", POD_LABEL, ns="subteam1.team2")],
        want_filter=AFFINITY_FAIL,
    ),
    # filtering_test.go TestRequiredAffinitySingleNode: "anti-affinity with matching NamespaceSelector"
    SingleCase(
        name="anti-affinity with matching NamespaceSelector",
        pod=incoming(POD_LABEL2, ns="subteam1.team1", aff=affinity(anti_required=[
            term(sel(b.in_("service", "securityscan", "value2")), "zone",
                 namespace_selector=sel(b.in_("team", "team1"))),
        ])),
        pods=[bound("node1", POD_LABEL, ns="subteam2.team1")],
        want_filter=ANTI_FAIL,
    ),
    # filtering_test.go TestRequiredAffinitySingleNode: "anti-affinity with matching all NamespaceSelector"
    SingleCase(
        name="anti-affinity with matching all NamespaceSelector",
        pod=incoming(POD_LABEL2, ns="subteam1.team1", aff=affinity(anti_required=[
            term(sel(b.in_("service", "securityscan", "value2")), "zone", namespace_selector={}),
        ])),
        pods=[bound("node1", POD_LABEL, ns="subteam2.team1")],
        want_filter=ANTI_FAIL,
    ),
    # filtering_test.go TestRequiredAffinitySingleNode: "anti-affinity with non-matching NamespaceSelector"
    SingleCase(
        name="anti-affinity with non-matching NamespaceSelector",
        pod=incoming(POD_LABEL2, ns="subteam1.team1", aff=affinity(anti_required=[
            term(sel(b.in_("service", "securityscan", "value2")), "zone",
                 namespace_selector=sel(b.in_("team", "team1"))),
        ])),
        pods=[bound("node1", POD_LABEL, ns="subteam1.team2")],
    ),
]


@pytest.mark.parametrize("case", SINGLE, ids=[c.name for c in SINGLE])
def test_required_affinity_single_node(case: SingleCase) -> None:
    ev = run(case.pod, nodes=[NODE1], pods=case.pods, namespaces=NAMESPACES, policy=filter_policy())
    if isinstance(case.want_prefilter, dict):  # PreFilter rejects the pod
        assert ev.prefilter == case.want_prefilter
        return
    assert ev.prefilter is None
    # PreFilter Skip: the Filter is not run, so the node passes.
    want = None if case.want_prefilter == SKIP else case.want_filter
    assert ev.filter["node1"] == want


# =============================================================================================
# TestRequiredAffinityMultipleNodes
# =============================================================================================
POD_LABEL_A = {"foo": "bar"}
LABEL_RG_CHINA = {"region": "China"}
LABEL_RG_CHINA_AZ_AZ1 = {"region": "China", "az": "az1"}
LABEL_RG_INDIA = {"region": "India"}

# The informer objects of TestRequiredAffinityMultipleNodes: one unlabelled Namespace.
NAMESPACES_MULTI = [b.namespace("NS1")]


def _abc_nodes(zone_b: str = "z1") -> list[Obj]:
    """The recurring nodeA/nodeB pair {region: r1, zone: z1|..., hostname: <name>}."""
    return [
        node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}),
        node("nodeB", {"region": "r1", "zone": zone_b, "hostname": "nodeB"}),
    ]


def _china_india(names: tuple[str, str, str]) -> list[Obj]:
    return [node(names[0], LABEL_RG_CHINA), node(names[1], LABEL_RG_CHINA_AZ_AZ1), node(names[2], LABEL_RG_INDIA)]


MULTI: list[MultiCase] = [
    # filtering_test.go TestRequiredAffinityMultipleNodes: "A pod can be scheduled onto all the nodes that have the same
    # topology key & label value with one of them has an existing pod that matches the affinity rules"
    MultiCase(
        name="A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has an existing pod that matches the affinity rules",
        pod=incoming(aff=affinity(required=[t_in("foo", "region", ["bar"])])),
        pods=[bound("node1", POD_LABEL_A, name="p1")],
        nodes=_china_india(("node1", "node2", "node3")),
        want_filter=[None, None, AFFINITY_FAIL],
    ),
    # filtering_test.go TestRequiredAffinityMultipleNodes: "The affinity rule is to schedule all of the pods of this
    # collection to the same zone. The first pod of the collection should not be blocked from being scheduled onto any
    # node, even there's no existing pod that matches the rule anywhere."
    MultiCase(
        name="The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the collection should not be blocked from being scheduled onto any node, even there's no existing pod that matches the rule anywhere.",
        pod=incoming({"foo": "bar", "service": "securityscan"}, aff=affinity(required=[
            t_in("foo", "zone", ["bar"]), t_in("service", "zone", ["securityscan"]),
        ])),
        pods=[bound("nodeA", {"foo": "bar"}, name="p1")],
        nodes=[node("nodeA", {"zone": "az1", "hostname": "h1"}), node("nodeB", {"zone": "az2", "hostname": "h2"})],
        want_filter=[None, None],
    ),
    # filtering_test.go TestRequiredAffinityMultipleNodes: "The first pod of the collection can only be scheduled on
    # nodes labelled with the requested topology keys"
    MultiCase(
        name="The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
        pod=incoming({"foo": "bar", "service": "securityscan"}, aff=affinity(required=[
            t_in("foo", "zone", ["bar"]), t_in("service", "zone", ["securityscan"]),
        ])),
        pods=[bound("nodeA", {"foo": "bar"}, name="p1")],
        nodes=[node("nodeA", {"zoneLabel": "az1", "hostname": "h1"}), node("nodeB", {"zoneLabel": "az2", "hostname": "h2"})],
        want_filter=[AFFINITY_FAIL, AFFINITY_FAIL],
    ),
    # filtering_test.go TestRequiredAffinityMultipleNodes: "NodeA and nodeB have same topologyKey and label value. NodeA
    # has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB."
    MultiCase(
        name="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
        pod=incoming(aff=affinity(anti_required=[t_in("foo", "region", ["abc"])])),
        pods=[bound("nodeA", {"foo": "abc"})],
        nodes=[node("nodeA", {"region": "r1", "hostname": "nodeA"}), node("nodeB", {"region": "r1", "hostname": "nodeB"})],
        want_filter=[ANTI_FAIL, ANTI_FAIL],
    ),
    # filtering_test.go TestRequiredAffinityMultipleNodes: "This test ensures that anti-affinity matches a pod when any
    # term of the anti-affinity rule matches a pod."
    MultiCase(
        name="This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
        pod=incoming(aff=affinity(anti_required=[
            t_in("foo", "region", ["abc"]), t_in("service", "zone", ["securityscan"]),
        ])),
        pods=[bound("nodeA", {"foo": "abc", "service": "securityscan"})],
        nodes=_abc_nodes("z2"),
        want_filter=[ANTI_FAIL, ANTI_FAIL],
    ),
    # filtering_test.go TestRequiredAffinityMultipleNodes: "NodeA and nodeB have same topologyKey and label value. NodeA
    # has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but
    # can be scheduled onto nodeC"
    MultiCase(
        name="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
        pod=incoming(aff=affinity(anti_required=[t_in("foo", "region", ["abc"])])),
        pods=[bound("nodeA", {"foo": "abc"})],
        nodes=_china_india(("nodeA", "nodeB", "nodeC")),
        want_filter=[ANTI_FAIL, ANTI_FAIL, None],
    ),
    # filtering_test.go TestRequiredAffinityMultipleNodes: "NodeA and nodeB have same topologyKey and label value. NodeA
    # has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but
    # can be scheduled onto nodeC (NodeC has an existing pod that match the inter pod affinity rule but in different
    # namespace)"
    MultiCase(
        name="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an existing pod that match the inter pod affinity rule but in different namespace)",
        pod=incoming({"foo": "123"}, ns="NS1", aff=affinity(anti_required=[t_in("foo", "region", ["bar"])])),
        pods=[
            bound("nodeA", {"foo": "bar"}, ns="NS1"),
            bound("nodeC", ns="NS2", aff=affinity(anti_required=[t_in("foo", "region", ["123"])])),
        ],
        nodes=_china_india(("nodeA", "nodeB", "nodeC")),
        want_filter=[ANTI_FAIL, ANTI_FAIL, None],
    ),
    # filtering_test.go TestRequiredAffinityMultipleNodes: "Test existing pod's anti-affinity: if an existing pod has a
    # term with invalid topologyKey, labelSelector of the term is firstly checked, and then topologyKey of the term is
    # also checked"
    MultiCase(
        name="Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of the term is firstly checked, and then topologyKey of the term is also checked",
        pod=incoming({"foo": ""}),
        pods=[bound("nodeA", aff=affinity(anti_required=[t_exists("foo", "invalid-node-label")]))],
        nodes=_abc_nodes("z1"),
        want_filter=[None, None],
        want_prefilter=SKIP,
    ),
    # filtering_test.go TestRequiredAffinityMultipleNodes: "Test incoming pod's anti-affinity: even if labelSelector
    # matches, we still check if topologyKey matches" (upstream's incoming pod also has .Node("nodeA"); see docstring)
    MultiCase(
        name="Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
        pod=incoming(aff=affinity(anti_required=[t_exists("foo", "invalid-node-label")])),
        pods=[bound("nodeA", {"foo": ""})],
        nodes=_abc_nodes("z1"),
        want_filter=[None, None],
    ),
    # filtering_test.go TestRequiredAffinityMultipleNodes: "Test existing pod's anti-affinity: incoming pod wouldn't
    # considered as a fit as it violates each existingPod's terms on all nodes"
    MultiCase(
        name="Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each existingPod's terms on all nodes",
        pod=incoming({"foo": "", "bar": ""}),
        pods=[
            bound("nodeA", aff=affinity(anti_required=[t_exists("foo", "zone")])),
            bound("nodeA", aff=affinity(anti_required=[t_exists("bar", "region")])),
        ],
        nodes=_abc_nodes("z2"),
        want_filter=[EXISTING_FAIL, EXISTING_FAIL],
    ),
    # filtering_test.go TestRequiredAffinityMultipleNodes: "Test incoming pod's anti-affinity: incoming pod wouldn't
    # considered as a fit as it at least violates one anti-affinity rule of existingPod"
    MultiCase(
        name="Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one anti-affinity rule of existingPod",
        pod=incoming(aff=affinity(anti_required=[t_exists("foo", "zone"), t_exists("bar", "region")])),
        pods=[bound("nodeA", {"foo": ""}), bound("nodeB", {"bar": ""})],
        nodes=_abc_nodes("z2"),
        want_filter=[ANTI_FAIL, ANTI_FAIL],
    ),
    # filtering_test.go TestRequiredAffinityMultipleNodes: "Test existing pod's anti-affinity: only when labelSelector and
    # topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey"
    MultiCase(
        name="Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
        pod=incoming({"foo": "", "bar": ""}),
        pods=[bound("nodeA", aff=affinity(anti_required=[t_exists("foo", "invalid-node-label"), t_exists("bar", "zone")]))],
        nodes=_abc_nodes("z2"),
        want_filter=[EXISTING_FAIL, None],
    ),
    # filtering_test.go TestRequiredAffinityMultipleNodes: "Test incoming pod's anti-affinity: only when labelSelector and
    # topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey"
    MultiCase(
        name="Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
        pod=incoming(aff=affinity(anti_required=[t_exists("foo", "invalid-node-label"), t_exists("bar", "zone")])),
        pods=[bound("nodeA", {"foo": "", "bar": ""}, name="podA")],
        nodes=_abc_nodes("z2"),
        want_filter=[ANTI_FAIL, None],
    ),
    # filtering_test.go TestRequiredAffinityMultipleNodes: "Test existing pod's anti-affinity: only when labelSelector and
    # topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey"
    MultiCase(
        name="Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
        pod=incoming({"foo": "", "bar": ""}),
        pods=[bound("nodeA", aff=affinity(anti_required=[t_exists("foo", "region"), t_exists("bar", "zone")]))],
        nodes=_abc_nodes("z2"),
        want_filter=[EXISTING_FAIL, EXISTING_FAIL],
    ),
    # filtering_test.go TestRequiredAffinityMultipleNodes: "Test incoming pod's anti-affinity: only when labelSelector and
    # topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey"
    MultiCase(
        name="Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
        pod=incoming(aff=affinity(anti_required=[t_exists("foo", "region"), t_exists("bar", "zone")])),
        pods=[bound("nodeA", {"foo": "", "bar": ""})],
        nodes=_abc_nodes("z2"),
        want_filter=[ANTI_FAIL, ANTI_FAIL],
    ),
    # filtering_test.go TestRequiredAffinityMultipleNodes: "Test existing pod's anti-affinity: existingPod on nodeA and
    # nodeB has at least one anti-affinity term matches incoming pod, so incoming pod can only be scheduled to nodeC"
    MultiCase(
        name="Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term matches incoming pod, so incoming pod can only be scheduled to nodeC",
        pod=incoming({"foo": "", "bar": ""}),
        pods=[
            bound("nodeA", aff=affinity(anti_required=[t_exists("foo", "zone"), t_exists("labelA", "zone")])),
            bound("nodeB", aff=affinity(anti_required=[t_exists("bar", "zone"), t_exists("labelB", "zone")])),
        ],
        nodes=[*_abc_nodes("z2"), node("nodeC", {"region": "r1", "zone": "z3", "hostname": "nodeC"})],
        want_filter=[EXISTING_FAIL, EXISTING_FAIL, None],
    ),
    # filtering_test.go TestRequiredAffinityMultipleNodes: "Test incoming pod's affinity: firstly check if all
    # affinityTerms match, and then check if all topologyKeys match"
    MultiCase(
        name="Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match",
        pod=incoming(aff=affinity(required=[t_exists("foo", "region"), t_exists("bar", "zone")])),
        pods=[bound("nodeA", {"foo": "", "bar": ""}, name="pod1")],
        nodes=_abc_nodes("z1"),
        want_filter=[None, None],
    ),
    # filtering_test.go TestRequiredAffinityMultipleNodes: "Test incoming pod's affinity: firstly check if all
    # affinityTerms match, and then check if all topologyKeys match, and the match logic should be satisfied on the same pod"
    MultiCase(
        name="Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match, and the match logic should be satisfied on the same pod",
        pod=incoming(aff=affinity(required=[t_exists("foo", "region"), t_exists("bar", "zone")])),
        pods=[bound("nodeA", {"foo": ""}, name="pod1"), bound("nodeB", {"bar": ""}, name="pod2")],
        nodes=_abc_nodes("z2"),
        want_filter=[AFFINITY_FAIL, AFFINITY_FAIL],
    ),
]


@pytest.mark.parametrize("case", MULTI, ids=[c.name for c in MULTI])
def test_required_affinity_multiple_nodes(case: MultiCase) -> None:
    ev = run(case.pod, nodes=case.nodes, pods=case.pods, namespaces=NAMESPACES_MULTI, policy=filter_policy())
    assert ev.prefilter is None
    names = [n["metadata"]["name"] for n in case.nodes]
    got = {name: ev.filter[name] for name in names}
    # PreFilter Skip (upstream then returns before Filter, with wantFilterStatuses all nil).
    want = dict(zip(names, [None] * len(names) if case.want_prefilter == SKIP else case.want_filter, strict=True))
    assert got == want


def test_row_counts() -> None:
    """Every case of the two upstream tables is here, once."""
    assert len(SINGLE) == 26 and len({c.name for c in SINGLE}) == 26
    assert len(MULTI) == 18 and len({c.name for c in MULTI}) == 18
    assert DEFAULT_NS == ""
