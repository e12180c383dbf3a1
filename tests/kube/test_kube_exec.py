"""Exec credential plugins, run as client-go runs them, against the fake API server."""

from __future__ import annotations

import asyncio
import base64
import json
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from extender.kube.client import CredentialError, KubeClient
from extender.kube.config import ConfigError, load_kubeconfig
from extender.kube.exec import ExecError, ExecPlugin
from extender.model import k8s
from tests.kube import kube_objects as ko
from tests.kube.fake_apiserver import FakeApiServer

V1 = "client.authentication.k8s.io/v1"
V1BETA1 = "client.authentication.k8s.io/v1beta1"

# The plugin: counts its runs in $COUNTER_FILE, saves KUBERNETES_EXEC_INFO to $INFO_FILE and
# prints an ExecCredential (token `exec-token-<run>`, or the PEM pair in $CERT_FILE/$KEY_FILE)
# of $REPLY_VERSION (default: the requested one), valid for an hour.
PLUGIN = """\
#!{python}
import datetime, json, os, pathlib, sys
counter = pathlib.Path(os.environ["COUNTER_FILE"])
run = int(counter.read_text()) + 1 if counter.exists() else 1
counter.write_text(str(run))
info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
pathlib.Path(os.environ["INFO_FILE"]).write_text(json.dumps(info))
if os.environ.get("FAIL"):
    sys.stderr.write("token request failed: " + os.environ["FAIL"] + "\\n")
    sys.exit(3)
if os.environ.get("GARBAGE"):
    print("this is not json")
    sys.exit(0)
expires = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
status = {{"expirationTimestamp": expires.strftime("%Y-%m-%dT%H:%M:%SZ")}}
if os.environ.get("CERT_FILE"):
    status["clientCertificateData"] = pathlib.Path(os.environ["CERT_FILE"]).read_text()
    status["clientKeyData"] = pathlib.Path(os.environ["KEY_FILE"]).read_text()
else:
    status["token"] = "exec-token-%d" % run
print(json.dumps({{"apiVersion": os.environ.get("REPLY_VERSION", info["apiVersion"]),
                  "kind": "ExecCredential", "status": status}}))
"""

pytestmark = pytest.mark.anyio


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    path = tmp_path / "bin" / "token-plugin"
    path.parent.mkdir()
    path.write_text(PLUGIN.format(python=sys.executable))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _runs(tmp_path: Path) -> int:
    counter = tmp_path / "counter"
    return int(counter.read_text()) if counter.exists() else 0


def _info(tmp_path: Path) -> dict[str, Any]:
    return json.loads((tmp_path / "info.json").read_text())


def _kubeconfig(server: FakeApiServer, tmp_path: Path, command: str, *,
                api_version: str = V1, env: dict[str, str] | None = None,
                **exec_extra: Any) -> Path:
    doc = server.kubeconfig()
    exec_config: dict[str, Any] = {
        "apiVersion": api_version, "command": command,
        "env": [{"name": "COUNTER_FILE", "value": str(tmp_path / "counter")},
                {"name": "INFO_FILE", "value": str(tmp_path / "info.json")},
                *({"name": k, "value": v} for k, v in (env or {}).items())],
    }
    if api_version == V1:
        exec_config["interactiveMode"] = "IfAvailable"
    exec_config.update(exec_extra)
    doc["users"][0]["user"] = {"exec": exec_config}
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return path


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("api_version", [V1, V1BETA1])
async def test_the_plugin_token_is_sent_and_cached_until_it_expires(
        apiserver: FakeApiServer, tmp_path: Path, plugin: Path, api_version: str) -> None:
    apiserver.put(ko.node("n1"))
    apiserver.tokens = {"exec-token-1", "exec-token-2"}
    config = load_kubeconfig(_kubeconfig(apiserver, tmp_path, str(plugin), api_version=api_version))
    assert config.exec is not None and config.exec.interactive_mode == "IfAvailable"
    async with KubeClient(config) as client:
        assert client.exec_plugin is not None
        for _ in range(5):
            page = await client.list("/api/v1/nodes", k8s.Node)
            assert [n.metadata.name for n in page.items or ()] == ["n1"]
        assert _runs(tmp_path) == 1  # one run for every request while the credential is valid
        info = _info(tmp_path)
        assert info == {"kind": "ExecCredential", "apiVersion": api_version,
                        "spec": {"interactive": False}}  # no cluster without provideClusterInfo

        # Past status.expirationTimestamp: the plugin runs again, the new token is used.
        client.exec_plugin.clock = lambda: 10.0 ** 10
        await client.list("/api/v1/nodes", k8s.Node)
        assert _runs(tmp_path) == 2
    assert all(r.status == 200 for r in apiserver.requests)


