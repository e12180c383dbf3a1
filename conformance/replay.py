"""`--replay`: the cases `python -m conformance` wrote, read back with what they ran against.

A file that is not such a case is refused naming the file and what is wrong, before an oracle
is built. Cases are replayed against the oracle and the engine they were written with, so
cases written against different ones cannot run together unless a flag sets that one side
for all of them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.build import FLAVOURS
from conformance.compare import SCHEDULER_PLUGINS
from conformance.options import engine_minor, oracle_release

Obj = dict[str, Any]


class ReplayError(ValueError):
    """A replay file that is not a written case; the message names the file."""


@dataclass(frozen=True)
class Written:
    """A written case: what both sides are asked, and what it ran against (None: not
    recorded, as in a case written before it was)."""

    path: Path
    objects: list[Obj]
    pod: Obj
    config: list[Obj]
    plugins: Obj
    flavour: str
    release: str | None
    #: The engine's minor when `--engine-version` set it apart from the oracle's release.
    engine: str | None
    #: The run and the position it was drawn at, when recorded.
    seed: int | None
    index: int | None

    @property
    def origin(self) -> dict[str, int]:
        if self.seed is None or self.index is None:
            return {}
        return {"seed": self.seed, "index": self.index}

    @property
    def name(self) -> str:
        """The file a disagreement of it is written to again: its own case's name, so it
        replaces only its own earlier answer; one that does not say where it came from is
        named after its file, apart from any generated case's."""
        if self.origin:
            return f"case-{self.seed}-{self.index}.json"
        return f"replay-{self.path.stem}.json"


def _kind(value: object) -> str:
    return "null" if value is None else {dict: "an object", list: "a list", str: "a string",
                                         bool: "a boolean"}.get(type(value), "a number")


def read_case(path: Path) -> Written:
    def fail(what: str) -> ReplayError:
        return ReplayError(f"--replay {path}: {what}")

    try:
        data = json.loads(path.read_bytes())
    except OSError as exc:
        raise fail(exc.strerror or str(exc)) from None
    except UnicodeDecodeError as exc:
        raise fail(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except ValueError as exc:
        raise fail(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise fail(f"expected a JSON object (a case `python -m conformance` wrote), got "
                   f"{_kind(data)}")

    for field in ("objects", "pod"):
        if field not in data:
            raise fail(f"no `{field}`: a written case has `objects` (a list of objects) and "
                       "`pod` (an object)")

    def objects(field: str) -> list[Obj]:
        value = data.get(field)
        if value is None and field != "objects":
            return []
        if not isinstance(value, list):
            raise fail(f"`{field}` must be a list of objects, got {_kind(value)}")
        for position, item in enumerate(value):
            if not isinstance(item, dict):
                raise fail(f"`{field}` must be a list of objects; item {position} is "
                           f"{_kind(item)}")
        return value

    def mapping(field: str) -> Obj:
        value = data.get(field)
        if value is None and field != "pod":
            return {}
        if not isinstance(value, dict):
            raise fail(f"`{field}` must be an object, got {_kind(value)}")
        return value

    def optional(field: str, kind: type) -> Any:
        value = data.get(field)
        if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
            raise fail(f"`{field}` must be {_kind(kind())}, got {_kind(value)}")
        return value

    def version(field: str, check: Any) -> str | None:
        value = optional(field, str)
        try:
            return None if value is None else str(check(value))
        except ValueError as exc:
            raise fail(f"`{field}`: {exc}") from None

    written = Written(
        path=path, objects=objects("objects"), pod=mapping("pod"),
        config=objects("pluginConfig"), plugins=mapping("plugins"),
        flavour=optional("flavour", str) or "",
        release=version("kubernetes", oracle_release), engine=version("engine", engine_minor),
        seed=optional("seed", int), index=optional("index", int))
    if written.flavour and written.flavour not in FLAVOURS:
        raise fail(f"`flavour` must be one of {', '.join(FLAVOURS)}, got {written.flavour!r}")
    return written


def flavour_of(written: Written) -> str:
    """The flavour it recorded; in a case written before it was, scheduler-plugins' when its
    profile names one of its plugins."""
    if written.flavour:
        return written.flavour
    profile = json.dumps([written.plugins, written.config])
    return ("scheduler-plugins" if any(f'"{name}"' in profile for name in SCHEDULER_PLUGINS)
            else "in-tree")


def replay_settings(written: list[Written], *, release_given: bool = False,
                    engine_given: bool = False) -> tuple[str, str | None, str | None]:
    """(flavour, release, engine minor) the written cases ran against (None: not recorded, or
    the oracle's minor for the engine). Cases that ran against different ones cannot run
    together: for the flavour ever, for the release or the engine unless the flag for it
    (`release_given`, `engine_given`) sets one for all of them. A case that did not record its
    release goes with the others'."""
    flavours = {flavour_of(w) for w in written}
    if len(flavours) > 1:
        raise ValueError("--replay: the cases were written against both the in-tree and the "
                         "scheduler-plugins oracle; replay each flavour's cases apart")
    releases = {w.release for w in written if w.release is not None}
    if len(releases) > 1 and not release_given:
        raise ValueError(f"--replay: the cases were written against kube-scheduler "
                         f"{', '.join(sorted(releases))}; replay each release's cases apart "
                         "(or set one with --kubernetes-version)")
    engines = {w.engine for w in written}
    if len(engines) > 1 and not engine_given:
        named = sorted(e or "the oracle's" for e in engines)
        raise ValueError(f"--replay: the cases were written with the engine at "
                         f"{', '.join(named)}; replay them apart (or set one with "
                         "--engine-version)")
    return flavours.pop(), (releases.pop() if len(releases) == 1 else None), (
        engines.pop() if len(engines) == 1 else None)
