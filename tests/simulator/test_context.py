"""The simulator's ClusterContext offers everything the engine's plugins read from a context,
as the extender's ClusterState does: a member missing here would silently switch a plugin's
input off in the simulator only (it did for TargetLoadPacking's recent binds,
NodeResourceTopologyMatch's reports and NetworkOverhead's unplaced pods)."""

from __future__ import annotations

import re
from pathlib import Path

from extender.engine.cluster import ClusterState
from extender.simulator.context import SimContext

ENGINE = Path(__file__).resolve().parents[2] / "extender" / "engine"


def _optional_members() -> set[str]:
    """The context members engine code looks up with `getattr(ctx, "name", ...)`."""
    found: set[str] = set()
    for path in ENGINE.rglob("*.py"):
        found.update(re.findall(r'getattr\(ctx, "(\w+)"', path.read_text()))
    return found


def test_the_simulators_context_has_every_member_the_engine_looks_up() -> None:
    members = _optional_members()
    assert {"assignments", "node_topology", "unplaced_pods", "quota_counted"} <= members
    missing = sorted(name for name in members if not hasattr(SimContext, name))
    assert missing == []
    assert sorted(name for name in members if not hasattr(ClusterState(), name)) == []


def test_the_members_read_the_simulated_state() -> None:
    class Sim:
        state = ClusterState()

    ctx = SimContext(Sim())
    assert ctx.assignments is Sim.state.assignments
    assert ctx.node_topology("n1") is None
    assert ctx.unplaced_pods() == []
