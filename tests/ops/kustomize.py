"""Render manifests/ with the real kustomize, as `kubectl apply -k` does: `kubectl kustomize`.

Tests that render skip, naming the package, where kubectl is not installed. `render` takes a
directory of manifests/ (an overlay, the base, an alias); `compose` writes a throw-away
kustomization that lists the base and components in the order given, as a user's own overlay
would, and renders that.
"""

from __future__ import annotations

import copy
import functools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = ROOT / "manifests"
KUBECTL = shutil.which("kubectl")
SKIP_REASON = ("kubectl is not installed (Debian package `kubectl`): `kubectl kustomize` "
               "renders manifests/")

#: The images components/images sets for every overlay (tests/ops check each agrees).
EXTENDER_IMAGE = "scheduler-extender:0.1.0"
KUBE_SCHEDULER_IMAGE = "registry.k8s.io/kube-scheduler:v1.34.2"


class RenderError(Exception):
    pass


def _kustomize(directory: Path) -> str:
    if KUBECTL is None:
        pytest.skip(SKIP_REASON)
    result = subprocess.run([KUBECTL, "kustomize", str(directory)], capture_output=True,
                            text=True, timeout=120)
    if result.returncode != 0:
        raise RenderError(f"kubectl kustomize {directory}: {result.stderr.strip()}")
    return result.stdout


@functools.cache
def _render(directory: str) -> tuple[dict[str, Any], ...]:
    return tuple(d for d in yaml.safe_load_all(_kustomize(Path(directory))) if d)


def render(directory: Path | str) -> list[dict[str, Any]]:
    """The documents `kubectl kustomize DIRECTORY` prints (a fresh copy, safe to modify)."""
    path = Path(directory)
    if not path.is_absolute():
        path = MANIFESTS / path
    return copy.deepcopy(list(_render(str(path.resolve()))))


@functools.cache
def _compose(resources: tuple[str, ...], components: tuple[str, ...],
             extra: str) -> tuple[dict[str, Any], ...]:
    with tempfile.TemporaryDirectory(prefix="kustomize-") as tmp:
        # kustomize takes only relative paths to other kustomizations.
        up = Path(os.path.relpath(MANIFESTS, tmp))
        kustomization = {
            "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
            "resources": [str(up / r) for r in resources],
            "components": [str(up / c) for c in components],
        }
        text = yaml.safe_dump(kustomization, sort_keys=False) + extra
        (Path(tmp) / "kustomization.yaml").write_text(text)
        return tuple(d for d in yaml.safe_load_all(_kustomize(Path(tmp))) if d)


def compose(*components: str, resources: tuple[str, ...] = ("base",),
            extra: str = "") -> list[dict[str, Any]]:
    """Render `resources` (paths under manifests/) with `components` (names under
    manifests/components/), in that order; `extra` is appended to the kustomization."""
    return copy.deepcopy(list(_compose(tuple(resources),
                                       tuple(f"components/{c}" for c in components), extra)))
