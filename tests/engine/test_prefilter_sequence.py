"""PreFilter in the profile's order, as kube-scheduler's `RunPreFilterPlugins` (kubernetes
v1.34.4 `pkg/scheduler/framework/runtime/framework.go`): a plugin answering
UnschedulableAndUnresolvable ends PreFilter — the plugins after it do not run and keep no
state —, after an Unschedulable the others still run and the last Unschedulable is the pod's
status. Found replaying on the real kube-scheduler: a pod Coscheduling rejects for missing
siblings leaves the plugins after it without their PreFilter state."""

from __future__ import annotations

from extender.engine.cluster import ClusterState
from extender.engine.framework import Code, CycleState, Profile, Status
from extender.engine.runner import prepare_filters
from tests.engine.filter_helpers import pod


class _PreFilter:
    """A cross-node filter plugin whose PreFilter answers `status` (None: passes, with
    state), recording that it ran."""

    def __init__(self, name: str, code: Code | None, ran: list[str]) -> None:
        self.name, self.code, self.ran = name, code, ran

    def pre_filter(self, state: CycleState, pod, ctx) -> object:  # noqa: ANN001
        self.ran.append(self.name)
        if self.code is None:
            return lambda node: None
        return Status(self.code, (f"{self.name} says no",), self.name)


def _run(*plugins: tuple[str, Code | None]) -> tuple[Status | None, list[str], list[str]]:
    ran: list[str] = []
    profile = Profile(tuple(_PreFilter(n, c, ran) for n, c in plugins), (), None, None)
    prepared = prepare_filters(profile, pod("p"), ClusterState())
    written = [n for n, _ in plugins if prepared.state.read(n) is not None]
    return prepared.rejection, ran, written


def test_unschedulable_lets_the_others_run_and_the_last_one_stands():
    rejection, ran, written = _run(("A", Code.UNSCHEDULABLE), ("B", None),
                                   ("C", Code.UNSCHEDULABLE), ("D", None))
    assert ran == ["A", "B", "C", "D"]
    assert rejection is not None and rejection.reasons == ("C says no",)
    assert written == ["B", "D"]


def test_unschedulable_and_unresolvable_ends_prefilter():
    rejection, ran, written = _run(("A", Code.UNSCHEDULABLE), ("B", None),
                                   ("C", Code.UNSCHEDULABLE_AND_UNRESOLVABLE), ("D", None))
    assert ran == ["A", "B", "C"]  # D never runs: it keeps no state
    assert rejection is not None and rejection.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert rejection.reasons == ("C says no",)
    assert written == ["B"]


def test_every_plugin_passing_rejects_nothing():
    rejection, ran, written = _run(("A", None), ("B", None))
    assert (rejection, ran, written) == (None, ["A", "B"], ["A", "B"])
