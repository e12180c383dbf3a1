"""Workloads as users have them: Deployments, ReplicaSets, StatefulSets, Jobs and DaemonSets
expanded the way their controllers create pods; lifetimes; node events; unsupported kinds."""

from __future__ import annotations

import json
from typing import Any

import pytest

from extender.cli import main
from extender.model import k8s
from extender.model.node import NodeView
from extender.simulator.clock import SECOND
from extender.simulator.controllers import (
    ALPHANUMS,
    DAEMON_TOLERATIONS,
    DaemonSetController,
    JobController,
    ReplicaSetController,
    StatefulSetController,
    template_hash,
)
from extender.simulator.workload import WorkloadError, load_workload

from .helpers import DEFAULTS, at, by_name, node, pod, simulate, write

CONTAINER = {"name": "c", "image": "registry.example/app:1",
             "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}


def template(labels: dict[str, str], annotations: dict[str, str] | None = None,
             **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"labels": labels}
    if annotations:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": {"containers": [CONTAINER], **spec}}


def deployment(name: str, replicas: int, *, created: str | None = None,
               namespace: str = "default") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if created:
        meta["creationTimestamp"] = created
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": template({"app": name})}}


def statefulset(name: str, replicas: int, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": name, "namespace": "data"},
            "spec": {"replicas": replicas, "serviceName": name,
                     "selector": {"matchLabels": {"app": name}},
                     "template": template({"app": name}), **spec}}


def job(name: str, *, run_for: str | None = "1m", restart: str = "Never",
        **spec: Any) -> dict[str, Any]:
    annotations = {"simulator.extender/run-for": run_for} if run_for else None
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"template": template({"app": name}, annotations, restartPolicy=restart),
                     **spec}}


