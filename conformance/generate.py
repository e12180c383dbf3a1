"""Generated cases: a small cluster (nodes, bound pods, a Namespace) and a pending pod, drawn
from one `random.Random` so a seed replays them. What is drawn is what the engine's default
plugins read: requests (containers, restartable init containers, overhead), node allocatable
with extended resources, labels across zones and hostnames, taints of every effect and
tolerations, node selectors and node affinity (required and preferred, every operator, and
`metadata.name` fields),
host ports, images, topology spread constraints (`matchLabelKeys` too) and inter-pod
(anti-)affinity; for preemption,
priorities, start times, PodDisruptionBudgets (their selectors and allowed disruptions),
`preemptionPolicy` and a pending pod already nominated to a node. For scheduler-plugins'
plugins that read objects of their own, `custom_plugins` draws those objects too.

Every bound pod starts at its own second, as running pods do: kube-scheduler breaks its last
ties among victims and candidates by start time, then by Go's map order, which no two runs
share.
"""

from __future__ import annotations

import json
import random
import time
from fractions import Fraction
from typing import Any

from extender.engine.registry import DEFAULT_FILTERS, DEFAULT_SCORES
from extender.model.quantity import parse_quantity

Obj = dict[str, Any]
ZONES = ("zone-a", "zone-b", "zone-c")
APPS = ("web", "db", "cache")
HASHES = ("5f7b9c8d6", "7c9d8b6f5")
TAINT_KEYS = ("dedicated", "gpu", "spot")
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
GPU = "example.com/gpu"
HUGEPAGES = "hugepages-2Mi"
IMAGES = ("registry.example/app:1", "registry.example/db:2", "busybox:1.36")


def _requests(rng: random.Random, big: bool = False) -> Obj:
    out: Obj = {}
    if rng.random() < 0.85:
        out["cpu"] = f"{rng.choice([0, 50, 100, 250, 500, 1000, 2000] + ([4000] if big else []))}m"
    if rng.random() < 0.85:
        out["memory"] = f"{rng.choice([0, 64, 128, 512, 1024, 2048, 4096])}Mi"
    if rng.random() < 0.1:
        out[GPU] = str(rng.randint(1, 2))
    if rng.random() < 0.1:
        out["ephemeral-storage"] = rng.choice(["1Gi", "20Gi", "60Gi"])
    if rng.random() < 0.05:
        out[HUGEPAGES] = rng.choice(["2Mi", "64Mi", "512Mi"])
    return out


def _container(rng: random.Random, name: str) -> Obj:
    c: Obj = {"name": name, "image": rng.choice(IMAGES)}
    requests = _requests(rng)
    if requests:
        c["resources"] = {"requests": requests}
    if rng.random() < 0.1:
        c["ports"] = [{"containerPort": 8080, "hostPort": rng.choice([8080, 9090]),
                       "protocol": "TCP"}]
    return c


def _spec(rng: random.Random, crowded: bool = False) -> Obj:
    spec: Obj = {"containers": [_container(rng, f"c{i}") for i in range(rng.randint(1, 2))]}
    if crowded:  # a node filled by a few sizeable pods: room comes only from evictions
        spec["containers"][0]["resources"] = {"requests": {
            "cpu": rng.choice(["500m", "1", "2"]), "memory": rng.choice(["512Mi", "1Gi", "2Gi"])}}
    if rng.random() < 0.15:  # a sidecar: a restartable init container
        sidecar = _container(rng, "sidecar")
        sidecar["restartPolicy"] = "Always"
        spec["initContainers"] = [sidecar]
    if rng.random() < 0.05:
        spec["overhead"] = {"cpu": "100m", "memory": "64Mi"}
    return spec


def node(rng: random.Random, index: int) -> Obj:
    name = f"node-{index}"
    zone = rng.choice(ZONES)
    labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone,
              "topology.kubernetes.io/region": "region-1", "tier": rng.choice(["1", "2", "3"])}
    if rng.random() < 0.1:  # a node outside every zone: spreading and affinity skip it
        del labels["topology.kubernetes.io/zone"]
    if rng.random() < 0.5:
        labels["disktype"] = rng.choice(["ssd", "hdd"])
    allocatable = {"cpu": f"{rng.choice([1, 2, 4, 8, 16])}",
                   "memory": f"{rng.choice([1, 2, 4, 8, 32])}Gi",
                   "pods": str(rng.choice([3, 10, 110])), "ephemeral-storage": "100Gi"}
    if rng.random() < 0.2:
        allocatable[GPU] = str(rng.randint(1, 4))
    if rng.random() < 0.3:
        allocatable[HUGEPAGES] = rng.choice(["128Mi", "1Gi"])
    spec: Obj = {}
    if rng.random() < 0.3:
        spec["taints"] = [{"key": rng.choice(TAINT_KEYS), "value": rng.choice(["true", "x"]),
                           "effect": rng.choice(EFFECTS)} for _ in range(rng.randint(1, 2))]
    if rng.random() < 0.05:
        spec["unschedulable"] = True
    status: Obj = {"allocatable": allocatable, "capacity": dict(allocatable)}
    if rng.random() < 0.4:
        status["images"] = [{"names": [image], "sizeBytes": rng.choice([50, 300, 900]) * 2**20}
                            for image in rng.sample(IMAGES, rng.randint(1, 2))]
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels}, "spec": spec, "status": status}


