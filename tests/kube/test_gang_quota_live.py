"""End to end: Coscheduling's Permit in the bind verb and CapacityScheduling's quota checks,
with `extender serve --kubeconfig` against the loopback API server, as a user runs them."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.kube import kube_objects as ko
from tests.kube.fake_apiserver import FakeApiServer
from tests.polling import free_port, stop_process, until

ROOT = Path(__file__).resolve().parents[2]
GROUP_LABEL = "scheduling.x-k8s.io/pod-group"




def _policy(tmp_path: Path, filters: list[str], post_filter: str | None = None,
            permit_wait: int | None = None) -> Path:
    policy: dict = {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
                    "plugins": {"filter": {"enabled": [{"name": n} for n in filters]}}}
    if post_filter:
        policy["plugins"]["postFilter"] = {"enabled": [{"name": post_filter}]}
    if permit_wait is not None:  # serve refuses a --scheduler-http-timeout shorter than this
        policy["pluginConfig"] = [{"name": "Coscheduling",
                                   "args": {"permitWaitingTimeSeconds": permit_wait}}]
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(policy))
    return path


class Extender:
    """`extender serve --kubeconfig` in a subprocess."""

    def __init__(self, server: FakeApiServer, tmp_path: Path, policy: Path, *extra: str) -> None:
        self.port = free_port()
        self.log_path = tmp_path / "extender.log"
        log = self.log_path.open("w")
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "extender", "serve", "--kubeconfig", str(kubeconfig),
             "--port", str(self.port), "--policy", str(policy), "--bind-deadline", "3", *extra],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        self.url = f"http://127.0.0.1:{self.port}"

    def client(self, timeout: float = 30) -> httpx.Client:
        # Plain http: verify=False reads no TLS roots (~20 ms of CPU a client; 200 pods make one each).
        return httpx.Client(base_url=self.url, timeout=timeout, verify=False)

    def wait_ready(self) -> None:
        with self.client() as client:
            def ready() -> bool:
                assert self.proc.poll() is None, self.log_path.read_text()
                try:
                    return client.get("/readyz").status_code == 200
                except httpx.TransportError:
                    return False

            until(ready, "the extender to be ready", 30)

    def metric(self, name: str) -> float:
        """An unlabelled metric's value, from /metrics."""
        with self.client() as client:
            for line in client.get("/metrics").text.splitlines():
                if line.startswith(f"{name} "):
                    return float(line.split()[1])
        raise AssertionError(f"{name} is not exported")

    def binds_held(self) -> int:
        """`extender_binds_held`: binds waiting at Coscheduling's Permit now."""
        return int(self.metric("extender_binds_held"))

    def stop(self) -> None:
        stop_process(self.proc)


@pytest.fixture
def apiserver() -> Iterator[FakeApiServer]:
    with FakeApiServer(bookmark_interval=0.5) as server:
        yield server


