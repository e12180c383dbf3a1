"""The prioritize fixture's numbers from the engine: LeastAllocated 31 and 71, wire [3, 7]."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from extender.engine.cluster import ClusterState
from extender.engine.framework import CycleState
from extender.engine.policy import load_policy
from extender.engine.profile import Profile, build_profile
from extender.engine.runner import extender_scores, run_scores
from extender.model import k8s
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.state.snapshot import load_snapshot

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_bytes())


@pytest.fixture(scope="module")
def setting() -> tuple[Profile, PodView, list[NodeInfo], ClusterState]:
    state = load_snapshot(ROOT / "config" / "examples" / "cluster.json")
    request = fixture("prioritize-names.request.json")
    pod = PodView.from_k8s(k8s.convert(request["Pod"], k8s.Pod))
    nodes = [state.nodes[name] for name in request["NodeNames"]]
    profile = build_profile(load_policy(FIXTURES / "policy-leastallocated.json"))
    return profile, pod, nodes, state


def expected_wire() -> list[int]:
    return [entry["Score"] for entry in fixture("prioritize-leastallocated.expected.json")]


def test_policy_least_allocated_gives_31_and_71_and_wire_3_and_7(setting):
    profile, pod, nodes, state = setting
    assert [n.name for n in nodes] == ["worker-a1", "worker-a2"]
    # The policy's own NodeResourcesFit, built through the registry from its pluginConfig.
    fit = next(plugin for plugin, _ in profile.scorers if plugin.name == "NodeResourcesFit")
    assert fit.score(CycleState(), pod, nodes, state) == [31, 71]  # (12 + 50) / 2 and (62 + 81) / 2
    only_fit = dataclasses.replace(profile, scorers=((fit, 1),))
    results = run_scores(only_fit, pod, nodes, state)
    assert extender_scores(results, len(nodes)) == [3, 7] == expected_wire()


def test_fixture_policy_profile_gives_the_expected_reply(setting):
    profile, pod, nodes, state = setting
    results = run_scores(profile, pod, nodes, state)
    assert extender_scores(results, len(nodes)) == expected_wire()
