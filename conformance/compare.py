"""Running both sides on a case and saying where they differ.

The oracle answers in `extender.engine.evaluate`'s shape, with kube-scheduler's weighted
scores; the engine's per-plugin scores are normalised, so they are compared after the
profile's weight. Kinds compared: `prefilter` (the PreFilter rejection), `filter` (each
node's first failing status: plugin, code and reasons), `score:<plugin>` (each feasible node's
score) and `total`.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from extender.engine import evaluate
from extender.engine.registry import DEFAULT_FILTERS, DEFAULT_SCORES

#: The engine's default profile, as the oracle is told to run it (kube-scheduler's default
#: profile without the volume and DRA plugins the engine does not model).
PLUGINS = ("PrioritySort", "DefaultBinder", "DefaultPreemption", *DEFAULT_FILTERS,
           *(name for name, _ in DEFAULT_SCORES if name not in DEFAULT_FILTERS))
WEIGHTS = dict(DEFAULT_SCORES)


class Oracle:
    """The oracle process: one JSON line in, one out."""

    def __init__(self, binary: Path) -> None:
        self.process = subprocess.Popen([str(binary), *PLUGINS], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        text=True, bufsize=1)

    def ask(self, objects: list[dict[str, Any]], pod: dict[str, Any],
            plugin_config: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        request: dict[str, Any] = {"objects": objects, "pod": pod}
        if plugin_config:
            request["pluginConfig"] = plugin_config
        self.process.stdin.write(json.dumps(request) + "\n")
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the oracle exited")
        return json.loads(line)

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(10)


def engine_answer(objects: list[dict[str, Any]], pod: dict[str, Any],
                  version: str | None = None,
                  plugin_config: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The engine's default profile at `version` (a release 1.N.P: its minor's behaviour),
    with `plugin_config` as the policy's `pluginConfig`."""
    policy: dict[str, Any] = {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy"}
    if plugin_config:
        policy["pluginConfig"] = plugin_config
    if version is not None:
        policy["kubernetesVersion"] = ".".join(version.split(".")[:2])
    try:
        ev = evaluate(objects, pod, policy)
    except Exception as exc:  # a case the engine refuses is a disagreement, not a crash
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {"prefilter": ev.prefilter, "filter": ev.filter, "scores": ev.scores,
            "total": ev.total}


def differences(engine: dict[str, Any], oracle: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """(kind, detail) for each thing the two sides say differently."""
    if engine.get("error") or oracle.get("error"):
        if bool(engine.get("error")) != bool(oracle.get("error")):
            yield "error", {"engine": engine.get("error"), "oracle": oracle.get("error")}
        return
    if engine["prefilter"] != oracle["prefilter"]:
        yield "prefilter", {"engine": engine["prefilter"], "oracle": oracle["prefilter"]}
    for node in sorted(set(engine["filter"]) | set(oracle["filter"])):
        mine, theirs = engine["filter"].get(node), oracle["filter"].get(node)
        if mine != theirs:
            yield "filter", {"node": node, "engine": mine, "oracle": theirs}
    plugins = set(engine["scores"]) | set(oracle["scores"] or {})
    for plugin in sorted(plugins):
        weight = WEIGHTS.get(plugin, 1)
        mine = engine["scores"].get(plugin) or {}
        theirs = {n: s // weight for n, s in ((oracle["scores"] or {}).get(plugin) or {}).items()}
        if mine != theirs:
            yield f"score:{plugin}", {"engine": mine, "oracle": theirs}
    if engine["total"] != (oracle["total"] or {}):
        yield "total", {"engine": engine["total"], "oracle": oracle["total"]}
