"""The preempt verb's vectorised path (`preemption/batch.py` on `preemption/columns.py`).

Random clusters and proposals go through `process_preemption` three ways: on the columns (the
default), with the per-node fast path only (`columns=False`) and the straightforward way
(`fast_path=False`); the outcomes must be identical, also when the columns are reused across
requests while pods come, go and move, nodes change, PDBs change and pods get nominated.
The reply the verb assembles from pieces must be byte for byte what `wire.encode` writes for
the straightforward outcome.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extender.api import preempt as preempt_api
from extender.api import preemptreply
from extender.engine.cluster import ClusterState
from extender.engine.filters.fit_kernel import FitRequest
from extender.engine.filters.node_resources_fit import FitCheck
from extender.engine.preemption import PreemptionMemo, process_preemption
from extender.engine.preemption import batch as batch_module
from extender.engine.preemption import columns as columns_module
from extender.engine.preemption.batch import BatchOutcome
from extender.engine.preemption.columns import PodColumns
from extender.engine.preemption.process import process_preemption_batch
from extender.model import k8s
from tests.engine.test_preemption_fastpath import PROFILES, requests_of, scenarios, summary
from tests.engine.test_preemption_helpers import T0, cluster, node, pdb, pod, view
from tests.seeded import seeded

NOW = T0


def flat(proposals: dict[str, list[str]]) -> tuple[list[str], list[str], list[int]]:
    return (list(proposals), [uid for uids in proposals.values() for uid in uids],
            [len(uids) for uids in proposals.values()])


def assert_same(profile_name: str, state: ClusterState, me: dict[str, Any],
                proposals: dict[str, list[str]], memo: PreemptionMemo, now: float) -> None:
    preemptor = view(me)
    prof = PROFILES[profile_name]
    batch = process_preemption(prof, preemptor, proposals, state, now, memo=memo)
    loop = process_preemption(prof, preemptor, proposals, state, now, memo=PreemptionMemo(),
                              columns=False)
    slow = process_preemption(prof, preemptor, proposals, state, now, fast_path=False)
    assert summary(batch) == summary(slow)
    assert summary(loop) == summary(slow)
    # The verb's reply, assembled from pieces, is what `wire.encode` writes.
    found = process_preemption_batch(prof, preemptor, *flat(proposals), state, now, memo=memo,
                                     finish=preemptreply.reply_bytes)
    expected = preemptreply.encode_outcome(slow)
    if isinstance(found, BatchOutcome):
        assert summary(found.outcome()) == summary(slow)
        if found.result is not None:
            assert found.result == expected
    else:
        assert preemptreply.encode_outcome(found) == expected


def hash_uids_always(monkeypatch: pytest.MonkeyPatch) -> None:
    """`PodColumns.resolve` hashes the UIDs together however few, among however few pods."""
    monkeypatch.setattr(columns_module, "_VECTOR_MIN", 0)
    monkeypatch.setattr(columns_module, "_VECTOR_PODS", 0)


@pytest.fixture(params=["dict", "hashed"])
def lookup(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """UIDs resolved through the dict and plans built node by node; or UIDs hashed together
    however few there are among however few pods, plans built together however few are
    missing, and the completions walked a few nodes at a time."""
    if request.param == "hashed":
        hash_uids_always(monkeypatch)
        monkeypatch.setattr(columns_module, "_TOGETHER_MIN", 1)
        monkeypatch.setattr(batch_module, "_CELLS", 16)
    else:
        monkeypatch.setattr(columns_module, "_TOGETHER_MIN", 1 << 30)
    return request.param  # type: ignore[no-any-return]


def change(state: ClusterState, objects: list[dict[str, Any]], data: st.DataObject) -> None:
    """What happens between two requests: pods leave, arrive, move (same UID, other node),
    a node changes, a PDB changes, a pod is nominated."""
    bound = [o for o in objects if o["kind"] == "Pod" and o["spec"]["nodeName"]]
    nodes = [o["metadata"]["name"] for o in objects if o["kind"] == "Node"]
    for _ in range(data.draw(st.integers(0, 3))):
        what = data.draw(st.sampled_from(["leave", "arrive", "move", "node", "pdb", "nominate",
                                          "drop", "grow"]))
        if what == "leave" and bound:
            gone = data.draw(st.sampled_from(bound))
            state.delete_pod(gone["metadata"]["namespace"], gone["metadata"]["name"])
        elif what == "arrive":
            late = pod(f"late{data.draw(st.integers(0, 3))}",
                       data.draw(st.sampled_from(nodes)), priority=data.draw(st.integers(0, 12)),
                       cpu=data.draw(st.sampled_from(["0", "500m", "1"])), labels={"app": "a"},
                       start=data.draw(st.sampled_from([None, T0 - 60])))
            state.apply_pod(k8s.convert(late, k8s.Pod))
        elif what == "move" and bound:
            moved = dict(data.draw(st.sampled_from(bound)))
            moved["spec"] = dict(moved["spec"], nodeName=data.draw(st.sampled_from(nodes)))
            state.apply_pod(k8s.convert(moved, k8s.Pod))
        elif what == "node":
            name = data.draw(st.sampled_from(nodes))
            state.apply_node(k8s.convert(node(name, cpu=data.draw(st.sampled_from(["2", "5"])),
                                              pods=data.draw(st.sampled_from(["2", "110"]))),
                                         k8s.Node))
        elif what == "drop":
            state.delete_node(data.draw(st.sampled_from(nodes)))
        elif what == "grow":  # past the table's first capacity: rows and columns grow
            for i in range(300):
                state.apply_node(k8s.convert(node(f"extra{i}", cpu="1"), k8s.Node))
            state.apply_pod(k8s.convert(pod("extra", "extra7", cpu="100m"), k8s.Pod))
        elif what == "pdb":
            state.apply_pdb(k8s.convert(pdb("pdb0", {"app": "a"}, data.draw(st.integers(0, 1))),
                                        k8s.PodDisruptionBudget))
        elif what == "nominate":
            waiting = pod(f"waiting{data.draw(st.integers(0, 1))}",
                          priority=data.draw(st.integers(0, 14)), cpu="500m",
                          nominated=data.draw(st.sampled_from(nodes)))
            state.apply_pod(k8s.convert(waiting, k8s.Pod))


@pytest.mark.slow
@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(scenarios(), st.sampled_from(["fixture", "default", "default", "toleration"]), st.data())
def test_the_columns_give_the_straightforward_answer(lookup, scenario, profile_name, data):
    objects, me, proposals = scenario
    state = cluster(*objects)
    memo = PreemptionMemo()
    assert_same(profile_name, state, me, proposals, memo, NOW)
    assert_same(profile_name, state, me, proposals, memo, NOW)
    assert_same(profile_name, state, me, proposals, memo, NOW - 1800)
    for _ in range(2):
        change(state, objects, data)
        assert_same(profile_name, state, me, proposals, memo, NOW)


def _started(pod_object: dict[str, Any]) -> str:
    """The pod's start as the ISO text sorts (an unstarted pod last, as if started now)."""
    return str(pod_object["status"].get("startTime", "~"))


