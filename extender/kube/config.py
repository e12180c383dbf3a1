"""Where the API server is and how to authenticate: kubeconfig files and in-cluster credentials.

Supported: server URL, CA (file or data), `insecure-skip-tls-verify`, `tls-server-name`,
`proxy-url`, bearer token (inline or `tokenFile`), client certificate and key (file or data),
exec credential plugins (`extender.kube.exec`, run as client-go runs them), and the cached
token of a legacy `auth-provider` entry (gcp, azure, oidc) while it is valid. Not supported (a
clear `ConfigError`): refreshing an auth-provider token, basic auth. Base64 `*-data` fields
never touch the disk longer than it takes `ssl` to load them.

`load_kubeconfig(None)` resolves the files as kubectl does: the `$KUBECONFIG` list (merged with
clientcmd's rules: the first file to define a cluster, user or context name wins, and the first
file that sets `current-context` decides it; missing files are skipped), else `~/.kube/config`.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import logging
import os
import ssl
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from extender.kube.exec import ExecConfig, cluster_info, parse_exec_config
from extender.model.yamltext import yaml_error

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
    #: An exec credential plugin (`users[].user.exec`); the client runs it for a token or a
    #: client certificate (see `extender.kube.exec`).
    exec: ExecConfig | None = None

    def token_source(self) -> TokenSource:
        return TokenSource(self.token, self.token_file)

    def ssl_context(self) -> ssl.SSLContext | None:
        """The TLS context for an https server (None for plain http)."""
        if not self.server.startswith("https://"):
            return None
        if self.insecure_skip_tls_verify:
            # Nothing is verified: no roots to load (the system's cost ~20 ms of CPU to read).
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
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
        else:
            ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
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
        self._data, self._path = data, path
        self._tmp: str | None = None

    def __enter__(self) -> str:
        if self._data is None:
            assert self._path is not None
            return self._path
        fd, tmp = tempfile.mkstemp(prefix="extender-", suffix=".pem")
        self._tmp = tmp
        with os.fdopen(fd, "wb") as fh:
            fh.write(self._data)
        return tmp

    def __exit__(self, *exc: object) -> None:
        if self._tmp is not None:
            os.unlink(self._tmp)


# ---- kubeconfig --------------------------------------------------------------------------
KUBECONFIG_ENV = "KUBECONFIG"


@dataclass(frozen=True)
class _Entry:
    """A named cluster, user or context body and the file it came from."""

    body: Mapping[str, Any]
    file: str

    @property
    def base(self) -> Path:
        # client-go resolves relative paths against the directory of the file that set them.
        return Path(self.file).resolve().parent


def kubeconfig_paths(env: Mapping[str, str] | None = None, home: str | os.PathLike[str] | None = None,
                     ) -> list[Path]:
    """kubectl's files: the `$KUBECONFIG` list (deduplicated, empty parts skipped), else
    `~/.kube/config`."""
    env = os.environ if env is None else env
    value = env.get(KUBECONFIG_ENV, "")
    if value:
        out: list[Path] = []
        for part in value.split(os.pathsep):
            if part and Path(part) not in out:
                out.append(Path(part))
        return out
    return [Path(home if home is not None else Path.home()) / ".kube" / "config"]


def _read_document(path: Path) -> Mapping[str, Any]:
    where = str(path)
    try:
        doc = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise ConfigError(f"{where}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}: invalid YAML: {yaml_error(exc)}") from None
    if doc is None:
        return {}  # an empty file is an empty config, as for kubectl
    if not isinstance(doc, Mapping):
        raise ConfigError(f"{where}: not a kubeconfig (expected a mapping)")
    return doc


class _Merged:
    """clientcmd's merge of several kubeconfig files: the first definition of each name wins,
    and the first file that sets `current-context` decides it."""

    def __init__(self, docs: Iterable[tuple[str, Mapping[str, Any]]]) -> None:
        self.current_context = ""
        self.sections: dict[str, dict[str, _Entry]] = {"clusters": {}, "users": {}, "contexts": {}}
        self.files: list[str] = []
        what = {"clusters": "cluster", "users": "user", "contexts": "context"}
        for file, doc in docs:
            self.files.append(file)
            if not self.current_context and doc.get("current-context"):
                self.current_context = str(doc["current-context"])
            for section, table in self.sections.items():
                for entry in doc.get(section) or ():
                    if not isinstance(entry, Mapping) or "name" not in entry:
                        continue
                    name = str(entry["name"])
                    if name in table:
                        continue
                    body = entry.get(what[section]) or {}
                    if not isinstance(body, Mapping):
                        raise ConfigError(f"{file}: {what[section]} {name!r} is not a mapping")
                    table[name] = _Entry(body, file)

    @property
    def where(self) -> str:
        return os.pathsep.join(self.files)

    def get(self, section: str, name: str, what: str) -> _Entry:
        entry = self.sections[section].get(name)
        if entry is None:
            raise ConfigError(f"{self.where}: no {what} named {name!r}")
        return entry


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


class _KubectlDefault:
    def __repr__(self) -> str:
        return "kubectl's default kubeconfig ($KUBECONFIG, else ~/.kube/config)"


#: `--kubeconfig` without a file (`nargs="?"`'s const): kubectl's resolution ($KUBECONFIG, else
#: ~/.kube/config). Not a string, so argparse does not turn it into a Path.
KUBECONFIG_AUTO: Any = _KubectlDefault()


def kubeconfig_path(value: Any) -> str | os.PathLike[str] | None:
    """A `--kubeconfig` value as `load_kubeconfig` takes it: None for `KUBECONFIG_AUTO`."""
    return None if value is KUBECONFIG_AUTO else value


def load_kubeconfig(path: str | os.PathLike[str] | None = None, context: str | None = None, *,
                    env: Mapping[str, str] | None = None,
                    home: str | os.PathLike[str] | None = None) -> ClusterConfig:
    """Read a kubeconfig and resolve `context` (default: its current-context).

    `path` None: kubectl's resolution (`kubeconfig_paths`, merged). A file that does not exist
    is an error when named explicitly, and skipped in `$KUBECONFIG` (as kubectl skips it).
    """
    if path is not None:
        docs = [(str(path), _read_document(Path(path)))]
    else:
        paths = kubeconfig_paths(env, home)
        existing = [p for p in paths if p.exists()]
        if not existing:
            source = (f"${KUBECONFIG_ENV} ({os.pathsep.join(map(str, paths))})"
                      if (env if env is not None else os.environ).get(KUBECONFIG_ENV) else str(paths[0]))
            raise ConfigError(f"no kubeconfig found: {source} does not exist; pass --kubeconfig "
                              "FILE (or, for serve in a pod, --in-cluster)")
        docs = [(str(p), _read_document(p)) for p in existing]
    merged = _Merged(docs)
    where = merged.where
    name = context or merged.current_context
    if not name:
        raise ConfigError(f"{where}: no current-context; pass a context name")
    ctx = merged.get("contexts", name, "context").body
    cluster_entry = merged.get("clusters", str(ctx.get("cluster", "")), "cluster")
    cluster = cluster_entry.body
    user_name = ctx.get("user")
    user_entry = merged.get("users", str(user_name), "user") if user_name else None
    user = user_entry.body if user_entry is not None else {}
    user_where = user_entry.file if user_entry is not None else where
    if user.get("username") or user.get("password"):
        raise ConfigError(f"{user_where}: user {user_name!r} uses basic auth, which is not supported")
    server = str(cluster.get("server") or "").rstrip("/")
    cluster_where = cluster_entry.file
    if not server.startswith(("https://", "http://")):
        raise ConfigError(f"{cluster_where}: cluster {ctx.get('cluster')!r} has no http(s) server URL")
    cbase = cluster_entry.base
    ubase = user_entry.base if user_entry is not None else cbase
    ca_file = _path(cluster.get("certificate-authority"), cbase)
    ca_data = _b64(cluster.get("certificate-authority-data"), "certificate-authority-data",
                   cluster_where)
    token = user.get("token") or None
    exec_config = None
    if user.get("exec") and user.get("auth-provider"):
        raise ConfigError(f"{user_where}: authProvider cannot be provided in combination with an "
                          f"exec plugin for {user_name}")
    if user.get("exec"):
        try:
            exec_config = parse_exec_config(user["exec"], str(user_name), user_where, ubase)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        if exec_config.provide_cluster_info:
            exec_config = replace(exec_config, cluster=cluster_info(cluster, ca_data, ca_file))
    elif user.get("auth-provider"):
        token = _auth_provider_token(user["auth-provider"], str(user_name), user_where)
    return ClusterConfig(
        server=server,
        ca_file=ca_file,
        ca_data=ca_data,
        insecure_skip_tls_verify=bool(cluster.get("insecure-skip-tls-verify", False)),
        tls_server_name=cluster.get("tls-server-name") or None,
        proxy_url=cluster.get("proxy-url") or None,
        token=token,
        token_file=_path(user.get("tokenFile"), ubase),
        client_cert_file=_path(user.get("client-certificate"), ubase),
        client_key_file=_path(user.get("client-key"), ubase),
        client_cert_data=_b64(user.get("client-certificate-data"), "client-certificate-data",
                              user_where),
        client_key_data=_b64(user.get("client-key-data"), "client-key-data", user_where),
        namespace=ctx.get("namespace") or "default",
        source=f"{where} (context {name})",
        exec=exec_config,
    )


# ---- legacy auth-provider entries ----------------------------------------------------------
_AUTH_PROVIDER_ADVICE = {
    "gcp": "use the gke-gcloud-auth-plugin exec plugin",
    "azure": "use the kubelogin exec plugin (kubelogin convert-kubeconfig)",
    "oidc": "use an exec plugin such as kubelogin (int128/kubelogin: kubectl oidc-login)",
}


def _jwt_expiry(token: str) -> float | None:
    """The `exp` claim of a JWT (an OIDC id-token), without verifying anything."""
    try:
        payload = token.split(".")[1]
        claims = yaml.safe_load(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        return float(claims["exp"])
    except (IndexError, ValueError, TypeError, KeyError, binascii.Error, yaml.YAMLError):
        return None


def _provider_expiry(name: str, config: Mapping[str, Any], token: str) -> float | None:
    if name == "oidc":
        return _jwt_expiry(token)
    if name == "azure" and config.get("expires-on"):
        try:
            return float(config["expires-on"])
        except (TypeError, ValueError):
            return None
    if config.get("expiry"):  # gcp: an RFC 3339 time
        try:
            return datetime.fromisoformat(str(config["expiry"]).replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def _auth_provider_token(provider: Any, user: str, where: str, now: float | None = None) -> str:
    """The cached token of an `auth-provider` entry (gcp/azure `access-token`, oidc
    `id-token`) while it is valid; otherwise a `ConfigError` naming the replacement."""
    provider = provider if isinstance(provider, Mapping) else {}
    name = str(provider.get("name") or "?")
    config = provider.get("config") or {}
    config = config if isinstance(config, Mapping) else {}
    token = str(config.get("id-token" if name == "oidc" else "access-token")
                or config.get("access-token") or config.get("id-token") or "")
    expiry = _provider_expiry(name, config, token) if token else None
    now = time.time() if now is None else now
    advice = _AUTH_PROVIDER_ADVICE.get(name, "use an exec credential plugin")
    removed = ("client-go removed the gcp and azure auth-provider plugins in v1.26"
               if name in ("gcp", "azure") else "this extender does not run auth-provider plugins")
    if not token:
        raise ConfigError(f"{where}: user {user!r} uses the {name!r} auth-provider and has no cached "
                          f"token; {removed}: {advice}")
    if expiry is not None and expiry <= now:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(expiry))
        raise ConfigError(f"{where}: user {user!r}: the cached token of the {name!r} auth-provider "
                          f"expired at {stamp} and cannot be refreshed here ({removed}): {advice}")
    until = (time.strftime("until %Y-%m-%dT%H:%M:%SZ", time.gmtime(expiry)) if expiry is not None
             else "with an unknown expiry")
    log.warning("user %r: using the cached token of the %r auth-provider, valid %s; it is not "
                "refreshed (%s)", user, name, until, advice)
    return token


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