def daemonset(name: str, **pod_spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": name, "namespace": "kube-system"},
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": template({"app": name}, **pod_spec)}}


def names(arrivals) -> list[str]:  # type: ignore[no-untyped-def]
    return [a.pod.name for a in arrivals]


def view(raw: dict[str, Any]) -> NodeView:
    return NodeView.from_k8s(k8s.convert(raw, k8s.Node))


# -- the wrong answer of issue 16: a Deployment silently ignored ------------------------------


def test_a_deployment_is_scheduled_not_silently_ignored(tmp_path, capsys):
    """Before: `extender simulate` exited 0 with "0 scheduled" for a Deployment."""
    (tmp_path / "policy.json").write_text(json.dumps(DEFAULTS))
    args = ["simulate", "--cluster", str(write(tmp_path / "c.json", [node("n1", "4", "8Gi")])),
            "--workload", str(write(tmp_path / "w.json", [deployment("web", 3)])),
            "--policy", str(tmp_path / "policy.json"), "--no-progress",
            "--report", str(tmp_path / "r.json")]
    assert main(args) == 0
    assert capsys.readouterr().out.startswith("3 scheduled, 0 pending")
    report = json.loads((tmp_path / "r.json").read_text())
    assert sorted(p["name"] for p in report["pods"]) == sorted(
        names(load_workload(tmp_path / "w.json").arrivals))


@pytest.mark.parametrize(("items", "error"), [
    ([pod("a", "1"), {"apiVersion": "batch/v1", "kind": "CronJob",
                      "metadata": {"name": "nightly", "namespace": "ops"}}],
     r"w.json: items\[1\] \(ops/nightly\): kind 'CronJob' is not supported in a workload "
     r"\(supported: Pod, Deployment, ReplicaSet, StatefulSet, Job, DaemonSet, PodGroup, "
     r"ElasticQuota, AppGroup, NetworkTopology, NodeResourceTopology, PriorityClass, "
     r"SimulationEvent\)"),
    ([{"kind": "Secret", "metadata": {"name": "s"}}], r"items\[0\] \(s\): kind 'Secret'"),
    ([{"metadata": {"name": "x"}, "spec": {}}], r"items\[0\] \(x\): an object without a kind"),
    (["just text"], r"items\[0\]: expected a Kubernetes object \(a mapping\), got str"),
    ([{"kind": "Node", "metadata": {"name": "n"}}], "belong in the cluster file"),
])
def test_every_unsupported_kind_is_an_error_naming_the_kind_and_where(tmp_path, items, error):
    with pytest.raises(WorkloadError, match=error):
        load_workload(write(tmp_path / "w.json", items))


def test_unsupported_kind_in_a_multi_document_yaml_names_the_document(tmp_path, capsys):
    path = tmp_path / "w.yaml"
    path.write_text("kind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c}]}\n---\n"
                    "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\n"
                    "metadata: {name: web}\n")
    with pytest.raises(WorkloadError, match=r"w.yaml: \[1\] \(web\): kind 'HorizontalPodAutoscaler'"):
        load_workload(path)
    (tmp_path / "policy.json").write_text(json.dumps(DEFAULTS))
    assert main(["simulate", "--cluster", str(write(tmp_path / "c.json", [node("n1", "4", "8Gi")])),
                 "--workload", str(path), "--policy", str(tmp_path / "policy.json"),
                 "--no-progress"]) == 2
    assert "kind 'HorizontalPodAutoscaler' is not supported" in capsys.readouterr().err


# -- Deployment and ReplicaSet ----------------------------------------------------------------


def test_deployment_creates_its_replica_set_and_replicas(tmp_path):
    spec_template = template({"app": "web"})
    hash_ = template_hash(spec_template)
    workload = load_workload(write(tmp_path / "w.json", [
        pod("early", "1", created=at(0)),
        deployment("web", 3, created=at(5)),
        pod("same-time", "1", created=at(5)),
        pod("late", "1", created=at(10)),
    ]))
    rs_name = f"web-{hash_}"
    assert hash_ == "5655fcddf6" and rs_name == "web-5655fcddf6"
    # Replicas at the Deployment's creation, in index order, at its place in the file.
    assert [(a.pod.name, a.time // SECOND) for a in workload.arrivals] == [
        ("early", 0), ("web-5655fcddf6-xspfz", 5), ("web-5655fcddf6-lpc7h", 5),
        ("web-5655fcddf6-v7zbm", 5), ("same-time", 5), ("late", 10)]
    [rs] = workload.controllers
    assert isinstance(rs, ReplicaSetController) and rs.name == rs_name and rs.time == 5 * SECOND
    replica = workload.arrivals[1]
    assert replica.controller is rs
    meta = replica.raw["metadata"]
    assert meta["generateName"] == f"{rs_name}-"
    assert meta["labels"] == {"app": "web", "pod-template-hash": hash_}
    assert meta["creationTimestamp"] == "2024-01-01T00:00:05Z"
    assert meta["ownerReferences"] == [{
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs_name, "uid": rs.uid,
        "controller": True, "blockOwnerDeletion": True}]
    assert replica.pod.controller_ref == ("apps/v1", "ReplicaSet", rs_name)
    assert len({a.pod.uid for a in workload.arrivals}) == 6
    # The ReplicaSet reaches the cluster state (PodTopologySpread reads its selector), owned
    # by the Deployment.
    [owner] = workload.objects
    assert (owner.kind, owner.time, owner.obj.metadata.name) == ("ReplicaSet", 5 * SECOND, rs_name)
    assert owner.obj.spec.selector.match_labels == {"app": "web", "pod-template-hash": hash_}
    deploy_ref = owner.raw["metadata"]["ownerReferences"][0]
    assert {k: deploy_ref[k] for k in ("apiVersion", "kind", "name", "controller")} == {
        "apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "controller": True}
    assert deploy_ref["uid"] == rs.deployment["metadata"]["uid"]


def test_generated_names_follow_the_seed_and_nothing_else(tmp_path):
    alone = load_workload(write(tmp_path / "a.json", [deployment("web", 3)]))
    beside = load_workload(write(tmp_path / "b.json", [deployment("api", 2), deployment("web", 3)]))
    other = load_workload(write(tmp_path / "a.json", [deployment("web", 3)]), seed=7)
    assert names(alone.arrivals) == names(beside.arrivals)[2:]
    assert names(other.arrivals) != names(alone.arrivals)
    assert names(other.arrivals) == names(
        load_workload(write(tmp_path / "a.json", [deployment("web", 3)]), seed=7).arrivals)
    for name in names(alone.arrivals) + names(other.arrivals):
        prefix, suffix = name.rsplit("-", 1)
        assert prefix == "web-5655fcddf6" and len(suffix) == 5 and set(suffix) <= set(ALPHANUMS)


def test_generated_name_prefixes_are_cut_at_58_characters(tmp_path):
    long = "a" * 70
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": long},
          "spec": {"replicas": 1, "template": template({"app": "x"})}}
    [arrival] = load_workload(write(tmp_path / "w.json", [rs])).arrivals
    assert arrival.pod.name.startswith("a" * 58) and len(arrival.pod.name) == 63


def test_replica_set_defaults_its_selector_and_replaces_a_vanished_pod(tmp_path):
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "cache"},
          "spec": {"replicas": 2, "template": template({"app": "cache"})}}
    workload = load_workload(write(tmp_path / "w.json", [rs]))
    controller = workload.controllers[0]
    assert names(workload.arrivals) == ["cache-svdmx", "cache-w5m8j"]
    assert workload.objects[0].obj.spec.selector.match_labels == {"app": "cache"}
    gone = workload.arrivals[0].pod
    reaction = controller.pod_deleted(gone.uid, 30 * SECOND)
    assert names(reaction.create) == ["cache-vt8cg"] and reaction.create[0].time == 30 * SECOND
    assert reaction.create[0].raw["metadata"]["creationTimestamp"] == "1970-01-01T00:00:30Z"
    assert controller.pod_deleted(gone.uid, 31 * SECOND).create == []  # known once
    # A finished pod (a lifetime on a ReplicaSet's template) is replaced too.
    assert len(controller.pod_finished(workload.arrivals[1].pod.uid, "Succeeded", 40).create) == 1


