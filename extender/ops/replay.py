"""`extender replay`: replay recordings (`extender serve --record`) through the HTTP app."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path


def add_commands(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    replay = subparsers.add_parser(
        "replay", help="replay `serve --record` recordings and compare every reply",
        description="Rebuild the recorded extender (policy, flags, state changes; no API "
                    "server) and send it the recorded requests through the HTTP app in "
                    "order; every reply must equal the recorded one byte for byte. Prints one "
                    "line per recording and one per mismatch, as each recording is replayed. "
                    "Exit 0 when all match, 1 on a mismatch, 2 when a recording could not be "
                    "read or none was found (docs/operations.md, \"Recording\").")
    replay.add_argument("paths", nargs="+", type=Path, metavar="PATH",
                        help="recording files (recording-<n>.jsonl, or .jsonl.gz), or "
                             "directories of them (a --record DIR)")
    replay.set_defaults(func=run_replay)


def run_replay(args: argparse.Namespace) -> int:
    logging.getLogger("httpx").setLevel(logging.WARNING)  # not one line per replayed request
    # The report says how each replayed reply compares; the replayed app's request lines would
    # add a 5xx line for every request the replay abandons (the recording ends before its
    # reply, or a corrupt entry stops the replay), which this process did not fail.
    requests = logging.getLogger("extender.request")
    level = requests.level
    requests.setLevel(logging.CRITICAL)
    try:
        return replay_all(args.paths)
    finally:
        requests.setLevel(level)


def replay_all(paths: list[Path]) -> int:
    """Replay and report each recording in turn: 2 if one could not be read (or a path held
    none), else 1 on a mismatch, else 0."""
    from extender.api.replay import replay_file
    from extender.state.recording import RecordingError, recordings_in

    unreadable = mismatched = False
    for path in paths:
        files = recordings_in(path)
        if not files:
            print(f"extender replay: no recording found in {path} (recording-<n>.jsonl or "
                  ".jsonl.gz, searched below it too)", file=sys.stderr)
            unreadable = True
        for file in files:
            # One bad recording must not hide the others' reports: each is printed when done.
            try:
                report = replay_file(file)
            except (OSError, RecordingError) as exc:
                problem = f"{file}: {exc.strerror}" if isinstance(exc, OSError) and \
                    exc.strerror else str(exc)
                print(f"extender replay: {problem}", file=sys.stderr)
                unreadable = True
                continue
            print(report.summary(), flush=True)
            mismatched = mismatched or not report.ok
    return 2 if unreadable else 1 if mismatched else 0
