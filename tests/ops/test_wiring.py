"""`check-config` on rendered manifests follows each connection: kube-scheduler to the
extender, Prometheus to its metrics, each RoleBinding to its ServiceAccount (`ops.wiring`).

kustomize skips a component's patch whose target does not exist yet, so components listed in
the wrong order render a variant that does not work. Each wrong order that renders is named
here with what `check-config -` says of it; every documented order says nothing.
"""

from __future__ import annotations

import copy
import io
from typing import Any

import pytest
import yaml

from extender.cli import main
from extender.ops.deployability import PLACEHOLDER_IMAGES
from extender.ops.problems import Collector
from extender.ops.schedconfig import check_manifests

from .kustomize import MANIFESTS, ROOT, compose


def _problems(docs: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    out = Collector("-")
    check_manifests(docs, out)
    return [(p.severity, p.path.split(": ")[-1], p.message) for p in out.problems]


# --- the components' orders ------------------------------------------------------------------

#: Every order the docs give (docs/operations.md), each optional component in its place.
GOOD_ORDERS = [
    ("kube-scheduler", "servicemonitor", "tls", "ha", "gang-quota", "images"),
    ("kube-scheduler", "servicemonitor", "ha", "sidecar", "numa", "images"),
    ("kube-scheduler", "tls", "ha", "network-aware", "numa", "images"),
    ("kube-scheduler", "ha", "images"),
    ("kube-scheduler", "tls", "images"),
]


@pytest.mark.parametrize("components", GOOD_ORDERS, ids="+".join)
def test_every_documented_order_connects(components: tuple[str, ...]) -> None:
    assert _problems(compose(*components)) == []


#: Wrong orders that render, and the (severity, path, words) `check-config` gives for each.
WRONG_ORDERS = {
    "tls before kube-scheduler": (
        ("tls", "kube-scheduler", "ha", "images"),
        ("error", "extenders[0].urlPrefix", "http:// to the extender of "
         "Deployment/scheduler-extender, which serves only TLS")),
    "servicemonitor after tls": (
        ("kube-scheduler", "tls", "servicemonitor", "ha", "images"),
        ("error", "ServiceMonitor/scheduler-extender.spec.endpoints[0].scheme",
         "serves /metrics only over TLS")),
    "servicemonitor after sidecar": (
        ("kube-scheduler", "ha", "sidecar", "servicemonitor", "images"),
        ("error", "ServiceMonitor/scheduler-extender.spec.endpoints[0].port",
         "'extender' is no port of Service/scheduler-extender (its ports: metrics)")),
    "sidecar before ha": (
        ("kube-scheduler", "sidecar", "ha", "images"),
        ("warning", "RoleBinding/scheduler-extender-leader-election.subjects[0]",
         "ServiceAccount scheduler-extender/scheduler-extender is not among these manifests")),
    "sidecar before tls": (
        ("kube-scheduler", "ha", "sidecar", "tls", "images"),
        ("error", "extenders[0].urlPrefix", "Service/scheduler-extender has no port 8888")),
    "tls with the sidecar": (
        ("kube-scheduler", "tls", "ha", "sidecar", "images"),
        ("warning", "Deployment/extender-scheduler.spec.template.spec.volumes",
         "mounts Secret extender-scheduler-client-tls at /etc/kubernetes/extender-tls, which "
         "nothing it reads names")),
    "ha before kube-scheduler": (
        ("ha", "kube-scheduler", "tls", "images"),
        ("error", "PodDisruptionBudget/extender-scheduler.spec",
         "lets none of the 1 pod(s) of Deployment/extender-scheduler (1) be evicted")),
    "images before kube-scheduler": (
        ("images", "kube-scheduler", "tls", "ha"),
        ("error", "Deployment/extender-scheduler.spec.template.spec.containers[0].image",
         "kube-scheduler is the manifests' placeholder")),
    "ha without kube-scheduler": (
        ("tls", "ha", "images"),
        ("warning", "PodDisruptionBudget/extender-scheduler.spec.selector",
         "selects no pod of these manifests")),
}


@pytest.mark.parametrize("case", WRONG_ORDERS.values(), ids=WRONG_ORDERS.keys())
def test_a_wrong_order_that_renders_is_named(
        case: tuple[tuple[str, ...], tuple[str, str, str]]) -> None:
    components, (severity, path, words) = case
    found = _problems(compose(*components))
    assert [(s, p) for s, p, _ in found] == [(severity, path)], found
    assert words in found[0][2]


def test_a_policy_needing_a_component_left_out_is_refused() -> None:
    """The extender would never turn Ready: its account may not read the reports."""
    numa = (ROOT / "config" / "examples" / "numa-policy.yaml").read_text()
    extra = _replace_policy(numa)
    found = _problems(compose("kube-scheduler", "tls", "ha", "images", extra=extra))
    assert [(s, p) for s, p, _ in found] == [
        ("error", "Deployment/scheduler-extender.spec.template.spec.serviceAccountName")], found
    assert found[0][2] == (
        "the policy enables NodeResourceTopologyMatch, which reads noderesourcetopologies "
        "(topology.node.k8s.io), which ServiceAccount scheduler-extender/scheduler-extender "
        "may not list and watch: the extender never turns Ready; components/numa grants it "
        "and ships the CRD")
    assert _problems(compose("kube-scheduler", "tls", "ha", "numa", "images", extra=extra)) == []


def _replace_policy(text: str) -> str:
    return yaml.safe_dump({"configMapGenerator": [{
        "name": "extender-policy", "namespace": "scheduler-extender", "behavior": "replace",
        "literals": [f"policy.yaml={text}"]}]}, sort_keys=False)


def test_the_placeholders_are_the_images_component_sets() -> None:
    images = yaml.safe_load((MANIFESTS / "components" / "images" / "kustomization.yaml").read_text())
    assert sorted(i["name"] for i in images["images"]) == sorted(PLACEHOLDER_IMAGES)


def test_check_config_on_standard_input_fails_on_a_wrong_order(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`kubectl kustomize DIR | extender check-config -`, as docs/operations.md says."""
    docs = compose("tls", "kube-scheduler", "ha", "images")
    monkeypatch.setattr("sys.stdin", io.StringIO(yaml.safe_dump_all(docs)))
    assert main(["check-config", "-"]) == 1
    printed = capsys.readouterr()
    assert "extenders[0].urlPrefix: http:// to the extender" in printed.out + printed.err


# --- each connection, on hand-made objects ----------------------------------------------------

def _deployment(name: str, containers: list[dict[str, Any]], labels: dict[str, str],
                config_map: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": containers}
    if config_map:
        spec["volumes"] = [{"name": "config", "configMap": {"name": config_map}}]
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "ns"},
            "spec": {"replicas": 1, "template": {"metadata": {"labels": labels}, "spec": spec}}}


def _extender(*args: str, ports: dict[str, int] | None = None) -> dict[str, Any]:
    return {"name": "extender", "command": ["extender"], "args": ["serve", *args],
            "ports": [{"name": n, "containerPort": p} for n, p in (ports or {}).items()]}


def _config(url: str, tls: dict[str, Any] | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"urlPrefix": url, "filterVerb": "filter"}
    if tls is not None:
        entry["tlsConfig"] = tls
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "extenders": [entry]}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "sc", "namespace": "ns"},
            "data": {"config.yaml": yaml.safe_dump(config)}}


def _service(ports: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "ext", "namespace": "ns", "labels": {"app": "ext"}},
            "spec": {"selector": {"app": "ext"}, "ports": ports}}


SCHEDULER = {"name": "kube-scheduler", "command": ["kube-scheduler", "--config=/c/config.yaml"]}
MAIN = {"name": "main", "port": 8888, "targetPort": "main"}
TLS = ("--host", "0.0.0.0", "--tls-cert-file", "c", "--tls-key-file", "k")


def _through_service(url: str, *args: str, service_ports: list[dict[str, Any]] | None = None,
                     tls: dict[str, Any] | None = None) -> list[tuple[str, str, str]]:
    return _problems([
        _config(url, tls),
        _deployment("scheduler", [SCHEDULER], {"app": "sched"}, config_map="sc"),
        _deployment("ext", [_extender(*args, ports={"main": 8888, "health": 8081})],
                    {"app": "ext"}),
        _service(service_ports or [MAIN])])


def test_through_a_service_the_plain_and_tls_calls_that_work_say_nothing() -> None:
    assert _through_service("http://ext.ns.svc:8888", "--host", "0.0.0.0") == []
    assert _through_service("https://ext.ns.svc:8888", *TLS) == []
    assert _through_service("https://ext:8888", *TLS, "--tls-client-ca-file", "ca",
                            tls={"certFile": "c", "keyFile": "k"}) == []


def test_https_to_a_plain_extender_is_refused() -> None:
    (found,) = _through_service("https://ext.ns.svc:8888", "--host", "0.0.0.0")
    assert found[:2] == ("error", "extenders[0].urlPrefix")
    assert "serves plain HTTP (no --tls-cert-file)" in found[2]


def test_mutual_tls_without_a_client_certificate_is_refused() -> None:
    (found,) = _through_service("https://ext.ns.svc:8888", *TLS, "--client-ca-file", "ca",
                                tls={"caFile": "ca"})
    assert found[:2] == ("error", "extenders[0].tlsConfig")
    assert "demands a client certificate" in found[2]


def test_a_port_the_service_lacks_is_refused() -> None:
    (found,) = _through_service("http://ext.ns.svc:9999", "--host", "0.0.0.0")
    assert found == ("error", "extenders[0].urlPrefix", "Service/ext has no port 9999 (its ports: 8888)")


def test_a_service_port_reaching_the_health_port_is_refused() -> None:
    (found,) = _through_service("http://ext.ns.svc:8888", "--host", "0.0.0.0",
                                "--health-port", "8081",
                                service_ports=[{"name": "main", "port": 8888, "targetPort": 8081}])
    assert "reaches the extender's health port, which serves no verbs" in found[2]


def test_a_service_to_an_extender_on_loopback_is_refused() -> None:
    (found,) = _through_service("http://ext.ns.svc:8888")
    assert "listens on 127.0.0.1 only: Service/ext cannot reach it" in found[2]


def test_a_target_port_no_container_has_is_refused() -> None:
    (found,) = _through_service("http://ext.ns.svc:8888", "--host", "0.0.0.0",
                                service_ports=[{"name": "main", "port": 8888, "targetPort": "web"}])
    assert "its targetPort web is no port of an extender container" in found[2]


def _in_the_pod(url: str, *containers: dict[str, Any]) -> list[tuple[str, str, str]]:
    return _problems([_config(url), _deployment("scheduler", [SCHEDULER, *containers],
                                                {"app": "sched"}, config_map="sc")])


def test_on_loopback_the_extender_in_kube_schedulers_pod_is_checked() -> None:
    assert _in_the_pod("http://127.0.0.1:8888", _extender()) == []
    (found,) = _in_the_pod("http://127.0.0.1:8080", _extender())
    assert "nothing in Deployment/scheduler's pod listens on port 8080: its extender listens " \
           "on 8888" in found[2]
    (found,) = _in_the_pod("http://localhost:8888", _extender("--tls-cert-file", "c"))
    assert "which serves only TLS" in found[2]
    (found,) = _in_the_pod("http://127.0.0.1:8888")
    assert "no extender container runs in it (Deployment/scheduler)" in found[2]


def test_an_extender_run_through_python_is_one() -> None:
    container = {"name": "extender", "command": ["python", "-m", "extender", "serve"],
                 "args": ["--tls-cert-file", "c"]}
    (found,) = _in_the_pod("http://127.0.0.1:8888", container)
    assert "which serves only TLS" in found[2]


def test_what_the_manifests_do_not_hold_is_not_guessed_at() -> None:
    # A Service elsewhere, and a configuration no pod here mounts.
    assert _problems([_config("http://elsewhere.other.svc:8888")]) == []
    assert _problems([_config("http://127.0.0.1:8888")]) == []


def _monitor(endpoint: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
            "metadata": {"name": "m", "namespace": "ns"},
            "spec": {"selector": {"matchLabels": {"app": "ext"}}, "endpoints": [endpoint]}}


def _scraped(endpoint: dict[str, Any], *args: str) -> list[tuple[str, str, str]]:
    return _problems([
        _deployment("ext", [_extender("--host", "0.0.0.0", *args,
                                      ports={"main": 8888, "health": 8081})], {"app": "ext"}),
        _service([MAIN, {"name": "health", "port": 8081, "targetPort": "health"}]),
        _monitor(endpoint)])


def test_a_scrape_of_the_health_port_under_mutual_tls_is_refused() -> None:
    assert _scraped({"port": "health"}, "--health-port", "8081") == []
    (found,) = _scraped({"port": "health"}, "--health-port", "8081", *TLS[2:],
                        "--client-ca-file", "ca")
    assert found[:2] == ("error", "ServiceMonitor/m.spec.endpoints[0].port")
    assert "serves no /metrics on its health port under mutual TLS" in found[2]


def test_a_scrape_over_mutual_tls_needs_a_client_certificate() -> None:
    tls = ("--tls-cert-file", "c", "--client-ca-file", "ca")
    (found,) = _scraped({"port": "main", "scheme": "https"}, *tls)
    assert found[:2] == ("error", "ServiceMonitor/m.spec.endpoints[0].tlsConfig")
    assert _scraped({"port": "main", "scheme": "https",
                     "tlsConfig": {"cert": {"secret": {"name": "s", "key": "tls.crt"}},
                                   "keySecret": {"name": "s", "key": "tls.key"}}}, *tls) == []


def test_a_binding_to_an_account_elsewhere_is_left_alone() -> None:
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "b", "namespace": "ns"},
               "subjects": [{"kind": "ServiceAccount", "name": "a", "namespace": "kube-system"}]}
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}}
    assert _problems([namespace, binding]) == []
    mine = copy.deepcopy(binding)
    mine["subjects"][0]["namespace"] = "ns"
    assert [p[:2] for p in _problems([namespace, mine])] == [("warning", "RoleBinding/b.subjects[0]")]


def test_a_namespace_moved_by_the_kustomization_is_named() -> None:
    found = _problems(compose("kube-scheduler", "tls", "ha", "images",
                              extra="namespace: sched-ext\n"))
    assert ("error", "extenders[0].urlPrefix",
            "scheduler-extender.scheduler-extender.svc is Service scheduler-extender in "
            "namespace scheduler-extender, but these manifests put it in sched-ext: a "
            "kustomization's `namespace:` moves the objects, not the names inside "
            "kube-scheduler's configuration (set urlPrefix to match)") in found, found


def test_a_file_kube_scheduler_reads_must_lie_on_a_volume() -> None:
    scheduler = {**SCHEDULER, "volumeMounts": [{"name": "config", "mountPath": "/c"}]}
    docs = [_config("https://ext.ns.svc:8888", tls={"caFile": "/etc/tls/ca.crt"}),
            _deployment("scheduler", [scheduler], {"app": "sched"}, config_map="sc"),
            _deployment("ext", [_extender(*TLS, ports={"main": 8888})], {"app": "ext"}),
            _service([MAIN])]
    assert _problems(docs) == [
        ("warning", "extenders[0].tlsConfig.caFile", "/etc/tls/ca.crt lies on no volume of "
         "Deployment/scheduler's kube-scheduler container: kube-scheduler cannot read it "
         "unless its image holds it")]
    scheduler["volumeMounts"].append({"name": "tls", "mountPath": "/etc/tls"})
    docs[1]["spec"]["template"]["spec"]["volumes"].append(
        {"name": "tls", "secret": {"secretName": "s"}})
    assert _problems(docs) == []


def test_a_budget_counts_percentages_as_the_disruption_controller_does() -> None:
    def budget(**spec: Any) -> dict[str, Any]:
        return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                "metadata": {"name": "b", "namespace": "ns"},
                "spec": {"selector": {"matchLabels": {"app": "ext"}}, **spec}}

    def verdict(replicas: int, **spec: Any) -> list[str]:
        pod = _deployment("ext", [_extender("--host", "0.0.0.0")], {"app": "ext"})
        pod["spec"]["replicas"] = replicas
        return [s for s, _, _ in _problems([pod, budget(**spec)])]

    assert verdict(2, minAvailable=1) == [] and verdict(1, minAvailable=1) == ["error"]
    assert verdict(3, minAvailable="50%") == [] and verdict(3, minAvailable="100%") == ["error"]
    # maxUnavailable's percentage rounds up too: 1 % of 2 pods lets one go.
    assert verdict(2, maxUnavailable="1%") == [] and verdict(2, maxUnavailable="0%") == ["error"]
    assert verdict(2, maxUnavailable=0) == ["error"]
