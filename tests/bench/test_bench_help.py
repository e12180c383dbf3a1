"""Every option of every `python -m bench.*` command says what it does (as the extender's own
commands do: tests/ops/test_cli_startup.py)."""

from __future__ import annotations

import argparse
import importlib

import pytest

MODULES = ("ab", "agreement", "e2e", "generate", "goyardstick", "run", "simulate", "soak",
           "stages", "traffic")


class _Parsed(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser


@pytest.mark.parametrize("module", MODULES)
def test_every_option_has_a_help_text(module: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def caught(self: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        raise _Parsed(self)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", caught)
    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", caught)
    with pytest.raises(_Parsed) as parsed:
        importlib.import_module(f"bench.{module}").main([])
    options = [action for action in parsed.value.parser._actions if action.option_strings]
    assert options, module
    assert [a.option_strings[0] for a in options if not a.help] == []