NAMESPACES = ("default", "team-a", "team-b")


PRIORITIES = (-10, 0, 0, 50, 100, 100, 500, 1000)
START = 1_767_225_600  # 2026-01-01T00:00:00Z


def _timestamp(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def bound_pod(rng: random.Random, name: str, node_name: str, started: int = 0,
              crowded: bool = False) -> Obj:
    spec = _spec(rng, crowded)
    spec["nodeName"] = node_name
    spec["priority"] = rng.choice(PRIORITIES)
    if rng.random() < 0.15:  # its own terms: the incoming pod must respect them (symmetry)
        kind = rng.choice(["podAffinity", "podAntiAffinity"])
        preferred = rng.random() < 0.5
        key = ("preferredDuringSchedulingIgnoredDuringExecution" if preferred
               else "requiredDuringSchedulingIgnoredDuringExecution")
        spec["affinity"] = {kind: {key: _pod_affinity_terms(rng, preferred)}}
    meta: Obj = {"name": name, "namespace": rng.choice(NAMESPACES), "uid": f"uid-{name}",
                 "labels": {"app": rng.choice(APPS), "pod-template-hash": rng.choice(HASHES)}}
    if rng.random() < 0.05:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
            "status": {"phase": "Running", "startTime": _timestamp(START + started)}}


def _one_pod_per_host_port(pods: list[Obj]) -> None:
    """Drop the host ports a pod would share with an earlier pod on its node: the kubelet
    would not run both (and the scheduler's node accounting keeps one entry per port, so a
    shared one would be freed by either pod's eviction)."""
    used: set[tuple[str, int]] = set()
    for pod in pods:
        for container in pod["spec"]["containers"] + pod["spec"].get("initContainers", []):
            ports = container.get("ports", [])
            keep = [p for p in ports if (pod["spec"]["nodeName"], p["hostPort"]) not in used]
            used.update((pod["spec"]["nodeName"], p["hostPort"]) for p in keep)
            if len(keep) != len(ports):
                container["ports"] = keep


def pdb(rng: random.Random, index: int) -> Obj:
    """A PodDisruptionBudget as the disruption controller leaves it: a selector and how many
    disruptions it allows now (preemption reads only the status)."""
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": f"pdb-{index}", "namespace": rng.choice(NAMESPACES)},
            "spec": {"selector": _selector(rng), "minAvailable": 1},
            "status": {"disruptionsAllowed": rng.choice([0, 0, 1, 2]), "currentHealthy": 2,
                       "desiredHealthy": 1, "expectedPods": 3, "observedGeneration": 1}}


def nominated_pod(rng: random.Random, name: str, node_name: str) -> Obj:
    """A pending pod an earlier preemption nominated to `node_name`: the room it waits for is
    kept from preemptors of no higher priority."""
    spec = _spec(rng)
    spec["priority"] = rng.choice(PRIORITIES)
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": rng.choice(NAMESPACES), "uid": f"uid-{name}",
                         "labels": {"app": rng.choice(APPS)}},
            "spec": spec, "status": {"phase": "Pending", "nominatedNodeName": node_name}}


def _selector(rng: random.Random) -> Obj:
    return {"matchLabels": {"app": rng.choice(APPS)}}


def _node_affinity(rng: random.Random, node_names: list[str]) -> Obj:
    def requirement() -> Obj:
        op = rng.choice(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"])
        if op in ("Gt", "Lt"):
            return {"key": "tier", "operator": op, "values": [rng.choice(["1", "2"])]}
        if op in ("Exists", "DoesNotExist"):
            return {"key": "disktype", "operator": op}
        return {"key": "topology.kubernetes.io/zone", "operator": op,
                "values": rng.sample(ZONES, rng.randint(1, 2))}
    def term() -> Obj:
        if rng.random() < 0.2:  # by name: NodeAffinity's PreFilter narrows the nodes
            def by_name() -> Obj:
                names = rng.sample(node_names, rng.randint(0, min(2, len(node_names))))
                return {"key": "metadata.name", "operator": "In",
                        "values": names + ["gone-node"] * (not names)}
            # Two in one term must both hold: disjoint ones leave no node (a rejection).
            return {"matchFields": [by_name() for _ in range(rng.choice([1, 1, 2]))]}
        return {"matchExpressions": [requirement() for _ in range(rng.randint(1, 2))]}
    out: Obj = {}
    if rng.random() < 0.6:
        out["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
            term() for _ in range(rng.randint(1, 2))]}
    if rng.random() < 0.6:
        out["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": rng.randint(1, 100), "preference": {"matchExpressions": [requirement()]}}
            for _ in range(rng.randint(1, 2))]
    return out


def _pod_affinity_terms(rng: random.Random, preferred: bool) -> list[Obj]:
    terms = []
    for _ in range(rng.randint(1, 2)):
        term: Obj = {"labelSelector": _selector(rng), "topologyKey": rng.choice(
            ["kubernetes.io/hostname", "topology.kubernetes.io/zone"])}
        roll = rng.random()
        if roll < 0.2:
            term["namespaces"] = rng.sample(NAMESPACES, rng.randint(1, 2))
        elif roll < 0.35:
            term["namespaceSelector"] = rng.choice(
                [{}, {"matchLabels": {"team": rng.choice(["a", "b"])}}])
        terms.append({"weight": rng.randint(1, 100), "podAffinityTerm": term}
                     if preferred else term)
    return terms


