"""`extender simulate --on-sandbox` and `--agreement`: a small workload replayed on the real
kube-scheduler, simulated with its ties followed, and compared pod by pod — every pod agrees.

The workload has what the simulator must get right beyond single placements: a Deployment's
pods (named at random by the real controller) under zone spread, required anti-affinity,
a node joining later, and a preemption whose victim has a short grace period.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from extender.cli import main

pytestmark = pytest.mark.e2e

EPOCH = "2026-11-20T10:00:00Z"


def _at(seconds: int) -> str:
    return f"2026-11-20T10:00:{seconds:02d}Z"


def _node(name: str, zone: str, cpu: str = "4") -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
        "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}},
        "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}}


def _spec(cpu: str, **extra: object) -> dict:
    return {"terminationGracePeriodSeconds": 1, "containers": [
        {"name": "c", "image": "registry.example/app:1",
         "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}], **extra}


CLUSTER = [
    _node("a1", "zone-a"), _node("a2", "zone-a"), _node("b1", "zone-b"), _node("b2", "zone-b"),
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"},
     "value": 10},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
     "metadata": {"name": "high"}, "value": 1000},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "filler", "namespace": "default",
                                                     "creationTimestamp": EPOCH},
     "spec": {**_spec("3"), "nodeName": "b2", "priorityClassName": "low", "priority": 10},
     "status": {"phase": "Running", "startTime": EPOCH}},
]
SPREAD = {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
          "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}}
WORKLOAD = [
    {"apiVersion": "apps/v1", "kind": "Deployment",
     "metadata": {"name": "web", "namespace": "default", "creationTimestamp": EPOCH},
     "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}}, "template": {
         "metadata": {"labels": {"app": "web"}},
         "spec": _spec("500m", priorityClassName="low", topologySpreadConstraints=[SPREAD])}}},
    *[{"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": f"db-{i}", "namespace": "default", "labels": {"app": "db"},
        "creationTimestamp": _at(2)},
        "spec": _spec("1", priorityClassName="low", affinity={"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{
                "topologyKey": "kubernetes.io/hostname",
                "labelSelector": {"matchLabels": {"app": "db"}}}]}})} for i in range(3)],
    {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "urgent", "namespace": "default", "creationTimestamp": _at(4)},
     "spec": _spec("2", priorityClassName="high", nodeSelector={"kubernetes.io/hostname": "b2"})},
    {"kind": "SimulationEvent", "at": "6s", "addNode": _node("c1", "zone-c", "2")},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "late", "namespace": "default", "creationTimestamp": _at(8)},
     "spec": _spec("1500m", priorityClassName="low",
                   nodeSelector={"topology.kubernetes.io/zone": "zone-c"})},
]
POLICY = {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy"}  # the defaults


@pytest.fixture(scope="module")
def built() -> None:
    if shutil.which("go") is None:
        pytest.skip("Go is not installed: the e2e tests build kube-apiserver, kube-scheduler, "
                    "kube-controller-manager and etcd from Go modules (install Go 1.26+)")
    from extender.sandbox.build import DEFAULT_VERSION, build

    build(DEFAULT_VERSION, progress=lambda line: print(line, file=sys.__stderr__, flush=True))


def _write(path: Path, docs: list[dict]) -> Path:
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return path


def test_a_replay_on_the_real_scheduler_agrees_with_the_simulation(built, tmp_path, capsys):
    cluster = _write(tmp_path / "cluster.yaml", CLUSTER)
    workload = _write(tmp_path / "workload.yaml", WORKLOAD)
    policy = _write(tmp_path / "policy.yaml", [POLICY])
    inputs = ["--cluster", str(cluster), "--workload", str(workload), "--policy", str(policy)]
    real, sim = tmp_path / "real.json", tmp_path / "sim.json"
    assert main(["simulate", *inputs, "--on-sandbox", "--settle", "4", "--report", str(real),
                 "--events", str(tmp_path / "real.jsonl"), "--html", str(tmp_path / "real.html"),
                 "--sandbox-state-dir", str(tmp_path / "sandbox")]) == 0
    summary = capsys.readouterr().out.strip().splitlines()[-1]
    assert summary.startswith("9 scheduled, 0 pending, 1 preempted, 0 deleted;"), summary
    report = json.loads(real.read_text())
    assert report["kind"] == "SimulationReport" and report["inputs"]["onSandbox"]["scheduler"] \
        == "kube-scheduler"
    pods = {p["name"]: p for p in report["pods"]}
    assert pods["urgent"]["node"] == "b2" and pods["urgent"]["preempted"] == ["default/filler"]
    assert pods["filler"]["status"] == "Preempted" and pods["filler"]["preemptedBy"] == \
        "default/urgent"
    assert pods["late"]["node"] == "c1"
    web = [p for p in report["pods"] if p.get("owner") == "Deployment/web"]
    assert len(web) == 4 and all(p["status"] == "Scheduled" for p in web)
    html = (tmp_path / "real.html").read_text()
    assert 'data-pod="default/urgent"' in html and "kube-scheduler 1." in html
    events = [json.loads(line) for line in (tmp_path / "real.jsonl").read_text().splitlines()]
    assert {"arrive", "attempt", "bind", "preempt", "evict", "end"} <= {e["action"] for e in events}

    assert main(["simulate", *inputs, "--follow", str(real), "--report", str(sim)]) == 0
    capsys.readouterr()
    page = tmp_path / "agreement.html"
    assert main(["simulate", "--agreement", str(sim), str(real), "--html", str(page)]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[-1] == "agreement: 10/10 pods", text
    assert "preemptions: 1/1 with the same victims" in text
    assert "agreement: 10/10 pods" in page.read_text()
