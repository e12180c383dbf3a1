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

from conformance.compare import (
    canonical,
    compared_kinds,
    differences,
    engine_answer,
    engine_plugins,
    what_was_exercised,
)
from conformance.generate import (
    CUSTOM_API,
    POD_GROUP_LABEL,
    case,
    custom_plugins,
    plugin_config,
    profile_plugins,
)

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


def _preemption(**changes: object) -> dict:
    victims = {"pods": ["default/low"], "pdbViolations": 0}
    answer = {"status": None, "node": "n1", "candidates": {"n1": victims},
              "nodeStatuses": {"n2": STATUS}, "pick": "n1"}
    answer.update(changes)
    return answer


def test_preemption_is_compared_part_by_part() -> None:
    mine = _answer(total={}, scores={}, preemption=_preemption())
    assert list(differences(mine, _answer(total={}, scores={}, preemption=_preemption()))) == []
    other = _preemption(node="n2", pick="n2",
                        candidates={"n2": {"pods": ["default/low"], "pdbViolations": 1}})
    found = dict(differences(mine, _answer(total={}, scores={}, preemption=other)))
    assert set(found) == {"preemption:node", "preemption:candidates", "preemption:pick"}
    assert found["preemption:pick"] == {"engine": "n1", "oracle": "n2"}
    assert [k for k, _ in differences(mine, _answer(total={}, scores={}, preemption=None))] \
        == ["preemption"]


def test_a_nomination_from_a_random_window_only_has_to_be_a_candidate() -> None:
    """Past 100 potential nodes each side's PostFilter looks at its own random window: the
    nominated node must be a candidate, not the same one."""
    many = {f"n{i}": {"pods": [f"default/p{i}"], "pdbViolations": 0} for i in range(101)}
    def answer(node: str) -> dict:
        return _answer(scores={}, total={}, preemption=_preemption(
            node=node, candidates=many, nodeStatuses={}, pick="n3"))
    mine, theirs, failed = answer("n3"), answer("n7"), answer("")
    assert list(differences(mine, theirs)) == []
    assert [k for k, _ in differences(mine, failed)] == ["preemption:node"]


def test_only_order_and_the_prefilter_label_are_forgiven() -> None:
    fit = {"plugin": "NodeResourcesFit", "code": "Unschedulable",
           "reasons": ["Insufficient cpu", "Insufficient hugepages-2Mi", "Insufficient a.io/x"]}
    assert canonical(fit) == canonical(dict(fit, reasons=[
        "Insufficient cpu", "Insufficient a.io/x", "Insufficient hugepages-2Mi"]))
    # cpu, memory and ephemeral-storage come in upstream's fixed order.
    assert canonical(fit) != canonical(dict(fit, reasons=[
        "Insufficient hugepages-2Mi", "Insufficient cpu", "Insufficient a.io/x"]))
    left_out = {"plugin": "NodeAffinity", "code": "UnschedulableAndUnresolvable",
                "reasons": ["node(s) didn't satisfy plugin(s) [NodeAffinity]"]}
    assert canonical(left_out) == dict(left_out, plugin="")
    assert canonical(STATUS) == STATUS


def test_the_engines_preemption_answer() -> None:
    """A full node, a low-priority pod guarded by a PDB and a lower one beside it: the pending
    pod (priority 1000) evicts both, the PDB-guarded one counted as a violation; the other
    node holds only a pod it may not evict."""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"}}}
    small = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"},
             "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"}}}

    def pod(name: str, priority: int, cpu: str, node_name: str | None, app: str) -> dict:
        spec: dict = {"priority": priority, "containers": [
            {"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}
        if node_name:
            spec["nodeName"] = node_name
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "default", "uid": name,
                             "labels": {"app": app}},
                "spec": spec, "status": {"startTime": "2026-01-01T00:00:00Z"}}
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
           "metadata": {"name": "guard", "namespace": "default"},
           "spec": {"selector": {"matchLabels": {"app": "db"}}},
           "status": {"disruptionsAllowed": 0}}
    objects = [node, small, pdb, pod("guarded", 10, "1", "n1", "db"),
               pod("cheap", 0, "1", "n1", "web"), pod("other", 2000, "1", "n2", "web")]
    answer = engine_answer(objects, pod("pending", 1000, "1500m", None, "web"), "1.37.2")
    assert answer["total"] == {}
    preemption = answer["preemption"]
    assert preemption["candidates"] == {
        "n1": {"pods": ["default/guarded", "default/cheap"], "pdbViolations": 1}}
    assert preemption["nodeStatuses"] == {"n2": {
        "plugin": "", "code": "UnschedulableAndUnresolvable",
        "reasons": ["No preemption victims found for incoming pod"]}}
    assert preemption["pick"] == preemption["node"] == "n1"
    assert preemption["status"] is None


