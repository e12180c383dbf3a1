"""`PermitBinder`: Coscheduling's Permit held in the bind verb (no API server: the inner
binder is a recorder)."""

from __future__ import annotations

import asyncio

import pytest

from extender.engine.args import CoschedulingArgs
from extender.engine.evaluate import cluster_from_objects
from extender.engine.plugins.coscheduling import PodGroupManager
from extender.state.binder import BindError
from extender.state.permit import PermitBinder, hold_limit, http_timeout_for
from tests.engine.upstream.builders import node, pod

GROUP = "scheduling.x-k8s.io/pod-group"


class Recorder:
    def __init__(self, fail: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        self.bound: list[tuple[str, str]] = []
        self.deadlines: dict[str, float | None] = {}
        self.fail = fail

    async def bind(self, namespace: str, name: str, uid: str, node: str, *,
                   deadline: float | None = None) -> None:
        self.deadlines[name] = deadline
        await asyncio.sleep(0)
        if name in self.fail:
            raise BindError(f"pod {namespace}/{name} not found", "not_found")
        self.bound.append((name, node))


def group(name: str, min_member: int, timeout: int | None = None) -> dict:
    spec: dict = {"minMember": min_member}
    if timeout is not None:
        spec["scheduleTimeoutSeconds"] = timeout
    return {"kind": "PodGroup", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def setup(objects: list[dict], inner: Recorder, http_timeout: float = 30.0,
          wait: int = 60) -> PermitBinder:
    state = cluster_from_objects([node("n1", allocatable={"cpu": "64", "memory": "64Gi",
                                                          "pods": "110"}), *objects])
    manager = PodGroupManager(CoschedulingArgs(permitWaitingTimeSeconds=wait))
    return PermitBinder(inner, state, manager, http_timeout=http_timeout, bind_deadline=2.0)


def member(name: str, group_name: str = "pg") -> dict:
    return pod(name, labels={GROUP: group_name}, requests={"cpu": "1"})


def uid(name: str) -> str:
    return f"uid-default-{name}"


def test_timeout_arithmetic_is_one_fact() -> None:
    # What render-config writes leaves exactly the permit wait for holding.
    assert hold_limit(http_timeout_for(60, 4), 4) == 61.0
    assert hold_limit(5, 4) == 0.0


@pytest.mark.anyio
async def test_group_binds_together_once_complete() -> None:
    inner = Recorder()
    binder = setup([group("pg", 3), *(member(f"m{i}") for i in range(3))], inner)
    first = asyncio.create_task(binder.bind("default", "m0", uid("m0"), "n1"))
    second = asyncio.create_task(binder.bind("default", "m1", uid("m1"), "n1"))
    await asyncio.sleep(0.05)
    assert inner.bound == [] and binder.held_count() == 2
    await binder.bind("default", "m2", uid("m2"), "n1")
    await asyncio.gather(first, second)
    assert sorted(inner.bound) == [("m0", "n1"), ("m1", "n1"), ("m2", "n1")]
    assert binder.held_count() == 0


@pytest.mark.anyio
async def test_a_released_gang_binds_with_the_time_its_hold_left() -> None:
    # The call's budget is kube-scheduler's httpTimeout (30 s here) less a 1 s margin: a
    # member held 0.5 s may take ~28.5 s to bind (a gang of thousands binds through one API
    # server), never less than the bind deadline (2 s).
    now = [100.0]
    inner = Recorder()
    binder = setup([group("pg", 2), *(member(f"m{i}") for i in range(2))], inner)
    binder.clock = lambda: now[0]
    first = asyncio.create_task(binder.bind("default", "m0", uid("m0"), "n1"))
    await asyncio.sleep(0.01)
    now[0] += 0.5
    await binder.bind("default", "m1", uid("m1"), "n1")
    await first
    assert inner.deadlines == {"m0": 28.5, "m1": 29.0}
    # A pod of no group binds with the binder's own deadline.
    await binder.bind("default", "loner", "uid-loner", "n1")
    assert inner.deadlines["loner"] is None


@pytest.mark.anyio
async def test_a_bind_past_the_held_bound_is_refused_and_retried() -> None:
    inner = Recorder()
    binder = setup([group("pg", 3), *(member(f"m{i}") for i in range(3))], inner)
    binder.max_held = 1
    first = asyncio.create_task(binder.bind("default", "m0", uid("m0"), "n1"))
    await asyncio.sleep(0.01)
    with pytest.raises(BindError, match=r"1 binds are held at Permit already"):
        await binder.bind("default", "m1", uid("m1"), "n1")
    assert binder.held_count() == 1 and not first.done()
    first.cancel()


@pytest.mark.anyio
async def test_pods_already_bound_count_towards_the_quorum() -> None:
    inner = Recorder()
    bound = pod("m0", labels={GROUP: "pg"}, node="n1", requests={"cpu": "1"})
    binder = setup([group("pg", 2), bound, member("m1")], inner)
    await asyncio.wait_for(binder.bind("default", "m1", uid("m1"), "n1"), 1)
    assert inner.bound == [("m1", "n1")]


@pytest.mark.anyio
async def test_timeout_rejects_every_held_bind_of_the_group() -> None:
    inner = Recorder()
    binder = setup([group("pg", 3, timeout=1), *(member(f"m{i}") for i in range(3)),
                    member("other", "pg2"), group("pg2", 1)], inner)
    loop = asyncio.get_running_loop()
    started = loop.time()
    first = asyncio.create_task(binder.bind("default", "m0", uid("m0"), "n1"))
    await asyncio.sleep(0.3)
    second = asyncio.create_task(binder.bind("default", "m1", uid("m1"), "n1"))
    # Another group's pod is not held behind them.
    await asyncio.wait_for(binder.bind("default", "other", uid("other"), "n1"), 0.2)
    results = await asyncio.gather(first, second, return_exceptions=True)
    elapsed = loop.time() - started
    assert [str(r) for r in results] == [
        "pod default/m0 rejected at Permit: rejected due to timeout after waiting 1s at plugin Coscheduling",
        "pod default/m1 rejected at Permit: rejection in Unreserve at plugin Coscheduling"]
    assert 1.0 <= elapsed < 1.5
    assert inner.bound == [("other", "n1")]
    assert binder.manager.last_failed["default/pg"] > 0


@pytest.mark.anyio
async def test_wait_is_capped_below_the_http_timeout() -> None:
    binder = setup([group("pg", 2), *(member(f"m{i}") for i in range(2))], Recorder(),
                   http_timeout=3.5)  # 3.5 - bind deadline 2 - margin 1 = 0.5 s
    with pytest.raises(BindError, match="waiting 500ms at plugin Coscheduling"):
        await asyncio.wait_for(binder.bind("default", "m0", uid("m0"), "n1"), 2)


@pytest.mark.anyio
async def test_a_failed_bind_of_the_last_pod_rejects_nobody_already_allowed() -> None:
    inner = Recorder(fail={"m1"})
    binder = setup([group("pg", 2), *(member(f"m{i}") for i in range(2))], inner)
    first = asyncio.create_task(binder.bind("default", "m0", uid("m0"), "n1"))
    await asyncio.sleep(0.05)
    with pytest.raises(BindError, match="not found"):
        await binder.bind("default", "m1", uid("m1"), "n1")
    await first  # it was allowed before the failure: it binds
    assert inner.bound == [("m0", "n1")]
    assert "default/pg" in binder.manager.last_failed


@pytest.mark.anyio
async def test_missing_pod_group_is_rejected_and_unknown_pods_pass() -> None:
    inner = Recorder()
    binder = setup([member("m0", "ghost")], inner)
    with pytest.raises(BindError, match="rejected at Permit by Coscheduling: PodGroup not found"):
        await binder.bind("default", "m0", uid("m0"), "n1")
    await binder.bind("default", "stranger", "uid-x", "n1")
    assert inner.bound == [("stranger", "n1")]


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_timed_out_group_backs_off_in_prefilter() -> None:
    inner = Recorder()
    objects = [group("pg", 2, timeout=1), *(member(f"m{i}") for i in range(2))]
    state = cluster_from_objects([node("n1", allocatable={"cpu": "64", "memory": "64Gi",
                                                          "pods": "110"}), *objects])
    manager = PodGroupManager(CoschedulingArgs(podGroupBackoffSeconds=30))
    binder = PermitBinder(inner, state, manager, http_timeout=30, bind_deadline=2.0)
    with pytest.raises(BindError, match="timeout"):
        await binder.bind("default", "m0", uid("m0"), "n1")
    view = state.pending_pod(uid("m1"))
    assert view is not None
    status = manager.pre_filter(view, state, binder.clock())
    assert status is not None and status.reasons == ("podGroup default/pg failed recently",)
    # Without the argument there is no backoff (podGroupBackoffSeconds defaults to 0).
    plain = setup(objects, Recorder())
    with pytest.raises(BindError, match="timeout"):
        await plain.bind("default", "m0", uid("m0"), "n1")
    assert plain.manager.pre_filter(view, plain.state, plain.clock()) is None


@pytest.mark.anyio
async def test_stop_holding_answers_the_held_binds_and_holds_no_more() -> None:
    inner = Recorder()
    binder = setup([group("pg", 3), *(member(f"m{i}") for i in range(3)),
                    member("solo", "pg1"), group("pg1", 1)], inner)
    held = [asyncio.create_task(binder.bind("default", f"m{i}", uid(f"m{i}"), "n1"))
            for i in range(2)]
    while binder.held_count() < 2:
        await asyncio.sleep(0.001)
    assert binder.stop_holding("this extender is shutting down") == 2
    results = await asyncio.wait_for(asyncio.gather(*held, return_exceptions=True), 1)
    assert [str(r) for r in results] == [
        f"pod default/m{i} rejected at Permit: this extender is shutting down" for i in range(2)]
    # A member that would be held now is refused at once; a group already complete binds.
    with pytest.raises(BindError, match=r"^pod default/m2 rejected at Permit: this extender "
                       r"is shutting down$"):
        await asyncio.wait_for(binder.bind("default", "m2", uid("m2"), "n1"), 1)
    await asyncio.wait_for(binder.bind("default", "solo", uid("solo"), "n1"), 1)
    assert inner.bound == [("solo", "n1")] and binder.held_count() == 0
