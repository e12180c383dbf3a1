"""Running both sides on a case and saying where they differ.

The oracle answers in `extender.engine.evaluate`'s shape, with kube-scheduler's weighted
scores; the engine's per-plugin scores are normalised, so they are compared after the
profile's weight. Kinds compared: `prefilter` (the PreFilter rejection), `filter` (each
node's first failing status: plugin, code and reasons), `score:<plugin>` (each feasible node's
score) and `total`; when no node passes, `preemption:status` and `preemption:node` (the
PostFilter's answer), `preemption:candidates` and `preemption:nodeStatuses` (the dry run over
every potential node: each candidate's victims in order with its PDB violations, why each other
node cannot help) and `preemption:pick` (the candidate chosen among them all); `error` when
one side refuses the case (both refusing it agree: their messages are not compared).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from conformance.generate import QUEUE_SORT_PAIRS, WATCHER_METRICS
from extender.engine import evaluate
from extender.engine.evaluate import evaluation_inputs, status_dict
from extender.engine.framework import Code
from extender.engine.preemption.evaluator import (
    dry_run_filters,
    dry_run_preemption,
    nodes_where_preemption_might_help,
)
from extender.engine.preemption.pick import pick_one_node_for_preemption
from extender.engine.queuesort import queue_sort_plugin
from extender.engine.registry import DEFAULT_FILTERS, DEFAULT_SCORES
from extender.engine.runner import prepare_filters, run_filters
from extender.model import k8s
from extender.model.pod import PodView

#: The engine's default profile, as the oracle is told to run it (kube-scheduler's default
#: profile without the volume and DRA plugins the engine does not model).
PLUGINS = ("PrioritySort", "DefaultBinder", "DefaultPreemption", *DEFAULT_FILTERS,
           *(name for name, _ in DEFAULT_SCORES if name not in DEFAULT_FILTERS))
#: The scheduler-plugins flavour's plugins (`oracle/scheduler-plugins/plugins.go`).
SCHEDULER_PLUGINS = ("NodeResourcesAllocatable", "PodState", "PreemptionToleration",
                     "Coscheduling", "CapacityScheduling", "NodeResourceTopologyMatch",
                     "NetworkOverhead", "TargetLoadPacking", "LoadVariationRiskBalancing",
                     "LowRiskOverCommitment")
#: Of them, the filters a profile enables in `multiPoint` (the others there only score).
MULTIPOINT_FILTERS = ("NodeResourceTopologyMatch", "NetworkOverhead")


class Oracle:
    """The oracle process: one JSON line in, one out."""

    def __init__(self, binary: Path, plugins: tuple[str, ...] = PLUGINS) -> None:
        # Its log goes to a file, read back only to say why it exited.
        self.log = tempfile.TemporaryFile("w+")
        # Each case builds a clientset, informers and a framework that the next one drops, so
        # at Go's default GOGC (100) the oracle collects often: at 400 a run of 1 000 cases took
        # 6.9-7.5 CPU-seconds in all (Python's side included) against 7.2-9.2, five alternating
        # pairs; the oracle's heap peaks near 90 MB.
        env = {**os.environ, "GOGC": os.environ.get("GOGC", "400")}
        self.process = subprocess.Popen([str(binary), *plugins], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self.log,
                                        text=True, bufsize=1, env=env)

    def send(self, objects: list[dict[str, Any]], pod: dict[str, Any],
             plugin_config: list[dict[str, Any]] | None = None,
             plugins: dict[str, Any] | None = None) -> None:
        """Hand the oracle a case; `receive` reads its answer (in between, the caller can
        work while the oracle does)."""
        assert self.process.stdin is not None
        request: dict[str, Any] = {"objects": objects, "pod": pod}
        if plugin_config:
            request["pluginConfig"] = plugin_config
        if plugins:
            request["plugins"] = plugins
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            self.process.wait(10)
            self.log.seek(0)
            tail = [ln for ln in self.log.read().splitlines() if not ln.startswith("I1")][-20:]
            lines = "\n".join(tail)
            raise RuntimeError(f"the oracle exited (rc {self.process.returncode}):\n{lines}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def ask(self, objects: list[dict[str, Any]], pod: dict[str, Any],
            plugin_config: list[dict[str, Any]] | None = None,
            plugins: dict[str, Any] | None = None) -> dict[str, Any]:
        self.send(objects, pod, plugin_config, plugins)
        return self.receive()

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(10)
        self.log.close()


def weights(plugins: dict[str, Any] | None) -> dict[str, int]:
    """Each score plugin's weight in a profile with `plugins` (KubeSchedulerConfiguration v1,
    as `generate.profile_plugins` draws them)."""
    out = dict(DEFAULT_SCORES)
    for point in ("multiPoint", "score"):
        for ref in ((plugins or {}).get(point) or {}).get("enabled") or []:
            out[ref["name"]] = ref.get("weight") or 1
    return out


def engine_plugins(plugins: dict[str, Any]) -> dict[str, Any]:
    """The policy's `plugins` for a profile's (KubeSchedulerConfiguration v1, as
    `generate.profile_plugins` and `generate.scheduler_plugins_profile` draw them): filters
    disabled from the defaults, the score plugins listed whole with their weights (those
    `multiPoint` adds among them), the PostFilter enabled or disabled."""
    def disabled(point: str) -> list[dict[str, str]]:
        return list((plugins.get(point) or {}).get("disabled") or [])
    out: dict[str, Any] = {}
    # A PreFilter-only plugin kube-scheduler runs after the default ones is a filter of the
    # policy's (CapacityScheduling, Coscheduling), listed after the defaults left.
    # NodeResourceTopologyMatch, enabled in multiPoint, filters after the defaults too.
    added = [ref["name"] for ref in (plugins.get("multiPoint") or {}).get("enabled") or []
             if ref["name"] in MULTIPOINT_FILTERS]
    added += [ref["name"] for ref in (plugins.get("preFilter") or {}).get("enabled") or []]
    if added:
        gone = {ref["name"] for ref in disabled("filter")}
        out["filter"] = {"enabled": [{"name": name} for name in (*DEFAULT_FILTERS, *added)
                                     if name not in gone]}
    elif disabled("filter"):
        out["filter"] = {"disabled": disabled("filter")}
    if "score" in plugins or "multiPoint" in plugins:
        gone = {ref["name"] for ref in disabled("score")}
        out["score"] = {"enabled": [{"name": name, "weight": weight}
                                    for name, weight in weights(plugins).items()
                                    if name not in gone]}
    # Coscheduling's QueueSort comes with its filter in the engine; another is the policy's.
    queue_sort = [ref["name"] for ref in (plugins.get("queueSort") or {}).get("enabled") or []]
    if queue_sort and queue_sort != ["Coscheduling"]:
        out["queueSort"] = {"enabled": [{"name": name} for name in queue_sort]}
    post_filter = plugins.get("postFilter") or {}
    if post_filter.get("enabled"):
        out["postFilter"] = {"enabled": [{"name": ref["name"]} for ref in post_filter["enabled"]]}
    elif disabled("postFilter"):
        out["postFilter"] = {"disabled": disabled("postFilter")}
    return out


def engine_answer(objects: list[dict[str, Any]], pod: dict[str, Any],
                  version: str | None = None,
                  plugin_config: list[dict[str, Any]] | None = None,
                  plugins: dict[str, Any] | None = None) -> dict[str, Any]:
    """The engine's default profile at `version` (a release 1.N.P: its minor's behaviour),
    with `plugin_config` as the policy's `pluginConfig` and `plugins` (a profile's, in
    KubeSchedulerConfiguration v1) as its `plugins`."""
    objects, metrics = split_pseudo(objects, WATCHER_METRICS, "metrics")
    objects, pairs = split_pseudo(objects, QUEUE_SORT_PAIRS, "pairs")
    policy: dict[str, Any] = {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy"}
    if plugin_config:
        policy["pluginConfig"] = plugin_config
    if plugins:
        policy["plugins"] = engine_plugins(plugins)
    if version is not None:
        policy["kubernetesVersion"] = ".".join(version.split(".")[:2])
    try:
        ev = evaluate(objects, pod, policy, metrics=metrics)
        preemption = None if ev.feasible else engine_preemption(objects, pod, policy)
    except Exception as exc:  # a case the engine refuses is a disagreement, not a crash
        return {"error": f"{type(exc).__name__}: {exc}"}
    answer = {"prefilter": ev.prefilter, "filter": ev.filter, "scores": ev.scores,
              "total": ev.total, "preemption": preemption}
    if pairs:
        answer["less"] = engine_queue_sort(objects, pod, policy, pairs)
    return answer


def engine_queue_sort(objects: list[dict[str, Any]], pod: dict[str, Any],
                      policy: dict[str, Any], pairs: list[dict[str, Any]]) -> list[bool]:
    """The policy's QueueSort on each pair of queued pods, whether `a` comes before `b`:
    its `queueSort` plugin's `less`, else (Coscheduling's filter enabled) Coscheduling's
    (`PodGroupManager.queue_key`); both are what the simulator's activeQ orders by."""
    profile, state, _, _ = evaluation_inputs(objects, pod, policy)

    def queued(raw: dict[str, Any], ms: int) -> SimpleNamespace:
        view = PodView.from_k8s(k8s.convert(raw, k8s.Pod))
        return SimpleNamespace(pod=view, timestamp=ms / 1000, seq=0,
                               initial_attempt_timestamp=ms / 1000)

    infos = [(queued(p["a"], p["aInitialMs"]), queued(p["b"], p["bInitialMs"])) for p in pairs]
    plugin = queue_sort_plugin(profile.policy)
    if plugin is not None:
        return [plugin.less(a, b, state) for a, b in infos]
    manager = next(p.manager for p in profile.filters if p.name == "Coscheduling")
    return [manager.queue_key(a.pod, state, a.initial_attempt_timestamp)
            < manager.queue_key(b.pod, state, b.initial_attempt_timestamp) for a, b in infos]


