"""PodDisruptionBudgets and PriorityClasses as preemption reads them."""

from __future__ import annotations

from collections.abc import Mapping

from extender.model import k8s
from extender.model.selectors import LabelSelectorMatcher


class PdbView:
    __slots__ = ("namespace", "name", "selector", "disruptions_allowed", "disrupted_pods")

    def __init__(self, pdb: k8s.PodDisruptionBudget) -> None:
        self.namespace = pdb.metadata.namespace
        self.name = pdb.metadata.name
        self.selector = LabelSelectorMatcher(pdb.spec.selector)
        self.disruptions_allowed = pdb.status.disruptions_allowed
        self.disrupted_pods = frozenset(pdb.status.disrupted_pods or ())

    def covers(self, namespace: str, name: str, labels: Mapping[str, str]) -> bool:
        """Whether this PDB guards the pod (and has not already counted it as disrupted)."""
        return (
            namespace == self.namespace
            and self.selector.matches(labels)
            and name not in self.disrupted_pods
        )


class PriorityClassView:
    __slots__ = ("name", "value", "global_default", "preemption_policy", "annotations")

    def __init__(self, pc: k8s.PriorityClass) -> None:
        self.name = pc.metadata.name
        self.value = pc.value
        self.global_default = pc.global_default
        self.preemption_policy = pc.preemption_policy or "PreemptLowerPriority"
        self.annotations: Mapping[str, str] = pc.metadata.annotations or {}
