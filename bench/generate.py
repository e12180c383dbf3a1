"""Deterministic generator of realistic kube-scheduler extender payloads.

    python -m bench.generate --out DIR --nodes 5000 --pods 150000 [--seed 42]
        [--sizes 100,500,1000,5000] [--forms names,nodes]

writes into DIR:

* ``cluster.json``: a ``kubectl get nodes,pods,poddisruptionbudgets,priorityclasses -A -o json``
  style ``List`` (items carry kind/apiVersion): nodes spread over three zones and a dozen
  instance types, some GPU/spot-tainted, some cordoned or NotReady; running pods bound to
  nodes with requests summing below allocatable; PodDisruptionBudgets and PriorityClasses;
* request bodies in kube-scheduler's wire format (objects without kind/apiVersion):
  ``filter-{names,nodes}-N.json`` (the same ``ExtenderArgs`` body serves prioritize),
  ``filter-names-N-spread.json`` (a pod with zone spread and anti-affinity),
  ``filter-nodes-N-cold.json`` (every node one resourceVersion ahead of the snapshot),
  ``preempt-{names,nodes}-N.json`` (``NodeNameToMetaVictims`` / ``NodeNameToVictims``) and
  ``bind.jsonl`` (one ``ExtenderBindingArgs`` per line, distinct pods);
* ``manifest.json``: what was written, with sizes.

Every object is generated from its own seeded ``random.Random`` (``f"{seed}:node:{i}"`` …),
so any node, or the pods of any node, can be regenerated on its own and the output is
byte-identical across runs and machines.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import msgspec

from extender import cliargs
from extender.files import replacing

JSON = dict[str, Any]

DEFAULT_SEED = 42
DEFAULT_SIZES: tuple[int, ...] = (100, 500, 1000, 5000)
FORMS: tuple[str, ...] = ("names", "nodes")
REGION = "us-east-1"
ZONES: tuple[str, ...] = ("us-east-1a", "us-east-1b", "us-east-1c")
NOW = "2026-11-20T10:00:00Z"
KUBELET_VERSION = "v1.31.2-eks-7f9249a"
POD_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s' utilrand alphabet
GIB = 1024**3

_encoder = msgspec.json.Encoder()


# --------------------------------------------------------------------------- catalogue


@dataclass(frozen=True)
class InstanceType:
    name: str
    cpu: int
    memory_gib: int
    max_pods: int
    gpus: int
    weight: int


INSTANCE_TYPES: tuple[InstanceType, ...] = (
    InstanceType("m5.xlarge", 4, 16, 58, 0, 18),
    InstanceType("m5.2xlarge", 8, 32, 58, 0, 18),
    InstanceType("m5.4xlarge", 16, 64, 234, 0, 10),
    InstanceType("m6i.8xlarge", 32, 128, 234, 0, 6),
    InstanceType("c5.4xlarge", 16, 32, 234, 0, 10),
    InstanceType("c6i.2xlarge", 8, 16, 58, 0, 8),
    InstanceType("r5.2xlarge", 8, 64, 58, 0, 10),
    InstanceType("r6i.4xlarge", 16, 128, 234, 0, 6),
    InstanceType("t3.large", 2, 8, 35, 0, 4),
    InstanceType("g5.2xlarge", 8, 32, 58, 1, 6),
    InstanceType("p3.8xlarge", 32, 244, 234, 4, 4),
)


@dataclass(frozen=True)
class PriorityClass:
    name: str
    value: int
    description: str


PRIORITY_CLASSES: tuple[PriorityClass, ...] = (
    PriorityClass("system-cluster-critical", 2000000000, "Used for system critical pods."),
    PriorityClass("system-node-critical", 2000001000, "Used for system critical pods."),
    PriorityClass("critical", 1000000, "Business-critical jobs that may preempt anything."),
    PriorityClass("high", 10000, "Latency-sensitive services."),
    PriorityClass("standard", 1000, "Default for services."),
    PriorityClass("batch-low", 100, "Best-effort batch work, first to be preempted."),
)
_APP_PRIORITIES: tuple[tuple[str | None, int, float], ...] = (
    ("standard", 1000, 0.45),
    (None, 0, 0.20),
    ("batch-low", 100, 0.25),
    ("high", 10000, 0.10),
)

NAMESPACES: tuple[str, ...] = (
    "shop", "payments", "search", "ads", "analytics", "ml-training", "ml-serving", "data",
    "auth", "billing", "catalog", "checkout", "inventory", "messaging", "monitoring",
    "logging", "ingress", "batch", "reporting", "notifications", "media", "recs", "geo",
    "platform",
)
_WORDS: tuple[str, ...] = (
    "api", "web", "worker", "cache", "gateway", "indexer", "scheduler", "frontend", "backend",
    "consumer", "producer", "aggregator", "exporter", "sync", "router", "renderer", "resizer",
    "etl", "feature", "ranker", "scorer", "notifier", "mailer", "auditor", "ledger", "session",
)

_SYSTEM_IMAGES: tuple[tuple[str, str, int], ...] = (
    ("602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/pause", "3.10", 299_513),
    ("602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/kube-proxy", "v1.31.2-minimal-eksbuild.3", 37_441_202),
    ("602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon-k8s-cni", "v1.19.0-eksbuild.1", 46_519_201),
    ("602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon-k8s-cni-init", "v1.19.0-eksbuild.1", 60_223_811),
    ("602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/aws-ebs-csi-driver", "v1.37.0", 36_874_112),
    ("602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/csi-node-driver-registrar", "v2.12.0-eks-1-31-7", 9_452_115),
)
_APP_REGISTRIES: tuple[str, ...] = (
    "docker.io/library", "quay.io/prometheus", "ghcr.io/acme-corp", "registry.k8s.io",
    "123456789012.dkr.ecr.us-east-1.amazonaws.com/acme", "public.ecr.aws/bitnami",
    "nvcr.io/nvidia", "gcr.io/distroless",
)
_APP_IMAGE_COUNT = 400


@dataclass(frozen=True)
class Image:
    repo: str
    tag: str
    size: int

    @property
    def ref(self) -> str:
        return f"{self.repo}:{self.tag}"

    def digest(self) -> str:
        return hashlib.sha256(self.ref.encode()).hexdigest()

    def node_entry(self) -> JSON:
        return {"names": [f"{self.repo}@sha256:{self.digest()}", self.ref], "sizeBytes": self.size}


@lru_cache(maxsize=8)
def image_pool(seed: int) -> tuple[Image, ...]:
    """System images first, then a deterministic pool of application images."""
    rng = random.Random(f"{seed}:images")
    pool = [Image(r, t, s) for r, t, s in _SYSTEM_IMAGES]
    for k in range(_APP_IMAGE_COUNT):
        registry = _APP_REGISTRIES[k % len(_APP_REGISTRIES)]
        name = f"{rng.choice(_WORDS)}-{rng.choice(_WORDS)}-{k}"
        tag = f"v{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 99)}"
        pool.append(Image(f"{registry}/{name}", tag, rng.randint(8, 1800) * 1_000_000 + rng.randint(0, 999_999)))
    return tuple(pool)


def _uid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _hex(rng: random.Random, bits: int) -> str:
    return f"{rng.getrandbits(bits):0{bits // 4}x}"


def _ts(day: int, hour: int = 8, minute: int = 0, second: int = 0) -> str:
    """A timestamp in November 2026 (day 1..20)."""
    return f"2026-11-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}Z"


# --------------------------------------------------------------------------- nodes


@dataclass(frozen=True)
class NodeTraits:
    index: int
    name: str
    zone: str
    itype: InstanceType
    spot: bool
    spot_tainted: bool
    cordoned: bool
    ready: bool

    @property
    def gpu(self) -> bool:
        return self.itype.gpus > 0

    @property
    def schedulable(self) -> bool:
        return self.ready and not self.cordoned


def node_ip(i: int) -> str:
    k = i // len(ZONES)
    return f"10.0.{16 * (i % len(ZONES)) + (k // 250) % 16}.{k % 250 + 4}"


def node_name(i: int) -> str:
    """EKS-style node name, unique per index: ip-10-<zone octet>-<x>-<y>.ec2.internal."""
    zone, k = i % len(ZONES), i // len(ZONES)
    return f"ip-10-{16 * (zone + 1) + k // 62500}-{(k // 250) % 250}-{k % 250 + 4}.ec2.internal"


@lru_cache(maxsize=65536)
def node_traits(seed: int, i: int) -> NodeTraits:
    rng = random.Random(f"{seed}:traits:{i}")
    itype = rng.choices(INSTANCE_TYPES, weights=[t.weight for t in INSTANCE_TYPES])[0]
    spot = itype.gpus == 0 and rng.random() < 0.25
    r = rng.random()
    return NodeTraits(
        index=i,
        name=node_name(i),
        zone=ZONES[i % len(ZONES)],
        itype=itype,
        spot=spot,
        spot_tainted=spot and rng.random() < 0.5,
        cordoned=r < 0.01,
        ready=not (0.01 <= r < 0.015),
    )


def _node_labels(t: NodeTraits, nodegroup: str) -> dict[str, str]:
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/instance-type": t.itype.name,
        "beta.kubernetes.io/os": "linux",
        "eks.amazonaws.com/capacityType": "SPOT" if t.spot else "ON_DEMAND",
        "eks.amazonaws.com/nodegroup": nodegroup,
        "eks.amazonaws.com/nodegroup-image": "ami-0c2d5e8d4a1b3f6e7",
        "eks.amazonaws.com/sourceLaunchTemplateId": "lt-0a1b2c3d4e5f60718",
        "eks.amazonaws.com/sourceLaunchTemplateVersion": "7",
        "failure-domain.beta.kubernetes.io/region": REGION,
        "failure-domain.beta.kubernetes.io/zone": t.zone,
        "k8s.io/cloud-provider-aws": "a94b1f0c2d6e8f7a9b0c1d2e3f4a5b6c",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": t.name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": t.itype.name,
        "topology.ebs.csi.aws.com/zone": t.zone,
        "topology.kubernetes.io/region": REGION,
        "topology.kubernetes.io/zone": t.zone,
    }
    if t.gpu:
        labels["nvidia.com/gpu.present"] = "true"
        labels["accelerator"] = "nvidia"
    if t.spot:
        labels["node.kubernetes.io/lifecycle"] = "spot"
    return labels


def _node_annotations(t: NodeTraits, ip: str, instance_id: str) -> dict[str, str]:
    return {
        "alpha.kubernetes.io/provided-node-ip": ip,
        "csi.volume.kubernetes.io/nodeid": f'{{"ebs.csi.aws.com":"{instance_id}"}}',
        "node.alpha.kubernetes.io/ttl": "0",
        "volumes.kubernetes.io/controller-managed-attach-detach": "true",
        "projectcalico.org/IPv4Address": f"{ip}/19",
        "projectcalico.org/IPv4IPIPTunnelAddr": f"192.168.{t.index % 250}.{t.index % 200 + 1}",
        "cluster-autoscaler.kubernetes.io/scale-down-disabled": "false",
        "node.kubernetes.io/exclude-from-external-load-balancers": "false",
        "karpenter.sh/registered": "true",
        "kubeadm.alpha.kubernetes.io/cri-socket": "unix:///run/containerd/containerd.sock",
        "prometheus.io/scrape": "true",
    }


def _node_taints(t: NodeTraits) -> list[JSON]:
    taints: list[JSON] = []
    if t.gpu:
        taints.append({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"})
    if t.spot_tainted:
        taints.append({"key": "node.kubernetes.io/lifecycle", "value": "spot", "effect": "NoSchedule"})
    if t.cordoned:
        taints.append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": _ts(19, 12)})
    if not t.ready:
        taints.append({"key": "node.kubernetes.io/not-ready", "effect": "NoExecute", "timeAdded": _ts(20, 9, 55)})
        taints.append({"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule", "timeAdded": _ts(20, 9, 55)})
    return taints


def _node_resources(t: NodeTraits) -> tuple[dict[str, str], dict[str, str]]:
    mem_ki = t.itype.memory_gib * 1024 * 1024 - 420_000
    reserved_cpu_m = 70 + 10 * t.itype.cpu
    reserved_mem_ki = 255 * 1024 + 11 * 1024 * t.itype.max_pods + 100 * 1024
    capacity = {
        "attachable-volumes-aws-ebs": "25",
        "cpu": str(t.itype.cpu),
        "ephemeral-storage": "104845292Ki",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": f"{mem_ki}Ki",
        "pods": str(t.itype.max_pods),
    }
    allocatable = {
        "attachable-volumes-aws-ebs": "25",
        "cpu": f"{t.itype.cpu * 1000 - reserved_cpu_m}m",
        "ephemeral-storage": "95551679124",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": f"{mem_ki - reserved_mem_ki}Ki",
        "pods": str(t.itype.max_pods),
    }
    if t.gpu:
        capacity["nvidia.com/gpu"] = allocatable["nvidia.com/gpu"] = str(t.itype.gpus)
    return capacity, allocatable


def node_allocatable(t: NodeTraits) -> tuple[int, int]:
    """(milli-cpu, bytes of memory) allocatable on a node, as its status reports."""
    _, alloc = _node_resources(t)
    return int(alloc["cpu"][:-1]), int(alloc["memory"][:-2]) * 1024


_CONDITIONS: tuple[tuple[str, str, str], ...] = (
    ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
)


def _node_conditions(t: NodeTraits, rng: random.Random, created: str) -> list[JSON]:
    beat = _ts(20, 9, rng.randint(55, 59), rng.randint(0, 59))
    conds: list[JSON] = [
        {"type": "NetworkUnavailable", "status": "False", "lastHeartbeatTime": created,
         "lastTransitionTime": created, "reason": "CalicoIsUp", "message": "Calico is running on this node"},
    ]
    for ctype, reason, message in _CONDITIONS:
        conds.append({"type": ctype, "status": "False", "lastHeartbeatTime": beat,
                      "lastTransitionTime": created, "reason": reason, "message": message})
    if t.ready:
        conds.append({"type": "Ready", "status": "True", "lastHeartbeatTime": beat,
                      "lastTransitionTime": created, "reason": "KubeletReady",
                      "message": "kubelet is posting ready status"})
    else:
        conds.append({"type": "Ready", "status": "Unknown", "lastHeartbeatTime": _ts(20, 9, 50),
                      "lastTransitionTime": _ts(20, 9, 55), "reason": "NodeStatusUnknown",
                      "message": "Kubelet stopped posting node status."})
    return conds


def _node_images(seed: int, rng: random.Random) -> list[JSON]:
    pool = image_pool(seed)
    n_system = len(_SYSTEM_IMAGES)
    count = rng.randint(20, 50)
    chosen = list(pool[:n_system]) + rng.sample(pool[n_system:], count - n_system)
    chosen.sort(key=lambda im: -im.size)  # kubelet reports images largest first
    return [im.node_entry() for im in chosen]


def _node_info(rng: random.Random, system_uuid: str) -> JSON:
    return {
        "machineID": _hex(rng, 128),
        "systemUUID": system_uuid,
        "bootID": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "kernelVersion": "5.10.227-219.884.amzn2.x86_64",
        "osImage": "Amazon Linux 2",
        "containerRuntimeVersion": "containerd://1.7.23",
        "kubeletVersion": KUBELET_VERSION,
        "kubeProxyVersion": KUBELET_VERSION,
        "operatingSystem": "linux",
        "architecture": "amd64",
    }


def make_node(seed: int, i: int) -> JSON:
    """A v1.Node as an informer cache holds it (no kind/apiVersion), 5–15 KB of JSON."""
    t = node_traits(seed, i)
    rng = random.Random(f"{seed}:node:{i}")
    k = i // len(ZONES)
    ip = node_ip(i)
    instance_id = f"i-0{_hex(rng, 64)[:16]}"
    created = _ts(rng.randint(1, 18), rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59))
    nodegroup = f"{t.itype.name.split('.')[0]}-{'spot' if t.spot else 'od'}-{t.zone[-1]}"
    capacity, allocatable = _node_resources(t)
    spec: JSON = {
        "podCIDR": f"192.168.{t.index % 250}.0/24",
        "podCIDRs": [f"192.168.{t.index % 250}.0/24"],
        "providerID": f"aws:///{t.zone}/{instance_id}",
    }
    if t.cordoned:
        spec["unschedulable"] = True
    taints = _node_taints(t)
    if taints:
        spec["taints"] = taints
    return {
        "metadata": {
            "name": t.name,
            "uid": _uid(rng),
            "resourceVersion": str(rng.randint(10_000_000, 99_999_999)),
            "creationTimestamp": created,
            "labels": _node_labels(t, nodegroup),
            "annotations": _node_annotations(t, ip, instance_id),
        },
        "spec": spec,
        "status": {
            "capacity": capacity,
            "allocatable": allocatable,
            "conditions": _node_conditions(t, rng, created),
            "addresses": [
                {"type": "InternalIP", "address": ip},
                {"type": "ExternalIP", "address": f"54.{rng.randint(1, 254)}.{rng.randint(1, 254)}.{rng.randint(1, 254)}"},
                {"type": "InternalDNS", "address": t.name},
                {"type": "Hostname", "address": t.name},
                {"type": "ExternalDNS", "address": f"ec2-54-{i % 250}-{k % 250}-1.compute-1.amazonaws.com"},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": _node_info(rng, f"ec2{_hex(rng, 64)[:5]}-{_hex(rng, 16)}-{_hex(rng, 16)}"),
            "images": _node_images(seed, rng),
            "runtimeHandlers": [
                {"name": "runc", "features": {"recursiveReadOnlyMounts": True, "userNamespaces": True}},
                {"name": "", "features": {"recursiveReadOnlyMounts": True, "userNamespaces": True}},
            ],
            "features": {"supplementalGroupsPolicy": True},
        },
    }


# --------------------------------------------------------------------------- apps and pods


@dataclass(frozen=True)
class App:
    index: int
    name: str
    namespace: str
    template_hash: str
    image: Image
    sidecar: bool
    priority_class: str | None
    priority: int
    port: int
    has_pdb: bool
    pdb_blocking: bool  # disruptionsAllowed == 0


def app_count(n_pods: int) -> int:
    return max(4, n_pods // 40)


@lru_cache(maxsize=200_000)
def make_app(seed: int, a: int) -> App:
    rng = random.Random(f"{seed}:app:{a}")
    pool = image_pool(seed)
    pclass, prio = rng.choices(
        [(c, p) for c, p, _ in _APP_PRIORITIES], weights=[w for _, _, w in _APP_PRIORITIES]
    )[0]
    has_pdb = rng.random() < 0.3
    return App(
        index=a,
        name=f"{rng.choice(_WORDS)}-{rng.choice(_WORDS)}-{a}",
        namespace=NAMESPACES[a % len(NAMESPACES)],
        template_hash="".join(rng.choice(POD_NAME_ALPHABET) for _ in range(10)),
        image=pool[len(_SYSTEM_IMAGES) + rng.randrange(_APP_IMAGE_COUNT)],
        sidecar=rng.random() < 0.4,
        priority_class=pclass,
        priority=prio,
        port=rng.choice((8080, 8443, 9090, 3000, 5000)),
        has_pdb=has_pdb,
        pdb_blocking=has_pdb and rng.random() < 0.2,
    )


def _pod_suffix(ordinal: int) -> str:
    """A 5-character suffix, unique for every ordinal below 27**5 (a bijection mod 27**5)."""
    n = (ordinal * 7919 + 12345) % 27**5
    chars = []
    for _ in range(5):
        n, r = divmod(n, 27)
        chars.append(POD_NAME_ALPHABET[r])
    return "".join(chars)


_DEFAULT_TOLERATIONS: tuple[JSON, ...] = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
)


def _api_access_volume(rng: random.Random) -> JSON:
    return {
        "name": f"kube-api-access-{''.join(rng.choice(POD_NAME_ALPHABET) for _ in range(5))}",
        "projected": {
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
            ],
            "defaultMode": 420,
        },
    }


def _resources(cpu_m: int, mem_mi: int, limits: bool) -> JSON:
    req = {"cpu": f"{cpu_m}m", "memory": f"{mem_mi}Mi"}
    if not limits:
        return {"requests": req}
    return {"limits": {"cpu": f"{cpu_m * 2}m", "memory": f"{mem_mi * 2}Mi"}, "requests": req}


def _container(name: str, image: str, resources: JSON, mount: str, port: int | None) -> JSON:
    c: JSON = {"name": name, "image": image}
    if port is not None:
        c["ports"] = [{"name": "http", "containerPort": port, "protocol": "TCP"}]
    c["env"] = [
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
        {"name": "LOG_LEVEL", "value": "info"},
    ]
    c["resources"] = resources
    c["volumeMounts"] = [{"name": mount, "readOnly": True, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]
    if port is not None:
        c["readinessProbe"] = {"httpGet": {"path": "/healthz", "port": port, "scheme": "HTTP"},
                               "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
    c["terminationMessagePath"] = "/dev/termination-log"
    c["terminationMessagePolicy"] = "File"
    c["imagePullPolicy"] = "IfNotPresent"
    return c


def _container_status(rng: random.Random, name: str, image: Image, started: str) -> JSON:
    return {
        "name": name,
        "state": {"running": {"startedAt": started}},
        "lastState": {},
        "ready": True,
        "restartCount": 0,
        "image": image.ref,
        "imageID": f"{image.repo}@sha256:{image.digest()}",
        "containerID": f"containerd://{_hex(rng, 256)}",
        "started": True,
    }


def _running_pod(seed: int, app: App, ordinal: int, t: NodeTraits, cpu_m: int, mem_mi: int) -> JSON:
    rng = random.Random(f"{seed}:pod:{ordinal}")
    name = f"{app.name}-{app.template_hash}-{_pod_suffix(ordinal)}"
    volume = _api_access_volume(rng)
    day = rng.randint(1, 19)
    created = _ts(day, rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59))
    started = _ts(day, 23, 59, 59) if day < 19 else created
    limits = rng.random() < 0.5
    containers = [_container("app", app.image.ref, _resources(cpu_m, mem_mi, limits), volume["name"], app.port)]
    statuses = [_container_status(rng, "app", app.image, started)]
    if app.sidecar:
        proxy = image_pool(seed)[len(_SYSTEM_IMAGES)]
        containers.append(_container("proxy", proxy.ref, _resources(10, 32, False), volume["name"], None))
        statuses.append(_container_status(rng, "proxy", proxy, started))
        containers[0]["resources"] = _resources(max(cpu_m - 10, 1), max(mem_mi - 32, 1), limits)
    spec: JSON = {
        "volumes": [volume],
        "containers": containers,
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default",
        "serviceAccount": "default",
        "nodeName": t.name,
        "securityContext": {},
        "schedulerName": "default-scheduler",
        "tolerations": list(_DEFAULT_TOLERATIONS),
        "priority": app.priority,
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
    }
    if app.priority_class is not None:
        spec["priorityClassName"] = app.priority_class
    if t.spot_tainted or t.gpu:
        spec["tolerations"] = [{"operator": "Exists", "effect": "NoSchedule"}, *_DEFAULT_TOLERATIONS]
    pod_ip = f"192.168.{t.index % 250}.{rng.randint(2, 254)}"
    return {
        "metadata": {
            "name": name,
            "generateName": f"{app.name}-{app.template_hash}-",
            "namespace": app.namespace,
            "uid": _uid(rng),
            "resourceVersion": str(rng.randint(10_000_000, 99_999_999)),
            "creationTimestamp": created,
            "labels": {"app": app.name, "pod-template-hash": app.template_hash, "team": app.namespace},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                 "name": f"{app.name}-{app.template_hash}", "uid": _uid(rng),
                                 "controller": True, "blockOwnerDeletion": True}],
        },
        "spec": spec,
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": c, "status": "True", "lastProbeTime": None, "lastTransitionTime": started}
                for c in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "hostIP": node_ip(t.index),
            "podIP": pod_ip,
            "podIPs": [{"ip": pod_ip}],
            "startTime": created,
            "containerStatuses": statuses,
            "qosClass": "Burstable",
        },
    }


def _daemon_pod(seed: int, ordinal: int, t: NodeTraits, which: int) -> JSON:
    """kube-proxy (which=0) or aws-node (which=1): system-node-critical daemonset pods."""
    rng = random.Random(f"{seed}:pod:{ordinal}")
    image = image_pool(seed)[1 + which]
    ds = ("kube-proxy", "aws-node")[which]
    name = f"{ds}-{_pod_suffix(ordinal)}"
    cpu_m = (100, 25)[which]
    volume = _api_access_volume(rng)
    return {
        "metadata": {
            "name": name,
            "generateName": f"{ds}-",
            "namespace": "kube-system",
            "uid": _uid(rng),
            "resourceVersion": str(rng.randint(10_000_000, 99_999_999)),
            "creationTimestamp": _ts(1, 8),
            "labels": {"k8s-app": ds, "controller-revision-hash": "6b7d9c5f4d", "pod-template-generation": "1"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": ds, "uid": _uid(rng),
                                 "controller": True, "blockOwnerDeletion": True}],
        },
        "spec": {
            "volumes": [volume],
            "containers": [_container(ds, image.ref, {"requests": {"cpu": f"{cpu_m}m"}}, volume["name"], None)],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": ds,
            "serviceAccount": ds,
            "nodeName": t.name,
            "hostNetwork": True,
            "securityContext": {},
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [t.name]}]}]}}},
            "schedulerName": "default-scheduler",
            "tolerations": [{"operator": "Exists"}],
            "priorityClassName": "system-node-critical",
            "priority": 2000001000,
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {
            "phase": "Running",
            "hostIP": node_ip(t.index),
            "podIP": node_ip(t.index),
            "startTime": _ts(1, 8),
            "containerStatuses": [_container_status(rng, ds, image, _ts(1, 8, 1))],
            "qosClass": "Burstable",
        },
    }


# --------------------------------------------------------------------------- placement


@dataclass(frozen=True)
class ClusterSpec:
    n_nodes: int
    n_pods: int
    seed: int = DEFAULT_SEED


@lru_cache(maxsize=16)
def placement(spec: ClusterSpec) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(pods per node, ordinal of each node's first pod): cpu-weighted, capped by max pods."""
    traits = [node_traits(spec.seed, i) for i in range(spec.n_nodes)]
    caps = [max(t.itype.max_pods - 4, 1) for t in traits]
    if spec.n_pods > sum(caps):
        raise ValueError(f"{spec.n_pods} pods do not fit on {spec.n_nodes} nodes (max {sum(caps)})")
    weights = [t.itype.cpu for t in traits]
    total = sum(weights)
    counts = [min(spec.n_pods * w // total, c) for w, c in zip(weights, caps, strict=True)]
    left = spec.n_pods - sum(counts)
    for _ in range(spec.n_pods + 1):  # bounded: each pass places at least one pod
        if left <= 0:
            break
        for i in range(spec.n_nodes):
            if left and counts[i] < caps[i]:
                counts[i] += 1
                left -= 1
    offsets, acc = [], 0
    for c in counts:
        offsets.append(acc)
        acc += c
    return tuple(counts), tuple(offsets)


def node_pods(spec: ClusterSpec, i: int) -> list[JSON]:
    """The running pods of node i; their requests sum to 45–90 % of its allocatable."""
    counts, offsets = placement(spec)
    count, first = counts[i], offsets[i]
    t = node_traits(spec.seed, i)
    rng = random.Random(f"{spec.seed}:fill:{i}")
    alloc_m, alloc_bytes = node_allocatable(t)
    n_daemons = 2 if count >= 4 else 0
    budget_m = int(alloc_m * rng.uniform(0.45, 0.9)) - 125 * (n_daemons // 2)
    budget_mi = int(alloc_bytes / 2**20 * rng.uniform(0.45, 0.9))
    n_apps = app_count(spec.n_pods)
    pods = [_daemon_pod(spec.seed, first + d, t, d) for d in range(n_daemons)]
    share = max(count - n_daemons, 1)
    for j in range(n_daemons, count):
        app = make_app(spec.seed, rng.randrange(n_apps))
        cpu_m = max(int(budget_m / share * rng.uniform(0.5, 1.0)) // 10 * 10, 10)
        mem_mi = max(int(budget_mi / share * rng.uniform(0.5, 1.0)), 16)
        pods.append(_running_pod(spec.seed, app, first + j, t, cpu_m, mem_mi))
    return pods


# --------------------------------------------------------------------------- cluster List


def _with_kind(obj: JSON, api_version: str, kind: str) -> JSON:
    return {"apiVersion": api_version, "kind": kind, **obj}


def _pdb(app: App, pods: int) -> JSON:
    allowed = 0 if app.pdb_blocking else min(1, pods)
    spec: JSON = {"selector": {"matchLabels": {"app": app.name}}}
    if app.pdb_blocking:
        spec["minAvailable"] = "100%"
    else:
        spec["maxUnavailable"] = 1
    return {
        "metadata": {"name": f"{app.name}-pdb", "namespace": app.namespace, "uid": f"uid-pdb-{app.index}",
                     "resourceVersion": str(700 + app.index), "generation": 1, "creationTimestamp": _ts(1, 9)},
        "spec": spec,
        "status": {"observedGeneration": 1, "disruptionsAllowed": allowed, "currentHealthy": pods,
                   "desiredHealthy": pods - allowed, "expectedPods": pods,
                   "conditions": [{"type": "DisruptionAllowed", "status": "True" if allowed else "False",
                                   "observedGeneration": 1, "lastTransitionTime": _ts(1, 9),
                                   "reason": "SufficientPods" if allowed else "InsufficientPods", "message": ""}]},
    }


def _priority_class(pc: PriorityClass) -> JSON:
    return {
        "metadata": {"name": pc.name, "uid": f"uid-pc-{pc.name}", "resourceVersion": "80",
                     "creationTimestamp": _ts(1, 8)},
        "value": pc.value,
        "globalDefault": False,
        "description": pc.description,
        "preemptionPolicy": "PreemptLowerPriority",
    }


def iter_cluster_items(spec: ClusterSpec) -> Iterator[JSON]:
    """Nodes, then pods, then PDBs, then PriorityClasses, each with kind/apiVersion."""
    for i in range(spec.n_nodes):
        yield _with_kind(make_node(spec.seed, i), "v1", "Node")
    app_pods: dict[int, int] = {}
    n_apps = app_count(spec.n_pods)
    for i in range(spec.n_nodes):
        for pod in node_pods(spec, i):
            a = _app_index_of(pod, spec.seed, n_apps)
            if a is not None:
                app_pods[a] = app_pods.get(a, 0) + 1
            yield _with_kind(pod, "v1", "Pod")
    for a in range(n_apps):
        app = make_app(spec.seed, a)
        if app.has_pdb:
            yield _with_kind(_pdb(app, app_pods.get(a, 0)), "policy/v1", "PodDisruptionBudget")
    for pc in PRIORITY_CLASSES:
        yield _with_kind(_priority_class(pc), "scheduling.k8s.io/v1", "PriorityClass")


def _app_index_of(pod: JSON, seed: int, n_apps: int) -> int | None:
    name = pod["metadata"]["labels"].get("app")
    if name is None:
        return None
    a = int(name.rsplit("-", 1)[1])
    return a if a < n_apps else None


def make_cluster(n_nodes: int, n_pods: int, seed: int = DEFAULT_SEED) -> JSON:
    """The whole cluster as a ``List`` dict (fine for small sizes; use write_cluster for big)."""
    items = list(iter_cluster_items(ClusterSpec(n_nodes, n_pods, seed)))
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def write_cluster(path: Path, spec: ClusterSpec) -> int:
    """Stream the cluster List to ``path`` (compact JSON); returns the number of bytes."""
    written = 0
    with path.open("wb") as f:
        written += f.write(b'{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":[')
        for k, item in enumerate(iter_cluster_items(spec)):
            if k:
                written += f.write(b",")
            written += f.write(_encoder.encode(item))
        written += f.write(b"]}\n")
    return written


# --------------------------------------------------------------------------- pending pods


def _managed_fields() -> list[JSON]:
    return [
        {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1", "time": NOW,
         "fieldsType": "FieldsV1", "fieldsV1": {
             "f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}},
                            "f:ownerReferences": {".": {}, 'k:{"uid":"0b1c"}': {}}},
             "f:spec": {"f:affinity": {".": {}, "f:nodeAffinity": {}}, "f:containers": {}, "f:initContainers": {},
                        "f:priorityClassName": {}, "f:tolerations": {}, "f:volumes": {}}}},
    ]


def _pending_affinity(zones: Sequence[str]) -> JSON:
    return {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": list(zones)},
            {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
        ]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 60, "preference": {"matchExpressions": [
                {"key": "node.kubernetes.io/instance-type", "operator": "In",
                 "values": ["m5.2xlarge", "m5.4xlarge", "m6i.8xlarge", "c5.4xlarge"]}]}},
            {"weight": 20, "preference": {"matchExpressions": [
                {"key": "eks.amazonaws.com/capacityType", "operator": "In", "values": ["ON_DEMAND"]}]}},
        ],
    }}