def pending_pod(rng: random.Random, nodes: list[Obj] | None = None,
                crowded: bool = False) -> Obj:
    spec = _spec(rng, crowded)
    spec["priority"] = rng.choice((1000, 2000) if crowded else (0, 100, 500, 1000, 2000))
    if rng.random() < 0.1:
        spec["preemptionPolicy"] = "Never"
    labels = {"app": rng.choice(APPS), "pod-template-hash": rng.choice(HASHES)}
    if rng.random() < 0.15:
        spec["nodeSelector"] = {"disktype": rng.choice(["ssd", "hdd"])}
    affinity: Obj = {}
    if rng.random() < 0.4:
        affinity["nodeAffinity"] = _node_affinity(
            rng, [n["metadata"]["name"] for n in nodes or []] or ["node-0"])
    for kind in ("podAffinity", "podAntiAffinity"):
        if rng.random() < 0.25:
            block: Obj = {}
            if rng.random() < 0.5:
                block["requiredDuringSchedulingIgnoredDuringExecution"] = \
                    _pod_affinity_terms(rng, False)
            else:
                block["preferredDuringSchedulingIgnoredDuringExecution"] = \
                    _pod_affinity_terms(rng, True)
            affinity[kind] = block
    if affinity:
        spec["affinity"] = affinity
    if rng.random() < 0.4:
        spec["tolerations"] = [
            {"key": rng.choice(TAINT_KEYS), "operator": rng.choice(["Equal", "Exists"]),
             **({"value": "true"} if rng.random() < 0.5 else {}),
             **({"effect": rng.choice(EFFECTS)} if rng.random() < 0.6 else {})}
            for _ in range(rng.randint(1, 2))]
    if rng.random() < 0.3:
        # Distinct (topologyKey, whenUnsatisfiable) pairs, as the API server requires.
        pairs = [(k, w) for k in ("kubernetes.io/hostname", "topology.kubernetes.io/zone")
                 for w in ("DoNotSchedule", "ScheduleAnyway")]
        spec["topologySpreadConstraints"] = [
            {"maxSkew": rng.randint(1, 2), "topologyKey": key, "whenUnsatisfiable": when,
             "labelSelector": {"matchLabels": {"app": labels["app"]}},
             **({"minDomains": rng.randint(1, 4)}
                if when == "DoNotSchedule" and rng.random() < 0.3 else {}),
             **({"nodeAffinityPolicy": rng.choice(["Honor", "Ignore"])}
                if rng.random() < 0.3 else {}),
             **({"nodeTaintsPolicy": rng.choice(["Honor", "Ignore"])}
                if rng.random() < 0.3 else {}),
             **({"matchLabelKeys": ["pod-template-hash"]} if rng.random() < 0.2 else {})}
            for key, when in rng.sample(pairs, rng.randint(1, 2))]
    status: Obj = {"phase": "Pending"}
    if nodes and rng.random() < 0.1:  # it preempted before: its victims may still be leaving
        status["nominatedNodeName"] = rng.choice(nodes)["metadata"]["name"]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "pending", "namespace": "default", "uid": "uid-pending",
                         "labels": labels},
            "spec": spec, "status": status}


def case(rng: random.Random, max_nodes: int = 8) -> tuple[list[Obj], Obj]:
    """(objects, pending pod): the Namespaces, nodes, the pods bound to them and PDBs."""
    nodes = [node(rng, i) for i in range(rng.randint(1, max_nodes))]
    objects: list[Obj] = [
        {"apiVersion": "v1", "kind": "Namespace",
         "metadata": {"name": ns, "labels": {"team": ns.removeprefix("team-")}}}
        for ns in NAMESPACES]
    objects += nodes
    # A crowded cluster is full of sizeable pods: the pending one fits only by preempting.
    crowded = rng.random() < 0.3
    pods = [(f"{n['metadata']['name']}-p{j}", n["metadata"]["name"])
            for n in nodes for j in range(rng.randint(2, 5) if crowded else rng.randint(0, 3))]
    starts = rng.sample(range(len(pods) * 10 + 1), len(pods))
    bound = [bound_pod(rng, name, node_name, start, crowded)
             for (name, node_name), start in zip(pods, starts, strict=True)]
    _one_pod_per_host_port(bound)
    objects += bound
    objects += [pdb(rng, i) for i in range(rng.choice([0, 0, 1, 2]))]
    objects += [nominated_pod(rng, f"nominated-{i}", rng.choice(nodes)["metadata"]["name"])
                for i in range(rng.choice([0, 0, 0, 1, 2]))]
    return objects, pending_pod(rng, nodes, crowded)


