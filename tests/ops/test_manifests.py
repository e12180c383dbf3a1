"""Every variant manifests/ ships, rendered by `kubectl kustomize`: schema-valid offline,
internally consistent, restricted, RBAC-complete, and least privilege for the extender where it
has its own ServiceAccount. Per-component properties (TLS, HA, images, ServiceMonitor,
PodGroup/ElasticQuota) are in test_kustomize.py."""

from __future__ import annotations

import fnmatch
import functools
import posixpath
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import kubernetes_validate
import kubernetes_validate.utils
import pytest
import yaml
from kubernetes_validate.utils import all_versions

from extender.ops.schedconfig import check_config

# Rendering skips, naming the package, where kubectl is not installed.
from .kustomize import MANIFESTS, compose, render

ROOT = Path(__file__).resolve().parents[2]
SIDECAR = MANIFESTS / "sidecar"
#: The shipped variants: what `kubectl apply -k` takes. The first two are the aliases the
#: README names (manifests/ and manifests/sidecar/); test_kustomize.py holds them equal to
#: their overlays.
VARIANTS = {
    "second-scheduler": MANIFESTS,
    "sidecar": SIDECAR,
    "extender-service": MANIFESTS / "overlays" / "extender-service",
    "gang-quota": MANIFESTS / "overlays" / "gang-quota",
}
WITH_KUBE_SCHEDULER = ("second-scheduler", "sidecar", "gang-quota")
NAMESPACE = "scheduler-extender"
# The scheduler image's version, plus the oldest and newest schemas the installed
# kubernetes-validate bundles (1.25 ... 1.37 for 1.37.0).
VERSIONS = sorted({"1.34.0", all_versions()[0], all_versions()[-1]}, key=lambda v: tuple(
    int(x) for x in v.split(".")))
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition"}
#: Kinds kubernetes-validate has no schema for, and why they are not validated here.
NO_SCHEMA = {
    ("monitoring.coreos.com/v1", "ServiceMonitor"):
        "a prometheus-operator CRD: kubernetes-validate bundles only Kubernetes' own schemas "
        "(test_kustomize.py checks its fields against the Service instead)",
}
SCHEDULER_SA, EXTENDER_SA = "extender-scheduler", "scheduler-extender"

#: Compositions beyond the overlays, validated too: the base alone, kube-scheduler over plain
#: HTTP, and every optional component added the way an overlay's comments say.
COMPOSITIONS = {
    "base": (),
    "base+kube-scheduler": ("kube-scheduler",),
    "second-scheduler+optional": ("kube-scheduler", "servicemonitor", "tls", "ha", "gang-quota"),
    "sidecar+optional": ("kube-scheduler", "servicemonitor", "ha", "sidecar", "gang-quota"),
    "extender-service+optional": ("servicemonitor", "tls", "ha", "gang-quota"),
}


