"""PodTopologySpread and InterPodAffinity held to a straightforward reference, as properties.

"Property tests hold every fast path to the straightforward one": the engine's cross-node
plugins read the cluster through the pod index (`ClusterState.pod_index`: groups by namespace
and label set, per-node counters, memoised selector matches), the memoised eligible domains
(`ClusterState.node_memo`), the per-projection verdict caches of `ProjectedFilterState` and the
one-key fast paths of `filter_many`. `tests/engine/cross_node_reference.py` computes the same
answers from plugins-next.md §2/§3 by scanning every node's pods, with nothing cached. Over
random small clusters (3-8 nodes, some missing a topology key, some tainted; up to 25 pods in
three namespaces, some terminating, pending, finished or bound to an unknown node, some with
pod (anti-)affinity terms; Namespace objects, Services and controllers) and a random pending
pod (spread constraints, required/preferred (anti-)affinity, nodeSelector, node affinity,
tolerations, a controller owner), these properties must hold:

1. `test_filters_match_reference`: PreFilter+Filter verdicts, `(plugin, code, reasons)` per
   node, of each plugin alone and of both in order, through `run_filters` (the batch path) and
   `node_fits` (per node); also the PreFilter states' counts themselves.
2. `test_scores_match_reference`: PreScore+Score+NormalizeScore of each plugin over a random
   candidate subset in random order (Skip = no scores); `test_evaluate_matches_reference`
   does filter then score end to end through `evaluate`; `test_scores_are_normalised_raw_scores`
   holds each plugin's `score` to its `normalize(raw_scores(...))`.
3. `test_add_remove_pod_on_a_clone`: `FilterPass.clone()` then RemovePod of a bound pod or
   AddPod of a new one: InterPodAffinity's verdicts equal the reference's AddPod/RemovePod rule
   (and, for a removal, a fresh PreFilter on the cluster without the pod), PodTopologySpread's
   per-constraint counts equal the rule's (upstream keeps only approximate critical paths under
   AddPod, so its verdicts are not compared); the original pass is untouched.
4. `test_incremental_state_matches_fresh`: random pod adds, label updates, terminations,
   deletions, binds, completions, node label/taint changes, node deletes/re-adds and Namespace
   label changes applied to one `ClusterState` (probing the engine in between, so memos are
   warm) give the same PreFilter states, verdicts and scores as a state built fresh from the
   final objects, and as the reference.
5. `test_filter_many_matches_per_node`: on each plugin's FilterState, `filter_many` and
   `__call__` agree (in any order of warming the verdict caches, over node lists with
   repeats and nodes from outside the cluster), before and after AddPod/RemovePod on a clone.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extender.engine import registry
from extender.engine.cluster import ClusterState
from extender.engine.evaluate import cluster_from_objects, evaluate
from extender.engine.framework import Code, CycleState, FilterState, Status
from extender.engine.policy import parse_policy
from extender.engine.profile import Profile, build_profile
from extender.engine.rows import filter_rows
from extender.engine.runner import node_fits, prepare_filters, run_filters
from extender.model import k8s
from extender.model.node import NodeView
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from tests.engine import cross_node_reference as ref
from tests.engine.upstream import builders as b
from tests.seeded import Draws, seeded

pytestmark = pytest.mark.slow  # property tests over generated clusters: about 20 s

Obj = dict[str, Any]

PTS, IPA = ref.PTS, ref.IPA
HOSTNAME = ref.HOSTNAME
ZONE = ref.ZONE
REGION = "topology.kubernetes.io/region"
RACK = "example.com/rack"  # on few nodes: "missing label" paths
TOPOLOGY_KEYS = (HOSTNAME, ZONE, REGION, RACK)
TOPOLOGY_KEY_CHOICES = (HOSTNAME, ZONE, HOSTNAME, ZONE, REGION, RACK)
DNS, SA = "DoNotSchedule", "ScheduleAnyway"

POD_LABELS = {"app": ("a", "b"), "tier": ("x", "y"), "foo": ("1",)}
NAMESPACES = ("ns1", "ns2", "ns3")
NODE_VALUES = {"disk": ("ssd", "hdd"), ZONE: ("z1", "z2", "z3"), REGION: ("r1", "r2")}

_CODES = {Code.UNSCHEDULABLE: ref.U, Code.UNSCHEDULABLE_AND_UNRESOLVABLE: ref.UU,
          Code.ERROR: "Error"}

def _settings(max_examples: int) -> settings:
    return settings(max_examples=max_examples, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ---- strategies -----------------------------------------------------------------------------
# Label sets and selectors are drawn from precomputed pools, and rare features are gated by
# one roll. A scenario's size (how many nodes, pods, other pending pods) is Hypothesis's draw;
# each object's fields come from `tests.seeded` (a few hundred Hypothesis draws a scenario
# took most of these tests' time).


def _subsets(labels: Mapping[str, str]) -> list[dict[str, str]]:
    """Every subset of `labels`, the whole set first and {} last."""
    out: list[dict[str, str]] = [{}]
    for key, value in labels.items():
        out += [{**s, key: value} for s in out]
    return out[::-1]


def _label_sets() -> list[dict[str, str]]:
    sets: list[dict[str, str]] = [{}]
    for key, values in POD_LABELS.items():
        sets = [*sets, *({**s, key: v} for s in sets for v in values)]
    sets = sorted(sets, key=len)
    return [*sets[1:4], {}, *sets[4:]]  # {} early but not first (pools' first entries are drawn most)


LABEL_SETS = _label_sets()  # all 18 label sets over POD_LABELS


def _selector_pool() -> list[Obj | None]:
    """nil (matches nothing) and {} (everything) about one in ten each, then real selectors."""
    real: list[Obj] = [{"matchLabels": {k: v}} for k, vs in POD_LABELS.items() for v in vs]
    real += [{"matchLabels": {"app": "a", "tier": "x"}}, {"matchLabels": {"app": "b", "foo": "1"}}]
    for key in POD_LABELS:
        real += [{"matchExpressions": [b.exists(key)]}, {"matchExpressions": [b.does_not_exist(key)]}]
    real += [{"matchExpressions": [b.in_("app", "a", "b")]}, {"matchExpressions": [b.in_("tier", "y")]},
             {"matchExpressions": [b.not_in("app", "a")]}, {"matchExpressions": [b.not_in("tier", "x", "y")]},
             {"matchExpressions": [b.in_("foo", "1"), b.not_in("app", "b")]},
             {"matchExpressions": [b.exists("app"), b.does_not_exist("foo")]},
             {"matchLabels": {"app": "a"}, "matchExpressions": [b.not_in("tier", "y")]},
             {"matchLabels": {"tier": "x"}, "matchExpressions": [b.exists("foo")]},
             {"matchExpressions": [b.in_("app", "x")]}]  # matches nothing in this alphabet
    return [{}, *real[:6], None, *real[6:14], {}, None, *real[14:], None, {}]


SELECTORS = _selector_pool()
labels_st = st.sampled_from(LABEL_SETS)
MATCH_LABEL_KEYS = (["app"], ["tier"], ["foo"], ["app", "tier"], ["tier", "foo"])

NS_LABEL_SETS = [{}, {"team": "t1"}, {"team": "t2"}, {"env": "prod"}, {"team": "t1", "env": "prod"},
                 {"team": "t2", "env": "prod"}]
ns_labels_st = st.sampled_from(NS_LABEL_SETS)
NS_SELECTORS = [{}, {"matchLabels": {"team": "t1"}}, {"matchLabels": {"team": "t2"}},
                {"matchExpressions": [b.exists("team")]}, {"matchExpressions": [b.does_not_exist("team")]},
                {"matchExpressions": [b.not_in("env", "prod")]}]
NAMESPACE_LISTS = [[], ["ns1"], ["ns2"], ["ns3"], ["ns9"], ["ns1", "ns2"], ["ns2", "ns3"], ["ns1", "ns9"]]


def term(d: Draws) -> Obj:
    """A PodAffinityTerm: own namespace, `namespaces` (maybe []), a namespaceSelector, or both."""
    out: Obj = {"topologyKey": d.choice(TOPOLOGY_KEY_CHOICES)}
    sel = d.choice(SELECTORS)
    if sel is not None:
        out["labelSelector"] = copy.deepcopy(sel)
    mode = d.integer(0, 5)
    if mode in (1, 3):
        out["namespaces"] = list(d.choice(NAMESPACE_LISTS))
    if mode in (2, 3):
        out["namespaceSelector"] = copy.deepcopy(d.choice(NS_SELECTORS))
    return out


WEIGHTS = (1, 2, 3, 7, 29, 50, 100)


def pod_affinity(d: Draws, max_terms: int) -> Obj:
    out: Obj = {}
    for part in ("podAffinity", "podAntiAffinity"):
        body: Obj = {}
        required = [term(d) for _ in range(d.integer(0, max_terms))]
        preferred = [{"weight": d.choice(WEIGHTS), "podAffinityTerm": term(d)}
                     for _ in range(d.integer(0, max_terms))]
        if required:
            body["requiredDuringSchedulingIgnoredDuringExecution"] = required
        if preferred:
            body["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
        if body or d.one_in(6):
            out[part] = body
    return out


TAINT_SETS = [[b.taint("dedicated", v, e)] for v in ("x", "y")
              for e in ("NoSchedule", "NoExecute", "PreferNoSchedule")]
TAINT_SETS += [[b.taint("dedicated", "x", "NoSchedule"), b.taint("other", "", "NoExecute")]]
TOLERATION_SETS = [
    [b.toleration("dedicated", "x", "NoSchedule")],
    [b.toleration("dedicated", "y", "")],
    [b.toleration("dedicated", operator="Exists")],
    [b.toleration(operator="Exists")],
    [b.toleration("dedicated", "x", "NoExecute"), b.toleration("other", operator="Exists")],
    [b.toleration("dedicated", "x", ""), b.toleration("dedicated", "y", "NoExecute")],
]


def node_object(d: Draws, name: str, names: Sequence[str]) -> Obj:
    labels: dict[str, str] = {}
    roll = d.integer(0, 19)
    if roll < 17:
        labels[HOSTNAME] = name
    elif roll == 17:
        labels[HOSTNAME] = d.choice(names)  # possibly another node's value
    zone = d.choice(("z1", "z2", "z3", "z1", "", None, None))
    if zone is not None:
        labels[ZONE] = zone
    region = d.choice(("r1", "r2", "r1", None))
    if region is not None:
        labels[REGION] = region
    rack = d.choice((None, None, None, "k1", "k2"))
    if rack is not None:
        labels[RACK] = rack
    disk = d.choice(("ssd", "hdd", None))
    if disk is not None:
        labels["disk"] = disk
    taints = copy.deepcopy(d.choice(TAINT_SETS)) if d.one_in(4) else []
    return b.node(name, labels, taints=taints)


@st.composite
def node_st(draw: st.DrawFn, name: str, names: Sequence[str]) -> Obj:
    return node_object(seeded(draw), name, names)


def existing_pod(d: Draws, name: str, node_names: Sequence[str], bound: bool | None = None) -> Obj:
    ns = d.choice(NAMESPACES)
    labels = dict(d.choice(LABEL_SETS))
    roll = d.integer(0, 19)
    if bound or (bound is None and roll < 17):
        node = d.choice(node_names)
    elif bound is None and roll == 18:
        node = "ghost"  # bound to a node the cluster does not know
    else:
        node = ""
    affinity = pod_affinity(d, 1) if d.one_in(3) else None
    pod = b.pod(name, ns, labels=labels, node=node, terminating=d.one_in(6),
                affinity=affinity or None)
    if node and bound is None and d.one_in(15):
        pod["status"]["phase"] = d.choice(("Succeeded", "Failed"))
    return pod


@st.composite
def existing_pod_st(draw: st.DrawFn, name: str, node_names: Sequence[str],
                    bound: bool | None = None) -> Obj:
    return existing_pod(seeded(draw), name, node_names, bound)


POLICIES = (None, None, "Honor", "Ignore")


def spread(d: Draws, own_labels: Mapping[str, str]) -> Obj:
    """A constraint; half the time selecting (some of) the pod's own labels, as workloads do."""
    when = d.choice((DNS, DNS, SA))
    c: Obj = {"maxSkew": d.choice((1, 1, 2, 3)), "topologyKey": d.choice(TOPOLOGY_KEY_CHOICES),
              "whenUnsatisfiable": when}
    sel = {"matchLabels": d.choice(_subsets(own_labels))} if d.boolean() \
        else copy.deepcopy(d.choice(SELECTORS))
    if sel is not None:
        c["labelSelector"] = sel
    if when == DNS and d.boolean():
        # minDomains matters when every domain already has a match and there are fewer
        # domains than it asks for: likelier over zones and regions than over hostnames.
        c["minDomains"] = d.choice((2, 3, 4, 5, 1))
        c["topologyKey"] = d.choice((ZONE, REGION, ZONE, HOSTNAME))
    if d.one_in(2):  # the rarer fields
        for field in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            policy = d.choice(POLICIES)
            if policy is not None:
                c[field] = policy
        if d.boolean():
            c["matchLabelKeys"] = list(d.choice(MATCH_LABEL_KEYS))
    return c


