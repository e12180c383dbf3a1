"""`extender sandbox build`: kube-apiserver, kube-scheduler, kube-controller-manager and etcd
built from their published Go modules into a cache, reused once there.

`k8s.io/kubernetes` is not meant to be a dependency: its go.mod requires each of its staging
modules (`k8s.io/api`, `k8s.io/client-go`, ...) at `v0.0.0` and replaces them with
`./staging/src/...`. A consumer replaces each with the published tag of the same release
(`v0.37.2` for `v1.37.2`); the list is read from the downloaded module's own go.mod, never
written by hand. etcd is built at the version the same go.mod requires
(`go.etcd.io/etcd/server/v3`), in a module of its own so its dependencies do not move
Kubernetes'.

Layout: `<cache>/<version>/bin/<program>`, `<cache>/<version>/build.json` (written last: a
build that stopped half-way is not taken for a finished one), and the two module directories
the builds ran in. `<cache>` is `$EXTENDER_SANDBOX_CACHE`, else
`${XDG_CACHE_HOME:-~/.cache}/extender/sandbox`. Go's own caches (`GOMODCACHE`, `GOCACHE`) are
the user's, shared with any other Go build.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

DEFAULT_VERSION = "1.37.2"
KUBERNETES_MODULE = "k8s.io/kubernetes"
ETCD_MODULE = "go.etcd.io/etcd/server/v3"
KUBE_PROGRAMS = ("kube-apiserver", "kube-scheduler", "kube-controller-manager")
PROGRAMS = (*KUBE_PROGRAMS, "etcd")
_STAGING = re.compile(r"^\s*(?:replace\s+)?(k8s\.io/[A-Za-z0-9._-]+)\s+=>\s+\./staging/",
                      re.MULTILINE)
_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?$")

Progress = Callable[[str], None]


class BuildError(RuntimeError):
    """The build cannot go on; the message says what is missing and what to do."""


def cache_root() -> Path:
    explicit = os.environ.get("EXTENDER_SANDBOX_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "extender" / "sandbox"


@dataclass(frozen=True)
class Binaries:
    """The built programs of one Kubernetes version."""

    version: str
    directory: Path

    def path(self, program: str) -> Path:
        return self.directory / "bin" / program

    @property
    def stamp(self) -> Path:
        return self.directory / "build.json"

    def present(self) -> bool:
        return self.stamp.is_file() and all(self.path(p).is_file() for p in PROGRAMS)

    def info(self) -> dict[str, object]:
        return json.loads(self.stamp.read_text()) if self.stamp.is_file() else {}


def binaries(version: str, root: Path | None = None) -> Binaries:
    """Where the programs of `version` (a full `1.N.P`) are or will be."""
    return Binaries(version, (root or cache_root()) / version)


def _go() -> str:
    go = shutil.which("go")
    if go is None:
        raise BuildError(
            "`go` is not on PATH. The sandbox builds kube-apiserver, kube-scheduler, "
            "kube-controller-manager and etcd from Go modules: install Go 1.26 or newer "
            "(https://go.dev/dl/, or your distribution's golang package) and run "
            "`extender sandbox build` again")
    return go


def _run(argv: list[str], cwd: Path, what: str, env: dict[str, str] | None = None) -> str:
    try:
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                              check=False)
    except OSError as exc:
        raise BuildError(f"{what}: cannot run {argv[0]}: {exc}") from None
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
        hint = ""
        if re.search(r"proxy|dial tcp|no such host|connection refused|403|404|410|timeout",
                     tail):
            proxy = os.environ.get("GOPROXY") or _go_env("GOPROXY") or "the Go module proxy"
            hint = (f"\n(is {proxy} reachable, and does it serve this version? "
                    "`go list -m -versions k8s.io/kubernetes` lists what it serves)")
        elif "requires go >=" in tail or "toolchain" in tail:
            hint = ("\n(this module needs a newer Go: `export GOTOOLCHAIN=go1.27.3` lets the go "
                    "command fetch it from the module proxy)")
        raise BuildError(f"{what} failed:\n{tail}{hint}")
    return done.stdout


def _go_env(name: str) -> str:
    go = shutil.which("go")
    if go is None:
        return ""
    done = subprocess.run([go, "env", name], capture_output=True, text=True, check=False)
    return done.stdout.strip()


def resolve_version(text: str | None) -> str:
    """`1.37.2` (also `v1.37.2`) as given; a minor (`1.36`) becomes its newest patch the
    module proxy lists."""
    text = (text or DEFAULT_VERSION).strip()
    m = _VERSION.match(text)
    if not m or m.group(1) != "1":
        raise BuildError(f"--kubernetes-version {text!r}: expected 1.N or 1.N.P (e.g. "
                         f"{DEFAULT_VERSION})")
    if m.group(3) is not None:
        return f"1.{m.group(2)}.{m.group(3)}"
    listed = _run([_go(), "list", "-m", "-versions", KUBERNETES_MODULE], Path.cwd(),
                  f"listing the versions of {KUBERNETES_MODULE}").split()[1:]
    patches = [v for v in listed if re.fullmatch(rf"v1\.{m.group(2)}\.\d+", v)]
    if not patches:
        raise BuildError(f"the module proxy lists no release of {KUBERNETES_MODULE} 1."
                         f"{m.group(2)} (it lists: {' '.join(listed[-8:])})")
    newest = max(patches, key=lambda v: int(v.rsplit(".", 1)[1]))
    return newest.lstrip("v")


def _download(go: str, module: str, version: str, cwd: Path) -> dict[str, str]:
    out = _run([go, "mod", "download", "-json", f"{module}@{version}"], cwd,
               f"downloading {module}@{version}")
    info = json.loads(out)
    if info.get("Error"):
        raise BuildError(f"downloading {module}@{version}: {info['Error']}")
    return info


def staging_replaces(kubernetes_go_mod: str, version: str) -> list[str]:
    """`replace` lines pointing each staging module of `k8s.io/kubernetes` at the published
    tag of the same release (`v0.37.2` for `1.37.2`)."""
    tag = "v0." + version.split(".", 1)[1]
    modules = sorted(set(_STAGING.findall(kubernetes_go_mod)))
    return [f"replace {m} => {m} {tag}" for m in modules]


def required_version(go_mod: str, module: str) -> str | None:
    m = re.search(rf"^\s*(?:require\s+)?{re.escape(module)}\s+(v\S+)", go_mod, re.MULTILINE)
    return m.group(1) if m else None


def write_go_mod(directory: Path, name: str, requires: str, replaces: list[str]) -> None:
    """A go.mod for module `name` at the installed Go's minor, requiring `requires`."""
    directory.mkdir(parents=True, exist_ok=True)
    go_version = _go_env("GOVERSION").removeprefix("go") or "1.26"
    major_minor = ".".join(go_version.split(".")[:2])
    lines = [f"module {name}", "", f"go {major_minor}", "", f"require {requires}", *replaces, ""]
    (directory / "go.mod").write_text("\n".join(lines))