@st.composite
def crowded(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, list[str]]]:
    """Several full nodes of different sizes under budgets with room: many completions at
    once (walks of different lengths side by side), and counts that depend on the order.
    Sometimes with noise: a tainted node, a nominated pod, proposals naming a stranger, a
    duplicate, an unknown UID, a pod of equal or higher priority, an unknown node."""
    count = draw(st.integers(1, 6))
    noisy = draw(st.booleans())
    pod_count = draw(st.integers(1, 30))
    d = seeded(draw)
    objects: list[dict[str, Any]] = [
        node(f"n{i}", cpu=d.choice(["2", "4", "6"]),
             memory=d.choice(["2Gi", "3Gi", "8Gi"]),
             pods=d.choice(["3", "8", "110"]),
             taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]
             if noisy and d.one_in(6) else None) for i in range(count)]
    for j in range(pod_count):
        objects.append(pod(f"p{j}", f"n{d.integer(0, count - 1)}",
                           priority=d.integer(0, 6),
                           cpu=d.choice(["0", "100m", "500m", "1"]),
                           memory=d.choice(["0", "64Mi", "256Mi", "1Gi"]),
                           start=d.choice([None, T0 - 600, T0 - 1800, T0 - 3600]),
                           labels={"app": d.choice(["a", "b", "c"])}))
    if noisy and d.one_in(4):
        objects.append(pod("waiting", priority=d.integer(0, 8), cpu="500m",
                           nominated=f"n{d.integer(0, count - 1)}"))
    objects += [pdb("pa", {"app": "a"}, d.integer(0, 2)),
                pdb("pb", {"app": "b"}, d.integer(1, 3))]
    me = pod("me", priority=d.integer(1, 5), cpu=d.choice(["1", "2", "3"]),
             memory=d.choice(["0", "512Mi", "2Gi"]))
    everyone = [o["metadata"]["uid"] for o in objects if o["kind"] == "Pod"] + ["uid-nope"]
    importance = {o["metadata"]["uid"]: (-o["spec"]["priority"], _started(o))
                  for o in objects if o["kind"] == "Pod"}
    proposals: dict[str, list[str]] = {}
    for i in d.permutation(range(count)):
        name = f"n{i}"
        mine = [o["metadata"]["uid"] for o in objects
                if o["kind"] == "Pod" and o["spec"]["nodeName"] == name]
        proposals[name] = d.some(mine, 4, unique=True) \
            if mine else []
        if d.boolean():  # as kube-scheduler proposes them: most important first
            proposals[name].sort(key=importance.get)
        if noisy and d.one_in(4):
            proposals[name].append(d.choice(everyone + proposals[name]))
    if noisy and d.boolean():
        proposals["ghost"] = ["uid-p0"]
    return objects, me, proposals