def _spread_key(c: Mapping[str, Any]) -> tuple[str, str]:
    return (c["topologyKey"], c["whenUnsatisfiable"])


def unique_by_key(constraints: list[Obj]) -> list[Obj]:
    """The first constraint of each (topologyKey, whenUnsatisfiable), as the API requires."""
    return list({_spread_key(c): c for c in reversed(constraints)}.values())[::-1]


def default_constraint(d: Draws) -> Obj:
    when = d.choice((DNS, SA))
    c: Obj = {"maxSkew": d.integer(1, 3), "whenUnsatisfiable": when,
              "topologyKey": d.choice((HOSTNAME, ZONE, REGION))}
    if when == DNS and d.one_in(3):
        c["minDomains"] = d.integer(1, 4)
    for field in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        policy = d.choice(POLICIES)
        if policy is not None:
            c[field] = policy
    return c


def pts_args(d: Draws) -> Obj:
    kind = d.integer(0, 2)
    if kind == 0:
        return {}  # defaultingType: System
    if kind == 1:
        return {"defaultingType": "List"}
    return {"defaultingType": "List", "defaultConstraints": unique_by_key(
        [default_constraint(d) for _ in range(d.integer(1, 2))])}


def ipa_args(d: Draws) -> Obj:
    return {"hardPodAffinityWeight": d.choice((1, 0, 1, 2, 5)),
            "ignorePreferredTermsOfExistingPods": d.one_in(4)}


