"""The shared real control plane of the `e2e` tests: built once (cached by `extender sandbox
build`), started once per test session with no nodes; each test brings its own nodes,
namespaces, kube-scheduler and extender (`realcluster.Scenario`) and removes them."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.realcluster import Kube, Scenario

#: Which Kubernetes release the e2e tests run (the newest that builds, by default).
VERSION_ENV = "EXTENDER_E2E_KUBERNETES_VERSION"
#: A directory: every scenario's extender records into <it>/<scenario>/ (`serve --record`);
#: `python -m tests.e2e.record` sets it and keeps the recordings as contract fixtures.
RECORD_ENV = "EXTENDER_E2E_RECORD"


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    if shutil.which("go") is None:
        pytest.skip("Go is not installed: the e2e tests build kube-apiserver, kube-scheduler, "
                    "kube-controller-manager and etcd from Go modules (install Go 1.26+)")
    try:
        import cryptography  # noqa: F401
    except ImportError:
        pytest.skip("the e2e tests need the 'cryptography' package (pip install -e '.[sandbox]')")
    from extender.sandbox.build import DEFAULT_VERSION, BuildError, build
    from extender.sandbox.controlplane import Sandbox

    try:
        # Progress to the real stderr: a cold build takes minutes, and CI's log should say why.
        built = build(os.environ.get(VERSION_ENV) or DEFAULT_VERSION,
                      progress=lambda line: print(line, file=sys.__stderr__, flush=True))
    except BuildError as exc:
        pytest.fail(f"extender sandbox build failed: {exc}")
    state = tmp_path_factory.mktemp("sandbox")
    box = Sandbox(Path(state), built, progress=lambda _: None)
    try:
        box.start_control_plane()
        box.start_agent([])
        yield box
    finally:
        box.down()


@pytest.fixture(scope="session")
def kube(sandbox) -> Iterator[Kube]:
    client = Kube(sandbox.kubeconfig)
    yield client
    client.close()


@pytest.fixture
def scenario(request: pytest.FixtureRequest, sandbox, kube: Kube) -> Iterator[Scenario]:
    name = request.node.name.removeprefix("test_").replace("_", "-")[:30].rstrip("-").lower()
    name = "".join(c if c.isalnum() or c == "-" else "-" for c in name)
    case = Scenario(sandbox, kube, name)
    root = os.environ.get(RECORD_ENV)
    if root:
        case.record_into(Path(root).resolve(), request.node.nodeid, sandbox.binaries)
    try:
        yield case
    finally:
        case.cleanup()
