"""Where the API server is and how to authenticate: kubeconfig files and in-cluster credentials.

Supported: server URL, CA (file or data), `insecure-skip-tls-verify`, `tls-server-name`,
`proxy-url`, bearer token (inline or `tokenFile`), client certificate and key (file or data).
Not supported (a clear `ConfigError`): exec credential plugins, auth-provider plugins, basic
auth. Base64 `*-data` fields never touch the disk longer than it takes `ssl` to load them.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import logging
import os
import ssl
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

log = logging.getLogger(__name__)

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


class ConfigError(ValueError):
    """Credentials that cannot be used; the message says which file and which field."""


class TokenSource:
    """A bearer token, fixed or read from a file that kubelet rotates.

    A projected service-account token is replaced about every hour (atomically, through a
    symlink swap), so the file is re-read whenever its identity (inode, mtime, size) changes.
    A `stat` per request is cheap next to the HTTP call it authorises.
    """

    def __init__(self, token: str | None = None, token_file: str | None = None) -> None:
        self._token = token
        self._file = token_file
        self._stamp: tuple[int, int, int] | None = None
        if token_file is not None:
            self.get()
            if self._token is None:
                raise ConfigError(f"cannot read token file {token_file}")

    @property
    def rotates(self) -> bool:
        return self._file is not None

    def get(self) -> str | None:
        """The current token (re-read if the file changed)."""
        if self._file is None:
            return self._token
        try:
            st = os.stat(self._file)
            stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
            if stamp != self._stamp:
                self._token = Path(self._file).read_text().strip()
                self._stamp = stamp
        except OSError as exc:
            # Keep the last good token: a failed read mid-rotation must not log us out.
            log.warning("cannot re-read token file %s: %s", self._file, exc)
        return self._token

    def refresh(self) -> bool:
        """Force a re-read (after a 401); True if the token changed."""
        before = self._token
        self._stamp = None
        return self.get() != before


@dataclass(frozen=True)
class ClusterConfig:
    """Everything needed to reach and authenticate to one API server."""

    server: str
    ca_file: str | None = None
    ca_data: bytes | None = None
    insecure_skip_tls_verify: bool = False
    tls_server_name: str | None = None
    proxy_url: str | None = None
    token: str | None = None
    token_file: str | None = None
    client_cert_file: str | None = None
    client_key_file: str | None = None
    client_cert_data: bytes | None = None
    client_key_data: bytes | None = None
    namespace: str = "default"
    source: str = ""  # where the config came from, for messages

    def token_source(self) -> TokenSource:
        return TokenSource(self.token, self.token_file)

    def ssl_context(self) -> ssl.SSLContext | None:
        """The TLS context for an https server (None for plain http)."""
        if not self.server.startswith("https://"):
            return None
        ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
        if self.insecure_skip_tls_verify:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        elif self.ca_file or self.ca_data:
            # A configured CA replaces the system roots, as client-go does.
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            try:
                if self.ca_file:
                    ctx.load_verify_locations(cafile=self.ca_file)
                if self.ca_data:
                    ctx.load_verify_locations(cadata=self.ca_data.decode("ascii", "replace"))
            except (OSError, ssl.SSLError) as exc:
                raise ConfigError(f"{self.source}: cannot load the CA certificate: {exc}") from None
        self._load_client_cert(ctx)
        return ctx

    def _load_client_cert(self, ctx: ssl.SSLContext) -> None:
        has_cert = self.client_cert_file or self.client_cert_data
        has_key = self.client_key_file or self.client_key_data
        if not has_cert and not has_key:
            return
        if not (has_cert and has_key):
            raise ConfigError(f"{self.source}: a client certificate needs both a certificate and a key")
        with _pem_file(self.client_cert_data, self.client_cert_file) as cert, \
                _pem_file(self.client_key_data, self.client_key_file) as key:
            try:
                ctx.load_cert_chain(cert, key)
            except (OSError, ssl.SSLError) as exc:
                raise ConfigError(f"{self.source}: cannot load the client certificate: {exc}") from None


class _pem_file:
    """A path to PEM material: the given file, or a private temp file removed on exit.

    `ssl.SSLContext.load_cert_chain` only reads files; the temp file is 0600 and lives for
    the duration of that one call.
    """

    def __init__(self, data: bytes | None, path: str | None) -> None:
        self._data, self._path, self._tmp = data, path, None

    def __enter__(self) -> str:
        if self._data is None:
            assert self._path is not None
            return self._path
        fd, self._tmp = tempfile.mkstemp(prefix="extender-", suffix=".pem")
        with os.fdopen(fd, "wb") as fh:
            fh.write(self._data)
        return self._tmp

    def __exit__(self, *exc: object) -> None:
        if self._tmp is not None:
            os.unlink(self._tmp)


# ---- kubeconfig --------------------------------------------------------------------------
def _named(entries: Any, name: str, what: str, where: str) -> Mapping[str, Any]:
    for entry in entries or ():
        if isinstance(entry, Mapping) and entry.get("name") == name:
            body = entry.get(what) or {}
            if not isinstance(body, Mapping):
                raise ConfigError(f"{where}: {what} {name!r} is not a mapping")
            return body
    raise ConfigError(f"{where}: no {what} named {name!r}")


def _b64(value: Any, field: str, where: str) -> bytes | None:
    if value is None:
        return None
    try:
        return base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError):
        raise ConfigError(f"{where}: {field} is not valid base64") from None


def _path(value: Any, base: Path) -> str | None:
    # client-go resolves relative paths against the kubeconfig file's directory.
    if not value:
        return None
    path = Path(str(value))
    return str(path if path.is_absolute() else base / path)


def load_kubeconfig(path: str | os.PathLike[str], context: str | None = None) -> ClusterConfig:
    """Read a kubeconfig file and resolve `context` (default: its current-context)."""
    where = str(path)
    try:
        doc = yaml.safe_load(Path(path).read_text())
    except OSError as exc:
        raise ConfigError(f"{where}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}: invalid YAML: {exc}") from None
    if not isinstance(doc, Mapping):
        raise ConfigError(f"{where}: not a kubeconfig (expected a mapping)")
    name = context or doc.get("current-context")
    if not name:
        raise ConfigError(f"{where}: no current-context; pass a context name")
    ctx = _named(doc.get("contexts"), name, "context", where)
    cluster = _named(doc.get("clusters"), ctx.get("cluster", ""), "cluster", where)
    user_name = ctx.get("user")
    user = _named(doc.get("users"), user_name, "user", where) if user_name else {}
    if user.get("exec") or user.get("auth-provider"):
        raise ConfigError(
            f"{where}: user {user_name!r} uses a credential plugin (exec/auth-provider), which is "
            "not supported; use a token, tokenFile or client certificate"
        )
    if user.get("username") or user.get("password"):
        raise ConfigError(f"{where}: user {user_name!r} uses basic auth, which is not supported")
    server = str(cluster.get("server") or "").rstrip("/")
    if not server.startswith(("https://", "http://")):
        raise ConfigError(f"{where}: cluster {ctx.get('cluster')!r} has no http(s) server URL")
    base = Path(path).resolve().parent
    return ClusterConfig(
        server=server,
        ca_file=_path(cluster.get("certificate-authority"), base),
        ca_data=_b64(cluster.get("certificate-authority-data"), "certificate-authority-data", where),
        insecure_skip_tls_verify=bool(cluster.get("insecure-skip-tls-verify", False)),
        tls_server_name=cluster.get("tls-server-name") or None,
        proxy_url=cluster.get("proxy-url") or None,
        token=user.get("token") or None,
        token_file=_path(user.get("tokenFile"), base),
        client_cert_file=_path(user.get("client-certificate"), base),
        client_key_file=_path(user.get("client-key"), base),
        client_cert_data=_b64(user.get("client-certificate-data"), "client-certificate-data", where),
        client_key_data=_b64(user.get("client-key-data"), "client-key-data", where),
        namespace=ctx.get("namespace") or "default",
        source=f"{where} (context {name})",
    )


def in_cluster_config(
    env: Mapping[str, str] | None = None, account_dir: str = SERVICE_ACCOUNT_DIR
) -> ClusterConfig:
    """Credentials of the pod's service account, as client-go's `InClusterConfig` reads them."""
    env = os.environ if env is None else env
    host, port = env.get("KUBERNETES_SERVICE_HOST"), env.get("KUBERNETES_SERVICE_PORT")
    if not host or not port:
        raise ConfigError(
            "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset"
        )
    try:
        if ipaddress.ip_address(host).version == 6:
            host = f"[{host}]"
    except ValueError:
        pass  # a DNS name
    token_file = os.path.join(account_dir, "token")
    ca_file = os.path.join(account_dir, "ca.crt")
    if not os.path.exists(token_file):
        raise ConfigError(f"in-cluster: service-account token {token_file} is missing")
    namespace = "default"
    try:
        namespace = Path(account_dir, "namespace").read_text().strip() or namespace
    except OSError:
        pass
    return ClusterConfig(
        server=f"https://{host}:{port}",
        ca_file=ca_file if os.path.exists(ca_file) else None,
        token_file=token_file,
        namespace=namespace,
        source="in-cluster service account",
    )