def split_pseudo(objects: list[dict[str, Any]], pseudo: tuple[str, str],
                 field: str) -> tuple[list[dict[str, Any]], Any]:
    """(the objects without the `pseudo` (apiVersion, kind) objects the generator adds,
    the last one's `field` or None): the node metrics, the queued pods' pairs."""
    found = [o[field] for o in objects if (o.get("apiVersion"), o.get("kind")) == pseudo]
    if not found:
        return objects, None
    return [o for o in objects if (o.get("apiVersion"), o.get("kind")) != pseudo], found[-1]


def _victims_dict(victims: Any) -> dict[str, Any]:
    return {"pods": [f"{p.namespace}/{p.name}" for p in victims.pods],
            "pdbViolations": victims.num_pdb_violations}


def engine_preemption(objects: list[dict[str, Any]], pod: dict[str, Any],
                      policy: dict[str, Any]) -> dict[str, Any] | None:
    """The profile's PostFilter for a pod no node passes, in the oracle's shape: its status
    and nominated node, and the dry run over every potential node (None: the profile has no
    PostFilter)."""
    profile, state, view, infos = evaluation_inputs(objects, pod, policy)
    post_filter = profile.post_filter
    if post_filter is None:
        return None
    statuses = run_filters(profile, view, infos, state).statuses
    now = time.time()
    result = post_filter.post_filter(profile, view, statuses, state, now, random.Random(0))
    potential = [state.nodes[n] for n in nodes_where_preemption_might_help(state.nodes, statuses)]
    candidates: dict[str, Any] | None = None
    node_statuses: dict[str, Any] | None = None
    pick = ""
    # The dry run is compared for DefaultPreemption; another PostFilter by its outcome.
    if post_filter.name == "DefaultPreemption":
        candidates, node_statuses = {}, {}
    if potential and candidates is not None:
        filters = dry_run_filters(prepare_filters(profile, view, state), post_filter, view, state)
        dry = dry_run_preemption(filters, view, potential, state, 0, len(potential), now,
                                 post_filter.can_preempt(view, state, now),
                                 guard=post_filter.victim_guard)
        candidates = {n: _victims_dict(v) for n, v in dry.candidates.items()}
        node_statuses = {n: status_dict(st) for n, st in dry.statuses.items()}
        pick = pick_one_node_for_preemption(dry.candidates, now) or ""
    status = None if result.status.code == Code.SUCCESS else status_dict(result.status)
    return {"status": status, "node": result.node_name, "candidates": candidates,
            "nodeStatuses": node_statuses, "pick": pick}


