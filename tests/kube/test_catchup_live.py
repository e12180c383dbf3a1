"""A preemptor's filter, and a preempt call, when the extender's pod watch runs behind
kube-scheduler's (`api.catchup`, `state.catchup`): the nodes' pods are listed from the API
server and the state caught up first (victims already gone deleted, victims just bound added),
through the real HTTP app against the fake API server, whose pod watch is held back as a
CPU-starved watcher's would be."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from extender.api.replay import replay_file
from extender.model import k8s
from extender.model.pod import PodView
from extender.state.binder import assume
from extender.state.catchup import GuessBudget, PreemptAnswers, guess_budget, pods_budget
from tests.kube import kube_objects as ko
from tests.kube.fake_apiserver import FakeApiServer, Fault
from tests.serving import eventually, serve_args, served

ROOT = Path(__file__).resolve().parents[2]
POLICY = ROOT / "tests" / "fixtures" / "policy-leastallocated.json"
NS = "default"


def _preemptor(nominated: str = "n1") -> dict[str, Any]:
    pod = ko.pod("urgent", NS, cpu="2", memory="1Gi", uid="uid-urgent", priority=1000)
    if nominated:
        pod["status"]["nominatedNodeName"] = nominated
    return pod


def _filter(pod: dict[str, Any]) -> bytes:
    # As kube-scheduler sends it: Go's encoding/json, no spaces.
    return json.dumps({"Pod": pod, "NodeNames": ["n1"]}, separators=(",", ":")).encode()


def _pod_lists(server: FakeApiServer) -> list[str]:
    """The field selectors of the lists of one node's pods the server was asked for."""
    return [r.query["fieldSelector"] for r in server.requests
            if r.method == "GET" and r.path == "/api/v1/pods" and r.query.get("watch") != "true"
            and "spec.nodeName" in r.query.get("fieldSelector", "")]


def _deleted(runtime: Any) -> int:
    """Pod DELETED events the extender's watch has delivered."""
    return runtime.live.counters.events[("pods", "DELETED")]


def _cluster(server: FakeApiServer) -> None:
    server.put(ko.node("n1", cpu="2", memory="8Gi"))
    server.put(ko.pod("victim", NS, cpu="2", memory="1Gi", node_name="n1", phase="Running",
                      uid="uid-victim", priority=0))
    server.put(_preemptor())


def _preempt(victims: list[str]) -> bytes:
    return json.dumps({"Pod": _preemptor(nominated=""), "NodeNameToMetaVictims": {
        "n1": {"Pods": [{"UID": uid} for uid in victims], "NumPDBViolations": 0}}},
        separators=(",", ":")).encode()


def _run(tmp_path: Path, scenario: Any, *extra: str, cluster: Any = _cluster,
         waits_for: str | None = "uid-victim", policy: dict[str, Any] | None = None) -> Any:
    if policy is not None:  # instead of POLICY
        path = tmp_path / "policy.json"
        path.write_text(json.dumps(policy))
        extra = ("--policy", str(path), *extra)
    with FakeApiServer(bookmark_interval=0.2) as server:
        cluster(server)
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        args = serve_args("--kubeconfig", str(kubeconfig), "--policy", str(POLICY), *extra)

        async def session() -> Any:
            async with served(args) as (client, runtime):
                await eventually(lambda: runtime.readiness()[0], "the informers' sync")
                if waits_for is not None:
                    await eventually(lambda: waits_for in runtime.state.pods, waits_for)
                return await scenario(server, client, runtime)

        return asyncio.run(session())


def test_a_victim_gone_before_the_watch_says_so_no_longer_counts(tmp_path: Path) -> None:
    async def scenario(server: FakeApiServer, client: Any, runtime: Any) -> Any:
        server.hold_watches("pods")  # the extender's watch behind kube-scheduler's
        server.delete("Pod", NS, "victim")
        before = len(_pod_lists(server))
        reply = (await client.post("/filter", content=_filter(_preemptor()))).json()
        listed = _pod_lists(server)[before:]
        still_there = "uid-victim" in runtime.state.pods
        metrics = (await client.get("/metrics")).text
        server.release_watches("pods")
        # The watch's own DELETED, arriving after, changes nothing.
        await eventually(lambda: _deleted(runtime) == 1, "the watch's DELETED")
        again = (await client.post("/filter", content=_filter(_preemptor()))).json()
        return reply, listed, still_there, metrics, again

    reply, listed, still_there, metrics, again = _run(tmp_path, scenario)
    assert reply["NodeNames"] == ["n1"], reply
    assert not reply.get("FailedNodes") and not reply.get("FailedAndUnresolvableNodes")
    assert listed == ["spec.nodeName=n1,status.phase!=Succeeded,status.phase!=Failed"]
    assert not still_there
    assert "extender_informer_pods_gone_before_watch_total 1.0" in metrics
    assert again["NodeNames"] == ["n1"]


