"""Packaging: what the server needs (and the image installs) versus the optional extras, the
license, and the data files the package ships and finds from any working directory."""

from __future__ import annotations

import fnmatch
import hashlib
import json
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]
DATA = ROOT / "extender" / "data"
#: numpy is a server dependency (the node columns of the hot path); the plotting stack is not.
PLOTTING = {"matplotlib"}
# The SHA-256 of the Apache License 2.0 as apache.org publishes it (LICENSE-2.0.txt), which is
# also Debian's /usr/share/common-licenses/Apache-2.0.
APACHE_2_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"


def _name(requirement: str) -> str:
    """The distribution name of a PEP 508 requirement string."""
    for stop in "[<>=!~;( ":
        requirement = requirement.split(stop, 1)[0]
    return requirement.strip().lower().replace("_", "-")


def _run(*code: str, cwd: Path = ROOT, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the (separately dedented) code blocks in a fresh interpreter."""
    source = "\n".join(textwrap.dedent(block) for block in code)
    return subprocess.run([sys.executable, "-c", source], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


# --- dependencies ------------------------------------------------------------------------------

def test_the_server_dependencies_hold_no_plotting_stack() -> None:
    """The base dependencies are what the Dockerfile's image installs (no extras)."""
    base = {_name(r) for r in PROJECT["dependencies"]}
    assert base and not base & PLOTTING, base & PLOTTING
    assert {"starlette", "uvicorn", "msgspec", "pyyaml", "httpx"} <= base


def test_plotting_is_the_plot_extra_and_the_tests_pull_it_in() -> None:
    extras = PROJECT["optional-dependencies"]
    assert {_name(r) for r in extras["plot"]} == {"matplotlib"}
    assert f"{PROJECT['name']}[plot]" in extras["test"]


def test_serving_imports_no_plotting_module() -> None:
    """What `extender serve` and the CLI import at start-up leaves matplotlib unloaded."""
    result = _run("""
        import sys
        import extender.api.app, extender.serve
        from extender.cli import build_parser
        build_parser("serve").parse_args(["serve"])
        import extender.simulator.plot   # the plot module itself imports matplotlib lazily
        print(sorted(m for m in sys.modules if m.split(".")[0] == "matplotlib"))
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


_BLOCK_MATPLOTLIB = """
    import sys
    class _Missing:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "matplotlib":
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None
    sys.meta_path.insert(0, _Missing())
"""


def test_the_plot_without_matplotlib_names_the_extra() -> None:
    result = _run(_BLOCK_MATPLOTLIB, """
        from extender.simulator.plot import PlotUnavailable, plot_utilization, require_plotting
        for call in (require_plotting, lambda: plot_utilization({"nodes": []}, "x.png")):
            try:
                call()
            except PlotUnavailable as exc:
                print(exc)
            else:
                raise SystemExit("no error")
    """)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    for line in lines:
        assert "matplotlib" in line and "pip install -e '.[plot]'" in line


def test_simulate_plot_without_matplotlib_fails_with_the_install_hint(tmp_path: Path) -> None:
    examples = ROOT / "config" / "examples"
    argv = ["simulate", "--cluster", str(DATA / "cluster.json"),
            "--workload", str(examples / "workload.yaml"), "--policy", str(DATA / "policy.yaml"),
            "--plot", str(tmp_path / "plot.png")]
    result = _run(_BLOCK_MATPLOTLIB, f"""
        import sys
        from extender.cli import main
        sys.exit(main({argv!r}))
    """, cwd=tmp_path)
    # Refused before the run, with one readable line rather than a traceback after it.
    assert result.returncode == 2
    assert result.stderr.strip() == ("extender simulate: --plot: the PNG plot needs matplotlib, "
                                     "which is not installed: pip install -e '.[plot]'")
    assert "scheduled" not in result.stdout
    assert not (tmp_path / "plot.png").exists()


# --- license -----------------------------------------------------------------------------------

def test_the_license_file_is_the_apache_2_text() -> None:
    text = (ROOT / "LICENSE").read_bytes()
    assert hashlib.sha256(text).hexdigest() == APACHE_2_SHA256
    assert PROJECT["license"] == "Apache-2.0"
    assert PROJECT["license-files"] == ["LICENSE"]


# --- data files --------------------------------------------------------------------------------

def test_the_package_data_globs_ship_every_data_file() -> None:
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["extender.data"]
    files = [p.name for p in DATA.iterdir() if p.is_file() and p.suffix != ".py"]
    assert sorted(files) == ["cluster.json", "k8s_fields.json", "policy.yaml"]
    for name in files:
        assert any(fnmatch.fnmatch(name, pattern) for pattern in patterns), name


def test_config_links_to_the_packaged_files() -> None:
    """One copy: the repository's config/ paths are links to the package data."""
    for link, target in (("config/policy.yaml", "policy.yaml"),
                         ("config/examples/cluster.json", "cluster.json")):
        path = ROOT / link
        assert path.is_symlink() and path.resolve() == (DATA / target).resolve(), link


def test_serve_finds_its_defaults_from_any_working_directory(tmp_path: Path) -> None:
    """`extender serve` with no --policy and no cluster source, started outside the repository:
    the packaged policy and demo cluster (found with importlib.resources)."""
    result = _run("""
        import argparse, json
        from extender import serve
        parser = argparse.ArgumentParser()
        serve.add_arguments(parser)   # the flags of `extender serve`
        args = parser.parse_args([])
        policy, source = serve.resolve_policy(args.policy)
        runtime = serve.build_runtime(args)
        print(json.dumps({"policy": source, "state": runtime.source,
                          "nodes": len(runtime.state.nodes)}))
    """, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert Path(found["policy"]).resolve() == (DATA / "policy.yaml").resolve()
    assert found["state"] == f"snapshot {DATA / 'cluster.json'}"
    assert found["nodes"] == len([o for o in json.loads((DATA / "cluster.json").read_text())[
        "items"] if o["kind"] == "Node"])


def test_the_default_policy_is_kube_schedulers_defaults_spelled_out() -> None:
    from extender.data import default_policy
    from extender.engine.policy import load_policy

    assert default_policy() == DATA / "policy.yaml"
    load_policy(default_policy())  # parses and validates


@pytest.mark.parametrize("name", ["policy.yaml", "cluster.json"])
def test_data_files_are_reachable_through_importlib_resources(name: str) -> None:
    from importlib.resources import files

    assert files("extender.data").joinpath(name).is_file()