def plugin_config(rng: random.Random) -> list[Obj]:
    """A profile's `pluginConfig`: arguments of the default plugins, each present or not."""
    out: list[Obj] = []
    if rng.random() < 0.5:
        resources = [{"name": "cpu", "weight": rng.randint(1, 3)},
                     {"name": "memory", "weight": rng.randint(1, 3)}]
        if rng.random() < 0.3:
            # Not an extended resource: kube-scheduler scores those through its DRA manager,
            # which the oracle does not run.
            resources.append({"name": "ephemeral-storage", "weight": rng.randint(1, 3)})
        strategy: Obj = {"type": rng.choice(["LeastAllocated", "MostAllocated",
                                             "RequestedToCapacityRatio"]),
                         "resources": resources}
        if strategy["type"] == "RequestedToCapacityRatio":
            points = sorted(rng.sample(range(0, 101, 10), rng.randint(1, 3)))
            strategy["requestedToCapacityRatio"] = {"shape": [
                {"utilization": u, "score": rng.randint(0, 10)} for u in points]}
        out.append({"name": "NodeResourcesFit", "args": {"scoringStrategy": strategy}})
    if rng.random() < 0.3:
        resources = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
        if rng.random() < 0.5:
            resources.append({"name": "ephemeral-storage", "weight": 1})
        out.append({"name": "NodeResourcesBalancedAllocation", "args": {"resources": resources}})
    if rng.random() < 0.3:
        args: Obj = {"defaultingType": rng.choice(["System", "List"])}
        if args["defaultingType"] == "List":
            args["defaultConstraints"] = [
                {"maxSkew": rng.randint(1, 3), "topologyKey": "topology.kubernetes.io/zone",
                 "whenUnsatisfiable": rng.choice(["ScheduleAnyway", "DoNotSchedule"])}]
        out.append({"name": "PodTopologySpread", "args": args})
    if rng.random() < 0.3:
        out.append({"name": "InterPodAffinity", "args": {
            "hardPodAffinityWeight": rng.randint(0, 100),
            "ignorePreferredTermsOfExistingPods": rng.random() < 0.5}})
    if rng.random() < 0.2:
        out.append({"name": "NodeAffinity", "args": {"addedAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "tier", "operator": "In",
                                       "values": rng.sample(["1", "2", "3"], 2)}]}]}}}})
    return out


def profile_plugins(rng: random.Random) -> Obj:
    """A profile's `plugins` (KubeSchedulerConfiguration v1): some default filters or scorers
    disabled (each with its PreFilter or PreScore, as a profile that drops a plugin does),
    some score weights changed, now and then no PostFilter."""
    out: Obj = {}
    filters = [n for n in DEFAULT_FILTERS if rng.random() < 0.15]
    if filters:
        out["preFilter"] = {"disabled": [{"name": n} for n in filters]}
        out["filter"] = {"disabled": [{"name": n} for n in filters]}
    scores = [n for n, _ in DEFAULT_SCORES if rng.random() < 0.15]
    weights = [{"name": n, "weight": rng.randint(1, 5)}
               for n, _ in DEFAULT_SCORES if n not in scores and rng.random() < 0.3]
    if scores:
        out["preScore"] = {"disabled": [{"name": n} for n in scores]}
    if scores or weights:
        out["score"] = {"disabled": [{"name": n} for n in scores], "enabled": weights}
    if rng.random() < 0.05:
        out["postFilter"] = {"disabled": [{"name": "DefaultPreemption"}]}
    return out


#: PriorityClasses for the scheduler-plugins flavour: (name, value); each draws
#: PreemptionToleration's annotations.
PRIORITY_CLASSES = (("batch", 0), ("service", 100), ("critical", 1000))
TOLERATION = "preemption-toleration.scheduling.x-k8s.io/"


def priority_classes(rng: random.Random) -> list[Obj]:
    """The PriorityClasses bound pods name, each with or without PreemptionToleration's
    policy (minimum preemptable priority; toleration seconds: none, forever, elapsed long
    ago, or far from over)."""
    out = []
    for name, value in PRIORITY_CLASSES:
        annotations: Obj = {}
        if rng.random() < 0.7:
            annotations[TOLERATION + "minimum-preemptable-priority"] = str(
                rng.choice([value + 1, 500, 2000, 5000]))
        if rng.random() < 0.7:
            annotations[TOLERATION + "toleration-seconds"] = rng.choice(
                ["0", "-1", "3600", "1000000000"])
        out.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                    "metadata": {"name": name, "annotations": annotations}, "value": value})
    return out


def with_priority_classes(rng: random.Random, objects: list[Obj]) -> list[Obj]:
    """`objects` with the PriorityClasses, each bound pod in one of them (its priority the
    class value, as admission sets it) and scheduled when it started."""
    for obj in objects:
        if obj["kind"] == "Pod" and obj["spec"].get("nodeName"):
            name, value = rng.choice(PRIORITY_CLASSES)
            obj["spec"]["priorityClassName"], obj["spec"]["priority"] = name, value
            obj["status"]["conditions"] = [{"type": "PodScheduled", "status": "True",
                                            "lastTransitionTime": obj["status"]["startTime"]}]
    return [*priority_classes(rng), *objects]


def scheduler_plugins_profile(rng: random.Random) -> tuple[Obj, list[Obj]]:
    """(plugins, pluginConfig) adding scheduler-plugins' plugins to the default profile:
    NodeResourcesAllocatable (mode and resource weights drawn) and PodState as scorers, and
    PreemptionToleration in DefaultPreemption's place."""
    enabled: list[Obj] = []
    config: list[Obj] = []
    if rng.random() < 0.7:
        enabled.append({"name": "NodeResourcesAllocatable", "weight": rng.randint(1, 3)})
        config.append({"name": "NodeResourcesAllocatable", "args": {
            "mode": rng.choice(["Least", "Most"]),
            "resources": [{"name": "cpu", "weight": rng.choice([1, 1 << 20])},
                          {"name": "memory", "weight": 1}]}})
    if rng.random() < 0.5:
        enabled.append({"name": "PodState", "weight": rng.randint(1, 3)})
    plugins: Obj = {"multiPoint": {"enabled": enabled}} if enabled else {}
    if rng.random() < 0.6:
        plugins["postFilter"] = {"enabled": [{"name": "PreemptionToleration"}],
                                 "disabled": [{"name": "DefaultPreemption"}]}
    return plugins, config