def _module_dir(directory: Path, name: str, requires: str, replaces: list[str],
                imports: list[str]) -> None:
    write_go_mod(directory, name, requires, replaces)
    (directory / "tools.go").write_text(
        "//go:build tools\n\n// The programs `extender sandbox build` builds.\npackage tools\n\n"
        "import (\n" + "".join(f'\t_ "{i}"\n' for i in imports) + ")\n")


@contextlib.contextmanager
def build_lock(directory: Path) -> Iterator[None]:
    """Held while building into `directory`. The e2e tests' workers, the bench and a user may
    ask for the same programs at once: one builds, the others wait and then find them."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def build(version: str | None = None, *, root: Path | None = None,
          progress: Progress = print, force: bool = False) -> Binaries:
    """Build (or find already built) the control plane's programs of `version`."""
    go = _go()
    version = resolve_version(version)
    out = binaries(version, root)
    if force or not out.present():
        with build_lock(out.directory):
            if force or not out.present():
                _build(go, version, out, progress)
                return out
    progress(f"sandbox {version}: reusing {out.directory}/bin ({', '.join(PROGRAMS)})")
    return out


def _build(go: str, version: str, out: Binaries, progress: Progress) -> None:
    started = time.monotonic()
    bin_dir = out.directory / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    out.stamp.unlink(missing_ok=True)

    progress(f"sandbox {version}: downloading {KUBERNETES_MODULE}@v{version}")
    kube = _download(go, KUBERNETES_MODULE, f"v{version}", out.directory)
    kube_mod = Path(kube["GoMod"]).read_text()
    replaces = staging_replaces(kube_mod, version)
    if not replaces:
        raise BuildError(f"{KUBERNETES_MODULE}@v{version}'s go.mod lists no staging modules; "
                         "cannot build it as a dependency")
    kube_dir = out.directory / "kubernetes"
    _module_dir(kube_dir, "extender.sandbox/kubernetes", f"{KUBERNETES_MODULE} v{version}",
                replaces, [f"{KUBERNETES_MODULE}/cmd/{p}" for p in KUBE_PROGRAMS])
    progress(f"sandbox {version}: resolving dependencies ({len(replaces)} staging modules "
             "replaced by their published tags)")
    _run([go, "mod", "tidy"], kube_dir, f"go mod tidy for {KUBERNETES_MODULE}@v{version}")

    minor = version.split(".")[1]
    ldflags = " ".join([
        "-s", "-w",
        f"-X k8s.io/component-base/version.gitVersion=v{version}",
        "-X k8s.io/component-base/version.gitMajor=1",
        f"-X k8s.io/component-base/version.gitMinor={minor}",
        "-X k8s.io/component-base/version.gitTreeState=clean",
    ])
    t0 = time.monotonic()
    progress(f"sandbox {version}: building {', '.join(KUBE_PROGRAMS)} "
             "(minutes on a cold Go build cache)")
    tmp = out.directory / "bin.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    _run([go, "build", "-ldflags", ldflags, "-o", str(tmp) + "/",
          *[f"{KUBERNETES_MODULE}/cmd/{p}" for p in KUBE_PROGRAMS]], kube_dir,
         f"building {', '.join(KUBE_PROGRAMS)} {version}")
    progress(f"sandbox {version}: built in {time.monotonic() - t0:.0f}s")

    etcd_version = required_version(kube_mod, ETCD_MODULE) \
        or required_version(kube_mod, "go.etcd.io/etcd/client/v3")
    if etcd_version is None:
        raise BuildError(f"{KUBERNETES_MODULE}@v{version}'s go.mod names no etcd version")
    etcd_dir = out.directory / "etcd"
    _module_dir(etcd_dir, "extender.sandbox/etcd", f"{ETCD_MODULE} {etcd_version}", [],
                [ETCD_MODULE])
    t0 = time.monotonic()
    progress(f"sandbox {version}: building etcd {etcd_version}")
    _run([go, "mod", "tidy"], etcd_dir, f"go mod tidy for {ETCD_MODULE}@{etcd_version}")
    _run([go, "build", "-ldflags", "-s -w", "-o", str(tmp / "etcd"), ETCD_MODULE], etcd_dir,
         f"building etcd {etcd_version}")
    progress(f"sandbox {version}: built etcd in {time.monotonic() - t0:.0f}s")

    for program in PROGRAMS:
        os.replace(tmp / program, out.path(program))
    tmp.rmdir()
    info = {"kubernetes": f"v{version}", "etcd": etcd_version,
            "go": _go_env("GOVERSION"), "builtAt": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                 time.gmtime()),
            "seconds": round(time.monotonic() - started, 1)}
    out.stamp.write_text(json.dumps(info, indent=2) + "\n")
    progress(f"sandbox {version}: ready in {out.directory}/bin "
             f"({info['seconds']:.0f}s; kubernetes v{version}, etcd {etcd_version})")


