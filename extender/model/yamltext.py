"""A YAML parse error in one line: PyYAML's message spans four (the problem, its context and
two marks, each naming the stream)."""

from __future__ import annotations

import yaml


def yaml_error(exc: yaml.YAMLError) -> str:
    """`line L, column C: <problem>` (and what it was parsing), or the error as it is."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    if mark is None or not problem:
        return " ".join(str(exc).split())
    context = getattr(exc, "context", None)
    return (f"line {mark.line + 1}, column {mark.column + 1}: {problem}"
            + (f" ({context})" if context else ""))
