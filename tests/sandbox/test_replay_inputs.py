"""What `extender simulate --on-sandbox` gives the real cluster: a policy as a
kube-scheduler profile that the simulator reads back to the same plugins, a configuration as
it is (but extenders), and the workload as timed steps."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
import yaml

from extender.engine.policy import effective_plugins, load_policy, parse_policy
from extender.sandbox.kubeprofile import ProfileError, config_settings, policy_profile
from extender.sandbox.replayplan import plan, scheduler_names
from extender.simulator.schedulerconfig import scheduler_setup
from extender.simulator.workload import load_workload
from extender.state.snapshot import read_documents

EXAMPLES = Path(__file__).resolve().parents[2] / "config"
POLICIES = ["policy.yaml", "examples/binpacking.yaml", "examples/gang-quota-policy.yaml",
            "examples/preemption-toleration.yaml", "examples/quota-policy.yaml"]
POINTS = (("filter", "filter"), ("score", "score"), ("postFilter", "post_filter"),
          ("queueSort", "queue_sort"))


def _plugins(policy, point: str, attr: str) -> list[tuple[str, int | None]]:
    got = effective_plugins(point, getattr(policy.plugins, attr))
    return [(n, (w or 1) if point == "score" else None) for n, w in got]


@pytest.mark.parametrize("name", POLICIES)
def test_a_policy_becomes_a_profile_the_simulator_reads_back(name):
    policy = load_policy(EXAMPLES / name)
    profile = policy_profile(policy, "default-scheduler", scheduler_plugins=True)
    setup = scheduler_setup({"apiVersion": "kubescheduler.config.k8s.io/v1",
                             "kind": "KubeSchedulerConfiguration", "profiles": [profile]})
    back = parse_policy(setup.profiles[0].policy, "round trip")
    for point, attr in POINTS:
        assert _plugins(back, point, attr) == _plugins(policy, point, attr), point
    assert {"name": "DefaultBinder"} in profile["plugins"]["multiPoint"]["enabled"]
    # PostFilter in the simulator's order: the policy's, then Coscheduling's; DynamicResources
    # first where the simulator writes its word (1.34 to 1.36).
    post = [p["name"] for p in profile["plugins"]["postFilter"]["enabled"]]
    expected = [n for n, _ in effective_plugins("postFilter", policy.plugins.post_filter)]
    assert post == (["DynamicResources"] if policy.kubernetes_version in ("1.34", "1.35", "1.36")
                    else []) + expected


def test_scheduler_plugins_need_their_kube_scheduler():
    policy = load_policy(EXAMPLES / "examples/gang-quota-policy.yaml")
    with pytest.raises(ProfileError, match="no plugin CapacityScheduling, Coscheduling .*"
                                           "--scheduler-plugins"):
        policy_profile(policy, "default-scheduler")


def test_a_configuration_runs_as_written_but_without_extenders():
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "clientConnection": {"kubeconfig": "/elsewhere"}, "percentageOfNodesToScore": 30,
              "profiles": [{"schedulerName": "default-scheduler", "plugins": {
                  "score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]}}}]}
    assert config_settings(config) == {"percentageOfNodesToScore": 30,
                                       "profiles": config["profiles"]}
    with pytest.raises(ProfileError, match="extenders"):
        config_settings({**config, "extenders": [{"urlPrefix": "http://x"}]})
    config["profiles"][0]["plugins"]["filter"] = {"enabled": [{"name": "Coscheduling"}]}
    with pytest.raises(ProfileError, match="no plugin Coscheduling"):
        config_settings(config)
    assert config_settings(config, scheduler_plugins=True)["percentageOfNodesToScore"] == 30


WORKLOAD = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Pod
metadata: {name: late, creationTimestamp: "2026-11-20T10:01:00Z",
           annotations: {simulator.extender/run-for: 2m}}
spec:
  priority: 500
  containers: [{name: c, image: x}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team, creationTimestamp: "2026-11-20T10:00:00Z"}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      schedulerName: other-scheduler
      priorityClassName: high
      containers: [{name: c, image: x}]
---
kind: SimulationEvent
at: 90s
deletePod: team/web-1
"""


