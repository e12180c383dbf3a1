"""How many replicas run beside this extender, read from the API server at start.

A policy with Coscheduling or CapacityScheduling keeps gang holds and quota reservations in
one process, so `serve` refuses to run it as one of several replicas without
`--leader-elect`. The pod finds itself (`POD_NAME`, else its hostname, which is the pod's
name in a Deployment or StatefulSet), then the ReplicaSet or StatefulSet that controls it, and
reads `spec.replicas`.
"""

from __future__ import annotations

import msgspec

from extender.kube.client import KubeClient, pod_path
from extender.model import k8s

#: The controllers whose `spec.replicas` says how many copies of the pod run.
CONTROLLERS = {"ReplicaSet": "replicasets", "StatefulSet": "statefulsets"}


class _Replicas(msgspec.Struct):
    replicas: int = 1


class _Controller(msgspec.Struct):
    spec: _Replicas = msgspec.field(default_factory=_Replicas)


async def replica_count(client: KubeClient, namespace: str, pod: str) -> tuple[str, int] | None:
    """(`Kind/name` of the pod's controller, its desired replicas); None for a pod that no
    ReplicaSet or StatefulSet controls. API errors propagate (`ApiError`, transport errors)."""
    own = await client.get(pod_path(namespace, pod), k8s.Pod)
    owner = next((o for o in own.metadata.owner_references or [] if o.controller), None)
    if owner is None or owner.kind not in CONTROLLERS:
        return None
    path = f"/apis/apps/v1/namespaces/{namespace}/{CONTROLLERS[owner.kind]}/{owner.name}"
    controller = await client.get(path, _Controller)
    return f"{owner.kind}/{owner.name}", controller.spec.replicas