#: The scheduler-plugins release whose kube-scheduler `--scheduler-plugins` runs (also the
#: conformance oracle's `scheduler-plugins` flavour; the module proxy lists no versions: this
#: exact tag is served, v0.35.0 was refused).
SCHEDULER_PLUGINS = "sigs.k8s.io/scheduler-plugins"
SCHEDULER_PLUGINS_VERSION = "v0.34.7"


def scheduler_plugins_kubernetes(cwd: Path) -> str:
    """The k8s.io/kubernetes release scheduler-plugins is built at: the newest served patch of
    the minor its tag requires (v0.34.7 requires 1.34.7, whose staging modules the proxy does
    not all serve; a patch release changes no plugin's API)."""
    cwd.mkdir(parents=True, exist_ok=True)
    info = _download(_go(), SCHEDULER_PLUGINS, SCHEDULER_PLUGINS_VERSION, cwd)
    required = required_version(Path(info["GoMod"]).read_text(), KUBERNETES_MODULE)
    if required is None:
        raise BuildError(f"{SCHEDULER_PLUGINS}@{SCHEDULER_PLUGINS_VERSION} requires no "
                         f"{KUBERNETES_MODULE}")
    return resolve_version(".".join(required.removeprefix("v").split(".")[:2]))


def scheduler_plugins_dir(root: Path | None = None) -> Path:
    return (root or cache_root()) / f"scheduler-plugins-{SCHEDULER_PLUGINS_VERSION}"


