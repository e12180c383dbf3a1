"""Mutual TLS between a real kube-scheduler and the extender, from the configuration
`render-config` writes (`tlsConfig` with caFile, certFile, keyFile)."""

from __future__ import annotations

import ssl

import httpx
import pytest
import yaml

from tests.e2e.realcluster import Scenario, bound, node, pod, wait_until

pytestmark = pytest.mark.e2e


def test_mutual_tls(scenario: Scenario) -> None:
    kube = scenario.kube
    scenario.add_nodes(node(f"{scenario.name}-0"))
    ns = scenario.namespace()
    scenario.start(tls=True)
    assert scenario.extender is not None and scenario.extender.url.startswith("https://")
    config = yaml.safe_load(
        (scenario.sandbox.state_dir / f"kube-scheduler-{scenario.name}-config.yaml").read_text())
    extender = config["extenders"][0]
    assert extender["enableHTTPS"] is True
    assert set(extender["tlsConfig"]) == {"caFile", "certFile", "keyFile"}

    for i in range(3):
        kube.create(pod(f"p-{i}", ns, scenario.scheduler))
    wait_until(lambda: len(bound(kube.pods(ns))) == 3, timeout=60,
               what="the pods bound through the TLS extender")

    # A client that trusts the CA but has no certificate of its own is refused.
    ctx = ssl.create_default_context(cafile=str(scenario.sandbox.pki_dir / "ca.crt"))
    with pytest.raises(httpx.HTTPError):
        httpx.post(f"{scenario.extender.url}/filter", content=b"{}", verify=ctx, timeout=5,
                   trust_env=False)
    # kube-scheduler's client certificate is what it presented.
    tls = extender["tlsConfig"]
    ctx.load_cert_chain(tls["certFile"], tls["keyFile"])
    reply = httpx.get(f"{scenario.extender.url}/version", verify=ctx, timeout=5,
                      trust_env=False)
    assert reply.status_code == 200