def test_a_victim_still_there_still_counts(tmp_path: Path) -> None:
    async def scenario(server: FakeApiServer, client: Any, runtime: Any) -> Any:
        server.hold_watches("pods")
        before = len(_pod_lists(server))
        reply = (await client.post("/filter", content=_filter(_preemptor()))).json()
        return reply, _pod_lists(server)[before:], "uid-victim" in runtime.state.pods

    reply, listed, kept = _run(tmp_path, scenario)
    assert reply["NodeNames"] == [] or reply.get("NodeNames") is None
    assert reply["FailedAndUnresolvableNodes"] == {"n1": "Insufficient cpu"} or \
        reply["FailedNodes"] == {"n1": "Insufficient cpu"}, reply
    assert len(listed) == 1 and kept


def test_only_a_nominated_pod_above_the_nodes_pods_lists_them(tmp_path: Path) -> None:
    async def scenario(server: FakeApiServer, client: Any, runtime: Any) -> Any:
        guess_budget(runtime.live).per_second = 0  # no guess either (below): the node is full
        before = len(_pod_lists(server))
        plain = await client.post("/filter", content=_filter(_preemptor(nominated="")))
        low = _preemptor()
        low["spec"]["priority"] = 0  # no lower-priority pod on its node: nothing to wait for
        equal = await client.post("/filter", content=_filter(low))
        elsewhere = await client.post("/filter", content=_filter(_preemptor(nominated="n9")))
        return [plain.status_code, equal.status_code, elsewhere.status_code], \
            _pod_lists(server)[before:]

    codes, listed = _run(tmp_path, scenario)
    assert codes == [200, 200, 200]
    assert listed == []


@pytest.mark.parametrize("listing", ["names", "rows"])
def test_a_preemptor_retried_before_its_nomination_shows_is_caught_up_where_preempt_kept_it(
        tmp_path: Path, listing: str) -> None:
    """kube-scheduler retries a preemptor as soon as its watch shows the victim gone, and the
    pod it sends may not carry its nomination yet (a separate write). The node the preempt
    verb kept for it is read again all the same, with no guess's budget needed (seen on the
    real control plane: the pod parked 5 minutes). A pod the verb answered nothing is not."""
    async def scenario(server: FakeApiServer, client: Any, runtime: Any) -> Any:
        guess_budget(runtime.live).per_second = 0  # no guess: only the preempt answer tells
        if listing == "rows":  # every filter after the first names a list the table knows
            await client.post("/filter", content=_filter(_preemptor(nominated="")))
        preempted = (await client.post("/preempt", content=_preempt(["uid-victim"]))).json()
        server.hold_watches("pods")
        server.delete("Pod", NS, "victim")
        before = len(_pod_lists(server))
        other = ko.pod("other", NS, cpu="2", memory="1Gi", uid="uid-other", priority=1000)
        refused = (await client.post("/filter", content=_filter(other))).json()
        after_other = len(_pod_lists(server))
        retried = (await client.post("/filter", content=_filter(_preemptor(nominated="")))).json()
        return preempted, refused, after_other - before, retried, _pod_lists(server)[before:]

    preempted, refused, other_lists, retried, listed = _run(tmp_path, scenario)
    assert preempted["NodeNameToMetaVictims"]["n1"]["Pods"] == [{"UID": "uid-victim"}]
    assert not refused["NodeNames"] and other_lists == 0  # the victim still counts for it
    assert retried["NodeNames"] == ["n1"], retried
    assert listed == ["spec.nodeName=n1,status.phase!=Succeeded,status.phase!=Failed"]