@pytest.mark.parametrize(("spec", "error"), [
    ({"selector": {"matchLabels": {"app": "other"}}},
     r"spec.selector does not match spec.template.metadata.labels"),
    ({"selector": {}}, "empty selector is invalid"),
    ({"replicas": -1}, "spec.replicas must be a non-negative integer"),
    ({"template": {"metadata": {"labels": {"app": "web"}}, "spec": {}}},
     "spec.template.spec needs containers"),
    ({"template": template({"app": "web"}, annotations={"simulator.extender/run-for": "soon"})},
     r"spec.template: annotation simulator.extender/run-for: invalid duration"),
])
def test_invalid_deployments(tmp_path, spec, error):
    obj = deployment("web", 2)
    obj["spec"].update(spec)
    with pytest.raises(WorkloadError, match=error) as info:
        load_workload(write(tmp_path / "w.json", [obj]))
    assert "items[0] (Deployment default/web)" in str(info.value)


# -- StatefulSet --------------------------------------------------------------------------------


def test_statefulset_ordered_ready_creates_the_next_ordinal_once_the_previous_is_bound(tmp_path):
    workload = load_workload(write(tmp_path / "w.json", [statefulset("db", 3)]))
    [sts] = workload.controllers
    assert isinstance(sts, StatefulSetController)
    assert names(workload.arrivals) == ["db-0"]
    first = workload.arrivals[0]
    meta = first.raw["metadata"]
    revision = f"db-{template_hash(template({'app': 'db'}))}"
    assert meta["labels"] == {"app": "db", "controller-revision-hash": revision,
                              "statefulset.kubernetes.io/pod-name": "db-0",
                              "apps.kubernetes.io/pod-index": "0"}
    assert "generateName" not in meta
    assert meta["ownerReferences"][0]["kind"] == "StatefulSet"
    assert first.pod.controller_ref == ("apps/v1", "StatefulSet", "db")
    assert (first.raw["spec"]["hostname"], first.raw["spec"]["subdomain"]) == ("db-0", "db")
    assert workload.objects[0].kind == "StatefulSet"
    steps = []
    current = first
    for t in (1, 2, 3):
        reaction = sts.pod_bound(current.pod.uid, "n1", t * SECOND)
        steps.append(names(reaction.create))
        if reaction.create:
            current = reaction.create[0]
    assert steps == [["db-1"], ["db-2"], []]
    # db-1 is deleted: it comes back with its name (a new uid); the ordinals above it stay.
    db1 = sts.pods[1]
    again = sts.pod_deleted(db1, 10 * SECOND).create
    assert names(again) == ["db-1"] and again[0].pod.uid != db1