@pytest.fixture(scope="module", params=list(VARIANTS))
def docs(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    return render(VARIANTS[request.param])


@pytest.fixture(scope="module", params=list(VARIANTS))
def variant_docs_text(request: pytest.FixtureRequest) -> str:
    return yaml.safe_dump_all(render(VARIANTS[request.param]))


@pytest.fixture(scope="module", params=WITH_KUBE_SCHEDULER)
def scheduled(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    """The variants that run kube-scheduler."""
    return render(VARIANTS[request.param])


@pytest.fixture(scope="module")
def separate() -> list[dict[str, Any]]:
    return render(VARIANTS["second-scheduler"])


@pytest.fixture(scope="module")
def sidecar() -> list[dict[str, Any]]:
    return render(VARIANTS["sidecar"])


@pytest.fixture(scope="module")
def service_only() -> list[dict[str, Any]]:
    return render(VARIANTS["extender-service"])


def _one(docs: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    found = [d for d in docs if d["kind"] == kind and name in (None, d["metadata"]["name"])]
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


def _deployments(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == "Deployment"]


def _pod_of(docs: list[dict[str, Any]], container: str) -> dict[str, Any]:
    """The pod template that runs `container`."""
    (pod,) = [d["spec"]["template"] for d in _deployments(docs)
              if any(c["name"] == container for c in d["spec"]["template"]["spec"]["containers"])]
    return pod


def _container(docs: list[dict[str, Any]], name: str) -> dict[str, Any]:
    (container,) = [c for c in _pod_of(docs, name)["spec"]["containers"] if c["name"] == name]
    return container


def _flag(argv: list[str], name: str) -> str:
    """Value of `--name value` or `--name=value` in an argument vector."""
    for i, arg in enumerate(argv):
        if arg == name:
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    raise AssertionError(f"{name} not in {argv}")


def _argv(container: dict[str, Any]) -> list[str]:
    return container.get("command", []) + container.get("args", [])


def _port(container: dict[str, Any], port: int | str) -> int:
    if isinstance(port, int):
        return port
    (number,) = [p["containerPort"] for p in container["ports"] if p["name"] == port]
    return number


def _mounts(docs: list[dict[str, Any]], container: dict[str, Any]) -> list[tuple[dict, dict]]:
    volumes = {v["name"]: v for v in _pod_of(docs, container["name"])["spec"]["volumes"]}
    return [(mount, volumes[mount["name"]]) for mount in container.get("volumeMounts", [])]


def _mounted_file(docs: list[dict[str, Any]], container: dict[str, Any], path: str) -> str:
    """Content of the ConfigMap key the container sees at `path` (fails if nothing is there)."""
    for mount, volume in _mounts(docs, container):
        if "configMap" not in volume:
            continue
        config_map = _one(docs, "ConfigMap", volume["configMap"]["name"])
        if "subPath" in mount:
            files = {mount["mountPath"]: mount["subPath"]}
        else:
            items = volume["configMap"].get("items") or [
                {"key": k, "path": k} for k in config_map["data"]]
            files = {posixpath.join(mount["mountPath"], i["path"]): i["key"] for i in items}
        if path in files:
            assert files[path] in config_map["data"], f"{path}: key {files[path]} missing"
            return config_map["data"][files[path]]
    raise AssertionError(f"nothing mounted at {path} in {container['name']}")


def _secret_key_at(docs: list[dict[str, Any]], container: dict[str, Any], path: str) -> tuple[str, str]:
    """(Secret name, key) the container sees at `path`."""
    for mount, volume in _mounts(docs, container):
        if "secret" in volume and path.startswith(mount["mountPath"].rstrip("/") + "/"):
            return volume["secret"]["secretName"], path[len(mount["mountPath"]):].lstrip("/")
    raise AssertionError(f"no Secret mounted at {path} in {container['name']}")


def _scheduler_config(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return yaml.safe_load(_mounted_file(docs, _container(docs, "kube-scheduler"),
                                        "/etc/kubernetes/scheduler-config.yaml"))


# --- schema validation -----------------------------------------------------------------------

# kubernetes_validate reads a kind's schema and the release's 3 MB of definitions from disk for
# each document (3 of this module's 6 CPU-seconds); the files never change: read each once.
kubernetes_validate.utils.schema_contents = functools.cache(  # type: ignore[assignment]
    kubernetes_validate.utils.schema_contents)


def _validate(docs: list[dict[str, Any]], version: str) -> None:
    for doc in docs:
        if (doc["apiVersion"], doc["kind"]) in NO_SCHEMA:
            continue
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{doc['kind']}/{doc['metadata']['name']} on {version}: {exc.message} "
                        f"at {'.'.join(map(str, exc.path))}")


@pytest.mark.parametrize("version", VERSIONS)
def test_every_document_is_schema_valid(docs: list[dict[str, Any]], version: str) -> None:
    _validate(docs, version)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("composition", list(COMPOSITIONS))
def test_every_composition_is_schema_valid(composition: str, version: str) -> None:
    docs = compose(*COMPOSITIONS[composition])
    kinds = {(d["apiVersion"], d["kind"]) for d in docs}
    assert kinds - set(NO_SCHEMA), composition
    _validate(docs, version)


def test_only_the_listed_kinds_go_unvalidated() -> None:
    for kind, reason in NO_SCHEMA.items():
        assert reason, kind
        with pytest.raises(kubernetes_validate.SchemaNotFoundError):
            kubernetes_validate.validate({"apiVersion": kind[0], "kind": kind[1],
                                          "metadata": {"name": "x"}}, VERSIONS[-1], strict=True)


def test_validation_would_catch_a_typo(separate: list[dict[str, Any]]) -> None:
    broken = yaml.safe_load(yaml.safe_dump(_one(separate, "Deployment", "scheduler-extender")))
    broken["spec"]["template"]["spec"]["containers"][0]["imagePullPolcy"] = "Always"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, "1.34.0", strict=True)


def _kinds(docs: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return sorted((d["kind"], d["metadata"]["name"]) for d in docs if d["kind"] != "ConfigMap")


#: What the extender alone needs, in every variant (the sidecar drops its own Deployment and
#: ServiceAccount; it has no budget: only its leader is Ready); what a kube-scheduler adds.
EXTENDER_OBJECTS = [
    ("Namespace", NAMESPACE), ("ClusterRole", "scheduler-extender"),
    ("ClusterRoleBinding", "scheduler-extender"), ("Service", "scheduler-extender"),
    ("NetworkPolicy", "scheduler-extender")]
EXTENDER_OWN = [("ServiceAccount", EXTENDER_SA), ("Deployment", "scheduler-extender"),
                ("Role", "scheduler-extender-leader-election"),
                ("RoleBinding", "scheduler-extender-leader-election")]
SCHEDULER_OBJECTS = [
    ("ServiceAccount", SCHEDULER_SA),
    ("ClusterRoleBinding", "extender-scheduler-as-kube-scheduler"),
    ("ClusterRoleBinding", "extender-scheduler-as-volume-scheduler"),
    ("Role", "extender-scheduler-leader-election"),
    ("RoleBinding", "extender-scheduler-leader-election"),
    ("RoleBinding", "extender-scheduler-auth-reader"),
    ("Deployment", "extender-scheduler"), ("PodDisruptionBudget", "extender-scheduler"),
    ("NetworkPolicy", "extender-scheduler")]


def test_the_expected_objects_are_there(separate: list[dict[str, Any]],
                                        sidecar: list[dict[str, Any]],
                                        service_only: list[dict[str, Any]]) -> None:
    assert _kinds(separate) == sorted(EXTENDER_OBJECTS + EXTENDER_OWN + SCHEDULER_OBJECTS)
    assert _kinds(sidecar) == sorted(EXTENDER_OBJECTS + SCHEDULER_OBJECTS)
    assert _kinds(service_only) == sorted(EXTENDER_OBJECTS + EXTENDER_OWN)
    for docs, config_maps in ((separate, 2), (sidecar, 2), (service_only, 1)):
        assert sum(d["kind"] == "ConfigMap" for d in docs) == config_maps


def test_namespaces_are_explicit(docs: list[dict[str, Any]]) -> None:
    for doc in docs:
        namespace = doc["metadata"].get("namespace")
        if doc["kind"] in CLUSTER_SCOPED:
            assert namespace is None
        elif (doc["kind"], doc["metadata"]["name"]) == ("RoleBinding",
                                                        "extender-scheduler-auth-reader"):
            assert namespace == "kube-system"
        else:
            assert namespace == NAMESPACE, f"{doc['kind']}/{doc['metadata']['name']}"
    labels = _one(docs, "Namespace")["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"


# --- configuration files and copies ----------------------------------------------------------

# kustomize reads no file outside a kustomization's directory, so these are copies.
@pytest.mark.parametrize(("copy", "original"), [
    ("manifests/base/policy.yaml", "extender/data/policy.yaml"),
    ("manifests/components/sidecar/scheduler-config.yaml", "config/scheduler-config.yaml"),
    ("manifests/overlays/gang-quota/policy.yaml", "config/examples/gang-quota-policy.yaml"),
])
def test_kustomize_copies_equal_their_originals(copy: str, original: str) -> None:
    assert (ROOT / copy).read_bytes() == (ROOT / original).read_bytes(), (
        f"{copy} drifted from {original}: cp {original} {copy}")


def test_the_gang_quota_scheduler_config_is_the_shipped_one() -> None:
    """overlays/gang-quota carries config/scheduler-config-gang-quota.yaml inline, in a patch;
    that file is scheduler-config-service.yaml but for the httpTimeout render-config computes
    for the gang-quota policy."""
    from extender.ops.commands import policy_http_timeout
    from extender.ops.fields import format_go_duration

    (patch,) = yaml.safe_load_all(
        (MANIFESTS / "overlays" / "gang-quota" / "scheduler-config.yaml").read_text())
    original = (ROOT / "config" / "scheduler-config-gang-quota.yaml").read_text()
    assert patch["data"]["scheduler-config.yaml"] == original
    service = yaml.safe_load((ROOT / "config" / "scheduler-config-service.yaml").read_text())
    gang = yaml.safe_load(original)
    needed = policy_http_timeout(ROOT / "config" / "examples" / "gang-quota-policy.yaml")
    assert gang["extenders"][0].pop("httpTimeout") == format_go_duration(needed) == "1m6s"
    service["extenders"][0].pop("httpTimeout")
    assert gang == service


def test_every_overlay_passes_check_config_as_rendered(variant_docs_text: str) -> None:
    """`kubectl kustomize <overlay> | extender check-config -`: each file inside, and the
    extender's policy against kube-scheduler's httpTimeout and the extender's replicas."""
    from extender.ops.problems import Collector
    from extender.ops.schedconfig import check_manifests

    out = Collector("-")
    check_manifests(yaml.safe_load_all(variant_docs_text), out)
    assert [str(p) for p in out.problems] == []


def test_check_config_refuses_a_gang_overlay_missing_a_piece() -> None:
    from extender.ops.problems import Collector
    from extender.ops.schedconfig import check_manifests

    docs = render(VARIANTS["gang-quota"])
    for doc in docs:  # the httpTimeout of the service config, and no leader election
        if doc["kind"] == "ConfigMap" and "scheduler-config.yaml" in doc.get("data", {}):
            doc["data"]["scheduler-config.yaml"] = doc["data"]["scheduler-config.yaml"].replace(
                "httpTimeout: 1m6s", "httpTimeout: 5s")
        if doc["kind"] == "Deployment" and doc["metadata"]["name"] == "scheduler-extender":
            container = doc["spec"]["template"]["spec"]["containers"][0]
            container["args"].remove("--leader-elect")
    out = Collector("-")
    check_manifests(docs, out)
    paths = sorted(p.path.split(": ")[-1] for p in out.problems)
    assert paths == ["Deployment/scheduler-extender.spec.replicas",
                     "extenders[0].httpTimeout"], [str(p) for p in out.problems]


def test_the_tls_scheduler_config_is_the_shipped_service_config() -> None:
    """components/tls carries config/scheduler-config-service.yaml inline, in a patch."""
    (patch,) = yaml.safe_load_all(
        (MANIFESTS / "components" / "tls" / "scheduler-config.yaml").read_text())
    assert patch["data"]["scheduler-config.yaml"] == (
        ROOT / "config" / "scheduler-config-service.yaml").read_text(), (
        "components/tls/scheduler-config.yaml drifted from config/scheduler-config-service.yaml")


def test_every_variant_gives_the_extender_the_base_cluster_role(
        docs: list[dict[str, Any]]) -> None:
    (base,) = [d for d in yaml.safe_load_all((MANIFESTS / "base" / "rbac.yaml").read_text())
               if d["kind"] == "ClusterRole"]
    rules = _one(docs, "ClusterRole", "scheduler-extender")["rules"]
    # Every variant's role is the base's; the CRD components add read access to their kinds.
    assert rules[:len(base["rules"])] == base["rules"]
    assert all(r["verbs"] == ["get", "list", "watch"] for r in rules[len(base["rules"]):])


def test_config_maps_get_content_hashed_names(docs: list[dict[str, Any]]) -> None:
    for deployment in _deployments(docs):
        for volume in deployment["spec"]["template"]["spec"]["volumes"]:
            if "configMap" in volume:
                name = volume["configMap"]["name"]
                assert re.fullmatch(r"(scheduler-config|extender-policy)-[a-z0-9]{10}", name), name


def test_kube_scheduler_reads_the_mounted_scheduler_config(scheduled: list[dict[str, Any]],
                                                           tmp_path: Path) -> None:
    docs = scheduled
    container = _container(docs, "kube-scheduler")
    path = _flag(_argv(container), "--config")
    assert path == "/etc/kubernetes/scheduler-config.yaml"
    mounted = tmp_path / "scheduler-config.yaml"
    mounted.write_text(_mounted_file(docs, container, path))
    assert [str(p) for p in check_config(mounted)] == []


def test_extender_reads_the_mounted_policy(docs: list[dict[str, Any]], tmp_path: Path) -> None:
    container = _container(docs, "extender")
    path = _flag(_argv(container), "--policy")
    mounted = tmp_path / "policy.yaml"
    mounted.write_text(_mounted_file(docs, container, path))
    assert [str(p) for p in check_config(mounted)] == []


def test_every_mount_has_a_volume(docs: list[dict[str, Any]]) -> None:
    for deployment in _deployments(docs):
        spec = deployment["spec"]["template"]["spec"]
        volumes = {v["name"] for v in spec["volumes"]}
        mounted = set()
        for container in spec["containers"]:
            for mount in container.get("volumeMounts", []):
                assert mount["name"] in volumes
                mounted.add(mount["name"])
        assert mounted == volumes, "unused volumes"


# --- how kube-scheduler reaches the extender ---------------------------------------------------

def test_sidecar_scheduler_calls_the_extender_over_loopback(sidecar: list[dict[str, Any]]) -> None:
    (extender,) = _scheduler_config(sidecar)["extenders"]
    match = re.fullmatch(r"http://(127\.0\.0\.1|localhost):(\d+)", extender["urlPrefix"])
    assert match, "the sidecar is reached over the pod's loopback"
    argv = _argv(_container(sidecar, "extender"))
    assert argv[:2] == ["extender", "serve"]
    assert int(_flag(argv, "--secure-port")) == int(match.group(2))
    # The verbs on loopback only (kube-scheduler shares the pod's network namespace); probes
    # and /metrics on the health port, on the pod IP.
    assert _flag(argv, "--bind-address") == "127.0.0.1"
    assert _flag(argv, "--health-host") == "0.0.0.0"
    assert "--in-cluster" in argv


def test_scheduler_calls_the_extender_service_over_mutual_tls(separate: list[dict[str, Any]]) -> None:
    (extender,) = _scheduler_config(separate)["extenders"]
    service = _one(separate, "Service", "scheduler-extender")
    match = re.fullmatch(r"https://([a-z0-9-]+)\.([a-z0-9-]+)\.svc:(\d+)", extender["urlPrefix"])
    assert match and match.group(1, 2) == (service["metadata"]["name"], NAMESPACE)
    (port,) = service["spec"]["ports"]
    assert int(match.group(3)) == port["port"]
    container = _container(separate, "extender")
    argv = _argv(container)
    assert argv[:2] == ["extender", "serve"] and "--in-cluster" in argv
    assert _port(container, port["targetPort"]) == int(_flag(argv, "--port"))
    assert service["spec"]["selector"].items() <= _pod_of(separate, "extender")["metadata"][
        "labels"].items()
    # Each side's files come from its Secret: the extender's certificate, key and client CA;
    # kube-scheduler's CA for the server and its client certificate and key.
    assert {_secret_key_at(separate, container, _flag(argv, flag)) for flag in (
        "--tls-cert-file", "--tls-key-file", "--tls-client-ca-file")} == {
        ("scheduler-extender-tls", "tls.crt"), ("scheduler-extender-tls", "tls.key"),
        ("scheduler-extender-tls", "client-ca.crt")}
    scheduler = _container(separate, "kube-scheduler")
    tls = extender["tlsConfig"]
    assert extender["enableHTTPS"] is True and not tls.get("insecure")
    assert {_secret_key_at(separate, scheduler, tls[k]) for k in ("caFile", "certFile", "keyFile")} == {
        ("extender-scheduler-client-tls", "ca.crt"), ("extender-scheduler-client-tls", "tls.crt"),
        ("extender-scheduler-client-tls", "tls.key")}
    # Secret files are readable by the container's group only.
    for deployment in _deployments(separate):
        spec = deployment["spec"]["template"]["spec"]
        (user,) = {c["securityContext"]["runAsGroup"] for c in spec["containers"]}
        assert spec["securityContext"]["fsGroup"] == user
        for volume in spec["volumes"]:
            if "secret" in volume:
                assert volume["secret"]["defaultMode"] == 0o440


def test_leader_election_matches_replicas_and_rbac(scheduled: list[dict[str, Any]]) -> None:
    docs = scheduled
    assert all(d["spec"]["replicas"] == 2 for d in _deployments(docs))
    assert "--leader-elect=true" in _argv(_container(docs, "kube-scheduler"))
    election = _scheduler_config(docs)["leaderElection"]
    assert election["leaderElect"] is True
    assert election["resourceNamespace"] == NAMESPACE
    account = _service_account(docs, "kube-scheduler")
    for verb in ("get", "create", "update"):
        assert _allowed(docs, account, "coordination.k8s.io", "leases", verb, namespace=NAMESPACE,
                        name=election["resourceName"]), verb


# --- probes and ports -----------------------------------------------------------------------

def test_extender_probes_hit_the_served_health_endpoints(docs: list[dict[str, Any]]) -> None:
    container = _container(docs, "extender")
    argv = _argv(container)
    # The kubelet probes the plain health port: under mutual TLS it has no client certificate.
    port = int(_flag(argv, "--health-port"))
    for probe, path in (("startupProbe", "/healthz"), ("livenessProbe", "/healthz"),
                        ("readinessProbe", "/readyz")):
        get = container[probe]["httpGet"]
        assert get["path"] == path
        assert _port(container, get["port"]) == port
        assert get.get("scheme", "HTTP") == "HTTP"
    startup = container["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 30


def test_the_extender_app_serves_the_probed_paths(docs: list[dict[str, Any]]) -> None:
    from extender.api.app import create_app
    from extender.api.healthport import health_app

    container = _container(docs, "extender")
    on_health_port = "--health-port" in _argv(container)
    runtime = SimpleNamespace(startup=[], shutdown=[])
    app = health_app(runtime) if on_health_port else create_app(runtime)  # type: ignore[arg-type]
    served = {route.path for route in app.routes}
    probed = {container[p]["httpGet"]["path"] for p in ("livenessProbe", "readinessProbe",
                                                        "startupProbe")}
    assert probed <= served
    assert "/metrics" in {r.path for r in create_app(runtime).routes}  # type: ignore[arg-type]
    assert "/metrics" in {r.path for r in health_app(runtime).routes}  # type: ignore[arg-type]


def test_kube_scheduler_probes_its_secure_port(scheduled: list[dict[str, Any]]) -> None:
    container = _container(scheduled, "kube-scheduler")
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz"),
                        ("startupProbe", "/healthz")):
        get = container[probe]["httpGet"]
        assert (get["path"], _port(container, get["port"]), get["scheme"]) == (
            path, 10259, "HTTPS")


def test_images(docs: list[dict[str, Any]]) -> None:
    if _runs(docs, "kube-scheduler"):
        assert re.fullmatch(r"registry\.k8s\.io/kube-scheduler:v1\.34\.\d+",
                            _container(docs, "kube-scheduler")["image"])
    image = _container(docs, "extender")["image"]
    assert ":" in image and not image.endswith(":latest")


def _verbs_on_loopback(docs: list[dict[str, Any]]) -> bool:
    argv = _argv(_container(docs, "extender"))
    return "--bind-address" in argv and _flag(argv, "--bind-address") == "127.0.0.1"


def test_service_reaches_the_extender_port(docs: list[dict[str, Any]]) -> None:
    service = _one(docs, "Service")
    labels = _pod_of(docs, "extender")["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    (port,) = service["spec"]["ports"]
    # The sidecar's Service offers the health port's /metrics (its verbs are on loopback).
    expected = 8081 if _verbs_on_loopback(docs) else 8888
    assert port["port"] == expected
    assert _port(_container(docs, "extender"), port["targetPort"]) == expected


def test_network_policy_admits_only_chosen_clients_to_the_extender(
        docs: list[dict[str, Any]]) -> None:
    extender_labels = _pod_of(docs, "extender")["metadata"]["labels"]
    # Policies add up: in the sidecar variant kube-scheduler's (10259) selects the pod too.
    policies = [d["spec"] for d in docs if d["kind"] == "NetworkPolicy"
                and d["spec"]["podSelector"]["matchLabels"].items() <= extender_labels.items()]
    assert policies and all(p["policyTypes"] == ["Ingress"] for p in policies)
    rules: dict[int, list[dict[str, Any]]] = {}
    for rule in (r for p in policies for r in p["ingress"]):
        assert rule.get("ports"), "a rule without ports opens every port"
        for port in rule["ports"]:
            rules.setdefault(port["port"], []).append(rule)
    if _verbs_on_loopback(docs):
        # Nothing but kube-scheduler reaches the verbs; the health port (and /metrics) is
        # open to the labelled clients (Prometheus), never to every pod.
        assert 8888 not in rules
        assert 8081 in rules and all(r.get("from") for r in rules[8081])
    else:
        assert 8888 in rules and all(r.get("from") for r in rules[8888]), (
            "port 8888 must not be open to every pod")
        assert 8081 not in rules, "the plain health port is for the kubelet (the node) only"
    for deployment in _deployments(docs):
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        assert any(d["kind"] == "NetworkPolicy"
                   and d["spec"]["podSelector"]["matchLabels"].items() <= labels.items()
                   for d in docs), deployment["metadata"]["name"]


def test_only_kube_scheduler_pods_and_labelled_clients_reach_the_separate_extender(
        separate: list[dict[str, Any]]) -> None:
    policy = _one(separate, "NetworkPolicy", "scheduler-extender")["spec"]
    (rule,) = policy["ingress"]
    scheduler_labels = _pod_of(separate, "kube-scheduler")["metadata"]["labels"]
    sources = rule["from"]
    assert any(set(s) == {"podSelector"} and s["podSelector"]["matchLabels"].items()
               <= scheduler_labels.items() for s in sources)
    assert all("namespaceSelector" not in s or s["namespaceSelector"]["matchLabels"]
               for s in sources)


# --- availability ----------------------------------------------------------------------------

def test_disruption_budget_and_anti_affinity_cover_the_pods(docs: list[dict[str, Any]]) -> None:
    budgets = [d["spec"] for d in docs if d["kind"] == "PodDisruptionBudget"]
    # Every budget covers a Deployment's pods: none is left over from a component.
    for budget in budgets:
        assert any(budget["selector"]["matchLabels"].items()
                   <= d["spec"]["template"]["metadata"]["labels"].items()
                   for d in _deployments(docs)), budget
    for deployment in _deployments(docs):
        pod = deployment["spec"]["template"]
        labels = pod["metadata"]["labels"]
        mine = [b for b in budgets if b["selector"]["matchLabels"].items() <= labels.items()]
        if any("--leader-elect" in c.get("args", []) for c in pod["spec"]["containers"]):
            assert mine == []  # only the leader is Ready: a budget would block its eviction
        else:
            (budget,) = mine
            assert budget["minAvailable"] == 1
        terms = pod["spec"]["affinity"]["podAntiAffinity"][
            "preferredDuringSchedulingIgnoredDuringExecution"]
        (term,) = [t["podAffinityTerm"] for t in terms]
        assert term["topologyKey"] == "kubernetes.io/hostname"
        assert term["labelSelector"]["matchLabels"].items() <= labels.items()
        assert pod["spec"]["priorityClassName"] == "system-cluster-critical"


def test_every_container_has_requests_and_limits(docs: list[dict[str, Any]]) -> None:
    for deployment in _deployments(docs):
        for container in deployment["spec"]["template"]["spec"]["containers"]:
            for kind in ("requests", "limits"):
                assert set(container["resources"][kind]) >= {"cpu", "memory"}, container["name"]


# --- security --------------------------------------------------------------------------------

def test_pod_security_is_restricted(docs: list[dict[str, Any]]) -> None:
    for deployment in _deployments(docs):
        spec = deployment["spec"]["template"]["spec"]
        pod_context = spec.get("securityContext", {})
        for host in ("hostNetwork", "hostPID", "hostIPC"):
            assert not spec.get(host)
        assert all("hostPath" not in v for v in spec["volumes"])
        for container in spec["containers"]:
            context = {**pod_context, **container.get("securityContext", {})}
            name = container["name"]
            assert context["runAsNonRoot"] is True, name
            assert context.get("runAsUser", 1) != 0, name
            assert context["readOnlyRootFilesystem"] is True, name
            assert context["allowPrivilegeEscalation"] is False, name
            assert context["capabilities"] == {"drop": ["ALL"]}, name
            assert context["seccompProfile"] == {"type": "RuntimeDefault"}, name
            assert not context.get("privileged"), name
            assert not any("hostPort" in p for p in container.get("ports", [])), name


# --- RBAC ------------------------------------------------------------------------------------

def _service_account(docs: list[dict[str, Any]], container: str) -> tuple[str, str]:
    """(namespace, name) of the ServiceAccount the container runs as."""
    name = _pod_of(docs, container)["spec"]["serviceAccountName"]
    assert _one(docs, "ServiceAccount", name)["metadata"]["namespace"] == NAMESPACE
    return NAMESPACE, name


def _bindings(docs: list[dict[str, Any]], account: tuple[str, str]) -> list[dict[str, Any]]:
    namespace, name = account
    return [b for b in docs if b["kind"] in ("ClusterRoleBinding", "RoleBinding")
            and any(s["kind"] == "ServiceAccount" and s["name"] == name
                    and s.get("namespace") == namespace for s in b["subjects"])]


def _rule_allows(rule: dict[str, Any], group: str, resource: str, verb: str,
                 name: str | None) -> bool:
    def match(values: list[str], value: str) -> bool:
        return any(v == "*" or fnmatch.fnmatchcase(value, v) for v in values)

    if rule.get("resourceNames") and (name is None or name not in rule["resourceNames"]):
        return False
    return (match(rule.get("apiGroups", []), group) and match(rule.get("resources", []), resource)
            and match(rule.get("verbs", []), verb))


def _allowed(docs: list[dict[str, Any]], account: tuple[str, str], group: str, resource: str,
             verb: str, *, namespace: str | None = None, name: str | None = None) -> bool:
    """Whether roles defined in the manifests grant the ServiceAccount this request.

    A ClusterRoleBinding grants everywhere; a RoleBinding only in its namespace. Built-in roles
    (system:kube-scheduler …) are not evaluated: the extender must not depend on them.
    """
    for binding in _bindings(docs, account):
        ref = binding["roleRef"]
        if binding["kind"] == "RoleBinding" and binding["metadata"]["namespace"] != namespace:
            continue
        roles = [d for d in docs if d["kind"] == ref["kind"] and d["metadata"]["name"] == ref["name"]
                 and (ref["kind"] == "ClusterRole"
                      or d["metadata"].get("namespace") == binding["metadata"]["namespace"])]
        for role in roles:
            if any(_rule_allows(r, group, resource, verb, name) for r in role["rules"]):
                return True
    return False


# Every Kubernetes API call the extender makes (informers, binder, event recorder).
EXTENDER_CALLS = [
    ("", "nodes", ("get", "list", "watch")),
    ("", "pods", ("get", "list", "watch")),
    ("policy", "poddisruptionbudgets", ("list", "watch")),
    ("scheduling.k8s.io", "priorityclasses", ("list", "watch")),
    ("", "pods/binding", ("create",)),
    ("", "events", ("create", "patch")),
    ("events.k8s.io", "events", ("create", "patch")),
    # Trimaran's default metrics source (extender/state/loadmetrics/metricsserver.py)
    ("metrics.k8s.io", "nodes", ("get", "list")),
]


@pytest.mark.parametrize(("group", "resource", "verbs"), EXTENDER_CALLS,
                         ids=[f"{g or 'core'}/{r}" for g, r, _ in EXTENDER_CALLS])
def test_rbac_covers_the_extenders_api_calls(docs: list[dict[str, Any]], group: str,
                                              resource: str, verbs: tuple[str, ...]) -> None:
    account = _service_account(docs, "extender")
    for verb in verbs:
        assert _allowed(docs, account, group, resource, verb, namespace="default"), (
            f"{verb} {group or 'core'}/{resource}")


def informer_collection(path: str) -> tuple[str, str]:
    """(API group, resource) of an informer's list path."""
    match = re.fullmatch(r"/api/v1/([a-z]+)|/apis/([^/]+)/[^/]+/([a-z]+)", path)
    assert match, path
    return ("", match.group(1)) if match.group(1) else match.group(2, 3)


def test_rbac_covers_every_collection_the_informer_watches(docs: list[dict[str, Any]]) -> None:
    """Derived from the code, so a newly watched resource without RBAC fails here. (The custom
    resources only some plugins read need components/gang-quota: test_kustomize.py.)"""
    from extender.state.informer import ALL_RESOURCES

    assert ALL_RESOURCES
    account = _service_account(docs, "extender")
    for spec in ALL_RESOURCES:
        group, resource = informer_collection(spec.path)
        for verb in ("list", "watch"):
            assert _allowed(docs, account, group, resource, verb, namespace="default"), (
                f"{verb} {group or 'core'}/{resource}")


def _runs(docs: list[dict[str, Any]], container: str) -> bool:
    return any(c["name"] == container for d in _deployments(docs)
               for c in d["spec"]["template"]["spec"]["containers"])


def test_rbac_grants_nothing_more_dangerous(docs: list[dict[str, Any]]) -> None:
    for container in (c for c in ("extender", "kube-scheduler") if _runs(docs, c)):
        account = _service_account(docs, container)
        assert not _allowed(docs, account, "", "secrets", "get", namespace=NAMESPACE)
        assert not _allowed(docs, account, "", "pods", "delete", namespace="default")
        assert not _allowed(docs, account, "coordination.k8s.io", "leases", "update",
                            namespace=NAMESPACE, name="kube-scheduler")
    for role in (d for d in docs if d["kind"] in ("ClusterRole", "Role")):
        for rule in role["rules"]:
            assert "*" not in rule["verbs"] + rule["resources"] + rule["apiGroups"]


def test_kube_scheduler_gets_the_built_in_roles(scheduled: list[dict[str, Any]]) -> None:
    docs = scheduled
    granted = {(b["kind"], b["metadata"].get("namespace"), b["roleRef"]["kind"],
                b["roleRef"]["name"]) for b in _bindings(docs, _service_account(docs, "kube-scheduler"))}
    assert {
        ("ClusterRoleBinding", None, "ClusterRole", "system:kube-scheduler"),
        ("ClusterRoleBinding", None, "ClusterRole", "system:volume-scheduler"),
        ("RoleBinding", "kube-system", "Role", "extension-apiserver-authentication-reader"),
    } <= granted


def test_the_extender_runs_with_only_its_own_rights(separate: list[dict[str, Any]],
                                                    service_only: list[dict[str, Any]]) -> None:
    """Least privilege: the process serving :8888 holds none of kube-scheduler's rights."""
    extender, scheduler = (_service_account(separate, c) for c in ("extender", "kube-scheduler"))
    assert extender != scheduler
    for docs in (separate, service_only):
        account = _service_account(docs, "extender")
        granted = [(b["roleRef"]["kind"], b["roleRef"]["name"]) for b in _bindings(docs, account)]
        assert sorted(granted) == [("ClusterRole", "scheduler-extender"),
                                   ("Role", "scheduler-extender-leader-election")]
        # Its own Lease, not kube-scheduler's.
        assert _allowed(docs, account, "coordination.k8s.io", "leases", "update",
                        namespace=NAMESPACE, name="scheduler-extender")
        assert not _allowed(docs, account, "coordination.k8s.io", "leases", "update",
                            namespace=NAMESPACE, name="extender-scheduler")
    # And kube-scheduler does not get the extender's role either.
    assert ("ClusterRole", "scheduler-extender") not in [
        (b["roleRef"]["kind"], b["roleRef"]["name"]) for b in _bindings(separate, scheduler)]


def test_the_sidecar_variant_states_its_risk(sidecar: list[dict[str, Any]]) -> None:
    assert _service_account(sidecar, "extender") == _service_account(sidecar, "kube-scheduler")
    for path in (MANIFESTS / "components" / "sidecar" / "kustomization.yaml",
                 MANIFESTS / "overlays" / "sidecar" / "kustomization.yaml"):
        text = path.read_text()
        assert "RISK" in text and "kube-scheduler's rights" in text, path


def test_rbac_helper_can_say_no() -> None:
    rule = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}
    assert _rule_allows(rule, "", "pods", "get", None)
    assert not _rule_allows(rule, "", "pods/binding", "get", None)
    assert not _rule_allows(rule, "apps", "pods", "get", None)
    named = {**rule, "resourceNames": ["a"]}
    assert _rule_allows(named, "", "pods", "get", "a")
    assert not _rule_allows(named, "", "pods", "get", None)
