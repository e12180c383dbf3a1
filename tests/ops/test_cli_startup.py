"""The `extender` command: light start-up for --version and --help, kube-scheduler's flag
names with the old ones as aliases, and every sub-command module loaded only when used."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from extender import __version__
from extender.cli import _COMMAND_MODULES, build_parser, declared_commands, main

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("fastapi", "starlette", "uvicorn", "matplotlib", "numpy", "prometheus_client",
         "extender.engine", "extender.api", "extender.serve", "extender.simulator")

PROBE = """
import json, sys
from extender.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in
                        ("fastapi", "starlette", "uvicorn", "matplotlib", "numpy",
                         "prometheus_client") or m.startswith("extender."))))
"""


@pytest.mark.parametrize("argv", [["--version"], ["--help"], []])
def test_version_and_help_import_no_server_stack(argv):
    out = subprocess.run([sys.executable, "-c", PROBE.format(argv=argv)], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    loaded = json.loads(out.strip().splitlines()[-1])
    assert [m for m in loaded if m.startswith(HEAVY)] == []
    assert set(loaded) <= {"extender.cli"}


def test_python_m_extender_version():
    done = subprocess.run([sys.executable, "-m", "extender", "--version"], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == f"extender {__version__}"


def test_help_lists_every_command_with_its_help():
    out = subprocess.run([sys.executable, "-m", "extender", "--help"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    full = build_parser(load_all=True)
    commands = full._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for name in commands:
        assert name in out
    assert {"serve", "render-config", "check-config", "simulate"} <= set(commands)
    assert "run the extender HTTP service" in out


def test_declared_commands_match_what_each_module_registers():
    """The names read from the sources are the names the modules register."""
    full = build_parser(load_all=True)
    registered = set(full._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    declared = set()
    for module in _COMMAND_MODULES:
        found = declared_commands(module)
        assert found is not None, f"{module}: command names are not string literals"
        declared |= {n for name, _, aliases in found for n in (name, *aliases)}
    assert declared == registered


def test_only_the_given_commands_module_is_imported():
    probe = """
import sys
from extender.cli import main
try:
    main(["render-config", "--help"])
except SystemExit:
    pass
