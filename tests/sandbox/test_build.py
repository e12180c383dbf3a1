"""`extender sandbox build` asked for at once (the e2e tests' workers and the bench on a
machine without the programs yet): one builds, the others wait and reuse what it built. No
Go needed: the build itself is stood in for."""

from __future__ import annotations

from pathlib import Path

import pytest

from extender.sandbox import build
from tests.atonce import at_once


def test_programs_asked_for_at_once_are_built_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "_go", lambda: "go")
    builds: list[str] = []

    def stand_in(go: str, version: str, out: build.Binaries, progress: build.Progress) -> None:
        builds.append(version)
        for program in build.PROGRAMS:
            out.path(program).parent.mkdir(parents=True, exist_ok=True)
            out.path(program).write_text(program)
        out.stamp.write_text("{}")

    monkeypatch.setattr(build, "_build", stand_in)
    lines: list[str] = []
    got = at_once(lambda: build.build("1.37.2", root=tmp_path, progress=lines.append))
    assert builds == ["1.37.2"]
    built = build.binaries("1.37.2", tmp_path)
    assert got == [built] * 4 and built.present()
    assert sum("reusing" in line for line in lines) == 3


def test_scheduler_plugins_asked_for_at_once_is_built_once(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "_go", lambda: "go")
    builds: list[Path] = []

    def stand_in(go: str, directory: Path, progress: build.Progress) -> None:
        builds.append(directory)
        (directory / "bin").mkdir(parents=True, exist_ok=True)
        (directory / "bin" / "kube-scheduler").write_text("kube-scheduler")
        (directory / "build.json").write_text("{}")

    monkeypatch.setattr(build, "_build_scheduler_plugins", stand_in)
    got = at_once(lambda: build.build_scheduler_plugins(root=tmp_path, progress=lambda _: None))
    assert builds == [build.scheduler_plugins_dir(tmp_path)]
    assert got == [build.scheduler_plugins_binary(tmp_path)] * 4
