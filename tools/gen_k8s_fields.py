"""Write `extender/data/k8s_fields.json`: the field names of the Kubernetes objects the
simulator and the snapshot loader read, from the Kubernetes OpenAPI schema that
`kubernetes_validate` (a test dependency) ships, so that a mistyped field name
(`spec.nodeSelectr`) can be reported (`extender.state.fieldcheck`).

    python -m tools.gen_k8s_fields            # rewrite the file
    python -m tools.gen_k8s_fields --check    # exit 1 if the file is not what it would write

The file holds, for every object type reachable from the kinds below, its field names and,
for a field whose value is an object or an array of objects with known fields, that type's
name; `null` otherwise (a scalar, or a free-form map: labels, `resources.requests`,
nodeSelector, `managedFields[].fieldsV1`, …, whose keys are anybody's). Descriptions are left
out, and type names lose their `io.k8s.` prefix, to keep the file small.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

#: The kinds whose fields are checked, with the API group/version the schema is taken from.
KINDS: dict[str, tuple[str, str]] = {
    "Pod": ("", "v1"),
    "Node": ("", "v1"),
    "Namespace": ("", "v1"),
    "Service": ("", "v1"),
    "ReplicationController": ("", "v1"),
    "PodDisruptionBudget": ("policy", "v1"),
    "PriorityClass": ("scheduling.k8s.io", "v1"),
    "Deployment": ("apps", "v1"),
    "ReplicaSet": ("apps", "v1"),
    "StatefulSet": ("apps", "v1"),
    "DaemonSet": ("apps", "v1"),
    "Job": ("batch", "v1"),
}
#: The newest schema used: the simulator follows kube-scheduler up to this release.
MAX_VERSION = (1, 37)
OUT = Path(__file__).resolve().parent.parent / "extender" / "data" / "k8s_fields.json"
_PREFIX = "io.k8s."


def _version_key(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in name.lstrip("v").split("-")[0].split("."))


def newest_version() -> str:
    """The newest `X.Y.Z` of kubernetes_validate's schemas that is at most MAX_VERSION."""
    from kubernetes_validate.utils import all_versions

    usable = [v for v in all_versions() if _version_key(v)[:2] <= MAX_VERSION]
    return max(usable, key=_version_key)


def _definitions(version: str) -> dict[str, Any]:
    import kubernetes_validate

    root = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    path = root / f"v{version}-local" / "_definitions.json"
    return json.loads(path.read_text(encoding="utf-8"))["$defs"]


def _short(ref: str) -> str:
    name = ref.rsplit("/", 1)[-1]
    return name[len(_PREFIX):] if name.startswith(_PREFIX) else name


def _target(schema: dict[str, Any], defs: dict[str, Any]) -> str | None:
    """The definition whose fields a value of this field schema holds: a `$ref` to an object
    type with properties, directly or as the items of an array; None otherwise."""
    if schema.get("items"):
        schema = schema["items"]
    ref = schema.get("$ref")
    if not ref:
        return None
    name = ref.rsplit("/", 1)[-1]
    return name if defs[name].get("properties") else None


def build(version: str) -> dict[str, Any]:
    defs = _definitions(version)
    by_gvk = {(g["group"], g["version"], g["kind"]): name for name, d in defs.items()
              for g in d.get("x-kubernetes-group-version-kind", ())}
    kinds = {kind: by_gvk[(group, ver, kind)] for kind, (group, ver) in KINDS.items()}
    types: dict[str, dict[str, str | None]] = {}
    todo = sorted(set(kinds.values()))
    while todo:
        name = todo.pop()
        if _short(name) in types:
            continue
        fields: dict[str, str | None] = {}
        for field, schema in sorted(defs[name]["properties"].items()):
            target = _target(schema, defs)
            fields[field] = _short(target) if target else None
            if target and _short(target) not in types:
                todo.append(target)
        types[_short(name)] = fields
    return {
        "source": f"Kubernetes v{version} OpenAPI schema (kubernetes_validate); "
                  "written by tools/gen_k8s_fields.py",
        "kinds": {kind: {"apiVersion": f"{g}/{v}" if g else v, "type": _short(kinds[kind])}
                  for kind, (g, v) in KINDS.items()},
        "types": dict(sorted(types.items())),
    }


def render(data: dict[str, Any]) -> str:
    """One type a line: small, and a regenerated file diffs by type."""
    lines = ["{", f'"source": {json.dumps(data["source"])},',
             f'"kinds": {json.dumps(data["kinds"], separators=(",", ":"))},', '"types": {']
    items = list(data["types"].items())
    for i, (name, fields) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        lines.append(f"{json.dumps(name)}: {json.dumps(fields, separators=(',', ':'))}{comma}")
    lines += ["}", "}"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the committed file instead of writing it")
    args = parser.parse_args(argv)
    text = render(build(newest_version()))
    if args.check:
        same = OUT.is_file() and OUT.read_text(encoding="utf-8") == text
        if not same:
            print(f"{OUT} is stale: run python -m tools.gen_k8s_fields", file=sys.stderr)
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
