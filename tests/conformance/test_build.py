"""Building the oracle when several ask at once (test workers, a user beside them): one
builds, the others reuse its binary. No Go needed: the build itself is stood in for."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance import build
from tests.atonce import at_once


def test_oracle_asked_for_at_once_is_built_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "_go", lambda: "go")
    monkeypatch.setattr(build, "resolve_version", lambda version: "1.37.2")
    monkeypatch.setattr(build, "sources", lambda version, flavour: {"main.go": b"package main\n"})
    monkeypatch.setattr(build, "oracle_dir", lambda version, flavour="in-tree": tmp_path / version)
    builds: list[Path] = []

    def stand_in(go: str, version: str, flavour: str, files: dict[str, bytes], directory: Path,
                 binary: Path, progress: build.Progress) -> Path:
        builds.append(binary)
        binary.write_bytes(b"oracle")
        return binary

    monkeypatch.setattr(build, "_build", stand_in)
    got = at_once(lambda: build.build_oracle("1.37", progress=lambda line: None))
    assert len(builds) == 1
    assert got == builds * 4 and builds[0].parent == tmp_path / "1.37.2"
    assert builds[0].name.startswith("oracle-")
