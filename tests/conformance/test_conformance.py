"""`python -m conformance`: the engine against kube-scheduler's own plugins (the oracle, built
from Go modules), on generated cases; and the comparison itself, which needs no Go."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.compare import differences
from conformance.generate import case, plugin_config

ROOT = Path(__file__).resolve().parents[2]
STATUS = {"plugin": "TaintToleration", "code": "UnschedulableAndUnresolvable",
          "reasons": ["node(s) had untolerated taint(s)"]}


def _answer(**changes: object) -> dict:
    answer = {"prefilter": None, "filter": {"n1": None, "n2": STATUS},
              "scores": {"TaintToleration": {"n1": 100}, "ImageLocality": {"n1": 7}},
              "total": {"n1": 307}}
    answer.update(changes)
    return answer


def test_weighted_oracle_scores_are_compared_after_the_weight() -> None:
    oracle = _answer(scores={"TaintToleration": {"n1": 300}, "ImageLocality": {"n1": 7}})
    assert list(differences(_answer(), oracle)) == []


def test_every_kind_of_difference_is_named() -> None:
    oracle = _answer(filter={"n1": None, "n2": dict(STATUS, reasons=["other"])},
                     scores={"TaintToleration": {"n1": 297}, "ImageLocality": {"n1": 7}},
                     total={"n1": 306})
    assert [kind for kind, _ in differences(_answer(), oracle)] == [
        "filter", "score:TaintToleration", "total"]
    assert [kind for kind, _ in differences(_answer(), {"error": "framework: bad"})] == ["error"]


def test_cases_replay_from_their_seed() -> None:
    first = [case(random.Random(5)) for _ in range(3)]
    assert first == [case(random.Random(5)) for _ in range(3)]
    configs = [plugin_config(random.Random(seed)) for seed in range(40)]
    assert configs == [plugin_config(random.Random(seed)) for seed in range(40)]
    named = {entry["name"] for config in configs for entry in config}
    assert named == {"NodeResourcesFit", "NodeResourcesBalancedAllocation", "PodTopologySpread",
                     "InterPodAffinity", "NodeAffinity"}
    objects, pod = first[0]
    assert pod["metadata"]["name"] == "pending"
    assert {o["kind"] for o in objects} >= {"Namespace", "Node"}


@pytest.mark.slow
@pytest.mark.parametrize(("version", "cases"), [
    ("1.37.2", 2000), ("1.36.3", 500), ("1.35.4", 500), ("1.34.4", 500)])
def test_the_engine_agrees_with_kube_schedulers_plugins(tmp_path: Path, version: str,
                                                        cases: int) -> None:
    """A fixed-seed sample per release: the newest's 2000 cases, 500 for each older one (the
    engine set to the release's minor with `kubernetesVersion`), with plugin arguments drawn."""
    if shutil.which("go") is None:
        pytest.skip("Go is not installed: the oracle is built from the k8s.io/kubernetes Go "
                    "module (install Go 1.26+)")
    out = tmp_path / "disagreements"
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "--cases", str(cases), "--seed", "2026",
         "--max-nodes", "16", "--plugin-config", "--kubernetes-version", version,
         "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=3600, check=False)
    lines = done.stdout.strip().splitlines()
    assert lines and lines[-1] == f"conformance: {cases}/{cases} cases agree", \
        done.stdout + done.stderr[-3000:]
    assert lines[0].startswith(f"kube-scheduler {version}: {cases} cases in ")
    assert done.returncode == 0 and not out.exists()


@pytest.mark.slow
def test_a_disagreement_is_written_and_replays(tmp_path: Path) -> None:
    """The engine made to score BalancedAllocation as before v1.36 (what it did until the
    oracle showed otherwise): the cases where it matters are written, shrunk, and replay."""
    if shutil.which("go") is None:
        pytest.skip("Go is not installed: the oracle is built from the k8s.io/kubernetes Go "
                    "module (install Go 1.26+)")
    script = ("import sys; from extender.engine.scores import balanced_allocation as b; "
              "b.EFFECT_SINCE = (1, 99); from conformance.__main__ import main; "
              "sys.exit(main(sys.argv[1:]))")
    out = tmp_path / "disagreements"
    done = subprocess.run([sys.executable, "-c", script, "--cases", "40", "--seed", "3",
                           "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=1800, check=False)
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    assert "score:NodeResourcesBalancedAllocation:" in done.stdout
    written = sorted(out.glob("case-3-*.json"))
    assert written
    case_file = json.loads(written[0].read_text())
    kinds = {d["kind"] for d in case_file["differences"]}
    assert "score:NodeResourcesBalancedAllocation" in kinds
    # Shrunk to what the disagreement needs: one node, nothing else, a pod with its containers.
    assert [o["kind"] for o in case_file["objects"]] == ["Node"]
    assert list(case_file["pod"]["spec"]) == ["containers"]
    # The same case with the engine as it is: it agrees now.
    again = subprocess.run([sys.executable, "-m", "conformance", "--replay", str(written[0])],
                           cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert again.stdout.strip().splitlines()[-1] == "conformance: 1/1 cases agree", again.stdout
