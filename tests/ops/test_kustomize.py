"""manifests/'s layout, rendered by `kubectl kustomize`: the aliases the README names, what each
component adds (TLS, HA, images, ServiceMonitor, PodGroup/ElasticQuota), and that the pieces
compose in the documented order. test_manifests.py checks every shipped variant as a whole."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from .kustomize import (
    EXTENDER_IMAGE,
    KUBE_SCHEDULER_IMAGE,
    MANIFESTS,
    RenderError,
    compose,
    render,
)

OVERLAYS = sorted(p.name for p in (MANIFESTS / "overlays").iterdir() if p.is_dir())
COMPONENTS = sorted(p.name for p in (MANIFESTS / "components").iterdir() if p.is_dir())
NAMESPACE = "scheduler-extender"


def _one(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    found = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(found) == 1, f"expected one {kind}/{name}, found {len(found)}"
    return found[0]


def _has(docs: list[dict[str, Any]], kind: str, name: str) -> bool:
    return any(d["kind"] == kind and d["metadata"]["name"] == name for d in docs)


def _config_map(docs: list[dict[str, Any]], prefix: str) -> dict[str, Any]:
    (found,) = [d for d in docs if d["kind"] == "ConfigMap"
                and d["metadata"]["name"].rsplit("-", 1)[0] == prefix]
    return found


def _pod(docs: list[dict[str, Any]], deployment: str) -> dict[str, Any]:
    return _one(docs, "Deployment", deployment)["spec"]["template"]["spec"]


def _container(docs: list[dict[str, Any]], name: str) -> dict[str, Any]:
    (found,) = [c for d in docs if d["kind"] == "Deployment"
                for c in d["spec"]["template"]["spec"]["containers"] if c["name"] == name]
    return found


def _argv(container: dict[str, Any]) -> list[str]:
    return container.get("command", []) + container.get("args", [])


def _scheduler_config(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return yaml.safe_load(_config_map(docs, "scheduler-config")["data"]["scheduler-config.yaml"])


def _secret_volumes(docs: list[dict[str, Any]], deployment: str) -> dict[str, str]:
    """Secret name -> where the pod's containers mount it."""
    pod = _pod(docs, deployment)
    secrets = {v["name"]: v["secret"]["secretName"] for v in pod["volumes"] if "secret" in v}
    return {secrets[m["name"]]: m["mountPath"] for c in pod["containers"]
            for m in c.get("volumeMounts", []) if m["name"] in secrets}


# --- layout ------------------------------------------------------------------------------------

def test_the_layout_is_one_base_components_and_overlays() -> None:
    assert (MANIFESTS / "base" / "kustomization.yaml").is_file()
    assert OVERLAYS == ["extender-service", "gang-quota", "second-scheduler", "sidecar"]
    assert COMPONENTS == ["gang-quota", "ha", "images", "kube-scheduler", "network-aware", "numa",
                          "servicemonitor", "sidecar", "tls"]
    for overlay in OVERLAYS:
        kustomization = yaml.safe_load(
            (MANIFESTS / "overlays" / overlay / "kustomization.yaml").read_text())
        assert kustomization["resources"] == ["../../base"], overlay
    for component in COMPONENTS:
        kustomization = yaml.safe_load(
            (MANIFESTS / "components" / component / "kustomization.yaml").read_text())
        assert kustomization["kind"] == "Component", component


@pytest.mark.parametrize(("alias", "overlay"), [(".", "second-scheduler"),
                                                ("sidecar", "sidecar")])
def test_the_paths_the_readme_names_apply_their_overlays(alias: str, overlay: str) -> None:
    """`kubectl apply -k manifests/` and `manifests/sidecar/` keep working."""
    assert render(MANIFESTS / alias) == render(MANIFESTS / "overlays" / overlay)


def test_every_component_is_composed_by_an_overlay_or_listed_as_optional() -> None:
    used: set[str] = set()
    optional: set[str] = set()
    for overlay in OVERLAYS:
        text = (MANIFESTS / "overlays" / overlay / "kustomization.yaml").read_text()
        used |= {Path(c).name for c in yaml.safe_load(text)["components"]}
        optional |= {Path(line.split("#")[1].strip().lstrip("- ")).name
                     for line in text.splitlines()
                     if line.strip().startswith("# - ../../components/")}
    assert used | optional == set(COMPONENTS)
    assert optional == {"servicemonitor", "gang-quota", "network-aware", "numa"}