#: DefaultPreemption's `minCandidateNodesAbsolute`: up to this many potential nodes its
#: PostFilter looks at them all; beyond, at a window from a random offset.
MIN_CANDIDATE_NODES = 100


def _sampled(preemption: dict[str, Any]) -> bool:
    """Whether the PostFilter's nominated node came from a random window of the potential
    nodes (the dry run compared beside it examines them all)."""
    return len(preemption["candidates"]) + len(preemption["nodeStatuses"]) > MIN_CANDIDATE_NODES


#: The framework's status for a node a PreFilterResult left out (`schedule_one.go`).
PREFILTER_RESULT = "node(s) didn't satisfy plugin(s) "


#: NodeResourcesFit's reasons for the resources it checks one by one, in its order.
NAMED_RESOURCES = frozenset(f"Insufficient {r}" for r in ("cpu", "memory", "ephemeral-storage"))


def canonical(status: dict[str, Any] | None) -> dict[str, Any] | None:
    """A status as both sides can word it. Two things only the order or a label tell apart:
    - kube-scheduler lists a pod's insufficient extended resources (and hugepages) in Go map
      order, which differs from run to run; the engine in name order. Compared as a set.
    - the engine names the plugin whose PreFilterResult left a node out (the simulator's
      queue wakes the pod on that plugin's events, as kube-scheduler does from its
      diagnosis); kube-scheduler's status for that node carries no plugin."""
    if not status or not status["reasons"]:
        return status
    reasons = status["reasons"]
    if reasons[0].startswith(PREFILTER_RESULT):
        return {**status, "plugin": ""}
    if status["plugin"] == "NodeResourcesFit":
        def scalar(reason: str) -> bool:
            return reason.startswith("Insufficient ") and reason not in NAMED_RESOURCES
        in_order = iter(sorted(r for r in reasons if scalar(r)))
        return {**status, "reasons": [next(in_order) if scalar(r) else r for r in reasons]}
    return status


