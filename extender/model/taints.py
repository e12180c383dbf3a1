"""Taints and tolerations, with `v1.Toleration.ToleratesTaint` semantics."""

from __future__ import annotations

from typing import NamedTuple

from extender.model.names import parse_int64

NO_SCHEDULE = "NoSchedule"
NO_EXECUTE = "NoExecute"
PREFER_NO_SCHEDULE = "PreferNoSchedule"

UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"


class Taint(NamedTuple):
    key: str
    value: str
    effect: str


class Toleration(NamedTuple):
    key: str
    operator: str
    value: str
    effect: str

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        op = self.operator
        if op == "Exists":
            return True
        if op in ("", "Equal"):
            return self.value == taint.value
        if op in ("Lt", "Gt"):
            taint_value, toleration_value = parse_int64(taint.value), parse_int64(self.value)
            if taint_value is None or toleration_value is None:
                return False
            return taint_value < toleration_value if op == "Lt" else taint_value > toleration_value
        return False


def tolerates_any(tolerations: tuple[Toleration, ...], taint: Taint) -> bool:
    return any(t.tolerates(taint) for t in tolerations)


UNSCHEDULABLE_TAINT = Taint(UNSCHEDULABLE_TAINT_KEY, "", NO_SCHEDULE)
