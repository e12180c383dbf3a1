"""Exec credential plugins (`users[].user.exec`), run as client-go runs them.

client-go (`k8s.io/client-go/plugin/pkg/client/auth/exec`) starts the configured command with
the process environment plus `env`, passes an `ExecCredential` in `KUBERNETES_EXEC_INFO`
(`spec.interactive`, and `spec.cluster` when `provideClusterInfo` is set), and reads an
`ExecCredential` of the same apiVersion from its standard output: `status.token`, or
`status.clientCertificateData` and `status.clientKeyData` (PEM), and an optional
`status.expirationTimestamp`. The credential is cached until that time (forever without one);
a 401 from the API server discards it so the next request runs the plugin again.

Supported apiVersions: `client.authentication.k8s.io/v1` (which requires `interactiveMode`) and
`v1beta1` (which defaults it to `IfAvailable`). The extender never has a terminal, so
`interactiveMode: Always` fails with a clear error and the plugin's standard input is empty.
Unlike client-go, the plugin's standard error is captured: an excerpt goes into the error when
the plugin fails, and to the debug log otherwise. A plugin gets `timeout` seconds (60) to answer.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

GROUP = "client.authentication.k8s.io"
API_VERSIONS = (f"{GROUP}/v1", f"{GROUP}/v1beta1")
INTERACTIVE_MODES = ("Never", "IfAvailable", "Always")
EXEC_INFO_ENV = "KUBERNETES_EXEC_INFO"
#: The cluster extension whose value client-go passes as `spec.cluster.config`.
CLUSTER_EXTENSION = f"{GROUP}/exec"
DEFAULT_TIMEOUT = 60.0
_STDERR_EXCERPT = 600


class ExecError(Exception):
    """The plugin could not be run, failed, or printed something unusable."""


@dataclass(frozen=True)
class ExecConfig:
    """One `users[].user.exec` entry, validated as clientcmd validates it."""

    command: str
    api_version: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    install_hint: str = ""
    interactive_mode: str = "IfAvailable"
    provide_cluster_info: bool = False
    #: `spec.cluster` of the ExecCredential (client-go's `clientauthentication.Cluster`),
    #: filled by the kubeconfig loader; sent only with `provide_cluster_info`.
    cluster: Mapping[str, Any] = field(default_factory=dict)


def parse_exec_config(raw: Any, user: str, where: str, base: Path) -> ExecConfig:
    """An ExecConfig from a kubeconfig's `exec` mapping; ValueError with clientcmd's wording.

    A relative command containing a path separator is resolved against the kubeconfig's
    directory, as clientcmd resolves it; a bare name is looked up in PATH when run.
    """
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where}: user {user!r}: exec is not a mapping")
    command = str(raw.get("command") or "")
    api_version = str(raw.get("apiVersion") or "")
    problems = []
    if not command:
        problems.append(f"command must be specified for {user} to use exec authentication plugin")
    if not api_version:
        problems.append(f"apiVersion must be specified for {user} to use exec authentication plugin")
    elif api_version not in API_VERSIONS:
        problems.append(f"exec plugin: invalid apiVersion {api_version!r} (supported: "
                        f"{', '.join(API_VERSIONS)})")
    env: list[tuple[str, str]] = []
    for i, entry in enumerate(raw.get("env") or ()):
        entry = entry if isinstance(entry, Mapping) else {}
        name, value = entry.get("name"), entry.get("value")
        if not name:
            problems.append(f"env variable [{i}] name must be specified for {user} to use exec "
                            "authentication plugin")
        elif value is None:
            problems.append(f"env variable {name} value must be specified for {user} to use exec "
                            "authentication plugin")
        else:
            env.append((str(name), str(value)))
    mode = raw.get("interactiveMode") or ""
    if not mode and api_version == f"{GROUP}/v1beta1":
        mode = "IfAvailable"  # clientcmd's default for v1beta1
    if not mode:
        problems.append(f"interactiveMode must be specified for {user} to use exec authentication "
                        "plugin")
    elif mode not in INTERACTIVE_MODES:
        problems.append(f"invalid interactiveMode for {user}: {mode!r} (one of "
                        f"{', '.join(INTERACTIVE_MODES)})")
    if problems:
        raise ValueError(f"{where}: " + "; ".join(problems))
    if os.sep in command and not os.path.isabs(command):
        command = str(base / command)
    return ExecConfig(
        command=command, api_version=api_version,
        args=tuple(str(a) for a in raw.get("args") or ()), env=tuple(env),
        install_hint=str(raw.get("installHint") or ""), interactive_mode=str(mode),
        provide_cluster_info=bool(raw.get("provideClusterInfo", False)))


@dataclass(frozen=True)
class Credential:
    """What the plugin returned. `expires_at` is epoch seconds (None: does not expire)."""

    token: str = ""
    client_certificate: bytes = b""
    client_key: bytes = b""
    expires_at: float | None = None

    @property
    def has_certificate(self) -> bool:
        return bool(self.client_certificate)


def _parse_timestamp(text: Any) -> float:
    if not isinstance(text, str):
        raise ValueError(f"not a timestamp: {text!r}")
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def parse_credential(stdout: bytes, api_version: str, command: str) -> Credential:
    """The ExecCredential a plugin printed, checked as client-go checks it."""
    what = f"exec plugin {command}"
    try:
        doc = json.loads(stdout)
    except ValueError as exc:
        excerpt = stdout[:200].decode("utf-8", "replace").strip()
        raise ExecError(f"{what}: decoding stdout: not JSON ({exc}): {excerpt!r}") from None
    if not isinstance(doc, dict):
        raise ExecError(f"{what}: decoding stdout: expected an ExecCredential object")
    got = doc.get("apiVersion")
    if got != api_version:
        raise ExecError(f"{what}: exec plugin is configured to use API version {api_version}, "
                        f"plugin returned version {got}")
    if doc.get("kind") != "ExecCredential":
        raise ExecError(f"{what}: decoding stdout: kind is {doc.get('kind')!r}, not ExecCredential")
    status = doc.get("status")
    if not isinstance(status, dict):
        raise ExecError(f"{what}: exec plugin didn't return a status field")
    token = status.get("token") or ""
    cert = status.get("clientCertificateData") or ""
    key = status.get("clientKeyData") or ""
    if not (isinstance(token, str) and isinstance(cert, str) and isinstance(key, str)):
        raise ExecError(f"{what}: status.token, clientCertificateData and clientKeyData must be "
                        "strings")
    if not token and not cert and not key:
        raise ExecError(f"{what}: exec plugin didn't return a token or cert/key pair")
    if bool(cert) != bool(key):
        raise ExecError(f"{what}: exec plugin returned only certificate or key, not both")
    expires_at = None
    if status.get("expirationTimestamp"):
        try:
            expires_at = _parse_timestamp(status["expirationTimestamp"])
        except ValueError:
            raise ExecError(f"{what}: status.expirationTimestamp "
                            f"{status['expirationTimestamp']!r} is not an RFC 3339 time") from None
    return Credential(token, cert.encode(), key.encode(), expires_at)


def exec_info(config: ExecConfig) -> str:
    """The `KUBERNETES_EXEC_INFO` value: an ExecCredential with the request's spec."""
    spec: dict[str, Any] = {"interactive": False}
    if config.provide_cluster_info:
        spec["cluster"] = dict(config.cluster)
    return json.dumps({"kind": "ExecCredential", "apiVersion": config.api_version, "spec": spec})


