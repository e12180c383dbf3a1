"""`python -m conformance [--seed S] [--cases N] [--kubernetes-version V] [--engine-version V]
[--out DIR] [--plugin-config] [--profiles] [--scheduler-plugins] [--jobs J] [--replay FILE]`:
the engine and kube-scheduler's own plugins on the same generated cases.

Prints what the cases reached and, per kind of answer (and per score plugin), how many of the
cases that had one agree; writes each disagreeing case (shrunk to the
objects and pod fields the disagreement needs, with both answers) to `--out` as JSON that
`--replay FILE` runs again, names each with its kinds of difference, and exits 1 on any
disagreement (2 on a usage error). Its last line: `conformance: A/N cases agree`.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
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
from conformance.options import ENGINE_RANGE, engine_minor, minor_of, parser, same_release
from conformance.replay import ReplayError, Written, read_case, replay_settings
from extender.sandbox.build import resolve_version


@dataclass(frozen=True)
class _Case:
    """A case to run: what both sides are asked, and the name and origin it is written with."""

    objects: list[Any]
    pod: Any
    config: list[Any]
    plugins: dict[str, Any]
    name: str
    origin: dict[str, int]


@dataclass(frozen=True)
class _Setting:
    """What the cases run against."""

    flavour: str
    version: str  # the oracle's release, 1.N.P
    engine: str  # the engine's minor, 1.N
    binary: Path

    @property
    def plugins(self) -> tuple[str, ...]:
        return PLUGINS + SCHEDULER_PLUGINS if self.flavour == "scheduler-plugins" else PLUGINS


def main(argv: list[str] | None = None) -> int:
    options = parser(__doc__)
    args = options.parse_args(argv)
    try:
        written = [read_case(p) for p in args.replay]
    except ReplayError as exc:
        print(f"conformance: {exc}", file=sys.stderr)
        return 2
    release, engine = args.kubernetes_version, args.engine_version
    if written:
        try:
            replayed, recorded, recorded_engine = replay_settings(
                written, release_given=release is not None, engine_given=engine is not None)
        except ValueError as exc:
            options.error(str(exc))
        args.scheduler_plugins = args.scheduler_plugins or replayed == "scheduler-plugins"
        engine = engine or recorded_engine
        if not args.scheduler_plugins:
            release = release or recorded
    flavour = "scheduler-plugins" if args.scheduler_plugins else "in-tree"
    try:
        if args.scheduler_plugins:
            version = scheduler_plugins_kubernetes()
            if release is not None and not same_release(release, version):
                options.error(
                    f"--kubernetes-version {release}: the scheduler-plugins oracle exists for "
                    f"kube-scheduler {version} only (the release {SCHEDULER_PLUGINS_MODULE} "
                    f"{SCHEDULER_PLUGINS_VERSION} is built at); leave --kubernetes-version out")
        else:
            version = resolve_version(release)
        engine = engine or minor_of(version)
        try:
            engine_minor(engine)
        except ValueError:
            options.error(f"kube-scheduler {version}: the engine follows {ENGINE_RANGE}; set "
                          "--engine-version to compare it with one of those")
        binary = build_oracle(version, progress=lambda line: print(line, file=sys.stderr),
                              flavour=flavour)
    except BuildError as exc:
        print(f"conformance: {exc}", file=sys.stderr)
        return 2
    setting = _Setting(flavour, version, engine, binary)
    jobs = args.jobs or (4 if args.scheduler_plugins else 1)
    if written:
        cases: Iterable[_Case] = [_replayed(w) for w in written]
        total = len(written)
    else:
        # Drawn one at a time: a large run holds one case, not all of them.
        cases = _generated(args)
        total = args.cases
    started = time.monotonic()
    tally = _run(cases, total, setting, jobs, args.minimise, args.out)
    seconds = time.monotonic() - started
    _report(tally, setting, total, seconds)
    return 0 if tally.agree == total else 1


def _replayed(written: Written) -> _Case:
    return _Case(written.objects, written.pod, written.config, written.plugins, written.name,
                 written.origin)


def _generated(args: argparse.Namespace) -> Iterator[_Case]:
    rng = random.Random(args.seed)
    for index in range(args.cases):
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
        yield _Case(objects, pod, config, plugins, f"case-{args.seed}-{index}.json",
                    {"seed": args.seed, "index": index})


@dataclass
class _Tally:
    """What the cases came to."""

    agree: int = 0
    #: Per kind of answer: the cases that disagreed on it, had it, and reached each part.
    kinds: Counter[str] = field(default_factory=Counter)
    compared: Counter[str] = field(default_factory=Counter)
    exercised: Counter[str] = field(default_factory=Counter)
    out: Path | None = None
    #: Each case written, with its kinds of difference, in the order the cases ran.
    written: list[tuple[str, list[str]]] = field(default_factory=list)


@dataclass
class _Pending:
    """A case handed to an oracle, with the engine's answer, until the oracle's comes."""

    case: _Case
    oracle: Oracle
    mine: dict[str, Any]


def _run(cases: Iterable[_Case], total: int, setting: _Setting, jobs: int, shrink: bool,
         out: Path | None) -> _Tally:
    tally = _Tally(out=out)
    oracles = [Oracle(setting.binary, setting.plugins) for _ in range(jobs)]
    minimiser: Oracle | None = None  # one with nothing in flight, made at a first disagreement
    # Case k goes to oracle k % jobs, which holds at most one case: before it takes the next,
    # its answer to the one before is compared, so cases finish in order.
    in_flight: list[_Pending | None] = [None] * jobs
    try:
        def finish(pending: _Pending) -> None:
            nonlocal minimiser
            theirs = pending.oracle.receive()
            c = pending.case
            tally.exercised.update(what_was_exercised(theirs, c.plugins))
            tally.compared.update(compared_kinds(pending.mine, theirs))
            found = list(differences(pending.mine, theirs, c.plugins))
            if not found:
                tally.agree += 1
                return
            tally.kinds.update({kind for kind, _ in found})
            objects, pod = c.objects, c.pod
            if shrink:
                if minimiser is None:
                    minimiser = Oracle(setting.binary, setting.plugins)
                asked = minimiser

                def disagreement(objs: list[Any], p: Any) -> frozenset[str]:
                    return frozenset(k for k, _ in _differences(asked, setting.engine, objs,
                                                                p, c.config, c.plugins))
                objects, pod = minimise(objects, pod, disagreement)
                found = _differences(asked, setting.engine, objects, pod, c.config, c.plugins)
            _write(tally, setting, c, objects, pod, found)

        for index, c in enumerate(cases):
            slot = index % jobs
            waiting = in_flight[slot]
            if waiting is not None:
                finish(waiting)
            oracle = oracles[slot]
            oracle.send(c.objects, c.pod, c.config, c.plugins)
            mine = engine_answer(c.objects, c.pod, setting.engine, c.config,
                                 c.plugins)  # meanwhile
            in_flight[slot] = _Pending(c, oracle, mine)
        for slot in range(jobs):  # the oldest first: the slot after the last one used
            waiting = in_flight[(total + slot) % jobs]
            if waiting is not None:
                finish(waiting)
    finally:
        for oracle in oracles:
            oracle.close()
        if minimiser is not None:
            minimiser.close()
    return tally


def _write(tally: _Tally, setting: _Setting, c: _Case, objects: list[Any], pod: Any,
           found: list[tuple[str, Any]]) -> None:
    """Writes a disagreeing case with what it ran against, so that `--replay` alone runs it
    against the same: the engine's minor only when it was set apart from the oracle's."""
    if tally.out is None:
        tally.out = Path(tempfile.mkdtemp(prefix="conformance-"))
    tally.out.mkdir(parents=True, exist_ok=True)
    record: dict[str, Any] = {**c.origin, "flavour": setting.flavour,
                              "kubernetes": setting.version}
    if setting.engine != minor_of(setting.version):
        record["engine"] = setting.engine
    record.update({"pluginConfig": c.config, "plugins": c.plugins, "objects": objects,
                   "pod": pod, "differences": [{"kind": k, **d} for k, d in found]})
    (tally.out / c.name).write_text(json.dumps(record, indent=1) + "\n")
    tally.written.append((c.name, sorted({k for k, _ in found})))


def _report(tally: _Tally, setting: _Setting, total: int, seconds: float) -> None:
    against = ("" if setting.engine == minor_of(setting.version)
               else f" (the engine at {setting.engine})")
    if setting.flavour == "scheduler-plugins":
        against = f" with scheduler-plugins {SCHEDULER_PLUGINS_VERSION}{against}"
    print(f"kube-scheduler {setting.version}{against}: {total} cases in {seconds:.1f}s "
          f"({total / seconds:.0f}/s)")
    exercised = tally.exercised
    extras = sorted(set(exercised) - set(EXERCISED))  # scheduler-plugins' parts, when run
    print("  exercised: " + ", ".join(f"{what} {exercised[what]}"
                                      for what in (*EXERCISED, *extras)))
    # Per kind of answer (and per score plugin): of the cases that had one, how many agree.
    kinds, compared = tally.kinds, tally.compared
    for kind in sorted(set(compared) | set(kinds)):
        seen = max(compared[kind], kinds[kind])
        print(f"  {kind}: {seen - kinds[kind]}/{seen} agree")
    if kinds:
        print(f"disagreements written to {tally.out}")
        for name, found in tally.written:
            print(f"  {name}: {', '.join(found)}")
    print(f"conformance: {tally.agree}/{total} cases agree")


def _differences(oracle: Oracle, version: str, objects: list[Any], pod: Any,
                 config: list[Any], plugins: dict[str, Any]) -> list[tuple[str, Any]]:
    oracle.send(objects, pod, config, plugins)
    mine = engine_answer(objects, pod, version, config, plugins)  # while the oracle works
    return list(differences(mine, oracle.receive(), plugins))


if __name__ == "__main__":
    sys.exit(main())