@pytest.mark.slow
@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(crowded(), st.data())
def test_completions_on_many_crowded_nodes_match(lookup, scenario, data):
    objects, me, proposals = scenario
    state = cluster(*objects)
    memo = PreemptionMemo()
    assert_same("fixture", state, me, proposals, memo, NOW)
    assert_same("fixture", state, me, proposals, memo, NOW - 1800)
    for priority in (me["spec"]["priority"] + 1, 3):
        other = pod("me", priority=priority, cpu=requests_of(me)["cpu"],
                    memory=requests_of(me)["memory"])
        assert_same("fixture", state, other, proposals, memo, NOW)
    change(state, objects, data)
    assert_same("fixture", state, me, proposals, memo, NOW)


@pytest.mark.parametrize("order", [0, 1])
def test_preemptors_share_the_words_of_nodes_they_cannot_fit(lookup, order):
    """Nodes too small for the preemptor even emptied are dropped with NodeResourcesFit's
    words, remembered per pattern of failing checks across requests (`PreemptionMemo.words`):
    preemptors asking for other resources, one after another through one memo, each get the
    words their own straightforward run gives."""
    nodes = [node(f"n{i}", cpu=cpu, memory=memory, pods=pods)
             for i, (cpu, memory, pods) in enumerate([("1", "1Gi", "110"), ("1", "64Gi", "110"),
                                                      ("64", "1Gi", "110"), ("1", "1Gi", "1"),
                                                      ("64", "64Gi", "1")])]
    pods = [pod(f"p{i}", f"n{i}", priority=1, cpu="100m", memory="64Mi") for i in range(5)]
    state = cluster(*nodes, *pods)
    proposals = {f"n{i}": [f"uid-p{i}"] for i in range(5)}
    preemptors = [pod("me", priority=10, cpu="8", memory="0"),
                  pod("me", priority=10, cpu="8", memory="16Gi"),
                  pod("me", priority=10, cpu="100m", memory="16Gi"),
                  pod("me", priority=10, cpu="0", memory="0")]
    memo = PreemptionMemo()
    for me in preemptors[::-1] if order else preemptors:
        assert_same("default", state, me, proposals, memo, NOW)
    # The words were remembered (and so reused by the later preemptors).
    words = memo.words(FitCheck(FitRequest.of(view(preemptors[0]))))
    assert len(words) >= 2 and all(w.startswith("NodeResourcesFit: ")
                                   for w in words.values()), words


# ---- the columns themselves ------------------------------------------------------------------

