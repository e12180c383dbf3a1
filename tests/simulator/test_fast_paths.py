"""The simulator's fast paths (`SimulationConfig.fast_paths`) never change an outcome.

Each scenario is a small saturated cluster (bench.simulate's `--saturated` generator: every
node full of priority-0 batch pods, node agents critical) with a workload of priorities 1000,
100 and 0, so most pods fail a first attempt, many preempt and many give up pending. It runs
with the fast paths off (every node judged on every attempt by the engine, as before they
existed), on, and in "verify" mode (both, compared at every reuse); the whole report — every
pod's status, node, nomination, attempts, message, preemptor and victims — and the event log
(every attempt with its rejection counts, every queue move, nomination and eviction) must be
the same bytes.
"""

from __future__ import annotations

import importlib.util
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from extender.engine import rows
from extender.engine.policy import parse_policy
from extender.engine.preemption.plugins import DefaultPreemption
from extender.engine.preemption.victims import Victims
from extender.engine.profile import build_profile
from extender.model import k8s
from extender.model.pod import PodView
from extender.simulator import filterpass
from extender.simulator.changes import NodeChanges
from extender.simulator.clock import VirtualClock
from extender.simulator.eventlog import EventLog
from extender.simulator.events import NODE_ADD
from extender.simulator.loop import Simulation, SimulationConfig, SimulationResult
from extender.simulator.nominator import Nominator
from extender.simulator.podmemo import PodMemo
from extender.simulator.queue import PriorityQueue
from extender.simulator.report import build_report, dumps
from extender.simulator.reservations import Reservations
from extender.simulator.victimsums import VictimSums
from extender.simulator.workload import load_workload
from extender.state.snapshot import load_snapshot

from .helpers import DEFAULTS, node, pod
from .test_queue import FakePod

