"""Generated cases: a small cluster (nodes, bound pods, a Namespace) and a pending pod, drawn
from one `random.Random` so a seed replays them. What is drawn is what the engine's default
plugins read: requests (containers, restartable init containers, overhead), node allocatable
with extended resources, labels across zones and hostnames, taints of every effect and
tolerations, node selectors and node affinity (required and preferred, every operator),
host ports, images, topology spread constraints and inter-pod (anti-)affinity.
"""

from __future__ import annotations

import random
from typing import Any

Obj = dict[str, Any]
ZONES = ("zone-a", "zone-b", "zone-c")
APPS = ("web", "db", "cache")
TAINT_KEYS = ("dedicated", "gpu", "spot")
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
GPU = "example.com/gpu"
IMAGES = ("registry.example/app:1", "registry.example/db:2", "busybox:1.36")


def _requests(rng: random.Random, big: bool = False) -> Obj:
    out: Obj = {}
    if rng.random() < 0.85:
        out["cpu"] = f"{rng.choice([0, 50, 100, 250, 500, 1000, 2000] + ([4000] if big else []))}m"
    if rng.random() < 0.85:
        out["memory"] = f"{rng.choice([0, 64, 128, 512, 1024, 2048, 4096])}Mi"
    if rng.random() < 0.1:
        out[GPU] = str(rng.randint(1, 2))
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


def _spec(rng: random.Random) -> Obj:
    spec: Obj = {"containers": [_container(rng, f"c{i}") for i in range(rng.randint(1, 2))]}
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


def bound_pod(rng: random.Random, name: str, node_name: str) -> Obj:
    spec = _spec(rng)
    spec["nodeName"] = node_name
    if rng.random() < 0.15:  # its own terms: the incoming pod must respect them (symmetry)
        kind = rng.choice(["podAffinity", "podAntiAffinity"])
        preferred = rng.random() < 0.5
        key = ("preferredDuringSchedulingIgnoredDuringExecution" if preferred
               else "requiredDuringSchedulingIgnoredDuringExecution")
        spec["affinity"] = {kind: {key: _pod_affinity_terms(rng, preferred)}}
    meta: Obj = {"name": name, "namespace": rng.choice(NAMESPACES), "uid": f"uid-{name}",
                 "labels": {"app": rng.choice(APPS)}}
    if rng.random() < 0.05:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
            "status": {"phase": "Running"}}


def _selector(rng: random.Random) -> Obj:
    return {"matchLabels": {"app": rng.choice(APPS)}}


def _node_affinity(rng: random.Random) -> Obj:
    def requirement() -> Obj:
        op = rng.choice(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"])
        if op in ("Gt", "Lt"):
            return {"key": "tier", "operator": op, "values": [rng.choice(["1", "2"])]}
        if op in ("Exists", "DoesNotExist"):
            return {"key": "disktype", "operator": op}
        return {"key": "topology.kubernetes.io/zone", "operator": op,
                "values": rng.sample(ZONES, rng.randint(1, 2))}
    out: Obj = {}
    if rng.random() < 0.6:
        out["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
            {"matchExpressions": [requirement() for _ in range(rng.randint(1, 2))]}
            for _ in range(rng.randint(1, 2))]}
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


def pending_pod(rng: random.Random) -> Obj:
    spec = _spec(rng)
    labels = {"app": rng.choice(APPS)}
    if rng.random() < 0.15:
        spec["nodeSelector"] = {"disktype": rng.choice(["ssd", "hdd"])}
    affinity: Obj = {}
    if rng.random() < 0.4:
        affinity["nodeAffinity"] = _node_affinity(rng)
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
             "labelSelector": {"matchLabels": labels},
             **({"minDomains": rng.randint(1, 4)}
                if when == "DoNotSchedule" and rng.random() < 0.3 else {}),
             **({"nodeAffinityPolicy": rng.choice(["Honor", "Ignore"])}
                if rng.random() < 0.3 else {}),
             **({"nodeTaintsPolicy": rng.choice(["Honor", "Ignore"])}
                if rng.random() < 0.3 else {})}
            for key, when in rng.sample(pairs, rng.randint(1, 2))]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "pending", "namespace": "default", "uid": "uid-pending",
                         "labels": labels},
            "spec": spec, "status": {"phase": "Pending"}}


def case(rng: random.Random, max_nodes: int = 8) -> tuple[list[Obj], Obj]:
    """(objects, pending pod): a Namespace, nodes and the pods bound to them."""
    nodes = [node(rng, i) for i in range(rng.randint(1, max_nodes))]
    objects: list[Obj] = [
        {"apiVersion": "v1", "kind": "Namespace",
         "metadata": {"name": ns, "labels": {"team": ns.removeprefix("team-")}}}
        for ns in NAMESPACES]
    objects += nodes
    for n in nodes:
        for j in range(rng.randint(0, 3)):
            objects.append(bound_pod(rng, f"{n['metadata']['name']}-p{j}", n["metadata"]["name"]))
    return objects, pending_pod(rng)


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