def test_a_profiles_plugins_become_the_policys() -> None:
    plugins = {"preFilter": {"disabled": [{"name": "NodePorts"}]},
               "filter": {"disabled": [{"name": "NodePorts"}]},
               "preScore": {"disabled": [{"name": "ImageLocality"}]},
               "score": {"disabled": [{"name": "ImageLocality"}],
                         "enabled": [{"name": "TaintToleration", "weight": 5}]},
               "postFilter": {"disabled": [{"name": "DefaultPreemption"}]}}
    policy = engine_plugins(plugins)
    assert policy["filter"] == {"disabled": [{"name": "NodePorts"}]}
    assert policy["score"]["enabled"][0] == {"name": "TaintToleration", "weight": 5}
    assert "ImageLocality" not in {ref["name"] for ref in policy["score"]["enabled"]}
    assert policy["postFilter"] == {"disabled": [{"name": "DefaultPreemption"}]}
    # A weighted oracle score is divided by the profile's weight, not the default's.
    mine = _answer(scores={"TaintToleration": {"n1": 100}}, total={"n1": 500})
    theirs = _answer(scores={"TaintToleration": {"n1": 500}}, total={"n1": 500})
    assert list(differences(mine, theirs, plugins)) == []


def test_each_kind_compared_is_counted() -> None:
    mine = _answer(scores={"TaintToleration": {"n1": 100}, "ImageLocality": {}},
                   preemption=None)
    assert compared_kinds(mine, _answer(scores={"TaintToleration": {"n1": 300}})) == {
        "prefilter", "filter", "score:TaintToleration", "total"}  # an empty map scores nothing
    quota = _answer(total={}, scores={}, preemption=_preemption(candidates=None))
    assert compared_kinds(quota, quota) == {
        "prefilter", "filter", "preemption", "preemption:status", "preemption:node"}
    assert compared_kinds({"error": "x"}, _answer()) == {"error"}


def test_preemptions_parts_are_counted_only_where_both_sides_preempted() -> None:
    """One side alone preempting is a `preemption` difference and nothing more: its status,
    node and dry run were never compared, so they are not counted as agreeing."""
    alone = _answer(total={}, scores={}, preemption=_preemption())
    neither = _answer(total={}, scores={}, preemption=None)
    assert [k for k, _ in differences(neither, alone)] == ["preemption"]
    assert compared_kinds(neither, alone) == compared_kinds(alone, neither) == {
        "prefilter", "filter", "preemption"}
    # Both preempted, one with DefaultPreemption's dry run: every part is compared.
    other = _answer(total={}, scores={}, preemption=_preemption(candidates=None))
    assert compared_kinds(other, alone) == {
        "prefilter", "filter", "preemption", "preemption:status", "preemption:node",
        "preemption:candidates", "preemption:nodeStatuses", "preemption:pick"}


def test_what_a_case_reached_is_counted() -> None:
    reached = what_was_exercised(_answer(prefilter=STATUS, total={}, preemption=_preemption(
        candidates={"n1": {"pods": ["a/b"], "pdbViolations": 1},
                    "n2": {"pods": ["a/c"], "pdbViolations": 0}})))
    assert reached == {"prefilter-rejected", "preemption", "victims", "several-candidates",
                       "pdb-violations", "nominated"}