GANG_POLICY = {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
               "plugins": {"filter": {"enabled": [{"name": "NodeResourcesFit"},
                                                  {"name": "Coscheduling"}]}}}


def _gang(server: FakeApiServer) -> None:
    server.put(ko.node("n1", cpu="8", memory="8Gi"))
    server.put({"kind": "PodGroup", "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                "metadata": {"name": "train", "namespace": NS}, "spec": {"minMember": 3}})
    server.put(_member(0))


def _member(i: int) -> dict[str, Any]:
    return ko.pod(f"w-{i}", NS, cpu="1", uid=f"uid-w-{i}",
                  labels={"scheduling.x-k8s.io/pod-group": "train"})


@pytest.mark.parametrize(("budget", "form"), [(10, "NodeNames"), (10, "Nodes"), (0, "NodeNames")],
                         ids=["read", "read-node-objects", "budget-spent"])
def test_a_gang_member_whose_siblings_the_watch_has_not_delivered_reads_its_group(
        tmp_path: Path, budget: int, form: str) -> None:
    """kube-scheduler retries a gang's pods as their siblings arrive, and its retry after the
    last one is the last: a PreFilter rejection for too few pods, wrong only because the
    extender's pod watch runs behind, parked a member while the others held at Permit waited
    out their group's timeout (seen on the real control plane, a gang of 600). The group's pods
    are listed by its label, within a budget."""
    async def scenario(server: FakeApiServer, client: Any, runtime: Any) -> Any:
        pods_budget(runtime.live).per_second = budget
        server.hold_watches("pods")
        server.put(_member(1))
        server.put(_member(2))
        before = len(server.requests)
        nodes = {"NodeNames": ["n1"]} if form == "NodeNames" else \
            {"Nodes": {"items": [ko.node("n1", cpu="8", memory="8Gi")]}}
        reply = (await client.post("/filter", content=json.dumps(
            {"Pod": _member(0), **nodes}).encode())).json()
        lists = [r.query for r in server.requests[before:]
                 if r.method == "GET" and r.path == f"/api/v1/namespaces/{NS}/pods"]
        # (Not /metrics: its counters are the process's, which other tests here read.)
        return reply, lists, runtime.live.counters.seen_before_watch

    reply, lists, seen = _run(tmp_path, scenario, policy=GANG_POLICY, cluster=_gang,
                                 waits_for="uid-w-0")
    if budget:
        passed = reply["NodeNames"] if form == "NodeNames" else \
            [n["metadata"]["name"] for n in reply["Nodes"]["items"]]
        assert passed == ["n1"], reply
        assert [q.get("labelSelector") for q in lists] == ["scheduling.x-k8s.io/pod-group=train"]
        assert seen == 2
    else:
        # Not the rejection, which would park the pod, but an Error: retried after a backoff.
        assert not reply.get("NodeNames") and lists == [] and seen == 0
        assert reply["Error"] == (
            "pre-filter pod w-0 cannot find enough sibling pods, current pods number: 1, "
            "minMember of group: 3 (answered as an error, so kube-scheduler retries the pod: "
            "this extender read the pods of podgroup default/train less than a second ago, and "
            "reads them again then, in case a pod created since has not reached its watch)"), reply


def test_a_gang_short_for_real_is_rejected_after_a_read_and_errs_until_the_next(
        tmp_path: Path) -> None:
    """Two pods of a group of three: the read finds no third, and the pod gets upstream's
    rejection (parked until an event). Retried within the second, before a read is allowed
    again, it gets an Error (retried after its backoff), not a verdict nothing was read for."""
    async def scenario(server: FakeApiServer, client: Any, runtime: Any) -> Any:
        now = [1000.0]
        pods_budget(runtime.live).clock = lambda: now[0]
        server.hold_watches("pods")
        server.put(_member(1))
        body = json.dumps({"Pod": _member(0), "NodeNames": ["n1"]}).encode()
        replies = [(await client.post("/filter", content=body)).json()]
        replies.append((await client.post("/filter", content=body)).json())
        now[0] += 1.0
        replies.append((await client.post("/filter", content=body)).json())
        lists = [r for r in server.requests
                 if r.method == "GET" and r.path == f"/api/v1/namespaces/{NS}/pods"]
        return replies, len(lists)

    (read, retried, later), lists = _run(tmp_path, scenario, policy=GANG_POLICY,
                                         cluster=_gang, waits_for="uid-w-0")
    short = ("pre-filter pod w-0 cannot find enough sibling pods, current pods number: 2, "
             "minMember of group: 3")
    assert read["FailedAndUnresolvableNodes"] == {"n1": short} and not read["Error"], read
    assert retried["Error"].startswith(short + " (answered as an error, so kube-scheduler retries")
    assert later["FailedAndUnresolvableNodes"] == {"n1": short}, later
    assert lists == 2


QUOTA_POLICY = {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
                "plugins": {"filter": {"enabled": [{"name": "NodeResourcesFit"},
                                                   {"name": "CapacityScheduling"}]}}}


def _quota_full(server: FakeApiServer) -> None:
    server.put(ko.node("n1", cpu="8", memory="8Gi"))
    server.put({"kind": "ElasticQuota", "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                "metadata": {"name": "quota", "namespace": NS},
                "spec": {"min": {"cpu": "1", "memory": "8Gi"},
                         "max": {"cpu": "1", "memory": "8Gi"}}})
    server.put(ko.pod("first", NS, cpu="1", node_name="n1", phase="Running", uid="uid-first"))


def test_a_pod_waiting_on_its_quota_reads_its_namespace_when_refused(tmp_path: Path) -> None:
    """The quota's pod gone at the API server, not yet in the extender's watch: the waiting
    pod's refusal reads the namespace's pods first, and the pod passes. Refused again within
    the second (the quota full again), it gets the refusal as it stands (no Error: a quota is
    often full for long); a second later, after a read, the refusal again."""
    waiting = ko.pod("waiting", NS, cpu="1", uid="uid-waiting")
    body = json.dumps({"Pod": waiting, "NodeNames": ["n1"]}).encode()

    async def scenario(server: FakeApiServer, client: Any, runtime: Any) -> Any:
        now = [1000.0]
        pods_budget(runtime.live).clock = lambda: now[0]
        server.hold_watches("pods")
        server.delete("Pod", NS, "first")
        passed = (await client.post("/filter", content=body)).json()
        gone = "uid-first" not in runtime.state.pods
        server.put(ko.pod("again", NS, cpu="1", node_name="n1", phase="Running",
                          uid="uid-again"))
        server.release_watches("pods")
        await eventually(lambda: "uid-again" in runtime.state.pods, "the new pod watched")
        retried = (await client.post("/filter", content=body)).json()  # the same second
        now[0] += 1.0
        refused = (await client.post("/filter", content=body)).json()
        return passed, gone, refused, retried

    passed, gone, refused, retried = _run(tmp_path, scenario, policy=QUOTA_POLICY,
                                          cluster=_quota_full, waits_for="uid-first")
    assert passed["NodeNames"] == ["n1"], passed
    assert gone
    over = f"Pod {NS}/waiting is rejected in PreFilter because ElasticQuota {NS} is more than Max"
    for reply in (retried, refused):  # within the second, and after a read: the refusal
        assert {**reply["FailedNodes"], **reply["FailedAndUnresolvableNodes"]} == {"n1": over}
        assert not reply["Error"], reply


def test_the_api_failing_leaves_the_state_as_it_is(tmp_path: Path) -> None:
    async def scenario(server: FakeApiServer, client: Any, runtime: Any) -> Any:
        server.hold_watches("pods")
        server.delete("Pod", NS, "victim")
        server.inject(Fault("status", path="/api/v1/pods", watch=False, status=500))
        reply = (await client.post("/filter", content=_filter(_preemptor()))).json()
        return reply, "uid-victim" in runtime.state.pods

    reply, kept = _run(tmp_path, scenario)
    assert reply["Error"] == "" and not reply.get("NodeNames"), reply
    assert kept  # the rejection the watch's lag gives, as before: no worse


def test_an_assumed_pod_the_list_does_not_show_yet_stays(tmp_path: Path) -> None:
    async def scenario(server: FakeApiServer, client: Any, runtime: Any) -> Any:
        server.hold_watches("pods")
        server.delete("Pod", NS, "victim")
        # A pod this extender has just bound there, its binding not in the list yet.
        bound = k8s.convert(ko.pod("fresh", NS, cpu="1", uid="uid-fresh", priority=0), k8s.Pod)
        assume(runtime.state, PodView.from_k8s(bound), "uid-fresh", "n1", 30.0)
        reply = (await client.post("/filter", content=_filter(_preemptor()))).json()
        return reply, set(runtime.state.nodes["n1"].pods)

    reply, left = _run(tmp_path, scenario)
    assert left == {"uid-fresh"}
    assert not reply.get("NodeNames"), reply  # 1 of 2 CPUs still taken by the bound pod


def test_what_the_catching_up_deleted_is_recorded_and_replays(tmp_path: Path) -> None:
    async def scenario(server: FakeApiServer, client: Any, runtime: Any) -> Any:
        server.hold_watches("pods")
        server.delete("Pod", NS, "victim")
        reply = (await client.post("/filter", content=_filter(_preemptor()))).json()
        server.release_watches("pods")
        await eventually(lambda: _deleted(runtime) == 1, "the watch's DELETED")
        return reply

    reply = _run(tmp_path, scenario, "--record", str(tmp_path / "rec"))
    assert reply["NodeNames"] == ["n1"]
    report = replay_file(tmp_path / "rec" / "recording-1.jsonl")
    assert report.ok, report.summary()
    assert report.compared == 1


def _victim_pending(server: FakeApiServer) -> None:
    server.put(ko.node("n1", cpu="2", memory="8Gi"))
    server.put(ko.pod("victim", NS, cpu="2", memory="1Gi", uid="uid-victim", priority=0))


def _victim_absent(server: FakeApiServer) -> None:
    server.put(ko.node("n1", cpu="2", memory="8Gi"))
    server.put(ko.pod("other", NS, cpu="1", memory="1Gi", uid="uid-other", priority=0))


def _bind_victim(server: FakeApiServer) -> None:
    server.put(ko.pod("victim", NS, cpu="2", memory="1Gi", node_name="n1", phase="Running",
                      uid="uid-victim", priority=0))


@pytest.mark.parametrize("cluster, known", [(_victim_pending, "uid-victim"),
                                            (_victim_absent, "uid-other")],
                         ids=["pending-then-bound", "created-bound"])
def test_a_proposed_victim_bound_before_the_watch_says_so_counts(
        tmp_path: Path, cluster: Any, known: str) -> None:
    async def scenario(server: FakeApiServer, client: Any, runtime: Any) -> Any:
        server.hold_watches("pods")  # kube-scheduler saw the binding, the extender not yet
        _bind_victim(server)
        before = len(_pod_lists(server))
        reply = (await client.post("/preempt", content=_preempt(["uid-victim"]))).json()
        placed = runtime.state.pods["uid-victim"].node_name
        metrics = (await client.get("/metrics")).text
        return reply, _pod_lists(server)[before:], placed, metrics

    reply, listed, placed, metrics = _run(tmp_path, scenario, cluster=cluster, waits_for=known)
    assert reply["NodeNameToMetaVictims"] == {
        "n1": {"Pods": [{"UID": "uid-victim"}], "NumPDBViolations": 0}}, reply
    assert listed == ["spec.nodeName=n1,status.phase!=Succeeded,status.phase!=Failed"]
    assert placed == "n1"
    assert "extender_informer_pods_seen_before_watch_total 1.0" in metrics


def test_a_preempt_whose_victims_the_state_places_lists_nothing(tmp_path: Path) -> None:
    async def scenario(server: FakeApiServer, client: Any, runtime: Any) -> Any:
        before = len(_pod_lists(server))
        reply = (await client.post("/preempt", content=_preempt(["uid-victim"]))).json()
        return reply, _pod_lists(server)[before:]

    reply, listed = _run(tmp_path, scenario)
    assert reply["NodeNameToMetaVictims"]["n1"]["Pods"] == [{"UID": "uid-victim"}]
    assert listed == []


def test_a_watch_already_past_the_list_is_not_overruled(tmp_path: Path) -> None:
    """A list older than what the watch has delivered changes nothing: a pod the watch has
    deleted since must not come back."""
    async def scenario(server: FakeApiServer, client: Any, runtime: Any) -> Any:
        server.hold_watches("pods")
        _bind_victim(server)
        informer = runtime.live.informers["pods"]
        informer.resource_version = str(10**12)  # as if the watch had delivered far more
        reply = (await client.post("/preempt", content=_preempt(["uid-victim"]))).json()
        return reply, runtime.state.pods["uid-victim"].node_name, len(_pod_lists(server))

    reply, placed, lists = _run(tmp_path, scenario, cluster=_victim_pending)
    assert lists == 1 and placed == ""  # listed, and nothing applied
    assert reply["NodeNameToMetaVictims"] == {}, reply  # the pod fits without victims: dropped


def _caught_up_preempt(offloaded: bool = False) -> Any:
    async def scenario(server: FakeApiServer, client: Any, runtime: Any) -> Any:
        if offloaded:
            runtime.offload.threshold = 1  # every body answered in the worker thread
        server.hold_watches("pods")
        _bind_victim(server)
        reply = (await client.post("/preempt", content=_preempt(["uid-victim"]))).json()
        server.release_watches("pods")
        await eventually(lambda: runtime.live.counters.events[("pods", "MODIFIED")] >= 1,
                         "the watch's MODIFIED")
        return reply, runtime.state.pods["uid-victim"].node_name

    return scenario


def test_a_preempt_answered_off_the_loop_is_caught_up_too(tmp_path: Path) -> None:
    reply, placed = _run(tmp_path, _caught_up_preempt(offloaded=True), cluster=_victim_pending)
    assert reply["NodeNameToMetaVictims"]["n1"]["Pods"] == [{"UID": "uid-victim"}], reply
    assert placed == "n1"


def test_a_caught_up_preempt_is_recorded_and_replays(tmp_path: Path) -> None:
    reply, _ = _run(tmp_path, _caught_up_preempt(), "--record", str(tmp_path / "rec"),
                    cluster=_victim_pending)
    assert reply["NodeNameToMetaVictims"]["n1"]["Pods"] == [{"UID": "uid-victim"}], reply
    path = tmp_path / "rec" / "recording-1.jsonl"
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    ins = [e for e in entries if e["record"] == "in"]
    assert [e["verb"] for e in ins] == ["preempt", "preempt"]  # asked again after the catch-up
    report = replay_file(path)
    assert report.ok, report.summary()
    assert report.compared == 1


def _node_requests(server: FakeApiServer) -> list[str]:
    return [r.path for r in server.requests
            if r.method == "GET" and r.path.startswith("/api/v1/nodes/")]


def _filter_on(pod: dict[str, Any], *nodes: str) -> bytes:
    return json.dumps({"Pod": pod, "NodeNames": list(nodes)}, separators=(",", ":")).encode()


@pytest.mark.parametrize("room", [True, False], ids=["room", "full"])
def test_a_node_added_before_the_watch_says_so_is_judged(tmp_path: Path, room: bool) -> None:
    """A node a cluster autoscaler has just added, for the very pod that waits: kube-scheduler
    names it at once, and the extender's node watch is behind. The node is read, with the pods
    already bound to it (a DaemonSet's), and judged as kube-scheduler judges it."""
    async def scenario(server: FakeApiServer, client: Any, runtime: Any) -> Any:
        server.hold_watches("nodes")
        server.hold_watches("pods")
        server.put(ko.node("n2", cpu="2", memory="8Gi"))
        server.put(ko.pod("daemon", NS, cpu="500m" if room else "1500m", memory="1Gi",
                          node_name="n2", phase="Running", uid="uid-daemon", priority=0))
        pod = ko.pod("waiting", NS, cpu="1", memory="1Gi", uid="uid-waiting")
        before = len(_node_requests(server))
        reply = (await client.post("/filter", content=_filter_on(pod, "n1", "n2"))).json()
        metrics = (await client.get("/metrics")).text
        return reply, _node_requests(server)[before:], metrics

    reply, asked, metrics = _run(tmp_path, scenario)
    assert asked == ["/api/v1/nodes/n2"]
    if room:
        assert reply["NodeNames"] == ["n2"], reply  # n1 is full with the victim
    else:
        assert reply["FailedNodes"]["n2"] == "Insufficient cpu", reply
    assert "extender_informer_nodes_seen_before_watch_total 1.0" in metrics
    assert "extender_informer_pods_seen_before_watch_total 1.0" in metrics


def test_a_node_no_one_has_stays_unknown_and_is_asked_for_once(tmp_path: Path) -> None:
    async def scenario(server: FakeApiServer, client: Any, runtime: Any) -> Any:
        pod = ko.pod("waiting", NS, cpu="1", memory="1Gi", uid="uid-waiting")
        before = len(_node_requests(server))
        reply = (await client.post("/filter", content=_filter_on(pod, "n1", "gone"))).json()
        return reply, _node_requests(server)[before:], sorted(runtime.state.nodes)

    reply, asked, nodes = _run(tmp_path, scenario)
    assert asked == ["/api/v1/nodes/gone"]  # one catch-up, not a loop
    assert reply["FailedNodes"]["gone"] == "node(s) were not found in the extender's cluster state"
    assert nodes == ["n1"]


def test_a_preempt_naming_a_node_not_watched_yet_counts_its_pods(tmp_path: Path) -> None:
    async def scenario(server: FakeApiServer, client: Any, runtime: Any) -> Any:
        server.hold_watches("nodes")
        server.hold_watches("pods")
        server.put(ko.node("n2", cpu="2", memory="8Gi"))
        server.put(ko.pod("low", NS, cpu="2", memory="1Gi", node_name="n2", phase="Running",
                          uid="uid-low", priority=0))
        body = json.dumps({"Pod": _preemptor(nominated=""), "NodeNameToMetaVictims": {
            "n2": {"Pods": [{"UID": "uid-low"}], "NumPDBViolations": 0}}},
            separators=(",", ":")).encode()
        return (await client.post("/preempt", content=body)).json()

    reply = _run(tmp_path, scenario)
    assert reply["NodeNameToMetaVictims"] == {
        "n2": {"Pods": [{"UID": "uid-low"}], "NumPDBViolations": 0}}, reply


def test_a_prioritize_naming_a_node_not_watched_yet_scores_it(tmp_path: Path) -> None:
    """A prioritize-only registration (no filter verb before it) naming a node just added:
    scored from the node as the API server has it, not as an unknown one (0)."""
    async def scenario(server: FakeApiServer, client: Any, runtime: Any) -> Any:
        server.hold_watches("nodes")
        server.put(ko.node("n2", cpu="8", memory="32Gi"))
        pod = ko.pod("waiting", NS, cpu="1", memory="1Gi", uid="uid-waiting")
        reply = (await client.post("/prioritize", content=_filter_on(pod, "n1", "n2"))).json()
        return {entry["Host"]: entry["Score"] for entry in reply}

    scores = _run(tmp_path, scenario)
    # LeastAllocated: n1's cpu taken by the victim, n2 nearly empty (0 for a node not found).
    assert scores == {"n1": 4, "n2": 9}, scores


def _tainted(server: FakeApiServer) -> None:
    tainted = ko.node("n1", cpu="2", memory="8Gi")
    tainted["spec"]["taints"] = [{"key": "example.com/maintenance", "effect": "NoSchedule"}]
    server.put(tainted)


def test_a_node_freed_before_the_watch_says_so_takes_the_pod(tmp_path: Path) -> None:
    """kube-scheduler retries a waiting pod once it sees a taint go (a new node turning Ready,
    a maintenance over); the extender's node watch is behind. A filter that passes none of a
    few candidates reads them again on that guess."""
    async def scenario(server: FakeApiServer, client: Any, runtime: Any) -> Any:
        guess_budget(runtime.live).node_interval = 0  # the refusal's own guess aside
        pod = ko.pod("waiting", NS, cpu="1", memory="1Gi", uid="uid-waiting")
        refused = (await client.post("/filter", content=_filter_on(pod, "n1"))).json()
        server.hold_watches("nodes")
        server.update("Node", "", "n1", lambda n: n["spec"].pop("taints"))
        before = len(_node_requests(server))
        reply = (await client.post("/filter", content=_filter_on(pod, "n1"))).json()
        metrics = (await client.get("/metrics")).text
        return refused, reply, _node_requests(server)[before:], metrics

    refused, reply, asked, metrics = _run(tmp_path, scenario, cluster=_tainted, waits_for=None)
    assert refused["FailedAndUnresolvableNodes"] == {"n1": "node(s) had untolerated taint(s)"}
    assert reply["NodeNames"] == ["n1"], reply
    assert asked == ["/api/v1/nodes/n1"]
    assert "extender_informer_nodes_seen_before_watch_total 1.0" in metrics


def _many_full(server: FakeApiServer) -> None:
    for i in range(17):
        server.put(ko.node(f"n{i}", cpu="1", memory="8Gi"))


@pytest.mark.parametrize("candidates, reads", [(16, 10), (17, 0)])
def test_a_guess_reads_only_a_few_nodes_refused_all(tmp_path: Path, candidates: int,
                                                    reads: int) -> None:
    """More candidates than `MAX_NODES`, all refused, is the policy speaking (the pod fits
    nowhere by the extender's rules), not a watch behind: nothing is read. Fewer are read
    within the budget's 10 nodes a second."""
    async def scenario(server: FakeApiServer, client: Any, runtime: Any) -> Any:
        await eventually(lambda: len(runtime.state.nodes) == 17, "the nodes")
        pod = ko.pod("big", NS, cpu="2", memory="1Gi", uid="uid-big")
        before = len(_node_requests(server))
        names = [f"n{i}" for i in range(candidates)]
        reply = (await client.post("/filter", content=_filter_on(pod, *names))).json()
        return reply, len(_node_requests(server)) - before

    reply, asked = _run(tmp_path, scenario, cluster=_many_full, waits_for=None)
    refused = {**reply["FailedNodes"], **reply["FailedAndUnresolvableNodes"]}
    assert not reply["NodeNames"] and len(refused) == candidates
    assert asked == reads


def test_the_guess_budget() -> None:
    now = [100.0]
    budget = GuessBudget(node_interval=1.0, per_second=4, clock=lambda: now[0])
    assert budget.allow(["a", "b"]) == ["a", "b"]
    assert budget.allow(["a", "c"]) == ["c"]  # a was read this second
    assert budget.allow(["a"]) == []
    assert budget.allow(["d", "e"]) == ["d"]  # the fourth node this second, and no more
    now[0] += 0.5
    assert budget.allow(["e"]) == []
    now[0] += 0.5
    assert budget.allow(["a", "e"]) == ["a", "e"]


def test_the_preempt_answers_are_kept_a_while_and_only_so_many() -> None:
    now = [100.0]
    answers = PreemptAnswers(ttl=60.0, size=2, clock=lambda: now[0])
    answers.remember("a", ["n1", "n2"])
    answers.remember("b", ["n3"])
    assert answers.nodes("a") == {"n1", "n2"} and answers.nodes("c") == frozenset()
    answers.remember("c", ["n4"])  # the oldest answer goes
    assert answers.nodes("a") == frozenset() and answers.nodes("b") == {"n3"}
    answers.remember("b", [])  # kept nothing this time
    assert answers.nodes("b") == frozenset()
    now[0] += 61
    assert answers.nodes("c") == frozenset()


def test_pods_that_fit_nowhere_do_not_flood_the_api_server(tmp_path: Path) -> None:
    """Many pending pods, each refused on the same few nodes by the extender's own rules: each
    node is read once in the budget's interval, however many filters guess."""
    async def scenario(server: FakeApiServer, client: Any, runtime: Any) -> Any:
        await eventually(lambda: len(runtime.state.nodes) == 17, "the nodes")
        guess_budget(runtime.live).node_interval = 60.0  # the whole test within one interval
        before = len(_node_requests(server)), len(_pod_lists(server))
        for i in range(30):
            pod = ko.pod(f"big-{i}", NS, cpu="2", memory="1Gi", uid=f"uid-big-{i}")
            reply = (await client.post("/filter", content=_filter_on(pod, "n0", "n1", "n2"))).json()
            assert not reply["NodeNames"]
        return len(_node_requests(server)) - before[0], len(_pod_lists(server)) - before[1]

    node_reads, pod_lists = _run(tmp_path, scenario, cluster=_many_full, waits_for=None)
    assert (node_reads, pod_lists) == (3, 3)
