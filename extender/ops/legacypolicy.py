"""Checks for the legacy scheduler `Policy` file (`kind: Policy`, `apiVersion: v1`).

Clusters older than v1.23 pass it with `--policy-config-file`. Its extender entries differ from
KubeSchedulerConfiguration: the key is `enableHttps`, `httpTimeout` is a Go `time.Duration` in
integer nanoseconds, and the entry is decoded case-insensitively (a custom UnmarshalJSON), so a
mis-cased key still works. Facts: shared/reference/protocol.md §4.
"""

from __future__ import annotations

from typing import Any

from extender.ops.fields import Anything, Bool, Int, List, Obj, Str, canonical_key, child
from extender.ops.fields import as_dict as _dict
from extender.ops.fields import as_list as _list
from extender.ops.kubesched import TLS_CONFIG, check_extenders
from extender.ops.problems import Collector

KIND = "Policy"
API_VERSION = "v1"
NANOSECONDS = 1_000_000_000

_TLS_CONFIG = Obj(TLS_CONFIG.fields, fold_case=True)
EXTENDER = Obj({
    "urlPrefix": Str(), "filterVerb": Str(), "preemptVerb": Str(), "prioritizeVerb": Str(),
    "weight": Int(64), "bindVerb": Str(), "enableHttps": Bool(), "tlsConfig": _TLS_CONFIG,
    "httpTimeout": Int(64), "nodeCacheCapable": Bool(),
    "managedResources": List(Obj({"name": Str(), "ignoredByScheduler": Bool()}, fold_case=True)),
    "ignorable": Bool(),
}, fold_case=True)
POLICY = Obj({
    "kind": Str(), "apiVersion": Str(),
    "predicates": List(Obj({"name": Str(), "argument": Anything()})),
    "priorities": List(Obj({"name": Str(), "weight": Int(64), "argument": Anything()})),
    "extenders": List(EXTENDER),
    "hardPodAffinitySymmetricWeight": Int(32),
    "alwaysCheckAllPredicates": Bool(),
})


def check_policy(doc: dict[str, Any], out: Collector) -> None:
    """All checks for one legacy Policy document (`ValidatePolicy` of v1.22 and earlier)."""
    if doc.get("apiVersion") != API_VERSION:
        out.error("apiVersion", f"must be {API_VERSION!r} for kind Policy")
    extenders = [_canonical(e) for e in _list(doc.get("extenders"))]
    timeouts = Collector(out.file)  # said better than the schema's "must be an integer"
    for i, extender in enumerate(extenders):
        _check_timeout(extender.get("httpTimeout"), child(child("extenders", i), "httpTimeout"),
                       timeouts)
    said = {problem.path for problem in timeouts.problems}
    schema = Collector(out.file)
    POLICY.check(doc, "", schema)
    out.problems += [p for p in schema.problems if p.path not in said] + timeouts.problems
    for i, priority in enumerate(_list(doc.get("priorities"))):
        weight = _dict(priority).get("weight")
        if isinstance(weight, int) and not isinstance(weight, bool) and weight <= 0:
            out.error(child(child("priorities", i), "weight"), "must be positive")
    symmetric = doc.get("hardPodAffinitySymmetricWeight")
    if isinstance(symmetric, int) and not isinstance(symmetric, bool) and not 0 <= symmetric <= 100:
        out.error("hardPodAffinitySymmetricWeight", "not in valid range [0-100]")
    check_extenders(extenders, None, out, https_key="enableHttps")


def _canonical(extender: Any) -> Any:
    """The entry with keys spelled as documented, as the case-insensitive decoder reads it."""
    if not isinstance(extender, dict):
        return extender
    out: dict[str, Any] = {}
    for key, value in extender.items():
        name = canonical_key(str(key), EXTENDER.fields) or str(key)
        if name == "tlsConfig" and isinstance(value, dict):
            value = {canonical_key(str(k), TLS_CONFIG.fields) or str(k): v for k, v in value.items()}
        out[name] = value
    return out


def _check_timeout(value: Any, path: str, out: Collector) -> None:
    if isinstance(value, str):
        out.error(path, f"must be integer nanoseconds (a Go time.Duration), e.g. {5 * NANOSECONDS} "
                  "for 5s; duration strings belong to KubeSchedulerConfiguration")
        return
    if isinstance(value, bool) or not isinstance(value, int):
        return
    if value < 0:
        out.error(path, "negative: every call would time out at once")
    elif 0 < value < 1_000_000:
        out.warning(path, f"{value} ns is shorter than a millisecond; did you mean "
                    f"{value * NANOSECONDS} ({value}s)?")