def test_the_sidecar_component_needs_kube_scheduler_first() -> None:
    """A wrong order fails loudly instead of rendering a broken variant."""
    with pytest.raises(RenderError):
        compose("sidecar")
    with pytest.raises(RenderError):
        compose("sidecar", "kube-scheduler")


# --- images ------------------------------------------------------------------------------------

def _resource_files() -> list[Path]:
    return [p for p in MANIFESTS.rglob("*.yaml") if p.name != "kustomization.yaml"]


def test_resources_name_only_placeholder_images() -> None:
    """Images are set by components/images, never in a resource file."""
    placeholders = set()
    for path in _resource_files():
        for doc in yaml.safe_load_all(path.read_text()):
            for value in _walk(doc):
                if isinstance(value, dict) and "image" in value and "name" in value:
                    placeholders.add(value["image"])
    assert placeholders == {"scheduler-extender", "kube-scheduler"}


def _walk(node: Any) -> Any:
    yield node
    if isinstance(node, dict):
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def _images(docs: list[dict]) -> dict[str, str]:
    return {c["name"]: c["image"] for d in docs if d["kind"] == "Deployment"
            for c in d["spec"]["template"]["spec"]["containers"]}


def test_images_are_set_in_one_place() -> None:
    """Only components/images names the images; every overlay includes it."""
    setting = sorted(str(p.relative_to(MANIFESTS)) for p in MANIFESTS.rglob("kustomization.yaml")
                     if "images" in (yaml.safe_load(p.read_text()) or {}))
    assert setting == ["components/images/kustomization.yaml"]
    for overlay in OVERLAYS:
        kustomization = yaml.safe_load(
            (MANIFESTS / "overlays" / overlay / "kustomization.yaml").read_text())
        assert "../../components/images" in kustomization["components"], overlay


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_overlay_renders_the_images_component_sets(overlay: str) -> None:
    images = _images(render(MANIFESTS / "overlays" / overlay))
    assert images["extender"] == EXTENDER_IMAGE
    if "kube-scheduler" in images:
        assert images["kube-scheduler"] == KUBE_SCHEDULER_IMAGE


@pytest.mark.slow
def test_editing_the_images_component_changes_every_overlay(tmp_path: Path) -> None:
    """What `kustomize edit set image` in components/images does, seen in every variant."""
    copy = tmp_path / "manifests"
    shutil.copytree(MANIFESTS, copy)
    component = copy / "components" / "images" / "kustomization.yaml"
    doc = yaml.safe_load(component.read_text())
    for entry in doc["images"]:
        if entry["name"] == "scheduler-extender":
            entry.update(newName="registry.example.com/team/scheduler-extender", newTag="0.2.0")
    component.write_text(yaml.safe_dump(doc))
    for directory in [copy, copy / "sidecar", *(copy / "overlays" / o for o in OVERLAYS)]:
        images = _images(render(directory))
        assert images["extender"] == "registry.example.com/team/scheduler-extender:0.2.0", directory
        assert images.get("kube-scheduler", KUBE_SCHEDULER_IMAGE) == KUBE_SCHEDULER_IMAGE


def test_an_images_entry_changes_the_rendered_image() -> None:
    docs = compose("kube-scheduler", extra="images:\n  - name: scheduler-extender\n"
                   "    newName: registry.example/ext\n    newTag: 9.9.9\n")
    assert _container(docs, "extender")["image"] == "registry.example/ext:9.9.9"
    assert _container(docs, "kube-scheduler")["image"] == "kube-scheduler"  # unset: placeholder


def _without_listening(container: dict) -> dict:
    """The container but where it listens: its address and port flags, and its ports."""
    argv, kept = container["args"], []
    listening = {"--host", "--port", "--bind-address", "--secure-port", "--health-host",
                 "--health-port"}
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in listening:
            skip = True
        else:
            kept.append(arg)
    return {**container, "args": kept, "ports": None}