def test_scheduler_plugins_parts_reached_are_counted() -> None:
    quota_profile = {"postFilter": {"enabled": [{"name": "CapacityScheduling"}]}}
    rejected = {**STATUS, "plugin": "Coscheduling"}
    reached = what_was_exercised(_answer(prefilter=rejected, total={}, preemption=_preemption(
        candidates=None)), quota_profile)
    assert reached == {"rejected by Coscheduling", "prefilter-rejected", "preemption",
                       "nominated", "by CapacityScheduling"}
    assert "by PreemptionToleration" in what_was_exercised(
        _answer(total={}, preemption=_preemption(candidates=None)))


def test_custom_plugins_keep_what_the_profile_disabled_and_bring_their_objects() -> None:
    """A PreFilter plugin added beside the profile's disabled ones (the engine's policy
    lists the defaults left, then it), with its objects: a PodGroup the pending pod joins,
    ElasticQuotas."""
    drawn = []
    for seed in range(40):
        rng = random.Random(seed)
        objects, pod = case(rng)
        disabled = {"preFilter": {"disabled": [{"name": "NodeAffinity"}]},
                    "filter": {"disabled": [{"name": "NodeAffinity"}]}}
        plugins, _, added = custom_plugins(rng, disabled, objects, pod)
        enabled = [ref["name"] for ref in plugins.get("preFilter", {}).get("enabled", [])]
        assert plugins["preFilter"]["disabled"] == [{"name": "NodeAffinity"}]
        kinds = {o["kind"] for o in added if o["apiVersion"] == CUSTOM_API}
        assert ("Coscheduling" in enabled) == (POD_GROUP_LABEL in pod["metadata"]["labels"])
        # (a case may draw CapacityScheduling and no namespace's quota)
        assert "ElasticQuota" not in kinds or "CapacityScheduling" in enabled
        if enabled:
            names = [ref["name"] for ref in engine_plugins(plugins)["filter"]["enabled"]]
            assert "NodeAffinity" not in names and names[-len(enabled):] == enabled
        drawn += enabled
    assert {"Coscheduling", "CapacityScheduling"} <= set(drawn)


def test_generated_clusters_are_ones_a_cluster_could_hold() -> None:
    """Every bound pod starts at its own second (upstream's last tie-break is Go map order)
    and no two pods on a node share a host port (the kubelet would not run both)."""
    kinds: set[str] = set()
    for seed in range(60):
        objects, pod = case(random.Random(seed))
        kinds |= {o["kind"] for o in objects}
        bound = [o for o in objects if o["kind"] == "Pod" and o["spec"].get("nodeName")]
        starts = [o["status"]["startTime"] for o in bound]
        assert len(starts) == len(set(starts))
        ports = [(o["spec"]["nodeName"], p["hostPort"]) for o in bound
                 for c in o["spec"]["containers"] + o["spec"].get("initContainers", [])
                 for p in c.get("ports", [])]
        assert len(ports) == len(set(ports))
    assert kinds == {"Namespace", "Node", "Pod", "PodDisruptionBudget"}
    profiles = [profile_plugins(random.Random(seed)) for seed in range(100)]
    assert profiles == [profile_plugins(random.Random(seed)) for seed in range(100)]
    assert {point for p in profiles for point in p} == {
        "preFilter", "filter", "preScore", "score", "postFilter"}


@pytest.mark.slow
@pytest.mark.parametrize(("version", "cases"), [
    ("1.37.2", 2000), ("1.36.3", 500), ("1.35.4", 500), ("1.34.4", 500)])
def test_the_engine_agrees_with_kube_schedulers_plugins(tmp_path: Path, version: str,
                                                        cases: int) -> None:
    """A fixed-seed sample per release: the newest's 2000 cases, 500 for each older one (the
    engine set to the release's minor with `kubernetesVersion`), with plugin arguments and
    profiles drawn; preemption among them."""
    if shutil.which("go") is None:
        pytest.skip("Go is not installed: the oracle is built from the k8s.io/kubernetes Go "
                    "module (install Go 1.26+)")
    out = tmp_path / "disagreements"
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "--cases", str(cases), "--seed", "2026",
         "--max-nodes", "16", "--plugin-config", "--profiles", "--kubernetes-version", version,
         "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=3600, check=False)
    lines = done.stdout.strip().splitlines()
    assert lines and lines[-1] == f"conformance: {cases}/{cases} cases agree", \
        done.stdout + done.stderr[-3000:]
    assert lines[0].startswith(f"kube-scheduler {version}: {cases} cases in ")
    reached = dict(part.rsplit(" ", 1) for part in
                   lines[1].removeprefix("  exercised: ").split(", "))
    # The sample reaches every part compared: preemption with victims, a choice among
    # candidates, PDB violations and a nomination among them.
    assert all(int(count) > 0 for count in reached.values()), lines[1]
    assert done.returncode == 0 and not out.exists()


