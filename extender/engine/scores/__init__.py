"""Score plugins, one module each, under their in-tree names (map, then normalise, 0..100)."""

from __future__ import annotations

from extender.engine import args
from extender.engine.registry import SCORES, PluginSpec
from extender.engine.scores.balanced_allocation import NodeResourcesBalancedAllocation
from extender.engine.scores.image_locality import ImageLocality
from extender.engine.scores.node_affinity import NodeAffinity
from extender.engine.scores.node_resources_fit import NodeResourcesFit
from extender.engine.scores.pod_state import PodState
from extender.engine.scores.taint_toleration import TaintToleration

REGISTRY: dict[str, PluginSpec] = {
    "NodeResourcesFit": PluginSpec(args.NodeResourcesFitArgs, NodeResourcesFit),
    "NodeResourcesBalancedAllocation": PluginSpec(args.NodeResourcesBalancedAllocationArgs,
                                                  NodeResourcesBalancedAllocation),
    "ImageLocality": PluginSpec(args.NoArgs, ImageLocality),
    "TaintToleration": PluginSpec(args.NoArgs, TaintToleration),
    "NodeAffinity": PluginSpec(args.NoArgs, NodeAffinity),
    "PodState": PluginSpec(args.NoArgs, PodState),
}

# The registry merges REGISTRY when it is imported first. When this package is imported first
# (say, `import extender.engine.scores.normalize`), the registry's merge runs while this module
# is half-built and is skipped, so merge here too; both merges insert the same objects.
SCORES.update(REGISTRY)

__all__ = ["REGISTRY"]
