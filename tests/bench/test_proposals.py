"""`bench.proposals`: the preempt calls of the bench are what kube-scheduler's dry run proposes
on the cluster as the bench's binds left it, and the extender keeps each as proposed."""

from __future__ import annotations

import time
from pathlib import Path

import msgspec
import pytest
from starlette.testclient import TestClient

from bench import generate, proposals, traffic
from extender.api.app import create_app
from extender.api.runtime import Runtime
from extender.engine.policy import load_policy
from extender.engine.profile import build_profile
from extender.engine.runner import node_fits, prepare_filters
from extender.model import k8s
from extender.model.pod import PodView
from extender.state.binder import SnapshotBinder
from extender.state.snapshot import load_snapshot

NODES = 120
WANTED = 30


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("proposals") / "cluster.json"
    generate.write_cluster(path, generate.ClusterSpec(NODES, NODES * traffic.PODS_PER_NODE,
                                                      generate.DEFAULT_SEED))
    return path


def _bound() -> list[tuple[dict, str]]:
    """Pods the bench bound: the first nodes filled past what the preemptor needs."""
    return [(pod, generate.node_name(i % 6)) for i, pod in enumerate(traffic.pending_pods(5, 40))]


def test_each_node_proposes_the_fewest_least_important_victims_most_important_first(
        snapshot: Path) -> None:
    now = time.time()
    bound = _bound()
    bodies = proposals.dry_run_bodies(snapshot, bound, 11, 3, WANTED, now)
    state = load_snapshot(snapshot)
    for pod, node in bound:
        state.apply_pod(k8s.convert(proposals.placed(pod, node), k8s.Pod))
    profile = build_profile(load_policy(proposals.FILTERS_POLICY))
    preemptors = set()
    for body in bodies:
        request = msgspec.json.decode(body)
        preemptor = PodView.from_k8s(k8s.convert(request["Pod"], k8s.Pod))
        preemptors.add(preemptor.uid)
        filters = prepare_filters(profile, preemptor, state)
        candidates = request["NodeNameToMetaVictims"]
        assert list(candidates) == sorted(candidates) and len(candidates) == WANTED
        for name, proposed in candidates.items():
            info = state.nodes[name]
            victims = [state.pod_by_uid(v["UID"]) for v in proposed["Pods"]]
            assert victims and all(v is not None and v.node_name == name
                                   and v.priority < preemptor.priority for v in victims)
            keys = [(-v.priority, now if v.start_time is None else v.start_time)
                    for v in victims]  # type: ignore[union-attr]
            assert keys == sorted(keys)
            # Not a node the preemptor fits as it is; it fits with the victims gone, and not
            # with any one of them back.
            assert node_fits(filters, info) is not None
            assert node_fits(filters, _without(info, victims)) is None
            for kept in victims:
                assert node_fits(filters, _without(info, [v for v in victims if v is not kept])) \
                    is not None
    assert len(preemptors) == 3


def _without(info, victims):  # type: ignore[no-untyped-def]
    work = info.clone()
    for victim in victims:
        work.remove_pod(victim)
    return work


def test_the_extender_keeps_every_candidate_as_proposed(snapshot: Path) -> None:
    bound = _bound()
    state = load_snapshot(snapshot)
    for pod, node in bound:
        state.apply_pod(k8s.convert(proposals.placed(pod, node), k8s.Pod))
    runtime = Runtime(build_profile(load_policy(proposals.FILTERS_POLICY)), state,
                      SnapshotBinder(state, 30.0))
    with TestClient(create_app(runtime)) as client:
        for body in proposals.dry_run_bodies(snapshot, bound, 12, 2, WANTED):
            reply = client.post("/preempt", content=body)
            assert reply.status_code == 200
            assert reply.json()["NodeNameToMetaVictims"] == \
                msgspec.json.decode(body)["NodeNameToMetaVictims"]


def test_fewer_candidates_where_fewer_nodes_can_help(snapshot: Path) -> None:
    (body,) = proposals.dry_run_bodies(snapshot, [], 13, 1, NODES)
    found = msgspec.json.decode(body)["NodeNameToMetaVictims"]
    # The preemptor fits some nodes as they are, and others not even emptied.
    assert 0 < len(found) < NODES


def test_the_same_preemptors_on_every_cluster(snapshot: Path) -> None:
    """Each server's preempts are found on its own binds, for the same preemptors."""
    on_bound = proposals.dry_run_bodies(snapshot, _bound(), 14, 3, WANTED)
    on_fresh = proposals.dry_run_bodies(snapshot, [], 14, 3, WANTED)
    pods = [[msgspec.json.decode(b)["Pod"] for b in bodies] for bodies in (on_bound, on_fresh)]
    assert pods[0] == pods[1] and len({p["metadata"]["uid"] for p in pods[0]}) == 3
    assert on_bound != on_fresh  # the binds filled the first nodes: other candidates
