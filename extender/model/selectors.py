"""Node selector terms and label selectors, compiled once into matchers.

Semantics follow `component-helpers/scheduling/corev1/nodeaffinity` and apimachinery's
`labels.Selector`: terms are ORed, requirements within a term ANDed; a term that fails to parse
or is empty matches nothing; `Gt`/`Lt` compare base-10 int64 values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from extender.model import k8s
from extender.model.names import (
    go_quote,
    is_label_value,
    is_qualified_name,
    label_value_errors,
    parse_int64,
    qualified_name_errors,
)

LabelPredicate = Callable[[Mapping[str, str]], bool]

class InvalidSelector(ValueError):
    pass


def requirement_errors(key: str, operator: str, values: Sequence[str]) -> list[str]:
    """`labels.NewRequirement`'s validation, with apimachinery's field-error wording."""
    errors = []
    key_errors = qualified_name_errors(key)
    if key_errors:
        errors.append(f"key: Invalid value: {go_quote(key)}: {'; '.join(key_errors)}")
    listed = "[]string{" + ", ".join(go_quote(v) for v in values) + "}"
    if operator in ("In", "NotIn") and not values:
        errors.append(f"values: Invalid value: {listed}: for 'in', 'notin' operators, "
                      "values set can't be empty")
    elif operator in ("Exists", "DoesNotExist") and values:
        errors.append(f"values: Invalid value: {listed}: values set must be empty for exists "
                      "and does not exist")
    elif operator in ("Gt", "Lt") and len(values) != 1:
        errors.append(f"values: Invalid value: {listed}: for 'Gt', 'Lt' operators, exactly "
                      "one value is required")
    for i, value in enumerate(values):
        value_errors = label_value_errors(value)
        if value_errors:
            errors.append(f"values[{i}][{key}]: Invalid value: {go_quote(value)}: "
                          f"{'; '.join(value_errors)}")
    return errors


def _requirement(key: str, operator: str, values: Sequence[str]) -> LabelPredicate:
    """`labels.NewRequirement`: the key must be a qualified name and every value a valid label
    value, or the requirement (and so its term) is invalid."""
    if not is_qualified_name(key) or not all(is_label_value(v) for v in values):
        errors = requirement_errors(key, operator, values)
        raise InvalidSelector(errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]")
    if operator == "In":
        if not values:
            raise InvalidSelector("In needs values")
        allowed = frozenset(values)
        return lambda labels: labels.get(key) in allowed
    if operator == "NotIn":
        if not values:
            raise InvalidSelector("NotIn needs values")
        denied = frozenset(values)
        return lambda labels: labels.get(key) not in denied
    if operator == "Exists":
        if values:
            raise InvalidSelector("Exists takes no values")
        return lambda labels: key in labels
    if operator == "DoesNotExist":
        if values:
            raise InvalidSelector("DoesNotExist takes no values")
        return lambda labels: key not in labels
    if operator in ("Gt", "Lt"):
        if len(values) != 1:
            raise InvalidSelector(f"{operator} needs exactly one value")
        bound = parse_int64(values[0])
        if bound is None:
            raise InvalidSelector(f"{operator} needs an integer value")
        greater = operator == "Gt"

        def compare(labels: Mapping[str, str]) -> bool:
            raw = labels.get(key)
            if raw is None:
                return False
            number = parse_int64(raw)
            if number is None:
                return False
            return number > bound if greater else number < bound

        return compare
    raise InvalidSelector(f"unknown operator {operator!r}")


class NodeTermMatcher:
    """One NodeSelectorTerm: all label requirements and all `metadata.name` field requirements."""

    __slots__ = ("label_predicates", "name_in", "name_not_in", "keys", "names_conflict")

    def __init__(self, term: k8s.NodeSelectorTerm) -> None:
        exprs = term.match_expressions or []
        fields = term.match_fields or []
        if not exprs and not fields:
            raise InvalidSelector("empty term")
        self.label_predicates = tuple(_requirement(r.key, r.operator, r.values or ()) for r in exprs)
        self.keys = frozenset(r.key for r in exprs)
        self.name_in: str | None = None
        self.name_not_in: list[str] = []
        self.names_conflict = False  # two different `metadata.name In` values: matches no node
        for req in fields:
            values = req.values or []
            if req.key != "metadata.name" or len(values) != 1 or req.operator not in ("In", "NotIn"):
                raise InvalidSelector("matchFields supports metadata.name In/NotIn with one value")
            if req.operator == "In":
                if self.name_in is not None and self.name_in != values[0]:
                    self.names_conflict = True
                self.name_in = values[0]
            else:
                self.name_not_in.append(values[0])

    def matches(self, labels: Mapping[str, str], name: str) -> bool:
        for predicate in self.label_predicates:
            if not predicate(labels):
                return False
        if name:
            if self.names_conflict:
                return False
            if self.name_in is not None and name != self.name_in:
                return False
            if name in self.name_not_in:
                return False
        return True

    @property
    def uses_name(self) -> bool:
        return self.name_in is not None or bool(self.name_not_in)


_NODE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def node_term_errors(term: k8s.NodeSelectorTerm, path: str) -> list[str]:
    """Why a node selector term does not parse, in apimachinery's words, each with its field
    path under `path` (e.g. `[0].matchExpressions[0].key: Invalid value: ...`)."""
    errors = []
    for j, req in enumerate(term.match_expressions or ()):
        where = f"{path}.matchExpressions[{j}]"
        if req.operator not in _NODE_OPERATORS:
            errors.append(f"{where}.operator: Unsupported value: {go_quote(req.operator)}")
            continue
        errors.extend(f"{where}.{e}" for e in requirement_errors(req.key, req.operator,
                                                                  req.values or ()))
    return errors


def compile_terms(terms: Sequence[k8s.NodeSelectorTerm] | None) -> tuple[NodeTermMatcher, ...]:
    """Compile terms; a term that does not parse is dropped (it can never match)."""
    compiled = []
    for term in terms or ():
        try:
            compiled.append(NodeTermMatcher(term))
        except InvalidSelector:
            continue
    return tuple(compiled)


class NodeSelectorMatcher:
    """A required node selector: any of its terms matches. No valid term → matches nothing."""

    __slots__ = ("terms", "keys", "uses_name")

    def __init__(self, selector: k8s.NodeSelector) -> None:
        self.terms = compile_terms(selector.node_selector_terms)
        self.keys = frozenset().union(*(t.keys for t in self.terms)) if self.terms else frozenset()
        self.uses_name = any(t.uses_name for t in self.terms)

    def matches(self, labels: Mapping[str, str], name: str) -> bool:
        return any(term.matches(labels, name) for term in self.terms)


class LabelSelectorMatcher:
    """A `metav1.LabelSelector` as PodDisruptionBudgets use it. Nil or empty → matches nothing."""

    __slots__ = ("predicates", "valid")

    def __init__(self, selector: k8s.LabelSelector | None) -> None:
        predicates: list[LabelPredicate] = []
        valid = selector is not None
        if selector is not None:
            for key, val in (selector.match_labels or {}).items():
                predicates.append(_requirement(key, "In", [val]))
            for req in selector.match_expressions or ():
                try:
                    predicates.append(_requirement(req.key, req.operator, req.values or ()))
                except InvalidSelector:
                    valid = False
        self.predicates = tuple(predicates)
        self.valid = valid and bool(predicates)

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if not self.valid or not labels:
            return False
        return all(p(labels) for p in self.predicates)


Requirement = tuple[str, str, tuple[str, ...]]  # (key, operator, values)


class Selector:
    """apimachinery's `labels.Selector` from `LabelSelectorAsSelector`: a nil selector matches
    nothing, an empty one everything. `key` names the requirements (equal keys, equal answers),
    so callers can memoise matches per selector."""

    __slots__ = ("requirements", "predicates", "nothing", "key")

    def __init__(self, requirements: Sequence[Requirement], nothing: bool = False) -> None:
        unique = tuple(sorted(set(requirements)))
        self.requirements = unique
        self.predicates = tuple(_requirement(k, op, values) for k, op, values in unique)
        self.nothing = nothing
        self.key: tuple = ("<nothing>",) if nothing else unique

    @property
    def empty(self) -> bool:
        """No requirement at all: matches every label set (`Selector.Empty()`)."""
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.nothing:
            return False
        labels = labels or {}
        for predicate in self.predicates:
            if not predicate(labels):
                return False
        return True

    def and_(self, other: Selector) -> Selector:
        if self.nothing or other.nothing:
            return NOTHING
        return Selector((*self.requirements, *other.requirements))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Selector) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        return f"Selector{self.key!r}"


NOTHING = Selector((), nothing=True)
EVERYTHING = Selector(())


def label_selector(selector: k8s.LabelSelector | None) -> Selector:
    """`metav1.LabelSelectorAsSelector`; raises InvalidSelector for an invalid requirement."""
    if selector is None:
        return NOTHING
    requirements: list[Requirement] = []
    for key, value in (selector.match_labels or {}).items():
        requirements.append((key, "In", (value,)))
    for req in selector.match_expressions or ():
        if req.operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            raise InvalidSelector(f"{req.operator!r} is not a valid label selector operator")
        requirements.append((req.key, req.operator, tuple(req.values or ())))
    if not requirements:
        return EVERYTHING
    return Selector(requirements)


def selector_from_set(labels: Mapping[str, str]) -> Selector:
    """`labels.SelectorFromSet`: equality on every key (empty set: everything)."""
    return Selector([(key, "In", (value,)) for key, value in labels.items()])