print("starlette" in sys.modules, "extender.serve" in sys.modules,
      "extender.simulator" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    assert "--url" in out
    assert out.strip().splitlines()[-1] == "False False False"


def test_render_config_help_shows_only_defaults_that_say_something(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    with pytest.raises(SystemExit):
        main(["render-config", "--help"])
    options: dict[str, str] = {}
    for line in capsys.readouterr().out.split("options:")[1].splitlines():
        if line.startswith("  -"):
            option = line.split()[0].rstrip(",")
            options[option] = line
        elif line.strip():
            options[option] += " " + line.strip()
    assert options["--verbs"].endswith("(default: filter prioritize preempt bind)")
    assert options["--node-cache"].endswith("(default: --node-cache)")
    assert options["--url"].endswith("(default: http://127.0.0.1:8888)")
    # Switches, unset options and helps that word their default get none (it said "True" for
    # --no-leader-election, whose default is to elect, and 4.0 after "(default: 4)").
    for switch in ("--no-leader-election", "--ignorable", "--policy", "--managed-resource",
                   "--bind-deadline", "--http-timeout"):
        assert "(default: None)" not in options[switch] and "True" not in options[switch]
        assert options[switch].count("default") <= 1, options[switch]
    assert "(default: [])" not in "".join(options.values())


def test_serve_names_a_scheduler_configuration_given_as_its_policy_once():
    from tests.polling import free_port

    done = subprocess.run(
        [sys.executable, "-m", "extender", "serve", "--port", str(free_port()),
         "--policy", "config/scheduler-config.yaml"],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("invalid policy") == 1, done.stderr  # one error, in klog's format
    assert done.stderr.startswith("E") and '"cannot start" err=<' in done.stderr
    assert "this is a KubeSchedulerConfiguration" in done.stderr
    assert "Traceback" not in done.stderr


def test_serve_on_a_port_in_use_says_so_before_reading_its_state():
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "extender", "serve", "--port", str(port)],
            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert f'"cannot start" err="cannot listen on 127.0.0.1:{port}: Address already in use; ' \
           "another process listens there (an earlier `extender serve`?): stop it, or give " \
           '--secure-port (--port) another port"' in done.stderr, done.stderr
    assert "startup complete" not in done.stderr and done.stderr.count("\n") == 1


def test_every_option_of_every_command_says_what_it_does():
    import argparse

    undocumented = []

    def walk(parser: argparse.ArgumentParser, name: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for command, sub in {id(p): (n, p) for n, p in action.choices.items()}.values():
                    walk(sub, f"{name} {command}")
            elif action.option_strings and not action.help:
                undocumented.append(f"{name} {action.option_strings[0]}")

    walk(build_parser(load_all=True), "extender")
    assert undocumented == []


def test_unknown_command_is_a_usage_error():
    done = subprocess.run([sys.executable, "-m", "extender", "nope"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 2 and "invalid choice: 'nope'" in done.stderr


KUBE_FLAGS = ["serve", "--bind-address", "0.0.0.0", "--secure-port", "9443",
              "--tls-cert-file", "c.crt", "--tls-private-key-file", "k.key",
              "--client-ca-file", "ca.crt", "-v", "4", "--logging-format", "json"]
OLD_FLAGS = ["serve", "--host", "0.0.0.0", "--port", "9443", "--tls-cert-file", "c.crt",
             "--tls-key-file", "k.key", "--tls-client-ca-file", "ca.crt", "--v=4",
             "--logging-format=json"]


def test_kube_scheduler_flag_names_and_their_aliases_mean_the_same():
    parser = build_parser("serve")
    new, old = parser.parse_args(KUBE_FLAGS), parser.parse_args(OLD_FLAGS)
    assert vars(new) == vars(old)
    assert (new.host, new.port, new.verbosity, new.logging_format) == ("0.0.0.0", 9443, 4, "json")
    assert (str(new.tls_key_file), str(new.tls_client_ca_file)) == ("k.key", "ca.crt")
    assert parser.parse_args(["serve", "--v", "2"]).verbosity == 2
    defaults = parser.parse_args(["serve"])
    assert (defaults.host, defaults.port, defaults.verbosity, defaults.logging_format,
            defaults.log_level) == ("127.0.0.1", 8888, None, "text", None)


def test_bad_logging_flags_are_usage_errors(capsys):
    parser = build_parser("serve")
    for argv in (["serve", "-v", "-1"], ["serve", "--logging-format", "xml"],
                 ["serve", "--log-level", "trace"]):
        with pytest.raises(SystemExit):
            parser.parse_args(argv)
    assert "--logging-format" in capsys.readouterr().err


def test_serve_help_names_the_aliases():
    out = subprocess.run([sys.executable, "-m", "extender", "serve", "--help"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    flat = " ".join(out.split())
    for new, old in (("--bind-address", "--host"), ("--secure-port", "--port"),
                     ("--tls-private-key-file", "--tls-key-file"),
                     ("--client-ca-file", "--tls-client-ca-file")):
        assert f"{new} " in flat and f"{old} is an alias" in flat
    for flag in ("-v LEVEL, --v LEVEL", "--logging-format", "--log-level", "--tls-cert-file"):
        assert flag in flat


@pytest.mark.parametrize(("argv", "words"), [
    (["serve", "--port", "70000"], "argument --secure-port/--port: must be 0 to 65535, got 70000"),
    (["serve", "--secure-port", "-5"], "argument --secure-port/--port: must be 0 to 65535, got -5"),
    (["serve", "--health-port", "http"],
     "argument --health-port: expected a port number, got 'http'"),
])
def test_a_port_out_of_range_is_a_usage_error(argv, words, capsys):
    # uvicorn took 70000 and -5 to getaddrinfo ("Servname not supported"), and a bad
    # --health-port failed the app's start-up with a traceback in the log.
    with pytest.raises(SystemExit) as stopped:
        build_parser("serve").parse_args(argv)
    assert stopped.value.code == 2
    assert words in capsys.readouterr().err


@pytest.mark.parametrize(("flag", "value"), [
    ("--bind-deadline", "-1"), ("--max-staleness", "0"), ("--assume-ttl", "-0.5"),
    ("--scheduler-http-timeout", "-3"), ("--max-body-bytes", "-5"), ("--header-timeout", "0"),
])
def test_serve_refuses_a_limit_that_is_not_positive(flag, value):
    # These started a server that could never answer (a body limit of -5 bytes) or bind (a
    # deadline already past).
    from extender.serve import StartupError, build_runtime

    args = build_parser("serve").parse_args(["serve", flag, value])
    with pytest.raises(StartupError) as refused:
        build_runtime(args)
    assert str(refused.value) == f"{flag} must be positive, got {float(value):g}"


def test_a_snapshot_that_is_a_directory_is_named_so(tmp_path):
    from extender.serve import StartupError, build_runtime

    args = build_parser("serve").parse_args(["serve", "--snapshot", str(tmp_path)])
    with pytest.raises(StartupError) as refused:
        build_runtime(args)
    assert str(refused.value).startswith(f"snapshot {tmp_path} is a directory, not a file: ")
    missing = tmp_path / "cluster.json"
    args = build_parser("serve").parse_args(["serve", "--snapshot", str(missing)])
    with pytest.raises(StartupError, match=f"^snapshot {missing} not found: "):
        build_runtime(args)
