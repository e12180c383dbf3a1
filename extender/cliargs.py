"""Argument types the commands share (`extender`'s and `bench/`'s): a number out of range or not
a number is a usage error naming the option (argparse's exit status 2), not a traceback or a
server that cannot work. Standard library only, for any layer."""

from __future__ import annotations

import argparse


def _number(text: str, kind: type[int] | type[float]) -> int | float:
    try:
        return kind(text)
    except ValueError:
        noun = "an integer" if kind is int else "a number"
        raise argparse.ArgumentTypeError(f"expected {noun}, got {text!r}") from None


def positive_int(text: str) -> int:
    """An integer of at least 1 (nodes, cycles, workers)."""
    value = int(_number(text, int))
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def count(text: str) -> int:
    """An integer of at least 0 (warm-up cycles, preempts, pods)."""
    value = int(_number(text, int))
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {value}")
    return value


def percentage(text: str) -> int:
    """kube-scheduler's `percentageOfNodesToScore`: 0 (adaptive) to 100."""
    value = int(_number(text, int))
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"must be 0 (adaptive) to 100, got {value}")
    return value


def port(text: str) -> int:
    """A TCP port, 0 (any free one) to 65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be 0 to 65535, got {value}")
    return value


#: kube-scheduler's `-v` for a replay (`simulate --on-sandbox`): from 2 it logs each attempt,
#: which the replay reads; 10 is klog's most.
MIN_SCHEDULER_VERBOSITY, MAX_SCHEDULER_VERBOSITY = 2, 10


def scheduler_verbosity(text: str) -> int:
    """`--scheduler-verbosity`: kube-scheduler's `-v` for a replay, 2 to 10."""
    value = int(_number(text, int))
    if not MIN_SCHEDULER_VERBOSITY <= value <= MAX_SCHEDULER_VERBOSITY:
        raise argparse.ArgumentTypeError(
            f"must be {MIN_SCHEDULER_VERBOSITY} to {MAX_SCHEDULER_VERBOSITY} (the replay reads "
            f"kube-scheduler's -v={MIN_SCHEDULER_VERBOSITY} lines), got {value}")
    return value


def positive_float(text: str) -> float:
    """A number above 0 (seconds, rates, scales)."""
    value = float(_number(text, float))
    if not value > 0:  # NaN too
        raise argparse.ArgumentTypeError(f"must be above 0, got {text!r}")
    return value


def non_negative_float(text: str) -> float:
    """A number of at least 0 (a warm-up in seconds)."""
    value = float(_number(text, float))
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text!r}")
    return value


def sizes(text: str) -> list[int]:
    """Comma-separated integers of at least 1 (`100,500,5000`); empty items are skipped."""
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"expected comma-separated sizes, got {text!r}")
    return [positive_int(item) for item in items]