def make_pod(
    seed: int = DEFAULT_SEED,
    *,
    name: str = "checkout-api-5f7b9c8d6-q7x2k",
    namespace: str = "checkout",
    priority_class: str = "standard",
    priority: int = 1000,
    cpu_m: int = 500,
    memory_mi: int = 1024,
    zones: Sequence[str] = ZONES[:2],
) -> JSON:
    """A pending pod (3–6 KB) as kube-scheduler sends it: init container, native sidecar
    (restartable init container), app + log-shipper containers, tolerations, required and
    preferred node affinity, priority. No kind/apiVersion, no nodeName."""
    rng = random.Random(f"{seed}:pending:{name}")
    pool = image_pool(seed)
    app_image = pool[len(_SYSTEM_IMAGES) + 7]
    volume = _api_access_volume(rng)
    mount = volume["name"]
    sidecar = _container("envoy", pool[len(_SYSTEM_IMAGES)].ref, _resources(50, 64, True), mount, 15090)
    sidecar["restartPolicy"] = "Always"
    init = _container("init-config", "docker.io/library/busybox:1.36", _resources(100, 64, False), mount, None)
    init["command"] = ["sh", "-c", "cp /config/* /work/ && chmod 0644 /work/*"]
    del init["env"], sidecar["readinessProbe"]
    app = _container("app", app_image.ref, _resources(cpu_m, memory_mi, True), mount, 8080)
    shipper = _container("log-shipper", pool[len(_SYSTEM_IMAGES) + 11].ref, _resources(100, 128, True), mount, None)
    del shipper["env"]
    template_hash = name.rsplit("-", 2)[-2] if name.count("-") >= 2 else "0"
    return {
        "metadata": {
            "name": name,
            "generateName": name.rsplit("-", 1)[0] + "-",
            "namespace": namespace,
            "uid": _uid(rng),
            "resourceVersion": str(rng.randint(10_000_000, 99_999_999)),
            "creationTimestamp": NOW,
            "labels": {"app": name.rsplit("-", 2)[0], "pod-template-hash": template_hash, "team": namespace,
                       "version": "v2"},
            "annotations": {"kubectl.kubernetes.io/default-container": "app",
                            "prometheus.io/scrape": "true", "prometheus.io/port": "8080"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": name.rsplit("-", 1)[0],
                                 "uid": _uid(rng), "controller": True, "blockOwnerDeletion": True}],
            "managedFields": _managed_fields(),
        },
        "spec": {
            "volumes": [volume, {"name": "config", "configMap": {"name": f"{namespace}-config", "defaultMode": 420}}],
            "initContainers": [init, sidecar],
            "containers": [app, shipper],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "nodeSelector": {"kubernetes.io/os": "linux"},
            "serviceAccountName": namespace,
            "serviceAccount": namespace,
            "securityContext": {"runAsNonRoot": True, "fsGroup": 2000},
            "affinity": _pending_affinity(zones),
            "schedulerName": "default-scheduler",
            "tolerations": [
                {"key": "node.kubernetes.io/lifecycle", "operator": "Equal", "value": "spot", "effect": "NoSchedule"},
                *_DEFAULT_TOLERATIONS,
            ],
            "priorityClassName": priority_class,
            "priority": priority,
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                            "lastTransitionTime": NOW, "reason": "Unschedulable",
                            "message": "0/5000 nodes are available: 1 Insufficient cpu."}],
            "qosClass": "Burstable",
        },
    }


