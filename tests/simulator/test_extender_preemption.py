"""Preemption with HTTP extenders: the engine's evaluator runs the dry run and picks the node;
the simulator's `ExtenderStep` (`extender_preemption.py`) lets each extender's preempt verb
replace the candidates in between, as kube-scheduler's `callExtenders` does."""

from __future__ import annotations

import json

import httpx

from extender.engine.framework import Code, Status
from extender.engine.preemption.victims import Victims
from extender.simulator.extender_preemption import extender_step
from extender.simulator.extenders import HttpExtender
from extender.state.snapshot import load_snapshot

from .helpers import at, by_name, node, pod, simulate, write

PREEMPTOR = {"metadata": {"name": "urgent", "namespace": "default", "uid": "uid-urgent"}}


class PreemptExtender:
    """Answers the preempt verb with `reply(body)`, records every request body."""

    def __init__(self, reply, status: int = 200) -> None:
        self.reply = reply
        self.status = status
        self.requests: list[dict] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        if request.url.path.endswith("/filter"):
            return httpx.Response(200, json={"NodeNames": body["NodeNames"]})
        if request.url.path.endswith("/prioritize"):
            return httpx.Response(200, json=[])
        if self.status != 200:
            return httpx.Response(self.status)
        return httpx.Response(200, json=self.reply(body))


def http_extender(handler, *, name: str = "ext", **kw) -> HttpExtender:
    return HttpExtender(f"http://{name}.test/scheduler", filter_verb="", prioritize_verb="",
                        client=httpx.Client(transport=httpx.MockTransport(handler)), **kw)


def meta(**nodes: list[str]) -> dict:
    return {"NodeNameToMetaVictims": {
        n: {"Pods": [{"UID": uid} for uid in uids], "NumPDBViolations": 0}
        for n, uids in nodes.items()}}


def two_busy_nodes(tmp_path):
    state = load_snapshot(write(tmp_path / "c.json", [
        node("n1", "2", "4Gi"), node("n2", "2", "4Gi"),
        pod("low-1", "2", node_name="n1"), pod("low-2", "2", node_name="n2")]))
    candidates = {name: Victims((next(iter(state.nodes[name].pods.values())),), 0)
                  for name in ("n1", "n2")}
    return state, candidates


def test_no_interested_extender_means_no_step(tmp_path):
    state, _ = two_busy_nodes(tmp_path)
    fake = PreemptExtender(lambda body: {})
    managed = http_extender(fake, managed_resources=["example.com/gpu"])
    no_verb = http_extender(fake, preempt_verb="")
    assert extender_step([managed, no_verb], state.pods["uid-low-1"], PREEMPTOR,
                         state.nodes) is None
    assert fake.requests == []


def test_the_reply_replaces_the_candidates_victims_by_uid(tmp_path):
    state, candidates = two_busy_nodes(tmp_path)
    fake = PreemptExtender(lambda body: meta(n2=["uid-low-2"]))
    step = extender_step([http_extender(fake)], state.pods["uid-low-1"], PREEMPTOR, state.nodes)
    assert step is not None
    replied = step(candidates)
    assert list(replied) == ["n2"]
    assert replied["n2"].pods == (state.nodes["n2"].pods["uid-low-2"],)
    # nodeCacheCapable: victims go by UID, with Go's field order and nulls.
    body = fake.requests[0]
    assert list(body) == ["Pod", "NodeNameToVictims", "NodeNameToMetaVictims"]
    assert body["NodeNameToVictims"] is None
    assert body["NodeNameToMetaVictims"] == {
        "n1": {"Pods": [{"UID": "uid-low-1"}], "NumPDBViolations": 0},
        "n2": {"Pods": [{"UID": "uid-low-2"}], "NumPDBViolations": 0}}


def test_whole_victims_for_an_extender_without_a_node_cache(tmp_path):
    state, candidates = two_busy_nodes(tmp_path)
    fake = PreemptExtender(lambda body: meta(n1=["uid-low-1"]))
    raw = {"uid-low-1": {"metadata": {"name": "low-1", "uid": "uid-low-1"}, "spec": {"x": 1}}}
    step = extender_step([http_extender(fake, node_cache_capable=False)],
                         state.pods["uid-low-1"], PREEMPTOR, state.nodes, raw)
    assert step is not None
    assert list(step(candidates)) == ["n1"]
    body = fake.requests[0]
    assert list(body) == ["Pod", "NodeNameToVictims", "NodeNameToMetaVictims"]
    assert body["NodeNameToMetaVictims"] is None
    assert body["NodeNameToVictims"]["n1"] == {"Pods": [raw["uid-low-1"]], "NumPDBViolations": 0}
    assert body["NodeNameToVictims"]["n2"]["Pods"] == [
        {"metadata": {"uid": "uid-low-2", "name": "low-2", "namespace": "default"}}]


