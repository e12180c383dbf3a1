"""`Sandbox`: a real control plane on loopback, one component at a time.

etcd, kube-apiserver (secure port on 127.0.0.1, certificates from `pki.py`, RBAC),
kube-controller-manager (only the controllers that turn workloads into pods, keep PDB status
and collect garbage: none that expects a kubelet or a cloud), the node agent (`agent.py`),
this extender (`extender serve --kubeconfig`) and kube-scheduler with the configuration
`render-config` writes. Each runs detached and is recorded in the state directory
(`processes.py`), so `extender sandbox up` can return and `extender sandbox down` — or a test's
teardown — stops them all. Components can be stopped and started again with other settings
(the e2e tests start one kube-scheduler and extender pair per scenario).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import ssl
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml

from extender.engine.registry import WATCHED
from extender.ops import pki
from extender.sandbox.api import Api, ApiError, TransportError, path, wait_for
from extender.sandbox.build import Binaries
from extender.sandbox.processes import Registry, free_port

Progress = Callable[[str], None]

#: kube-controller-manager's controllers the sandbox runs (names as since 1.30).
CONTROLLERS = (
    "deployment-controller", "replicaset-controller", "statefulset-controller",
    "job-controller", "cronjob-controller", "daemonset-controller",
    "replicationcontroller-controller", "disruption-controller",
    "garbage-collector-controller", "pod-garbage-collector-controller",
    "namespace-controller", "serviceaccount-controller",
    "root-ca-certificate-publisher-controller", "ttl-after-finished-controller",
)
#: The profiles of the sandbox's kube-scheduler: the cluster's default scheduler, and the
#: name the manifests give the extender's second scheduler, so pods of either go through it.
SCHEDULER_NAMES = ("default-scheduler", "extender-scheduler")
EXTENDER_USER = "scheduler-extender"
#: Before the names of the RBAC objects the sandbox makes from the manifests' (see `_install`).
SANDBOX_PREFIX = "sandbox-"
#: Where the extender's leader election keeps its Lease (the manifests' namespace).
LEASE_NAMESPACE = "scheduler-extender"
MANIFESTS = Path(__file__).resolve().parents[2] / "manifests"
#: The CRDs the extender's plugins read, by component of manifests/.


def crd_components() -> tuple[str, ...]:
    """The kustomize components shipping the custom resources the plugins' records watch
    (manifests/components/<name>), each once."""
    return tuple(dict.fromkeys(r.component for r in WATCHED.values() if r.crd))




class SandboxError(RuntimeError):
    """A component did not start; the message names it and its log."""


#: A start-up probe checks that a component answers, not who it is; a context that verifies
#: nothing reads no CA roots (the system's cost ~20 ms of CPU for each probe otherwise).
_UNVERIFIED = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
_UNVERIFIED.check_hostname = False
_UNVERIFIED.verify_mode = ssl.CERT_NONE


def _get(url: str) -> httpx.Response:
    return httpx.get(url, verify=_UNVERIFIED, timeout=2.0, trust_env=False)


def _probe(url: str) -> bool:
    """Whether a start-up check of a component (http or https, on loopback) answers 200."""
    return _get(url).status_code == 200


def _probe_json(url: str) -> Any:
    return _get(url).json()


def default_state_dir() -> Path:
    import os

    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "extender" / "sandbox"


@dataclass
class ExtenderEndpoint:
    """A running extender: where kube-scheduler calls it and how."""

    url: str
    health_url: str
    name: str = "extender"
    tls: bool = False
    port: int = 0


@dataclass
class SchedulerOptions:
    """How kube-scheduler registers the extender (`KubeSchedulerConfiguration.extenders[0]`)
    and its own client settings."""

    verbs: Sequence[str] = ("filter", "prioritize", "preempt", "bind")
    weight: int = 1
    node_cache: bool = True
    ignorable: bool = False
    http_timeout: str | float | None = None  # None: what render-config computes for the policy
    managed_resources: Sequence[str] = ()
    ignored_by_scheduler: bool = False
    scheduler_names: Sequence[str] = SCHEDULER_NAMES
    qps: float = 50.0
    burst: int = 100
    #: Merged into the rendered configuration last (e.g. {"percentageOfNodesToScore": 100}).
    extra: dict[str, Any] = field(default_factory=dict)
    args: Sequence[str] = ()


class Sandbox:
    """One control plane in `state_dir`, from the programs in `binaries`."""

    def __init__(self, state_dir: Path, binaries: Binaries | None = None, *,
                 progress: Progress = print) -> None:
        self.state_dir = Path(state_dir).expanduser().resolve()
        self.binaries = binaries
        self.progress = progress
        self.registry = Registry(self.state_dir)
        self.pki_dir = self.state_dir / "pki"
        self.kubeconfig = self.state_dir / "kubeconfig"
        self.settings_file = self.state_dir / "sandbox.json"
        #: Another kube-scheduler program (one built with scheduler-plugins), or None.
        self.scheduler_binary: Path | None = None

    # ---- settings ------------------------------------------------------------------------
    def settings(self) -> dict[str, Any]:
        try:
            return json.loads(self.settings_file.read_text())
        except (OSError, ValueError):
            return {}

    def _remember(self, **values: Any) -> None:
        merged = {**self.settings(), **values}
        self.settings_file.write_text(json.dumps(merged, indent=1, default=str) + "\n")

    def _bin(self, program: str) -> str:
        if self.binaries is None or not self.binaries.present():
            raise SandboxError("the sandbox's programs are not built: run `extender sandbox "
                               "build` first")
        return str(self.binaries.path(program))

    def log_tail(self, name: str, lines: int = 20) -> str:
        proc = self.registry.get(name)
        if proc is None:
            return ""
        try:
            text = Path(proc.log).read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(text[-lines:])

    def _wait(self, name: str, check: Callable[[], bool], timeout: float) -> None:
        """Poll `check` until true; fail naming the component and its log if it exits or the
        time runs out."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                if check():
                    return
            except (httpx.HTTPError, OSError, ApiError, TransportError, ValueError):
                pass
            proc = self.registry.get(name)
            if proc is not None and not proc.alive():
                raise SandboxError(f"{name} exited during start-up; the end of {proc.log}:\n"
                                   f"{self.log_tail(name)}")
            if time.monotonic() > deadline:
                where = f"; the end of {proc.log}:\n{self.log_tail(name)}" if proc else ""
                raise SandboxError(f"{name} was not ready after {timeout:.0f}s{where}")
            time.sleep(0.2)

    def run(self, coro: Any) -> Any:
        """Run an async call against the API server as the admin."""
        async def with_api() -> Any:
            async with Api(str(self.kubeconfig)) as api:
                return await coro(api)
        return asyncio.run(with_api())

    # ---- control plane -------------------------------------------------------------------
    def refuse_if_running(self, other_dir: str = "--state-dir") -> None:
        """SandboxError when processes of another sandbox run in this state directory: they
        are not this one's to stop (`other_dir`: the option that names another directory)."""
        running = self.registry.running()
        if running:
            names = ", ".join(f"{p.name} ({p.pid})" for p in running)
            raise SandboxError(f"a sandbox is already running in {self.state_dir}: {names}; "
                               f"`extender sandbox down --state-dir {self.state_dir}` first, "
                               f"or give another {other_dir}")

    def start_control_plane(self) -> None:
        self.refuse_if_running()
        for stale in ("etcd-data", "logs"):
            shutil.rmtree(self.state_dir / stale, ignore_errors=True)
        self.registry.file.unlink(missing_ok=True)
        self.settings_file.unlink(missing_ok=True)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        self._certificates()
        self._etcd()
        self._apiserver()
        self._install()
        self._controller_manager()
        self.progress(f"control plane ready in {time.monotonic() - started:.1f}s "
                      f"({self.settings()['apiserver']})")

    def _certificates(self) -> None:
        ca = pki.Authority(self.pki_dir)
        ca.issue("apiserver", "kube-apiserver", server_names=(
            "127.0.0.1", "localhost", "kubernetes", "kubernetes.default",
            "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "10.96.0.1"))
        pki.service_account_keys(self.pki_dir)

    def _client_kubeconfig(self, stem: str, user: str, groups: tuple[str, ...] = ()) -> Path:
        ca = pki.Authority(self.pki_dir)
        pair = ca.issue(stem, user, organizations=groups, client=True)
        target = self.kubeconfig if stem == "admin" else self.state_dir / f"{stem}.kubeconfig"
        return pki.write_kubeconfig(target, self.settings()["apiserver"], ca.pem, pair, user)

    def _etcd(self) -> None:
        client, peer = free_port(), free_port()
        data = self.state_dir / "etcd-data"
        self.registry.spawn("etcd", [
            self._bin("etcd"), "--name", "sandbox", "--data-dir", str(data),
            "--listen-client-urls", f"http://127.0.0.1:{client}",
            "--advertise-client-urls", f"http://127.0.0.1:{client}",
            "--listen-peer-urls", f"http://127.0.0.1:{peer}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
            "--initial-cluster", f"sandbox=http://127.0.0.1:{peer}",
            "--quota-backend-bytes", str(8 << 30),
            # A disposable cluster: durability is not worth the fsyncs.
            "--unsafe-no-fsync", "--log-level", "warn"])
        self._remember(etcd=f"http://127.0.0.1:{client}")
        self._wait("etcd", lambda: _probe_json(f"http://127.0.0.1:{client}/health").get("health") == "true",
                   timeout=30)

    def _apiserver(self) -> None:
        port = free_port()
        p = self.pki_dir
        self._remember(apiserver=f"https://127.0.0.1:{port}")
        self.registry.spawn("kube-apiserver", [
            self._bin("kube-apiserver"), "--etcd-servers", self.settings()["etcd"],
            "--bind-address", "127.0.0.1", "--secure-port", str(port),
            "--advertise-address", "127.0.0.1",
            # The endpoint reconciler refuses a loopback address; nothing in the sandbox
            # reaches the API through the kubernetes Service anyway.
            "--endpoint-reconciler-type", "none",
            "--tls-cert-file", str(p / "apiserver.crt"),
            "--tls-private-key-file", str(p / "apiserver.key"),
            "--client-ca-file", str(p / "ca.crt"),
            "--service-account-key-file", str(p / "sa.pub"),
            "--service-account-signing-key-file", str(p / "sa.key"),
            "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
            "--authorization-mode", "Node,RBAC", "--service-cluster-ip-range", "10.96.0.0/16",
            "--allow-privileged",
            # Nodes are created Ready by the node agent; without the node lifecycle controller
            # nothing would lift the not-ready taint this admission plugin puts on them.
            "--disable-admission-plugins", "TaintNodesByCondition",
            "--max-requests-inflight", "1600", "--max-mutating-requests-inflight", "800"])
        self._client_kubeconfig("admin", "sandbox-admin", ("system:masters",))
        self._wait("kube-apiserver", lambda: self.run(lambda api: api.ok("/readyz")), timeout=90)

    def _install(self) -> None:
        """The extender's RBAC (manifests/base/rbac.yaml's ClusterRole, with the rules the CRD
        components add) bound to its user, and the CRDs its plugins read."""
        if not MANIFESTS.is_dir():
            raise SandboxError(f"{MANIFESTS} is missing: the sandbox installs the extender's RBAC "
                               "and CRDs from the repository's manifests/; run it from a "
                               "checkout (pip install -e .)")
        role, crds = extender_role_and_crds(MANIFESTS)
        # The manifests' rules under names of the sandbox's own: `kubectl apply -k
        # manifests/...` onto the sandbox then adds the manifests' objects beside these, where
        # under the same names it rebound them to its ServiceAccount and the sandbox's
        # extender (this user) lost the right to bind.
        role["metadata"]["name"] = SANDBOX_PREFIX + role["metadata"]["name"]
        user = [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": EXTENDER_USER}]
        binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                   "metadata": {"name": SANDBOX_PREFIX + EXTENDER_USER},
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                               "name": role["metadata"]["name"]},
                   "subjects": user}
        # Its leader election's Lease (components/ha), in the manifests' namespace.
        election = [d for d in yaml.safe_load_all(
            (MANIFESTS / "components" / "ha" / "extender-leader-election.yaml").read_text())
            if d and d["kind"] in ("Role", "RoleBinding")]
        for doc in election:
            doc["metadata"]["name"] = SANDBOX_PREFIX + doc["metadata"]["name"]
            if doc["kind"] == "RoleBinding":
                doc["roleRef"]["name"] = SANDBOX_PREFIX + doc["roleRef"]["name"]
                doc["subjects"] = user
        namespace = {"apiVersion": "v1", "kind": "Namespace",
                     "metadata": {"name": LEASE_NAMESPACE}}

        async def install(api: Api) -> None:
            # The Namespace and CRDs are the manifests' own too: created as `kubectl apply`
            # creates them, a later `kubectl apply -k manifests/…` updates them quietly.
            for obj in (role, binding, _as_kubectl_applied(namespace), *election,
                        *map(_as_kubectl_applied, crds)):
                await api.apply(obj)
            for crd in crds:
                name = crd["metadata"]["name"]

                async def established(name: str = name) -> bool:
                    got = await api.get(path("CustomResourceDefinition", name=name))
                    return any(c.get("type") == "Established" and c.get("status") == "True"
                               for c in (got.get("status") or {}).get("conditions") or [])
                await wait_for(established, timeout=30, what=f"CRD {name} to be established")
        self.run(install)
        self._client_kubeconfig("extender", EXTENDER_USER)

    def _controller_manager(self) -> None:
        port = free_port()
        kubeconfig = self._client_kubeconfig("controller-manager",
                                             "system:kube-controller-manager",
                                             ("system:masters",))
        self.registry.spawn("kube-controller-manager", [
            self._bin("kube-controller-manager"), "--kubeconfig", str(kubeconfig),
            "--leader-elect=false", "--bind-address", "127.0.0.1", "--secure-port", str(port),
            "--controllers", ",".join(CONTROLLERS),
            "--root-ca-file", str(self.pki_dir / "ca.crt"),
            "--use-service-account-credentials=false",
            "--kube-api-qps", "500", "--kube-api-burst", "1000",
            "--concurrent-replicaset-syncs", "10", "--concurrent-deployment-syncs", "10"])
        self._wait("kube-controller-manager",
                   lambda: _probe(f"https://127.0.0.1:{port}/healthz"), timeout=60)

        # So that a `kubectl apply` right after works.
        self.run(lambda api: wait_default_service_account(api, "default"))

    # ---- nodes ---------------------------------------------------------------------------
    def start_agent(self, nodes: list[dict[str, Any]], *, heartbeat: float = 60.0,
                    timeout: float = 600.0) -> None:
        """Start the node agent with `nodes` and wait until all of them are Ready."""
        nodes_file = self.state_dir / "nodes.json"
        nodes_file.write_text(json.dumps(nodes))
        self.registry.spawn("node-agent", [
            sys.executable, "-m", "extender.sandbox.agent", "--kubeconfig", str(self.kubeconfig),
            "--nodes-json", str(nodes_file), "--heartbeat", str(heartbeat)])
        names = {n["metadata"]["name"] for n in nodes}
        started = time.monotonic()

        async def ready(api: Api) -> int:
            items = await api.list(path("Node"))
            return sum(1 for n in items if n["metadata"]["name"] in names and any(
                c.get("type") == "Ready" and c.get("status") == "True"
                for c in (n.get("status") or {}).get("conditions") or []))
        self._wait("node-agent", lambda: self.run(ready) == len(names), timeout=timeout)
        self._remember(nodes=len(names))
        self.progress(f"{len(names)} node(s) ready in {time.monotonic() - started:.1f}s")

    # ---- the extender --------------------------------------------------------------------
    def start_extender(self, *, policy: Path | None = None, args: Sequence[str] = (),
                       name: str = "extender", tls: bool = False, port: int | None = None,
                       timeout: float = 120.0, wait_ready: bool = True) -> ExtenderEndpoint:
        """`extender serve --kubeconfig` as the extender's own user; with `tls`, mutual TLS
        (a serving certificate from the sandbox's CA, kube-scheduler's client certificate
        required). Waits until it is ready (`wait_ready`), else only until it answers (a
        standby of a leader election is never ready)."""
        port = port or free_port()
        health = free_port()
        argv = [sys.executable, "-m", "extender", "serve",
                "--kubeconfig", str(self.state_dir / "extender.kubeconfig"),
                "--bind-address", "127.0.0.1", "--secure-port", str(port),
                "--health-port", str(health)]
        if policy is not None:
            argv += ["--policy", str(Path(policy).resolve())]
        if tls:
            ca = pki.Authority(self.pki_dir)
            serving = ca.issue(f"{name}-serving", name, server_names=("127.0.0.1", "localhost"))
            argv += ["--tls-cert-file", str(serving.cert), "--tls-private-key-file",
                     str(serving.key), "--client-ca-file", str(ca.cert_path)]
        argv += list(args)
        self.registry.spawn(name, argv)
        scheme = "https" if tls else "http"
        endpoint = ExtenderEndpoint(f"{scheme}://127.0.0.1:{port}",
                                    f"http://127.0.0.1:{health}", name, tls, port)
        check = "/readyz" if wait_ready else "/healthz"
        self._wait(name, lambda: _probe(f"{endpoint.health_url}{check}"), timeout=timeout)
        self._remember(**{name: asdict(endpoint)})
        return endpoint

    # ---- kube-scheduler ------------------------------------------------------------------
    def scheduler_config(self, extender: ExtenderEndpoint | None, options: SchedulerOptions,
                         *, policy: Path | None = None, name: str = "kube-scheduler",
                         ) -> dict[str, Any]:
        """The KubeSchedulerConfiguration: what `extender render-config` writes for this
        extender and policy, with one profile per scheduler name and no leader election."""
        from extender.ops.commands import policy_http_timeout
        from extender.ops.schedconfig import ExtenderTLS, render_config

        kubeconfig = self._client_kubeconfig(name, "system:kube-scheduler")
        if extender is None:
            config: dict[str, Any] = {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "clientConnection": {"kubeconfig": str(kubeconfig)},
                "leaderElection": {"leaderElect": False}}
        else:
            tls = None
            if extender.tls:
                ca = pki.Authority(self.pki_dir)
                client = ca.issue(f"{name}-client", "kube-scheduler", client=True)
                tls = ExtenderTLS(ca_file=str(ca.cert_path), cert_file=str(client.cert),
                                  key_file=str(client.key))
            timeout = options.http_timeout
            if timeout is None:
                timeout = policy_http_timeout(policy)
            text = render_config(
                extender.url, verbs=options.verbs, weight=options.weight,
                node_cache=options.node_cache, managed_resources=options.managed_resources,
                ignored_by_scheduler=options.ignored_by_scheduler,
                timeout=timeout, tls=tls, ignorable=options.ignorable,
                scheduler_name=options.scheduler_names[0], leader_election=False,
                kubeconfig=str(kubeconfig))
            config = yaml.safe_load(text)
        config["clientConnection"].update({"qps": options.qps, "burst": options.burst})
        config["profiles"] = [{"schedulerName": n} for n in options.scheduler_names]
        config.update(options.extra)
        return config

    def start_scheduler(self, extender: ExtenderEndpoint | None,
                        options: SchedulerOptions | None = None, *, policy: Path | None = None,
                        name: str = "kube-scheduler", timeout: float = 60.0) -> Path:
        """Start kube-scheduler calling `extender` (None: kube-scheduler alone); returns the
        configuration file it runs with."""
        options = options or SchedulerOptions()
        config = self.scheduler_config(extender, options, policy=policy, name=name)
        config_file = self.state_dir / f"{name}-config.yaml"
        config_file.write_text(yaml.safe_dump(config, sort_keys=False))
        port = free_port()
        program = str(self.scheduler_binary) if self.scheduler_binary else self._bin("kube-scheduler")
        self.registry.spawn(name, [
            program, "--config", str(config_file),
            "--bind-address", "127.0.0.1", "--secure-port", str(port),
            # So the sandbox's admin certificate may read its /metrics and /configz.
            "--authentication-kubeconfig", str(self.kubeconfig),
            "--authorization-kubeconfig", str(self.kubeconfig), *options.args])
        self._wait(name, lambda: _probe(f"https://127.0.0.1:{port}/readyz"),
                   timeout=timeout)
        self._remember(**{name: {"config": str(config_file), "port": port}})
        return config_file

    def stop(self, name: str, *, kill: bool = False) -> bool:
        """Stop one component (`kill`: SIGKILL at once, as a crash)."""
        return self.registry.stop(name, kill=kill)

    def down(self) -> list[str]:
        return self.registry.stop_all()


async def wait_default_service_account(api: Api, namespace: str) -> None:
    """Until the controller manager has made the namespace's default ServiceAccount: pods
    need it (the ServiceAccount admission plugin looks it up)."""
    await wait_for(lambda: api.exists(path("ServiceAccount", namespace, "default")),
                   timeout=60, what=f"the default ServiceAccount of {namespace}")


def extender_role_and_crds(manifests: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The extender's ClusterRole from manifests/base/rbac.yaml with the rules each CRD
    component's kustomization adds to it, and those components' CRDs."""
    docs = list(yaml.safe_load_all((manifests / "base" / "rbac.yaml").read_text()))
    role = next(d for d in docs if d and d.get("kind") == "ClusterRole")
    role = json.loads(json.dumps(role))
    crds: list[dict[str, Any]] = []
    for component in crd_components():
        folder = manifests / "components" / component
        kustomization = yaml.safe_load((folder / "kustomization.yaml").read_text())
        for resource in kustomization.get("resources") or []:
            for doc in yaml.safe_load_all((folder / resource).read_text()):
                if doc and doc.get("kind") == "CustomResourceDefinition":
                    crds.append(doc)
        for patch in kustomization.get("patches") or []:
            if (patch.get("target") or {}).get("kind") != "ClusterRole":
                continue
            for op in yaml.safe_load(patch["patch"]):
                if op.get("op") == "add" and op.get("path") == "/rules/-":
                    role["rules"].append(op["value"])
    return role, crds


#: The annotation `kubectl apply` keeps: the object as last applied, for its three-way merge.
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _as_kubectl_applied(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` with the annotation `kubectl apply` would have given it (without it, `kubectl
    apply` of the same object warns that it is missing, then adds it)."""
    metadata = dict(obj.get("metadata") or {})
    metadata["annotations"] = {**(metadata.get("annotations") or {}),
                               LAST_APPLIED: json.dumps(obj, separators=(",", ":")) + "\n"}
    return {**obj, "metadata": metadata}