def test_the_sidecar_runs_the_base_extender_container() -> None:
    """components/sidecar repeats base/deployment.yaml's container; they must not drift, but
    in where they listen: the sidecar's verbs on loopback, its health port on the pod IP."""
    (base,) = yaml.safe_load_all((MANIFESTS / "base" / "deployment.yaml").read_text())
    (container,) = base["spec"]["template"]["spec"]["containers"]
    patch = yaml.safe_load((MANIFESTS / "components" / "sidecar" /
                            "extender-container.yaml").read_text())
    (added,) = [op["value"] for op in patch if op["path"].endswith("/containers/-")]
    assert _without_listening(added) == _without_listening(container)
    args = added["args"]
    assert args[args.index("--bind-address") + 1] == "127.0.0.1"
    assert [p["name"] for p in added["ports"]] == ["health"]
    volumes = [op["value"] for op in patch if op["path"].endswith("/volumes/-")]
    assert volumes == base["spec"]["template"]["spec"]["volumes"]


# --- tls ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("overlay", ["second-scheduler", "extender-service"])
def test_tls_serves_the_verbs_from_the_secret(overlay: str) -> None:
    docs = render(MANIFESTS / "overlays" / overlay)
    container = _container(docs, "extender")
    argv = _argv(container)
    mounts = _secret_volumes(docs, "scheduler-extender")
    assert mounts == {"scheduler-extender-tls": "/etc/extender/tls"}
    for flag, key in (("--tls-cert-file", "tls.crt"), ("--tls-key-file", "tls.key"),
                      ("--tls-client-ca-file", "client-ca.crt")):
        assert argv[argv.index(flag) + 1] == f"/etc/extender/tls/{key}"
    assert _pod(docs, "scheduler-extender")["securityContext"]["fsGroup"] == (
        container["securityContext"]["runAsGroup"])
    # Probes go to the plain health port, which the kubelet reaches without a certificate.
    assert {container[p]["httpGet"]["port"] for p in (
        "startupProbe", "livenessProbe", "readinessProbe")} == {"health"}
    (port,) = _one(docs, "Service", "scheduler-extender")["spec"]["ports"]
    assert port["appProtocol"] == "https"


def test_tls_makes_kube_scheduler_call_https_with_its_client_certificate() -> None:
    docs = render(MANIFESTS / "overlays" / "second-scheduler")
    (extender,) = _scheduler_config(docs)["extenders"]
    assert extender["urlPrefix"] == "https://scheduler-extender.scheduler-extender.svc:8888"
    assert extender["enableHTTPS"] is True
    mounts = _secret_volumes(docs, "extender-scheduler")
    assert mounts == {"extender-scheduler-client-tls": "/etc/kubernetes/extender-tls"}
    for key in ("caFile", "certFile", "keyFile"):
        assert extender["tlsConfig"][key].startswith("/etc/kubernetes/extender-tls/")


def test_without_tls_everything_is_plain_http_and_mounts_no_secret() -> None:
    docs = compose("kube-scheduler")
    (extender,) = _scheduler_config(docs)["extenders"]
    assert extender["urlPrefix"] == "http://scheduler-extender.scheduler-extender.svc:8888"
    assert "--tls-cert-file" not in _argv(_container(docs, "extender"))
    for deployment in ("scheduler-extender", "extender-scheduler"):
        assert _secret_volumes(docs, deployment) == {}
    (port,) = _one(docs, "Service", "scheduler-extender")["spec"]["ports"]
    assert port["appProtocol"] == "http"


# --- ha ----------------------------------------------------------------------------------------