#: scheduler-plugins' custom objects (served to the oracle's plugins by its own API).
CUSTOM_API = "scheduling.x-k8s.io/v1alpha1"
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"


def _amounts(rng: random.Random) -> Obj:
    out: Obj = {}
    if rng.random() < 0.9:
        out["cpu"] = rng.choice(["0", "500m", "1", "2", "4", "8", "16"])
    if rng.random() < 0.6:
        out["memory"] = rng.choice(["0", "1Gi", "4Gi", "16Gi", "64Gi"])
    return out


def elastic_quotas(rng: random.Random) -> list[Obj]:
    """ElasticQuotas for CapacityScheduling: each namespace with one or not, its `min` and
    `max` (cpu, memory; either may be left out) drawn so a pod fits within its min, borrows
    beyond it, or is over its max or the mins' sum."""
    out = []
    for ns in NAMESPACES:
        if rng.random() < (0.85 if ns == "default" else 0.6):
            spec: Obj = {}
            for field in ("min", "max"):
                if rng.random() < 0.85:
                    spec[field] = _amounts(rng)
            out.append({"apiVersion": CUSTOM_API, "kind": "ElasticQuota",
                        "metadata": {"name": f"quota-{ns}", "namespace": ns}, "spec": spec})
    return out


def pod_group(rng: random.Random, objects: list[Obj], pod: Obj) -> list[Obj]:
    """The pending pod in a PodGroup (Coscheduling): the group (minMember, minResources or
    not) and its other members, pending, bound or both; returned as the objects to add."""
    name = rng.choice(["gang-a", "gang-b"])
    pod["metadata"].setdefault("labels", {})[POD_GROUP_LABEL] = name
    spec: Obj = {"minMember": rng.randint(1, 5)}
    # CheckClusterResource takes node after node in kube-scheduler's snapshot order, which the
    # oracle's snapshot draws at random: with a node over-committed (a negative free amount)
    # the gap it reports depends on that order, so such cases do not draw minResources.
    if rng.random() < 0.5 and not _over_committed(objects):
        spec["minResources"] = _amounts(rng)
    added: list[Obj] = []
    if rng.random() < 0.9:
        added.append({"apiVersion": CUSTOM_API, "kind": "PodGroup",
                      "metadata": {"name": name, "namespace": "default",
                                   "creationTimestamp": _timestamp(GROUP_CREATED)},
                      "spec": spec})
    nodes = [o["metadata"]["name"] for o in objects if o["kind"] == "Node"]
    for i in range(rng.randint(0, 4)):
        sibling = json.loads(json.dumps(pod))
        sibling["metadata"].update(name=f"{name}-{i}", uid=f"uid-{name}-{i}")
        sibling["status"] = {"phase": "Pending"}
        if rng.random() < 0.4:  # already bound, its group partly placed
            sibling["spec"]["nodeName"] = rng.choice(nodes)
            sibling["status"] = {"phase": "Running", "startTime": _timestamp(10**6 + i)}
            # Each bound pod its own start and no host port shared on a node, as in `case`.
            for container in (*sibling["spec"]["containers"],
                              *sibling["spec"].get("initContainers", ())):
                container.pop("ports", None)
        added.append(sibling)
    return added


def custom_plugins(rng: random.Random, plugins: Obj, objects: list[Obj],
                   pod: Obj) -> tuple[Obj, list[Obj], list[Obj]]:
    """(the profile's `plugins` with them, their pluginConfig, objects to add to the case) for
    the plugins that read custom objects: CapacityScheduling (PreFilter, and PostFilter in
    DefaultPreemption's place) with ElasticQuotas, Coscheduling's PreFilter with the pending
    pod in a PodGroup, and NodeResourceTopologyMatch (Filter and Score, its scoring strategy
    drawn) with NodeResourceTopologies, and NetworkOverhead (Filter and Score) with an
    AppGroup and a NetworkTopology, and one of the Trimaran scorers with node metrics
    (`watcher_metrics`), each drawn or not (`pod` and the bound pods change in place: their
    group, workload, limits)."""
    plugins = dict(plugins)
    added: list[Obj] = []
    config: list[Obj] = []
    if rng.random() < 0.3:
        _enable(plugins, "NetworkOverhead", rng.randint(1, 3))
        config.append({"name": "NetworkOverhead", "args": {
            "namespaces": ["default"], "weightsName": "UserDefined",
            "networkTopologyName": "nt"}})
        added += app_group(rng, objects, pod)
    if rng.random() < 0.3:
        _enable(plugins, "NodeResourceTopologyMatch", rng.randint(1, 3))
        config.append({"name": "NodeResourceTopologyMatch", "args": {"scoringStrategy": {
            "type": rng.choice(["MostAllocated", "BalancedAllocation", "LeastAllocated",
                                "LeastNUMANodes"])}}})
        added += node_topologies(rng, objects)
        if rng.random() < 0.6:
            guaranteed(pod)
    if rng.random() < 0.3:
        name, args = _trimaran_plugin(rng)
        _enable(plugins, name, rng.randint(1, 3))
        config.append({"name": name, "args": {"watcherAddress": WATCHER_ADDRESS, **args}})
        added.append(watcher_metrics(rng, objects))
        for one in (*(o for o in objects if o["kind"] == "Pod"), pod):
            _with_limits(rng, one)
    pre_filters = []
    if rng.random() < 0.3:
        pre_filters.append({"name": "Coscheduling"})
        added += pod_group(rng, objects, pod)
        if rng.random() < 0.8:  # its QueueSort too, as scheduler-plugins' configs enable it
            added.append(queue_pairs(rng, plugins, pod, "Coscheduling"))
    if rng.random() < 0.35:
        pre_filters.append({"name": "CapacityScheduling"})
        plugins["postFilter"] = {"enabled": [{"name": "CapacityScheduling"}],
                                 "disabled": [{"name": "DefaultPreemption"}]}
        added += elastic_quotas(rng)
    if pre_filters:
        plugins["preFilter"] = {**(plugins.get("preFilter") or {}), "enabled": pre_filters}
    grouped = any(o["kind"] == "AppGroup" for o in added)
    if grouped and not pre_filters and rng.random() < 0.7:
        # TopologicalSort, where Coscheduling (whose QueueSort it would replace) is not drawn.
        config.append({"name": "TopologicalSort", "args": {"namespaces": ["default"]}})
        added.append(queue_pairs(rng, plugins, pod, "TopologicalSort"))
    elif not pre_filters and rng.random() < 0.15:
        added.append(queue_pairs(rng, plugins, pod, "QOSSort"))
    return plugins, config, added