ROOT = Path(__file__).resolve().parents[2]
SECOND = 10**9


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("bench_simulate", ROOT / "bench" / "simulate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _bench()


def _saturated(nodes: int, pods: int, seed: int, *, load: float = 0.6,
               prefill: float = 0.9) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    cluster = bench.make_cluster(nodes, seed, prefill)
    budget = int(load * bench.cluster_cpu_m(cluster))
    return cluster["items"], bench.make_workload(pods, seed, budget)["items"]


def _run(tmp_path: Path, cluster: list[dict[str, Any]], workload: list[dict[str, Any]],
         policy: dict[str, Any], fast: str, **config: Any) -> tuple[str, str, SimulationResult]:
    """(report JSON, event log, result) of one run."""
    folder = tmp_path / fast
    folder.mkdir(exist_ok=True)
    for name, items in (("cluster", cluster), ("workload", workload)):
        (folder / f"{name}.json").write_text(json.dumps({"kind": "List", "items": items}))
    profile = build_profile(parse_policy(policy))
    log = io.StringIO()
    sim = Simulation(load_snapshot(folder / "cluster.json"), profile,
                     load_workload(folder / "workload.json"),
                     SimulationConfig(fast_paths=fast, **config),  # type: ignore[arg-type]
                     events=EventLog(log))
    result = sim.run()
    return dumps(build_report(result, profile)), log.getvalue(), result


def _pdbs(count: int) -> list[dict[str, Any]]:
    """Budgets over some batch apps: one allows a disruption, the others none."""
    return [{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
             "metadata": {"name": f"batch{i}", "namespace": "bench"},
             "spec": {"selector": {"matchLabels": {"app": f"batch{i}"}}},
             "status": {"disruptionsAllowed": 1 if i == 0 else 0}} for i in range(count)]


def _node_events() -> list[dict[str, Any]]:
    added = node("node-extra", "8", "32Gi",
                 labels={"topology.kubernetes.io/zone": "zone-b",
                         "topology.kubernetes.io/region": "bench"})
    return [
        {"kind": "SimulationEvent", "at": "2s", "cordonNode": "node-00003"},
        {"kind": "SimulationEvent", "at": "3s", "deletePod": "bench/batch4-4n0"},
        {"kind": "SimulationEvent", "at": "20s", "uncordonNode": "node-00003"},
        {"kind": "SimulationEvent", "at": "45s", "addNode": added},
        {"kind": "SimulationEvent", "at": "70s", "deleteNode": "node-00007"},
    ]


def _host_ports(workload: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every seventh pod asks for a host port (NodePorts joins Fit among the checks)."""
    for i, obj in enumerate(workload):
        if i % 7 == 0:
            obj["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    return workload


TOLERATION: dict[str, Any] = {
    "apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
    "plugins": {"postFilter": {"enabled": [{"name": "PreemptionToleration"}]}},
}

Items = list[dict[str, Any]]
#: () -> (cluster, workload, policy, SimulationConfig fields)
Scenario = Callable[[], tuple[Items, Items, dict[str, Any], dict[str, Any]]]


def _with_node_events() -> tuple[Items, Items, dict[str, Any], dict[str, Any]]:
    cluster, workload = _saturated(30, 200, 11)
    return cluster, workload + _node_events(), DEFAULTS, {}


def _with_budgets_and_ports() -> tuple[Items, Items, dict[str, Any], dict[str, Any]]:
    cluster, workload = _saturated(30, 200, 5)
    return cluster + _pdbs(6), _host_ports(workload), DEFAULTS, {}


SCENARIOS: dict[str, Scenario] = {
    "saturated": lambda: (*_saturated(40, 260, 7), DEFAULTS, {}),
    "short grace, other seed": lambda: (*_saturated(30, 220, 3, load=1.0, prefill=0.8),
                                        DEFAULTS, {"victim_grace_period": 2 * SECOND}),
    "node events": _with_node_events,
    "budgets and host ports": _with_budgets_and_ports,
    "adaptive search": lambda: (*_saturated(120, 260, 13, load=0.3), DEFAULTS,
                                {"percentage_of_nodes_to_score": 0}),
    "PreemptionToleration": lambda: (*_saturated(30, 200, 17), TOLERATION, {}),
}


#: Scenarios whose retries judge even a single changed node on table rows, and word even a
#: single failing row with `explain_rows` (the bench's cluster sizes do so from 16).
ROWS_ALWAYS = {"node events", "budgets and host ports", "adaptive search"}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_fast_paths_keep_every_outcome(tmp_path: Path, name: str,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    cluster, workload, policy, config = SCENARIOS[name]()
    if name in ROWS_ALWAYS:
        monkeypatch.setattr(filterpass, "ROWS_FROM", 1)
        monkeypatch.setattr(rows, "EXPLAIN_FROM", 1)
    dry_runs = {"off": 0, "on": 0, "verify": 0}
    sums = {"off": 0, "on": 0, "verify": 0}
    copies = {"off": 0, "on": 0, "verify": 0}
    engine_post_filter = DefaultPreemption.post_filter
    sums_select = VictimSums.select
    judged_copies = Reservations.judge
    fast = "off"

    def counting(self: DefaultPreemption, *args: Any, **kwargs: Any) -> Any:
        dry_runs[fast] += 1
        return engine_post_filter(self, *args, **kwargs)

    def counting_sums(self: VictimSums, *args: Any, **kwargs: Any) -> Any:
        answer = sums_select(self, *args, **kwargs)
        sums[fast] += isinstance(answer, Victims)
        return answer

    def counting_copies(self: Reservations, *args: Any, **kwargs: Any) -> None:
        before = sum(len(entry[2]) for entry in self._copies.values())
        judged_copies(self, *args, **kwargs)
        # Verdicts taken from a copy's memo are not new entries: count the misses.
        copies[fast] += sum(len(entry[2]) for entry in self._copies.values()) - before

    monkeypatch.setattr(DefaultPreemption, "post_filter", counting)
    monkeypatch.setattr(VictimSums, "select", counting_sums)
    monkeypatch.setattr(Reservations, "judge", counting_copies)
    report, events, result = _run(tmp_path, cluster, workload, policy, "off", **config)
    fast = "on"
    assert _run(tmp_path, cluster, workload, policy, "on", **config)[:2] == (report, events)
    fast = "verify"  # raises AssertionError wherever a fast path differs from the full one
    assert _run(tmp_path, cluster, workload, policy, "verify", **config)[:2] == (report, events)

    totals = json.loads(report)["totals"]
    assert totals["preemptions"] > 0 and totals["pending"] > 0
    assert totals["attempts"] > 1.5 * totals["pods"]  # most pods failed a first attempt
    assert not result.truncated
    if name != "PreemptionToleration":  # its victims' tolerance reads the clock: no skipping
        assert dry_runs["on"] < dry_runs["off"] / 2
        # Dry runs with candidates ran here, their victims over sums.
        assert sums["on"] > 0 and sums["off"] == 0
    assert copies["on"] > 0  # nominated pods' copies judged, and kept


def test_node_changes_since_a_stamp() -> None:
    changes = NodeChanges()
    start = changes.stamp
    changes.node("a")
    changes.node("b")
    middle = changes.stamp
    changes.node("a")
    assert changes.since(start) == {"a", "b"}
    assert changes.since(middle) == {"a"}
    assert changes.since(changes.stamp) == set()
    assert changes.last_change("a") == changes.stamp and changes.last_change("c") == 0
    changes.everything()
    assert changes.since(middle) is None and changes.since(changes.stamp) == set()
    assert changes.last_change("c") == changes.stamp


def test_node_changes_older_than_the_node_set() -> None:
    changes = NodeChanges()
    start = changes.stamp
    for _ in range(5):
        changes.node("a")
        changes.node("b")
    assert changes.since(start) == {"a", "b"}  # ten entries, two nodes: the per-node path


def test_watched_memos_lose_the_changed_nodes_entries() -> None:
    changes = NodeChanges()
    memo: dict[str, Any] = {"a": 1, "b": 2}
    changes.watch(memo)
    changes.node("a")
    assert memo == {"b": 2}
    changes.node("c")  # not in the memo: nothing to drop
    memo["a"] = 3
    changes.everything()
    assert memo == {}


def test_nominator_reports_the_nodes_whose_nominations_change() -> None:
    touched: list[str] = []
    nominator = Nominator(on_change=touched.append)
    first = FakePod("p", 10)
    nominator.add(first, "n1")
    assert touched == ["n1"]
    nominator.add(first)  # ModeNoop: the pod carries no nominatedNodeName, so it is cleared
    assert touched == ["n1", "n1"]
    nominator.add(first, "n1")
    nominator.add(first, "n1")  # the same pod again on the same node: only the order moves
    assert touched == ["n1"] * 3
    moved = FakePod("p", 20)  # an updated copy (another priority): the node's verdicts change
    nominator.update(first, moved)
    assert touched == ["n1"] * 4
    nominator.add(moved, "n2")
    assert sorted(touched[4:]) == ["n1", "n2"]
    nominator.delete(moved)
    assert touched[-1] == "n2"
    nominator.delete(moved)  # not nominated any more: nothing changes
    assert len(touched) == 7


def _view(name: str, cpu: str = "1") -> PodView:
    return PodView.from_k8s(k8s.convert(pod(name, cpu), k8s.Pod))


def test_pod_memo_shares_between_replicas_but_not_with_nominated_pods() -> None:
    memo: PodMemo[str] = PodMemo()
    one, two, bigger = _view("web-1"), _view("web-2"), _view("web-3", "2")
    memo.put(one, False, 5, "verdicts of web-1")
    assert memo.get(two, False).value == "verdicts of web-1"  # type: ignore[union-attr]
    assert memo.get(bigger, False) is None  # another request: another shape
    assert memo.get(two, True) is None  # nominated: its verdicts leave its own room out
    memo.put(two, True, 6, "verdicts of web-2, nominated")
    assert memo.get(two, True).value == "verdicts of web-2, nominated"  # type: ignore[union-attr]
    assert memo.get(_view("web-4"), False).value == "verdicts of web-1"  # type: ignore[union-attr]
    memo.put(_view("web-5"), False, 7, "newer")
    assert memo.get(one, False).value == "newer"  # type: ignore[union-attr]  # the freshest
    memo.forget(one.uid)
    assert memo.get(one, False).value == "newer"  # type: ignore[union-attr]  # the shape's stays


def test_pool_is_walked_oldest_first() -> None:
    """`unschedulable_by_age` (the settle check stops at the first stale pod) is in queue
    timestamp order whatever went in and out of the pool."""
    clock = VirtualClock()
    queue = PriorityQueue(clock, plugins=["NodeResourcesFit"])
    for i in range(8):
        queue.add(FakePod(f"p{i}", i % 3))
    for step in range(30):
        clock.advance_to(clock.now() + SECOND)
        info = queue.pop()
        if info is not None:
            info.unschedulable_plugins = {"NodeResourcesFit"}
            queue.add_unschedulable_if_not_present(info, queue.scheduling_cycle)
        if step % 7 == 3:
            queue.move_all_to_active_or_backoff(NODE_ADD)
        queue.flush_backoff_completed()
        ages = [info.timestamp for info in queue.unschedulable_by_age()]
        assert ages == sorted(ages)