def cluster_info(cluster: Mapping[str, Any], ca_data: bytes | None, ca_file: str | None,
                 ) -> dict[str, Any]:
    """client-go's `ExecCredential.spec.cluster` for a kubeconfig cluster entry (the CA is sent
    as data, read from the file if need be; the exec extension becomes `config`)."""
    out: dict[str, Any] = {"server": cluster.get("server", "")}
    for key in ("tls-server-name", "insecure-skip-tls-verify", "proxy-url", "disable-compression"):
        if cluster.get(key):
            out[key] = cluster[key]
    if ca_data is None and ca_file:
        try:
            ca_data = Path(ca_file).read_bytes()
        except OSError:
            ca_data = None
    if ca_data:
        out["certificate-authority-data"] = base64.b64encode(ca_data).decode()
    for extension in cluster.get("extensions") or ():
        if isinstance(extension, Mapping) and extension.get("name") == CLUSTER_EXTENSION:
            out["config"] = extension.get("extension")
    return out


class ExecPlugin:
    """Runs the plugin and caches its credential until it expires; thread-safe.

    Concurrent callers with no valid credential wait for one run of the plugin rather than
    each starting their own.
    """

    def __init__(self, config: ExecConfig, *, timeout: float = DEFAULT_TIMEOUT,
                 clock: Callable[[], float] = time.time,
                 environ: Mapping[str, str] | None = None) -> None:
        self.config = config
        self.timeout = timeout
        self.clock = clock
        self.environ = environ
        self.runs = 0
        self._credential: Credential | None = None
        self._lock = threading.Lock()

    def cached(self) -> Credential | None:
        """The cached credential if it is still valid (never runs the plugin)."""
        cred = self._credential
        if cred is None or (cred.expires_at is not None and self.clock() >= cred.expires_at):
            return None
        return cred

    def get(self) -> Credential:
        """A valid credential, running the plugin if none is cached (blocks while it runs)."""
        cred = self.cached()
        if cred is not None:
            return cred
        with self._lock:
            cred = self.cached()
            if cred is None:
                cred = self._credential = self.run()
            return cred

    def invalidate(self, used: Credential | None) -> None:
        """After a 401: forget `used` if it is still the cached credential (client-go's
        `maybeRefreshCreds`), so the next `get` runs the plugin again."""
        with self._lock:
            if used is None or self._credential is used:
                self._credential = None

    def run(self) -> Credential:
        """Run the plugin once and parse its output (no cache)."""
        cfg = self.config
        if cfg.interactive_mode == "Always":
            raise ExecError(
                f"exec plugin {cfg.command}: interactiveMode is Always, but the extender has no "
                "terminal (standard input is not a terminal); use a plugin configuration that "
                "works non-interactively (interactiveMode: Never or IfAvailable)")
        env = dict(os.environ if self.environ is None else self.environ)
        env.update(cfg.env)
        env[EXEC_INFO_ENV] = exec_info(cfg)
        self.runs += 1
        try:
            done = subprocess.run([cfg.command, *cfg.args], env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=self.timeout, check=False)
        except FileNotFoundError:
            message = f"exec: executable {cfg.command} not found"
            if cfg.install_hint:
                message += f"\n\n{cfg.install_hint.rstrip()}"
            raise ExecError(message) from None
        except PermissionError:
            raise ExecError(f"exec: executable {cfg.command}: permission denied") from None
        except subprocess.TimeoutExpired:
            raise ExecError(f"exec: executable {cfg.command} did not finish within "
                            f"{self.timeout:g}s") from None
        except OSError as exc:
            raise ExecError(f"exec: {cfg.command}: {exc}") from None
        stderr = done.stderr.decode("utf-8", "replace").strip()
        if done.returncode != 0:
            message = f"exec: executable {cfg.command} failed with exit code {done.returncode}"
            if stderr:
                excerpt = stderr if len(stderr) <= _STDERR_EXCERPT else "…" + stderr[-_STDERR_EXCERPT:]
                message += f": {excerpt}"
            raise ExecError(message)
        if stderr:
            log.debug("exec plugin %s wrote to stderr: %s", cfg.command, stderr[-_STDERR_EXCERPT:])
        cred = parse_credential(done.stdout, cfg.api_version, cfg.command)
        if cred.expires_at is not None:
            log.info("exec plugin %s: credential valid until %s", cfg.command,
                     time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(cred.expires_at)))
        return cred