NODE_EXPRESSIONS = [{"key": key, "operator": "In", "values": [v]}
                    for key, values in NODE_VALUES.items() for v in values]
NODE_EXPRESSIONS += [{"key": "disk", "operator": "NotIn", "values": ["hdd"]},
                     {"key": ZONE, "operator": "NotIn", "values": ["z1", "z2"]},
                     {"key": ZONE, "operator": "In", "values": ["z2", "z3"]},
                     b.exists("disk"), b.does_not_exist(REGION), b.exists(ZONE)]


def node_affinity(d: Draws, node_names: Sequence[str]) -> Obj:
    terms = []
    for _ in range(d.integer(1, 2)):
        out: Obj = {"matchExpressions": [copy.deepcopy(d.choice(NODE_EXPRESSIONS))
                                         for _ in range(d.integer(1, 2))]}
        if d.one_in(5):
            out["matchFields"] = [{"key": "metadata.name", "operator": d.choice(("In", "NotIn")),
                                   "values": [d.choice(node_names)]}]
        terms.append(out)
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}


OWNERS = (
    b.owner("ReplicaSet", "rs1"), b.owner("ReplicaSet", "rs2"), b.owner("StatefulSet", "ss1"),
    b.owner("ReplicationController", "rc1", api_version="v1"), b.owner("Job", "job1", api_version="batch/v1"),
)


