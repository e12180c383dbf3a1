"""Building the oracle when several ask at once (test workers, a user beside them): one
builds, the others reuse its binary. No Go needed: the build itself is stood in for."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from conformance import build


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
    start = threading.Barrier(4)
    got: list[Path] = []

    def ask() -> None:
        start.wait()
        got.append(build.build_oracle("1.37", progress=lambda line: None))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(builds) == 1
    assert got == builds * 4 and builds[0].parent == tmp_path / "1.37.2"
    assert builds[0].name.startswith("oracle-")
