"""Building the oracle when several ask at once (test workers, a user beside them): one
builds, the others reuse its binary; a release it cannot be built at refused in one line,
leaving nothing in the cache. No Go needed: the build and the go command are stood in for."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from conformance import build
from tests.atonce import at_once


def test_oracle_asked_for_at_once_is_built_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "_go", lambda: "go")
    monkeypatch.setattr(build, "resolve_version", lambda version: "1.37.2")
    monkeypatch.setattr(build, "sources", lambda version, flavour: {"main.go": b"package main\n"})
    monkeypatch.setattr(build, "oracle_dir", lambda version, flavour="in-tree": tmp_path / version)
    monkeypatch.setattr(build, "served", lambda go, version, cwd: None)
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


#: What `go mod download -json` prints (and exits 1 with) for a release the proxy does not serve.
UNSERVED = r"""#!/bin/sh
cat <<'END'
{
	"Path": "k8s.io/kubernetes",
	"Version": "v1.37.99",
	"Error": "k8s.io/kubernetes@v1.37.99: reading https://proxy.example/k8s.io/kubernetes/@v/v1.37.99.info: 403 Forbidden\n\tserver response: This module version is not available."
}
END
exit 1
"""


def test_an_unpublished_release_is_one_line_and_leaves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    go = tmp_path / "go"
    go.write_text(UNSERVED)
    go.chmod(go.stat().st_mode | stat.S_IXUSR)
    cache = tmp_path / "conformance"
    monkeypatch.setattr(build, "_go", lambda: str(go))
    monkeypatch.setattr(build, "oracle_dir", lambda version, flavour="in-tree": cache / version)
    with pytest.raises(build.BuildError) as refused:
        build.build_oracle("1.37.99", progress=lambda line: None)
    assert str(refused.value) == (
        "k8s.io/kubernetes v1.37.99 cannot be downloaded: k8s.io/kubernetes@v1.37.99: reading "
        "https://proxy.example/k8s.io/kubernetes/@v/v1.37.99.info: 403 Forbidden server "
        "response: This module version is not available. (`go list -m -versions "
        "k8s.io/kubernetes` lists the releases the module proxy serves)")
    assert list(cache.iterdir()) == []


def test_a_release_older_than_the_oracles_api_is_refused() -> None:
    assert build.oldest_minor() == 34
    with pytest.raises(build.BuildError) as refused:
        build.sources("1.33.0")
    assert str(refused.value) == ("kube-scheduler 1.33.0: the oracle is built at 1.34 or later "
                                  "(the framework API it is written against)")
    assert "main.go" in build.sources("1.34.4")