def incoming_pod(d: Draws, node_names: Sequence[str]) -> Obj:
    ns = d.choice(NAMESPACES)
    labels = dict(d.choice(LABEL_SETS))
    constraints = [] if d.one_in(3) else unique_by_key(
        [spread(d, labels) for _ in range(d.integer(1, 2))])
    affinity: Obj = pod_affinity(d, 2) if d.integer(0, 3) > 0 else {}
    if d.one_in(4):
        affinity["nodeAffinity"] = node_affinity(d, node_names)
    node_selector = d.choice((None, None, None, {"disk": "ssd"}, {REGION: "r1"}))
    tolerations = copy.deepcopy(d.choice(TOLERATION_SETS)) if d.one_in(3) else None
    owner = copy.deepcopy(d.choice(OWNERS)) if d.boolean() else None
    return b.pod("incoming", ns, labels=labels, spread=constraints or None,
                 affinity=affinity or None, node_selector=dict(node_selector) if node_selector else None,
                 tolerations=tolerations, owner=owner)


@dataclass
class Scenario:
    objects: list[Obj]
    pod: Obj
    pts_args: Obj
    ipa_args: Obj
    #: Other pending pods, judged on the same cluster state before (and between) the checks of
    #: `pod`: the state's memos then hold entries for other pods' placements and selectors.
    others: list[Obj]

    @property
    def pods(self) -> list[Obj]:
        return [*self.others, self.pod]

    @property
    def node_names(self) -> list[str]:
        return [o["metadata"]["name"] for o in self.objects if o["kind"] == "Node"]


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    """The incoming pod is drawn first: half the existing pods share its namespace, and half
    the Services and controllers select (a subset of) its labels, so that counts, skews and
    default selectors are not mostly empty. Existing pods often share the (anti-)affinity of a
    workload template, as a Deployment's pods do (equal terms, sometimes with other weights).
    The sizes are Hypothesis's draws (they shrink), the rest `tests.seeded`'s."""
    names = tuple(f"n{i}" for i in range(draw(st.integers(3, 8))))
    pod_count = draw(st.one_of(st.integers(0, 25), st.integers(10, 25)))
    other_count = draw(st.integers(0, 2))
    d = seeded(draw)
    nodes = [node_object(d, name, names) for name in names]
    pod = incoming_pod(d, names)
    home = pod["metadata"]["namespace"]
    own = _subsets(pod["metadata"].get("labels") or {})
    namespaces = [b.namespace(ns, dict(d.choice(NS_LABEL_SETS))) for ns in NAMESPACES
                  if not d.one_in(4)]
    templates = [pod_affinity(d, 1) for _ in range(d.integer(0, 2))]
    pods = []
    for i in range(pod_count):
        existing = existing_pod(d, f"p{i}", names)
        if templates and d.boolean():
            affinity = copy.deepcopy(d.choice(templates))
            for part in affinity.values():
                for weighted in part.get("preferredDuringSchedulingIgnoredDuringExecution", ()):
                    if d.one_in(4):  # a rollout changing the weight
                        weighted["weight"] = d.choice(WEIGHTS)
            existing["spec"]["affinity"] = affinity
        if d.boolean():  # the same workload: the pod's namespace, and its labels
            existing["metadata"]["namespace"] = home
            existing["metadata"]["uid"] = f"uid-{home}-p{i}"
            if not d.one_in(3):
                existing["metadata"]["labels"] = dict(pod["metadata"].get("labels") or {})
        pods.append(existing)
    services = [b.service(f"svc{i}", home if d.boolean() else d.choice(NAMESPACES),
                          None if d.one_in(5) else dict(d.choice(own) if d.boolean()
                                                        else d.choice(LABEL_SETS)))
                for i in range(d.integer(0, 3))]
    controllers = []
    if d.boolean():
        def selector(ns: str) -> Obj | None:
            if ns == home and d.boolean():
                return {"matchLabels": dict(d.choice(own))}
            return copy.deepcopy(d.choice(SELECTORS))

        for ns in NAMESPACES:
            controllers.append(b.replica_set("rs1", ns, selector(ns)))
            controllers.append(b.stateful_set("ss1", ns, selector(ns)))
            controllers.append(b.replication_controller(
                "rc1", ns, None if d.one_in(4) else dict(d.choice(own))))
    others = []
    for i in range(other_count):
        other = incoming_pod(d, names)
        other["metadata"].update(name=f"other{i}", uid=f"uid-other{i}")
        others.append(other)
    return Scenario([*namespaces, *services, *controllers, *nodes, *pods], pod,
                    pts_args(d), ipa_args(d), others)


# ---- the engine's side ------------------------------------------------------------------------

_profiles: dict[str, Profile] = {}


