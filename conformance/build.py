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

SOURCE = Path(__file__).with_name("oracle") / "main.go"

__all__ = ["BuildError", "build_oracle"]


def oracle_dir(version: str) -> Path:
    return cache_root().parent / "conformance" / version


def build_oracle(version: str | None = None, progress: Progress = print) -> Path:
    """The oracle binary for `version` (1.N or 1.N.P), built when missing."""
    go = _go()
    version = resolve_version(version)
    source = SOURCE.read_bytes()
    directory = oracle_dir(version)
    binary = directory / f"oracle-{hashlib.sha256(source).hexdigest()[:12]}"
    if binary.is_file():
        return binary
    directory.mkdir(parents=True, exist_ok=True)
    progress(f"conformance {version}: building the oracle against {KUBERNETES_MODULE} "
             f"v{version}")
    kube = _download(go, KUBERNETES_MODULE, f"v{version}", directory)
    write_go_mod(directory, "extender.conformance/oracle", f"{KUBERNETES_MODULE} v{version}",
                 staging_replaces(Path(kube["GoMod"]).read_text(), version))
    (directory / "main.go").write_bytes(source)
    _run([go, "mod", "tidy"], directory, f"go mod tidy for the oracle of {version}")
    partial = directory / "oracle.partial"
    _run([go, "build", "-o", str(partial), "."], directory,
         f"building the oracle of {version}")
    for old in directory.glob("oracle-*"):
        old.unlink()
    os.replace(partial, binary)
    progress(f"conformance {version}: oracle ready ({binary})")
    return binary