def _ha_properties(docs: list[dict[str, Any]]) -> None:
    deployments = [d for d in docs if d["kind"] == "Deployment"]
    assert deployments
    budgets = [d["spec"] for d in docs if d["kind"] == "PodDisruptionBudget"]
    for deployment in deployments:
        assert deployment["spec"]["replicas"] >= 2
        pod = deployment["spec"]["template"]
        labels = pod["metadata"]["labels"]
        mine = [b for b in budgets if b["selector"]["matchLabels"].items() <= labels.items()]
        if any("--leader-elect" in c.get("args", []) for c in pod["spec"]["containers"]):
            # Only the extender's leader is Ready: a budget would never let it be evicted, and
            # a drain of its node would wait for ever (seen on the sandbox).
            assert mine == [], deployment["metadata"]["name"]
            continue
        (budget,) = mine
        assert budget["minAvailable"] < deployment["spec"]["replicas"]
        (term,) = pod["spec"]["affinity"]["podAntiAffinity"][
            "preferredDuringSchedulingIgnoredDuringExecution"]
        assert term["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
        assert term["podAffinityTerm"]["labelSelector"]["matchLabels"].items() <= labels.items()


@pytest.mark.parametrize("overlay", ["second-scheduler", "sidecar", "extender-service"])
def test_ha_gives_replicas_budgets_and_anti_affinity(overlay: str) -> None:
    docs = render(MANIFESTS / "overlays" / overlay)
    _ha_properties(docs)
    if overlay != "extender-service":
        argv = _argv(_container(docs, "kube-scheduler"))
        assert "--leader-elect=true" in argv
    extender = _argv(_container(docs, "extender"))
    leases = [d for d in docs if d["kind"] in ("Role", "RoleBinding")
              and d["metadata"]["name"] == "scheduler-extender-leader-election"]
    if overlay == "sidecar":
        # Each kube-scheduler replica calls its own sidecar; kube-scheduler's election decides.
        assert all("--leader-elect" not in a for a in extender) and not leases
    else:
        # The extender's own replicas elect a leader: only it is Ready behind the Service, and
        # a gang's holds live in it alone. Its ServiceAccount may get and update its Lease.
        assert "--leader-elect" in extender
        (role,) = [d for d in leases if d["kind"] == "Role"]
        (binding,) = [d for d in leases if d["kind"] == "RoleBinding"]
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "scheduler-extender",
                                        "namespace": "scheduler-extender"}]
        rules = {(tuple(r["verbs"]), tuple(r.get("resourceNames", ()))) for r in role["rules"]}
        assert rules == {(("create",), ()), (("get", "update"), ("scheduler-extender",))}


def test_without_ha_one_replica_and_no_budget() -> None:
    docs = compose("kube-scheduler", "tls")
    assert [d["spec"]["replicas"] for d in docs if d["kind"] == "Deployment"] == [1, 1]
    assert not any(d["kind"] == "PodDisruptionBudget" for d in docs)
    assert "--leader-elect=true" not in _argv(_container(docs, "kube-scheduler"))
    # The lease is still on: a rolling update (maxSurge 1) briefly runs two schedulers.
    assert _scheduler_config(docs)["leaderElection"]["leaderElect"] is True


# --- servicemonitor ----------------------------------------------------------------------------

def test_servicemonitor_scrapes_the_services_metrics_port() -> None:
    docs = compose("kube-scheduler", "servicemonitor")
    monitor = _one(docs, "ServiceMonitor", "scheduler-extender")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    service = _one(docs, "Service", "scheduler-extender")
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert monitor["spec"]["namespaceSelector"]["matchNames"] == [NAMESPACE]
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["port"] in {p["name"] for p in service["spec"]["ports"]}
    assert (endpoint["path"], endpoint["scheme"]) == ("/metrics", "http")
    assert "tlsConfig" not in endpoint


def test_servicemonitor_before_tls_scrapes_over_mutual_tls() -> None:
    docs = compose("kube-scheduler", "servicemonitor", "tls", "ha")
    (endpoint,) = _one(docs, "ServiceMonitor", "scheduler-extender")["spec"]["endpoints"]
    assert endpoint["scheme"] == "https"
    tls = endpoint["tlsConfig"]
    assert tls["serverName"] == "scheduler-extender.scheduler-extender.svc"
    secrets = {tls["ca"]["secret"]["name"], tls["cert"]["secret"]["name"],
               tls["keySecret"]["name"]}
    assert secrets == {"scheduler-extender-metrics-client-tls"}
    assert (tls["ca"]["secret"]["key"], tls["cert"]["secret"]["key"],
            tls["keySecret"]["key"]) == ("ca.crt", "tls.crt", "tls.key")


