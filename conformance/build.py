"""Building the oracle: `oracle/main.go` against `k8s.io/kubernetes` of one release.

The module is made as the sandbox's is (`extender.sandbox.build`: a `require` of
`k8s.io/kubernetes` and a `replace` of each staging module generated from its own go.mod), in
`~/.cache/extender/conformance/<version>/`, and shares the Go module and build caches with the
sandbox: once kube-scheduler is built, the oracle builds in seconds. The binary's name carries a
hash of the source, so an edited oracle is rebuilt.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from extender.sandbox.build import (
    KUBERNETES_MODULE,
    BuildError,
    Progress,
    _download,
    _go,
    _run,
    cache_root,
    resolve_version,
    staging_replaces,
    write_go_mod,
)

ORACLE = Path(__file__).with_name("oracle")


def sources(version: str) -> dict[str, bytes]:
    """The oracle's Go files for `version`: `main.go`, and from the newest `since-1.N/` at or
    below the release's minor, the files whose API changed between releases."""
    minor = int(version.split(".")[1])
    since = max((d for d in ORACLE.glob("since-1.*") if int(d.name.split(".")[1]) <= minor),
                key=lambda d: int(d.name.split(".")[1]))
    files = {"main.go": (ORACLE / "main.go").read_bytes()}
    files.update((f.name, f.read_bytes()) for f in sorted(since.glob("*.go")))
    return files

__all__ = ["BuildError", "build_oracle"]


def oracle_dir(version: str) -> Path:
    return cache_root().parent / "conformance" / version


def build_oracle(version: str | None = None, progress: Progress = print) -> Path:
    """The oracle binary for `version` (1.N or 1.N.P), built when missing."""
    go = _go()
    version = resolve_version(version)
    files = sources(version)
    digest = hashlib.sha256(b"".join(name.encode() + b"\0" + text for name, text in files.items()))
    directory = oracle_dir(version)
    binary = directory / f"oracle-{digest.hexdigest()[:12]}"
    if binary.is_file():
        return binary
    directory.mkdir(parents=True, exist_ok=True)
    progress(f"conformance {version}: building the oracle against {KUBERNETES_MODULE} "
             f"v{version}")
    kube = _download(go, KUBERNETES_MODULE, f"v{version}", directory)
    write_go_mod(directory, "extender.conformance/oracle", f"{KUBERNETES_MODULE} v{version}",
                 staging_replaces(Path(kube["GoMod"]).read_text(), version))
    for old in directory.glob("*.go"):
        old.unlink()
    for name, text in files.items():
        (directory / name).write_bytes(text)
    _run([go, "mod", "tidy"], directory, f"go mod tidy for the oracle of {version}")
    partial = directory / "oracle.partial"
    _run([go, "build", "-o", str(partial), "."], directory,
         f"building the oracle of {version}")
    for old in directory.glob("oracle-*"):
        old.unlink()
    os.replace(partial, binary)
    progress(f"conformance {version}: oracle ready ({binary})")
    return binary
