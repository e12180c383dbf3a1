"""`python -m conformance [--seed S] [--cases N] [--kubernetes-version V] [--out DIR]
[--plugin-config] [--profiles] [--scheduler-plugins] [--jobs J]`:
the engine and kube-scheduler's own plugins on the same generated cases.

Prints what the cases reached and, per kind of answer (and per score plugin), how many of the
cases that had one agree; writes each disagreeing case (shrunk to the
objects and pod fields the disagreement needs, with both answers) to `--out` as JSON that
`--replay FILE` runs again, and exits 1 on any disagreement. Its last line: `conformance: A/N cases agree`.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.build import SCHEDULER_PLUGINS as SCHEDULER_PLUGINS_MODULE
from conformance.build import (
    SCHEDULER_PLUGINS_VERSION,
    BuildError,
    build_oracle,
    scheduler_plugins_kubernetes,
)
from conformance.compare import (
    EXERCISED,
    PLUGINS,
    SCHEDULER_PLUGINS,
    Oracle,
    compared_kinds,
    differences,
    engine_answer,
    what_was_exercised,
)
from conformance.generate import (
    case,
    custom_plugins,
    plugin_config,
    profile_plugins,
    scheduler_plugins_profile,
    with_priority_classes,
)
from conformance.minimise import minimise
from extender.sandbox.build import resolve_version


def replay_settings(written: list[dict[str, Any]]) -> tuple[str, str | None]:
    """The flavour and the release written cases ran against: recorded in each case; in a case
    written before they were, the flavour is scheduler-plugins' when its profile names one of
    its plugins, and the release unknown (None). Cases of both flavours cannot run together."""
    flavours, releases = set(), set()
    for case_file in written:
        flavour = case_file.get("flavour")
        if flavour is None:
            profile = json.dumps([case_file.get("plugins"), case_file.get("pluginConfig")])
            flavour = ("scheduler-plugins" if any(f'"{name}"' in profile
                                                  for name in SCHEDULER_PLUGINS) else "in-tree")
        flavours.add(flavour)
        releases.add(case_file.get("kubernetes"))
    if len(flavours) > 1:
        raise ValueError("--replay: the cases were written against both the in-tree and the "
                         "scheduler-plugins oracle; replay each flavour's cases apart")
    release = releases.pop() if len(releases) == 1 else None
    return flavours.pop(), release


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance", description=__doc__)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--max-nodes", type=int, default=8)
    parser.add_argument("--kubernetes-version", default=None,
                        help="the release whose plugins answer (default: the sandbox's)")
    parser.add_argument("--engine-version", default=None,
                        help="the minor the engine follows (default: the oracle's); another "
                             "shows what changed between releases")
    parser.add_argument("--out", type=Path, default=None,
                        help="where disagreeing cases are written (default: a new temporary "
                             "directory)")
    parser.add_argument("--no-minimise", dest="minimise", action="store_false",
                        help="write disagreeing cases as generated (default: shrunk to the "
                             "objects and pod fields the disagreement needs)")
    parser.add_argument("--plugin-config", action="store_true",
                        help="draw a profile's pluginConfig (plugin arguments) for each case too")
    parser.add_argument("--profiles", action="store_true",
                        help="draw a profile's plugins for each case too (default plugins "
                             "disabled, score weights changed)")
    parser.add_argument("--scheduler-plugins", action="store_true",
                        help="add scheduler-plugins' NodeResourcesAllocatable, PodState, "
                             "PreemptionToleration, CapacityScheduling (with ElasticQuotas), "
                             "Coscheduling's PreFilter (with PodGroups), "
                             "NodeResourceTopologyMatch, NetworkOverhead and the Trimaran "
                             "scorers (with node metrics) to the profiles (the oracle is built with "
                             f"{SCHEDULER_PLUGINS_MODULE} {SCHEDULER_PLUGINS_VERSION}, at the "
                             "Kubernetes minor it requires)")
    parser.add_argument("--replay", type=Path, action="append", default=[],
                        help="run a written case again instead of generating (against the "
                             "flavour and, unless --kubernetes-version says otherwise, the "
                             "release it was written with)")
    parser.add_argument("--jobs", type=int, default=None,
                        help="oracle processes working at once (default: 4 with "
                             "--scheduler-plugins, whose plugins mostly wait for their "
                             "informers; else 1)")
    args = parser.parse_args(argv)
    try:
        written = [json.loads(p.read_text()) for p in args.replay]
    except (OSError, ValueError) as exc:
        parser.error(f"--replay: {exc}")
    if written:
        try:
            replayed, release = replay_settings(written)
        except ValueError as exc:
            parser.error(str(exc))
        if replayed == "scheduler-plugins":
            args.scheduler_plugins = True
        if args.kubernetes_version is None and replayed == "in-tree":
            args.kubernetes_version = release
    flavour = "scheduler-plugins" if args.scheduler_plugins else "in-tree"
    try:
        version = (scheduler_plugins_kubernetes() if args.scheduler_plugins
                   else resolve_version(args.kubernetes_version))
        engine_version = args.engine_version or version
        binary = build_oracle(version, progress=lambda line: print(line, file=sys.stderr),
                              flavour=flavour)
    except BuildError as exc:
        print(f"conformance: {exc}", file=sys.stderr)
        return 2
    jobs = args.jobs or (4 if args.scheduler_plugins else 1)
    if jobs < 1:
        parser.error(f"--jobs must be at least 1, not {jobs}")
    oracle_plugins = PLUGINS + SCHEDULER_PLUGINS if args.scheduler_plugins else PLUGINS
    oracles = [Oracle(binary, oracle_plugins) for _ in range(jobs)]
    minimiser: Oracle | None = None  # one with nothing in flight, made at a first disagreement
    if written:
        cases: Iterable[tuple[list[Any], Any, list[Any], dict[str, Any]]] = [
            (w["objects"], w["pod"], w.get("pluginConfig") or [], w.get("plugins") or {})
            for w in written]
        total = len(written)
    else:
        rng = random.Random(args.seed)

        def draw() -> tuple[list[Any], Any, list[Any], dict[str, Any]]:
            objects, pod = case(rng, args.max_nodes)
            config = plugin_config(rng) if args.plugin_config else []
            plugins = profile_plugins(rng) if args.profiles else {}
            if args.scheduler_plugins:
                objects = with_priority_classes(rng, objects)
                added, added_config = scheduler_plugins_profile(rng)
                plugins, custom_config, custom_objects = custom_plugins(
                    rng, {**plugins, **added}, objects, pod)
                config = config + added_config + custom_config
                objects = objects + custom_objects
            return objects, pod, config, plugins
        # Drawn one at a time: a large run holds one case, not all of them.
        cases = (draw() for _ in range(args.cases))
        total = args.cases
    out = args.out
    kinds: Counter[str] = Counter()
    exercised: Counter[str] = Counter()
    compared: Counter[str] = Counter()
    agree = 0
    started = time.monotonic()
    # Case k goes to oracle k % jobs, which holds at most one case: before it takes the next,
    # its answer to the one before is compared, so cases finish in order.
    in_flight: list[_Pending | None] = [None] * jobs
    try:
        def finish(pending: _Pending) -> None:
            nonlocal agree, out, minimiser
            theirs = pending.oracle.receive()
            exercised.update(what_was_exercised(theirs, pending.plugins))
            compared.update(compared_kinds(pending.mine, theirs))
            found = list(differences(pending.mine, theirs, pending.plugins))
            if not found:
                agree += 1
                return
            kinds.update({kind for kind, _ in found})
            objects, pod, config, plugins = (pending.objects, pending.pod, pending.config,
                                             pending.plugins)
            if args.minimise:
                if minimiser is None:
                    minimiser = Oracle(binary, oracle_plugins)
                asked = minimiser

                def disagreement(objs: list[Any], p: Any) -> frozenset[str]:
                    return frozenset(k for k, _ in _differences(asked, engine_version, objs,
                                                                p, config, plugins))
                objects, pod = minimise(objects, pod, disagreement)
                found = _differences(asked, engine_version, objects, pod, config, plugins)
            if out is None:
                out = Path(tempfile.mkdtemp(prefix="conformance-"))
            out.mkdir(parents=True, exist_ok=True)
            (out / f"case-{args.seed}-{pending.index}.json").write_text(json.dumps({
                "seed": args.seed, "index": pending.index, "flavour": flavour,
                "kubernetes": version, "pluginConfig": config,
                "plugins": plugins, "objects": objects, "pod": pod,
                "differences": [{"kind": k, **d} for k, d in found]}, indent=1) + "\n")

        for index, (objects, pod, config, plugins) in enumerate(cases):
            slot = index % jobs
            waiting = in_flight[slot]
            if waiting is not None:
                finish(waiting)
            oracle = oracles[slot]
            oracle.send(objects, pod, config, plugins)
            mine = engine_answer(objects, pod, engine_version, config, plugins)  # meanwhile
            in_flight[slot] = _Pending(index, oracle, objects, pod, config, plugins, mine)
        for slot in range(jobs):  # the oldest first: the slot after the last one used
            waiting = in_flight[(total + slot) % jobs]
            if waiting is not None:
                finish(waiting)
    finally:
        for oracle in oracles:
            oracle.close()
        if minimiser is not None:
            minimiser.close()
    seconds = time.monotonic() - started
    against = "" if engine_version == version else f" (the engine at {engine_version})"
    if args.scheduler_plugins:
        against = f" with scheduler-plugins {SCHEDULER_PLUGINS_VERSION}{against}"
    print(f"kube-scheduler {version}{against}: {total} cases in {seconds:.1f}s "
          f"({total / seconds:.0f}/s)")
    extras = sorted(set(exercised) - set(EXERCISED))  # scheduler-plugins' parts, when run
    print("  exercised: " + ", ".join(f"{what} {exercised[what]}"
                                      for what in (*EXERCISED, *extras)))
    # Per kind of answer (and per score plugin): of the cases that had one, how many agree.
    for kind in sorted(set(compared) | set(kinds)):
        seen = max(compared[kind], kinds[kind])
        print(f"  {kind}: {seen - kinds[kind]}/{seen} agree")
    if kinds:
        print(f"disagreements written to {out}")
    print(f"conformance: {agree}/{total} cases agree")
    return 0 if agree == total else 1


@dataclass
class _Pending:
    """A case handed to an oracle, with the engine's answer, until the oracle's comes."""

    index: int
    oracle: Oracle
    objects: list[Any]
    pod: Any
    config: list[Any]
    plugins: dict[str, Any]
    mine: dict[str, Any]


def _differences(oracle: Oracle, version: str, objects: list[Any], pod: Any,
                 config: list[Any], plugins: dict[str, Any]) -> list[tuple[str, Any]]:
    oracle.send(objects, pod, config, plugins)
    mine = engine_answer(objects, pod, version, config, plugins)  # while the oracle works
    return list(differences(mine, oracle.receive(), plugins))


if __name__ == "__main__":
    sys.exit(main())
