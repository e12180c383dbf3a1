"""One finding of a configuration check, printed as `<file>: <path>: <message>`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Problem:
    """An error makes kube-scheduler (or the extender) refuse the file or silently misbehave;
    a warning is legal but probably not what was meant."""

    file: str
    path: str
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        prefix = "warning: " if self.severity == "warning" else ""
        return f"{self.file}: {self.path or '(root)'}: {prefix}{self.message}"


class Collector:
    """Accumulates problems for one file; rules call `error`/`warning` with a field path."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.problems: list[Problem] = []

    def error(self, path: str, message: str) -> None:
        self.problems.append(Problem(self.file, path, message, "error"))

    def warning(self, path: str, message: str) -> None:
        self.problems.append(Problem(self.file, path, message, "warning"))
