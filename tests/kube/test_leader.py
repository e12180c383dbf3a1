"""Leader election with client-go's semantics, between candidates sharing one Lease store
(optimistic concurrency as the API server does it) on a clock the test moves."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from extender.kube.client import ApiError
from extender.state.leader import ElectionConfig, LeaderElector


class LeaseStore:
    """The API server's part: one object per path, a resourceVersion, 409 on a stale PUT."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.version = 0
        self.down = False

    def _check(self) -> None:
        if self.down:
            raise ApiError(503, "ServiceUnavailable", "the API server is down")

    async def get_object(self, path: str) -> dict[str, Any]:
        self._check()
        if path not in self.objects:
            raise ApiError(404, "NotFound", "not found")
        found = copy.deepcopy(self.objects[path])
        await asyncio.sleep(0)  # a round trip: others may read (and write) meanwhile
        return found

    async def create_object(self, collection: str, obj: dict[str, Any]) -> dict[str, Any]:
        self._check()
        path = f"{collection}/{obj['metadata']['name']}"
        if path in self.objects:
            raise ApiError(409, "AlreadyExists", "exists")
        return self._store(path, obj)

    async def replace_object(self, path: str, obj: dict[str, Any]) -> dict[str, Any]:
        self._check()
        current = self.objects[path]
        if obj["metadata"].get("resourceVersion") != current["metadata"]["resourceVersion"]:
            raise ApiError(409, "Conflict", "the object has been modified")
        return self._store(path, obj)

    def _store(self, path: str, obj: dict[str, Any]) -> dict[str, Any]:
        """`obj` stored at `path` under a new resourceVersion; a copy of what is stored."""
        self.version += 1
        stored = {**copy.deepcopy(obj), "metadata": {**obj["metadata"],
                                                     "resourceVersion": str(self.version)}}
        self.objects[path] = stored
        return copy.deepcopy(stored)

    def spec(self) -> dict[str, Any]:
        (lease,) = self.objects.values()
        return lease["spec"]


def elector(store: LeaseStore, identity: str, now: list[float],
            events: list[str]) -> LeaderElector:
    config = ElectionConfig(namespace="ns", name="ext", lease_duration=15, renew_deadline=10,
                            retry_period=2, identity=identity)
    return LeaderElector(store, config,  # type: ignore[arg-type]
                         on_started_leading=lambda: events.append(f"{identity} leads"),
                         on_stopped_leading=lambda: events.append(f"{identity} stops"),
                         clock=lambda: now[0], wall=lambda: 1_800_000_000 + now[0])


@pytest.mark.anyio
async def test_one_acquires_the_other_waits_out_the_lease_duration() -> None:
    store, now, events = LeaseStore(), [0.0], []
    a, b = elector(store, "a", now, events), elector(store, "b", now, events)
    assert await a.try_acquire_or_renew() is True
    assert store.spec()["holderIdentity"] == "a" and store.spec()["leaseTransitions"] == 0
    assert await b.try_acquire_or_renew() is False
    assert b.not_leader_reason() == "not the leader: the lease ns/ext is held by a"
    # a stops renewing (it crashed): b observes the same record for the lease duration, on
    # its own clock, then takes over; one transition.
    now[0] += 14.9
    assert await b.try_acquire_or_renew() is False
    now[0] += 0.2
    assert await b.try_acquire_or_renew() is True
    assert store.spec()["holderIdentity"] == "b" and store.spec()["leaseTransitions"] == 1
    # a's renewal now finds the lease taken: it is no longer the leader.
    assert await a.try_acquire_or_renew() is False