@pytest.mark.slow
def test_scheduler_plugins_agree_with_their_own_code(tmp_path: Path) -> None:
    """scheduler-plugins' NodeResourcesAllocatable, PodState, PreemptionToleration,
    CapacityScheduling, Coscheduling's PreFilter, NodeResourceTopologyMatch, NetworkOverhead
    and the three Trimaran scorers, built from their v0.34.7 module into kube-scheduler 1.34's
    registry (CapacityScheduling to NetworkOverhead reading ElasticQuotas, PodGroups,
    NodeResourceTopologies, AppGroups and NetworkTopologies from the oracle's own API, the
    Trimaran scorers their node metrics from it as a load-watcher), and the QueueSorts of
    Coscheduling, TopologicalSort and QOSSort on pairs of queued pods, on 300 cases (four oracle processes at once,
    the default here: each of those plugins mostly waits for its informers)."""
    if shutil.which("go") is None:
        pytest.skip("Go is not installed: the oracle is built from the k8s.io/kubernetes and "
                    "sigs.k8s.io/scheduler-plugins Go modules (install Go 1.26+)")
    out = tmp_path / "disagreements"
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "--cases", "300", "--seed", "2026",
         "--scheduler-plugins", "--plugin-config", "--profiles", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=3600, check=False)
    lines = done.stdout.strip().splitlines()
    assert lines and lines[-1] == "conformance: 300/300 cases agree", \
        done.stdout + done.stderr[-3000:]
    assert lines[0].startswith("kube-scheduler 1.34.")
    assert "with scheduler-plugins v0.34.7" in lines[0]
    reached = dict(part.rsplit(" ", 1) for part in
                   lines[1].removeprefix("  exercised: ").split(", "))
    for part in ("by PreemptionToleration", "scored by NodeResourcesAllocatable",
                 "scored by PodState", "by CapacityScheduling", "rejected by Coscheduling",
                 "rejected by CapacityScheduling", "scored by NodeResourceTopologyMatch",
                 "filtered by NodeResourceTopologyMatch", "scored by NetworkOverhead",
                 "filtered by NetworkOverhead", "scored by TargetLoadPacking",
                 "scored by LoadVariationRiskBalancing", "scored by LowRiskOverCommitment",
                 "queue-sorted by Coscheduling", "queue-sorted by TopologicalSort",
                 "queue-sorted by QOSSort"):
        assert int(reached[part]) > 0, lines[1]
    assert done.returncode == 0 and not out.exists()


@pytest.mark.slow
def test_a_wrong_preemption_choice_is_caught() -> None:
    """The engine made to weigh upstream's candidate criteria in reverse order: the oracle's
    pick and nomination tell it apart."""
    if shutil.which("go") is None:
        pytest.skip("Go is not installed: the oracle is built from the k8s.io/kubernetes Go "
                    "module (install Go 1.26+)")
    script = ("import sys; from extender.engine.preemption import pick; "
              "criteria = pick._criteria; "
              "pick._criteria = lambda now: tuple(reversed(criteria(now))); "
              "from conformance.__main__ import main; sys.exit(main(sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-c", script, "--cases", "400", "--seed", "2",
                           "--no-minimise"],
                          cwd=ROOT, capture_output=True, text=True, timeout=1800, check=False)
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    lines = dict(line.strip().split(": ", 1) for line in done.stdout.splitlines()
                 if line.startswith("  ") and line.endswith(" agree"))
    for kind in ("preemption:pick", "preemption:node"):
        agreed, seen = map(int, lines[kind].removesuffix(" agree").split("/"))
        assert agreed < seen, lines[kind]
    # Only what the change touches disagrees.
    assert lines["filter"] == "400/400 agree"
    agreed, seen = map(int, lines["preemption:candidates"].removesuffix(" agree").split("/"))
    assert agreed == seen > 0


