"""Unknown field names of the Kubernetes objects the simulator and the snapshot read.

The model (`extender.model.k8s`) decodes only the fields the engine reads, so a mistyped
field (`spec.nodeSelectr`, `containers[0].resourcse`, a Deployment's `spec.replica`) would
vanish silently and change the result. kubectl reports such keys from the Kubernetes OpenAPI
schema; so does this module, from the field names of that schema for the kinds read
(`extender/data/k8s_fields.json`, written by `tools/gen_k8s_fields.py`). These are warnings,
never errors: a file kubectl accepts loads as before.

Free-form maps (labels, annotations, `resources.requests`, nodeSelector,
`managedFields[].fieldsV1`, …) hold anybody's keys and are not looked into. An object of
another apiVersion than the schema's (`apps/v1beta1`) is not checked.

Two ways, one answer: `unknown_fields` walks a decoded object (a dict: YAML, workloads);
`raw_unknown_fields` checks raw JSON (a snapshot's items) in msgspec's C decoder with
structs that forbid unknown fields, and walks the object only when that fails (a typo, or a
value of an unexpected shape), so a 100 000-pod snapshot pays little for it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

import msgspec

from extender.data import data_file
from extender.model.names import suggest

FIELDS_FILE = "k8s_fields.json"
#: At most this many unknown-field warnings per file; then one line counting the others.
MAX_WARNINGS = 20


@cache
def _schema() -> tuple[dict[str, tuple[str, str]], dict[str, dict[str, str | None]]]:
    """(kind -> (apiVersion, type), type -> {field: type of its object(s) or None})."""
    data = json.loads(data_file(FIELDS_FILE).read_text(encoding="utf-8"))
    kinds = {kind: (entry["apiVersion"], entry["type"]) for kind, entry in data["kinds"].items()}
    return kinds, data["types"]


def checked_kinds() -> frozenset[str]:
    return frozenset(_schema()[0])


def _root_type(kind: str | None, obj: Mapping[str, Any]) -> str | None:
    """The schema type to check `obj` against, or None (a kind without one, or another
    apiVersion than the schema's)."""
    entry = _schema()[0].get(kind or "")
    if entry is None:
        return None
    api_version, type_name = entry
    written = obj.get("apiVersion")
    return type_name if written in (None, "", api_version) else None


def _walk(value: Mapping[str, Any], type_name: str, path: str,
          types: dict[str, dict[str, str | None]]) -> Iterator[tuple[str, str]]:
    fields = types[type_name]
    for key, sub in value.items():
        target = fields.get(key, "")
        if target == "":
            if key not in fields:
                yield f"{path}{key}", suggest(str(key), list(fields))
            continue
        if target is None:
            continue
        if isinstance(sub, Mapping):
            yield from _walk(sub, target, f"{path}{key}.", types)
        elif isinstance(sub, list):
            for i, item in enumerate(sub):
                if isinstance(item, Mapping):
                    yield from _walk(item, target, f"{path}{key}[{i}].", types)


def unknown_fields(obj: Mapping[str, Any], kind: str | None = None) -> list[tuple[str, str]]:
    """(field path, " (did you mean X?)" or "") of every key of `obj` the Kubernetes schema of
    its kind (`kind`, else its own `kind`) does not know, in the object's order."""
    type_name = _root_type(kind or obj.get("kind"), obj)
    if type_name is None:
        return []
    return list(_walk(obj, type_name, "", _schema()[1]))


@cache
def _structs() -> dict[str, type[msgspec.Struct]]:
    """A msgspec struct per schema type that forbids unknown fields; scalar and free-form
    fields are `msgspec.Raw` (kept as bytes, not decoded). The types have no cycle: each is
    built after the types of its fields."""
    types = _schema()[1]
    built: dict[str, type[msgspec.Struct]] = {}

    def build(name: str) -> type[msgspec.Struct]:
        if name in built:
            return built[name]
        fields: list[tuple[str, Any, Any]] = []
        rename: dict[str, str] = {}
        for i, (field, target) in enumerate(types[name].items()):
            annotation: Any = msgspec.Raw
            if target is not None:
                struct = build(target)
                annotation = struct | list[struct] | None  # type: ignore[valid-type]
            fields.append((f"f{i}", annotation, msgspec.UNSET))
            rename[f"f{i}"] = field
        built[name] = msgspec.defstruct(
            name.replace(".", "_"), fields, rename=rename, forbid_unknown_fields=True,
            gc=False)
        return built[name]

    for name in types:
        build(name)
    return built


@cache
def _decoder(type_name: str) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(_structs()[type_name])


def raw_unknown_fields(raw: msgspec.Raw | bytes, kind: str) -> list[tuple[str, str]]:
    """`unknown_fields` of a raw JSON object of that kind, without building its dicts when
    it has no unknown field (the common case)."""
    entry = _schema()[0].get(kind)
    if entry is None:
        return []
    try:
        _decoder(entry[1]).decode(raw)
        return []
    except msgspec.DecodeError:  # an unknown field, another shape or apiVersion: look closer
        pass
    try:
        obj = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return []  # the loader reports invalid JSON its own way
    return unknown_fields(obj, kind) if isinstance(obj, dict) else []


def describe(kind: str, obj: Mapping[str, Any] | Any) -> str:
    """`Pod default/web-0`, `Node n1`: an object as the warnings name it."""
    meta = obj.get("metadata") if isinstance(obj, Mapping) else getattr(obj, "metadata", None)
    if isinstance(meta, Mapping):
        name, namespace = meta.get("name"), meta.get("namespace")
    else:
        name, namespace = getattr(meta, "name", None), getattr(meta, "namespace", None)
    who = f"{namespace}/{name}" if namespace else str(name or "?")
    return f"{kind} {who}"


def warning_lines(where: str, found: list[tuple[str, str]]) -> list[str]:
    """`where: spec.nodeSelectr: unknown field (did you mean nodeSelector?)` per field;
    `where` names the file and the object."""
    return [f"{where}: {path}: unknown field{hint}" for path, hint in found]


def capped(warnings: list[str], where: str) -> list[str]:
    """`warnings` with those beyond MAX_WARNINGS counted in one last line."""
    if len(warnings) <= MAX_WARNINGS:
        return warnings
    more = len(warnings) - MAX_WARNINGS
    return warnings[:MAX_WARNINGS] + [f"{where}: {more} more unknown field(s) not shown"]