@pytest.mark.anyio
async def test_a_renewed_lease_is_never_taken_and_a_stale_write_loses() -> None:
    store, now, events = LeaseStore(), [0.0], []
    a, b = elector(store, "a", now, events), elector(store, "b", now, events)
    assert await a.try_acquire_or_renew()
    for _ in range(20):  # a renews every 2 s: b never sees the record stand still 15 s
        now[0] += 2.0
        assert await a.try_acquire_or_renew()
        assert not await b.try_acquire_or_renew()
    # a stops; b and c both see the record expire and both read it before either writes:
    # the API server's optimistic concurrency lets exactly one of them take it.
    c = elector(store, "c", now, events)
    assert not await c.try_acquire_or_renew()
    now[0] += 16.0
    results = await asyncio.gather(b.try_acquire_or_renew(), c.try_acquire_or_renew(),
                                   return_exceptions=True)
    assert results[0] is True and isinstance(results[1], ApiError) and results[1].code == 409
    assert store.spec()["holderIdentity"] == "b" and store.spec()["leaseTransitions"] == 1


@pytest.mark.anyio
async def test_the_leader_stops_leading_when_renewals_fail_past_the_deadline() -> None:
    store, now, events = LeaseStore(), [0.0], []
    a = elector(store, "a", now, events)
    stopped_at: list[float] = []
    a.on_stopped_leading = lambda: stopped_at.append(now[0])
    a.on_started_leading = lambda: events.append("a leads")
    import extender.state.leader as leader_module
    real_sleep = leader_module.asyncio.sleep
    renewals: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        now[0] += seconds
        if now[0] > 6:
            store.down = True  # renewals fail from here on
        elif a.is_leader:
            renewals.append(now[0])
        if now[0] > 40:
            raise asyncio.CancelledError
        await real_sleep(0)

    leader_module.asyncio.sleep = fake_sleep  # type: ignore[assignment]
    try:
        with pytest.raises(asyncio.CancelledError):
            await a.run()
    finally:
        leader_module.asyncio.sleep = real_sleep  # type: ignore[assignment]
    assert events[:1] == ["a leads"] and not a.is_leader
    assert a.last_error.startswith("503")
    # It stopped once no renewal had succeeded for the renew deadline (10 s after the last, at
    # 6 s): before the lease (15 s) could expire for anyone else.
    assert renewals[-1] == 6.0 and 16.0 <= stopped_at[0] < 6.0 + 15.0


@pytest.mark.anyio
async def test_release_hands_over_at_once() -> None:
    store, now, events = LeaseStore(), [0.0], []
    a, b = elector(store, "a", now, events), elector(store, "b", now, events)
    assert await a.try_acquire_or_renew()
    assert not await b.try_acquire_or_renew()
    await a.release()
    assert store.spec()["holderIdentity"] == "" and store.spec()["leaseDurationSeconds"] == 1
    assert await b.try_acquire_or_renew()  # no wait for the 15 s


def test_client_gos_configuration_rules() -> None:
    assert ElectionConfig("ns").problems() == []
    assert ElectionConfig("ns", lease_duration=10, renew_deadline=10).problems() == [
        "--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline"]
    assert ElectionConfig("ns", renew_deadline=2, retry_period=2).problems() == [
        "--leader-elect-renew-deadline must be greater than 1.2 × --leader-elect-retry-period"]


@pytest.mark.anyio
async def test_a_refused_lease_is_a_warning_a_lost_race_is_not(
        caplog: pytest.LogCaptureFixture) -> None:
    # A 403 (the Lease's namespace or RBAC) means it never leads: it was logged at info every
    # retry period, where client-go logs an error.
    import logging

    class Forbidden(LeaseStore):
        async def get_object(self, path: str) -> dict[str, Any]:
            raise ApiError(403, "Forbidden", 'leases.coordination.k8s.io "ext" is forbidden')

    now, events = [0.0], []
    with caplog.at_level(logging.INFO, logger="extender"):
        assert await elector(Forbidden(), "a", now, events)._attempt() is False
        store = LeaseStore()
        store.down = True
        assert await elector(store, "b", now, events)._attempt() is False
    levels = {r.getMessage().split(": ", 1)[1][:3]: r.levelname for r in caplog.records
              if r.getMessage().startswith("leader election: ")}
    assert levels == {"403": "WARNING", "503": "INFO"}, levels
