"""Leader election on a `coordination.k8s.io/v1` Lease, with client-go's semantics.

Several extender replicas may run behind one Service; only the leader is Ready (so the Service
sends kube-scheduler to it) and answers the verbs, because gang holds, quota reservations and
assumed pods live in one process. As client-go's `leaderelection` package does:

- a candidate tries to acquire the Lease every `retry_period` (with up to 20 % jitter): it
  takes it when nobody holds it, or when the holder's record has not changed for
  `lease_duration` *as observed on this replica's own clock* (the record's times are never
  compared across machines);
- the leader renews every `retry_period`; when no renewal succeeds for `renew_deadline`, it
  stops leading (before any other replica may take over: `renew_deadline < lease_duration`);
- taking the Lease from another holder counts a transition and sets `acquireTime`; a leader
  that stops (shutdown) releases the Lease at once (holder emptied, one second left), so a
  standby takes over without waiting out the duration.

Updates go through the API server's optimistic concurrency (the record's resourceVersion): two
candidates cannot both win one expiry.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import logging
import random
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from extender.kube.client import ApiError, KubeClient, KubeError

log = logging.getLogger(__name__)

JITTER = 1.2


def default_identity() -> str:
    """client-go's: the hostname (the pod's name in a cluster) and a unique suffix."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


@dataclass(frozen=True)
class ElectionConfig:
    namespace: str
    name: str = "scheduler-extender"
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    identity: str = field(default_factory=default_identity)

    def problems(self) -> list[str]:
        """What client-go refuses (`NewLeaderElector`), in kube-scheduler's flag names."""
        out = []
        if self.lease_duration <= self.renew_deadline:
            out.append("--leader-elect-lease-duration must be greater than "
                       "--leader-elect-renew-deadline")
        if self.renew_deadline <= JITTER * self.retry_period:
            out.append("--leader-elect-renew-deadline must be greater than "
                       f"{JITTER:g} × --leader-elect-retry-period")
        for flag, value in (("lease-duration", self.lease_duration),
                            ("renew-deadline", self.renew_deadline),
                            ("retry-period", self.retry_period)):
            if value <= 0:
                out.append(f"--leader-elect-{flag} must be positive")
        if not self.identity:
            out.append("the leader election identity is empty")
        return out


def _micro_time(wall: float) -> str:
    return datetime.datetime.fromtimestamp(wall, datetime.UTC).strftime(
        "%Y-%m-%dT%H:%M:%S.%fZ")