#: The `watcherAddress` the Trimaran plugins are given: the oracle serves the case's metrics
#: itself and puts its own address in its place (`oracle/scheduler-plugins/apiserver.go`).
WATCHER_ADDRESS = "http://conformance-oracle-watcher"
#: The pseudo-object a case's node metrics travel in among its objects (taken out before
#: either side reads them: `compare.split_pseudo`).
WATCHER_METRICS = ("conformance.oracle/v1", "WatcherMetrics")


def _trimaran_plugin(rng: random.Random) -> tuple[str, Obj]:
    """One of the Trimaran scorers, with arguments drawn."""
    name = rng.choice(["TargetLoadPacking", "LoadVariationRiskBalancing",
                       "LowRiskOverCommitment"])
    args: Obj = {}
    if name == "TargetLoadPacking":
        if rng.random() < 0.5:
            args["targetUtilization"] = rng.choice([0, 20, 40, 60, 85, 100])
        if rng.random() < 0.3:
            args["defaultRequests"] = {"cpu": rng.choice(["500m", "1", "2"])}
        if rng.random() < 0.3:
            args["defaultRequestsMultiplier"] = rng.choice(["1", "1.5", "2.5"])
    elif name == "LoadVariationRiskBalancing":
        if rng.random() < 0.5:
            args["safeVarianceMargin"] = rng.choice([-1.0, 0.0, 0.5, 1.0, 2.0])
        if rng.random() < 0.5:
            args["safeVarianceSensitivity"] = rng.choice([-1.0, 0.0, 0.5, 1.0, 2.0])
    else:
        if rng.random() < 0.5:
            args["smoothingWindowSize"] = rng.choice([0, 1, 5, 10])
        if rng.random() < 0.5:
            args["riskLimitWeights"] = {"cpu": rng.choice([0.0, 0.3, 0.5, 1.0, 1.5]),
                                        "memory": rng.choice([0.0, 0.5, 1.0])}
    return name, args


def _with_limits(rng: random.Random, pod: Obj) -> None:
    """Limits on a pod's containers, as the Trimaran scorers read them: some cpu and memory
    limits drawn (above, at or below the request, or without one), and the limits the API
    server requires (an extended resource's or hugepages' request is also its limit;
    LowRiskOverCommitment crashes on a request without one)."""
    for container in (*pod["spec"]["containers"], *pod["spec"].get("initContainers", ())):
        resources = container.setdefault("resources", {})
        requests = resources.get("requests") or {}
        limits = dict(resources.get("limits") or {})
        for name, amount in requests.items():
            if name not in ("cpu", "memory", "ephemeral-storage"):
                limits[name] = amount
        if "cpu" not in limits and rng.random() < 0.4:
            limits["cpu"] = rng.choice(["100m", "500m", "1", "2", "4"])
        if "memory" not in limits and rng.random() < 0.4:
            limits["memory"] = rng.choice(["128Mi", "512Mi", "1Gi", "4Gi"])
        if limits:
            resources["limits"] = limits


def watcher_metrics(rng: random.Random, objects: list[Obj]) -> Obj:
    """A load-watcher answer for the case's nodes (some left out, as a node without fresh
    data is): cpu and memory utilisation in percent, average (or latest) and deviation. Its
    window ends far ahead: kube-scheduler's Trimaran counts every assigned pod its informer
    lists at start as assigned just now, which this case cannot say of its pods."""
    node_metrics: Obj = {}
    for obj in objects:
        if obj["kind"] != "Node" or rng.random() < 0.15:
            continue
        metrics = []
        for kind in ("CPU", "Memory"):
            if rng.random() < 0.1:
                continue
            average = round(rng.uniform(0, 100), rng.choice([0, 2]))
            operator = "Latest" if rng.random() < 0.15 else "AVG"
            metrics.append({"name": f"{kind.lower()}_util", "type": kind,
                            "operator": operator, "rollup": "AVG", "value": average})
            if rng.random() < 0.85:
                metrics.append({"name": f"{kind.lower()}_util", "type": kind,
                                "operator": "STD", "rollup": "AVG",
                                "value": round(rng.uniform(0, 40), rng.choice([0, 2]))})
        node_metrics[obj["metadata"]["name"]] = {"metrics": metrics}
    api_version, kind = WATCHER_METRICS
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": "metrics"},
            "metrics": {"timestamp": 4102444800, "source": "conformance",
                        "window": {"duration": "15m", "start": 4102444800 - 900,
                                   "end": 4102444800},
                        "data": {"NodeMetricsMap": node_metrics}}}


