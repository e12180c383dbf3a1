"""Which plugins exist, at which extension point, and which arguments they take."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from extender.engine import args
from extender.engine.filters.node_affinity import NodeAffinity
from extender.engine.filters.node_name import NodeName
from extender.engine.filters.node_ports import NodePorts
from extender.engine.filters.node_resources_fit import NodeResourcesFit
from extender.engine.filters.node_unschedulable import NodeUnschedulable
from extender.engine.filters.taint_toleration import TaintToleration
from extender.engine.scores import balanced_allocation, image_locality, node_affinity, pod_state
from extender.engine.scores import node_resources_fit as fit_score
from extender.engine.scores import taint_toleration as taint_score


@dataclass(frozen=True)
class PluginSpec:
    """A plugin's arguments model and its factory (which receives the validated args)."""

    args_model: type[args._Args]
    factory: Callable[[Any], Any]


FILTERS: dict[str, PluginSpec] = {
    "NodeUnschedulable": PluginSpec(args.NoArgs, lambda a: NodeUnschedulable()),
    "NodeName": PluginSpec(args.NoArgs, lambda a: NodeName()),
    "TaintToleration": PluginSpec(args.NoArgs, lambda a: TaintToleration()),
    "NodeAffinity": PluginSpec(args.NoArgs, lambda a: NodeAffinity()),
    "NodePorts": PluginSpec(args.NoArgs, lambda a: NodePorts()),
    "NodeResourcesFit": PluginSpec(args.NodeResourcesFitArgs, NodeResourcesFit),
}

SCORES: dict[str, PluginSpec] = {
    "NodeResourcesFit": PluginSpec(args.NodeResourcesFitArgs, fit_score.NodeResourcesFit),
    "NodeResourcesBalancedAllocation": PluginSpec(
        args.NodeResourcesBalancedAllocationArgs, balanced_allocation.NodeResourcesBalancedAllocation),
    "ImageLocality": PluginSpec(args.NoArgs, image_locality.ImageLocality),
    "TaintToleration": PluginSpec(args.NoArgs, taint_score.TaintToleration),
    "NodeAffinity": PluginSpec(args.NoArgs, node_affinity.NodeAffinity),
    "PodState": PluginSpec(args.NoArgs, pod_state.PodState),
}

POST_FILTERS: dict[str, PluginSpec] = {
    "DefaultPreemption": PluginSpec(args.DefaultPreemptionArgs, lambda a: a),
    "PreemptionToleration": PluginSpec(args.DefaultPreemptionArgs, lambda a: a),
}

#: kube-scheduler's default plugins (v1 MultiPoint), restricted to those implemented here.
DEFAULT_FILTERS = ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
                   "NodePorts", "NodeResourcesFit")
DEFAULT_SCORES = (("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1),
                  ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1))
DEFAULT_POST_FILTERS = ("DefaultPreemption",)

EXTENSION_POINTS = {"filter": FILTERS, "score": SCORES, "postFilter": POST_FILTERS}