def _pod_group(name: str, min_member: int, timeout: int, namespace: str = "default") -> dict:
    return {"kind": "PodGroup", "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"minMember": min_member, "scheduleTimeoutSeconds": timeout}}


def _bind_body(pod: dict, node: str) -> dict:
    meta = pod["metadata"]
    return {"PodName": meta["name"], "PodNamespace": meta["namespace"], "PodUID": meta["uid"],
            "Node": node}


@pytest.mark.slow
def test_gang_binds_all_or_nothing(apiserver: FakeApiServer, tmp_path: Path) -> None:
    server = apiserver
    server.load([ko.node(f"node-{i}", cpu="16", memory="64Gi") for i in range(4)])
    groups = {"job-a": 4, "job-b": 4, "job-c": 4, "job-d": 4}
    pods: dict[str, list[dict]] = {}
    for group, size in groups.items():
        server.put(_pod_group(group, 4, timeout=4))
        pods[group] = [
            server.put(ko.pod(f"{group}-{i}", cpu="1", memory="1Gi",
                              labels={GROUP_LABEL: group, "job": group}))
            for i in range(size)]
    loner = server.put(ko.pod("loner", cpu="1", memory="1Gi"))
    # Each group's own timeout (4 s) applies; the policy's bounds it for --scheduler-http-timeout.
    policy = _policy(tmp_path, ["NodeResourcesFit", "Coscheduling"], permit_wait=10)
    extender = Extender(server, tmp_path, policy, "--scheduler-http-timeout", "15")
    try:
        extender.wait_ready()
        rng = random.Random(7)
        # job-d can only place 3 of its 4 pods: kube-scheduler never binds its fourth.
        work = [(pod, f"node-{rng.randrange(4)}", rng.uniform(0, 1.5))
                for group in groups for pod in pods[group][: 3 if group == "job-d" else 4]]
        rng.shuffle(work)

        def bind(item: tuple[dict, str, float]) -> tuple[str, str, float, float]:
            pod, node, delay = item
            time.sleep(delay)
            with extender.client() as client:
                started = time.monotonic()
                reply = client.post("/bind", json=_bind_body(pod, node)).json()
                return pod["metadata"]["name"], reply["Error"], started, time.monotonic()

        with ThreadPoolExecutor(len(work) + 1) as pool:
            futures = [pool.submit(bind, item) for item in work]
            until(lambda: extender.binds_held() >= 2, "binds of the gangs to be held", 10)
            with extender.client() as client:
                started = time.monotonic()
                lone = client.post("/bind", json=_bind_body(loner, "node-0")).json()
                lone_latency = time.monotonic() - started
            results = {name: (error, start, end)
                       for name, error, start, end in (f.result() for f in futures)}
    finally:
        extender.stop()

    # A pod of no group is bound at once, while the gangs' binds are held.
    assert lone == {"Error": ""}
    assert lone_latency < 1.0
    bound = [(ns, name) for ns, name, _, _ in server.bindings]
    assert len(bound) == len(set(bound)), "a pod was bound twice"
    for group in ("job-a", "job-b", "job-c"):
        for pod in pods[group]:
            name = pod["metadata"]["name"]
            assert results[name][0] == "", f"{name}: {results[name][0]}"
            assert ("default", name) in bound
            assert server.get("Pod", "default", name)["spec"]["nodeName"].startswith("node-")
    incomplete = [p["metadata"]["name"] for p in pods["job-d"][:3]]
    for name in incomplete:
        error, start, end = results[name]
        assert error.startswith(f"pod default/{name} rejected at Permit: "), error
        assert end - start < 15 - 3, f"{name} answered after the hold bound"
        assert ("default", name) not in bound
        assert not server.get("Pod", "default", name)["spec"].get("nodeName")
    # The first held pod timed out; the others were rejected with it, at the same moment.
    reasons = sorted(results[name][0].split(": ", 1)[1] for name in incomplete)
    assert reasons == ["rejected due to timeout after waiting 4s at plugin Coscheduling",
                       "rejection in Unreserve at plugin Coscheduling",
                       "rejection in Unreserve at plugin Coscheduling"]
    first = min(results[name][1] for name in incomplete)
    assert all(results[name][2] - first < 4 + 1.5 for name in incomplete)


def _elastic_quota(namespace: str, min_cpu: str, max_cpu: str) -> dict:
    return {"kind": "ElasticQuota", "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "metadata": {"name": "quota", "namespace": namespace},
            # A list given leaves its absent resources at 0 (upstream's reading): memory too.
            "spec": {"min": {"cpu": min_cpu, "memory": "100Gi"},
                     "max": {"cpu": max_cpu, "memory": "100Gi"}}}


@pytest.mark.slow
def test_quota_never_exceeded_by_concurrent_filter_and_bind(apiserver: FakeApiServer,
                                                             tmp_path: Path) -> None:
    server = apiserver
    nodes = [f"node-{i}" for i in range(3)]
    server.load([ko.node(name, cpu="64", memory="256Gi", pods="500") for name in nodes])
    quotas = {"team-a": ("5", "8"), "team-b": ("5", "6"), "team-c": ("2", "10")}
    for ns, (low, high) in quotas.items():
        server.put({"kind": "Namespace", "metadata": {"name": ns}})
        server.put(_elastic_quota(ns, low, high))
    rng = random.Random(11)
    pods = [server.put(ko.pod(f"p-{i}", namespace=rng.choice(list(quotas)), cpu="100m",
                              memory="64Mi"))
            for i in range(200)]
    extender = Extender(server, tmp_path, _policy(tmp_path, ["NodeResourcesFit", "CapacityScheduling"]))
    try:
        extender.wait_ready()

        def schedule(pod: dict) -> str:
            with extender.client() as client:
                request = {"Pod": pod, "NodeNames": nodes}
                reply = client.post("/filter", json=request).json()
                assert reply["Error"] == ""
                if not reply["NodeNames"]:
                    reasons = set((reply["FailedNodes"] or {}).values())
                    assert len(reasons) == 1, reasons
                    return reasons.pop()
                bound = client.post("/bind", json=_bind_body(pod, reply["NodeNames"][0])).json()
                assert bound == {"Error": ""}
                return "bound"

        with ThreadPoolExecutor(16) as pool:
            outcomes = list(pool.map(schedule, pods))
    finally:
        extender.stop()

    used = dict.fromkeys(quotas, 0)
    for pod in server.items("Pod"):
        if pod["spec"].get("nodeName"):
            used[pod["metadata"]["namespace"]] += 100  # millicores
    for ns, (_, high) in quotas.items():
        assert used[ns] <= int(high) * 1000, (ns, used)
    total_min = sum(int(low) for low, _ in quotas.values()) * 1000
    # Demand (20 cpu) is above the sum of mins (12): the quotas, not the demand, stop it, and
    # they stop it exactly at the sum of mins.
    assert sum(used.values()) == total_min, used
    assert outcomes.count("bound") == total_min // 100
    assert any(used[ns] > int(low) * 1000 for ns, (low, _) in quotas.items()), "nobody borrowed"
    rejected = {o for o in outcomes if o != "bound"}
    assert rejected and all(
        o.endswith("is rejected in PreFilter because total ElasticQuota used is more than min")
        or o.endswith("is more than Max") for o in rejected), rejected


def test_a_watch_behind_the_bind_verb_does_not_free_the_quota(apiserver: FakeApiServer,
                                                              tmp_path: Path) -> None:
    # Seen on the real control plane, with 200 pods created at once: kube-scheduler's watch
    # is ahead of the extender's, so the bind verb binds a pod whose creation the extender's
    # watch delivers afterwards. That event is older than the binding; taking it for the pod's
    # state freed its quota, and one pod too many was let in.
    server = apiserver
    server.load([ko.node("node-0", cpu="64", memory="256Gi", pods="500")])
    server.put({"kind": "Namespace", "metadata": {"name": "team"}})
    server.put(_elastic_quota("team", "200m", "200m"))
    extender = Extender(server, tmp_path, _policy(tmp_path, ["NodeResourcesFit", "CapacityScheduling"]))
    try:
        extender.wait_ready()
        server.hold_watches("pods")
        pods = [server.put(ko.pod(f"p-{i}", namespace="team", cpu="100m", memory="64Mi"))
                for i in range(3)]
        created = server.rv
        with extender.client() as client:
            for pod in pods[:2]:
                reply = client.post("/filter", json={"Pod": pod, "NodeNames": ["node-0"]}).json()
                assert reply["NodeNames"] == ["node-0"], reply
                assert client.post("/bind", json=_bind_body(pod, "node-0")).json() == {"Error": ""}
            # The watch catches up with the creations, not yet with the bindings.
            server.hold_watches("pods", through=created)
            synced = client.get("/readyz", params={"resourceVersion": str(created),
                                                   "timeoutSeconds": "10"})
            assert synced.status_code == 200, synced.text
            reply = client.post("/filter", json={"Pod": pods[2], "NodeNames": ["node-0"]}).json()
            late = extender.metric("extender_informer_late_pod_events_total")
    finally:
        server.release_watches("pods")
        extender.stop()
    assert reply["NodeNames"] == [], reply
    assert reply["FailedNodes"] == {"node-0": "Pod team/p-2 is rejected in PreFilter because "
                                              "ElasticQuota team is more than Max"}, reply
    assert [p["metadata"]["name"] for p in server.items("Pod") if p["spec"].get("nodeName")] \
        == ["p-0", "p-1"]
    assert late == 2  # p-0's and p-1's creations


def test_missing_crd_is_a_readiness_message(tmp_path: Path) -> None:
    with FakeApiServer(bookmark_interval=0.5, without=("podgroups",)) as server:
        server.load([ko.node("node-0")])
        extender = Extender(server, tmp_path, _policy(tmp_path, ["Coscheduling"]))
        try:
            with extender.client() as client:
                def answered() -> bool:
                    assert extender.proc.poll() is None, extender.log_path.read_text()
                    try:
                        return "podgroups.scheduling.x-k8s.io" in client.get("/readyz").text
                    except httpx.TransportError:
                        return False

                until(answered, "the readiness message", 30)
                ready = client.get("/readyz")
                assert ready.status_code == 503
                assert ("the CustomResourceDefinition podgroups.scheduling.x-k8s.io is not "
                        "installed" in ready.text)
                assert extender.proc.poll() is None  # still serving, not crashed
        finally:
            extender.stop()


@pytest.mark.slow
def test_a_restart_with_binds_held_loses_no_pod(apiserver: FakeApiServer, tmp_path: Path) -> None:
    server = apiserver
    server.load([ko.node("node-0", cpu="16", memory="64Gi")])
    server.put(_pod_group("job", 3, timeout=30))
    pods = [server.put(ko.pod(f"job-{i}", cpu="1", memory="1Gi", labels={GROUP_LABEL: "job"}))
            for i in range(3)]
    policy = _policy(tmp_path, ["NodeResourcesFit", "Coscheduling"], permit_wait=30)
    extender = Extender(server, tmp_path, policy, "--scheduler-http-timeout", "40")
    extender.wait_ready()

    def bind(ext: Extender, pod: dict) -> str:
        try:
            with ext.client() as client:
                return client.post("/bind", json=_bind_body(pod, "node-0")).json()["Error"]
        except httpx.TransportError as exc:  # what kube-scheduler sees when the extender dies
            return f"transport: {type(exc).__name__}"

    with ThreadPoolExecutor(2) as pool:
        held = [pool.submit(bind, extender, pod) for pod in pods[:2]]
        until(lambda: extender.binds_held() == 2, "both binds to be held (the group needs a third)")
        extender.stop()
        outcomes = [f.result(timeout=20) for f in held]
    # Shutting down, it answers the held binds with an error at once and exits on its
    # SIGTERM (uvicorn re-raises it), before `stop` would kill it: the group's wait is 30 s.
    # kube-scheduler forgets the assumed pods and retries them.
    assert extender.proc.returncode == -signal.SIGTERM, extender.log_path.read_text()
    assert outcomes == [f"pod default/job-{i} rejected at Permit: this extender is shutting "
                        "down" for i in range(2)], outcomes
    assert server.bindings == []
    # The restarted extender knows nothing of the old holds; the retried binds (and the third
    # pod's) complete the group, and every pod is bound exactly once.
    restarted = Extender(server, tmp_path, policy, "--scheduler-http-timeout", "40")
    try:
        restarted.wait_ready()
        with ThreadPoolExecutor(3) as pool:
            results = list(pool.map(lambda pod: bind(restarted, pod), pods))
    finally:
        restarted.stop()
    assert results == ["", "", ""]
    assert sorted(name for _, name, _, _ in server.bindings) == ["job-0", "job-1", "job-2"]


def test_serve_refuses_an_http_timeout_shorter_than_the_permit_wait(
        apiserver: FakeApiServer, tmp_path: Path) -> None:
    policy = _policy(tmp_path, ["NodeResourcesFit", "Coscheduling"], permit_wait=30)
    kubeconfig = apiserver.write_kubeconfig(tmp_path / "kubeconfig")
    done = subprocess.run(
        [sys.executable, "-m", "extender", "serve", "--kubeconfig", str(kubeconfig),
         "--port", str(free_port()), "--policy", str(policy), "--bind-deadline", "3",
         "--scheduler-http-timeout", "30"],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert ("--scheduler-http-timeout 30s is shorter than a bind held at Coscheduling's Permit "
            "can take: at least 35s (permitWaitingTimeSeconds 30 + --bind-deadline 3s + 2s)"
            in done.stderr), done.stderr
    assert "Traceback" not in done.stderr