def test_the_servicemonitor_is_not_in_the_default_overlays() -> None:
    """It needs prometheus-operator's CRD, which a plain cluster does not have."""
    for overlay in OVERLAYS:
        assert not any(d["kind"] == "ServiceMonitor" for d in render(
            MANIFESTS / "overlays" / overlay)), overlay


# --- gang-quota --------------------------------------------------------------------------------

def _crds() -> dict[str, dict[str, Any]]:
    docs = compose("gang-quota")
    return {d["spec"]["names"]["kind"]: d for d in docs if d["kind"] == "CustomResourceDefinition"}


def test_gang_quota_ships_the_scheduler_plugins_crds() -> None:
    crds = _crds()
    assert set(crds) == {"PodGroup", "ElasticQuota"}
    for kind, crd in crds.items():
        spec = crd["spec"]
        assert spec["group"] == "scheduling.x-k8s.io" and spec["scope"] == "Namespaced"
        assert crd["metadata"]["name"] == f"{spec['names']['plural']}.{spec['group']}"
        (version,) = spec["versions"]
        assert (version["name"], version["served"], version["storage"]) == (
            "v1alpha1", True, True), kind
        assert version["subresources"] == {"status": {}}


def test_gang_quota_crds_match_what_the_informer_watches() -> None:
    from extender.engine.registry import WATCHED

    crds = {crd["metadata"]["name"]: crd for crd in _crds().values()}
    specs = {spec for spec in WATCHED.values()
             if spec.component == "gang-quota"}
    assert {spec.crd for spec in specs} == set(crds)
    for spec in specs:
        crd = crds[spec.crd]["spec"]
        (version,) = crd["versions"]
        assert spec.path == f"/apis/{crd['group']}/{version['name']}/{crd['names']['plural']}"


def _schema(kind: str) -> dict[str, Any]:
    (version,) = _crds()[kind]["spec"]["versions"]
    return version["schema"]["openAPIV3Schema"]


@pytest.mark.parametrize(("kind", "good", "bad"), [
    ("PodGroup", {"spec": {"minMember": 3, "minResources": {"cpu": "2", "memory": "1Gi"},
                           "scheduleTimeoutSeconds": 60}},
     {"spec": {"minMember": 0}}),
    ("ElasticQuota", {"spec": {"min": {"cpu": 2}, "max": {"cpu": "10", "memory": "20Gi"}}},
     {"spec": {"max": {"cpu": "lots"}}}),
])
def test_gang_quota_crd_schemas_accept_upstream_objects(kind: str, good: dict[str, Any],
                                                        bad: dict[str, Any]) -> None:
    schema = _schema(kind)
    obj = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": kind,
           "metadata": {"name": "x", "namespace": "default"}}
    jsonschema.validate({**obj, **good}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**obj, **bad}, schema)


@pytest.mark.parametrize("components", [
    ("kube-scheduler", "tls", "ha", "gang-quota"),
    ("kube-scheduler", "ha", "sidecar", "gang-quota"),
    ("kube-scheduler", "gang-quota", "ha", "sidecar"),   # order does not matter for it
    ("tls", "ha", "gang-quota"),
], ids=["second-scheduler", "sidecar", "sidecar-gang-quota-first", "extender-service"])
def test_gang_quota_lets_the_extender_read_podgroups_and_elasticquotas(
        components: tuple[str, ...]) -> None:
    from extender.engine.registry import WATCHED

    from .test_manifests import _allowed, _service_account, informer_collection

    docs = compose(*components)
    account = _service_account(docs, "extender")
    for spec in (s for s in WATCHED.values()
                 if s.component == "gang-quota"):
        group, resource = informer_collection(spec.path)
        for verb in ("get", "list", "watch"):
            assert _allowed(docs, account, group, resource, verb, namespace="default"), (
                f"{verb} {group}/{resource}")
        for verb in ("create", "update", "delete"):
            assert not _allowed(docs, account, group, resource, verb, namespace="default")


def test_without_gang_quota_no_access_to_podgroups() -> None:
    from .test_manifests import _allowed, _service_account

    docs = render(MANIFESTS)
    account = _service_account(docs, "extender")
    assert not _allowed(docs, account, "scheduling.x-k8s.io", "podgroups", "list",
                        namespace="default")
    assert not any(d["kind"] == "CustomResourceDefinition" for d in docs)


