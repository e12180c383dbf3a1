"""The replay's run: the steps submitted on time while the cluster is watched, until it
settles (`extender.sandbox.replay` sets it up and writes what `observed` gathered)."""

from __future__ import annotations

import asyncio
import datetime
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from extender.sandbox.api import Api, ApiError, object_path, path
from extender.sandbox.observed import Observations
from extender.sandbox.replayplan import Step

log = logging.getLogger("extender.sandbox.replay")

class Replay:
    """Submits the steps, watches the cluster, decides when it has settled."""

    def __init__(self, api: Api, steps: list[Step], obs: Observations, *, scale: float,
                 settle: float, deadline: float | None, scheduler_log: Path,
                 progress: Callable[[str], None]) -> None:
        self.api, self.steps, self.obs = api, steps, obs
        self.scale, self.settle, self.deadline = scale, settle, deadline
        self.scheduler_log = scheduler_log
        self.progress = progress
        self.workload_uids: set[str] = set()
        self.submitted = 0
        self.truncated = False
        self.year = datetime.date.today().year
        self.cluster_uids: set[str] = set()

    async def _watch(self, url: str, handle: Callable[[str, dict[str, Any]], None],
                     params: dict[str, str]) -> None:
        """List, then watch from there, again after the server ends a watch."""
        version = ""
        while True:
            try:
                if not version:
                    page = await self.api.get(url, {"limit": "0", **params})
                    version = page["metadata"]["resourceVersion"]
                    for item in page.get("items") or []:
                        handle("ADDED", item)
                async for kind, obj in self.api.watch(url, version, **params):
                    version = (obj.get("metadata") or {}).get("resourceVersion") or version
                    if kind != "BOOKMARK":
                        handle(kind, obj)
            except ApiError as exc:
                if exc.code == 410:  # too old: list again
                    version = ""
                    continue
                raise
            except Exception as exc:  # a dropped stream: watch again from where it was
                log.debug("watch %s: %s", url, exc)
                await asyncio.sleep(0.2)

    def _pod(self, kind: str, pod: dict[str, Any]) -> None:
        uid = pod["metadata"]["uid"]
        origin = "cluster" if uid in self.cluster_uids else "workload"
        if origin == "cluster" and uid not in self.obs.pods:
            self.obs.track(pod, origin, time.time()).node = (pod.get("spec") or {}).get(
                "nodeName") or ""  # bound before the run: not a placement of it
        self.obs.pod_event(kind, pod, time.time(), origin)

    def _event(self, kind: str, event: dict[str, Any]) -> None:
        if kind != "DELETED" and event.get("reason") == "Preempted":
            self.obs.preempted_event(event)

    async def _do(self, step: Step) -> None:
        obj, meta = step.obj, step.obj.get("metadata") or {}
        try:
            if step.kind == "create":
                await self.api.create(obj)
            elif step.kind == "delete-pod":
                # At once, as the simulator removes it (not after a grace period).
                await self.api.delete(path("Pod", meta["namespace"], meta["name"]), grace=0)
            elif step.kind == "delete-node":
                await self.api.delete(path("Node", name=meta["name"]))
                self.obs.node_changes.append((time.time(), meta["name"], "delete"))
            elif step.kind in ("cordon", "uncordon"):
                await self.api.patch(path("Node", name=meta["name"]),
                                     {"spec": {"unschedulable": step.kind == "cordon"}})
                self.obs.node_changes.append((time.time(), meta["name"], "update"))
            elif step.kind == "update-node":
                await self.api.patch(object_path(obj), {"metadata": {
                    "labels": meta.get("labels")}, "spec": obj.get("spec") or {}})
                self.obs.node_changes.append((time.time(), meta["name"], "update"))
            if step.kind == "create" and obj.get("kind") == "Node":
                self.obs.node_changes.append((time.time(), meta["name"], "add"))
        except ApiError as exc:
            if obj.get("kind") == "Pod" and step.kind == "create":
                # Refused at admission (an unknown PriorityClass): a Rejected pod.
                track = self.obs.track({"metadata": {
                    "uid": f"rejected:{meta.get('namespace')}/{meta.get('name')}", **meta}},
                    "workload", time.time())
                track.arrived, track.rejected = time.time(), exc.message or exc.reason
            else:
                self.obs.warnings.append(
                    f"{step.kind} {obj.get('kind', '')} {meta.get('name')}: {exc}")

    async def _submit(self) -> None:
        for step in self.steps:
            due = self.obs.start + step.t / self.scale
            wait = due - time.time()
            if wait > 0:
                await asyncio.sleep(wait)
            await self._do(step)
            self.submitted += 1

    async def run(self, cluster_uids: set[str]) -> float:
        self.cluster_uids = cluster_uids
        tasks = [asyncio.create_task(self._watch(path("Pod"), self._pod, {})),
                 asyncio.create_task(self._watch(
                     path("Event"), self._event, {"fieldSelector": "reason=Preempted"}))]
        submit = asyncio.create_task(self._submit())
        last_key: tuple[int, int] | None = None
        quiet_since = time.time()
        shown = time.time()
        try:
            while True:
                await asyncio.sleep(0.5)
                now = time.time()
                if submit.done() and submit.exception() is not None:
                    raise submit.exception()  # type: ignore[misc]
                self.obs.read_log(self.scheduler_log, self.year)
                key = self.obs.settle_key()
                if key != last_key or self.obs.last_change > quiet_since:
                    last_key, quiet_since = key, now
                if now - shown >= 10:
                    shown = now
                    bound = sum(1 for p in self.obs.pods.values() if p.node)
                    self.progress(f"replaying: {self.submitted}/{len(self.steps)} submitted, "
                                  f"{bound} pods bound, {key[0]} attempts, {now - self.obs.start:.0f} s")
                if submit.done() and key[1] == 0 and now - quiet_since >= self.settle:
                    return quiet_since
                if self.deadline is not None and now >= self.obs.start + self.deadline:
                    self.truncated = True
                    return now
        finally:
            for task in (*tasks, submit):
                task.cancel()
            await asyncio.gather(*tasks, submit, return_exceptions=True)