#: When the generated PodGroups were created (Unix seconds; stored objects always say).
GROUP_CREATED = 10**6 - 3600
#: The pseudo-object a case's queued pods travel in, for its QueueSort (`compare.split_pseudo`).
QUEUE_SORT_PAIRS = ("conformance.oracle/v1", "QueueSortPairs")


def queue_pairs(rng: random.Random, plugins: Obj, pod: Obj, sort: str) -> Obj:
    """The profile's QueueSort set to `sort` (in `plugins`), and pairs of queued pods for it
    to order (`Less(a, b)`): for Coscheduling, of the pending pod's group, of a group no
    PodGroup defines or of none; for TopologicalSort, of AppGroup `ag`'s workloads (one no
    order lists among them) or of none (a group that does not exist would crash it: it
    dereferences the AppGroup it did not find); for QOSSort, of each QoS class (containers
    without requests, with requests only, or limits equal to them; an init container now
    and then); in the pod's namespace or another; priorities and first times in activeQ
    (Unix ms) drawn to tie often with each other and with the group's creation."""
    plugins["queueSort"] = {"enabled": [{"name": sort}], "disabled": [{"name": "*"}]}
    group = pod["metadata"]["labels"][POD_GROUP_LABEL] if sort == "Coscheduling" else None

    def labels() -> Obj:
        if sort == "TopologicalSort":
            if rng.random() < 0.8:
                return {APP_GROUP_LABEL: "ag",
                        APP_GROUP_LABEL + ".workload": rng.choice([*WORKLOADS, "w9"])}
        elif sort == "Coscheduling":
            label = rng.choice([group, group, "no-such-group", None])
            if label:
                return {POD_GROUP_LABEL: label}
        return {}  # QOSSort's pods differ by their containers

    def queued() -> tuple[Obj, int]:
        queued_pod = {"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"labels": labels(), "name": rng.choice(["q-a", "q-b"]),
                                   "namespace": rng.choice(["default", "default", "team"])},
                      "spec": {"containers": [{"name": "c", "image": "app:1"}],
                               "priority": rng.choice([0, 0, 10])}}
        if sort == "QOSSort":
            spec = queued_pod["spec"]
            spec["containers"] = [_qos_container(rng, f"c{i}") for i in range(rng.randint(1, 2))]
            if rng.random() < 0.2:
                spec["initContainers"] = [_qos_container(rng, "init")]
        return queued_pod, GROUP_CREATED * 1000 + rng.choice([-2000, -1, 0, 0, 1, 1500])

    pairs = []
    for _ in range(4):
        (a, a_ms), (b, b_ms) = queued(), queued()
        pairs.append({"a": a, "b": b, "aInitialMs": a_ms, "bInitialMs": b_ms})
    api_version, kind = QUEUE_SORT_PAIRS
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": "pairs"},
            "pairs": pairs}


def _qos_container(rng: random.Random, name: str) -> Obj:
    """A container of a QoS class drawn: no requests, requests (cpu, memory or both), or
    limits equal to the requests of both."""
    container: Obj = {"name": name, "image": "app:1"}
    kind = rng.choice(["none", "requests", "limits"])
    if kind == "requests":
        requests = {k: v for k, v in (("cpu", "100m"), ("memory", "64Mi")) if rng.random() < 0.7}
        if requests:
            container["resources"] = {"requests": requests}
    elif kind == "limits":
        amounts = {"cpu": rng.choice(["100m", "1"]), "memory": "64Mi"}
        container["resources"] = {"requests": dict(amounts), "limits": dict(amounts)}
    return container


def _enable(plugins: Obj, name: str, weight: int) -> None:
    multi = dict(plugins.get("multiPoint") or {})
    multi["enabled"] = [*multi.get("enabled", []), {"name": name, "weight": weight}]
    plugins["multiPoint"] = multi


APP_GROUP_LABEL = "appgroup.diktyo.x-k8s.io"
WORKLOADS = ("w1", "w2", "w3")