# --- network-aware -----------------------------------------------------------------------------

def _network_crds() -> dict[str, dict[str, Any]]:
    docs = compose("network-aware")
    return {d["spec"]["names"]["kind"]: d for d in docs if d["kind"] == "CustomResourceDefinition"}


def test_network_aware_ships_the_diktyo_crds() -> None:
    crds = _network_crds()
    assert set(crds) == {"AppGroup", "NetworkTopology"}
    for kind, crd in crds.items():
        spec = crd["spec"]
        assert spec["group"] == f"{kind.lower()}.diktyo.x-k8s.io" and spec["scope"] == "Namespaced"
        assert crd["metadata"]["name"] == f"{spec['names']['plural']}.{spec['group']}"
        (version,) = spec["versions"]
        assert (version["name"], version["served"], version["storage"]) == (
            "v1alpha1", True, True), kind


def test_network_aware_crds_match_what_the_informer_watches() -> None:
    from extender.engine.registry import WATCHED

    crds = {crd["metadata"]["name"]: crd for crd in _network_crds().values()}
    specs = {spec for spec in WATCHED.values()
             if spec.component == "network-aware"}
    assert {spec.crd for spec in specs} == set(crds)
    for spec in specs:
        crd = crds[spec.crd]["spec"]
        (version,) = crd["versions"]
        assert spec.path == f"/apis/{crd['group']}/{version['name']}/{crd['names']['plural']}"


@pytest.mark.parametrize(("kind", "good", "bad"), [
    ("AppGroup", {"spec": {"numMembers": 2, "topologySortingAlgorithm": "KahnSort", "workloads": [
        {"workload": {"kind": "Deployment", "name": "w1", "selector": "w1"},
         "dependencies": [{"workload": {"kind": "Deployment", "name": "w2", "selector": "w2"},
                           "minBandwidth": "100Mi", "maxNetworkCost": 30}]},
        {"workload": {"kind": "Deployment", "name": "w2", "selector": "w2"}}]}},
     {"spec": {"numMembers": 0, "topologySortingAlgorithm": "KahnSort", "workloads": []}}),
    ("NetworkTopology", {"spec": {"configmapName": "netperf", "weights": [
        {"name": "UserDefined", "topologyList": [
            {"topologyKey": "topology.kubernetes.io/zone", "originList": [
                {"origin": "z1", "costList": [{"destination": "z2", "networkCost": 5,
                                               "bandwidthCapacity": "10Gi"}]}]}]}]}},
     {"spec": {"configmapName": "x", "weights": [{"name": "UserDefined", "topologyList": [
         {"topologyKey": "topology.kubernetes.io/zone", "originList": [
             {"origin": "z1", "costList": [{"destination": "z2", "networkCost": -1}]}]}]}]}}),
])
def test_network_aware_crd_schemas_accept_upstream_objects(kind: str, good: dict[str, Any],
                                                           bad: dict[str, Any]) -> None:
    (version,) = _network_crds()[kind]["spec"]["versions"]
    schema = version["schema"]["openAPIV3Schema"]
    obj = {"apiVersion": f"{kind.lower()}.diktyo.x-k8s.io/v1alpha1", "kind": kind,
           "metadata": {"name": "x", "namespace": "default"}}
    jsonschema.validate({**obj, **good}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**obj, **bad}, schema)


@pytest.mark.parametrize("components", [
    ("kube-scheduler", "tls", "ha", "network-aware"),
    ("kube-scheduler", "ha", "sidecar", "network-aware", "gang-quota"),
    ("tls", "ha", "network-aware"),
], ids=["second-scheduler", "sidecar-with-gang-quota", "extender-service"])
def test_network_aware_lets_the_extender_read_appgroups_and_networktopologies(
        components: tuple[str, ...]) -> None:
    from extender.engine.registry import WATCHED

    from .test_manifests import _allowed, _service_account, informer_collection

    docs = compose(*components)
    account = _service_account(docs, "extender")
    for spec in (s for s in WATCHED.values()
                 if s.component == "network-aware" or s.component in components):
        group, resource = informer_collection(spec.path)
        for verb in ("get", "list", "watch"):
            assert _allowed(docs, account, group, resource, verb, namespace="default"), (
                f"{verb} {group}/{resource}")
        for verb in ("create", "update", "delete"):
            assert not _allowed(docs, account, group, resource, verb, namespace="default")