def profile_for(filters: Sequence[str], scores: Sequence[str], pts_args: Obj, ipa_args: Obj) -> Profile:
    args = {PTS: pts_args, IPA: ipa_args}
    document = b.policy(filters=list(filters), scores=[(name, 1) for name in scores],
                        args={n: a for n, a in args.items() if n in (*filters, *scores)},
                        post_filters=[])
    key = json.dumps(document, sort_keys=True)
    found = _profiles.get(key)
    if found is None:
        found = _profiles[key] = build_profile(parse_policy(document, "<property>"))
    return found


def pod_view(pod: Obj, slim: bool = False) -> PodView:
    return PodView.from_k8s(k8s.convert(pod, k8s.Pod), slim=slim)


def status_key(status: Status | None) -> ref.StatusKey | None:
    if status is None:
        return None
    return (status.plugin, _CODES.get(status.code, status.code.name), tuple(status.reasons))


def placement(state: ClusterState) -> dict[str, list[str]]:
    return {name: sorted(info.pods) for name, info in state.nodes.items()}


def world_placement(world: ref.World) -> dict[str, list[str]]:
    return {name: sorted(p["metadata"]["uid"] for p in node.pods) for name, node in world.nodes.items()}


def spread_counts(fs: FilterState | None) -> list[dict[str, int]] | None:
    return None if fs is None else [dict(c) for c in fs.counts]  # type: ignore[attr-defined]


def affinity_counts(fs: FilterState | None) -> tuple[dict, dict, dict] | None:
    if fs is None:
        return None
    return (dict(fs.existing), dict(fs.affinity_counts), dict(fs.anti_counts))  # type: ignore[attr-defined]


def ref_affinity_counts(rs: ref.AffinityState | None) -> tuple[dict, dict, dict] | None:
    return None if rs is None else (dict(rs.existing), dict(rs.aff), dict(rs.anti_counts))


def ref_spread_counts(rs: ref.SpreadState | None) -> list[dict[str, int]] | None:
    return None if rs is None else [dict(c) for c in rs.counts]


def engine_scores(plugin: str, sc: Scenario, view: PodView, state: ClusterState,
                  infos: Sequence[NodeInfo]) -> list[int] | None:
    profile = profile_for([], [plugin], sc.pts_args, sc.ipa_args)
    scorer = profile.scorers[0][0]
    return scorer.score(CycleState(), view, infos, state)


def ref_scores(plugin: str, sc: Scenario, pod: Obj, world: ref.World,
               names: Sequence[str]) -> list[int] | None:
    candidates = [world.nodes[n] for n in names]
    if plugin == PTS:
        return ref.pts_scores(pod, world, sc.pts_args, candidates)
    return ref.ipa_scores(pod, world, sc.ipa_args, candidates)


def node_labels(infos: Iterable[NodeInfo]) -> list[tuple[str, Mapping[str, str]]]:
    return [(info.node.name, info.node.labels) for info in infos]


def warm_up(sc: Scenario, state: ClusterState) -> None:
    """Judge and score the other pending pods on `state` (its memos then hold their entries)."""
    profile = profile_for((PTS, IPA), [], sc.pts_args, sc.ipa_args)
    infos = list(state.nodes.values())
    for other in sc.others:
        view = pod_view(other)
        run_filters(profile, view, infos, state, prepare_filters(profile, view, state))
        for plugin in (PTS, IPA):
            engine_scores(plugin, sc, view, state, infos)


FILTER_SETS = ((PTS,), (IPA,), (PTS, IPA))


# ---- 1, 2: verdicts and scores against the reference ----------------------------------------

@_settings(150)
@given(scenarios())
def test_filters_match_reference(sc: Scenario) -> None:
    """Every pending pod of the scenario, one after the other on the same state."""
    state = cluster_from_objects(sc.objects)
    world = ref.world_from_objects(sc.objects)
    assert placement(state) == world_placement(world)
    infos = list(state.nodes.values())
    names = [info.name for info in infos]
    for pod in sc.pods:
        view = pod_view(pod)
        ref_pts = ref.pts_prefilter(pod, world, sc.pts_args)
        ref_ipa = ref.ipa_prefilter(pod, world)
        for plugins in FILTER_SETS:
            profile = profile_for(plugins, [], sc.pts_args, sc.ipa_args)
            expected = ref.filter_verdicts(pod, world, sc.pts_args, plugins, node_labels(infos))
            prepared = prepare_filters(profile, view, state)
            assert prepared.rejection is None
            if PTS in plugins:
                assert spread_counts(prepared.state.read(PTS)) == ref_spread_counts(ref_pts)
            if IPA in plugins:
                assert affinity_counts(prepared.state.read(IPA)) == ref_affinity_counts(ref_ipa)
            result = run_filters(profile, view, infos, state, prepared)  # filter_many, cold caches
            assert {n: status_key(result.statuses.get(n)) for n in names} == expected, plugins
            assert [i.name for i in result.passed] == [n for n in names if expected[n] is None]
            per_node = {info.name: status_key(node_fits(prepared, info)) for info in infos}
            assert per_node == expected, plugins
            # The row path (`engine.rows`: projections memoised per node row), twice.
            rows = state.table.rows(names)
            for _ in range(2):
                by_rows = filter_rows(profile, view, rows, state.table, state)
                assert {n: status_key(by_rows.statuses[c]) for n, c in
                        zip(names, by_rows.codes.tolist(), strict=True)} == expected, plugins


