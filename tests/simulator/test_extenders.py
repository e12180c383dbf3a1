"""A running extender in the loop: kube-scheduler's wire format and score combination."""

from __future__ import annotations

import json

import httpx
import pytest

from extender.simulator.extenders import ExtenderError, HttpExtender

from .helpers import LEAST_ALLOCATED_ONLY, at, by_name, node, pod, simulate


class FakeExtender:
    """Rejects n3 (and every node for pods named reject-*), prefers n2 with Score 10."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        verb = request.url.path.rsplit("/", 1)[1]
        self.requests.append((verb, body))
        names = body["NodeNames"]
        if verb == "filter":
            if body["Pod"]["metadata"]["name"].startswith("reject"):
                return httpx.Response(200, json={"nodenames": [], "failedNodes": {
                    n: "extender says no" for n in names}, "Error": ""})
            return httpx.Response(200, json={
                "NodeNames": [n for n in names if n != "n3"], "FailedNodes": {"n3": "n3 is full"},
                "FailedAndUnresolvableNodes": {}, "Error": ""})
        if verb == "prioritize":
            return httpx.Response(200, json=[{"Host": n, "Score": 10 if n == "n2" else 0}
                                             for n in names])
        return httpx.Response(404)


def extender(handler, **kw) -> HttpExtender:
    return HttpExtender("http://extender.test/scheduler", preempt_verb="",
                        client=httpx.Client(transport=httpx.MockTransport(handler)), **kw)


CLUSTER = [node("n1", "4", "8Gi"), node("n2", "4", "8Gi"), node("n3", "4", "8Gi")]


def test_extender_filters_after_in_tree_filters_and_its_scores_decide(tmp_path):
    fake = FakeExtender()
    _, report = simulate(tmp_path, CLUSTER + [node("cordoned", "4", "8Gi", unschedulable=True)],
                         [pod("web", "1", created=at(0))], extenders=[extender(fake)])
    # Equal LeastAllocated scores everywhere; n2's Score 10 × weight 1 × 10 decides.
    assert by_name(report)["web"]["node"] == "n2"
    verbs = [verb for verb, _ in fake.requests]
    assert verbs == ["filter", "prioritize"]
    filter_args = fake.requests[0][1]
    assert set(filter_args) == {"Pod", "Nodes", "NodeNames"}
    assert filter_args["Nodes"] is None
    assert filter_args["NodeNames"] == ["n1", "n2", "n3"]  # the cordoned node never reaches it
    assert fake.requests[1][1]["NodeNames"] == ["n1", "n2"]
    assert filter_args["Pod"]["metadata"]["name"] == "web"
    assert report["extenderCalls"] == {"http://extender.test/scheduler/filter": 1,
                                       "http://extender.test/scheduler/prioritize": 1}


def test_extender_weight_scales_its_scores(tmp_path):
    # n1 already carries 2 cpu: LeastAllocated n1 = (50 + 87)/2 = 68, n2 = (75 + 87)/2 = 81.
    # Weight 1 would be n2 anyway; make the extender prefer n1 by 10 × 2 × 10 = 200.
    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if request.url.path.endswith("/filter"):
            return httpx.Response(200, json={"NodeNames": body["NodeNames"]})
        return httpx.Response(200, json=[{"Host": "n1", "Score": 10}])

    cluster = [node("n1", "4", "8Gi"), node("n2", "4", "8Gi"), pod("busy", "2", node_name="n1")]
    _, report = simulate(tmp_path, cluster, [pod("web", "1", created=at(0))],
                         extenders=[extender(handler, weight=2)])
    assert by_name(report)["web"]["node"] == "n1"


def test_nodes_only_the_extender_rejects(tmp_path):
    fake = FakeExtender()
    _, report = simulate(tmp_path, CLUSTER, [pod("reject-me", "1", created=at(0))],
                         extenders=[extender(fake)])
    rejected = by_name(report)["reject-me"]
    assert rejected["status"] == "Pending"
    assert rejected["message"].startswith("0/3 nodes are available: 3 extender says no. preemption:")


def test_extender_errors_fail_the_attempt(tmp_path):
    def broken(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500)

    _, report = simulate(tmp_path, CLUSTER, [pod("web", "1", created=at(0))],
                         extenders=[extender(broken)], max_time=15_000_000_000)
    web = by_name(report)["web"]
    assert web["status"] == "Pending"
    assert web["message"] == ("failed filter with extender at URL "
                              "http://extender.test/scheduler/filter, code 500")
    # An error has no rejecting plugin: straight to backoffQ each time. Attempts at 0, 2 (backoff
    # to 1.001, next 1 s tick), 5 (to 4.001) and 10 s (to 9.001); the next is due at 18.001.
    assert web["attempts"] == 4
    # An ignorable extender is skipped instead.
    _, report = simulate(tmp_path, CLUSTER, [pod("web", "1", created=at(0))],
                         extenders=[extender(broken, ignorable=True)])
    assert by_name(report)["web"]["status"] == "Scheduled"


def test_an_ignorable_binders_failed_bind_is_skipped_from_1_30(tmp_path):
    """kube-scheduler's extendersBinding: since 1.30 (kubernetes#122503) a failed bind of an
    ignorable extender is skipped and kube-scheduler binds the pod itself; before, and for an
    extender that is not ignorable, the bind fails and the pod is retried."""
    binds: list[str] = []

    def refuses_to_bind(request: httpx.Request) -> httpx.Response:
        verb = request.url.path.rsplit("/", 1)[1]
        body = json.loads(request.content)
        if verb == "bind":
            binds.append(body["PodName"])
            return httpx.Response(200, json={"Error": "no room in the gang's books"})
        return FakeExtender()(request)

    def run(version: str, ignorable: bool) -> dict:
        binds.clear()
        policy = {**LEAST_ALLOCATED_ONLY, "kubernetesVersion": version}
        _, report = simulate(tmp_path, CLUSTER, [pod("web", "1", created=at(0))], policy,
                             extenders=[extender(refuses_to_bind, bind_verb="bind",
                                                 ignorable=ignorable)],
                             extender_bind=True, max_time=15_000_000_000)
        return by_name(report)["web"]

    skipped = run("1.37", ignorable=True)
    assert (skipped["status"], skipped["node"], binds) == ("Scheduled", "n2", ["web"])
    for version, ignorable in (("1.29", True), ("1.37", False)):
        failed = run(version, ignorable)
        assert failed["status"] == "Pending" and len(binds) == failed["attempts"] > 1, \
            (version, ignorable, failed, binds)
        assert "no room in the gang's books" in failed["message"]


def test_http_extender_reply_handling():
    def reply(payload, status=200):
        return extender(lambda request: httpx.Response(status, json=payload))

    from .test_schedule import node_info

    nodes = [node_info("a"), node_info("b")]
    assert [n.name for n in reply({"nodeNames": ["b"]}).filter({}, nodes).passed] == ["b"]
    with pytest.raises(ExtenderError, match="not found in the input node list"):
        reply({"NodeNames": ["zzz"]}).filter({}, nodes)
    with pytest.raises(ExtenderError, match="boom"):
        reply({"Error": "boom"}).filter({}, nodes)
    assert reply({}).filter({}, nodes).passed == []  # neither field set: nothing passes
    assert reply([{"Host": "a", "Score": 3}, {"Host": "a", "Score": 4}]).prioritize({}, nodes) == {"a": 7}
    assert reply([{"Host": "a", "Score": 7.5}]).prioritize({}, nodes) == {}
    assert reply({}, status=503).prioritize({}, nodes) == {}