def test_the_workload_becomes_timed_steps(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD)
    steps = plan(load_workload(path), read_documents(path), scale=4.0)
    got = [(s.t, s.kind, s.obj.get("kind"), s.obj["metadata"].get("name")) for s in steps]
    assert got == [
        (0.0, "create", "PriorityClass", "high"),
        # The simulator takes spec.priority as written; the API server wants a class for it.
        (0.0, "create", "PriorityClass", "simulate-priority-500"),
        (0.0, "create", "Deployment", "web"),  # its pods: the real controller makes them
        (60.0, "create", "Pod", "late"),
        (90.0, "delete-pod", None, "web-1")]
    late = steps[3].obj
    assert late["spec"]["priorityClassName"] == "simulate-priority-500"
    assert "priority" not in late["spec"] and "uid" not in late["metadata"]
    # Lifetimes and grace periods run at the replay's speed, as arrivals do (the step times
    # are the workload's): 2 minutes at 4x is 30 s, the default 30 s grace 8 s (whole seconds).
    assert late["metadata"]["annotations"]["simulator.extender/run-for"] == "30s"
    assert late["spec"]["terminationGracePeriodSeconds"] == 8
    web = steps[2].obj["spec"]["template"]["spec"]
    assert web["terminationGracePeriodSeconds"] == 8
    assert scheduler_names([s.obj for s in steps]) == ["default-scheduler", "other-scheduler"]
    assert yaml.safe_dump(steps[1].obj)  # plain data, ready to send


def test_simulate_on_sandbox_refuses_bad_input_before_starting_anything(tmp_path, capsys,
                                                                          monkeypatch):
    from extender.cli import main

    monkeypatch.setenv("EXTENDER_SANDBOX_CACHE", str(tmp_path / "cache"))
    cluster = EXAMPLES / "examples" / "cluster.json"
    workload = EXAMPLES / "examples" / "workload.yaml"
    policy = EXAMPLES / "policy.yaml"
    base = ["simulate", "--on-sandbox", "--cluster", str(cluster), "--workload", str(workload)]
    assert main([*base, "--policy", str(policy), "--follow", str(policy)]) == 2
    assert "--follow does not combine with --on-sandbox" in capsys.readouterr().err
    assert main(["simulate", "--on-sandbox", "--policy", str(policy)]) == 2
    assert "--cluster, --workload and one of --policy, --config are required" in \
        capsys.readouterr().err
    assert main([*base, "--policy", str(EXAMPLES / "examples/gang-policy.yaml")]) == 2
    assert "has no plugin Coscheduling" in capsys.readouterr().err
    assert main([*base, "--policy", str(policy), "--kubernetes-version", "1.33.1"]) == 2
    assert ("Kubernetes 1.33.1 is not built: run `extender sandbox build --kubernetes-version "
            "1.33.1` first") in capsys.readouterr().err
    assert main([*base, "--policy", str(policy), "--report", str(tmp_path / "no" / "r.json")]) == 2
    assert "cannot write" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*base, "--policy", str(policy), "--settle", "5x"])
    assert "argument --settle: invalid duration '5x'" in capsys.readouterr().err


def test_settle_takes_seconds_or_a_duration():
    from extender.sandbox.replay import _settle

    assert _settle("330") == _settle("330s") == _settle("5m30s") == 330.0
    with pytest.raises(argparse.ArgumentTypeError, match="must be positive"):
        _settle("0s")


def test_dynamic_resources_speaks_where_the_simulator_writes_its_word():
    policy = parse_policy({"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
                           "kubernetesVersion": "1.35"}, "p")
    profile = policy_profile(policy, "default-scheduler")
    assert [p["name"] for p in profile["plugins"]["postFilter"]["enabled"]] == [
        "DynamicResources", "DefaultPreemption"]
    assert {"name": "DynamicResources"} in profile["plugins"]["multiPoint"]["enabled"]
    setup = scheduler_setup({"apiVersion": "kubescheduler.config.k8s.io/v1",
                             "kind": "KubeSchedulerConfiguration", "profiles": [profile]})
    back = parse_policy(setup.profiles[0].policy, "round trip")
    assert _plugins(back, "postFilter", "post_filter") == [("DefaultPreemption", None)]
    newest = policy_profile(parse_policy({"apiVersion": "scheduler-extender/v1",
                                          "kind": "ExtenderPolicy"}, "p"), "default-scheduler")
    assert {"name": "DynamicResources"} not in newest["plugins"]["multiPoint"]["enabled"]


def test_scheduler_verbosity_is_what_the_replay_can_read(capsys):
    from extender.cli import main
    from extender.cliargs import scheduler_verbosity as _verbosity

    assert _verbosity("2") == 2 and _verbosity("10") == 10
    for bad, words in (("1", "must be 2 to 10 (the replay reads kube-scheduler's -v=2 lines), "
                              "got 1"),
                       ("11", "must be 2 to 10"), ("five", "expected an integer, got 'five'")):
        with pytest.raises(argparse.ArgumentTypeError, match=re.escape(words)):
            _verbosity(bad)
    with pytest.raises(SystemExit):
        main(["simulate", "--on-sandbox", "--scheduler-verbosity", "0"])
    assert "argument --scheduler-verbosity: must be 2 to 10" in capsys.readouterr().err