@_settings(150)
@given(scenarios(), st.data())
def test_scores_match_reference(sc: Scenario, data: st.DataObject) -> None:
    state = cluster_from_objects(sc.objects)
    world = ref.world_from_objects(sc.objects)
    for pod in sc.pods:
        view = pod_view(pod)
        names = data.draw(st.lists(st.sampled_from(sc.node_names), min_size=1, unique=True),
                          label="candidates")
        infos = [state.nodes[n] for n in names]
        for plugin in (PTS, IPA):
            assert engine_scores(plugin, sc, view, state, infos) == \
                ref_scores(plugin, sc, pod, world, names), plugin


@_settings(75)
@given(scenarios(), st.data())
def test_scores_are_normalised_raw_scores(sc: Scenario, data: st.DataObject) -> None:
    """`score` is `normalize(raw_scores(...))` (the split `explain` shows), PreScore's ignored
    candidates of PodTopologySpread passed through the cycle state."""
    state = cluster_from_objects(sc.objects)
    for pod in sc.pods:
        view = pod_view(pod)
        names = data.draw(st.lists(st.sampled_from(sc.node_names), min_size=1, unique=True),
                          label="candidates")
        infos = [state.nodes[n] for n in names]
        for plugin in (PTS, IPA):
            scorer = profile_for([], [plugin], sc.pts_args, sc.ipa_args).scorers[0][0]
            cycle = CycleState()
            raw = scorer.raw_scores(cycle, view, infos, state)
            expected = scorer.score(CycleState(), view, infos, state)
            if expected is None:
                assert raw is None, plugin
                continue
            assert raw is not None and len(raw) == len(infos), plugin
            assert scorer.normalize(list(raw), cycle) == expected, plugin


@_settings(75)
@given(scenarios())
def test_evaluate_matches_reference(sc: Scenario) -> None:
    """Filter then score, end to end: both plugins in kube-scheduler's order."""
    policy = b.policy(filters=[PTS, IPA], scores=[(PTS, 2), (IPA, 2)],
                      args={PTS: sc.pts_args, IPA: sc.ipa_args}, post_filters=[])
    ev = evaluate(sc.objects, sc.pod, policy)
    world = ref.world_from_objects(sc.objects)
    expected = ref.filter_verdicts(sc.pod, world, sc.pts_args, (PTS, IPA),
                                   [(n.name, n.labels) for n in world.nodes.values()])
    got = {name: None if s is None else (s["plugin"], s["code"], tuple(s["reasons"]))
           for name, s in ev.filter.items()}
    assert got == expected
    feasible = [n for n in world.nodes if expected[n] is None]
    for plugin in (PTS, IPA):
        want = ref_scores(plugin, sc, sc.pod, world, feasible) if feasible else None
        have = ev.scores.get(plugin)
        assert (None if have is None else [have[n] for n in feasible]) == want, plugin


# ---- 3: AddPod / RemovePod on a clone -------------------------------------------------------

@_settings(150)
@given(scenarios(), st.data())
def test_add_remove_pod_on_a_clone(sc: Scenario, data: st.DataObject) -> None:
    state = cluster_from_objects(sc.objects)
    warm_up(sc, state)
    world = ref.world_from_objects(sc.objects)
    view = pod_view(sc.pod)
    infos = list(state.nodes.values())
    profile = profile_for((PTS, IPA), [], sc.pts_args, sc.ipa_args)
    filters = prepare_filters(profile, view, state)
    before = {info.name: status_key(node_fits(filters, info)) for info in infos}
    counts_before = (spread_counts(filters.state.read(PTS)), affinity_counts(filters.state.read(IPA)))

    clone = filters.clone()
    if data.draw(st.booleans(), label="warm the clone's verdict caches"):
        for info in infos:
            node_fits(clone, info)
    bound = [(p, node) for node in world.nodes.values() for p in node.pods]
    remove = bool(bound) and data.draw(st.booleans(), label="remove")
    if remove:
        target, ref_node = data.draw(st.sampled_from(bound), label="victim")
        info = state.nodes[ref_node.name]
        moved = info.pods[target["metadata"]["uid"]]
        node_clone = info.clone()
        node_clone.remove_pod(moved)
        clone.remove_pod(moved, node_clone)
        after = [o for o in sc.objects if o is not target]
        delta = -1
    else:
        node_name = data.draw(st.sampled_from(sc.node_names), label="node")
        target = data.draw(existing_pod_st("added", sc.node_names, bound=True), label="added")
        target["spec"]["nodeName"] = node_name
        if data.draw(st.booleans(), label="same workload"):
            target["metadata"]["namespace"] = sc.pod["metadata"]["namespace"]
            target["metadata"]["labels"] = dict(sc.pod["metadata"].get("labels") or {})
        ref_node = world.nodes[node_name]
        moved = pod_view(target, slim=True)
        node_clone = state.nodes[node_name].clone()
        node_clone.add_pod(moved)
        clone.add_pod(moved, node_clone)
        after = [*sc.objects, target]
        delta = 1

    # InterPodAffinity: the rule of §3.3, which for a removal is a fresh PreFilter without it.
    ref_ipa = ref.ipa_prefilter(sc.pod, world)
    ref.ipa_update(ref_ipa, target, ref_node.labels, delta)
    ipa_clone = clone.state.read(IPA)
    assert affinity_counts(ipa_clone) == ref_affinity_counts(ref_ipa)
    for info in infos:
        got = None if ipa_clone is None else status_key(ipa_clone(info))
        assert got == ref.ipa_filter(ref_ipa, info.node.labels), info.name
    if remove:
        world_after = ref.world_from_objects(after)
        fresh = ref.ipa_prefilter(sc.pod, world_after)
        fresh_engine = prepare_filters(profile_for((IPA,), [], sc.pts_args, sc.ipa_args), view,
                                       cluster_from_objects(after))
        for info in infos:
            got = None if ipa_clone is None else status_key(ipa_clone(info))
            assert got == ref.ipa_filter(fresh, info.node.labels), info.name
            assert got == status_key(node_fits(fresh_engine, info)), info.name

    # PodTopologySpread: the per-constraint counts of §2.3's rule.
    ref_pts = ref.pts_prefilter(sc.pod, world, sc.pts_args)
    ref.pts_update(ref_pts, target, ref_node, delta)
    assert spread_counts(clone.state.read(PTS)) == ref_spread_counts(ref_pts)

    # The original pass is untouched.
    assert (spread_counts(filters.state.read(PTS)), affinity_counts(filters.state.read(IPA))) == counts_before
    assert {info.name: status_key(node_fits(filters, info)) for info in infos} == before


