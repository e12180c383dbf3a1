"""Building the oracle: `oracle/main.go` against `k8s.io/kubernetes` of one release.

The module is made as the sandbox's is (`extender.sandbox.build`: a `require` of
`k8s.io/kubernetes` and a `replace` of each staging module generated from its own go.mod), in
`~/.cache/extender/conformance/<version>/`, and shares the Go module and build caches with the
sandbox: once kube-scheduler is built, the oracle builds in seconds. The binary's name carries a
hash of the source, so an edited oracle is rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

from extender.sandbox import build as sandbox_build
from extender.sandbox.build import (
    KUBERNETES_MODULE,
    SCHEDULER_PLUGINS,
    SCHEDULER_PLUGINS_VERSION,
    BuildError,
    Progress,
    _download,
    _go,
    _run,
    build_lock,
    cache_root,
    resolve_version,
    staging_replaces,
    write_go_mod,
)

ORACLE = Path(__file__).with_name("oracle")
FLAVOURS = ("in-tree", "scheduler-plugins")


def _since_minor(directory: Path) -> int:
    return int(directory.name.split(".")[1])


def oldest_minor() -> int:
    """The oldest minor (1.N) the oracle builds at: its oldest `since-1.N/` (the framework API
    `main.go` is written against first appeared there)."""
    return min(_since_minor(d) for d in ORACLE.glob("since-1.*"))


def sources(version: str, flavour: str = "in-tree") -> dict[str, bytes]:
    """The oracle's Go files for `version`: `main.go`, the flavour's `plugins.go` (what the
    registry adds), and from the newest `since-1.N/` at or below the release's minor, the files
    whose API changed between releases."""
    minor = int(version.split(".")[1])
    if minor < oldest_minor():
        raise BuildError(f"kube-scheduler {version}: the oracle is built at 1.{oldest_minor()} "
                         "or later (the framework API it is written against)")
    since = max((d for d in ORACLE.glob("since-1.*") if _since_minor(d) <= minor),
                key=_since_minor)
    files = {"main.go": (ORACLE / "main.go").read_bytes()}
    for directory in (ORACLE / flavour, since):
        files.update((f.name, f.read_bytes()) for f in sorted(directory.glob("*.go")))
    return files


def oracle_dir(version: str, flavour: str = "in-tree") -> Path:
    name = version if flavour == "in-tree" else f"{flavour}-{SCHEDULER_PLUGINS_VERSION}"
    return cache_root().parent / "conformance" / name


def scheduler_plugins_kubernetes(progress: Progress = print) -> str:
    """The k8s.io/kubernetes release the scheduler-plugins flavour is built at (the sandbox's
    scheduler-plugins kube-scheduler is built at the same)."""
    return sandbox_build.scheduler_plugins_kubernetes(oracle_dir("", "scheduler-plugins"))


def build_oracle(version: str | None = None, progress: Progress = print,
                 flavour: str = "in-tree") -> Path:
    """The oracle binary for `version` (1.N or 1.N.P), built when missing. The
    `scheduler-plugins` flavour adds scheduler-plugins' plugins and is built at the release
    their tag requires, whatever `version` says."""
    if flavour not in FLAVOURS:
        raise BuildError(f"unknown oracle flavour {flavour!r} (known: {', '.join(FLAVOURS)})")
    go = _go()
    version = (scheduler_plugins_kubernetes(progress) if flavour == "scheduler-plugins"
               else resolve_version(version))
    files = sources(version, flavour)
    digest = hashlib.sha256(b"".join(name.encode() + b"\0" + text for name, text in files.items()))
    directory = oracle_dir(version, flavour)
    binary = directory / f"oracle-{digest.hexdigest()[:12]}"
    if binary.is_file():
        return binary
    served(go, version, directory.parent)
    with build_lock(directory):
        if binary.is_file():
            return binary
        return _build(go, version, flavour, files, directory, binary, progress)


def served(go: str, version: str, cwd: Path) -> None:
    """Refuses a release the module proxy does not serve (an unpublished patch) in one line,
    before the oracle's directory and its lock are made: a build that cannot start leaves
    nothing in the cache. `go mod download -json` answers such a release with a JSON object on
    stdout whose `Error` holds the proxy's words."""
    cwd.mkdir(parents=True, exist_ok=True)
    argv = [go, "mod", "download", "-json", f"{KUBERNETES_MODULE}@v{version}"]
    try:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise BuildError(f"cannot run {go}: {exc.strerror or exc}") from None
    if done.returncode == 0:
        return
    try:
        detail = str(json.loads(done.stdout).get("Error") or "")
    except (ValueError, AttributeError):
        detail = ""
    detail = " ".join((detail or done.stderr or done.stdout).split())
    raise BuildError(f"{KUBERNETES_MODULE} v{version} cannot be downloaded: {detail} "
                     f"(`go list -m -versions {KUBERNETES_MODULE}` lists the releases the "
                     "module proxy serves)")


def _build(go: str, version: str, flavour: str, files: dict[str, bytes], directory: Path,
           binary: Path, progress: Progress) -> Path:
    progress(f"conformance {version} ({flavour}): building the oracle against "
             f"{KUBERNETES_MODULE} v{version}")
    kube = _download(go, KUBERNETES_MODULE, f"v{version}", directory)
    requires = f"{KUBERNETES_MODULE} v{version}"
    replaces = staging_replaces(Path(kube["GoMod"]).read_text(), version)
    if flavour == "scheduler-plugins":
        requires = f"(\n\t{requires}\n\t{SCHEDULER_PLUGINS} {SCHEDULER_PLUGINS_VERSION}\n)"
        # Held at this release (scheduler-plugins' tag asks for a later patch).
        replaces.append(f"replace {KUBERNETES_MODULE} => {KUBERNETES_MODULE} v{version}")
    write_go_mod(directory, "extender.conformance/oracle", requires, replaces)
    for old in directory.glob("*.go"):
        old.unlink()
    for name, text in files.items():
        (directory / name).write_bytes(text)
    _run([go, "mod", "tidy"], directory, f"go mod tidy for the oracle of {version}")
    partial = directory / "oracle.partial"
    _run([go, "build", "-o", str(partial), "."], directory,
         f"building the oracle of {version} ({flavour})")
    for old in directory.glob("oracle-*"):
        old.unlink()
    os.replace(partial, binary)
    progress(f"conformance {version} ({flavour}): oracle ready ({binary})")
    return binary
