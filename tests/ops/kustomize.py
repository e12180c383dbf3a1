"""The subset of kustomize that manifests/kustomization.yaml uses, to render it offline.

Supported: `resources` (files), `configMapGenerator` (`files`, `literals`, per-entry
`namespace`, `options.disableNameSuffixHash`), `generatorOptions.disableNameSuffixHash`, and the
rewrite of ConfigMap references in pod templates to the generated (hash-suffixed) names. Any
other kustomization key fails loudly rather than being ignored.
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import yaml

SUPPORTED = {"apiVersion", "kind", "resources", "configMapGenerator", "generatorOptions"}


class Unsupported(Exception):
    pass


def _suffix(config_map: dict[str, Any]) -> str:
    """A 10-character content hash, in kustomize's alphabet (no vowels or look-alikes)."""
    encoded = json.dumps({"kind": "ConfigMap", "name": config_map["metadata"]["name"],
                          "data": config_map["data"]}, sort_keys=True)
    digest = hashlib.sha256(encoded.encode()).hexdigest()[:10]
    return digest.translate(str.maketrans("013ae", "ghkmt"))


def _generate(entry: dict[str, Any], base: Path, hash_names: bool) -> dict[str, Any]:
    unknown = set(entry) - {"name", "namespace", "files", "literals", "options"}
    if unknown:
        raise Unsupported(f"configMapGenerator keys {sorted(unknown)}")
    data: dict[str, str] = {}
    for item in entry.get("files", []):
        key, _, file = item.rpartition("=") if "=" in item else ("", "", item)
        path = (base / file).resolve()
        if base.resolve() not in path.parents:
            raise Unsupported(f"{file}: kustomize refuses files outside the kustomization")
        data[key or Path(file).name] = path.read_text(encoding="utf-8")
    for item in entry.get("literals", []):
        key, _, value = item.partition("=")
        data[key] = value
    metadata = {"name": entry["name"]}
    if "namespace" in entry:
        metadata["namespace"] = entry["namespace"]
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data}
    if hash_names and not entry.get("options", {}).get("disableNameSuffixHash"):
        metadata["name"] = f"{entry['name']}-{_suffix(config_map)}"
    return config_map


def _pod_spec(doc: dict[str, Any]) -> dict[str, Any] | None:
    spec = doc.get("spec", {})
    if doc.get("kind") == "Pod":
        return spec
    if doc.get("kind") == "CronJob":
        return spec.get("jobTemplate", {}).get("spec", {}).get("template", {}).get("spec")
    return spec.get("template", {}).get("spec") if "template" in spec else None


def _rename_references(doc: dict[str, Any], renames: dict[tuple[str | None, str], str]) -> None:
    pod = _pod_spec(doc)
    if pod is None:
        return
    namespace = doc["metadata"].get("namespace")

    def rename(ref: dict[str, Any] | None) -> None:
        if ref and (namespace, ref.get("name")) in renames:
            ref["name"] = renames[(namespace, ref["name"])]

    for volume in pod.get("volumes", []):
        rename(volume.get("configMap"))
        for source in volume.get("projected", {}).get("sources", []):
            rename(source.get("configMap"))
    for container in pod.get("containers", []) + pod.get("initContainers", []):
        for env in container.get("env", []):
            rename(env.get("valueFrom", {}).get("configMapKeyRef"))
        for env_from in container.get("envFrom", []):
            rename(env_from.get("configMapRef"))


def build(directory: Path) -> list[dict[str, Any]]:
    """Render `directory/kustomization.yaml` to a list of documents."""
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text())
    unknown = set(kustomization) - SUPPORTED
    if unknown:
        raise Unsupported(f"kustomization keys {sorted(unknown)} are not modelled by this helper")
    documents: list[dict[str, Any]] = []
    for resource in kustomization.get("resources", []):
        path = directory / resource
        if path.is_dir():
            raise Unsupported(f"{resource}: directories (bases) are not modelled")
        documents += [d for d in yaml.safe_load_all(path.read_text()) if d]
    hash_names = not kustomization.get("generatorOptions", {}).get("disableNameSuffixHash")
    renames: dict[tuple[str | None, str], str] = {}
    for entry in kustomization.get("configMapGenerator", []):
        config_map = _generate(entry, directory, hash_names)
        renames[(entry.get("namespace"), entry["name"])] = config_map["metadata"]["name"]
        documents.append(config_map)
    documents = [copy.deepcopy(d) for d in documents]
    for doc in documents:
        _rename_references(doc, renames)
    return documents
