"""Shared fixtures: the demo cluster, the fixture policy, and the real app behind a test client."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from extender.api.app import create_app
from extender.api.runtime import Runtime
from extender.engine.cluster import ClusterState
from extender.engine.policy import load_policy
from extender.engine.profile import Profile, build_profile
from extender.state.binder import SnapshotBinder
from extender.state.snapshot import load_snapshot

pytest_plugins = ["tests.parallel"]


def pytest_configure(config: pytest.Config) -> None:
    # pytest keeps each test module's assertion-rewritten code in __pycache__ unless bytecode
    # is not written (PYTHONDONTWRITEBYTECODE, which some CI images and this project's machines
    # set): then every worker rewrites all ~180 test modules on every run, 8-10 s of its CPU.
    sys.dont_write_bytecode = False

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
DEMO_CLUSTER = ROOT / "config" / "examples" / "cluster.json"


#: (verb, request, expected reply) for every fixture pair, under policy-leastallocated.json.
FIXTURE_CASES = [
    ("filter", "filter-names.request.json", "filter-names.expected.json"),
    ("filter", "filter-nodes.request.json", "filter-nodes.expected.json"),
    ("prioritize", "prioritize-names.request.json", "prioritize-leastallocated.expected.json"),
    ("preempt", "preempt-meta.request.json", "preempt.expected.json"),
    ("preempt", "preempt-full.request.json", "preempt.expected.json"),
    ("bind", "bind.request.json", "bind.expected.json"),
]


def scheduler_verb_paths(config_file: str) -> dict[str, str]:
    """verb name -> URL path, built from a shipped KubeSchedulerConfiguration exactly as
    kube-scheduler builds it: `strings.TrimRight(urlPrefix, "/") + "/" + verb`."""
    from urllib.parse import urlsplit

    import yaml

    extender = yaml.safe_load((ROOT / "config" / config_file).read_text())["extenders"][0]
    prefix = urlsplit(extender["urlPrefix"].rstrip("/")).path
    return {key.removesuffix("Verb"): f"{prefix}/{extender[key]}"
            for key in ("filterVerb", "prioritizeVerb", "preemptVerb", "bindVerb")}


def fixture_bytes(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def fixture_json(name: str) -> Any:
    return json.loads(fixture_bytes(name))


@pytest.fixture
def demo_state() -> ClusterState:
    return load_snapshot(DEMO_CLUSTER)


@pytest.fixture
def fixture_profile() -> Profile:
    return build_profile(load_policy(FIXTURES / "policy-leastallocated.json"))


@pytest.fixture
def runtime(demo_state: ClusterState, fixture_profile: Profile) -> Runtime:
    return Runtime(fixture_profile, demo_state, SnapshotBinder(demo_state, 30.0))


@pytest.fixture
def client(runtime: Runtime):
    with TestClient(create_app(runtime)) as test_client:
        yield test_client
