"""Record the e2e scenarios against the real kube-scheduler and keep them as contract fixtures.

    python -m tests.e2e.record                       # every tests/e2e/test_real_*.py scenario
    python -m tests.e2e.record -k gang               # pytest arguments pass through
    python -m tests.e2e.record --clean               # also drop scenarios this run did not record

Runs pytest on the e2e scenarios with `EXTENDER_E2E_RECORD` set (each scenario's extender runs
with `serve --record`, see conftest.py), then for every scenario whose test passed: replays
its recordings (`extender.api.replay`; a scenario that does not replay byte-identically is not
kept, unless `--force`) and writes tests/fixtures/recorded/<kubernetes version>/<scenario>/
with the recordings gzipped and `manifest.json` (the test, the date, kube-scheduler's version
and the KubeSchedulerConfiguration it ran with, the extender's version, policy and flags, and
what each recording holds). `tests/contract/test_recorded.py` replays them in the ordinary
test suite. Needs what the e2e tests need (Go, the sandbox build).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import yaml

from extender.api.replay import replay_file
from extender.state import recording

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "recorded"
SCENARIOS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests" / "e2e").glob("test_real_*.py"))
RECORD_ENV = "EXTENDER_E2E_RECORD"


def passed_tests(junit: Path) -> set[str]:
    """Node ids (`tests/e2e/test_x.py::test_y[param]`) of the tests that passed."""
    passed = set()
    for case in ElementTree.parse(junit).iter("testcase"):
        if any(child.tag in ("failure", "error", "skipped") for child in case):
            continue
        module = case.get("classname", "").replace(".", "/")
        passed.add(f"{module}.py::{case.get('name', '')}")
    return passed


def scheduler_version(binary: str) -> str:
    try:
        done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30,
                              check=False)
    except OSError as exc:
        return f"unknown ({exc})"
    return done.stdout.strip() or done.stderr.strip()


def _portable(text: str, scenario: dict[str, Any]) -> str:
    """The sandbox's state directory (a temporary path) written as $SANDBOX."""
    state = scenario.get("sandboxStateDir")
    return text.replace(state, "$SANDBOX") if state else text


def summary(rec: recording.Recording) -> dict[str, Any]:
    verbs = Counter(i.verb if i is not None else o.verb for i, o in recording.iter_exchanges(rec))
    changes = Counter(type(e).__name__ for e in rec.entries
                      if not isinstance(e, recording.In | recording.Out))
    return {"exchanges": dict(sorted(verbs.items())),
            "stateChanges": {recording_name(k): v for k, v in sorted(changes.items())}}


def recording_name(struct_name: str) -> str:
    return {"RelistBegin": "relist-begin", "RelistPage": "relist-page",
            "RelistEnd": "relist-end"}.get(struct_name, struct_name.lower())


#: Why a scenario has nothing to keep, when that is no fault of the recording.
NOTHING_TO_KEEP = ("no recording (the test started no extender)",
                   "its extender answered nothing")


