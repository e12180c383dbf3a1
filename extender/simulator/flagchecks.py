"""Checks of `extender simulate`'s flags that argparse cannot make alone: those only the
replay on a real kube-scheduler reads, and the pod backoffs against each other (and against
`--config`'s), as kube-scheduler checks its configuration."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from extender.simulator.clock import to_seconds
from extender.simulator.queue import DEFAULT_POD_INITIAL_BACKOFF as DEFAULT_INITIAL_BACKOFF
from extender.simulator.queue import DEFAULT_POD_MAX_BACKOFF as DEFAULT_MAX_BACKOFF

if TYPE_CHECKING:
    from extender.simulator.schedulerconfig import SchedulerSetup

__all__ = ["DEFAULT_INITIAL_BACKOFF", "DEFAULT_MAX_BACKOFF", "SANDBOX_ONLY", "backoff_problem",
           "sandbox_only"]
#: The flags only `--on-sandbox` reads (`extender/sandbox/replay.py` adds them to the
#: command), as argparse names them. Without it nothing reads them: refused, or the run
#: would silently be another than asked for (`--kubernetes-version 1.30` simulating 1.37).
SANDBOX_ONLY = ("time_scale", "settle", "kubernetes_version", "scheduler_plugins",
                "scheduler_verbosity", "sandbox_state_dir", "keep_sandbox")


def sandbox_only(args: argparse.Namespace, flag_defaults: Callable[[str], Any]) -> str | None:
    """Why the flags of `SANDBOX_ONLY` given without `--on-sandbox` (set to other than their
    default: `flag_defaults` is the parser's `get_default`) are refused, or None."""
    given = [name for name in SANDBOX_ONLY
             if hasattr(args, name) and getattr(args, name) != flag_defaults(name)]
    if not given:
        return None
    flags = ", ".join(f"--{name.replace('_', '-')}" for name in given)
    why = (f"{flags} {'apply' if len(given) > 1 else 'applies'} only with --on-sandbox (the "
           "replay on a real kube-scheduler)")
    if "kubernetes_version" in given:
        from extender.engine.args import NEWEST_VERSION

        newest = ".".join(map(str, NEWEST_VERSION))
        why += (f"; the simulator follows the policy's kubernetesVersion (`kubernetesVersion: "
                f"\"{args.kubernetes_version}\"` in the ExtenderPolicy; without one, {newest})")
    return why


def _source(given: int | None, flag: str, key: str, from_file: int | None,
            default: int) -> tuple[int, str]:
    """A backoff the run takes and where it comes from, for a message."""
    if given is not None:
        return given, f"{flag} {to_seconds(given):g}s"
    if from_file is not None:
        return from_file, f"{to_seconds(from_file):g}s, --config's {key}"
    return default, f"{to_seconds(default):g}s, the default"


def backoff_problem(initial: int | None, maximum: int | None,
                    setup: SchedulerSetup | None = None) -> str | None:
    """kube-scheduler's rules for its podInitialBackoffSeconds and podMaxBackoffSeconds (the
    first more than 0, the second at least the first) on the backoffs the run takes: the
    flags' (`initial`, `maximum`; None: not given), else `--config`'s (`setup`), else 1s and
    10s. Why they break them, naming the flag given, or None."""
    first, first_is = _source(initial, "--pod-initial-backoff", "podInitialBackoffSeconds",
                              setup.pod_initial_backoff if setup else None,
                              DEFAULT_INITIAL_BACKOFF)
    most, most_is = _source(maximum, "--pod-max-backoff", "podMaxBackoffSeconds",
                            setup.pod_max_backoff if setup else None, DEFAULT_MAX_BACKOFF)
    if first <= 0:
        return f"{first_is}: must be greater than 0, as kube-scheduler's podInitialBackoffSeconds"
    if most < first:
        if maximum is not None:
            return (f"{most_is}: must be greater than or equal to the initial backoff "
                    f"({first_is}), as kube-scheduler's podMaxBackoffSeconds")
        return (f"{first_is}: must not be more than the maximum backoff ({most_is}), as "
                "kube-scheduler's podMaxBackoffSeconds")
    return None
