"""The README's console blocks run verbatim, in order, in one shell, as a user pastes them into
a fresh clone with command 1's server running: every `$` command succeeds and prints what the
README shows, writes nothing into the clone, and nothing but the extender's own logs reaches
standard error (no `command not found`, no address already in use, no third-party noise).

In expected output a line `...` stands for any lines, `...` inside a line for any text, and the
clock's figures (the simulator's wall time, seconds since a failed fetch) are not compared. A block after the comment
`<!-- not run by tests/ops/test_readme.py: WHY -->` is left to the test WHY names."""

from __future__ import annotations

import functools
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.polling import until

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SKIP_MARK = "<!-- not run by tests/ops/test_readme.py:"
SENTINEL = "__README_COMMAND_DONE__"
#: Figures of the clock, not of the behaviour: the simulator's wall time, and how long ago the
#: load-metrics source failed.
CLOCK = re.compile(r"\d+\.\d+s wall, \d+ pods/s|(?<=failed fetch\(es\) in )\d+s")


@dataclass
class Command:
    line: int
    text: str
    expected: list[str]


def console_blocks(text: str) -> Iterator[list[Command]]:
    """Each ```console block's commands (continuation lines joined) with their output."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() != "```console":
            i += 1
            continue
        skipped = i > 0 and lines[i - 1].startswith(SKIP_MARK)
        commands: list[Command] = []
        i += 1
        while lines[i].strip() != "```":
            line = lines[i]
            if line.startswith("$ "):
                start, command = i + 1, line[2:]
                while command.endswith("\\"):
                    i += 1
                    command += "\n" + lines[i]
                commands.append(Command(start, command, []))
            else:
                commands[-1].expected.append(line)
            i += 1
        i += 1
        if not skipped:
            yield commands


def command_one(text: str) -> str:
    """Command 1's server: the last step of the README's first command."""
    match = re.search(r"^# 1\..*?\n(python3 -m venv [^\n]+)", text, re.S | re.M)
    assert match, "the README's command 1 is not where it was"
    return match.group(1).split(" && ")[-1]


def _pattern(line: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in line.split("...")))


def matches(expected: list[str], actual: list[str]) -> bool:
    """`actual` is `expected`, where a line `...` is any lines and `...` in a line any text."""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head.strip() == "...":
        return any(matches(rest, actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and _pattern(head).fullmatch(actual[0]) is not None and \
        matches(rest, actual[1:])


def _normal(lines: list[str]) -> list[str]:
    return [CLOCK.sub("<clock>", line.rstrip()) for line in lines]


def _port_of(command: str) -> int:
    flag = re.search(r"--(?:secure-)?port[ =](\d+)", command)
    return int(flag.group(1)) if flag else 8888


def _busy(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


class Shell:
    """One bash, fed a command at a time; each command's stdout read up to a sentinel."""

    def __init__(self, cwd: Path, env: dict[str, str], stderr: Path) -> None:
        self._err = stderr.open("w")
        self.proc = subprocess.Popen(
            ["bash", "--noprofile", "--norc"], cwd=cwd, env=env, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err,
            start_new_session=True)
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)

    def run(self, command: str, timeout: float = 120) -> tuple[int, list[str]]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{command}\nprintf '\\n{SENTINEL} %s\\n' $?\n")
        self.proc.stdin.flush()
        out = ""
        while True:
            line = self._lines.get(timeout=timeout)
            if line.startswith(SENTINEL):
                return int(line.split()[1]), out.removesuffix("\n").splitlines()
            out += line

    def close(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)  # the shell and the servers it started
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self._err.close()


#: The extras command 1 (`pip install -e .`) leaves out, by the module each brings: the
#: clone's `extender` cannot import them, as a user's cannot after command 1 (a block that
#: needs one must install it first).
EXTRA_MODULES = {"plot": "matplotlib", "certs": "cryptography"}
_HIDE_EXTRAS = """import sys
class _NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {modules!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, _NotInstalled())
"""


def _clone(tmp_path: Path) -> Path:
    """The repository's files seen from a fresh directory (links), with `.venv/bin/extender`
    running this interpreter's extender without the extras: what a fresh clone after command 1
    looks like."""
    clone = tmp_path / "clone"
    clone.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in (".venv", ".git") and not entry.name.startswith(".pytest"):
            (clone / entry.name).symlink_to(entry)
    site = tmp_path / "without-extras"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        _HIDE_EXTRAS.format(modules=set(EXTRA_MODULES.values())))
    bin_dir = clone / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    shim = bin_dir / "extender"
    shim.write_text(f'#!/bin/sh\nPYTHONPATH="{site}" exec "{sys.executable}" -m extender "$@"\n')
    shim.chmod(0o755)
    return clone


def test_the_hidden_modules_are_the_extras_command_one_leaves_out() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra, module in EXTRA_MODULES.items():
        assert any(requirement.startswith(module) for requirement in extras[extra]), extra
    install = re.search(r"^# 1\..*?\npython3 -m venv \.venv && (\S+ install [^&]+)&&",
                        README.read_text(), re.S | re.M)
    assert install and install.group(1).strip() == ".venv/bin/pip install -e ."  # no extra


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by the shell) has stopped too.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:  # reaped meanwhile
        return False


def _ready(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


@pytest.mark.slow
def test_the_readme_console_blocks_run_verbatim(tmp_path: Path) -> None:
    for tool, package in (("curl", "curl"), ("jq", "jq")):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (Debian package `{package}`): the README uses it")
    text = README.read_text()
    blocks = list(console_blocks(text))
    ports = {8888} | {_port_of(c.text) for block in blocks for c in block if c.text.endswith("&")}
    if busy := sorted(p for p in ports if _busy(p)):
        pytest.skip(f"port(s) {busy} in use here: the README's servers listen there")
    clone = _clone(tmp_path)
    before = sorted(p.name for p in clone.iterdir())
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}  # where the README's `mktemp -d` puts outputs
    shell = Shell(clone, env, tmp_path / "stderr.log")
    ran, servers, started = 0, set(), []
    try:
        for command in [Command(0, command_one(text) + " &", [])] + \
                [c for block in blocks for c in block]:
            rc, out = shell.run(command.text)
            where = f"README.md:{command.line}: $ {command.text}"
            assert rc == 0, f"{where}\nexit {rc}\n" + (tmp_path / "stderr.log").read_text()
            if command.text.endswith("&"):
                started.append(int(shell.run("echo $!")[1][0]))
                servers.add(started[-1])
                until(functools.partial(_ready, _port_of(command.text)),
                      f"the server of {where}", 60)
                continue
            expected = _normal(command.expected)
            assert matches(expected, _normal(out)), (
                f"{where}\n--- the README shows\n" + "\n".join(command.expected)
                + "\n--- it printed\n" + "\n".join(out))
            ran += 1
        # Each block that starts a server stops it; only command 1's is left running.
        until(lambda: not any(_alive(pid) for pid in started[1:]), "the blocks' servers to stop")
        assert _alive(started[0])
    finally:
        shell.close()
    assert ran >= 15  # every block ran, not a README the parser no longer understands
    assert sorted(p.name for p in clone.iterdir()) == before, "a command wrote into the clone"
    assert sorted(p.name for p in scratch.iterdir()), "the simulations wrote nowhere"
    # The background servers' own logs (klog lines with their pid) and nothing else.
    klog = re.compile(r"[IWE]\d{4} [\d:.]+ +(\d+) ")
    errors = [line for line in (tmp_path / "stderr.log").read_text().splitlines()
              if not ((m := klog.match(line)) and int(m.group(1)) in servers)]
    assert errors == [], errors
