"""Files shipped inside the package, found from any working directory.

`policy.yaml` is the default ExtenderPolicy (kube-scheduler's default plugins, spelled out) and
`cluster.json` the demo cluster snapshot: what `extender serve` uses when given no `--policy`
and no cluster source. The repository's `config/policy.yaml` and `config/examples/cluster.json`
are links to these files. `k8s_fields.json` holds the Kubernetes schema's field names of the
kinds the simulator and the snapshot read (`extender.state.fieldcheck`; written by
`tools/gen_k8s_fields.py`).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

DEFAULT_POLICY_NAME = "policy.yaml"
DEMO_SNAPSHOT_NAME = "cluster.json"


def data_file(name: str) -> Path:
    """Path of a file shipped in `extender/data/` (installed as a plain directory, not zipped)."""
    return Path(str(files(__name__).joinpath(name)))


def default_policy() -> Path:
    return data_file(DEFAULT_POLICY_NAME)


def demo_snapshot() -> Path:
    return data_file(DEMO_SNAPSHOT_NAME)
