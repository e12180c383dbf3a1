"""What filtering and scoring share: the constraints a pod is spread by, node inclusion, and
counting the pods a constraint's selector matches."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from extender.engine.args import DefaultSpreadConstraint, PodTopologySpreadArgs
from extender.engine.filters.node_affinity import matches as matches_required_affinity
from extender.engine.filters.taint_toleration import first_untolerated
from extender.engine.framework import ClusterContext
from extender.model import k8s
from extender.model.node import NodeView
from extender.model.pod import PodView
from extender.model.selectors import Selector, label_selector, selector_from_set

NAME = "PodTopologySpread"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE: Final = "DoNotSchedule"
SCHEDULE_ANYWAY: Final = "ScheduleAnyway"
HONOR = "Honor"

REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
REASON_NODE_LABEL_NOT_MATCH = REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

#: `defaultingType: System`: soft only, so they never filter.
SYSTEM_DEFAULT_CONSTRAINTS = (
    DefaultSpreadConstraint(maxSkew=3, topologyKey=HOSTNAME, whenUnsatisfiable=SCHEDULE_ANYWAY),
    DefaultSpreadConstraint(maxSkew=5, topologyKey=ZONE, whenUnsatisfiable=SCHEDULE_ANYWAY),
)

_CONTROLLER_KINDS = {("v1", "ReplicationController"), ("apps/v1", "ReplicaSet"),
                     ("apps/v1", "StatefulSet")}


@dataclass(frozen=True, slots=True)
class Constraint:
    """One constraint as the plugin uses it (`topologySpreadConstraint`)."""

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int
    honor_affinity: bool  # nodeAffinityPolicy: Honor (the default)
    honor_taints: bool  # nodeTaintsPolicy: Honor (default Ignore)


def _convert(source: Sequence[k8s.TopologySpreadConstraint | DefaultSpreadConstraint],
             pod_labels: Mapping[str, str], action: str) -> list[Constraint]:
    """`filterTopologySpreadConstraints`: the constraints of one action, with `matchLabelKeys`
    merged into the selector. Raises InvalidSelector for an invalid label selector."""
    constraints = []
    for c in source:
        if c.when_unsatisfiable != action:
            continue
        if isinstance(c, DefaultSpreadConstraint):
            selector = label_selector(None)
            keys: Sequence[str] = ()
        else:
            selector = label_selector(c.label_selector)
            keys = c.match_label_keys or ()
        extra = {key: pod_labels[key] for key in keys if key in pod_labels}
        if extra:
            selector = selector_from_set(extra).and_(selector)
        constraints.append(Constraint(
            c.max_skew, c.topology_key, selector, c.min_domains or 1,
            (c.node_affinity_policy or HONOR) == HONOR, (c.node_taints_policy or "Ignore") == HONOR))
    return constraints


def default_selector(pod: PodView, ctx: ClusterContext) -> Selector:
    """`helper.DefaultSelector`: the selectors of the Services selecting the pod, merged with
    its controller's (ReplicationController: merged as labels; ReplicaSet and StatefulSet:
    their requirements added)."""
    merged: dict[str, str] = {}
    for service in ctx.services_in(pod.namespace):
        if selector_from_set(service).matches(pod.labels):
            merged.update(service)
    selector = selector_from_set(merged)
    owner = pod.controller_ref
    if owner is None or (owner[0], owner[1]) not in _CONTROLLER_KINDS:
        return selector
    found = ctx.controller_selector(owner[1], pod.namespace, owner[2])
    if found is None:
        return selector
    if owner[1] == "ReplicationController":
        merged.update(found)  # type: ignore[call-overload]
        return selector_from_set(merged)
    try:
        other = label_selector(found)  # type: ignore[arg-type]
    except ValueError:
        return selector
    if other.nothing:
        return selector
    return selector.and_(other)


def constraints_for(pod: PodView, action: str, args: PodTopologySpreadArgs,
                    ctx: ClusterContext) -> list[Constraint]:
    """The pod's own constraints of `action`; without any, the defaults with the selector of
    the pod's Services and controller (none when nothing selects the pod)."""
    if pod.spread_constraints:
        return _convert(pod.spread_constraints, pod.labels, action)
    defaults = (SYSTEM_DEFAULT_CONSTRAINTS if args.defaulting_type == "System"
                else args.default_constraints)
    constraints = _convert(defaults, pod.labels, action)
    if not constraints:
        return []
    selector = default_selector(pod, ctx)
    if selector.empty:
        return []
    return [Constraint(c.max_skew, c.topology_key, selector, c.min_domains, c.honor_affinity,
                       c.honor_taints) for c in constraints]


def has_all_keys(labels: Mapping[str, str], constraints: Sequence[Constraint]) -> bool:
    for c in constraints:
        if c.topology_key not in labels:
            return False
    return True


def included(c: Constraint, pod: PodView, node: NodeView) -> bool:
    """`matchNodeInclusionPolicies`: the pod's required node affinity and nodeSelector (Honor),
    its tolerations of NoSchedule/NoExecute taints (Honor)."""
    if c.honor_affinity and not matches_required_affinity(pod, node.labels, node.name):
        return False
    if c.honor_taints and first_untolerated(node.taints, pod.tolerations) is not None:
        return False
    return True


def count_matching(pods: Mapping[str, PodView] | Sequence[PodView], selector: Selector,
                   namespace: str) -> int:
    """`countPodsMatchSelector`: live pods of the namespace the selector matches (an empty
    selector counts none)."""
    if selector.empty:
        return 0
    values = pods.values() if isinstance(pods, Mapping) else pods
    return sum(1 for p in values
               if not p.terminating and p.namespace == namespace and selector.matches(p.labels))


def counts_by_node(ctx: ClusterContext, selector: Selector, namespace: str) -> Counter[str]:
    """`count_matching` for every node at once, from the cluster's pod index."""
    if selector.empty:
        return Counter()
    return ctx.pod_index.count_by_node(namespace, selector, include_terminating=False)
