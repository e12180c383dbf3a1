"""The `extender` command.

Start-up stays light: `extender --version` and `extender --help` import no sub-command module
(so neither the server stack nor the engine). Each module in `_COMMAND_MODULES` registers its
commands with `add_commands(subparsers)`; the names and one-line help of those commands are
read from the module's source (its `add_parser("name", help="...")` calls) without importing
it, and the module is imported only once one of its commands is on the command line. A module
whose command names are not string literals is simply imported up front.
"""

from __future__ import annotations

import argparse
import ast
import gc
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from extender import __version__

#: Commands another module adds flags to (`extend(parser)`), where the command's own module
#: cannot know it: the sandbox is built on the simulator, and adds `simulate --on-sandbox`.
_EXTENSIONS = {"simulate": "extender.sandbox.replay"}
# Sub-command providers: each module has `add_commands(subparsers)`.
_COMMAND_MODULES = ("extender.serve", "extender.ops.commands", "extender.simulator.cli",
                    "extender.ops.explain", "extender.ops.certs", "extender.sandbox.cli",
                    "extender.ops.replay")

#: (command name, its help, its aliases) as declared in a module's source.
Declared = tuple[str, str | None, tuple[str, ...]]
_PACKAGE_DIR = Path(__file__).resolve().parent


def _source(module: str) -> str | None:
    """The source text of `module`, found without importing it or its packages."""
    parts = module.split(".")
    if parts[0] == "extender":
        base = _PACKAGE_DIR.joinpath(*parts[1:])
        candidates = [base.with_suffix(".py"), base / "__init__.py"]
    else:
        import importlib.util

        spec = importlib.util.find_spec(module)
        candidates = [Path(spec.origin)] if spec is not None and spec.origin else []
    for path in candidates:
        if path.is_file():
            try:
                return path.read_text(encoding="utf-8")
            except OSError:
                return None
    return None


def _literal(node: object) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def declared_commands(module: str) -> list[Declared] | None:
    """The commands `module` registers, read from its source; None when they cannot be read
    (no source, or a name that is not a string literal)."""
    text = _source(module)
    if text is None:
        return None
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    found: list[Declared] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_parser"):
            continue
        name = _literal(node.args[0]) if node.args else None
        if name is None:
            return None
        keywords = {kw.arg: kw.value for kw in node.keywords if kw.arg}
        aliases = keywords.get("aliases")
        alias_names = tuple(a for a in (_literal(e) for e in getattr(aliases, "elts", ())) if a)
        found.append((name, _literal(keywords.get("help")), alias_names))
    return found or None


def build_parser(command: str | None = None, *, load_all: bool = False,
                 ) -> argparse.ArgumentParser:
    """The `extender` parser. The module of `command` (every module with `load_all`) registers
    its real sub-parsers; the other commands are light placeholders that only carry their name
    and help, enough for `extender --help` and for finding which command was given."""
    parser = argparse.ArgumentParser(
        prog="extender",
        description="A kube-scheduler extender (filter, prioritize, preempt, bind) with a "
                    "pure-Python scheduling engine and a scheduling simulator.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in _COMMAND_MODULES:
        declared = declared_commands(module)
        names = {n for name, _, aliases in declared or () for n in (name, *aliases)}
        if declared is None or load_all or command in names:
            importlib.import_module(module).add_commands(sub)
            for name, extension in _EXTENSIONS.items():
                if name in names or (declared is None and name in sub.choices):
                    importlib.import_module(extension).extend(sub.choices[name])
            continue
        for name, help_text, aliases in declared:
            if help_text is None:
                sub.add_parser(name, aliases=list(aliases), add_help=False)
            else:
                sub.add_parser(name, aliases=list(aliases), add_help=False, help=help_text)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # First pass on placeholders: handles --version, --help and unknown commands, and finds
    # the command; only then is that command's module imported and the line parsed in full.
    first, _ = build_parser().parse_known_args(argv)
    if first.command is None:
        build_parser().print_help()
        return 2
    # Importing a command's modules makes long-lived objects only (classes, functions,
    # tables): the collector's passes over them meanwhile are wasted work, a tenth of a
    # `serve` start's CPU.
    collecting = gc.isenabled()
    gc.disable()
    try:
        parser = build_parser(first.command)
    finally:
        if collecting:
            gc.enable()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 2
    from extender.logs import configure_logging

    try:
        configure_logging(getattr(args, "verbosity", None), getattr(args, "logging_format", "text"),
                          log_level=getattr(args, "log_level", None))
    except ValueError as exc:
        parser.error(str(exc))
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:
        # The reader went away (`extender explain -o json | head`): stop quietly, as `cat`
        # does, and keep Python from failing again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
