"""Rendered manifests read as the few facts the manifests checks follow: each Deployment's pod
(its labels, containers, volumes, account and replicas), label selection, names."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Container:
    name: str
    argv: list[str]
    image: str
    #: Its ports, name → number.
    ports: dict[str, int]
    #: Where it mounts each volume, volume name → path.
    mounts: dict[str, str]


@dataclass(frozen=True)
class Pod:
    """A Deployment's pod template."""

    deployment: str
    namespace: str
    replicas: int
    labels: dict[str, str]
    containers: list[Container]
    account: str
    #: The ConfigMaps and Secrets its volumes hold, volume name → object name.
    config_maps: dict[str, str] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)


def meta(doc: dict[str, Any]) -> tuple[str, str]:
    """An object's (namespace, name)."""
    metadata = doc.get("metadata") or {}
    return str(metadata.get("namespace", "")), str(metadata.get("name", ""))


def as_int(text: Any, default: int) -> int:
    try:
        return int(text)
    except (TypeError, ValueError):
        return default


def pods(documents: list[dict[str, Any]]) -> list[Pod]:
    found = []
    for doc in documents:
        if doc.get("kind") != "Deployment":
            continue
        namespace, name = meta(doc)
        spec = doc.get("spec") or {}
        template = spec.get("template") or {}
        pod = template.get("spec") or {}
        containers = []
        for c in pod.get("containers") or []:
            containers.append(Container(
                str(c.get("name", "")),
                [str(a) for a in [*(c.get("command") or []), *(c.get("args") or [])]],
                str(c.get("image", "")),
                {str(p.get("name")): as_int(p.get("containerPort"), 0)
                 for p in c.get("ports") or [] if p.get("name")},
                {str(m.get("name")): str(m.get("mountPath", "")) for m in c.get("volumeMounts") or []}))
        volumes = pod.get("volumes") or []
        found.append(Pod(
            name, namespace, as_int(spec.get("replicas", 1), 1),
            dict((template.get("metadata") or {}).get("labels") or {}), containers,
            str(pod.get("serviceAccountName") or "default"),
            {str(v.get("name")): str(v["configMap"].get("name")) for v in volumes
             if isinstance(v.get("configMap"), dict)},
            {str(v.get("name")): str(v["secret"].get("secretName")) for v in volumes
             if isinstance(v.get("secret"), dict)}))
    return found


def selected(candidates: list[Pod], namespace: str, selector: dict[str, Any]) -> list[Pod]:
    """The pods a label selector's `matchLabels` (or a Service's selector) picks in a
    namespace; an empty selector picks none here."""
    return [p for p in candidates if p.namespace == namespace and selector
            and all(p.labels.get(k) == v for k, v in selector.items())]