def keep(source: Path, scenario: dict[str, Any], out: Path, force: bool) -> tuple[Path | None, str]:
    """Replay and copy one recorded scenario; (where it went or None, what happened)."""
    files = recording.files(source)
    if not files:
        return None, NOTHING_TO_KEEP[0]
    # A recording of an extender that answered nothing (stopped before the first request)
    # asks the replay nothing: left out, and named in the manifest.
    silent = [f for f in files if not any(isinstance(e, recording.Out)
                                          for e in recording.read(f).entries)]
    files = [f for f in files if f not in silent]
    if not files:
        return None, NOTHING_TO_KEEP[1]
    reports = [replay_file(f) for f in files]
    bad = [r for r in reports if not r.ok]
    if bad and not force:
        return None, "does not replay byte-identically:\n" + "\n".join(r.summary() for r in bad)
    target = out / scenario["kubernetes"] / scenario["scenario"]
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    recordings = []
    policy: dict[str, Any] = {}
    for file, report in zip(files, reports, strict=True):
        rec = recording.read(file)
        name = file.name + ".gz"
        with (target / name).open("wb") as raw, \
                gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as packed:
            packed.write(file.read_bytes())
        header = rec.header
        policy = {"source": _portable(header.policy_source, scenario), "text": header.policy}
        recordings.append({
            "file": name, "bytes": (target / name).stat().st_size, "mode": header.mode,
            "extender": header.extender, "started": header.started,
            "flags": msgspec.to_builtins(header.flags),
            # What the replay compared, and what it could not ask again (and why): the
            # contract test requires the same.
            "compared": report.compared, "skipped": report.skipped,
            **summary(rec)})
    configs = [yaml.safe_load(_portable(p.read_text(), scenario))
               for p in sorted(source.glob("kube-scheduler-config*.yaml"))]
    manifest = {
        "scenario": scenario["scenario"], "test": scenario["test"],
        "recorded": datetime.now(UTC).date().isoformat(),
        "kubernetes": scenario["kubernetes"],
        "kubeScheduler": {"version": scheduler_version(scenario["kubeScheduler"]),
                          "configurations": configs},
        "extenderPolicy": policy, "recordings": recordings,
        "leftOut": {f.name: "answered nothing" for f in silent}}
    (target / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return target, "; ".join(f"{r.path.name}: {r.summary().split(': ', 1)[1]}"
                             for r in reports)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.e2e.record", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=FIXTURES,
                        help=f"where the fixtures go (default: {FIXTURES.relative_to(ROOT)})")
    parser.add_argument("--raw", type=Path, default=None,
                        help="record into this directory and keep it (default: a temporary "
                             "directory, removed afterwards)")
    parser.add_argument("--force", action="store_true",
                        help="keep scenarios that do not replay byte-identically")
    parser.add_argument("--clean", action="store_true",
                        help="remove the version's scenarios this run did not record")
    args, pytest_args = parser.parse_known_args(argv)
    raw = (args.raw or Path(tempfile.mkdtemp(prefix="extender-record-"))).resolve()
    raw.mkdir(parents=True, exist_ok=True)
    junit = raw / "junit.xml"
    command = [sys.executable, "-m", "pytest", "-m", "e2e", "-q", "-p", "no:cacheprovider",
               f"--junitxml={junit}", *(pytest_args or SCENARIOS)]
    print("$", " ".join(command), flush=True)
    done = subprocess.run(command, cwd=ROOT, env={**os.environ, RECORD_ENV: str(raw)},
                          check=False)
    passed = passed_tests(junit) if junit.is_file() else set()
    kept: dict[str, set[str]] = {}
    problems = 0
    for scenario_file in sorted(raw.glob("*/scenario.json")):
        scenario = json.loads(scenario_file.read_text())
        if scenario["test"] not in passed:
            print(f"- {scenario['scenario']}: not kept: its test did not pass")
            problems += 1
            continue
        target, what = keep(scenario_file.parent, scenario, args.out, args.force)
        if target is None:
            problems += what not in NOTHING_TO_KEEP
            print(f"- {scenario['scenario']}: not kept: {what}")
            continue
        kept.setdefault(scenario["kubernetes"], set()).add(target.name)
        print(f"+ {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}: {what}")
    for version, names in kept.items():
        folder = args.out / version
        stale = sorted(p.name for p in folder.iterdir() if p.is_dir() and p.name not in names)
        for name in stale:
            if args.clean:
                shutil.rmtree(folder / name)
            print(f"{'removed' if args.clean else 'left from an earlier run'}: {folder / name}")
        size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        print(f"{folder}: {len(names)} scenario(s) recorded now, {size} bytes in all")
    if args.raw is None:
        shutil.rmtree(raw, ignore_errors=True)
    else:
        print(f"raw recordings: {raw}")
    return 1 if done.returncode or problems else 0


if __name__ == "__main__":
    sys.exit(main())