async def test_a_401_runs_the_plugin_again_once_and_retries(
        apiserver: FakeApiServer, tmp_path: Path, plugin: Path) -> None:
    apiserver.put(ko.node("n1"))
    apiserver.tokens = {"exec-token-1"}
    config = load_kubeconfig(_kubeconfig(apiserver, tmp_path, str(plugin)))
    async with KubeClient(config) as client:
        await client.list("/api/v1/nodes", k8s.Node)
        # The server revokes the token: one 401, a second run of the plugin, the request again.
        apiserver.tokens = {"exec-token-2"}
        page = await client.list("/api/v1/nodes", k8s.Node)
        assert [n.metadata.name for n in page.items or ()] == ["n1"]
        assert _runs(tmp_path) == 2
        assert [r.status for r in apiserver.requests] == [200, 401, 200]
        # Still refused after the new run: the 401 reaches the caller (no loop).
        apiserver.tokens = {"something-else"}
        with pytest.raises(Exception, match="401"):
            await client.list("/api/v1/nodes", k8s.Node)
        assert _runs(tmp_path) == 3


async def test_concurrent_requests_share_one_run(apiserver: FakeApiServer, tmp_path: Path,
                                                 plugin: Path) -> None:
    apiserver.put(ko.node("n1"))
    apiserver.tokens = {"exec-token-1"}
    config = load_kubeconfig(_kubeconfig(apiserver, tmp_path, str(plugin)))
    async with KubeClient(config) as client:
        await asyncio.gather(*(client.list("/api/v1/nodes", k8s.Node) for _ in range(10)))
    assert _runs(tmp_path) == 1


async def test_provide_cluster_info_passes_the_cluster(apiserver: FakeApiServer, tmp_path: Path,
                                                       plugin: Path) -> None:
    apiserver.tokens = {"exec-token-1"}
    path = _kubeconfig(apiserver, tmp_path, str(plugin), provideClusterInfo=True)
    doc = yaml.safe_load(path.read_text())
    doc["clusters"][0]["cluster"].update({
        "certificate-authority-data": base64.b64encode(b"-----CA-----").decode(),
        "tls-server-name": "api.internal",
        "extensions": [{"name": "client.authentication.k8s.io/exec",
                        "extension": {"audience": "k8s"}}]})
    path.write_text(yaml.safe_dump(doc))
    config = load_kubeconfig(path)
    assert config.exec is not None
    ExecPlugin(config.exec).get()
    cluster = _info(tmp_path)["spec"]["cluster"]
    assert cluster == {"server": apiserver.url, "tls-server-name": "api.internal",
                       "certificate-authority-data": base64.b64encode(b"-----CA-----").decode(),
                       "config": {"audience": "k8s"}}


async def test_a_client_certificate_from_the_plugin(tmp_path: Path, plugin: Path) -> None:
    with FakeApiServer(token=None, tls=True, client_certs=True) as server:
        server.put(ko.node("n1"))
        cert = server._client_cert
        (tmp_path / "c.pem").write_bytes(b"".join(b.bytes() for b in cert.cert_chain_pems))
        (tmp_path / "k.pem").write_bytes(cert.private_key_pem.bytes())
        config = load_kubeconfig(_kubeconfig(server, tmp_path, str(plugin), env={
            "CERT_FILE": str(tmp_path / "c.pem"), "KEY_FILE": str(tmp_path / "k.pem")}))
        async with KubeClient(config) as client:
            page = await client.list("/api/v1/nodes", k8s.Node)
            assert [n.metadata.name for n in page.items or ()] == ["n1"]
        assert _runs(tmp_path) == 1
        assert [r.status for r in server.requests] == [200]


def test_relative_command_resolves_against_the_kubeconfig(apiserver: FakeApiServer,
                                                          tmp_path: Path, plugin: Path) -> None:
    config = load_kubeconfig(_kubeconfig(apiserver, tmp_path, "bin/token-plugin"))
    assert config.exec is not None and config.exec.command == str(plugin)


# ---- errors --------------------------------------------------------------------------------

