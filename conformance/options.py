"""`python -m conformance`'s options. A value that cannot work is refused while the options are
read (argparse's usage error, exit 2), before an oracle is built or a case is run: a run
should not end at its first disagreement, nor turn every case into an error.
"""

from __future__ import annotations

import argparse
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

from conformance.build import SCHEDULER_PLUGINS, SCHEDULER_PLUGINS_VERSION, oldest_minor
from extender.cliargs import positive_int
from extender.engine.args import NEWEST_VERSION, OLDEST_VERSION
from extender.sandbox.build import DEFAULT_VERSION

_RELEASE = re.compile(r"^v?1\.(\d+)(?:\.(\d+))?$")
ENGINE_RANGE = f"1.{OLDEST_VERSION[1]}..1.{NEWEST_VERSION[1]}"


def oracle_release(text: str) -> str:
    """A release the oracle can be built at: 1.N or 1.N.P (without the `v`), N no older than
    the framework API the oracle is written against."""
    m = _RELEASE.match(text.strip())
    if not m:
        raise ValueError(f"expected 1.N or 1.N.P (e.g. {DEFAULT_VERSION}), got {text!r}")
    if int(m.group(1)) < oldest_minor():
        raise ValueError(f"the oracle runs kube-scheduler 1.{oldest_minor()} or later (the "
                         f"framework API it is written against), not {text}; older releases "
                         "are covered by the engine's transcribed tables only")
    return text.strip().removeprefix("v")


def engine_minor(text: str) -> str:
    """A release the engine follows (`kubernetesVersion`), as its minor 1.N (a patch part,
    which the engine ignores, is dropped)."""
    m = _RELEASE.match(text.strip())
    if not m or not OLDEST_VERSION <= (1, int(m.group(1))) <= NEWEST_VERSION:
        raise ValueError(f"expected a release the engine follows, 1.N ({ENGINE_RANGE}), "
                         f"got {text!r}")
    return f"1.{int(m.group(1))}"


def minor_of(release: str) -> str:
    return ".".join(release.split(".")[:2])


def same_release(asked: str, built: str) -> bool:
    """Whether `asked` (1.N or 1.N.P) names the release `built` (1.N.P)."""
    return asked == built or asked == minor_of(built)


def output_directory(text: str) -> Path:
    """Where disagreeing cases go: a directory that is there or can be made. Checked by making
    (and removing) a directory where they would be written, as a permission check cannot tell
    (root passes it, /proc and read-only mounts still refuse); the directory itself is made
    only at a first disagreement."""
    path = Path(text).expanduser()
    there = path
    while not (there.exists() or there.is_symlink()):
        there = there.parent
    where = "" if there == path else f"{text}: "
    if not there.is_dir():
        raise argparse.ArgumentTypeError(f"{where}{there} is not a directory")
    try:
        tempfile.TemporaryDirectory(prefix=".conformance-probe-", dir=there).cleanup()
    except OSError as exc:
        raise argparse.ArgumentTypeError(
            f"{where}cannot write in {there} ({exc.strerror or exc})") from None
    return path


def _argument(check: Callable[[str], str]) -> Callable[[str], str]:
    """`check` as an argparse type: its ValueError's words become the usage error's (argparse
    would print only `invalid value`)."""
    def parse(text: str) -> str:
        try:
            return check(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    parse.__name__ = check.__name__
    return parse


def parser(description: str | None) -> argparse.ArgumentParser:
    out = argparse.ArgumentParser(prog="python -m conformance", description=description)
    out.add_argument("--seed", type=int, default=1)
    out.add_argument("--cases", type=positive_int, default=200)
    out.add_argument("--max-nodes", type=positive_int, default=8)
    out.add_argument("--kubernetes-version", type=_argument(oracle_release), default=None,
                     help=f"the release whose plugins answer, 1.{oldest_minor()} or later "
                          "(default: the sandbox's; with --scheduler-plugins, only the release "
                          "its oracle is built at)")
    out.add_argument("--engine-version", type=_argument(engine_minor), default=None,
                     help=f"the minor the engine follows, {ENGINE_RANGE} (default: the "
                          "oracle's); another shows what changed between releases")
    out.add_argument("--out", type=output_directory, default=None,
                     help="where disagreeing cases are written (default: a new temporary "
                          "directory)")
    out.add_argument("--no-minimise", dest="minimise", action="store_false",
                     help="write disagreeing cases as generated (default: shrunk to the "
                          "objects and pod fields the disagreement needs)")
    out.add_argument("--plugin-config", action="store_true",
                     help="draw a profile's pluginConfig (plugin arguments) for each case too")
    out.add_argument("--profiles", action="store_true",
                     help="draw a profile's plugins for each case too (default plugins "
                          "disabled, score weights changed)")
    out.add_argument("--scheduler-plugins", action="store_true",
                     help="add scheduler-plugins' NodeResourcesAllocatable, PodState, "
                          "PreemptionToleration, CapacityScheduling (with ElasticQuotas), "
                          "Coscheduling's PreFilter (with PodGroups), "
                          "NodeResourceTopologyMatch, NetworkOverhead and the Trimaran "
                          "scorers (with node metrics) to the profiles (the oracle is built "
                          f"with {SCHEDULER_PLUGINS} {SCHEDULER_PLUGINS_VERSION}, at the "
                          "one Kubernetes release it requires)")
    out.add_argument("--replay", type=Path, action="append", default=[],
                     help="run a written case again instead of generating (against the "
                          "flavour, release and engine minor it was written with, unless "
                          "--kubernetes-version or --engine-version says otherwise); cases "
                          "written against different ones are refused together")
    out.add_argument("--jobs", type=positive_int, default=None,
                     help="oracle processes working at once (default: 4 with "
                          "--scheduler-plugins, whose plugins mostly wait for their "
                          "informers; else 1)")
    return out
