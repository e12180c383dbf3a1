"""`serve` refuses a policy with Coscheduling, CapacityScheduling or NodeResourceTopologyMatch's
overreserve cache on one of several replicas without `--leader-elect`: the pod finds itself and
its controller in the API."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from extender.engine.policy import parse_policy
from extender.engine.profile import build_profile
from extender.kube.client import KubeClient
from extender.kube.config import ClusterConfig
from extender.serve import StartupError, refuse_replicas_without_election
from tests.kube import kube_objects as ko
from tests.kube.fake_apiserver import FakeApiServer, Fault
from tests.polling import free_port

ROOT = Path(__file__).resolve().parents[2]
GANG = {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
        "plugins": {"filter": {"enabled": [{"name": "NodeResourcesFit"},
                                           {"name": "Coscheduling"}]}}}
PLAIN = {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy"}
NS = "scheduler-extender"


def _deployed(server: FakeApiServer, replicas: int, owner_kind: str = "ReplicaSet") -> None:
    """The extender's pod, controlled by a ReplicaSet (or StatefulSet) of `replicas`."""
    server.put({"apiVersion": "apps/v1", "kind": owner_kind,
                "metadata": {"name": "scheduler-extender-7c9f", "namespace": NS, "uid": "rs-1"},
                "spec": {"replicas": replicas,
                         "selector": {"matchLabels": {"app": "scheduler-extender"}}}})
    pod = ko.pod("scheduler-extender-7c9f-abcde", namespace=NS, node_name="n1",
                 phase="Running", labels={"app": "scheduler-extender"})
    pod["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner_kind,
                                           "name": "scheduler-extender-7c9f", "uid": "rs-1",
                                           "controller": True}]
    server.put(pod)


def _check(kube_config: ClusterConfig, policy: dict[str, Any], host: str = "0.0.0.0") -> None:
    runtime = SimpleNamespace(live=SimpleNamespace(client=KubeClient(kube_config)),
                              profile=build_profile(parse_policy(policy)))
    refuse_replicas_without_election(runtime, host)  # type: ignore[arg-type]


@pytest.fixture
def as_the_pod(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POD_NAME", "scheduler-extender-7c9f-abcde")
    monkeypatch.setenv("POD_NAMESPACE", NS)


@pytest.mark.parametrize("owner_kind", ["ReplicaSet", "StatefulSet"])
def test_several_replicas_with_a_gang_policy_are_refused(
        apiserver: FakeApiServer, kube_config: ClusterConfig, as_the_pod: None,
        owner_kind: str) -> None:
    _deployed(apiserver, replicas=2, owner_kind=owner_kind)
    with pytest.raises(StartupError) as refused:
        _check(kube_config, GANG)
    assert str(refused.value) == (
        f"{owner_kind}/scheduler-extender-7c9f runs 2 replicas of this extender (pod "
        f"{NS}/scheduler-extender-7c9f-abcde) and its policy enables Coscheduling: without "
        "--leader-elect they would split held binds and reservations between processes "
        "that cannot see each other's; add --leader-elect (manifests/components/ha does) or "
        "run one replica")


def test_a_sidecar_of_several_kube_scheduler_replicas_is_not_refused(
        apiserver: FakeApiServer, kube_config: ClusterConfig, as_the_pod: None) -> None:
    # manifests/sidecar: the verbs on loopback, one extender per kube-scheduler replica, only
    # the leader scheduling: its holds live in the one process it calls (it was refused, and
    # check-config refused the rendered sidecar overlay with a gang policy).
    _deployed(apiserver, replicas=2)
    for host in ("127.0.0.1", "localhost", "::1"):
        _check(kube_config, GANG, host=host)


def test_several_replicas_with_the_numa_cache_are_refused(
        apiserver: FakeApiServer, kube_config: ClusterConfig, as_the_pod: None) -> None:
    _deployed(apiserver, replicas=3)
    numa = {**PLAIN, "plugins": {"filter": {"enabled": [{"name": "NodeResourceTopologyMatch"}]}},
            "pluginConfig": [{"name": "NodeResourceTopologyMatch",
                              "args": {"cacheResyncPeriodSeconds": 5}}]}
    with pytest.raises(StartupError, match="its policy enables NodeResourceTopologyMatch: "):
        _check(kube_config, numa)
    _check(kube_config, {**numa, "pluginConfig": []})  # without the cache: nothing kept
    discarding = {**numa, "pluginConfig": [{"name": "NodeResourceTopologyMatch",
                                            "args": {"discardReservedNodes": True}}]}
    with pytest.raises(StartupError, match="its policy enables NodeResourceTopologyMatch: "):
        _check(kube_config, discarding)


def test_one_replica_or_a_stateless_policy_starts(
        apiserver: FakeApiServer, kube_config: ClusterConfig, as_the_pod: None) -> None:
    _deployed(apiserver, replicas=1)
    _check(kube_config, GANG)
    assert [r.path for r in apiserver.requests] == [
        f"/api/v1/namespaces/{NS}/pods/scheduler-extender-7c9f-abcde",
        f"/apis/apps/v1/namespaces/{NS}/replicasets/scheduler-extender-7c9f"]
    apiserver.requests.clear()
    _check(kube_config, PLAIN)  # nothing to split: the API is not even asked
    assert not apiserver.requests


def test_an_api_error_is_logged_not_fatal(
        apiserver: FakeApiServer, kube_config: ClusterConfig, as_the_pod: None,
        caplog: pytest.LogCaptureFixture) -> None:
    _deployed(apiserver, replicas=2)
    apiserver.inject(Fault("status", status=403, path="/pods/", times=1))
    _check(kube_config, GANG)
    assert "could not count this extender's replicas" in caplog.text


def test_outside_a_pod_nothing_is_checked(
        apiserver: FakeApiServer, kube_config: ClusterConfig,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POD_NAME", raising=False)
    _deployed(apiserver, replicas=2)
    _check(kube_config, GANG)
    assert not apiserver.requests


def test_serve_refuses_at_start(apiserver: FakeApiServer, tmp_path: Path) -> None:
    _deployed(apiserver, replicas=3)
    (tmp_path / "policy.json").write_text(json.dumps(GANG))
    done = subprocess.run(
        # Reached by other pods, as the manifests' own Deployment listens (on loopback it
        # would be a sidecar, each replica serving its own kube-scheduler).
        [sys.executable, "-m", "extender", "serve", "--bind-address", "0.0.0.0",
         "--port", str(free_port()),
         "--kubeconfig", str(apiserver.write_kubeconfig(tmp_path / "kubeconfig")),
         "--policy", str(tmp_path / "policy.json")],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
        env={"PATH": "", "POD_NAME": "scheduler-extender-7c9f-abcde", "POD_NAMESPACE": NS,
             "HOME": str(tmp_path)})
    assert done.returncode != 0
    assert "ReplicaSet/scheduler-extender-7c9f runs 3 replicas of this extender" in done.stderr
    assert "Traceback" not in done.stderr, done.stderr
