"""A small schema language that checks decoded YAML/JSON the way Go's strict decoder would.

kube-scheduler decodes its configuration with a strict, case-sensitive codec: an unknown or
mis-cased key, a string where a bool belongs, or a duration without a unit stops it at start-up.
`Obj`, `List`, `Str` … mirror the Go struct fields so those mistakes are found before deploying.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from extender.model.names import qualified_name_errors, suggest
from extender.ops.problems import Collector

# --- paths ---------------------------------------------------------------------------------


def child(path: str, key: str | int) -> str:
    """`extenders` + 0 → `extenders[0]`; `extenders[0]` + `weight` → `extenders[0].weight`."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


# --- Go value rules --------------------------------------------------------------------------

_DURATION = re.compile(r"^[-+]?(?:0|(?:(?:\d+\.?\d*|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+)$")
_DURATION_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0,
                 "h": 3600.0}


def as_list(value: Any) -> list[Any]:
    """A decoded document's list, or [] for anything else (a problem reported elsewhere)."""
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> dict[str, Any]:
    """A decoded document's mapping, or {} for anything else."""
    return value if isinstance(value, dict) else {}


def as_int(value: Any) -> int | None:
    """An integer (a YAML float with no fraction counts), or None; booleans are not."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_go_duration(text: str) -> float:
    """Seconds for a Go `time.ParseDuration` string ("5s", "1m30s", "250ms"); ValueError if invalid."""
    if not _DURATION.match(text):
        if re.fullmatch(r"[-+]?\d+(\.\d*)?", text):
            raise ValueError(f"missing unit in duration {text!r} (write e.g. \"{text}s\")")
        raise ValueError(f"invalid duration {text!r} (Go duration such as \"5s\", \"1m30s\", \"500ms\")")
    sign = -1.0 if text.startswith("-") else 1.0
    return sign * sum(float(num) * _UNIT_SECONDS[unit] for num, unit in _DURATION_PART.findall(text))


def format_go_duration(seconds: float) -> str:
    """The short form kube-scheduler itself prints: 5 → "5s", 0.5 → "500ms", 90 → "1m30s"."""
    if seconds and seconds < 1:
        return f"{round(seconds * 1000)}ms"
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    out = (f"{hours}h" if hours else "") + (f"{minutes}m" if minutes else "")
    return out + (f"{secs}s" if secs or not out else "")




def extended_resource_errors(name: str) -> list[str]:
    """kube-scheduler's managedResources rule: a qualified name that is an *extended* resource."""
    errors = qualified_name_errors(name)
    if errors:
        return errors
    if "/" not in name:
        return [f"{name!r} is not an extended resource name: it needs a domain prefix such as "
                f"'example.com/{name}' (cpu, memory … are native resources)"]
    if "kubernetes.io/" in name:
        return [f"{name!r} is not an extended resource name: the kubernetes.io domains are "
                "reserved for native resources"]
    if name.startswith("requests."):
        return [f"{name!r} is not an extended resource name: the 'requests.' prefix is reserved "
                "for quota"]
    if qualified_name_errors("requests." + name):
        return [f"{name!r} is not an extended resource name: the prefix is too long once "
                "'requests.' is prepended for quota"]
    return []


# --- schema ------------------------------------------------------------------------------------

class Spec:
    """Checks one decoded value; reports through `out` and never raises."""

    go_type = "value"

    def check(self, value: Any, path: str, out: Collector) -> None:  # pragma: no cover
        raise NotImplementedError

    def _type_error(self, value: Any, path: str, out: Collector) -> None:
        out.error(path, f"must be {self.go_type}, got {_describe(value)}")


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"number {value}"
    if isinstance(value, str):
        return f"string {value!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


class Anything(Spec):
    def check(self, value: Any, path: str, out: Collector) -> None:
        return None


class Str(Spec):
    go_type = "a string"

    def __init__(self, choices: tuple[str, ...] = ()) -> None:
        self.choices = choices

    def check(self, value: Any, path: str, out: Collector) -> None:
        if value is None:
            return
        if not isinstance(value, str):
            self._type_error(value, path, out)
        elif self.choices and value not in self.choices:
            out.error(path, f"{value!r} is not one of {', '.join(self.choices)}"
                      + suggest(value, list(self.choices)))


class Bool(Spec):
    go_type = "a boolean (true or false)"

    def check(self, value: Any, path: str, out: Collector) -> None:
        if value is not None and not isinstance(value, bool):
            self._type_error(value, path, out)


