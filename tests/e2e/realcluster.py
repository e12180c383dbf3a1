"""Helpers for the end-to-end tests against a real control plane (`extender sandbox`).

`Kube` is a synchronous JSON client of the sandbox's API server (objects as dicts); `Watch`
follows a collection in a background thread and keeps every event, so a test can check an
invariant over everything that happened (no partial gang, no quota over its max), not only at
the end. `Scenario` gives a test its own nodes, namespace, kube-scheduler and extender, and
removes them afterwards.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import shutil
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml

from extender.kube.config import load_kubeconfig
from extender.sandbox.api import ApiError, path
from extender.sandbox.controlplane import ExtenderEndpoint, Sandbox, SchedulerOptions


class Kube:
    """Synchronous calls to the API server a kubeconfig names."""

    def __init__(self, kubeconfig: str | Path) -> None:
        config = load_kubeconfig(str(kubeconfig))
        ctx = config.ssl_context()
        self._http = httpx.Client(base_url=config.server, verify=ctx if ctx else True,
                                  timeout=30.0, trust_env=False)
        self.kubeconfig = str(kubeconfig)

    def close(self) -> None:
        self._http.close()

    def request(self, method: str, url: str, body: Any = None, *, params: Any = None,
                content_type: str = "application/json", ok: Iterable[int] = (200, 201)) -> Any:
        resp = self._http.request(method, url, params=params,
                                  content=None if body is None else json.dumps(body),
                                  headers={"Content-Type": content_type})
        if resp.status_code not in tuple(ok):
            try:
                status = resp.json()
            except ValueError:
                status = {"message": resp.text}
            raise ApiError(resp.status_code, str(status.get("reason", "")),
                           str(status.get("message", "")))
        return resp.json() if resp.content else None

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj.get("metadata") or {}
        return self.request("POST", path(obj["kind"], meta.get("namespace") or "default"), obj)

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        return self.request("GET", path(kind, namespace, name))

    def list(self, kind: str, namespace: str | None = None, **params: str) -> list[dict[str, Any]]:
        return self.request("GET", path(kind, namespace), params=params).get("items") or []

    def patch(self, kind: str, name: str, patch: Any, namespace: str | None = None,
              sub: str | None = None) -> Any:
        return self.request("PATCH", path(kind, namespace, name, sub), patch,
                            content_type="application/merge-patch+json")

    def delete(self, kind: str, name: str, namespace: str | None = None, *,
               grace: int | None = 0) -> None:
        body = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if grace is not None:
            body["gracePeriodSeconds"] = grace
        self.request("DELETE", path(kind, namespace, name), body, ok=(200, 202, 404))

    def apply_yaml(self, text: str, namespace: str | None = None) -> list[dict[str, Any]]:
        out = []
        for doc in yaml.safe_load_all(text):
            if not doc:
                continue
            if namespace and KINDS_NAMESPACED(doc["kind"]):
                doc.setdefault("metadata", {})["namespace"] = namespace
            out.append(self.create(doc))
        return out

    def pods(self, namespace: str, **params: str) -> list[dict[str, Any]]:
        return self.list("Pod", namespace, **params)

    def events_for(self, namespace: str, pod: str) -> list[dict[str, Any]]:
        return self.list("Event", namespace,
                         fieldSelector=f"involvedObject.name={pod},involvedObject.kind=Pod")

    def scheduler_messages(self, namespace: str, pod: str, reporter: str,
                           reason: str = "FailedScheduling") -> list[str]:
        """The messages of `pod`'s events with `reason` written by `reporter` (kube-scheduler
        reports as its profile's schedulerName; the extender as `scheduler-extender`)."""
        return [e.get("message", "") for e in self.events_for(namespace, pod)
                if e.get("reason") == reason and e.get("reportingComponent") == reporter]

    def pods_reported(self, namespace: str, reporter: str,
                      reason: str = "FailedScheduling") -> set[str]:
        """The pods of `namespace` with at least one event with `reason` by `reporter`: one
        list of the namespace's events, where `scheduler_messages` lists each pod's."""
        return {e["involvedObject"]["name"]
                for e in self.list("Event", namespace,
                                   fieldSelector=f"involvedObject.kind=Pod,reason={reason}")
                if e.get("reportingComponent") == reporter}


