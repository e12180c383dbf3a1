"""The node agent: what kubelets would do for a scheduler's sake, as kwok does.

It creates the sandbox's nodes, keeps their `Ready` condition and their Leases in
`kube-node-lease` fresh, marks pods bound to a node `Running` (and `Ready`, so PodDisruptionBudgets
count them healthy), lets a pod annotated `simulator.extender/run-for: DURATION` succeed that
long after it started (as the simulator does), and finishes the deletion of bound pods once
their grace period is over, counted from when it saw the deletion (a kubelet's last word:
DELETE with grace 0), so preemption victims go away. It runs as its own process
(`python -m extender.sandbox.agent`), started by `extender sandbox up`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import itertools
import json
import logging
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from extender.sandbox.api import Api, ApiError, TransportError, path
from extender.simulator.arrivals import RUN_FOR_ANNOTATION, parse_duration

log = logging.getLogger("extender.sandbox.agent")

LEASE_NAMESPACE = "kube-node-lease"
#: A write that fails in transport (a timeout, a dropped connection: a loaded API server) is
#: tried again after a pause, as a kubelet's status manager does; then given up, and logged.
ATTEMPTS, PAUSE = 5, 1.0


def now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def rfc3339(t: datetime.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def micro(t: datetime.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def ready_condition(t: datetime.datetime) -> dict[str, str]:
    return {"type": "Ready", "status": "True", "reason": "KubeletReady",
            "message": "node agent of extender sandbox is posting ready status",
            "lastHeartbeatTime": rfc3339(t), "lastTransitionTime": rfc3339(t)}


class NodeAgent:
    """Creates `nodes`, then keeps them and the pods bound to them alive until stopped."""

    def __init__(self, api: Api, nodes: list[dict[str, Any]], *, heartbeat: float = 60.0,
                 concurrency: int = 16) -> None:
        self.api = api
        self.nodes = nodes
        self.heartbeat = heartbeat
        self._limit = asyncio.Semaphore(concurrency)
        self._node_names: set[str] = set()
        self._node_ips: dict[str, str] = {}
        self._pending: dict[str, asyncio.Task[None]] = {}  # pod uid -> its timer
        self._handled: dict[str, str] = {}  # pod uid -> what was done ("running", ...)
        self._ips = (f"10.244.{i // 250}.{i % 250 + 1}" for i in itertools.count())

    async def _send(self, what: str, call: Callable[[], Awaitable[Any]]) -> bool:
        """One write, under the agent's concurrency limit: True once done, False when every
        attempt failed in transport (logged). An `ApiError` (the server's answer) propagates."""
        error: TransportError | None = None
        for attempt in range(ATTEMPTS):
            if attempt:
                await asyncio.sleep(PAUSE)
            async with self._limit:
                try:
                    await call()
                    return True
                except TransportError as exc:
                    error = exc
        log.warning("%s: %s (%d attempts)", what, error, ATTEMPTS)
        return False

    # ---- nodes ---------------------------------------------------------------------------
    async def create_nodes(self) -> None:
        async def one(index: int, node: dict[str, Any]) -> None:
            # As a kubelet registers its node: Ready, with an address.
            status = node.setdefault("status", {})
            status["conditions"] = [ready_condition(now())]
            status.setdefault("addresses", [
                {"type": "InternalIP", "address": f"192.168.{index // 250}.{index % 250 + 1}"},
                {"type": "Hostname", "address": node["metadata"]["name"]}])
            await self._send(f"create node {node['metadata']['name']}",
                             lambda: self.api.create(node, exist_ok=True))
            self._node_names.add(node["metadata"]["name"])
        await asyncio.gather(*(one(i, n) for i, n in enumerate(self.nodes)))

    async def _renew(self, name: str, beat: int) -> None:
        t = now()
        lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                 "metadata": {"name": name, "namespace": LEASE_NAMESPACE},
                 "spec": {"holderIdentity": name,
                          "leaseDurationSeconds": max(40, int(self.heartbeat * 4)),
                          "renewTime": micro(t)}}
        try:
            # One attempt: the next heartbeat is the retry.
            async with self._limit:
                await self.api.apply(lease)
                if beat % 5 == 0:
                    await self.api.patch(path("Node", name=name, sub="status"),
                                         {"status": {"conditions": [ready_condition(t)]}},
                                         kind="strategic")
        except ApiError as exc:
            if exc.code != 404:
                log.warning("heartbeat of node %s: %s", name, exc)
        except TransportError as exc:
            log.warning("heartbeat of node %s: %s", name, exc)

    async def heartbeats(self) -> None:
        for beat in itertools.count():
            names = sorted(self._node_names)
            if names:
                # Spread the renewals over the interval rather than bursting them.
                gap = self.heartbeat / len(names)
                for name in names:
                    asyncio.create_task(self._renew(name, beat))
                    await asyncio.sleep(gap)
            else:
                await asyncio.sleep(self.heartbeat)

    async def watch_nodes(self) -> None:
        await self._follow(path("Node"), self._node_event, {})

    async def _node_event(self, kind: str, node: dict[str, Any]) -> None:
        name = node["metadata"]["name"]
        if kind == "DELETED":
            self._node_names.discard(name)
            return
        self._node_names.add(name)
        for address in (node.get("status") or {}).get("addresses") or []:
            if address.get("type") == "InternalIP":
                self._node_ips[name] = address.get("address", "")
        conditions = (node.get("status") or {}).get("conditions") or []
        if not any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions):
            await self._send(f"node {name} Ready", lambda: self.api.patch(
                path("Node", name=name, sub="status"),
                {"status": {"conditions": [ready_condition(now())]}}, kind="strategic"))

    # ---- pods ----------------------------------------------------------------------------
    async def watch_pods(self) -> None:
        await self._follow(path("Pod"), self._pod_event, {"fieldSelector": "spec.nodeName!="})

    async def _pod_event(self, kind: str, pod: dict[str, Any]) -> None:
        meta, spec, status = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
        uid = meta["uid"]
        if kind == "DELETED":
            self._handled.pop(uid, None)
            timer = self._pending.pop(uid, None)
            if timer is not None:
                timer.cancel()
            return
        if meta.get("deletionTimestamp"):
            if self._handled.get(uid) != "deleting":
                self._handled[uid] = "deleting"
                self._replace_timer(uid, self._finish_deletion(pod))
            return
        phase = status.get("phase") or "Pending"
        if phase == "Pending" and spec.get("nodeName") and self._handled.get(uid) is None:
            self._handled[uid] = "running"
            asyncio.create_task(self._run(pod))

    def _replace_timer(self, uid: str, coro: Any) -> None:
        old = self._pending.pop(uid, None)
        if old is not None:
            old.cancel()
        self._pending[uid] = asyncio.create_task(coro)

    async def _run(self, pod: dict[str, Any]) -> None:
        meta, spec = pod["metadata"], pod["spec"]
        started = now()
        host_ip = self._node_ips.get(spec["nodeName"], "192.168.255.254")
        ip = next(self._ips)
        running = {"running": {"startedAt": rfc3339(started)}}
        status = {
            "phase": "Running", "startTime": rfc3339(started), "hostIP": host_ip,
            "hostIPs": [{"ip": host_ip}], "podIP": ip, "podIPs": [{"ip": ip}],
            "conditions": [
                {"type": t, "status": "True", "lastProbeTime": None,
                 "lastTransitionTime": rfc3339(started)}
                for t in ("PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready")],
            "containerStatuses": [
                {"name": c["name"], "image": c.get("image", ""), "imageID": "",
                 "ready": True, "started": True, "restartCount": 0, "state": running}
                for c in spec.get("containers") or []],
        }
        url = path("Pod", meta["namespace"], meta["name"], "status")
        try:
            if not await self._send(f"pod {meta['namespace']}/{meta['name']} Running",
                                    lambda: self.api.patch(
                                        url, {"metadata": {"uid": meta["uid"]}, "status": status},
                                        kind="strategic")):
                return
        except ApiError as exc:
            if exc.code not in (404, 409):
                log.warning("could not mark pod %s/%s running: %s",
                            meta["namespace"], meta["name"], exc)
            return
        run_for = (meta.get("annotations") or {}).get(RUN_FOR_ANNOTATION)
        if run_for:
            try:
                seconds = parse_duration(run_for)
            except ValueError as exc:
                log.warning("pod %s/%s: %s: %s", meta["namespace"], meta["name"],
                            RUN_FOR_ANNOTATION, exc)
                return
            self._replace_timer(meta["uid"], self._succeed(pod, seconds))

    def _timer_fired(self, uid: str) -> None:
        """A timer's wait is over and its request begins: it is no longer cancelled (a
        request cancelled in flight can keep its connection from the pool for good)."""
        task = self._pending.get(uid)
        if task is asyncio.current_task():
            del self._pending[uid]

    async def _succeed(self, pod: dict[str, Any], seconds: float) -> None:
        await asyncio.sleep(seconds)
        self._timer_fired(pod["metadata"]["uid"])
        meta, spec = pod["metadata"], pod["spec"]
        t = rfc3339(now())
        done = {"terminated": {"exitCode": 0, "reason": "Completed", "finishedAt": t}}
        status = {
            "phase": "Succeeded",
            "conditions": [{"type": c, "status": "False", "reason": "PodCompleted",
                            "lastProbeTime": None, "lastTransitionTime": t}
                           for c in ("Ready", "ContainersReady")],
            "containerStatuses": [
                {"name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": False,
                 "started": False, "restartCount": 0, "state": done}
                for c in spec.get("containers") or []],
        }
        try:
            await self._send(f"pod {meta['namespace']}/{meta['name']} Succeeded",
                             lambda: self.api.patch(
                                 path("Pod", meta["namespace"], meta["name"], "status"),
                                 {"metadata": {"uid": meta["uid"]}, "status": status},
                                 kind="strategic"))
        except ApiError as exc:
            if exc.code not in (404, 409):
                log.warning("could not complete pod %s/%s: %s",
                            meta["namespace"], meta["name"], exc)

    async def _finish_deletion(self, pod: dict[str, Any]) -> None:
        """DELETE the pod with grace 0 once its grace period is over, counted from when the
        agent saw the deletion, as a kubelet counts it (`deletionGracePeriodSeconds`): the
        `deletionTimestamp` has whole seconds only, so pods deleted within one second would
        all go at once, in no particular order."""
        meta = pod["metadata"]
        grace = meta.get("deletionGracePeriodSeconds")
        if grace is not None:
            wait = float(grace)
        else:
            wait = (parse_time(meta["deletionTimestamp"]) - now()).total_seconds()
        if wait > 0:
            await asyncio.sleep(wait)
        self._timer_fired(meta["uid"])
        try:
            await self._send(f"delete pod {meta['namespace']}/{meta['name']}",
                             lambda: self.api.delete(path("Pod", meta["namespace"], meta["name"]),
                                                     grace=0, uid=meta["uid"]))
        except ApiError as exc:
            log.warning("could not finish deleting pod %s/%s: %s",
                        meta["namespace"], meta["name"], exc)

    # ---- list + watch --------------------------------------------------------------------
    async def _follow(self, url: str, handle: Any, params: dict[str, str]) -> None:
        """List, then watch from the list's version; relist on 410 or a broken stream."""
        while True:
            try:
                page = await self.api.get(url, {**params})
                for item in page.get("items") or []:
                    await handle("ADDED", item)
                version = page["metadata"]["resourceVersion"]
                while True:
                    # Closed on any way out, so a failed handler never keeps the stream's
                    # connection from the pool.
                    events = self.api.watch(url, version, **params)
                    async with contextlib.aclosing(events):
                        async for kind, obj in events:
                            if kind == "BOOKMARK":
                                version = obj["metadata"]["resourceVersion"]
                                continue
                            version = obj["metadata"]["resourceVersion"]
                            try:
                                await handle(kind, obj)
                            except ApiError as exc:
                                log.warning("%s: %s", url, exc)
            except ApiError as exc:
                if exc.code != 410:
                    log.warning("watch %s: %s; relisting", url, exc)
                    await asyncio.sleep(1.0)
            except Exception as exc:  # a dropped stream: relist after a moment
                log.warning("watch %s: %s: %s; relisting", url, type(exc).__name__, exc)
                await asyncio.sleep(1.0)

    async def run(self) -> None:
        await self.create_nodes()
        log.info("%d node(s) created", len(self.nodes))
        await asyncio.gather(self.watch_nodes(), self.watch_pods(), self.heartbeats())


async def _main(kubeconfig: str, nodes_file: Path, heartbeat: float) -> None:
    nodes = json.loads(nodes_file.read_text())
    async with Api(kubeconfig) as api:
        agent = NodeAgent(api, nodes, heartbeat=heartbeat)
        task = asyncio.ensure_future(agent.run())
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        try:
            await task
        except asyncio.CancelledError:
            pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m extender.sandbox.agent",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--nodes-json", required=True, type=Path,
                        help="a JSON array of Node objects to create")
    parser.add_argument("--heartbeat", type=float, default=60.0,
                        help="seconds between Lease renewals (Ready every fifth)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(message)s")
    asyncio.run(_main(args.kubeconfig, args.nodes_json, args.heartbeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
