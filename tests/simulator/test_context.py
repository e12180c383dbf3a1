"""The simulator's ClusterContext offers everything the engine's plugins read from a context,
as the extender's ClusterState does: every member of the `ClusterContext` protocol (a member
missing from one of them once switched a plugin's input off in the simulator only:
TargetLoadPacking's recent binds, NodeResourceTopologyMatch's reports, NetworkOverhead's
unplaced pods; the plugins' own data now comes through `store`), and plugins read no member
the protocol does not declare."""

from __future__ import annotations

import re
from pathlib import Path

from extender.engine.cluster import ClusterState
from extender.engine.framework import ClusterContext
from extender.engine.plugins.node_resource_topology.store import TopologyStore
from extender.engine.plugins.trimaran.store import TrimaranStore
from extender.simulator.context import SimContext

ENGINE = Path(__file__).resolve().parents[2] / "extender" / "engine"


def _protocol_members() -> set[str]:
    return {name for name in vars(ClusterContext)
            if not name.startswith("_") and name not in ("mro",)}


def test_both_contexts_have_every_member_of_the_protocol() -> None:
    members = _protocol_members()
    assert {"store", "unplaced_pods", "clock"} <= members
    assert sorted(name for name in members if not hasattr(SimContext, name)) == []
    assert sorted(name for name in members if not hasattr(ClusterState(), name)) == []


def test_no_plugin_looks_a_context_member_up_by_name() -> None:
    found = {str(path.relative_to(ENGINE)): re.findall(r"getattr\(ctx\b", path.read_text())
             for path in ENGINE.rglob("*.py")}
    assert {path: hits for path, hits in found.items() if hits} == {}


def test_the_members_read_the_simulated_state() -> None:
    class Sim:
        state = ClusterState()

    ctx = SimContext(Sim())
    assert ctx.store(TrimaranStore) is Sim.state.store(TrimaranStore)
    assert ctx.store(TopologyStore).node_topology("n1") is None
    assert ctx.unplaced_pods() == []