def _plugin_for(apiserver: FakeApiServer, tmp_path: Path, command: str, **kwargs: Any,
                ) -> ExecPlugin:
    config = load_kubeconfig(_kubeconfig(apiserver, tmp_path, command, **kwargs))
    assert config.exec is not None
    return ExecPlugin(config.exec)


def test_command_not_found_shows_the_install_hint(apiserver: FakeApiServer, tmp_path: Path) -> None:
    hint = "gke-gcloud-auth-plugin is required: gcloud components install gke-gcloud-auth-plugin"
    plugin = _plugin_for(apiserver, tmp_path, "no-such-plugin-here", installHint=hint)
    with pytest.raises(ExecError) as info:
        plugin.get()
    assert str(info.value) == f"exec: executable no-such-plugin-here not found\n\n{hint}"


def test_failing_plugin_reports_its_exit_code_and_stderr(apiserver: FakeApiServer,
                                                         tmp_path: Path, plugin: Path) -> None:
    failing = _plugin_for(apiserver, tmp_path, str(plugin), env={"FAIL": "refresh token revoked"})
    with pytest.raises(ExecError, match=r"failed with exit code 3: token request failed: "
                                        r"refresh token revoked"):
        failing.get()


def test_output_that_is_not_an_exec_credential(apiserver: FakeApiServer, tmp_path: Path,
                                               plugin: Path) -> None:
    garbage = _plugin_for(apiserver, tmp_path, str(plugin), env={"GARBAGE": "1"})
    with pytest.raises(ExecError, match="decoding stdout: not JSON.*this is not json"):
        garbage.get()
    mismatch = _plugin_for(apiserver, tmp_path, str(plugin), env={"REPLY_VERSION": V1BETA1})
    with pytest.raises(ExecError, match=f"configured to use API version {V1}, plugin returned "
                                        f"version {V1BETA1}"):
        mismatch.get()


def test_interactive_always_cannot_run_without_a_terminal(apiserver: FakeApiServer,
                                                          tmp_path: Path, plugin: Path) -> None:
    always = _plugin_for(apiserver, tmp_path, str(plugin), interactiveMode="Always")
    with pytest.raises(ExecError, match="interactiveMode is Always.*no terminal"):
        always.get()
    assert _runs(tmp_path) == 0


@pytest.mark.parametrize(("exec_config", "message"), [
    ({"apiVersion": V1, "command": "x"}, "interactiveMode must be specified for u"),
    ({"apiVersion": V1, "command": "x", "interactiveMode": "Sometimes"}, "invalid interactiveMode"),
    ({"apiVersion": "client.authentication.k8s.io/v1alpha1", "command": "x"}, "invalid apiVersion"),
    ({"apiVersion": V1BETA1}, "command must be specified for u"),
    ({"apiVersion": V1BETA1, "command": "x", "env": [{"name": "A"}]},
     "env variable A value must be specified"),
])
def test_invalid_exec_configs_are_refused_at_load(tmp_path: Path, exec_config: dict,
                                                  message: str) -> None:
    doc = {"current-context": "c", "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
           "clusters": [{"name": "k", "cluster": {"server": "https://x"}}],
           "users": [{"name": "u", "user": {"exec": exec_config}}]}
    path = tmp_path / "kc"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(ConfigError, match=message):
        load_kubeconfig(path)


async def test_a_broken_plugin_fails_requests_and_the_start_clearly(
        apiserver: FakeApiServer, tmp_path: Path) -> None:
    config = load_kubeconfig(_kubeconfig(apiserver, tmp_path, "no-such-plugin-here"))
    async with KubeClient(config) as client:
        with pytest.raises(ConfigError, match="executable no-such-plugin-here not found"):
            client.prepare_credentials()
        # At run time the failure is a 401-like API error (informers back off, bind reports it).
        with pytest.raises(CredentialError, match="not found") as info:
            await client.list("/api/v1/nodes", k8s.Node)
        assert info.value.code == 401
    assert apiserver.requests == []  # nothing was sent without a credential


def test_serve_refuses_to_start_with_a_broken_plugin(apiserver: FakeApiServer, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from extender.cli import build_parser
    from extender.serve import StartupError, build_runtime

    path = _kubeconfig(apiserver, tmp_path, "no-such-plugin-here", installHint="install it")
    monkeypatch.setenv("KUBECONFIG", str(path))
    args = build_parser("serve").parse_args(["serve", "--kubeconfig"])
    with pytest.raises(StartupError, match="(?s)not found.*install it"):
        build_runtime(args)
