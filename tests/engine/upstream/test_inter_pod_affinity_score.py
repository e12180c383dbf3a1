"""InterPodAffinity PreScore/Score/NormalizeScore: kube-scheduler's own tables, through `evaluate`.

Source: kubernetes/kubernetes
`pkg/scheduler/framework/plugins/interpodaffinity/scoring_test.go` @ 8a4d98ac2f6d (modern:
NormalizeScore from the real minimum, `ignorePreferredTermsOfExistingPods`, namespaceSelector).
Every row cites its upstream test function and case `name` (the pytest id is that name; two
names occur twice in TestPreferredAffinity and carry a " [2nd]" suffix on their second use).

Mapping: `cache.NewSnapshot(pods, nodes)` -> the objects given to `evaluate`, with the four
`namespaces` Namespace objects the informers hold; upstream scores every node of `nodes`
(`tf.BuildNodeInfos(test.nodes)` is PreScore's node list), so every node is a candidate;
policy = only the InterPodAffinity scorer with upstream's args (`HardPodAffinityWeight: 1` and the
row's `ignorePreferredTermsOfExistingPods` for TestPreferredAffinity; the row's
`hardPodAffinityWeight` for TestPreferredAffinityWithHardPodAffinitySymmetricWeight). Expected
`framework.NodeScore` lists -> `ev.scores["InterPodAffinity"]`; a PreScore Skip -> the plugin is
absent from `ev.scores`. A PreScore Error ("invalid ... fails PreScore") -> `evaluate` raises,
its message containing upstream's expected fragment `Invalid value: "{{.bad-value.}}"`.

Not transcribed: nothing; both tables of scoring_test.go are complete here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.engine.upstream import builders as b
from tests.engine.upstream._ipa import (
    PLUGIN,
    SKIP,
    affinity,
    bound,
    incoming,
    node,
    run,
    score_policy,
    sel,
    term,
    weighted,
)

Obj = dict[str, Any]

MAX = 100  # framework.MaxNodeScore

# scoring_test.go `namespaces`
NS_LABEL_T1 = {"team": "team1"}
NS_LABEL_T2 = {"team": "team2"}
NAMESPACES = [
    b.namespace("subteam1.team1", NS_LABEL_T1),
    b.namespace("subteam2.team1", NS_LABEL_T1),
    b.namespace("subteam1.team2", NS_LABEL_T2),
    b.namespace("subteam2.team2", NS_LABEL_T2),
]

# ---- TestPreferredAffinity fixtures --------------------------------------------------------
LABEL_RG_CHINA = {"region": "China"}
LABEL_RG_INDIA = {"region": "India"}
LABEL_AZ_AZ1 = {"az": "az1"}
LABEL_AZ_AZ2 = {"az": "az2"}
LABEL_RG_CHINA_AZ_AZ1 = {"region": "China", "az": "az1"}
S1 = {"security": "S1"}  # podLabelSecurityS1
S2 = {"security": "S2"}  # podLabelSecurityS2

STAY_WITH_S1_IN_REGION = affinity(preferred=[
    weighted(5, term(sel(b.in_("security", "S1")), "region")),
])
STAY_WITH_S2_IN_REGION = affinity(preferred=[
    weighted(6, term(sel(b.in_("security", "S2")), "region")),
])
AFFINITY3 = affinity(preferred=[
    weighted(8, term(sel(b.not_in("security", "S1"), b.in_("security", "S2")), "region")),
    weighted(2, term(sel(b.exists("security"), b.does_not_exist("wrongkey")), "region")),
])
HARD_AFFINITY = affinity(required=[
    term(sel(b.in_("security", "S1", "value2")), "region"),
    term(sel(b.exists("security"), b.does_not_exist("wrongkey")), "region"),
])
AWAY_FROM_S1_IN_AZ = affinity(anti_preferred=[
    weighted(5, term(sel(b.in_("security", "S1")), "az")),
])
AWAY_FROM_S2_IN_AZ = affinity(anti_preferred=[
    weighted(5, term(sel(b.in_("security", "S2")), "az")),
])
STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ = affinity(
    preferred=[weighted(8, term(sel(b.in_("security", "S1")), "region"))],
    anti_preferred=[weighted(5, term(sel(b.in_("security", "S2")), "az"))],
)
AFFINITY_NAMESPACE_SELECTOR = affinity(preferred=[
    weighted(5, term(sel(b.in_("security", "S1")), "region", namespaces=["subteam2.team2"],
                     namespace_selector=sel(b.in_("team", "team1")))),
])
ANTI_AFFINITY_NAMESPACE_SELECTOR = affinity(anti_preferred=[
    weighted(5, term(sel(b.in_("security", "S1")), "region", namespaces=["subteam2.team2"],
                     namespace_selector=sel(b.in_("team", "team1")))),
])
INVALID_AFFINITY_LABELS = affinity(preferred=[
    weighted(8, term(sel(b.in_("security", "{{.bad-value.}}")), "region")),
])
INVALID_ANTI_AFFINITY_LABELS = affinity(anti_preferred=[
    weighted(5, term(sel(b.in_("security", "{{.bad-value.}}")), "az")),
])

INVALID_FRAGMENT = 'Invalid value: "{{.bad-value.}}"'


@dataclass(frozen=True)
class ScoreCase:
    name: str
    pod: Obj
    nodes: list[Obj]
    pods: list[Obj] = field(default_factory=list)
    want: list[int] | str | None = None     # scores in `nodes` order, SKIP, or None with error
    error: str | None = None                # PreScore Error: a fragment of its message
    ignore_preferred: bool = False
    hard_weight: int = 1
    id: str = ""

    @property
    def test_id(self) -> str:
        return self.id or self.name


def _nodes(*spec: tuple[str, dict[str, str]]) -> list[Obj]:
    return [node(n, labels) for n, labels in spec]


THREE = _nodes(("node1", LABEL_RG_CHINA), ("node2", LABEL_RG_INDIA), ("node3", LABEL_AZ_AZ1))
CHINA_INDIA = _nodes(("node1", LABEL_RG_CHINA), ("node2", LABEL_RG_INDIA))

PREFERRED: list[ScoreCase] = [
    # scoring_test.go TestPreferredAffinity: "all nodes are same priority as Affinity is nil"
    ScoreCase(
        name="all nodes are same priority as Affinity is nil",
        pod=incoming(S1),
        nodes=THREE,
        want=SKIP,
    ),
    # scoring_test.go TestPreferredAffinity: "Affinity: pod that matches topology key & pods in nodes will get high
    # score comparing to otherswhich doesn't match either pods in nodes or in topology key" (sic: Go "others" + "which")
    ScoreCase(
        name="Affinity: pod that matches topology key & pods in nodes will get high score comparing to others"
             "which doesn't match either pods in nodes or in topology key",
        pod=incoming(S1, aff=STAY_WITH_S1_IN_REGION),
        pods=[bound("node1", S1), bound("node2", S2), bound("node3", S1)],
        nodes=THREE,
        want=[MAX, 0, 0],
    ),
    # scoring_test.go TestPreferredAffinity: "All the nodes that have the same topology key & label value with one of
    # them has an existing pod that match the affinity rules, have the same score"
    ScoreCase(
        name="All the nodes that have the same topology key & label value with one of them has an existing pod that match the affinity rules, have the same score",
        pod=incoming(aff=STAY_WITH_S1_IN_REGION),
        pods=[bound("node1", S1)],
        nodes=_nodes(("node1", LABEL_RG_CHINA), ("node2", LABEL_RG_CHINA_AZ_AZ1), ("node3", LABEL_RG_INDIA)),
        want=[MAX, MAX, 0],
    ),
    # scoring_test.go TestPreferredAffinity: "Affinity: nodes in one region has more matching pods comparing to other
    # region, so the region which has more matches will get high score"
    ScoreCase(
        name="Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more matches will get high score",
        pod=incoming(S1, aff=STAY_WITH_S2_IN_REGION),
        pods=[bound("node1", S2), bound("node1", S2), bound("node2", S2), bound("node3", S2),
              bound("node4", S2), bound("node5", S2)],
        nodes=_nodes(("node1", LABEL_RG_CHINA), ("node2", LABEL_RG_INDIA), ("node3", LABEL_RG_CHINA),
                     ("node4", LABEL_RG_CHINA), ("node5", LABEL_RG_INDIA)),
        want=[MAX, 0, MAX, MAX, 0],
    ),
    # scoring_test.go TestPreferredAffinity: "Affinity: different Label operators and values for pod affinity scheduling
    # preference, including some match failures " (sic, trailing space)
    ScoreCase(
        name="Affinity: different Label operators and values for pod affinity scheduling preference, including some match failures ",
        pod=incoming(S1, aff=AFFINITY3),
        pods=[bound("node1", S1), bound("node2", S2), bound("node3", S1)],
        nodes=THREE,
        want=[20, MAX, 0],
    ),
    # scoring_test.go TestPreferredAffinity: "Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution
    # in pod affinity symmetry"
    ScoreCase(
        name="Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
        pod=incoming(S2),
        pods=[bound("node1", S1, aff=STAY_WITH_S1_IN_REGION), bound("node2", S2, aff=STAY_WITH_S2_IN_REGION)],
        nodes=THREE,
        want=[0, MAX, 0],
    ),
    # scoring_test.go TestPreferredAffinity: "Affinity symmetry with namespace selector"
    ScoreCase(
        name="Affinity symmetry with namespace selector",
        pod=incoming(S1, ns="subteam1.team1"),
        pods=[bound("node1", S1, aff=AFFINITY_NAMESPACE_SELECTOR), bound("node2", S2, aff=STAY_WITH_S2_IN_REGION)],
        nodes=THREE,
        want=[MAX, 0, 0],
    ),
    # scoring_test.go TestPreferredAffinity: "AntiAffinity symmetry with namespace selector"
    ScoreCase(
        name="AntiAffinity symmetry with namespace selector",
        pod=incoming(S1, ns="subteam1.team1"),
        pods=[bound("node1", S1, aff=ANTI_AFFINITY_NAMESPACE_SELECTOR), bound("node2", S2, aff=STAY_WITH_S2_IN_REGION)],
        nodes=THREE,
        want=[0, MAX, MAX],
    ),
    # scoring_test.go TestPreferredAffinity: "Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution
    # in pod affinity symmetry"
    ScoreCase(
        name="Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
        pod=incoming(S1),
        pods=[bound("node1", S1, aff=HARD_AFFINITY), bound("node2", S2, aff=HARD_AFFINITY)],
        nodes=THREE,
        want=[MAX, MAX, 0],
    ),
    # scoring_test.go TestPreferredAffinity: "Anti Affinity: pod that does not match existing pods in node will get high
    # score " (sic, trailing space)
    ScoreCase(
        name="Anti Affinity: pod that does not match existing pods in node will get high score ",
        pod=incoming(S1, aff=AWAY_FROM_S1_IN_AZ),
        pods=[bound("node1", S1), bound("node2", S2)],
        nodes=_nodes(("node1", LABEL_AZ_AZ1), ("node2", LABEL_RG_CHINA)),
        want=[0, MAX],
    ),
    # scoring_test.go TestPreferredAffinity: "Anti Affinity: pod that does not match topology key & match the pods in
    # nodes will get higher score comparing to others " (sic, trailing space)
    ScoreCase(
        name="Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score comparing to others ",
        pod=incoming(S1, aff=AWAY_FROM_S1_IN_AZ),
        pods=[bound("node1", S1), bound("node2", S1)],
        nodes=_nodes(("node1", LABEL_AZ_AZ1), ("node2", LABEL_RG_CHINA)),
        want=[0, MAX],
    ),
    # scoring_test.go TestPreferredAffinity: "Anti Affinity: one node has more matching pods comparing to other node, so
    # the node which has more unmatches will get high score"
    ScoreCase(
        name="Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches will get high score",
        pod=incoming(S1, aff=AWAY_FROM_S1_IN_AZ),
        pods=[bound("node1", S1), bound("node1", S1), bound("node2", S2)],
        nodes=_nodes(("node1", LABEL_AZ_AZ1), ("node2", LABEL_RG_INDIA)),
        want=[0, MAX],
    ),
    # scoring_test.go TestPreferredAffinity: "Anti Affinity symmetry: the existing pods in node which has anti affinity
    # match will get high score"
    ScoreCase(
        name="Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
        pod=incoming(S2),
        pods=[bound("node1", S1, aff=AWAY_FROM_S2_IN_AZ), bound("node2", S2, aff=AWAY_FROM_S1_IN_AZ)],
        nodes=_nodes(("node1", LABEL_AZ_AZ1), ("node2", LABEL_AZ_AZ2)),
        want=[0, MAX],
    ),
    # scoring_test.go TestPreferredAffinity: "Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution
    # in both pod affinity & anti affinity"
    ScoreCase(
        name="Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity",
        pod=incoming(S1, aff=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
        pods=[bound("node1", S1), bound("node2", S1)],
        nodes=_nodes(("node1", LABEL_RG_CHINA), ("node2", LABEL_AZ_AZ1)),
        want=[MAX, 0],
    ),
    # scoring_test.go TestPreferredAffinity: "Affinity and Anti Affinity: considering both affinity and anti-affinity,
    # the pod to schedule and existing pods have the same labels"
    ScoreCase(
        name="Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing pods have the same labels",
        pod=incoming(S1, aff=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
        pods=[bound("node1", S1), bound("node1", S1), bound("node2", S1), bound("node3", S1),
              bound("node3", S1), bound("node4", S1), bound("node5", S1)],
        nodes=_nodes(("node1", LABEL_RG_CHINA_AZ_AZ1), ("node2", LABEL_RG_INDIA), ("node3", LABEL_RG_CHINA),
                     ("node4", LABEL_RG_CHINA), ("node5", LABEL_RG_INDIA)),
        want=[MAX, 0, MAX, MAX, 0],
    ),
    # scoring_test.go TestPreferredAffinity: "Affinity and Anti Affinity and symmetry: considered only
    # preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & symmetry"
    ScoreCase(
        name="Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & symmetry",
        pod=incoming(S1, aff=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
        pods=[bound("node1", S1), bound("node2", S2),
              bound("node3", aff=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ), bound("node4", aff=AWAY_FROM_S1_IN_AZ)],
        nodes=_nodes(("node1", LABEL_RG_CHINA), ("node2", LABEL_AZ_AZ1), ("node3", LABEL_RG_INDIA),
                     ("node4", LABEL_AZ_AZ2)),
        want=[MAX, 0, MAX, 0],
    ),
    # scoring_test.go TestPreferredAffinity: "Avoid panic when partial nodes in a topology don't have pods with affinity"
    ScoreCase(
        name="Avoid panic when partial nodes in a topology don't have pods with affinity",
        pod=incoming(S1),
        pods=[bound("node1", S1), bound("node2", aff=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ)],
        nodes=_nodes(("node1", LABEL_RG_CHINA), ("node2", LABEL_RG_CHINA)),
        want=[0, 0],
    ),
    # scoring_test.go TestPreferredAffinity: "invalid Affinity fails PreScore"
    ScoreCase(
        name="invalid Affinity fails PreScore",
        pod=incoming(aff=INVALID_AFFINITY_LABELS),
        nodes=_nodes(("node1", LABEL_RG_CHINA), ("node2", LABEL_RG_CHINA)),
        error=INVALID_FRAGMENT,
    ),
    # scoring_test.go TestPreferredAffinity: "invalid AntiAffinity fails PreScore"
    ScoreCase(
        name="invalid AntiAffinity fails PreScore",
        pod=incoming(aff=INVALID_ANTI_AFFINITY_LABELS),
        nodes=_nodes(("node1", LABEL_RG_CHINA), ("node2", LABEL_RG_CHINA)),
        error=INVALID_FRAGMENT,
    ),
    # scoring_test.go TestPreferredAffinity: "Affinity with pods matching NamespaceSelector" (first of two rows so named;
    # this one uses affinityNamespaceSelector)
    ScoreCase(
        name="Affinity with pods matching NamespaceSelector",
        pod=incoming(S1, ns="subteam1.team1", aff=AFFINITY_NAMESPACE_SELECTOR),
        pods=[bound("node1", S1, ns="subteam1.team1"), bound("node1", S1, ns="subteam1.team1"),
              bound("node1", S1, ns="subteam1.team2"), bound("node2", S1, ns="subteam2.team1")],
        nodes=CHINA_INDIA,
        want=[MAX, 0],
    ),
    # scoring_test.go TestPreferredAffinity: "Affinity with pods matching both NamespaceSelector and Namespaces fields"
    # (first of two rows so named; affinityNamespaceSelector)
    ScoreCase(
        name="Affinity with pods matching both NamespaceSelector and Namespaces fields",
        pod=incoming(S1, ns="subteam1.team1", aff=AFFINITY_NAMESPACE_SELECTOR),
        pods=[bound("node1", S1, ns="subteam1.team1"), bound("node1", S1, ns="subteam1.team1"),
              bound("node1", S1, ns="subteam2.team2"), bound("node2", S1, ns="subteam2.team1")],
        nodes=CHINA_INDIA,
        want=[MAX, 0],
    ),
    # scoring_test.go TestPreferredAffinity: "Affinity with pods matching NamespaceSelector" (second row so named;
    # this one uses antiAffinityNamespaceSelector)
    ScoreCase(
        name="Affinity with pods matching NamespaceSelector",
        id="Affinity with pods matching NamespaceSelector [2nd]",
        pod=incoming(S1, ns="subteam1.team1", aff=ANTI_AFFINITY_NAMESPACE_SELECTOR),
        pods=[bound("node1", S1, ns="subteam1.team1"), bound("node1", S1, ns="subteam1.team1"),
              bound("node1", S1, ns="subteam1.team2"), bound("node2", S1, ns="subteam2.team1")],
        nodes=CHINA_INDIA,
        want=[0, MAX],
    ),
    # scoring_test.go TestPreferredAffinity: "Affinity with pods matching both NamespaceSelector and Namespaces fields"
    # (second row so named; antiAffinityNamespaceSelector)
    ScoreCase(
        name="Affinity with pods matching both NamespaceSelector and Namespaces fields",
        id="Affinity with pods matching both NamespaceSelector and Namespaces fields [2nd]",
        pod=incoming(S1, ns="subteam1.team1", aff=ANTI_AFFINITY_NAMESPACE_SELECTOR),
        pods=[bound("node1", S1, ns="subteam1.team1"), bound("node1", S1, ns="subteam1.team1"),
              bound("node1", S1, ns="subteam2.team2"), bound("node2", S1, ns="subteam2.team1")],
        nodes=CHINA_INDIA,
        want=[0, MAX],
    ),
    # scoring_test.go TestPreferredAffinity: "Ignore preferred terms of existing pods"
    # (upstream also lists expectedList 0/0, never compared because PreScore skips)
    ScoreCase(
        name="Ignore preferred terms of existing pods",
        pod=incoming(S2),
        pods=[bound("node1", S1, aff=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
              bound("node2", S2, aff=STAY_WITH_S2_IN_REGION)],
        nodes=CHINA_INDIA,
        want=SKIP,
        ignore_preferred=True,
    ),
    # scoring_test.go TestPreferredAffinity: "Do not ignore preferred terms of existing pods"
    ScoreCase(
        name="Do not ignore preferred terms of existing pods",
        pod=incoming(S2),
        pods=[bound("node1", S1, aff=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
              bound("node2", S2, aff=STAY_WITH_S2_IN_REGION)],
        nodes=CHINA_INDIA,
        want=[0, MAX],
        ignore_preferred=False,
    ),
    # scoring_test.go TestPreferredAffinity: "No nodes to score"
    ScoreCase(
        name="No nodes to score",
        pod=incoming(S2),
        nodes=[],
        want=SKIP,
    ),
]

# ---- TestPreferredAffinityWithHardPodAffinitySymmetricWeight --------------------------------
SERVICE_S1 = {"service": "S1"}  # podLabelServiceS1
HARD_POD_AFFINITY = affinity(required=[
    term(sel(b.in_("service", "S1")), "region", namespaces=["", "subteam2.team2"],
         namespace_selector=sel(b.in_("team", "team1"))),
])
DEFAULT_HARD_POD_AFFINITY_SYMMETRIC_WEIGHT = 1  # v1.DefaultHardPodAffinitySymmetricWeight


def _hard_pods() -> list[Obj]:
    return [bound("node1", aff=HARD_POD_AFFINITY), bound("node2", aff=HARD_POD_AFFINITY)]


HARD: list[ScoreCase] = [
    # scoring_test.go TestPreferredAffinityWithHardPodAffinitySymmetricWeight: "with default weight"
    ScoreCase(
        name="with default weight",
        pod=incoming(SERVICE_S1),
        pods=_hard_pods(),
        nodes=THREE,
        hard_weight=DEFAULT_HARD_POD_AFFINITY_SYMMETRIC_WEIGHT,
        want=[MAX, MAX, 0],
    ),
    # scoring_test.go TestPreferredAffinityWithHardPodAffinitySymmetricWeight: "with zero weight"
    ScoreCase(
        name="with zero weight",
        pod=incoming(SERVICE_S1),
        pods=_hard_pods(),
        nodes=THREE,
        hard_weight=0,
        want=SKIP,
    ),
    # scoring_test.go TestPreferredAffinityWithHardPodAffinitySymmetricWeight: "with no matching namespace"
    ScoreCase(
        name="with no matching namespace",
        pod=incoming(SERVICE_S1, ns="subteam1.team2"),
        pods=_hard_pods(),
        nodes=THREE,
        hard_weight=DEFAULT_HARD_POD_AFFINITY_SYMMETRIC_WEIGHT,
        want=SKIP,
    ),
    # scoring_test.go TestPreferredAffinityWithHardPodAffinitySymmetricWeight: "with matching NamespaceSelector"
    ScoreCase(
        name="with matching NamespaceSelector",
        pod=incoming(SERVICE_S1, ns="subteam1.team1"),
        pods=_hard_pods(),
        nodes=THREE,
        hard_weight=DEFAULT_HARD_POD_AFFINITY_SYMMETRIC_WEIGHT,
        want=[MAX, MAX, 0],
    ),
    # scoring_test.go TestPreferredAffinityWithHardPodAffinitySymmetricWeight: "with matching Namespaces"
    ScoreCase(
        name="with matching Namespaces",
        pod=incoming(SERVICE_S1, ns="subteam2.team2"),
        pods=_hard_pods(),
        nodes=THREE,
        hard_weight=DEFAULT_HARD_POD_AFFINITY_SYMMETRIC_WEIGHT,
        want=[MAX, MAX, 0],
    ),
]


def _check(case: ScoreCase) -> None:
    policy = score_policy(case.hard_weight, case.ignore_preferred)
    if case.error is not None:
        # PreScore returns framework.Error: the scheduling cycle fails; evaluate raises.
        try:
            ev = run(case.pod, nodes=case.nodes, pods=case.pods, namespaces=NAMESPACES, policy=policy)
        except Exception as exc:  # noqa: BLE001 - any error type, the message is what upstream checks
            assert re.search(re.escape(case.error), str(exc)), str(exc)
            return
        pytest.fail(f"PreScore Error expected ({case.error}); evaluate returned scores={ev.scores} "
                    f"total={ev.total}")
    ev = run(case.pod, nodes=case.nodes, pods=case.pods, namespaces=NAMESPACES, policy=policy)
    if case.want == SKIP:
        assert PLUGIN not in ev.scores
        return
    assert isinstance(case.want, list)
    names = [n["metadata"]["name"] for n in case.nodes]
    assert ev.scores[PLUGIN] == dict(zip(names, case.want, strict=True))


@pytest.mark.parametrize("case", PREFERRED, ids=[c.test_id for c in PREFERRED])
def test_preferred_affinity(case: ScoreCase) -> None:
    _check(case)


@pytest.mark.parametrize("case", HARD, ids=[c.test_id for c in HARD])
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(case: ScoreCase) -> None:
    _check(case)


def test_row_counts() -> None:
    """Every case of the two upstream tables is here, once."""
    assert len(PREFERRED) == 26 and len({c.test_id for c in PREFERRED}) == 26
    assert len(HARD) == 5