def scheduler_plugins_binary(root: Path | None = None) -> Path:
    """The kube-scheduler built with scheduler-plugins (`extender sandbox build
    --scheduler-plugins`)."""
    directory = scheduler_plugins_dir(root)
    program = directory / "bin" / "kube-scheduler"
    if not program.is_file() or not (directory / "build.json").is_file():
        raise BuildError(f"scheduler-plugins {SCHEDULER_PLUGINS_VERSION}'s kube-scheduler is not "
                         "built: run `extender sandbox build --scheduler-plugins` first")
    return program


def build_scheduler_plugins(*, root: Path | None = None, progress: Progress = print,
                            force: bool = False) -> Path:
    """kube-scheduler with scheduler-plugins' plugins (`sigs.k8s.io/scheduler-plugins/cmd/
    scheduler`), built at the Kubernetes release its tag asks for."""
    directory = scheduler_plugins_dir(root)
    stamp = directory / "build.json"
    program = directory / "bin" / "kube-scheduler"
    if force or not (program.is_file() and stamp.is_file()):
        with build_lock(directory):
            if force or not (program.is_file() and stamp.is_file()):
                _build_scheduler_plugins(_go(), directory, progress)
                return program
    progress(f"scheduler-plugins {SCHEDULER_PLUGINS_VERSION}: reusing {program}")
    return program


def _build_scheduler_plugins(go: str, directory: Path, progress: Progress) -> None:
    stamp = directory / "build.json"
    program = directory / "bin" / "kube-scheduler"
    started = time.monotonic()
    stamp.unlink(missing_ok=True)
    version = scheduler_plugins_kubernetes(directory)
    progress(f"scheduler-plugins {SCHEDULER_PLUGINS_VERSION}: building its kube-scheduler at "
             f"{KUBERNETES_MODULE} v{version}")
    kube = _download(go, KUBERNETES_MODULE, f"v{version}", directory)
    replaces = staging_replaces(Path(kube["GoMod"]).read_text(), version)
    # Held at this release (the tag asks for a later patch).
    replaces.append(f"replace {KUBERNETES_MODULE} => {KUBERNETES_MODULE} v{version}")
    module = directory / "module"
    command = f"{SCHEDULER_PLUGINS}/cmd/scheduler"
    _module_dir(module, "extender.sandbox/scheduler-plugins",
                f"(\n\t{KUBERNETES_MODULE} v{version}\n\t{SCHEDULER_PLUGINS} "
                f"{SCHEDULER_PLUGINS_VERSION}\n)", replaces, [command])
    _run([go, "mod", "tidy"], module, f"go mod tidy for {command}")
    minor = version.split(".")[1]
    ldflags = (f"-s -w -X k8s.io/component-base/version.gitVersion=v{version} "
               f"-X k8s.io/component-base/version.gitMajor=1 "
               f"-X k8s.io/component-base/version.gitMinor={minor}")
    partial = directory / "kube-scheduler.partial"
    _run([go, "build", "-ldflags", ldflags, "-o", str(partial), command], module,
         f"building {command}@{SCHEDULER_PLUGINS_VERSION}")
    program.parent.mkdir(parents=True, exist_ok=True)
    os.replace(partial, program)
    info = {"schedulerPlugins": SCHEDULER_PLUGINS_VERSION, "kubernetes": f"v{version}",
            "go": _go_env("GOVERSION"), "seconds": round(time.monotonic() - started, 1)}
    stamp.write_text(json.dumps(info, indent=2) + "\n")
    progress(f"scheduler-plugins {SCHEDULER_PLUGINS_VERSION}: ready ({program}, "
             f"{info['seconds']:.0f}s)")


def scheduler_plugins_kubernetes_version(root: Path | None = None) -> str:
    """The Kubernetes release the built scheduler-plugins kube-scheduler is at."""
    stamp = scheduler_plugins_dir(root) / "build.json"
    return str(json.loads(stamp.read_text())["kubernetes"]).lstrip("v")