# ---- 4: incremental maintenance of the state -------------------------------------------------

def _obj_key(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    return (obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"])


_KIND_ORDER = {"Namespace": 0, "Service": 1, "ReplicaSet": 1, "StatefulSet": 1,
               "ReplicationController": 1, "Node": 2, "Pod": 3}


def _ordered(objects: Mapping[tuple, Obj]) -> list[Obj]:
    return sorted(objects.values(), key=lambda o: _KIND_ORDER[o["kind"]])


def _apply(state: ClusterState, objects: dict[tuple, Obj], obj: Obj) -> None:
    objects[_obj_key(obj)] = obj
    state.apply(obj["kind"], k8s.convert(obj, registry.KINDS[obj["kind"]]))


def _delete(state: ClusterState, objects: dict[tuple, Obj], key: tuple[str, str, str]) -> None:
    del objects[key]
    state.delete(*key)


def _probe(sc: Scenario, pod: Obj, state: ClusterState) -> Any:
    """Everything the engine answers for `pod`: PreFilter states, verdicts, scores."""
    profile = profile_for((PTS, IPA), [], sc.pts_args, sc.ipa_args)
    view = pod_view(pod)
    prepared = prepare_filters(profile, view, state)
    infos = list(state.nodes.values())
    verdicts = {info.name: status_key(node_fits(prepared, info)) for info in infos}
    batch = run_filters(profile, view, infos, state, prepare_filters(profile, view, state))
    assert {n: status_key(batch.statuses.get(n)) for n in verdicts} == verdicts
    scores = {plugin: engine_scores(plugin, sc, view, state, infos) for plugin in (PTS, IPA)}
    return (spread_counts(prepared.state.read(PTS)), affinity_counts(prepared.state.read(IPA)),
            verdicts, scores)


@_settings(100)
@given(scenarios(), st.data())
def test_incremental_state_matches_fresh(sc: Scenario, data: st.DataObject) -> None:
    state = cluster_from_objects(sc.objects)
    objects = {_obj_key(o): o for o in sc.objects}
    for pod in sc.pods:
        _probe(sc, pod, state)
    known_nodes = list(sc.node_names)
    fresh_names = iter(range(10_000))
    for _ in range(data.draw(st.integers(1, 12), label="steps")):
        pods = [k for k in objects if k[0] == "Pod"]
        nodes = [k for k in objects if k[0] == "Node"]
        op = data.draw(st.sampled_from(("add", "add", "relabel", "terminate", "delete", "bind",
                                        "finish", "node", "node", "node_delete", "node_add",
                                        "namespace")), label="op")
        if op == "add" or (not pods and op in ("relabel", "terminate", "delete", "bind", "finish")):
            pod = data.draw(existing_pod_st(f"new{next(fresh_names)}", known_nodes), label="pod")
            _apply(state, objects, pod)
        elif op in ("relabel", "terminate", "delete", "finish"):
            key = data.draw(st.sampled_from(pods), label="pod")
            if op == "delete":
                _delete(state, objects, key)
                continue
            pod = copy.deepcopy(objects[key])
            if op == "relabel":
                pod["metadata"]["labels"] = data.draw(labels_st, label="labels")
            elif op == "terminate":
                pod["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
            else:
                pod["status"]["phase"] = data.draw(st.sampled_from(("Succeeded", "Failed")))
            _apply(state, objects, pod)
        elif op == "bind":
            pending = [k for k in pods if not objects[k]["spec"].get("nodeName")]
            if pending:
                pod = copy.deepcopy(objects[data.draw(st.sampled_from(pending), label="pending")])
                pod["spec"]["nodeName"] = data.draw(st.sampled_from(known_nodes), label="node")
                pod["status"]["phase"] = "Running"
                _apply(state, objects, pod)
        elif op == "node" and nodes:
            name = data.draw(st.sampled_from(nodes), label="node")[2]
            _apply(state, objects, data.draw(node_st(name, known_nodes), label="node object"))
        elif op == "node_delete" and len(nodes) > 1:
            _delete(state, objects, data.draw(st.sampled_from(nodes), label="node"))
        elif op == "node_add":
            missing = [n for n in known_nodes if ("Node", "", n) not in objects]
            name = data.draw(st.sampled_from(missing), label="node") if missing and data.draw(
                st.booleans()) else f"m{next(fresh_names)}"
            if name not in known_nodes:
                known_nodes.append(name)
            _apply(state, objects, data.draw(node_st(name, known_nodes), label="node object"))
        elif op == "namespace":
            ns = data.draw(st.sampled_from(NAMESPACES), label="namespace")
            _apply(state, objects, b.namespace(ns, data.draw(ns_labels_st, label="ns labels")))
        if data.draw(st.booleans(), label="probe"):
            _probe(sc, data.draw(st.sampled_from(sc.pods), label="probed pod"), state)

    final = _ordered(objects)
    fresh = cluster_from_objects(final)
    world = ref.world_from_objects(final)
    assert placement(state) == placement(fresh) == world_placement(world)
    names = list(state.nodes)
    for pod in sc.pods:
        incremental = _probe(sc, pod, state)
        assert incremental == _probe(sc, pod, fresh)
        # ... and both are the reference's.
        expected = ref.filter_verdicts(pod, world, sc.pts_args, (PTS, IPA),
                                       [(n, world.nodes[n].labels) for n in names])
        assert incremental[0] == ref_spread_counts(ref.pts_prefilter(pod, world, sc.pts_args))
        assert incremental[1] == ref_affinity_counts(ref.ipa_prefilter(pod, world))
        assert incremental[2] == expected
        assert incremental[3] == {p: ref_scores(p, sc, pod, world, names) for p in (PTS, IPA)}


# ---- 5: filter_many against __call__ ------------------------------------------------------------

def _check_many_vs_each(fs: FilterState, nodes: Sequence[NodeInfo], warm: Sequence[NodeInfo],
                        expected: Mapping[str, ref.StatusKey | None] | None) -> None:
    for node in warm:
        fs(node)
    statuses: dict[str, Status] = {}
    kept = fs.filter_many(nodes, statuses)
    each = [status_key(fs(node)) for node in nodes]
    assert [n.name for n in kept] == [n.name for n, s in zip(nodes, each, strict=True) if s is None]
    assert {n: status_key(s) for n, s in statuses.items()} == \
        {n.name: s for n, s in zip(nodes, each, strict=True) if s is not None}
    if expected is not None:
        assert {n.name: s for n, s in zip(nodes, each, strict=True)} == \
            {n.name: expected[n.name] for n in nodes}


@_settings(100)
@given(scenarios(), st.data())
def test_filter_many_matches_per_node(sc: Scenario, data: st.DataObject) -> None:
    state = cluster_from_objects(sc.objects)
    warm_up(sc, state)
    world = ref.world_from_objects(sc.objects)
    view = pod_view(sc.pod)
    foreign = [NodeInfo(NodeView.from_k8s(k8s.convert(
        data.draw(node_st(f"f{i}", sc.node_names), label="foreign node"), k8s.Node)))
        for i in range(data.draw(st.integers(0, 2), label="foreign nodes"))]
    pool = [*state.nodes.values(), *foreign]
    nodes = data.draw(st.lists(st.sampled_from(pool), max_size=12), label="nodes")
    bound = [(p, node) for node in world.nodes.values() for p in node.pods]
    for plugin in (PTS, IPA):
        profile = profile_for((plugin,), [], sc.pts_args, sc.ipa_args)
        expected = ref.filter_verdicts(sc.pod, world, sc.pts_args, (plugin,), node_labels(pool))
        for _ in range(2):  # a fresh FilterState per warming order
            fs = prepare_filters(profile, view, state).state.read(plugin)
            if fs is None:
                assert all(v is None for v in expected.values())
                break
            warm = data.draw(st.lists(st.sampled_from(pool), max_size=6), label="warm")
            _check_many_vs_each(fs, nodes, warm, expected)
        if fs is None or not bound:
            continue
        # After RemovePod/AddPod on a clone (verdict caches must follow the counts).
        clone = fs.clone()
        target, ref_node = data.draw(st.sampled_from(bound), label="pod")
        moved = state.nodes[ref_node.name].pods[target["metadata"]["uid"]]
        delta = data.draw(st.sampled_from((-1, 1)), label="delta")
        (clone.remove_pod if delta < 0 else clone.add_pod)(moved, state.nodes[ref_node.name])
        if plugin == IPA:
            rs = ref.ipa_prefilter(sc.pod, world)
            ref.ipa_update(rs, target, ref_node.labels, delta)
            after = {name: ref.ipa_filter(rs, labels) for name, labels in node_labels(pool)}
        else:
            after = None  # critical paths are only approximately maintained upstream
        warm = data.draw(st.lists(st.sampled_from(pool), max_size=6), label="warm")
        _check_many_vs_each(clone, nodes, warm, after)
        _check_many_vs_each(fs, nodes, [], expected)  # the original is untouched
