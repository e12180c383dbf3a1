"""`extender.cliargs`, the argument types the commands share: the bench's commands refuse a bad
number as a usage error naming the option (exit status 2), where they once crashed deep in a
run (`bench.stages --nodes 0`: ZeroDivisionError) or printed a ValueError traceback
(`bench.traffic --nodes abc`); `serve` and `simulate` take their ports, percentages and
weights through the same types (tests/ops/test_cli_startup.py, tests/simulator/test_cli.py)."""

from __future__ import annotations

import argparse
import importlib

import pytest

from extender import cliargs


@pytest.mark.parametrize(("kind", "text", "value"), [
    (cliargs.positive_int, "5", 5),
    (cliargs.count, "0", 0),
    (cliargs.percentage, "100", 100),
    (cliargs.percentage, "0", 0),
    (cliargs.port, "0", 0),
    (cliargs.port, "65535", 65535),
    (cliargs.positive_float, "0.25", 0.25),
    (cliargs.non_negative_float, "0", 0.0),
    (cliargs.sizes, "100, 500,,5000", [100, 500, 5000]),
])
def test_good_values_read_as_numbers(kind, text, value) -> None:
    assert kind(text) == value


@pytest.mark.parametrize(("kind", "text", "words"), [
    (cliargs.positive_int, "0", "must be at least 1, got 0"),
    (cliargs.positive_int, "2.5", "expected an integer, got '2.5'"),
    (cliargs.count, "-1", "must not be negative, got -1"),
    (cliargs.percentage, "101", "must be 0 (adaptive) to 100, got 101"),
    (cliargs.port, "65536", "must be 0 to 65535, got 65536"),
    (cliargs.port, "http", "expected a port number, got 'http'"),
    (cliargs.positive_float, "0", "must be above 0, got '0'"),
    (cliargs.positive_float, "nan", "must be above 0, got 'nan'"),
    (cliargs.positive_float, "fast", "expected a number, got 'fast'"),
    (cliargs.non_negative_float, "-0.5", "must not be negative, got '-0.5'"),
    (cliargs.sizes, ",", "expected comma-separated sizes, got ','"),
    (cliargs.sizes, "100,0", "must be at least 1, got 0"),
])
def test_bad_values_are_refused_with_what_is_wrong(kind, text, words) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        kind(text)
    assert str(refused.value) == words


#: (module, its entry point, arguments with one bad number, the option named)
COMMANDS = [
    ("bench.stages", "main", ["--nodes", "0"], "--nodes"),
    ("bench.stages", "main", ["--percentage-of-nodes-to-score", "101"],
     "--percentage-of-nodes-to-score"),
    ("bench.traffic", "main", ["--nodes", "abc"], "--nodes"),
    ("bench.traffic", "main", ["--cycles", "0"], "--cycles"),
    ("bench.run", "main", ["--sizes", "100,x"], "--sizes"),
    ("bench.run", "main", ["--concurrency", "0"], "--concurrency"),
    ("bench.e2e", "main", ["--nodes", "0"], "--nodes"),
    ("bench.generate", "main", ["--out", "unused", "--nodes", "-1"], "--nodes"),
    ("bench.simulate", "main", ["--load", "0"], "--load"),
    ("bench.soak", "parse_args", ["--duration", "nan"], "--duration"),
    ("bench.agreement", "main", ["--out", "unused", "--time-scale", "0"], "--time-scale"),
]


@pytest.mark.parametrize(("module", "entry", "argv", "option"), COMMANDS,
                         ids=[f"{m}{' '.join(a)}" for m, _, a, _ in COMMANDS])
def test_each_command_refuses_a_bad_number_before_running(module, entry, argv, option,
                                                          capsys) -> None:
    command = getattr(importlib.import_module(module), entry)
    with pytest.raises(SystemExit) as stopped:
        command(argv)
    assert stopped.value.code == 2
    assert f"error: argument {option}: " in capsys.readouterr().err
