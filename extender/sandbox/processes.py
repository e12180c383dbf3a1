"""Background processes of a sandbox: started detached (their own session, output to a log
file), recorded in the state directory so that a later `extender sandbox down` — another
process — finds and stops them, and nothing is left running."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from extender.files import replacing


@dataclass(frozen=True)
class Process:
    name: str
    pid: int
    argv: list[str]
    log: str
    started: float

    def alive(self) -> bool:
        """Running and still the process we started (a pid may be reused)."""
        try:
            cmdline = Path(f"/proc/{self.pid}/cmdline").read_bytes()
        except OSError:
            try:
                os.kill(self.pid, 0)
            except OSError:
                return False
            return True
        if not cmdline:
            # A zombie's is empty; so is, for a moment, that of a process whose exec the kernel
            # is still setting up, which `Popen` has already returned for (a busy machine makes
            # that moment long enough for a first look).
            return process_state(self.pid) not in (None, "Z", "X")
        return cmdline.split(b"\0", 1)[0].decode(errors="replace") == self.argv[0]


def process_state(pid: int) -> str | None:
    """The state letter of /proc/PID/stat (R, S, D, Z, X, …), None when there is no such pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(errors="replace")
    except OSError:
        return None
    # The command name, in parentheses, may itself hold ") ": the state follows the last one.
    return stat.rpartition(")")[2].split()[0] if ")" in stat else None


class Registry:
    """The processes of one state directory, in start order (`processes.json`)."""

    def __init__(self, state_dir: Path) -> None:
        self.file = state_dir / "processes.json"
        self.logs = state_dir / "logs"

    def load(self) -> list[Process]:
        try:
            raw = json.loads(self.file.read_text())
        except (OSError, ValueError):
            return []
        return [Process(**item) for item in raw]

    def _save(self, processes: Sequence[Process]) -> None:
        self.file.parent.mkdir(parents=True, exist_ok=True)
        with replacing(self.file) as tmp:
            tmp.write_text(json.dumps([asdict(p) for p in processes], indent=1))

    def running(self) -> list[Process]:
        return [p for p in self.load() if p.alive()]

    def get(self, name: str) -> Process | None:
        return next((p for p in self.load() if p.name == name), None)

    def spawn(self, name: str, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
              cwd: Path | None = None) -> Process:
        """Start `argv` detached, its output appended to `logs/<name>.log`."""
        if (old := self.get(name)) is not None and old.alive():
            raise RuntimeError(f"{name} is already running (pid {old.pid})")
        self.logs.mkdir(parents=True, exist_ok=True)
        log = self.logs / f"{name}.log"
        with open(log, "ab") as out:
            child = subprocess.Popen(
                list(argv), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True, env=dict(env) if env is not None else None,
                cwd=cwd)
        proc = Process(name, child.pid, list(argv), str(log), time.time())
        self._save([p for p in self.load() if p.name != name] + [proc])
        return proc

    def stop(self, name: str, *, timeout: float = 10.0, kill: bool = False) -> bool:
        """Stop one process (SIGTERM to its group, SIGKILL after `timeout`; with `kill`,
        SIGKILL at once, as a crash); True if it ran."""
        proc = self.get(name)
        if proc is None:
            return False
        ran = _terminate(proc, timeout, kill=kill)
        self._save([p for p in self.load() if p.name != name])
        return ran

    def stop_all(self, *, timeout: float = 10.0) -> list[str]:
        """Stop every process, newest first; the names of those that were running."""
        stopped = []
        for proc in reversed(self.load()):
            if _terminate(proc, timeout):
                stopped.append(proc.name)
            self._save([p for p in self.load() if p.name != proc.name])
        self.file.unlink(missing_ok=True)
        return stopped


def _terminate(proc: Process, timeout: float, *, kill: bool = False) -> bool:
    if not proc.alive():
        return False
    for sig in (signal.SIGKILL,) if kill else (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return True
        except PermissionError:
            os.kill(proc.pid, sig)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                # Reap it if it is our child (tests start the sandbox in-process).
                os.waitpid(proc.pid, os.WNOHANG)
            except ChildProcessError:
                pass
            if not proc.alive():
                return True
            time.sleep(0.05)
    return True


#: Where `free_port` draws from when the system's ephemeral range cannot be read.
_EPHEMERAL = (32768, 60999)
_LOWEST = 10000


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return _EPHEMERAL


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on right now, for a program started next to
    bind.

    Drawn at random below the system's ephemeral range, not by binding port 0: a port the
    kernel hands out for port 0 is one it hands out again, to the next `connect()` of any
    process or the next program's port-0 probe, in the second or so before the program started
    binds it (seen: a health port taken so, `extender serve` exiting on `address already in
    use`)."""
    low, _ = _ephemeral_range()
    top = low - 1 if low - 1 > _LOWEST + 1000 else _EPHEMERAL[0] - 1
    for _ in range(100):
        port = random.randint(_LOWEST, top)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise OSError(f"no free TCP port on 127.0.0.1 in {_LOWEST}-{top}")