def scenario_dir_name(test_id: str) -> str:
    """A scenario's recording directory: the test's name without `test_`, its parameters
    kept (`test_extender_decides_placement[names]` -> `extender-decides-placement-names`)."""
    # xdist's `--dist loadgroup` names a grouped test `test_x@group`: the group is not its name.
    name = test_id.rpartition("::")[2].partition("@")[0].removeprefix("test_").lower()
    name = "".join(c if c.isalnum() else "-" for c in name)
    return "-".join(part for part in name.split("-") if part)


def KINDS_NAMESPACED(kind: str) -> bool:  # noqa: N802 - reads as a predicate on a kind
    from extender.sandbox.api import where

    return where(kind)[2]


def wait_until(condition: Callable[[], Any], *, timeout: float, interval: float = 0.2,
               what: str = "condition") -> Any:
    """Poll `condition` until truthy; AssertionError naming `what` (and the last value)."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        last = condition()
        if last:
            return last
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}; "
                                 f"last: {last!r}")
        time.sleep(interval)


def fit_error(version: str, filters: str, preemption: str) -> str:
    """kube-scheduler's FailedScheduling sentence (`FitError.Error()`) of release `version`:
    the filters' part, then PostFilter's. Before 1.37 DynamicResources' PostFilter said its
    word first, even for pods without claims."""
    minor = int(version.split(".")[1])
    between = ". no new claims to deallocate, preemption: " if minor < 37 else \
        ". preemption: "
    return f"{filters}{between}{preemption}"


def bound(pods: Iterable[dict[str, Any]]) -> dict[str, str]:
    """pod name -> node, for the pods bound to a node."""
    return {p["metadata"]["name"]: p["spec"]["nodeName"] for p in pods
            if p.get("spec", {}).get("nodeName")}


def node(name: str, *, cpu: str = "4", memory: str = "16Gi", pods: str = "110",
         labels: dict[str, str] | None = None, taints: list[dict[str, str]] | None = None,
         extended: dict[str, str] | None = None) -> dict[str, Any]:
    capacity = {"cpu": cpu, "memory": memory, "pods": pods, **(extended or {})}
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  **(labels or {})}},
            "spec": spec,
            "status": {"capacity": capacity, "allocatable": dict(capacity)}}


def pod(name: str, namespace: str, scheduler: str, *, cpu: str = "100m", memory: str = "128Mi",
        labels: dict[str, str] | None = None, priority_class: str | None = None,
        extended: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    requests = {"cpu": cpu, "memory": memory, **(extended or {})}
    body: dict[str, Any] = {
        "schedulerName": scheduler, "terminationGracePeriodSeconds": 0,
        "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                        "resources": {"requests": requests,
                                      **({"limits": dict(extended)} if extended else {})}}],
        **spec}
    if priority_class:
        body["priorityClassName"] = priority_class
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
            "spec": body}


class Watch:
    """Every event of a collection from now on, gathered by a background thread."""

    def __init__(self, kube: Kube, url: str, **params: str) -> None:
        self.events: list[tuple[float, str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        listing = kube.request("GET", url, params=params)
        self._version = listing["metadata"]["resourceVersion"]
        self.initial = listing.get("items") or []
        self._kube = kube
        self._url = url
        self._params = params
        self._thread = threading.Thread(target=self._run, daemon=True)
        #: The stream being read, for `stop` to cut.
        self._stream: httpx.Response | None = None
        self._opened = threading.Event()
        self._thread.start()
        if not self._opened.wait(10):
            raise AssertionError(f"watch of {url} did not open")

    def _run(self) -> None:
        params = {**self._params, "watch": "1", "resourceVersion": self._version,
                  "allowWatchBookmarks": "true"}
        while not self._stop.is_set():
            try:
                with self._kube._http.stream("GET", self._url, params=params,
                                             timeout=httpx.Timeout(30, read=5)) as resp:
                    self._stream = resp
                    if self._stop.is_set():
                        return
                    self._opened.set()
                    for line in resp.iter_lines():
                        if not line.strip():
                            continue
                        event = json.loads(line)
                        obj = event["object"]
                        if event["type"] == "ERROR":  # e.g. 410: our version is too old
                            params["resourceVersion"] = self._relist()
                            break
                        params["resourceVersion"] = obj["metadata"]["resourceVersion"]
                        if event["type"] != "BOOKMARK":
                            with self._lock:
                                self.events.append((time.monotonic(), event["type"], obj))
                        if self._stop.is_set():
                            return
            except httpx.ReadTimeout:
                continue
            except (httpx.HTTPError, ValueError, KeyError):
                # A cut stream (a line cut short too): watch again from the last version. A
                # watch thread that died here would miss every later event unnoticed.
                if self._stop.is_set():
                    return
                time.sleep(0.2)

    def _relist(self) -> str:
        """List again after the server ended the watch with an error; every object is
        recorded as it is now (`RELISTED`), so no change in between goes unseen."""
        listing = self._kube.request("GET", self._url, params=self._params)
        now = time.monotonic()
        with self._lock:
            self.events.extend((now, "RELISTED", obj) for obj in listing.get("items") or [])
        return str(listing["metadata"]["resourceVersion"])

    def snapshot(self) -> list[tuple[float, str, dict[str, Any]]]:
        with self._lock:
            return list(self.events)

    def first_bound(self) -> dict[str, float]:
        """pod name -> when this watch first saw it with a node."""
        first: dict[str, float] = {}
        for at, _, obj in self.snapshot():
            if obj["spec"].get("nodeName"):
                first.setdefault(obj["metadata"]["name"], at)
        return first

    def catch_up(self, names: Iterable[str], timeout: float = 30) -> None:
        """Wait until this watch has seen every one of `names` bound: it lags a list of the
        same pods, and a test that reads bindings from it must not stop it before."""
        wanted = set(names)
        wait_until(lambda: wanted <= self.first_bound().keys(), timeout=timeout,
                   what=f"the watch of {self._url} to see {len(wanted)} pod(s) bound")

    def stop(self) -> None:
        self._stop.set()
        # The thread may be waiting for the stream's next line (up to its 5 s read timeout):
        # shutting the socket down wakes it at once (closing it would not).
        stream = self._stream
        network = stream.extensions.get("network_stream") if stream is not None else None
        sock = network.get_extra_info("socket") if network is not None else None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self._thread.join(10)
        assert not self._thread.is_alive(), f"the watch of {self._url} did not stop"


@dataclass
class Scenario:
    """One test's slice of the shared sandbox: its nodes, namespaces, kube-scheduler and
    extender (`scheduler` is the profile name its pods select)."""

    sandbox: Sandbox
    kube: Kube
    name: str
    scheduler: str = ""
    namespaces: list[str] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)
    components: list[str] = field(default_factory=list)
    #: Other objects to delete afterwards: (kind, name[, namespace]).
    cleanups: list[tuple[str, ...]] = field(default_factory=list)
    extender: ExtenderEndpoint | None = None
    #: Where this scenario's extenders record (`serve --record`), with the configuration each
    #: kube-scheduler calling them ran with; None: no recording (`record_into`).
    record_dir: Path | None = None

    def __post_init__(self) -> None:
        self.scheduler = self.scheduler or f"e2e-{self.name}"

    def record_into(self, root: Path, test_id: str, binaries: Any) -> Path:
        """Record this scenario into root/<scenario>/ (named after the test, its parameters
        included), with `scenario.json`: the test and the Kubernetes release it ran."""
        base = scenario_dir_name(test_id)
        target = root / base
        for n in itertools.count(2):
            if not target.exists():
                break
            target = root / f"{base}-{n}"
        target.mkdir(parents=True)
        (target / "scenario.json").write_text(json.dumps({
            "scenario": target.name, "test": test_id, "kubernetes": binaries.version,
            "kubeScheduler": str(binaries.path("kube-scheduler")),
            "sandboxStateDir": str(self.sandbox.state_dir)}, indent=1) + "\n")
        self.record_dir = target
        return target

    def namespace(self, name: str | None = None) -> str:
        ns = name or f"{self.name}-{uuid.uuid4().hex[:6]}"
        self.kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        self.namespaces.append(ns)
        wait_until(lambda: self._has_default_sa(ns), timeout=30,
                   what=f"the default ServiceAccount of {ns}")
        return ns

    def priority_classes(self, ns: str, **values: int) -> None:
        """PriorityClasses `NS-NAME` of the given values (default: `NS-low` 10 and `NS-high`
        1000), deleted after the test."""
        for name, value in (values or {"low": 10, "high": 1000}).items():
            self.kube.request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", {
                "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": {"name": f"{ns}-{name}"}, "value": value})
            self.cleanups.append(("PriorityClass", f"{ns}-{name}"))

    def _has_default_sa(self, ns: str) -> bool:
        try:
            self.kube.get("ServiceAccount", "default", ns)
            return True
        except ApiError:
            return False

    def add_nodes(self, *nodes: dict[str, Any]) -> None:
        for n in nodes:
            self.kube.create(n)
            self.nodes.append(n["metadata"]["name"])

        def ready() -> bool:
            have = {n["metadata"]["name"]: n for n in self.kube.list("Node")}
            return all(name in have and any(
                c.get("type") == "Ready" and c.get("status") == "True"
                for c in have[name].get("status", {}).get("conditions") or [])
                for name in (x["metadata"]["name"] for x in nodes))
        wait_until(ready, timeout=30, what="the scenario's nodes to be Ready")

    def start(self, *, policy: str | Path | None = None, extender_args: Iterable[str] = (),
              options: SchedulerOptions | None = None, tls: bool = False,
              with_extender: bool = True, record: Path | None = None) -> None:
        """This scenario's extender (with `policy`) and kube-scheduler (profile
        `self.scheduler`)."""
        args = list(extender_args)
        if record is None and with_extender:
            record = self.record_dir
        if record is not None:
            args += ["--record", str(record)]
        if with_extender:
            policy_path = None
            if policy is not None:
                policy_path = Path(policy)
                if not policy_path.exists():  # inline YAML
                    policy_path = self.sandbox.state_dir / f"{self.name}-policy.yaml"
                    policy_path.write_text(str(policy))
            name = f"extender-{self.name}"
            self._extender_start = {"policy": policy_path, "args": args, "name": name,
                                    "tls": tls}
            self.extender = self.sandbox.start_extender(**self._extender_start)
            self.components.append(name)
        else:
            policy_path = None
        options = options or SchedulerOptions()
        options.scheduler_names = (self.scheduler,)
        name = f"kube-scheduler-{self.name}"
        config = self.sandbox.start_scheduler(self.extender if with_extender else None, options,
                                              policy=policy_path, name=name)
        self.components.append(name)
        if record is not None and with_extender:
            # The configuration this kube-scheduler calls the recording extender with.
            target = record / "kube-scheduler-config.yaml"
            for n in itertools.count(2):
                if not target.exists():
                    break
                target = record / f"kube-scheduler-config-{n}.yaml"
            shutil.copyfile(config, target)

    def start_plain_scheduler(self, profile: str) -> None:
        """A second kube-scheduler without the extender, for pods with `schedulerName:
        profile`: what in-tree plugins alone decide."""
        name = f"kube-scheduler-{self.name}-plain"
        self.sandbox.start_scheduler(None, SchedulerOptions(scheduler_names=(profile,)),
                                     name=name)
        self.components.append(name)

    def extender_counts(self, metric: str = "extender_requests_total",
                        label: str = "verb") -> dict[str, int]:
        """A counter of the scenario's extender (its /metrics), summed by one label:
        by default the requests it answered, per verb."""
        assert self.extender is not None
        text = httpx.get(f"{self.extender.url}/metrics", timeout=5, trust_env=False).text
        counts: dict[str, int] = {}
        for line in text.splitlines():
            if line.startswith(metric + "{"):
                labels, value = line.rsplit(" ", 1)
                key = labels.split(f'{label}="', 1)[1].split('"', 1)[0]
                counts[key] = counts.get(key, 0) + int(float(value))
        return counts

    def extender_metric(self, name: str) -> float:
        """An unlabelled metric of the scenario's extender (its /metrics)."""
        assert self.extender is not None
        text = httpx.get(f"{self.extender.url}/metrics", timeout=5, trust_env=False).text
        values = [float(line.split()[1]) for line in text.splitlines()
                  if line.startswith(name + " ")]
        assert len(values) == 1, f"{name} not in /metrics"
        return values[0]

    def restart_extender(self) -> None:
        """Start the scenario's extender again, as it was, on the same port."""
        assert self.extender is not None
        self.extender = self.sandbox.start_extender(**self._extender_start,
                                                    port=self.extender.port)

    def stop_extender(self, *, kill: bool = False) -> None:
        if self.extender is not None:
            self.sandbox.stop(self.extender.name, kill=kill)

    def cleanup(self) -> None:
        for name in reversed(self.components):
            self.sandbox.stop(name)
        for ns in self.namespaces:
            # One call for all the namespace's pods (a gang's 2000 took 11 s one by one).
            self.kube.request("DELETE", path("Pod", ns), {
                "kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0},
                ok=(200, 404))
            self.kube.delete("Namespace", ns, grace=None)
        for n in self.nodes:
            self.kube.delete("Node", n, grace=None)
        for kind, name, *namespace in self.cleanups:
            self.kube.delete(kind, name, namespace[0] if namespace else None, grace=None)

