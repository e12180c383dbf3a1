"""Mistyped field names of the simulator's and the snapshot's objects are warned about (with
a "did you mean"), from the Kubernetes schema's field names (`extender/data/k8s_fields.json`,
`extender.state.fieldcheck`); the run still happens, and kubectl's own output warns nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from extender.cli import main
from extender.simulator.workload import load_workload
from extender.state import fieldcheck
from extender.state.snapshot import iter_objects, load_snapshot, read_documents

from .helpers import DEFAULTS, node, write

ROOT = Path(__file__).resolve().parents[2]

WORKLOAD = """\
apiVersion: v1
kind: Pod
metadata: {name: web-0, namespace: default}
spec:
  containers: [{name: c, image: i, resourcse: {requests: {cpu: "3"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: web-1}
spec:
  nodeSelectr: {disk: ssd}
  containers: [{name: c, image: i, resources: {requests: {cpu: 100m, example.com/gpu: "1"}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replica: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api, "odd key": x}}
    spec: {containers: [{name: c, image: i}]}
"""

PDB = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
       "metadata": {"name": "api", "namespace": "default"},
       "spec": {"minAvailabel": 1, "selector": {"matchLabels": {"app": "api"}}}}

EXPECTED_WORKLOAD = [
    "w.yaml: [0] Pod default/web-0: spec.containers[0].resourcse: unknown field "
    "(did you mean resources?)",
    "w.yaml: [1] Pod default/web-1: spec.nodeSelectr: unknown field "
    "(did you mean nodeSelector?)",
    "w.yaml: [2] Deployment default/api: spec.replica: unknown field "
    "(did you mean replicas?)",
]
EXPECTED_CLUSTER = ("c.json: PodDisruptionBudget default/api: spec.minAvailabel: unknown field "
                    "(did you mean minAvailable?)")


def test_the_four_typos_warn_and_the_run_still_happens(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # relative paths: the warnings name the files as given
    Path("w.yaml").write_text(WORKLOAD)
    Path("policy.json").write_text(json.dumps(DEFAULTS))
    write(tmp_path / "c.json", [node("n1", "4", "8Gi"), PDB])
    assert main(["simulate", "--cluster", "c.json", "--workload", "w.yaml",
                 "--policy", "policy.json", "--report", "r.json", "--no-progress"]) == 0
    err = capsys.readouterr().err
    report = json.loads(Path("r.json").read_text())
    unknown = [w for w in report["warnings"] if "unknown field" in w]
    assert unknown == [EXPECTED_CLUSTER, *EXPECTED_WORKLOAD]
    for warning in unknown:
        assert f"warning: {warning}\n" in err
    # The run happened, on what the model read (the typos' fields dropped, as before).
    assert report["totals"]["pods"] == 3


def test_snapshot_warnings_from_json_and_yaml(tmp_path: Path) -> None:
    bad_node = node("n1", "4", "8Gi")
    bad_node["spec"]["unschedulabel"] = True
    bad_node["status"]["capacty"] = {"cpu": "4"}
    items = [bad_node, PDB]
    for path in (tmp_path / "c.json", tmp_path / "c.yaml"):
        if path.suffix == ".json":
            write(path, items)
        else:
            path.write_text(yaml.safe_dump_all(items))
        warnings: list[str] = []
        state = load_snapshot(path, warnings=warnings)
        assert list(state.nodes) == ["n1"]
        assert warnings == [
            f"{path}: Node n1: spec.unschedulabel: unknown field (did you mean unschedulable?)",
            f"{path}: Node n1: status.capacty: unknown field (did you mean capacity?)",
            f"{path}: PodDisruptionBudget default/api: spec.minAvailabel: unknown field "
            "(did you mean minAvailable?)"]
        load_snapshot(path)  # without a list: no check, and no error


def test_free_form_maps_and_other_api_versions_are_not_flagged() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "p", "labels": {"anything": "x"}, "annotations": {"a/b": "c"},
                        "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]},
           "spec": {"nodeSelector": {"zone": "a"}, "overhead": {"cpu": "1"},
                    "containers": [{"name": "c", "resources": {"limits": {"x/y": "1"}}}]},
           "status": {"allocatedResources": {"cpu": "1"}}}
    assert fieldcheck.unknown_fields(pod) == []
    assert fieldcheck.raw_unknown_fields(json.dumps(pod).encode(), "Pod") == []
    old = {"apiVersion": "apps/v1beta1", "kind": "Deployment", "spec": {"replica": 1}}
    assert fieldcheck.unknown_fields(old) == []
    assert fieldcheck.unknown_fields({"kind": "Widget", "spec": {"x": 1}}) == []
    # A value of another shape than the schema's is the loader's business, not a typo.
    assert fieldcheck.raw_unknown_fields(b'{"kind":"Pod","spec":{"containers":"no"}}',
                                         "Pod") == []


# A Pod and a Node as `kubectl get -o yaml` prints them (a kind cluster, v1.33).
KUBECTL_POD = """\
apiVersion: v1
kind: Pod
metadata:
  annotations:
    kubectl.kubernetes.io/restartedAt: "2025-05-01T10:00:00Z"
  creationTimestamp: "2025-05-01T10:00:01Z"
  generateName: web-7d4b9c8f6d-
  generation: 1
  labels:
    app: web
    pod-template-hash: 7d4b9c8f6d
  managedFields:
  - apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:generateName: {}
        f:labels:
          .: {}
          f:app: {}
        f:ownerReferences:
          .: {}
          k:{"uid":"0b6d6a43-5f1c-4a38-9f3e-1f8b2c1d0e11"}: {}
      f:spec:
        f:containers:
          k:{"name":"web"}:
            .: {}
            f:image: {}
            f:resources:
              .: {}
              f:requests:
                .: {}
                f:cpu: {}
    manager: kube-controller-manager
    operation: Update
    time: "2025-05-01T10:00:01Z"
  - apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:status:
        f:conditions:
          k:{"type":"Ready"}:
            .: {}
            f:status: {}
    manager: kubelet
    operation: Update
    subresource: status
    time: "2025-05-01T10:00:05Z"
  name: web-7d4b9c8f6d-x2x9k
  namespace: default
  ownerReferences:
  - apiVersion: apps/v1
    blockOwnerDeletion: true
    controller: true
    kind: ReplicaSet
    name: web-7d4b9c8f6d
    uid: 0b6d6a43-5f1c-4a38-9f3e-1f8b2c1d0e11
  resourceVersion: "1234"
  uid: 5a0c7e52-7d0b-4c1e-9a61-3b2f0e6f8c21
spec:
  affinity:
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - podAffinityTerm:
          labelSelector:
            matchLabels:
              app: web
          topologyKey: kubernetes.io/hostname
        weight: 100
  containers:
  - image: nginx:1.27
    imagePullPolicy: IfNotPresent
    name: web
    ports:
    - containerPort: 80
      protocol: TCP
    readinessProbe:
      failureThreshold: 3
      httpGet:
        path: /
        port: 80
        scheme: HTTP
      periodSeconds: 10
      successThreshold: 1
      timeoutSeconds: 1
    resources:
      limits:
        memory: 256Mi
      requests:
        cpu: 100m
        memory: 128Mi
    terminationMessagePath: /dev/termination-log
    terminationMessagePolicy: File
    volumeMounts:
    - mountPath: /var/run/secrets/kubernetes.io/serviceaccount
      name: kube-api-access-abcde
      readOnly: true
  dnsPolicy: ClusterFirst
  enableServiceLinks: true
  nodeName: kind-worker
  nodeSelector:
    kubernetes.io/os: linux
  preemptionPolicy: PreemptLowerPriority
  priority: 0
  restartPolicy: Always
  schedulerName: default-scheduler
  securityContext: {}
  serviceAccount: default
  serviceAccountName: default
  terminationGracePeriodSeconds: 30
  tolerations:
  - effect: NoExecute
    key: node.kubernetes.io/not-ready
    operator: Exists
    tolerationSeconds: 300
  topologySpreadConstraints:
  - labelSelector:
      matchLabels:
        app: web
    maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: ScheduleAnyway
  volumes:
  - name: kube-api-access-abcde
    projected:
      defaultMode: 420
      sources:
      - serviceAccountToken:
          expirationSeconds: 3607
          path: token
      - configMap:
          items:
          - key: ca.crt
            path: ca.crt
          name: kube-root-ca.crt
      - downwardAPI:
          items:
          - fieldRef:
              apiVersion: v1
              fieldPath: metadata.namespace
            path: namespace
status:
  conditions:
  - lastProbeTime: null
    lastTransitionTime: "2025-05-01T10:00:05Z"
    status: "True"
    type: Ready
  containerStatuses:
  - containerID: containerd://0123abcd
    image: docker.io/library/nginx:1.27
    imageID: docker.io/library/nginx@sha256:0123
    lastState: {}
    name: web
    ready: true
    restartCount: 0
    started: true
    state:
      running:
        startedAt: "2025-05-01T10:00:03Z"
    volumeMounts:
    - mountPath: /var/run/secrets/kubernetes.io/serviceaccount
      name: kube-api-access-abcde
      readOnly: true
      recursiveReadOnly: Disabled
  hostIP: 172.18.0.3
  hostIPs:
  - ip: 172.18.0.3
  phase: Running
  podIP: 10.244.1.5
  podIPs:
  - ip: 10.244.1.5
  qosClass: Burstable
  startTime: "2025-05-01T10:00:01Z"
"""

KUBECTL_NODE = """\
apiVersion: v1
kind: Node
metadata:
  annotations:
    kubeadm.alpha.kubernetes.io/cri-socket: unix:///run/containerd/containerd.sock
    node.alpha.kubernetes.io/ttl: "0"
    volumes.kubernetes.io/controller-managed-attach-detach: "true"
  creationTimestamp: "2025-05-01T09:00:00Z"
  labels:
    beta.kubernetes.io/arch: amd64
    kubernetes.io/hostname: kind-worker
    topology.kubernetes.io/zone: a
  managedFields:
  - apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:labels:
          f:topology.kubernetes.io/zone: {}
    manager: kubectl-label
    operation: Update
    time: "2025-05-01T09:01:00Z"
  name: kind-worker
  resourceVersion: "999"
  uid: 8f0e1a52-1111-4c1e-9a61-3b2f0e6f8c21
spec:
  podCIDR: 10.244.1.0/24
  podCIDRs:
  - 10.244.1.0/24
  providerID: kind://docker/kind/kind-worker
  taints:
  - effect: NoSchedule
    key: dedicated
    value: web
status:
  addresses:
  - address: 172.18.0.3
    type: InternalIP
  - address: kind-worker
    type: Hostname
  allocatable:
    cpu: "8"
    ephemeral-storage: 100Gi
    hugepages-2Mi: "0"
    memory: 16Gi
    pods: "110"
  capacity:
    cpu: "8"
    ephemeral-storage: 100Gi
    memory: 16Gi
    pods: "110"
  conditions:
  - lastHeartbeatTime: "2025-05-01T10:00:00Z"
    lastTransitionTime: "2025-05-01T09:00:00Z"
    message: kubelet is posting ready status
    reason: KubeletReady
    status: "True"
    type: Ready
  daemonEndpoints:
    kubeletEndpoint:
      Port: 10250
  features:
    supplementalGroupsPolicy: true
  images:
  - names:
    - docker.io/library/nginx@sha256:0123
    - docker.io/library/nginx:1.27
    sizeBytes: 72000000
  nodeInfo:
    architecture: amd64
    bootID: 1f2e3d4c
    containerRuntimeVersion: containerd://2.0.3
    kernelVersion: 6.8.0
    kubeProxyVersion: ""
    kubeletVersion: v1.33.1
    machineID: 0123
    operatingSystem: linux
    osImage: Debian GNU/Linux 12 (bookworm)
    systemUUID: 4567
  runtimeHandlers:
  - features:
      recursiveReadOnlyMounts: true
      userNamespaces: true
    name: runc
"""


def test_kubectl_output_gives_no_warning(tmp_path: Path) -> None:
    path = tmp_path / "kubectl.yaml"
    path.write_text(KUBECTL_NODE + "---\n" + KUBECTL_POD)
    warnings: list[str] = []
    state = load_snapshot(path, warnings=warnings)
    assert (list(state.nodes), len(state.pods)) == (["kind-worker"], 1)
    assert warnings == []
    as_json = tmp_path / "kubectl.json"
    write(as_json, [yaml.safe_load(KUBECTL_NODE), yaml.safe_load(KUBECTL_POD)])
    load_snapshot(as_json, warnings=warnings)
    assert warnings == []
    # The same Pod with one typo: found on both paths.
    typo = KUBECTL_POD.replace("  dnsPolicy:", "  dnsPolicyy:")
    assert fieldcheck.unknown_fields(yaml.safe_load(typo)) == [
        ("spec.dnsPolicyy", " (did you mean dnsPolicy?)")]


def _shipped_files() -> list[Path]:
    found = [p for p in sorted((ROOT / "config" / "examples").rglob("*"))
             if p.suffix in (".json", ".yaml", ".yml")]
    found += [ROOT / "extender" / "data" / "cluster.json", ROOT / "tests" / "fixtures" / "cluster.json"]
    return found


@pytest.mark.parametrize("path", _shipped_files(), ids=lambda p: p.name)
def test_shipped_examples_give_no_warning(path: Path) -> None:
    for obj in iter_objects(read_documents(path)):
        for action in ("addNode", "updateNode"):  # a workload's events carry Nodes
            if isinstance(obj.get(action), dict):
                assert fieldcheck.unknown_fields(obj[action], "Node") == [], (path, action)
        assert fieldcheck.unknown_fields(obj) == [], (path, obj.get("metadata"))


def test_example_workloads_load_without_warnings() -> None:
    for name in ("workload.yaml", "gang-workload.yaml", "quota-workload.yaml"):
        workload = load_workload(ROOT / "config" / "examples" / name)
        assert [w for w in workload.warnings if "unknown field" in w] == [], name


def test_regenerating_gives_the_committed_file() -> None:
    pytest.importorskip("kubernetes_validate", reason="tools/gen_k8s_fields.py needs "
                        "kubernetes_validate (a test dependency)")
    from tools import gen_k8s_fields

    committed = (ROOT / "extender" / "data" / fieldcheck.FIELDS_FILE).read_text(encoding="utf-8")
    assert gen_k8s_fields.render(gen_k8s_fields.build(gen_k8s_fields.newest_version())) \
        == committed, "stale: run python -m tools.gen_k8s_fields"