def test_without_network_aware_no_access_to_appgroups() -> None:
    from .test_manifests import _allowed, _service_account

    docs = render(MANIFESTS)
    account = _service_account(docs, "extender")
    assert not _allowed(docs, account, "appgroup.diktyo.x-k8s.io", "appgroups", "list",
                        namespace="default")


# --- numa ----------------------------------------------------------------------------------------

def _numa_crd() -> dict[str, Any]:
    docs = compose("numa")
    (crd,) = [d for d in docs if d["kind"] == "CustomResourceDefinition"]
    return crd


def test_numa_ships_the_node_resource_topology_crd_the_informer_watches() -> None:
    from extender.engine.registry import WATCHED

    crd = _numa_crd()
    spec = crd["spec"]
    assert spec["names"]["kind"] == "NodeResourceTopology" and spec["scope"] == "Cluster"
    assert crd["metadata"]["name"] == f"{spec['names']['plural']}.{spec['group']}"
    (version,) = spec["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1alpha2", True, True)
    (watched,) = [s for s in WATCHED.values()
                  if s.component == "numa"]
    assert watched.crd == crd["metadata"]["name"]
    assert watched.path == f"/apis/{spec['group']}/{version['name']}/{spec['names']['plural']}"


def test_numa_crd_schema_accepts_an_agent_report() -> None:
    (version,) = _numa_crd()["spec"]["versions"]
    schema = version["schema"]["openAPIV3Schema"]
    obj = {"apiVersion": "topology.node.k8s.io/v1alpha2", "kind": "NodeResourceTopology",
           "metadata": {"name": "worker-1"},
           "attributes": [{"name": "topologyManagerPolicy", "value": "single-numa-node"},
                          {"name": "topologyManagerScope", "value": "container"}],
           "zones": [{"name": "node-0", "type": "Node",
                      "costs": [{"name": "node-0", "value": 10}, {"name": "node-1", "value": 21}],
                      "resources": [{"name": "cpu", "capacity": 16, "allocatable": "14",
                                     "available": "6"}]}]}
    jsonschema.validate(obj, schema)
    with pytest.raises(jsonschema.ValidationError):  # zones are required
        jsonschema.validate({k: v for k, v in obj.items() if k != "zones"}, schema)
    with pytest.raises(jsonschema.ValidationError):  # not a quantity
        bad = {**obj, "zones": [{"name": "node-0", "type": "Node", "resources": [
            {"name": "cpu", "capacity": "lots", "allocatable": "1", "available": "1"}]}]}
        jsonschema.validate(bad, schema)


@pytest.mark.parametrize("components", [
    ("kube-scheduler", "tls", "ha", "numa"),
    ("kube-scheduler", "ha", "sidecar", "numa", "gang-quota"),
    ("tls", "ha", "numa"),
], ids=["second-scheduler", "sidecar-with-gang-quota", "extender-service"])
def test_numa_lets_the_extender_read_node_resource_topologies(
        components: tuple[str, ...]) -> None:
    from extender.engine.registry import WATCHED

    from .test_manifests import _allowed, _service_account, informer_collection

    docs = compose(*components)
    account = _service_account(docs, "extender")
    for spec in (s for s in WATCHED.values()
                 if s.component in components):
        group, resource = informer_collection(spec.path)
        for verb in ("get", "list", "watch"):
            assert _allowed(docs, account, group, resource, verb), f"{verb} {group}/{resource}"
        for verb in ("create", "update", "delete"):
            assert not _allowed(docs, account, group, resource, verb)


def test_without_numa_no_access_to_node_resource_topologies() -> None:
    from .test_manifests import _allowed, _service_account

    docs = render(MANIFESTS)
    account = _service_account(docs, "extender")
    assert not _allowed(docs, account, "topology.node.k8s.io", "noderesourcetopologies", "list")
