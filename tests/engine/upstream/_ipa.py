"""Helpers for the InterPodAffinity upstream tables (test_inter_pod_affinity_*.py).

Pod (anti-)affinity terms as Kubernetes dicts, after kube-scheduler's `st.MakePod()` wrappers
(`PodAffinityIn`, `PodAntiAffinityExists`, ...), existing and incoming pods, the expected
statuses, and one `run` that calls the public `evaluate` API.

Upstream's tables leave most pods unnamed and in the empty namespace (`defaultNamespace = ""`,
`st.MakePod()` sets no namespace); the empty namespace is kept as is (it is significant in
TestPreferredAffinityWithHardPodAffinitySymmetricWeight, whose term lists `""` in `namespaces`),
and unnamed existing pods get distinct names `existing-<i>`, which no plugin reads.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

from tests.engine.upstream import builders as b

Obj = dict[str, Any]

PLUGIN = "InterPodAffinity"

#: upstream `defaultNamespace` (filtering_test.go) and `st.MakePod()`'s namespace.
DEFAULT_NS = ""

UNSCHEDULABLE = "Unschedulable"
UNRESOLVABLE = "UnschedulableAndUnresolvable"

# ErrReason* of filtering.go (modern: one reason per status).
AFFINITY_RULES = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY_RULES = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY_RULES = "node(s) didn't satisfy existing pods anti-affinity rules"


def status(code: str, *reasons: str) -> Obj:
    return {"plugin": PLUGIN, "code": code, "reasons": list(reasons)}


#: framework.NewStatus(UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch)
AFFINITY_FAIL = status(UNRESOLVABLE, AFFINITY_RULES)
#: framework.NewStatus(Unschedulable, ErrReasonAntiAffinityRulesNotMatch)
ANTI_FAIL = status(UNSCHEDULABLE, ANTI_AFFINITY_RULES)
#: framework.NewStatus(Unschedulable, ErrReasonExistingAntiAffinityRulesNotMatch)
EXISTING_FAIL = status(UNSCHEDULABLE, EXISTING_ANTI_AFFINITY_RULES)

#: PreFilter/PreScore Skip marker in the case tables.
SKIP = "Skip"


# ---- terms ---------------------------------------------------------------------------------
def term(label_selector: Obj | None = None, topology_key: str = "", *,
         namespaces: Sequence[str] | None = None, namespace_selector: Obj | None = None) -> Obj:
    """A `v1.PodAffinityTerm` (as Go serialises it: topologyKey always present)."""
    out: Obj = {}
    if label_selector is not None:
        out["labelSelector"] = label_selector
    if namespaces is not None:
        out["namespaces"] = list(namespaces)
    if namespace_selector is not None:
        out["namespaceSelector"] = namespace_selector
    out["topologyKey"] = topology_key
    return out


def sel(*expressions: Obj) -> Obj:
    """A label selector made of matchExpressions only."""
    return b.selector(None, *expressions)


# st.MakePod() wrapper equivalents: one term, one requirement.
def t_in(key: str, topology_key: str, values: Sequence[str]) -> Obj:
    return term(sel(b.in_(key, *values)), topology_key)


def t_not_in(key: str, topology_key: str, values: Sequence[str]) -> Obj:
    return term(sel(b.not_in(key, *values)), topology_key)


def t_exists(key: str, topology_key: str) -> Obj:
    return term(sel(b.exists(key)), topology_key)


def weighted(weight: int, pod_affinity_term: Obj) -> Obj:
    """A `v1.WeightedPodAffinityTerm`."""
    return {"weight": weight, "podAffinityTerm": pod_affinity_term}


def affinity(*, required: Iterable[Obj] = (), preferred: Iterable[Obj] = (),
             anti_required: Iterable[Obj] = (), anti_preferred: Iterable[Obj] = ()) -> Obj:
    """A `v1.Affinity` with podAffinity / podAntiAffinity; empty lists are left out."""
    out: Obj = {}
    pa: Obj = {}
    if required:
        pa["requiredDuringSchedulingIgnoredDuringExecution"] = list(required)
    if preferred:
        pa["preferredDuringSchedulingIgnoredDuringExecution"] = list(preferred)
    paa: Obj = {}
    if anti_required:
        paa["requiredDuringSchedulingIgnoredDuringExecution"] = list(anti_required)
    if anti_preferred:
        paa["preferredDuringSchedulingIgnoredDuringExecution"] = list(anti_preferred)
    if pa:
        out["podAffinity"] = pa
    if paa:
        out["podAntiAffinity"] = paa
    return out


# ---- pods and nodes ------------------------------------------------------------------------
def incoming(labels: dict[str, str] | None = None, *, ns: str = DEFAULT_NS,
             aff: Obj | None = None) -> Obj:
    """The pod being scheduled."""
    return b.pod("incoming", ns, labels=labels, affinity=aff or None)


def bound(node: str, labels: dict[str, str] | None = None, *, ns: str = DEFAULT_NS,
          aff: Obj | None = None, name: str = "") -> Obj:
    """An existing pod on `node` (unnamed unless upstream names it; `run` names it)."""
    return b.pod(name, ns, labels=labels, node=node, affinity=aff or None)


def node(name: str, labels: dict[str, str] | None = None) -> Obj:
    return b.node(name, labels)


def _named(pods: Sequence[Obj]) -> list[Obj]:
    out = []
    for i, p in enumerate(pods):
        p = copy.deepcopy(p)
        meta = p["metadata"]
        if not meta["name"]:
            meta["name"] = f"existing-{i}"
            meta["uid"] = f"uid-{meta['namespace']}-existing-{i}"
        out.append(p)
    return out


def filter_policy() -> Obj:
    return b.policy(filters=[PLUGIN], scores=[])


def score_policy(hard_pod_affinity_weight: int = 1, ignore_preferred: bool = False) -> Obj:
    return b.policy(filters=[], scores=[(PLUGIN, 1)],
                    args={PLUGIN: {"hardPodAffinityWeight": hard_pod_affinity_weight,
                                   "ignorePreferredTermsOfExistingPods": ignore_preferred}})


def run(pod: Obj, *, nodes: Sequence[Obj], pods: Sequence[Obj] = (),
        namespaces: Sequence[Obj] = (), policy: Obj) -> Any:
    """evaluate(objects, pod, policy): nodes, existing pods and Namespaces as the snapshot and
    the informers' view; every node is a candidate (as upstream filters/scores them all)."""
    from extender.engine import evaluate

    objects = [*copy.deepcopy(list(nodes)), *_named(pods), *copy.deepcopy(list(namespaces))]
    return evaluate(objects, copy.deepcopy(pod), policy=policy)
