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

from extender.ops.objects import Pod, as_int, meta, pods, selected
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
        return cls(deployment, host, as_int(flag_value(argv, "--secure-port", "--port"), DEFAULT_PORT),
                   flag_value(argv, "--tls-cert-file") is not None,
                   flag_value(argv, "--client-ca-file", "--tls-client-ca-file") is not None,
                   flag_value(argv, "--health-host") or host,
                   None if health is None else as_int(health, 0))

    @property
    def metrics_on_health_port(self) -> bool:
        return self.health_port is not None and not self.client_ca


def _reached(candidates: list[Pod], port: Any) -> list[tuple[Extender, str]]:
    """The extenders `port` (a Service's targetPort: a number or a container port's name)
    reaches in `candidates`, each with which of its ports: "verbs", "health" or "other"."""
    found = []
    for pod in candidates:
        for container in pod.containers:
            number = (container.ports.get(port) if isinstance(port, str) else as_int(port, -1))
            if number is None or not is_extender(container.argv):
                continue
            extender = Extender.from_argv(pod.deployment, container.argv)
            which = ("verbs" if number == extender.port else
                     "health" if number == extender.health_port else "other")
            found.append((extender, which))
    return found


def check_wiring(documents: Iterable[Any], configs: list[tuple[str, str, str, dict[str, Any]]],
                 out: Collector) -> None:
    """`documents`: rendered manifests; `configs`: each KubeSchedulerConfiguration they carry,
    as (where, its ConfigMap's name, its namespace, the configuration)."""
    docs = [d for d in documents if isinstance(d, dict)]
    found = pods(docs)
    services = {meta(d): d for d in docs if d.get("kind") == "Service"}
    for where, config_map, namespace, config in configs:
        for i, entry in enumerate(config.get("extenders") or []):
            if isinstance(entry, dict) and isinstance(entry.get("urlPrefix"), str):
                _check_scheduler_call(f"{where}extenders[{i}]", entry, config_map, namespace,
                                      found, services, out)
        _check_scheduler_files(where, config, config_map, found, out)
    for doc in docs:
        if doc.get("kind") == "ServiceMonitor":
            _check_service_monitor(doc, found, services, out)
    _check_bindings(docs, out)


def _extenders_in(pod: Pod) -> list[Extender]:
    return [Extender.from_argv(pod.deployment, c.argv) for c in pod.containers
            if is_extender(c.argv)]


def _check_scheduler_call(where: str, entry: dict[str, Any], config_map: str, namespace: str,
                          found: list[Pod], services: dict[tuple[str, str], dict[str, Any]],
                          out: Collector) -> None:
    url = urlsplit(entry["urlPrefix"])
    try:
        port = url.port or (443 if url.scheme == "https" else 80)
    except ValueError:
        return  # the configuration's own check reports it
    host = url.hostname or ""
    path = f"{where}.urlPrefix"
    if host in LOOPBACK:
        callers = [p for p in found if config_map in p.config_maps.values()]
        extenders = [e for p in callers for e in _extenders_in(p)]
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
    service_namespace = labels[1] if len(labels) > 1 else namespace
    service = services.get((service_namespace, labels[0]))
    if service is None:
        elsewhere = sorted(ns for ns, name in services if name == labels[0])
        if elsewhere:
            out.error(path, f"{host} is Service {labels[0]} in namespace {service_namespace}, "
                      f"but these manifests put it in {', '.join(elsewhere)}: a kustomization's "
                      "`namespace:` moves the objects, not the names inside kube-scheduler's "
                      "configuration (set urlPrefix to match)")
        return  # otherwise a Service these manifests do not hold
    name = f"Service/{labels[0]}"
    spec = service.get("spec") or {}
    ports = [p for p in spec.get("ports") or [] if as_int(p.get("port"), -1) == port]
    if not ports:
        have = ", ".join(str(p.get("port")) for p in spec.get("ports") or []) or "none"
        out.error(path, f"{name} has no port {port} (its ports: {have})")
        return
    target = ports[0].get("targetPort", port)
    picked = selected(found, meta(service)[0], spec.get("selector") or {})
    reached = _reached(picked, target)
    if not reached:
        if picked and not any(_extenders_in(p) for p in picked):
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


#: The files a KubeSchedulerConfiguration names for kube-scheduler to read.
_TLS_FILES = ("caFile", "certFile", "keyFile")


def _check_scheduler_files(where: str, config: dict[str, Any], config_map: str,
                           found: list[Pod], out: Collector) -> None:
    """In the pod of each kube-scheduler reading `config`: each file the configuration names
    lies on a volume, and each Secret mounted is read by something (the pod waits for every
    Secret it mounts, used or not)."""
    named: list[tuple[str, str]] = []
    for i, entry in enumerate(config.get("extenders") or []):
        tls = entry.get("tlsConfig") if isinstance(entry, dict) else None
        if not isinstance(tls, dict):
            continue
        named += [(f"{where}extenders[{i}].tlsConfig.{key}", tls[key]) for key in _TLS_FILES
                  if isinstance(tls.get(key), str) and tls[key]]
    connection = config.get("clientConnection")
    if isinstance(connection, dict) and isinstance(connection.get("kubeconfig"), str):
        named.append((f"{where}clientConnection.kubeconfig", connection["kubeconfig"]))
    for pod in found:
        volumes = {volume for volume, name in pod.config_maps.items() if name == config_map}
        for container in pod.containers:
            if not volumes & container.mounts.keys():
                continue
            mounted = container.mounts.values()
            for field, file in named:
                if not any(_under(file, directory) for directory in mounted):
                    out.warning(field, f"{file} lies on no volume of Deployment/"
                                f"{pod.deployment}'s {container.name} container: kube-scheduler "
                                "cannot read it unless its image holds it")
            read = [file for _, file in named] + container.argv
            for volume, secret in pod.secrets.items():
                directory = container.mounts.get(volume)
                if directory and not any(directory in text for text in read):
                    out.warning(f"Deployment/{pod.deployment}.spec.template.spec.volumes",
                                f"the {container.name} container mounts Secret {secret} at "
                                f"{directory}, which nothing it reads names; the pod still "
                                "waits for that Secret to exist (components/tls is not for "
                                "the sidecar)")


def _under(file: str, directory: str) -> bool:
    return file == directory or file.startswith(directory.rstrip("/") + "/")


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


def _check_service_monitor(doc: dict[str, Any], found: list[Pod],
                           services: dict[tuple[str, str], dict[str, Any]],
                           out: Collector) -> None:
    own_namespace, own_name = meta(doc)
    spec = doc.get("spec") or {}
    name = f"ServiceMonitor/{own_name}"
    namespaces = (spec.get("namespaceSelector") or {}).get("matchNames") or [own_namespace]
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
            picked = selected(found, meta(service)[0], sspec.get("selector") or {})
            for extender, which in _reached(picked, ports[0].get("targetPort", ports[0].get("port"))):
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