def plan_columns(columns: Any, rows: list[int]) -> list[tuple[Any, ...]]:
    """What a row's plan says in the columns, as plain values."""
    found = []
    for row in rows:
        walk = columns.plan_walk[row]
        size = int(columns.plan_size[row])
        found.append((
            walk.tolist(), size, float(columns.plan_latest[row]), int(columns.plan_below[row]),
            int(columns.plan_above[row]), bool(columns.plan_usable[row]),
            int(columns.plan_token[row]), int(columns.plan_gen[row]),
            columns.walk_pos[walk].tolist(), columns.walk_rank[walk].tolist(),
            columns.walk_flag[walk].tolist(),
            columns.plan_total[:, row].tolist() if size and columns.row_exact[row] else None))
    return found


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(crowded(), st.integers(0, 8), st.data())
def test_plans_built_together_are_the_plans_built_node_by_node(scenario, priority, data):
    """`_build_plans_together` against `_build_plan` (from `NodePlan`), on nodes whose pods
    are under budgets with and without room, for preemptors of every priority, before and
    after pods change."""
    objects, _, _ = scenario
    if data.draw(st.booleans()):  # only budgets without room
        objects = [o for o in objects
                   if o["kind"] != "PodDisruptionBudget" or o["metadata"]["name"] != "pb"]
    if data.draw(st.booleans()):  # app a's pods guarded twice
        objects.append(pdb("pa2", {"app": "a"}, data.draw(st.sampled_from([0, 1, 2, -3, 1 << 40]))))
    if data.draw(st.booleans()):  # the same labels in another namespace, under other budgets
        objects.append(pdb("po", {"app": "a"}, data.draw(st.integers(0, 1)), namespace="other"))
        for obj in objects:
            if obj["kind"] == "Pod" and data.draw(st.integers(0, 2)) == 0:
                obj["metadata"]["namespace"] = "other"
    state = cluster(*objects)
    for _ in range(2):
        memo = PreemptionMemo()
        epoch = memo.epoch(state.pdb_list())
        one, together = PodColumns(state.table), PodColumns(state.table)
        one.sync()
        together.sync()
        rows = np.array(sorted(state.table.ordinal.values()), dtype=np.int64)

        def plan_of(info: Any, memo: PreemptionMemo = memo, epoch: Any = epoch) -> Any:
            return memo.plan(info, priority, epoch)
        for row in rows.tolist():
            one._build_plan(row, priority, epoch, plan_of)
        left = together._build_plans_together(rows, priority, epoch)
        for row in left.tolist():
            together._build_plan(row, priority, epoch, plan_of)
        assert not len(left)  # every pod here is exact
        assert plan_columns(together, rows.tolist()) == plan_columns(one, rows.tolist())
        change(state, objects, data)



def test_the_columns_decide_the_common_cases(monkeypatch):
    state = cluster(node("n", cpu="3"), node("m", cpu="3", taints=[
        {"key": "k", "value": "v", "effect": "NoSchedule"}]),
        node("full", cpu="3"),
        pod("a", "n", priority=30, labels={"app": "a"}), pod("b", "n", priority=20),
        pod("c", "n", priority=10, labels={"app": "a"}), pod("d", "m", priority=1),
        pod("e", "full", priority=1), pod("f", "full", priority=2, cpu="2"),
        pdb("pa", {"app": "a"}, 1))
    me = view(pod("me", priority=100, cpu="2"))
    proposals = {"n": ["uid-c"], "m": ["uid-d"], "full": ["uid-e"], "ghost": []}
    hash_uids_always(monkeypatch)
    found = process_preemption_batch(PROFILES["default"], me, *flat(proposals), state, NOW)
    assert isinstance(found, BatchOutcome)
    # n and full are completed (b, f must go too); m is tainted; ghost is unknown.
    outcome = found.outcome()
    assert {n: [p.uid for p in v.pods] for n, v in outcome.victims.items()} == {
        "n": ["uid-b", "uid-c"], "full": ["uid-f", "uid-e"]}
    assert set(outcome.dropped) == {"m", "ghost"}
    # Only the unknown node went node by node.
    assert set(found.extra) == set()


