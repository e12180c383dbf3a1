"""Whether rendered manifests connect: kube-scheduler to the extender, Prometheus to its
metrics, each RoleBinding to its ServiceAccount.

Each file can be right alone and the whole still not work. kustomize applies a component's
patch only to the objects that exist when the component runs, and skips it silently
otherwise, so a wrong order still renders. With `tls` before `kube-scheduler`, kube-scheduler
calls `http://` an extender that serves only TLS. With `servicemonitor` after `sidecar`,
Prometheus looks for a port the Service no longer has. `check_wiring` follows each
connection through the objects:

- each `extenders[].urlPrefix` of a KubeSchedulerConfiguration in a ConfigMap leads to the
  extender container it reaches. On loopback that is the container in the pod of the
  kube-scheduler that mounts the ConfigMap. For a Service's DNS name it is the Service's
  port, then the pods its selector picks. The check: the extender listens there, serves
  https exactly when the URL says so, and gets the client certificate that mutual TLS
  demands;
- each ServiceMonitor endpoint leads to a port of a Service it selects. The check: that port
  serves `/metrics` in the endpoint's scheme;
- each RoleBinding's ServiceAccount must be one the manifests create, where they create its
  namespace.

Objects the manifests do not hold (a Service or a kube-scheduler elsewhere) are not guessed at.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from extender.ops.problems import Collector

#: Addresses only the pod itself reaches.
LOOPBACK = ("127.0.0.1", "localhost", "::1")
DEFAULT_PORT = 8888


def flag_value(args: list[str], *names: str) -> str | None:
    """The value of the first of `names` (aliases of one flag) given in `args`."""
    for i, arg in enumerate(args):
        for name in names:
            if arg == name and i + 1 < len(args):
                return args[i + 1]
            if arg.startswith(name + "="):
                return arg.split("=", 1)[1]
    return None


def is_extender(argv: list[str]) -> bool:
    """Whether a container's command line runs `extender serve` (`extender serve …`,
    `/usr/local/bin/extender serve …`, `python -m extender serve …`)."""
    return "serve" in argv and any("extender" in a for a in argv[:argv.index("serve")])


@dataclass(frozen=True)
class Extender:
    """What an `extender serve` command line listens on."""

    deployment: str
    host: str
    port: int
    tls: bool
    client_ca: bool
    health_host: str
    health_port: int | None

    @classmethod
    def from_argv(cls, deployment: str, argv: list[str]) -> Extender:
        host = flag_value(argv, "--bind-address", "--host") or LOOPBACK[0]
        health = flag_value(argv, "--health-port")
        return cls(deployment, host, _int(flag_value(argv, "--secure-port", "--port"), DEFAULT_PORT),
                   flag_value(argv, "--tls-cert-file") is not None,
                   flag_value(argv, "--client-ca-file", "--tls-client-ca-file") is not None,
                   flag_value(argv, "--health-host") or host,
                   None if health is None else _int(health, 0))

    @property
    def metrics_on_health_port(self) -> bool:
        return self.health_port is not None and not self.client_ca


@dataclass(frozen=True)
class _Pod:
    deployment: str
    namespace: str
    labels: dict[str, str]
    #: Each container's name, command line and ports (name → number).
    containers: list[tuple[str, list[str], dict[str, int]]]
    config_maps: set[str]


def _int(text: Any, default: int) -> int:
    try:
        return int(text)
    except (TypeError, ValueError):
        return default


def _pods(documents: list[dict[str, Any]]) -> list[_Pod]:
    pods = []
    for doc in documents:
        if doc.get("kind") != "Deployment":
            continue
        meta = doc.get("metadata") or {}
        template = (doc.get("spec") or {}).get("template") or {}
        spec = template.get("spec") or {}
        containers = []
        for c in spec.get("containers") or []:
            argv = [str(a) for a in [*(c.get("command") or []), *(c.get("args") or [])]]
            ports = {str(p.get("name")): _int(p.get("containerPort"), 0)
                     for p in c.get("ports") or [] if p.get("name")}
            containers.append((str(c.get("name", "")), argv, ports))
        maps = {str((v.get("configMap") or {}).get("name")) for v in spec.get("volumes") or []
                if v.get("configMap")}
        pods.append(_Pod(str(meta.get("name", "")), str(meta.get("namespace", "")),
                         dict((template.get("metadata") or {}).get("labels") or {}),
                         containers, maps))
    return pods


def _selected(pods: list[_Pod], namespace: str, selector: dict[str, Any]) -> list[_Pod]:
    return [p for p in pods if p.namespace == namespace and selector
            and all(p.labels.get(k) == v for k, v in selector.items())]


def _reached(pods: list[_Pod], port: Any) -> list[tuple[Extender, str]]:
    """The extenders `port` (a Service's targetPort: a number or a container port's name)
    reaches in `pods`, each with which of its ports: "verbs", "health" or "other"."""
    found = []
    for pod in pods:
        for _, argv, ports in pod.containers:
            number = ports.get(port) if isinstance(port, str) else _int(port, -1)
            if number is None or not is_extender(argv):
                continue
            extender = Extender.from_argv(pod.deployment, argv)
            which = ("verbs" if number == extender.port else
                     "health" if number == extender.health_port else "other")
            found.append((extender, which))
    return found


def check_wiring(documents: Iterable[Any], configs: list[tuple[str, str, str, dict[str, Any]]],
                 out: Collector) -> None:
    """`documents`: rendered manifests; `configs`: each KubeSchedulerConfiguration they carry,
    as (where, its ConfigMap's name, its namespace, the configuration)."""
    docs = [d for d in documents if isinstance(d, dict)]
    pods = _pods(docs)
    services = {(str((d.get("metadata") or {}).get("namespace", "")),
                 str((d.get("metadata") or {}).get("name", ""))): d
                for d in docs if d.get("kind") == "Service"}
    for where, config_map, namespace, config in configs:
        for i, entry in enumerate(config.get("extenders") or []):
            if isinstance(entry, dict) and isinstance(entry.get("urlPrefix"), str):
                _check_scheduler_call(f"{where}extenders[{i}]", entry, config_map, namespace,
                                      pods, services, out)
    for doc in docs:
        if doc.get("kind") == "ServiceMonitor":
            _check_service_monitor(doc, pods, services, out)
    _check_bindings(docs, out)


def _check_scheduler_call(where: str, entry: dict[str, Any], config_map: str, namespace: str,
                          pods: list[_Pod], services: dict[tuple[str, str], dict[str, Any]],
                          out: Collector) -> None:
    url = urlsplit(entry["urlPrefix"])
    try:
        port = url.port or (443 if url.scheme == "https" else 80)
    except ValueError:
        return  # the configuration's own check reports it
    host = url.hostname or ""
    path = f"{where}.urlPrefix"
    if host in LOOPBACK:
        callers = [p for p in pods if config_map in p.config_maps]
        extenders = [Extender.from_argv(p.deployment, argv) for p in callers
                     for _, argv, _ in p.containers if is_extender(argv)]
        if not extenders:
            if callers:
                out.error(path, f"{url.hostname} is kube-scheduler's own pod, and no extender "
                          f"container runs in it (Deployment/{callers[0].deployment}): "
                          "components/sidecar adds one")
            return
        listening = [e for e in extenders if e.port == port]
        if not listening:
            out.error(path, f"nothing in Deployment/{extenders[0].deployment}'s pod listens on "
                      f"port {port}: its extender listens on {extenders[0].port}")
            return
        _check_tls(path, url.scheme, entry, listening[0], out)
        return
    labels = host.split(".")
    service = services.get((labels[1] if len(labels) > 1 else namespace, labels[0]))
    if service is None:
        return  # a Service these manifests do not hold
    name = f"Service/{labels[0]}"
    spec = service.get("spec") or {}
    ports = [p for p in spec.get("ports") or [] if _int(p.get("port"), -1) == port]
    if not ports:
        have = ", ".join(str(p.get("port")) for p in spec.get("ports") or []) or "none"
        out.error(path, f"{name} has no port {port} (its ports: {have})")
        return
    target = ports[0].get("targetPort", port)
    selected = _selected(pods, str((service.get("metadata") or {}).get("namespace", "")),
                         spec.get("selector") or {})
    reached = _reached(selected, target)
    if not reached:
        if selected and not any(is_extender(argv) for p in selected for _, argv, _ in p.containers):
            return  # something else serves there
        out.error(path, f"{name}'s port {port} reaches no extender: its targetPort "
                  f"{target} is no port of an extender container in the pods it selects")
        return
    extender, which = reached[0]
    if which != "verbs":
        out.error(path, f"{name}'s port {port} reaches the extender's {which} port, which "
                  f"serves no verbs (they are on {extender.port})")
        return
    if extender.host in LOOPBACK:
        out.error(path, f"the extender of Deployment/{extender.deployment} listens on "
                  f"{extender.host} only: {name} cannot reach it (--bind-address 0.0.0.0)")
        return
    _check_tls(path, url.scheme, entry, extender, out)


def _check_tls(path: str, scheme: str, entry: dict[str, Any], extender: Extender,
               out: Collector) -> None:
    deployment = f"Deployment/{extender.deployment}"
    if extender.tls and scheme != "https":
        out.error(path, f"{scheme}:// to the extender of {deployment}, which serves only TLS "
                  "(--tls-cert-file): every call fails. components/tls makes both sides TLS, "
                  "but changes kube-scheduler's configuration only when components/"
                  "kube-scheduler is listed before it")
    elif not extender.tls and scheme == "https":
        out.error(path, f"https:// to the extender of {deployment}, which serves plain HTTP "
                  "(no --tls-cert-file): every call fails")
    elif extender.client_ca:
        tls = entry.get("tlsConfig") or {}
        if not (tls.get("certFile") or tls.get("certData")) or not (
                tls.get("keyFile") or tls.get("keyData")):
            out.error(f"{path.removesuffix('.urlPrefix')}.tlsConfig", "the extender of "
                      f"{deployment} demands a client certificate (--tls-client-ca-file): "
                      "give kube-scheduler one (certFile and keyFile), or every call is refused")


def _check_service_monitor(doc: dict[str, Any], pods: list[_Pod],
                           services: dict[tuple[str, str], dict[str, Any]],
                           out: Collector) -> None:
    meta = doc.get("metadata") or {}
    spec = doc.get("spec") or {}
    name = f"ServiceMonitor/{meta.get('name', '')}"
    namespaces = (spec.get("namespaceSelector") or {}).get("matchNames") or [
        meta.get("namespace", "")]
    selector = (spec.get("selector") or {}).get("matchLabels") or {}
    matched = [s for (ns, _), s in services.items() if ns in namespaces and selector and all(
        ((s.get("metadata") or {}).get("labels") or {}).get(k) == v for k, v in selector.items())]
    if not matched:
        return  # the Service it scrapes is not in these manifests
    for i, endpoint in enumerate(spec.get("endpoints") or []):
        port_name = endpoint.get("port")
        if not isinstance(port_name, str):
            continue
        path = f"{name}.spec.endpoints[{i}]"
        for service in matched:
            sname = f"Service/{(service.get('metadata') or {}).get('name', '')}"
            sspec = service.get("spec") or {}
            ports = [p for p in sspec.get("ports") or [] if p.get("name") == port_name]
            if not ports:
                have = ", ".join(str(p.get("name")) for p in sspec.get("ports") or [])
                out.error(f"{path}.port", f"{port_name!r} is no port of {sname} (its ports: "
                          f"{have or 'none'}): Prometheus scrapes nothing. components/sidecar "
                          "changes the Service's ports, and components/servicemonitor follows "
                          "only when listed before it")
                continue
            selected = _selected(pods, str((service.get("metadata") or {}).get("namespace", "")),
                                 sspec.get("selector") or {})
            for extender, which in _reached(selected, ports[0].get("targetPort", ports[0].get("port"))):
                _check_scrape(path, endpoint, extender, which, out)


def _check_scrape(path: str, endpoint: dict[str, Any], extender: Extender, which: str,
                  out: Collector) -> None:
    scheme = endpoint.get("scheme") or "http"
    deployment = f"Deployment/{extender.deployment}"
    if which == "health":
        if not extender.metrics_on_health_port:
            out.error(f"{path}.port", f"the extender of {deployment} serves no /metrics on its "
                      "health port under mutual TLS (--tls-client-ca-file): scrape its main port")
        elif scheme != "http":
            out.error(f"{path}.scheme", f"{scheme}: the extender's health port serves plain HTTP")
        return
    if which != "verbs":
        return
    if extender.tls and scheme != "https":
        out.error(f"{path}.scheme", f"{scheme}: the extender of {deployment} serves /metrics "
                  "only over TLS (--tls-cert-file), so every scrape fails. components/tls "
                  "changes the ServiceMonitor only when components/servicemonitor is listed "
                  "before it")
    elif not extender.tls and scheme == "https":
        out.error(f"{path}.scheme", f"https: the extender of {deployment} serves plain HTTP")
    elif extender.client_ca:
        tls = endpoint.get("tlsConfig") or {}
        if not tls.get("cert") or not tls.get("keySecret"):
            out.error(f"{path}.tlsConfig", f"the extender of {deployment} demands a client "
                      "certificate (--tls-client-ca-file): give Prometheus one (cert and "
                      "keySecret), or every scrape is refused")


def _check_bindings(docs: list[dict[str, Any]], out: Collector) -> None:
    owned = {str((d.get("metadata") or {}).get("name", "")) for d in docs
             if d.get("kind") == "Namespace"}
    accounts = {(str((d.get("metadata") or {}).get("namespace", "")),
                 str((d.get("metadata") or {}).get("name", ""))) for d in docs
                if d.get("kind") == "ServiceAccount"}
    for doc in docs:
        if doc.get("kind") not in ("RoleBinding", "ClusterRoleBinding"):
            continue
        meta = doc.get("metadata") or {}
        for i, subject in enumerate(doc.get("subjects") or []):
            if not isinstance(subject, dict) or subject.get("kind") != "ServiceAccount":
                continue
            namespace = str(subject.get("namespace") or meta.get("namespace", ""))
            account = str(subject.get("name", ""))
            if namespace in owned and (namespace, account) not in accounts:
                out.warning(f"{doc['kind']}/{meta.get('name', '')}.subjects[{i}]",
                            f"ServiceAccount {namespace}/{account} is not among these "
                            "manifests: a binding left behind (components/sidecar removes "
                            "the extender's own ServiceAccount, and components/ha's binding "
                            "follows only when listed before it)")