def app_group(rng: random.Random, objects: list[Obj], pod: Obj) -> list[Obj]:
    """AppGroup `ag` (three workloads, each depending on others with a maximum network cost)
    and NetworkTopology `nt` (costs between some zones and between the regions), both in
    `default`; the pending pod and some bound pods join workloads of the group."""
    def workload(name: str) -> Obj:
        return {"kind": "Deployment", "name": name, "selector": name, "apiVersion": "apps/v1",
                "namespace": "default"}
    workloads = [{"workload": workload(w), "dependencies": [
        {"workload": workload(d), "minBandwidth": "100Mi", "maxNetworkCost": rng.randint(0, 30)}
        for d in rng.sample(WORKLOADS, rng.randint(0, 2))]} for w in WORKLOADS]
    # The controller's topology order (TopologicalSort reads it): by selector, each workload's
    # index in the sorted order (here drawn; a workload now and then left out).
    indexes = rng.sample(range(1, len(WORKLOADS) + 1), len(WORKLOADS))
    order = [{"workload": workload(w), "index": i}
             for w, i in zip(WORKLOADS, indexes, strict=True) if rng.random() < 0.9]
    group = {"apiVersion": "appgroup.diktyo.x-k8s.io/v1alpha1", "kind": "AppGroup",
             "metadata": {"name": "ag", "namespace": "default", "uid": "uid-ag"},
             "spec": {"numMembers": 3, "topologySortingAlgorithm": "KahnSort",
                      "workloads": workloads},
             "status": {"topologyOrder": order}}

    def origins(values: list[str]) -> list[Obj]:
        return [{"origin": o, "costList": [
            {"destination": d, "networkCost": rng.randint(0, 40)}
            for d in values if d != o and rng.random() < 0.7]} for o in values]
    topology = {"apiVersion": "networktopology.diktyo.x-k8s.io/v1alpha1",
                "kind": "NetworkTopology",
                # With a uid, as every stored object has: NetworkOverhead takes one without for
                # none found, and its PreFilter then dereferences nil (a crash upstream).
                "metadata": {"name": "nt", "namespace": "default", "uid": "uid-nt"},
                "spec": {"weights": [{"name": "UserDefined", "topologyList": [
                    {"topologyKey": "topology.kubernetes.io/zone", "originList": origins(list(ZONES))},
                    {"topologyKey": "topology.kubernetes.io/region",
                     "originList": origins(["region-1", "region-2"])}]}]}}
    members = [pod] if rng.random() < 0.85 else []
    members += [o for o in objects if o["kind"] == "Pod" and o["spec"].get("nodeName")
                and rng.random() < 0.5]
    for member in members:
        labels = member["metadata"].setdefault("labels", {})
        labels[APP_GROUP_LABEL] = "ag"
        labels[APP_GROUP_LABEL + ".workload"] = rng.choice(WORKLOADS)
    return [group, topology]


NRT_API = "topology.node.k8s.io/v1alpha2"
TOPOLOGY_POLICIES = ("single-numa-node", "single-numa-node", "single-numa-node", "none",
                     "best-effort", "restricted")


def node_topologies(rng: random.Random, objects: list[Obj]) -> list[Obj]:
    """A NodeResourceTopology for most nodes: two NUMA zones sharing the node's cpu and memory
    (each with what is still available of its share drawn), and the Topology Manager's policy
    and scope as attributes."""
    out = []
    for node in (o for o in objects if o["kind"] == "Node"):
        if rng.random() < 0.2:
            continue
        allocatable = node["status"]["allocatable"]
        shares = {"cpu": int(parse_quantity(allocatable["cpu"]) * 1000) // 2,
                  "memory": int(parse_quantity(allocatable["memory"])) // 2}
        zones = []
        for zone in range(2):
            resources = []
            for name, share in shares.items():
                available = int(share * rng.choice([1, 1, 0.75, 0.5, 0.25, 0]))
                text = (lambda v: f"{v}m") if name == "cpu" else str
                resources.append({"name": name, "capacity": text(share),
                                  "allocatable": text(share), "available": text(available)})
            zones.append({"name": f"node-{zone}", "type": "Node", "resources": resources})
        out.append({"apiVersion": NRT_API, "kind": "NodeResourceTopology",
                    "metadata": {"name": node["metadata"]["name"]}, "zones": zones,
                    "attributes": [
                        {"name": "topologyManagerPolicy", "value": rng.choice(TOPOLOGY_POLICIES)},
                        {"name": "topologyManagerScope", "value": rng.choice(["container", "pod"])}]})
    return out


def guaranteed(pod: Obj) -> None:
    """Make `pod` Guaranteed: each container's limits its requests, cpu and memory set."""
    for container in (*pod["spec"]["containers"], *pod["spec"].get("initContainers", ())):
        requests = dict(container.get("resources", {}).get("requests") or {})
        for name, default in (("cpu", "1"), ("memory", "256Mi")):
            if parse_quantity(requests.get(name, 0)) == 0:  # unset or zero
                requests[name] = default
        container["resources"] = {"requests": requests, "limits": dict(requests)}


def _over_committed(objects: list[Obj]) -> bool:
    """Whether some node's bound pods ask for more of a resource than it has (every container,
    init containers and overhead summed: an over-estimate, which only errs towards True)."""
    asked: dict[str, dict[str, Fraction]] = {}
    for obj in objects:
        node_name = obj["spec"].get("nodeName") if obj["kind"] == "Pod" else None
        if not node_name:
            continue
        total = asked.setdefault(node_name, {"pods": Fraction(0)})
        total["pods"] += 1
        spec = obj["spec"]
        parts = [c.get("resources", {}).get("requests") or {}
                 for c in (*spec.get("containers", ()), *spec.get("initContainers", ()))]
        for requests in (*parts, spec.get("overhead") or {}):
            for name, amount in requests.items():
                total[name] = total.get(name, Fraction(0)) + parse_quantity(amount)
    for obj in objects:
        if obj["kind"] != "Node":
            continue
        allocatable = obj["status"].get("allocatable") or {}
        for name, amount in asked.get(obj["metadata"]["name"], {}).items():
            if amount > parse_quantity(allocatable.get(name, 0)):
                return True
    return False
