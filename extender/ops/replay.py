"""`extender replay`: replay recordings (`extender serve --record`) through the HTTP app."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path


def add_commands(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    replay = subparsers.add_parser(
        "replay", help="replay `serve --record` recordings and compare every reply",
        description="Rebuild the recorded extender (policy, flags, state changes; no API "
                    "server) and send it the recorded requests through the HTTP app in "
                    "order; every reply must equal the recorded one byte for byte. Prints one "
                    "line per recording and one per mismatch. Exit 0 when all match, 1 "
                    "otherwise (docs/operations.md, \"Recording\").")
    replay.add_argument("paths", nargs="+", type=Path, metavar="PATH",
                        help="recording files (recording-<n>.jsonl, or .jsonl.gz), or "
                             "directories of them (a --record DIR)")
    replay.set_defaults(func=run_replay)


def run_replay(args: argparse.Namespace) -> int:
    from extender.api.replay import replay_paths
    from extender.state.recording import RecordingError

    logging.getLogger("httpx").setLevel(logging.WARNING)  # not one line per replayed request
    try:
        reports = replay_paths(args.paths)
    except (OSError, RecordingError) as exc:
        print(f"extender replay: {exc}")
        return 2
    for report in reports:
        print(report.summary())
    if not reports:
        print("extender replay: no recording found")
        return 2
    return 0 if all(report.ok for report in reports) else 1
