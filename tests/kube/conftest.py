"""Fixtures for the kube tests: a fake API server per test and credentials for it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from extender.kube.config import ClusterConfig, load_kubeconfig
from tests.kube.fake_apiserver import FakeApiServer


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def apiserver() -> Iterator[FakeApiServer]:
    with FakeApiServer(bookmark_interval=0.2) as server:
        yield server


@pytest.fixture
def kube_config(apiserver: FakeApiServer, tmp_path: Path) -> ClusterConfig:
    return load_kubeconfig(apiserver.write_kubeconfig(tmp_path / "kubeconfig"))

