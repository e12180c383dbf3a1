"""The `extender` command."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from extender import __version__, serve
from extender.logs import configure_logging

# Sub-command providers: each module has `add_commands(subparsers)`.
_COMMAND_MODULES = ("extender.ops.commands", "extender.simulator.cli")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="extender",
        description="A kube-scheduler extender (filter, prioritize, preempt, bind) with a "
                    "pure-Python scheduling engine and a scheduling simulator.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve_parser = sub.add_parser("serve", help="run the extender HTTP service",
                                  description="Serve filter, prioritize, preempt and bind for "
                                              "kube-scheduler.")
    serve.add_arguments(serve_parser)
    serve_parser.set_defaults(func=serve.run)
    for name in _COMMAND_MODULES:
        importlib.import_module(name).add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 2
    configure_logging(getattr(args, "log_level", "info"))
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