class Int(Spec):
    def __init__(self, bits: int = 64) -> None:
        self.bits = bits
        self.go_type = f"an integer (int{bits})"

    def check(self, value: Any, path: str, out: Collector) -> None:
        if value is None:
            return
        # YAML 1.0 reaches Go as the JSON number 1, which an int field accepts; 1.5 does not.
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            self._type_error(value, path, out)
            return
        limit = 2 ** (self.bits - 1)
        if not -limit <= value < limit:
            out.error(path, f"{value} overflows int{self.bits}")


class Num(Spec):
    go_type = "a number"

    def check(self, value: Any, path: str, out: Collector) -> None:
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            self._type_error(value, path, out)


class Duration(Spec):
    """metav1.Duration: a JSON string parsed by Go's time.ParseDuration."""

    go_type = 'a duration string such as "5s"'

    def check(self, value: Any, path: str, out: Collector) -> None:
        if value is None:
            return
        if not isinstance(value, str):
            hint = ""
            if isinstance(value, int | float) and not isinstance(value, bool):
                hint = f' (write "{value}s" for seconds; integer nanoseconds belong to the legacy Policy file)'
            out.error(path, f"must be {self.go_type}, got {_describe(value)}{hint}")
            return
        try:
            parse_go_duration(value)
        except ValueError as exc:
            out.error(path, str(exc))


class Base64(Spec):
    """A Go []byte: base64 (standard alphabet, padded) in JSON and YAML."""

    go_type = "a base64 string"

    def check(self, value: Any, path: str, out: Collector) -> None:
        if value is None:
            return
        if not isinstance(value, str):
            self._type_error(value, path, out)
            return
        try:
            base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            out.error(path, "is not valid base64 (PEM data must be base64-encoded once more here)")


@dataclass
class List(Spec):
    item: Spec
    go_type: str = "a list"

    def check(self, value: Any, path: str, out: Collector) -> None:
        if value is None:
            return
        if not isinstance(value, list):
            self._type_error(value, path, out)
            return
        for i, element in enumerate(value):
            self.item.check(element, child(path, i), out)


@dataclass
class Obj(Spec):
    """A Go struct: known keys only (case-sensitive), each checked by its own spec.

    `type_meta` accepts `apiVersion`/`kind` too (plugin args may carry their own).
    `fold_case` models Go's non-strict encoding/json, which matches keys case-insensitively:
    a mis-cased key then works, and is only worth a warning.
    """

    fields: Mapping[str, Spec] = field(default_factory=dict)
    type_meta: bool = False
    fold_case: bool = False
    go_type: str = "a mapping"

    def check(self, value: Any, path: str, out: Collector) -> None:
        if value is None:
            return
        if not isinstance(value, dict):
            self._type_error(value, path, out)
            return
        known = list(self.fields) + (["apiVersion", "kind"] if self.type_meta else [])
        for key, sub in value.items():
            key = str(key)
            spec = self.fields.get(key)
            if spec is None and self.fold_case:
                canonical = canonical_key(key, self.fields)
                if canonical is not None:
                    out.warning(child(path, key), f"decoded case-insensitively, but the documented "
                                f"key is {canonical}")
                    spec = self.fields[canonical]
            if spec is None:
                if key not in known:
                    out.error(child(path, key), "unknown field" + suggest(key, known))
                continue
            spec.check(sub, child(path, key), out)


def canonical_key(key: str, fields: Mapping[str, Any]) -> str | None:
    """The field `key` names under case-insensitive matching, if any."""
    return next((name for name in fields if name.lower() == key.lower()), None)


# --- YAML with duplicate-key detection ----------------------------------------------------------

class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that records duplicate mapping keys, which Go's strict YAML decoding rejects."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self.duplicates: list[tuple[int, str]] = []

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<: *anchor` may legitimately repeat and be overridden
            key = self.construct_object(key_node, deep=True)  # type: ignore[no-untyped-call]
            if isinstance(key, list | dict):
                continue
            if key in seen:
                self.duplicates.append((key_node.start_mark.line + 1, str(key)))
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load_documents(text: str) -> tuple[list[Any], list[tuple[int, str]]]:
    """All YAML (or JSON) documents in `text`, plus (line, key) for each duplicate key."""
    loader = _StrictLoader(text)
    try:
        documents = []
        while loader.check_data():
            documents.append(loader.get_data())
        return documents, loader.duplicates
    finally:
        loader.dispose()