@pytest.mark.slow
def test_a_disagreement_is_written_and_replays(tmp_path: Path) -> None:
    """The engine made to score BalancedAllocation as before v1.36 (what it did until the
    oracle showed otherwise): the cases where it matters are written, shrunk, and replay; with
    two oracle processes, so the cases in flight finish in order beside the shrinking."""
    if shutil.which("go") is None:
        pytest.skip("Go is not installed: the oracle is built from the k8s.io/kubernetes Go "
                    "module (install Go 1.26+)")
    script = ("import sys; from extender.engine.scores import balanced_allocation as b; "
              "b.EFFECT_SINCE = (1, 99); from conformance.__main__ import main; "
              "sys.exit(main(sys.argv[1:]))")
    out = tmp_path / "disagreements"
    done = subprocess.run([sys.executable, "-c", script, "--cases", "40", "--seed", "3",
                           "--jobs", "2", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=1800, check=False)
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    assert "score:NodeResourcesBalancedAllocation:" in done.stdout
    written = sorted(out.glob("case-3-*.json"))
    assert written
    case_file = json.loads(written[0].read_text())
    # What it ran against, so that --replay alone runs it against the same.
    assert case_file["flavour"] == "in-tree"
    assert done.stdout.startswith(f"kube-scheduler {case_file['kubernetes']}:"), done.stdout
    kinds = {d["kind"] for d in case_file["differences"]}
    assert "score:NodeResourcesBalancedAllocation" in kinds
    # Shrunk to what the disagreement needs: one node (and, in some, a pod on it that tilts
    # its balance), and a pod with only its containers and priority.
    shrunk = [json.loads(path.read_text()) for path in written]
    assert all([o["kind"] for o in c["objects"]][0] == "Node"
               and {o["kind"] for o in c["objects"][1:]} <= {"Pod"} for c in shrunk)
    assert sum(len(c["objects"]) == 1 for c in shrunk) > len(shrunk) // 2
    assert {tuple(c["pod"]["spec"]) for c in shrunk} == {("containers", "priority")}
    # Each written case named with its kinds, after the summary and before the last line.
    listed = done.stdout.strip().splitlines()
    listed = listed[listed.index(f"disagreements written to {out}") + 1:-1]
    assert sorted(line.split(":", 1)[0].strip() for line in listed) == sorted(
        path.name for path in written)
    # The same case with the engine as it is: it agrees now.
    again = subprocess.run([sys.executable, "-m", "conformance", "--replay", str(written[0])],
                           cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert again.stdout.strip().splitlines()[-1] == "conformance: 1/1 cases agree", again.stdout


@pytest.mark.slow
def test_a_case_written_with_another_engine_disagrees_again_on_replay(tmp_path: Path) -> None:
    """kube-scheduler 1.36.3's plugins against the engine at 1.35 (BalancedAllocation's older
    formula): the case written replays against both again, from its file alone, and is
    written again under its own seed and index."""
    if shutil.which("go") is None:
        pytest.skip("Go is not installed: the oracle is built from the k8s.io/kubernetes Go "
                    "module (install Go 1.26+)")
    out, again = tmp_path / "first", tmp_path / "again"
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "--cases", "3", "--seed", "9",
         "--kubernetes-version", "1.36.3", "--engine-version", "1.35", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    assert sorted(path.name for path in out.iterdir()) == ["case-9-2.json"]
    replayed = subprocess.run(
        [sys.executable, "-m", "conformance", "--replay", str(out / "case-9-2.json"), "--out",
         str(again)], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    lines = replayed.stdout.strip().splitlines()
    assert lines[0].startswith("kube-scheduler 1.36.3 (the engine at 1.35): 1 cases in ")
    assert lines[-3:] == [f"disagreements written to {again}",
                          "  case-9-2.json: score:NodeResourcesBalancedAllocation, total",
                          "conformance: 0/1 cases agree"]
    written = json.loads((again / "case-9-2.json").read_text())
    assert (written["seed"], written["index"], written["engine"]) == (9, 2, "1.35")