def differences(engine: dict[str, Any], oracle: dict[str, Any],
                plugins: dict[str, Any] | None = None) -> Iterator[tuple[str, Any]]:
    """(kind, detail) for each thing the two sides say differently, on a profile with
    `plugins` (KubeSchedulerConfiguration v1; None: the default one)."""
    weight_of = weights(plugins)
    # A case one side refuses differs; one both refuse agrees without their messages compared:
    # the engine's Python exception and the oracle's Go error word the same cause apart.
    if engine.get("error") or oracle.get("error"):
        if bool(engine.get("error")) != bool(oracle.get("error")):
            yield "error", {"engine": engine.get("error"), "oracle": oracle.get("error")}
        return
    if engine["prefilter"] != oracle["prefilter"]:
        yield "prefilter", {"engine": engine["prefilter"], "oracle": oracle["prefilter"]}
    for node in sorted(set(engine["filter"]) | set(oracle["filter"])):
        mine, theirs = canonical(engine["filter"].get(node)), canonical(oracle["filter"].get(node))
        if mine != theirs:
            yield "filter", {"node": node, "engine": mine, "oracle": theirs}
    plugins = set(engine["scores"]) | set(oracle["scores"] or {})
    for plugin in sorted(plugins):
        weight = weight_of.get(plugin, 1)
        mine = engine["scores"].get(plugin) or {}
        theirs = {n: s // weight for n, s in ((oracle["scores"] or {}).get(plugin) or {}).items()}
        if mine != theirs:
            yield f"score:{plugin}", {"engine": mine, "oracle": theirs}
    if engine["total"] != (oracle["total"] or {}):
        yield "total", {"engine": engine["total"], "oracle": oracle["total"]}
    if engine.get("less") != oracle.get("less"):
        yield "queueSort", {"engine": engine.get("less"), "oracle": oracle.get("less")}
    mine, theirs = engine.get("preemption"), oracle.get("preemption")
    if (mine is None) != (theirs is None):
        yield "preemption", {"engine": mine, "oracle": theirs}
    elif mine is not None and theirs is not None:
        dry_run = theirs["candidates"] is not None or mine["candidates"] is not None
        theirs = {**theirs, "candidates": theirs["candidates"] or {},
                  "nodeStatuses": {n: canonical(st)
                                   for n, st in (theirs["nodeStatuses"] or {}).items()}}
        mine = {**mine, "candidates": mine["candidates"] or {},
                "nodeStatuses": {n: canonical(st)
                                 for n, st in (mine["nodeStatuses"] or {}).items()}}
        keys = ("status", "node", "candidates", "nodeStatuses", "pick") if dry_run else (
            "status", "node")
        for key in keys:
            if key == "node" and _sampled(theirs):
                # Each side looked at its own random window of the potential nodes: both
                # must have nominated a candidate, not the same one.
                if (mine["node"] in theirs["candidates"]) != (theirs["node"] in mine["candidates"]):
                    yield "preemption:node", {"engine": mine["node"], "oracle": theirs["node"]}
            elif mine[key] != theirs[key]:
                yield f"preemption:{key}", {"engine": mine[key], "oracle": theirs[key]}


#: What `what_was_exercised` counts, in the order the summary prints it.
EXERCISED = ("feasible", "prefilter-rejected", "preemption", "victims", "several-candidates",
             "pdb-violations", "nominated")


def what_was_exercised(oracle: dict[str, Any], plugins: dict[str, Any] | None = None) -> set[str]:
    """Which parts of kube-scheduler the case reached, by the oracle's answer on a profile
    with `plugins`: some node feasible (scored), a PreFilter rejection, preemption; among
    preemptions, a candidate with victims, a choice among several, PDB-violating victims, a
    node nominated; with scheduler-plugins, their scorers, the PostFilter that preempted in
    DefaultPreemption's place (PreemptionToleration or CapacityScheduling), the PreFilter
    rejections of Coscheduling and CapacityScheduling and a node NodeResourceTopologyMatch
    filtered out."""
    found: set[str] = set()
    rejected_by = (oracle.get("prefilter") or {}).get("plugin")
    if rejected_by in ("Coscheduling", "CapacityScheduling"):
        found.add(f"rejected by {rejected_by}")
    for plugin in MULTIPOINT_FILTERS:
        if any(status and status.get("plugin") == plugin
               for status in (oracle.get("filter") or {}).values()):
            found.add(f"filtered by {plugin}")
    if oracle.get("total"):
        found.add("feasible")
    if oracle.get("less"):
        queue_sort = ((plugins or {}).get("queueSort") or {}).get("enabled") or [{}]
        found.add(f"queue-sorted by {queue_sort[0].get('name', 'Coscheduling')}")
    found.update(f"scored by {plugin}" for plugin in oracle.get("scores") or {}
                 if plugin in SCHEDULER_PLUGINS)
    if oracle.get("prefilter"):
        found.add("prefilter-rejected")
    preemption = oracle.get("preemption")
    if preemption:
        found.add("preemption")
        candidates = preemption.get("candidates") or {}
        if candidates:
            found.add("victims")
        if len(candidates) > 1:
            found.add("several-candidates")
        if any(v["pdbViolations"] for v in candidates.values()):
            found.add("pdb-violations")
        if preemption.get("node"):
            found.add("nominated")
        if preemption.get("candidates") is None:  # not DefaultPreemption's dry run
            enabled = ((plugins or {}).get("postFilter") or {}).get("enabled") or []
            found.add(f"by {enabled[0]['name'] if enabled else 'PreemptionToleration'}")
    return found


def compared_kinds(engine: dict[str, Any], oracle: dict[str, Any]) -> set[str]:
    """The kinds of answer `differences` compares for this case: the PreFilter rejection and
    the filter statuses always, each score plugin either side scored some node with, the
    total when some node passed, preemption when either side ran a PostFilter, and its parts
    only when both did (one side alone is a `preemption` difference; there are no parts to
    compare)."""
    if engine.get("error") or oracle.get("error"):
        return {"error"}
    kinds = {"prefilter", "filter"}
    kinds.update(f"score:{plugin}" for side in (engine["scores"], oracle["scores"] or {})
                 for plugin, scores in side.items() if scores)
    if engine["total"] or oracle["total"]:
        kinds.add("total")
    if engine.get("less") or oracle.get("less"):
        kinds.add("queueSort")
    mine, theirs = engine.get("preemption"), oracle.get("preemption")
    if mine is not None or theirs is not None:
        kinds.add("preemption")
    if mine is not None and theirs is not None:
        kinds.update(("preemption:status", "preemption:node"))
        # As `differences` decides it: the dry run is compared when either side ran one.
        if mine["candidates"] is not None or theirs["candidates"] is not None:
            kinds.update(("preemption:candidates", "preemption:nodeStatuses", "preemption:pick"))
    return kinds