def make_spread_pod(seed: int = DEFAULT_SEED) -> JSON:
    """`make_pod` joining a running app, with what a spread-out Deployment adds: a zone
    topology spread constraint (DoNotSchedule) and required anti-affinity to its own pods per
    hostname, both selecting the app's pods."""
    app = make_app(seed, 0)
    pod = make_pod(seed, name=f"{app.name}-{app.template_hash}-x9x9x", namespace=app.namespace)
    labels = {"app": app.name, "pod-template-hash": app.template_hash, "team": app.namespace}
    pod["metadata"]["labels"] = labels
    selector = {"matchLabels": {"app": app.name}}
    pod["spec"]["topologySpreadConstraints"] = [
        {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
         "whenUnsatisfiable": "DoNotSchedule", "labelSelector": selector}]
    pod["spec"]["affinity"]["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "kubernetes.io/hostname", "labelSelector": selector}]}
    return pod


def make_preemptor(seed: int = DEFAULT_SEED) -> JSON:
    """A high-priority pending pod large enough to need victims on most nodes."""
    return make_pod(seed, name="critical-job-6d4f8b7c9-m2p5r", namespace="ml-training",
                    priority_class="critical", priority=1000000, cpu_m=3000, memory_mi=6144,
                    zones=ZONES)


# --------------------------------------------------------------------------- request bodies


def candidate_indices(spec: ClusterSpec, size: int) -> list[int]:
    """``size`` distinct node indices in a deterministic, unsorted order."""
    if size > spec.n_nodes:
        raise ValueError(f"{size} candidates requested from a {spec.n_nodes}-node cluster")
    return random.Random(f"{spec.seed}:candidates:{size}").sample(range(spec.n_nodes), size)


def encode(obj: Any) -> bytes:
    return _encoder.encode(obj)


def extender_args(pod: JSON, node_bytes: Iterable[bytes] | None, names: list[str] | None) -> bytes:
    """``ExtenderArgs`` with pre-encoded nodes spliced in (keys in Go's struct order)."""
    if node_bytes is None:
        return encode({"Pod": pod, "Nodes": None, "NodeNames": names})
    return b"".join((b'{"Pod":', encode(pod), b',"Nodes":{"metadata":{},"items":[',
                     b",".join(node_bytes), b']},"NodeNames":null}'))


def bump_version(node: bytes) -> bytes:
    """An encoded node with its ``metadata.resourceVersion`` one higher: the next version
    of the node, which the served snapshot does not hold."""
    key = b'"resourceVersion":"'
    begin = node.index(key) + len(key)
    end = node.index(b'"', begin)
    return node[:begin] + str(int(node[begin:end]) + 1).encode() + node[end:]


def make_filter_body(spec: ClusterSpec, size: int, form: str, node_bytes: Sequence[bytes] | None = None,
                     spread: bool = False, cold: bool = False) -> bytes:
    """Filter/prioritize body for ``size`` candidates in ``names`` or ``nodes`` form; `spread`
    sends `make_spread_pod` instead of `make_pod`; `cold` (nodes form) sends every node at a
    resourceVersion the snapshot does not hold (`bump_version`)."""
    idx = candidate_indices(spec, size)
    pod = make_spread_pod(spec.seed) if spread else make_pod(spec.seed)
    if form == "names":
        return extender_args(pod, None, [node_name(i) for i in idx])
    if form != "nodes":
        raise ValueError(f"unknown form {form!r}")
    nodes: Iterable[bytes] = ((encode(make_node(spec.seed, i)) for i in idx) if node_bytes is None
                              else (node_bytes[i] for i in idx))
    return extender_args(pod, (bump_version(b) for b in nodes) if cold else nodes, None)


def _victims(spec: ClusterSpec, i: int, preemptor_priority: int) -> tuple[list[JSON], int]:
    """Up to three lowest-priority pods on node i, and how many of them a PDB protects; most
    important first, as kube-scheduler's `SelectVictimsOnNode` lists them (higher priority,
    then earlier start)."""
    n_apps = app_count(spec.n_pods)
    lower = [p for p in node_pods(spec, i) if p["spec"]["priority"] < preemptor_priority]
    lower.sort(key=lambda p: (p["spec"]["priority"], p["metadata"]["creationTimestamp"]))
    chosen = sorted(lower[: 1 + i % 3], key=lambda p: (-p["spec"]["priority"],
                                                       p["status"].get("startTime") or "~"))
    violations = 0
    for p in chosen:
        a = _app_index_of(p, spec.seed, n_apps)
        if a is not None and make_app(spec.seed, a).pdb_blocking:
            violations += 1
    return chosen, violations


def make_preempt_body(spec: ClusterSpec, size: int, form: str) -> bytes:
    """Preempt body: ``NodeNameToMetaVictims`` (names form) or ``NodeNameToVictims`` (nodes)."""
    pod = make_preemptor(spec.seed)
    victims: dict[str, JSON] = {}
    for i in candidate_indices(spec, size):
        pods, violations = _victims(spec, i, pod["spec"]["priority"])
        if not pods:
            continue
        if form == "names":
            victims[node_name(i)] = {"Pods": [{"UID": p["metadata"]["uid"]} for p in pods],
                                     "NumPDBViolations": violations}
        elif form == "nodes":
            victims[node_name(i)] = {"Pods": pods, "NumPDBViolations": violations}
        else:
            raise ValueError(f"unknown form {form!r}")
    if form == "names":
        return encode({"Pod": pod, "NodeNameToVictims": None, "NodeNameToMetaVictims": victims})
    return encode({"Pod": pod, "NodeNameToVictims": victims, "NodeNameToMetaVictims": None})


def make_bind_bodies(spec: ClusterSpec, count: int) -> list[bytes]:
    """``count`` distinct ``ExtenderBindingArgs``, each to a schedulable node."""
    nodes = [i for i in range(spec.n_nodes) if node_traits(spec.seed, i).schedulable] or [0]
    bodies = []
    for k in range(count):
        rng = random.Random(f"{spec.seed}:bind:{k}")
        bodies.append(encode({
            "PodName": f"checkout-api-5f7b9c8d6-{_pod_suffix(10_000_000 + k)}",
            "PodNamespace": "checkout",
            "PodUID": _uid(rng),
            "Node": node_name(nodes[k % len(nodes)]),
        }))
    return bodies


# --------------------------------------------------------------------------- files


@dataclass
class Generated:
    """What ``write_bench_files`` produced: file paths and sizes, keyed by case."""

    cluster: Path
    cluster_bytes: int
    bodies: dict[str, Path]

    def to_json(self) -> JSON:
        return {
            "cluster": str(self.cluster),
            "cluster_bytes": self.cluster_bytes,
            "bodies": {k: {"path": str(p), "bytes": p.stat().st_size} for k, p in self.bodies.items()},
        }


def body_key(verb: str, form: str, size: int, variant: str = "") -> str:
    if verb == "bind":
        return "bind"
    return f"{verb}-{form}-{size}" + (f"-{variant}" if variant else "")


def write_bench_files(
    out: Path,
    spec: ClusterSpec,
    sizes: Sequence[int] = DEFAULT_SIZES,
    forms: Sequence[str] = FORMS,
    n_bind: int = 2000,
    write_snapshot: bool = True,
) -> Generated:
    """Write the cluster snapshot and every request body; reuses files of the same name
    (everything is deterministic in (spec, size, form))."""
    out.mkdir(parents=True, exist_ok=True)
    tag = f"n{spec.n_nodes}-p{spec.n_pods}-s{spec.seed}"
    cluster = out / f"cluster-{tag}.json"
    if write_snapshot and not cluster.exists():
        with replacing(cluster) as tmp:  # parallel runs write the same files
            write_cluster(tmp, spec)
    bodies: dict[str, Path] = {}
    node_bytes: list[bytes] | None = None
    for form in forms:
        for size in sizes:
            for verb, maker in (("filter", make_filter_body), ("preempt", make_preempt_body)):
                path = out / f"{verb}-{form}-{size}-{tag}.json"
                if not path.exists():
                    if verb == "filter" and form == "nodes" and node_bytes is None:
                        node_bytes = [encode(make_node(spec.seed, i)) for i in range(spec.n_nodes)]
                    body = maker(spec, size, form, node_bytes) if verb == "filter" else maker(spec, size, form)
                    _write_atomic(path, body)
                bodies[body_key(verb, form, size)] = path
            if form == "nodes":  # the same nodes at versions the served state does not hold
                path = out / f"filter-{form}-{size}-cold-{tag}.json"
                if not path.exists():
                    if node_bytes is None:
                        node_bytes = [encode(make_node(spec.seed, i)) for i in range(spec.n_nodes)]
                    _write_atomic(path, make_filter_body(spec, size, form, node_bytes, cold=True))
                bodies[body_key("filter", form, size, "cold")] = path
            if form == "names":  # the same candidates for a pod with spread and anti-affinity
                path = out / f"filter-{form}-{size}-spread-{tag}.json"
                if not path.exists():
                    _write_atomic(path, make_filter_body(spec, size, form, spread=True))
                bodies[body_key("filter", form, size, "spread")] = path
    bind = out / f"bind-{n_bind}-{tag}.jsonl"
    if not bind.exists():
        _write_atomic(bind, b"\n".join(make_bind_bodies(spec, n_bind)))
    bodies["bind"] = bind
    return Generated(cluster, cluster.stat().st_size if cluster.exists() else 0, bodies)


def _write_atomic(path: Path, data: bytes) -> None:
    with replacing(path) as tmp:
        tmp.write_bytes(data)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.generate", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="output directory")
    p.add_argument("--nodes", type=cliargs.positive_int, default=5000, help="nodes (default 5000)")
    p.add_argument("--pods", type=cliargs.count, default=150_000,
                   help="bound pods spread over them (default 150000)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="the seed (default %(default)s)")
    p.add_argument("--sizes", type=cliargs.sizes, default=list(DEFAULT_SIZES),
                   help="candidate counts")
    p.add_argument("--forms", default=",".join(FORMS), help="names,nodes")
    args = p.parse_args(argv)
    spec = ClusterSpec(args.nodes, args.pods, args.seed)
    sizes = [s for s in args.sizes if s <= spec.n_nodes]
    forms = [f for f in args.forms.split(",") if f]
    gen = write_bench_files(args.out, spec, sizes, forms)
    manifest = {"spec": {"nodes": spec.n_nodes, "pods": spec.n_pods, "seed": spec.seed}, **gen.to_json()}
    (args.out / "manifest.json").write_bytes(msgspec.json.format(encode(manifest), indent=2))
    print(f"cluster: {gen.cluster} ({gen.cluster_bytes / 1e6:.1f} MB)", file=sys.stderr)
    for key, path in gen.bodies.items():
        print(f"{key}: {path} ({path.stat().st_size / 1e3:.1f} KB)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