@pytest.mark.parametrize("uid", ["plain", "ünïcode", "nul\x00", "x" * 300, ""])
def test_every_uid_resolves_to_its_pod_however_it_is_spelt(monkeypatch, uid):
    hash_uids_always(monkeypatch)
    obj = pod("odd", "n", priority=1)
    obj["metadata"]["uid"] = uid
    state = cluster(node("n"), obj, *(pod(f"p{i}", "n", priority=1, cpu="0") for i in range(70)))
    memo = PreemptionMemo()
    columns = memo.columns(state.table)
    columns.sync()
    others = [f"uid-p{i}" for i in range(70)]
    ords = columns.resolve([uid, "plain\x00", "nope", *others, uid + "x"])
    pods = columns.pods
    assert pods[ords[0]].uid == uid
    assert ords[1] == -1 or uid == "plain\x00"
    assert ords[2] == -1 and ords[-1] == -1
    assert [pods[o].uid for o in ords[3:-1]] == others


def test_only_columns_of_many_pods_hash_the_uids(monkeypatch):
    state = cluster(node("n"), *(pod(f"p{i}", "n", priority=1, cpu="0") for i in range(80)))
    columns = PreemptionMemo().columns(state.table)
    columns.sync()
    uids = [f"uid-p{i}" for i in range(79, -1, -1)]
    monkeypatch.setattr(columns_module, "_VECTOR_PODS", 81)
    dict_ords = columns.resolve(uids).tolist()
    assert columns._uid_index is None
    monkeypatch.setattr(columns_module, "_VECTOR_PODS", 80)
    assert columns.resolve(uids).tolist() == dict_ords
    assert columns._uid_index is not None
    assert [columns.pods[o].uid for o in dict_ords] == uids


def test_ordinals_follow_pods_that_leave_arrive_and_move(monkeypatch):
    hash_uids_always(monkeypatch)
    state = cluster(node("a"), node("b"), *(pod(f"p{i}", "a", cpu="0") for i in range(80)))
    memo = PreemptionMemo()
    columns = memo.columns(state.table)
    columns.sync()
    before = columns.resolve(["uid-p0", "uid-p1"])
    assert (columns.node_row[before] == state.table.ordinal["a"]).all()
    state.delete_pod("default", "p0")
    moved = pod("p1", "b", cpu="0")
    state.apply_pod(k8s.convert(moved, k8s.Pod))
    state.apply_pod(k8s.convert(pod("p0", "b", cpu="0"), k8s.Pod))  # back, on b
    columns.sync()
    after = columns.resolve(["uid-p0", "uid-p1", "uid-p2"])
    row_b = state.table.ordinal["b"]
    assert (columns.node_row[after[:2]] == row_b).all()
    assert [columns.pods[o].uid for o in after] == ["uid-p0", "uid-p1", "uid-p2"]
    assert columns.pods[after[0]] is state.nodes["b"].pods["uid-p0"]
    assert (np.sort(columns.row_ords[row_b]) == np.sort(after[:2])).all()


def test_a_freed_ordinal_taken_by_another_pod_does_not_answer_for_the_old_uid(monkeypatch):
    hash_uids_always(monkeypatch)
    state = cluster(node("a"), *(pod(f"p{i}", "a", cpu="0") for i in range(80)))
    columns = PreemptionMemo().columns(state.table)
    columns.sync()
    old = int(columns.resolve(["uid-p0"])[0])
    state.delete_pod("default", "p0")
    columns.sync()
    state.apply_pod(k8s.convert(pod("q", "a", cpu="0"), k8s.Pod))
    columns.sync()
    assert columns.pods[old].uid == "uid-q"  # the freed ordinal was reused...
    assert columns.resolve(["uid-p0", "uid-q"])[0] == -1  # ...but not for the old UID


def test_uids_sharing_a_hash_still_resolve_each_to_its_own_pod(monkeypatch):
    hash_uids_always(monkeypatch)
    monkeypatch.setattr(columns_module, "hashes",
                        lambda array: np.zeros(len(array), dtype=np.uint64))
    state = cluster(node("a"), *(pod(f"p{i}", "a", cpu="0") for i in range(80)))
    columns = PreemptionMemo().columns(state.table)
    columns.sync()
    uids = [f"uid-p{i}" for i in range(80)] + ["uid-nope"]
    ords = columns.resolve(uids)
    assert [columns.pods[o].uid for o in ords[:-1]] == uids[:-1]
    assert ords[-1] == -1