def test_statefulset_parallel_and_ordinals_start(tmp_path):
    workload = load_workload(write(tmp_path / "w.json", [
        statefulset("db", 3, podManagementPolicy="Parallel", ordinals={"start": 5})]))
    assert names(workload.arrivals) == ["db-5", "db-6", "db-7"]
    assert workload.controllers[0].pod_bound(workload.arrivals[0].pod.uid, "n1", 1).create == []


def test_statefulset_pod_names_clash_with_a_pod_of_the_file(tmp_path):
    clash = pod("db-1", "1", namespace="data")
    with pytest.raises(WorkloadError, match=r"Pod data/db-1 appears twice \(also a pod of "
                                            r"StatefulSet data/db\)"):
        load_workload(write(tmp_path / "w.json", [statefulset("db", 3), clash]))
    with pytest.raises(WorkloadError, match=r"its pod data/db-1 is also a Pod of the file"):
        load_workload(write(tmp_path / "w.json", [clash, statefulset("db", 3)]))


# -- Job ----------------------------------------------------------------------------------------


def _run_job(controller: JobController, first: list, outcome) -> list[tuple[int, str, list[str]]]:  # type: ignore[no-untyped-def]
    """Finish the oldest active pod each minute (outcome(i) its phase), answering wake-ups;
    returns (second, what happened, pods created)."""
    active = list(first)
    log: list[tuple[int, str, list[str]]] = []
    t = 0
    i = 0
    wake: int | None = None
    while (active or wake is not None) and t < 3600:
        t += 60
        if wake is not None and wake <= t * SECOND:
            woken = wake
            reaction = controller.sync(woken)
            wake = reaction.wake_at
            log.append((woken // SECOND, "sync", names(reaction.create)))
            active += reaction.create
            continue
        if not active:
            continue
        pod_ = active.pop(0)
        phase = outcome(i)
        i += 1
        reaction = controller.pod_finished(pod_.pod.uid, phase, t * SECOND)
        wake = reaction.wake_at
        log.append((t, f"{pod_.pod.name} {phase}", names(reaction.create)))
        active += reaction.create
        active = [a for a in active if f"default/{a.pod.name}" not in reaction.delete]
    return log


def test_job_parallelism_and_completions(tmp_path):
    workload = load_workload(write(tmp_path / "w.json", [job("etl", parallelism=2, completions=5)]))
    [etl] = workload.controllers
    assert isinstance(etl, JobController)
    assert names(workload.arrivals) == ["etl-kjb27", "etl-w2p7g"]  # parallelism at creation
    first = workload.arrivals[0]
    assert first.run_for == 60 * SECOND and first.finish == "Succeeded"
    labels = first.raw["metadata"]["labels"]
    assert labels == {"app": "etl", "batch.kubernetes.io/controller-uid": etl.uid,
                      "batch.kubernetes.io/job-name": "etl", "controller-uid": etl.uid,
                      "job-name": "etl"}
    assert first.raw["metadata"]["ownerReferences"][0] == {
        "apiVersion": "batch/v1", "kind": "Job", "name": "etl", "uid": etl.uid,
        "controller": True, "blockOwnerDeletion": True}
    assert workload.objects == []  # the state keeps no Jobs
    log = _run_job(etl, workload.arrivals, lambda i: "Succeeded")
    assert [len(created) for _, _, created in log] == [1, 1, 1, 0, 0]
    assert (etl.succeeded, etl.failed, etl.condition) == (5, 0, "Complete")
    assert len(etl.active) == 0


def test_job_failures_back_off_then_exhaust_the_backoff_limit(tmp_path):
    workload = load_workload(write(tmp_path / "w.json", [
        job("flaky", parallelism=1, completions=3, backoffLimit=2)]))
    [flaky] = workload.controllers
    first = workload.arrivals[0]
    # 10 s after the first failure, 20 s after the second, then the limit.
    reaction = flaky.pod_finished(first.pod.uid, "Failed", 60 * SECOND)
    assert reaction.create == [] and reaction.wake_at == 70 * SECOND
    assert flaky.sync(65 * SECOND).wake_at == 70 * SECOND  # too early: nothing yet
    second = flaky.sync(70 * SECOND).create
    assert len(second) == 1
    reaction = flaky.pod_finished(second[0].pod.uid, "Failed", 100 * SECOND)
    assert reaction.wake_at == 120 * SECOND
    third = flaky.sync(120 * SECOND).create
    reaction = flaky.pod_finished(third[0].pod.uid, "Succeeded", 130 * SECOND)
    assert len(reaction.create) == 1 and reaction.wake_at is None  # a success resets backoff
    reaction = flaky.pod_finished(reaction.create[0].pod.uid, "Failed", 140 * SECOND)
    assert (flaky.failed, flaky.condition, flaky.reason) == (3, "Failed", "BackoffLimitExceeded")
    assert reaction.create == [] and reaction.delete == []


def test_a_failed_job_deletes_its_active_pods_and_a_vanished_pod_is_a_failure(tmp_path):
    workload = load_workload(write(tmp_path / "w.json", [
        job("batch", parallelism=3, completions=6, backoffLimit=0)]))
    [batch] = workload.controllers
    a, b, c = workload.arrivals
    reaction = batch.pod_deleted(a.pod.uid, 5 * SECOND)  # evicted, say
    assert batch.condition == "Failed"
    assert reaction.delete == [f"default/{b.pod.name}", f"default/{c.pod.name}"]
    assert batch.pod_finished(b.pod.uid, "Succeeded", 6 * SECOND).create == []


def test_indexed_job_one_success_per_index(tmp_path):
    workload = load_workload(write(tmp_path / "w.json", [
        job("idx", parallelism=2, completions=3, completionMode="Indexed")]))
    [idx] = workload.controllers
    assert names(workload.arrivals) == ["idx-0-fj9lj", "idx-1-x4crq"]
    zero, one = workload.arrivals
    assert zero.raw["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == "0"
    assert one.raw["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] == "1"
    assert [a.pod.name.rsplit("-", 1)[0] for a in
            idx.pod_finished(zero.pod.uid, "Succeeded", 60 * SECOND).create] == ["idx-2"]
    assert idx.pod_finished(one.pod.uid, "Failed", 70 * SECOND).wake_at == 80 * SECOND
    assert [a.pod.name.rsplit("-", 1)[0] for a in idx.sync(80 * SECOND).create] == ["idx-1"]


def test_job_without_completions_is_a_work_queue(tmp_path):
    workload = load_workload(write(tmp_path / "w.json", [job("queue", parallelism=3)]))
    [queue] = workload.controllers
    assert len(workload.arrivals) == 3
    log = _run_job(queue, workload.arrivals, lambda i: "Succeeded")
    assert [created for _, _, created in log] == [[], [], []]  # no new pod after a success
    assert queue.condition == "Complete" and queue.succeeded == 3


def test_job_defaults_and_deadline(tmp_path):
    workload = load_workload(write(tmp_path / "w.json", [
        job("once", activeDeadlineSeconds=600), job("later", suspend=True)]))
    once, later = workload.controllers
    assert (once.parallelism, once.completions, once.backoff_limit) == (1, 1, 6)
    assert names(workload.arrivals) == [workload.arrivals[0].pod.name]  # suspended: none
    assert any("suspended" in w for w in workload.warnings)
    assert once.start(0, []).wake_at == 600 * SECOND
    reaction = once.sync(600 * SECOND)
    assert (once.condition, once.reason) == ("Failed", "DeadlineExceeded")
    assert reaction.delete == [f"default/{workload.arrivals[0].pod.name}"]


@pytest.mark.parametrize(("obj", "error"), [
    (job("etl", run_for=None), r"its pods need a lifetime: set the annotation "
                               r"simulator.extender/run-for"),
    (job("etl", restart="Always"), "restartPolicy must be Never or OnFailure"),
    (job("etl", parallelism=2, completionMode="Indexed"),
     "completions is required when completionMode"),
    (job("etl", selector={"matchLabels": {"app": "etl"}}), "without manualSelector"),
])
def test_invalid_jobs(tmp_path, obj, error):
    with pytest.raises(WorkloadError, match=error) as info:
        load_workload(write(tmp_path / "w.json", [obj]))
    assert "(Job default/etl)" in str(info.value)


# -- DaemonSet ----------------------------------------------------------------------------------


def test_daemonset_one_pinned_pod_per_eligible_node(tmp_path):
    workload = load_workload(write(tmp_path / "w.json", [
        daemonset("agent", nodeSelector={"kubernetes.io/os": "linux"})]))
    assert workload.arrivals == []  # nodes are the cluster's: created at start
    [agent] = workload.controllers
    assert isinstance(agent, DaemonSetController)
    linux = {"kubernetes.io/os": "linux"}
    nodes = [
        view(node("n1", "4", "8Gi", labels=linux)),
        view(node("n2", "4", "8Gi", labels=linux,
                  taints=[{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}])),
        view(node("n3", "4", "8Gi", labels=linux, unschedulable=True)),  # cordoned: tolerated
        view(node("n4", "4", "8Gi")),  # no os label
    ]
    reaction = agent.start(0, nodes)
    assert names(reaction.create) == ["agent-lq85b", "agent-99m7f"]
    on_n1 = reaction.create[0]
    spec = on_n1.raw["spec"]
    assert spec["affinity"] == {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}
    assert spec["tolerations"] == list(DAEMON_TOLERATIONS)
    assert spec["nodeSelector"] == linux
    meta = on_n1.raw["metadata"]
    assert meta["labels"] == {"app": "agent", "controller-revision-hash": agent.revision,
                              "pod-template-generation": "1"}
    assert meta["ownerReferences"][0]["kind"] == "DaemonSet"
    assert on_n1.pod.required_affinity.matches(nodes[0].labels, "n1")
    assert not on_n1.pod.required_affinity.matches(nodes[0].labels, "n3")
    assert reaction.create[1].raw["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0][
        "matchFields"][0]["values"] == ["n3"]

    # n5 joins; n1 gets an untolerated NoExecute taint; n3 (its pod still pending) leaves.
    agent.pod_bound(on_n1.pod.uid, "n1", 1)
    later = [view(node("n1", "4", "8Gi", labels=linux,
                       taints=[{"key": "gpu", "value": "broken", "effect": "NoExecute"}])),
             nodes[1], nodes[3], view(node("n5", "4", "8Gi", labels=linux))]
    reaction = agent.nodes_changed(later, 60 * SECOND)
    assert names(reaction.create) == ["agent-tgnnj"]
    assert reaction.delete == [f"kube-system/{on_n1.pod.name}", "kube-system/agent-99m7f"]
    # Its pod on n5 is evicted: the controller makes another for n5.
    again = agent.pod_deleted(reaction.create[0].pod.uid, 90 * SECOND)
    assert len(again.create) == 1 and again.create[0].raw["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0][
        "matchFields"][0]["values"] == ["n5"]


def test_daemonset_tolerations_are_added_once_and_host_network_adds_one(tmp_path):
    own = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}
    workload = load_workload(write(tmp_path / "w.json", [
        daemonset("net", hostNetwork=True, tolerations=[own])]))
    [arrival] = workload.controllers[0].start(0, [view(node("n1", "4", "8Gi"))]).create
    tolerations = arrival.raw["spec"]["tolerations"]
    assert tolerations[0] == own and len(tolerations) == 7
    assert tolerations[-1]["key"] == "node.kubernetes.io/network-unavailable"


# -- lifetimes, node events, owners in the cluster -----------------------------------------------


def test_pod_lifetimes_from_annotations(tmp_path):
    short = pod("short", "1")
    short["metadata"]["annotations"] = {"simulator.extender/run-for": "90s",
                                        "simulator.extender/finish": "Failed"}
    workload = load_workload(write(tmp_path / "w.json", [short, pod("forever", "1")]))
    assert [(a.pod.name, a.run_for, a.finish, a.controller) for a in workload.arrivals] == [
        ("short", 90 * SECOND, "Failed", None), ("forever", None, "Succeeded", None)]


@pytest.mark.parametrize(("annotations", "error"), [
    ({"simulator.extender/run-for": "-5"}, "negative duration"),
    ({"simulator.extender/finish": "Crashed"}, "'Crashed' is not one of Succeeded, Failed"),
])
def test_invalid_lifetimes(tmp_path, annotations, error):
    bad = pod("bad", "1")
    bad["metadata"]["annotations"] = annotations
    with pytest.raises(WorkloadError, match=f"Pod default/bad: annotation .*{error}"):
        load_workload(write(tmp_path / "w.json", [bad]))


def test_cordon_and_uncordon_events(tmp_path):
    workload = load_workload(write(tmp_path / "w.json", [
        {"kind": "SimulationEvent", "at": "1m", "cordonNode": "n1"},
        {"kind": "SimulationEvent", "at": "2m", "uncordonNode": "n1"}]))
    assert [(e.action, e.target, e.time // SECOND) for e in workload.events] == [
        ("cordonNode", "n1", 60), ("uncordonNode", "n1", 120)]
    with pytest.raises(WorkloadError, match="cordonNode needs a node name"):
        load_workload(write(tmp_path / "w.json", [
            {"kind": "SimulationEvent", "at": 1, "cordonNode": {"name": "n1"}}]))


def test_priority_classes_in_a_workload_are_objects_created_over_time(tmp_path):
    workload = load_workload(write(tmp_path / "w.json", [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": "high", "namespace": "ignored"}, "value": 1000}]))
    [created] = workload.objects
    assert (created.kind, created.obj.metadata.name, created.obj.value) == ("PriorityClass",
                                                                           "high", 1000)
    assert created.obj.metadata.namespace == ""


@pytest.mark.parametrize("seed", range(5))
def test_default_spreading_finds_the_replica_set(tmp_path, seed):
    """PodTopologySpread's system default constraints select the pods of the pod's owner:
    the ReplicaSet reaches the cluster state, so 4 replicas on 4 equal nodes spread one per
    node (with no owner, every node would score the same and ties fall where the seed says)."""
    cluster = [node(f"n{i}", "4", "8Gi", labels={"topology.kubernetes.io/zone": f"z{i % 2}"})
               for i in range(4)]
    spread_only = {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
                   "plugins": {"score": {"enabled": [{"name": "PodTopologySpread", "weight": 2}]}}}
    _, report = simulate(tmp_path, cluster, [deployment("web", 4)], spread_only, seed=seed)
    placed = [p["node"] for p in by_name(report).values()]
    assert sorted(placed) == ["n0", "n1", "n2", "n3"]


def test_controllers_in_the_loop_jobs_complete_and_daemon_sets_follow_nodes(tmp_path):
    """The loop runs the controllers' hooks: a Job of 4 completions, 2 at a time, each pod
    running 1 min; a DaemonSet on every untainted node, and on the node added at 30 s."""
    cluster = [node("n1", "4", "8Gi"),
               node("n2", "4", "8Gi", taints=[{"key": "infra", "effect": "NoSchedule"}])]
    n3 = node("n3", "4", "8Gi")
    workload = [job("etl", parallelism=2, completions=4), daemonset("agent"),
                {"kind": "SimulationEvent", "at": "30s", "addNode": n3}]
    _, report = simulate(tmp_path, cluster, workload)
    pods = by_name(report)
    etl = sorted((p["arrivedAtSeconds"], p["status"], p["finishedAtSeconds"])
                 for n, p in pods.items() if n.startswith("etl-"))
    assert [(arrived, status) for arrived, status, _ in etl] == [
        (0.0, "Succeeded"), (0.0, "Succeeded"), (60.001, "Succeeded"), (60.002, "Succeeded")]
    agents = sorted((p["node"], p["arrivedAtSeconds"]) for n, p in pods.items()
                    if n.startswith("agent-"))
    assert agents == [("n1", 0.0), ("n3", 30.0)]


def test_limits_without_requests_are_defaulted_as_the_api_server_does(tmp_path) -> None:
    from extender.model.numa import qos_class
    from extender.simulator.workload import load_workload

    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "only-limits"},
           "spec": {"containers": [{"name": "c", "resources": {
               "limits": {"cpu": "500m", "memory": "256Mi"}}}]}}
    path = tmp_path / "w.json"
    path.write_text(__import__("json").dumps([pod]))
    (arrival,) = load_workload(path).arrivals
    assert arrival.pod.requests.milli_cpu == 500
    assert arrival.pod.requests.memory == 256 * 1024 * 1024
    assert arrival.raw["spec"]["containers"][0]["resources"]["requests"] == {
        "cpu": "500m", "memory": "256Mi"}
    assert qos_class(k8s.convert(arrival.raw, k8s.Pod).spec) == "Guaranteed"