class LeaderElector:
    """Runs the election; `is_leader` says whether this replica leads now."""

    def __init__(self, client: KubeClient, config: ElectionConfig, *,
                 on_started_leading: Callable[[], None] = lambda: None,
                 on_stopped_leading: Callable[[], None] = lambda: None,
                 clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time) -> None:
        self.client = client
        self.config = config
        self.on_started_leading = on_started_leading
        self.on_stopped_leading = on_stopped_leading
        self.clock, self.wall = clock, wall
        self.is_leader = False
        #: The Lease's spec as last read, and when (on our clock) it last changed.
        self.observed: dict[str, Any] | None = None
        self.observed_at = 0.0
        self.last_error = ""
        self._resource_version = ""
        self._task: asyncio.Task[None] | None = None

    @property
    def path(self) -> str:
        return (f"/apis/coordination.k8s.io/v1/namespaces/{self.config.namespace}/leases/"
                f"{self.config.name}")

    @property
    def holder(self) -> str:
        return str((self.observed or {}).get("holderIdentity") or "")

    def not_leader_reason(self) -> str | None:
        """None when leading, else why not (for /readyz and the verbs' answer)."""
        if self.is_leader:
            return None
        lease = f"{self.config.namespace}/{self.config.name}"
        if self.holder:
            return f"not the leader: the lease {lease} is held by {self.holder}"
        why = f": {self.last_error}" if self.last_error else ""
        return f"not the leader: acquiring the lease {lease}{why}"

    # ---- one attempt ---------------------------------------------------------------------
    async def try_acquire_or_renew(self) -> bool:
        """client-go's `tryAcquireOrRenew`: True when this replica holds the Lease after it."""
        config, now, wall = self.config, self.clock(), self.wall()
        spec: dict[str, Any] = {"holderIdentity": config.identity,
                                "leaseDurationSeconds": max(1, round(config.lease_duration)),
                                "acquireTime": _micro_time(wall), "renewTime": _micro_time(wall),
                                "leaseTransitions": 0}
        try:
            current = await self.client.get_object(self.path)
        except ApiError as exc:
            if exc.code != 404:
                raise
            current = None
        if current is None:
            body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": config.name, "namespace": config.namespace},
                    "spec": spec}
            created = await self.client.create_object(self.path.rsplit("/", 1)[0], body)
            self._observe(created, now)
            return True
        record = current.get("spec") or {}
        if self.observed is None or json.dumps(record, sort_keys=True) != json.dumps(
                self.observed, sort_keys=True):
            self.observed, self.observed_at = record, now
        self._resource_version = current["metadata"].get("resourceVersion", "")
        holder = str(record.get("holderIdentity") or "")
        duration = float(record.get("leaseDurationSeconds") or config.lease_duration)
        leading = holder == config.identity
        if holder and not leading and self.observed_at + duration > now:
            return False  # held by another, and not expired as we have watched it
        if leading:
            spec["acquireTime"] = record.get("acquireTime") or spec["acquireTime"]
            spec["leaseTransitions"] = int(record.get("leaseTransitions") or 0)
        else:
            spec["leaseTransitions"] = int(record.get("leaseTransitions") or 0) + 1
        body = {**current, "spec": spec}
        updated = await self.client.replace_object(self.path, body)
        self._observe(updated, now)
        return True

    def _observe(self, lease: dict[str, Any], now: float) -> None:
        self.observed, self.observed_at = lease.get("spec") or {}, now
        self._resource_version = lease["metadata"].get("resourceVersion", "")

    async def _attempt(self) -> bool:
        try:
            won = await self.try_acquire_or_renew()
        except (KubeError, KeyError, ValueError) as exc:
            self.last_error = str(exc)
            # Refused (401, 403: the Lease's namespace or RBAC) it never leads: a warning, as
            # client-go's error; a lost race for the Lease is routine.
            refused = isinstance(exc, ApiError) and exc.code in (401, 403)
            (log.warning if refused else log.info)("leader election: %s", exc)
            return False
        self.last_error = ""
        return won

    # ---- the loops -----------------------------------------------------------------------
    async def run(self) -> None:
        """Acquire, lead while renewals succeed, and acquire again: until cancelled."""
        config = self.config
        try:
            while True:
                while not await self._attempt():
                    await asyncio.sleep(config.retry_period * random.uniform(1.0, JITTER))
                self._lead()
                last_renewal = self.clock()
                while True:
                    await asyncio.sleep(config.retry_period)
                    if await self._attempt():
                        last_renewal = self.clock()
                    elif self.clock() - last_renewal >= config.renew_deadline:
                        self._stop_leading("no renewal within the renew deadline")
                        break
                    elif self.observed and self.holder != config.identity:
                        self._stop_leading(f"the lease is held by {self.holder}")
                        break
        finally:
            if self.is_leader:
                self._stop_leading("stopping")

    def _lead(self) -> None:
        self.is_leader = True
        log.info("leader election: leading", extra={"fields": {
            "lease": f"{self.config.namespace}/{self.config.name}",
            "identity": self.config.identity}})
        self.on_started_leading()

    def _stop_leading(self, why: str) -> None:
        self.is_leader = False
        log.warning("leader election: stopped leading", extra={"fields": {"why": why}})
        self.on_stopped_leading()

    async def release(self) -> None:
        """Give the Lease up at once (client-go's ReleaseOnCancel), if this replica holds it."""
        if self.observed is None or self.holder != self.config.identity:
            return
        spec = {**self.observed, "holderIdentity": "", "leaseDurationSeconds": 1,
                "renewTime": _micro_time(self.wall())}
        try:
            current = await self.client.get_object(self.path)
            if (current.get("spec") or {}).get("holderIdentity") == self.config.identity:
                await self.client.replace_object(self.path, {**current, "spec": spec})
        except (KubeError, KeyError) as exc:
            log.info("leader election: could not release the lease: %s", exc)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self.run(), name="leader-election")

    async def stop(self) -> None:
        """Stop campaigning; a leader stops leading and releases the Lease."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
        await self.release()