@given(st.lists(st.integers(0, 1 << 20), min_size=0, max_size=120))
def test_the_hash_index_finds_what_a_dict_holds(homes):
    """Hashes crowding a few home slots (collisions, runs past the next homes): `find` gives
    each the value a dict would, and -1 for a hash not held."""
    bits = max(4, len(homes).bit_length() + 1)
    hashes = np.array([((h % 5) << (64 - bits)) | i for i, h in enumerate(homes)],
                      dtype=np.uint64)
    values = np.arange(len(homes), dtype=np.int64) * 10
    index = columns_module.HashIndex(hashes, values)
    asked = np.concatenate([hashes, hashes[::-1], np.array([12345, 0], dtype=np.uint64)])
    expected = dict(zip(hashes.tolist(), values.tolist(), strict=True))
    assert index.find(asked).tolist() == [expected.get(h, -1) for h in asked.tolist()]


def test_the_verb_reads_both_request_forms_flat_leaving_empty_uids_out():
    from extender import wire

    meta = wire.ExtenderPreemptionArgs(NodeNameToMetaVictims={
        "a": wire.MetaVictims(Pods=[wire.MetaPod(UID="x"), wire.MetaPod(UID=""),
                                    wire.MetaPod(UID="y")]),
        "b": None, "c": wire.MetaVictims(Pods=None), "d": wire.MetaVictims(
            Pods=[wire.MetaPod(UID="z")])})
    assert preempt_api.flat_proposals(meta) == (["a", "b", "c", "d"], ["x", "y", "z"],
                                                [2, 0, 0, 1])
    whole = wire.ExtenderPreemptionArgs(NodeNameToVictims={
        "a": wire.Victims(Pods=[wire.VictimPod(metadata=wire.VictimMeta(uid="x"))]),
        "b": None})
    assert preempt_api.flat_proposals(whole) == (["a", "b"], ["x"], [1, 0])
    assert preempt_api.proposals(meta) == {"a": ["x", "y"], "b": [], "c": [], "d": ["z"]}


def test_the_pieced_reply_escapes_names_and_uids_as_the_encoder_does(monkeypatch):
    hash_uids_always(monkeypatch)
    names = ['quo"te', "back\\slash", "ünï", "tab\tnew\nline", "<html>&"]
    objects: list[dict[str, Any]] = [node(name, cpu="2") for name in names]
    for i, name in enumerate(names):
        victim = pod(f"v{i}", name, priority=1, cpu="1500m")
        victim["metadata"]["uid"] = f'{name}-"uid"\\{i}'
        objects.append(victim)
    state = cluster(*objects)
    me = view(pod("me", priority=10, cpu="1"))
    proposals = {name: [f'{name}-"uid"\\{i}'] for i, name in enumerate(names)}
    found = process_preemption_batch(PROFILES["fixture"], me, *flat(proposals), state, NOW,
                                     finish=preemptreply.reply_bytes)
    slow = process_preemption(PROFILES["fixture"], me, proposals, state, NOW, fast_path=False)
    assert isinstance(found, BatchOutcome) and len(found.kept) == len(names)
    assert found.result == preemptreply.encode_outcome(slow)


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.sampled_from([1.0, 2.0])),
                max_size=12), st.booleans())
def test_victims_in_order_are_left_as_proposed_and_only_they(rows, ordered):
    if ordered:
        rows = sorted(rows)
    who = np.array(sorted(r[0] for r in rows), dtype=np.int64)
    rank = np.array([r[1] for r in rows], dtype=np.int64)
    start = np.array([r[2] for r in rows], dtype=np.float64)
    identity = batch_module._sorted_by(who, rank, start).tolist() == list(range(len(rows)))
    assert batch_module._out_of_order(who, rank, start) is not identity


@pytest.mark.parametrize("count", [0, 1, 7, 900, batch_module._PACKED_SORT + 500])
def test_the_victim_order_is_lexsorts_on_both_sides_of_the_packed_threshold(count: int) -> None:
    # node index (ascending, as proposed), -priority, start: few distinct values, many ties,
    # so stability matters as much as the keys.
    rng = np.random.default_rng(count)
    who = np.sort(rng.integers(0, max(1, count // 3), count))
    priority = -rng.integers(0, 4, count) * 100
    start = rng.integers(0, 20, count).astype(np.float64) + 1.7e9
    expected = np.lexsort((start, priority, who))
    assert batch_module._sorted_by(who, priority, start).tolist() == expected.tolist()
