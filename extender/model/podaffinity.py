"""Pod (anti-)affinity terms, compiled once per pod (kube-scheduler's `framework.AffinityTerm`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from extender.model import k8s
from extender.model.selectors import NOTHING, InvalidSelector, Selector, label_selector


class AffinityTerm:
    """One term: which pods it selects (labels), in which namespaces, over which topology key.

    `namespaces` defaults to the owning pod's namespace when neither `namespaces` nor a
    `namespaceSelector` is given; a nil `namespaceSelector` matches no namespace, an empty one
    every namespace."""

    __slots__ = ("selector", "namespaces", "namespace_selector", "topology_key", "weight")

    def __init__(self, selector: Selector, namespaces: frozenset[str], namespace_selector: Selector,
                 topology_key: str, weight: int = 0) -> None:
        self.selector = selector
        self.namespaces = namespaces
        self.namespace_selector = namespace_selector
        self.topology_key = topology_key
        self.weight = weight

    def matches(self, namespace: str, labels: Mapping[str, str] | None,
                namespace_labels: Mapping[str, str] | None) -> bool:
        """Whether a pod of `namespace` with `labels` is selected (`AffinityTerm.Matches`)."""
        if namespace not in self.namespaces and not self.namespace_selector.matches(namespace_labels):
            return False
        return self.selector.matches(labels)

    def in_namespace(self, namespace: str, namespace_labels: Mapping[str, str] | None) -> bool:
        return namespace in self.namespaces or self.namespace_selector.matches(namespace_labels)

    def resolved(self, namespaces: Mapping[str, Mapping[str, str]]) -> AffinityTerm:
        """The incoming pod's term with a non-empty namespace selector replaced by the names of
        the namespaces it selects (kube-scheduler resolves it once per cycle)."""
        sel = self.namespace_selector
        if sel.nothing or sel.empty:
            return self
        names = {name for name, labels in namespaces.items() if sel.matches(labels)}
        return AffinityTerm(self.selector, self.namespaces | names, NOTHING, self.topology_key,
                            self.weight)

    @property
    def key(self) -> tuple:
        return (self.selector.key, tuple(sorted(self.namespaces)), self.namespace_selector.key,
                self.topology_key, self.weight)

    def __repr__(self) -> str:
        return f"AffinityTerm({self.topology_key!r}, {self.selector!r}, ns={sorted(self.namespaces)})"


def _term(owner_namespace: str, term: k8s.PodAffinityTerm, weight: int = 0) -> AffinityTerm:
    selector = label_selector(term.label_selector)
    if not term.namespaces and term.namespace_selector is None:
        namespaces = frozenset((owner_namespace,))
    else:
        namespaces = frozenset(term.namespaces or ())
    return AffinityTerm(selector, namespaces, label_selector(term.namespace_selector),
                        term.topology_key, weight)


class PodAffinityTerms:
    """A pod's required and preferred affinity and anti-affinity terms. `error` is set when a
    term does not parse (kube-scheduler's `NewPodInfo` fails): such a pod is unschedulable, and
    as an existing pod its terms count for nothing."""

    __slots__ = ("required_affinity", "required_anti", "preferred_affinity", "preferred_anti",
                 "error")

    def __init__(self, namespace: str, affinity: k8s.PodAffinity | None,
                 anti: k8s.PodAffinity | None) -> None:
        errors: list[str] = []

        def parsed(what: str, build: Callable[[], tuple[AffinityTerm, ...]]) -> tuple[AffinityTerm, ...]:
            try:
                return build()
            except InvalidSelector as exc:
                errors.append(f"{what}: {exc}")
                return ()

        self.required_affinity = parsed("requiredAffinityTerms", lambda: _required(namespace, affinity))
        self.required_anti = parsed("requiredAntiAffinityTerms", lambda: _required(namespace, anti))
        self.preferred_affinity = parsed("preferredAffinityTerms",
                                         lambda: _preferred(namespace, affinity))
        self.preferred_anti = parsed("preferredAntiAffinityTerms", lambda: _preferred(namespace, anti))
        # utilerrors.NewAggregate: one error as it is, several in brackets.
        self.error = errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]" if errors else ""
        if errors:
            self.required_affinity = self.required_anti = ()
            self.preferred_affinity = self.preferred_anti = ()

    @property
    def any(self) -> bool:
        return bool(self.required_affinity or self.required_anti or self.preferred_affinity
                    or self.preferred_anti)

    @classmethod
    def of(cls, namespace: str, spec: k8s.PodSpec) -> PodAffinityTerms | None:
        affinity = spec.affinity
        if affinity is None or (affinity.pod_affinity is None and affinity.pod_anti_affinity is None):
            return None
        terms = cls(namespace, affinity.pod_affinity, affinity.pod_anti_affinity)
        return terms if terms.any or terms.error else None


def _required(namespace: str, affinity: k8s.PodAffinity | None) -> tuple[AffinityTerm, ...]:
    if affinity is None:
        return ()
    terms: Sequence[k8s.PodAffinityTerm] = affinity.required_during_scheduling_ignored_during_execution or ()
    return tuple(_term(namespace, t) for t in terms)


def _preferred(namespace: str, affinity: k8s.PodAffinity | None) -> tuple[AffinityTerm, ...]:
    if affinity is None:
        return ()
    weighted = affinity.preferred_during_scheduling_ignored_during_execution or ()
    return tuple(_term(namespace, w.pod_affinity_term, w.weight) for w in weighted)