def test_a_victim_not_on_that_node_is_kube_schedulers_error(tmp_path):
    state, candidates = two_busy_nodes(tmp_path)
    fake = PreemptExtender(lambda body: meta(n1=["uid-low-2"]))
    step = extender_step([http_extender(fake)], state.pods["uid-low-1"], PREEMPTOR, state.nodes)
    assert step is not None
    assert step(candidates) == Status(Code.ERROR, (
        "extender claims to preempt pod (UID: uid-low-2) on node: n1, but the pod is not found "
        "on that node",))


def test_an_ignorable_extender_that_fails_is_skipped_another_is_an_error(tmp_path):
    state, candidates = two_busy_nodes(tmp_path)
    broken = PreemptExtender(lambda body: {}, status=500)
    narrowing = PreemptExtender(lambda body: meta(n2=["uid-low-2"]))
    preemptor = state.pods["uid-low-1"]
    step = extender_step([http_extender(broken, ignorable=True),
                          http_extender(narrowing, name="two")], preemptor, PREEMPTOR, state.nodes)
    assert step is not None
    assert list(step(candidates)) == ["n2"]
    assert len(broken.requests) == len(narrowing.requests) == 1
    step = extender_step([http_extender(broken)], preemptor, PREEMPTOR, state.nodes)
    assert step is not None
    assert step(candidates) == Status(Code.ERROR, (
        "failed preempt with extender at URL http://ext.test/scheduler/preempt, code 500",))


def test_no_candidate_left_stops_asking(tmp_path):
    state, candidates = two_busy_nodes(tmp_path)
    empty = PreemptExtender(lambda body: {"NodeNameToMetaVictims": {}})
    later = PreemptExtender(lambda body: meta(n1=["uid-low-1"]))
    step = extender_step([http_extender(empty), http_extender(later, name="two")],
                         state.pods["uid-low-1"], PREEMPTOR, state.nodes)
    assert step is not None
    assert step(candidates) == {}
    assert later.requests == []


CLUSTER = [node("n1", "2", "4Gi"), node("n2", "2", "4Gi"),
           pod("low-1", "2", node_name="n1"), pod("low-2", "2", node_name="n2")]
WORKLOAD = [pod("urgent", "2", priority=100, created=at(0))]


def test_the_loop_preempts_where_the_extender_says(tmp_path):
    # Without an extender the evaluator picks one of two equal candidates; each extender
    # answer moves the preemption to the node it names.
    _, alone = simulate(tmp_path, CLUSTER, WORKLOAD, seed=0)
    chosen = by_name(alone)["urgent"]["node"]
    other = {"n1": "n2", "n2": "n1"}[chosen]
    for target in (chosen, other):
        victim = {"n1": "uid-low-1", "n2": "uid-low-2"}[target]
        fake = PreemptExtender(lambda body, t=target, v=victim: meta(**{t: [v]}))
        _, report = simulate(tmp_path, CLUSTER, WORKLOAD, seed=0,
                             extenders=[http_extender(fake)])
        pods = by_name(report)
        assert pods["urgent"]["status"] == "Scheduled"
        assert pods["urgent"]["node"] == target
        preempted = {"n1": "low-1", "n2": "low-2"}[target]
        assert pods[preempted]["status"] == "Preempted"
        assert pods[preempted]["preemptedBy"] == "default/urgent"
        assert report["extenderCalls"] == {"http://ext.test/scheduler/preempt": 1}


def test_the_loop_reports_an_extenders_preemption_error(tmp_path):
    fake = PreemptExtender(lambda body: meta(n1=["uid-nobody"]))
    _, report = simulate(tmp_path, CLUSTER, WORKLOAD, extenders=[http_extender(fake)],
                         max_time=5_000_000_000)
    urgent = by_name(report)["urgent"]
    assert urgent["status"] == "Pending"
    assert urgent["message"] == (
        "0/2 nodes are available: 2 Insufficient cpu. preemption: extender claims to preempt "
        "pod (UID: uid-nobody) on node: n1, but the pod is not found on that node")
