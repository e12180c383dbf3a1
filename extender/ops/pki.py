"""Certificates: a CA, serving and client certificates, kubeconfigs.

`extender certs` makes the extender's mutual-TLS certificates with it; the sandbox makes its
control plane's: the API server's serving certificate, a client certificate per component (the
API server authenticates them by it: `CN` is the user, `O` the groups, as kubeadm does), the
extender's serving certificate and kube-scheduler's client certificate, and a key pair for
service-account tokens. Needs `cryptography` (the `certs` extra).
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

import yaml

try:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
except ImportError:  # pragma: no cover - the message is the point
    x509 = None  # type: ignore[assignment]

VALID_DAYS = 365


class PkiUnavailable(RuntimeError):
    """`cryptography` is not installed."""


def _require() -> None:
    if x509 is None:
        raise PkiUnavailable("certificates need the 'cryptography' package: "
                             "pip install -e '.[certs]'")


@dataclass(frozen=True)
class Pair:
    """A certificate and its key, as PEM files."""

    cert: Path
    key: Path


def _write(path: Path, data: bytes, private: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    if private:
        os.chmod(path, 0o600)


def _key_pem(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _name(common_name: str, organizations: tuple[str, ...] = ()) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    return x509.Name(attrs)


class Authority:
    """A self-signed CA kept in `directory` (`ca.crt`, `ca.key`), made on first use."""

    def __init__(self, directory: Path, name: str = "extender-sandbox-ca") -> None:
        _require()
        self.directory = directory
        self.cert_path = directory / "ca.crt"
        key_path = directory / "ca.key"
        if self.cert_path.is_file() and key_path.is_file():
            self._cert = x509.load_pem_x509_certificate(self.cert_path.read_bytes())
            self._key = serialization.load_pem_private_key(key_path.read_bytes(), None)
            return
        self._key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        subject = _name(name)
        self._cert = (
            x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(self._key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=VALID_DAYS * 10))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True,
                                         crl_sign=True, content_commitment=False,
                                         key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False,
                                         decipher_only=False), critical=True)
            .sign(self._key, hashes.SHA256()))
        _write(self.cert_path, self._cert.public_bytes(serialization.Encoding.PEM))
        _write(key_path, _key_pem(self._key), private=True)

    @property
    def pem(self) -> bytes:
        return self._cert.public_bytes(serialization.Encoding.PEM)

    def issue(self, stem: str, common_name: str, *, organizations: tuple[str, ...] = (),
              server_names: tuple[str, ...] = (), client: bool = False,
              days: int = VALID_DAYS) -> Pair:
        """Sign a new key pair; `server_names` (DNS names or IPs) make it a serving
        certificate, `client` a client one. Written as `<stem>.crt` and `<stem>.key`."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        usages = []
        if server_names:
            usages.append(ExtendedKeyUsageOID.SERVER_AUTH)
        if client:
            usages.append(ExtendedKeyUsageOID.CLIENT_AUTH)
        builder = (
            x509.CertificateBuilder().subject_name(_name(common_name, organizations))
            .issuer_name(self._cert.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=days))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage(usages), critical=False))
        if server_names:
            alt: list[x509.GeneralName] = []
            for name in server_names:
                try:
                    alt.append(x509.IPAddress(ipaddress.ip_address(name)))
                except ValueError:
                    alt.append(x509.DNSName(name))
            builder = builder.add_extension(x509.SubjectAlternativeName(alt), critical=False)
        cert = builder.sign(self._key, hashes.SHA256())  # type: ignore[arg-type]
        pair = Pair(self.directory / f"{stem}.crt", self.directory / f"{stem}.key")
        _write(pair.cert, cert.public_bytes(serialization.Encoding.PEM))
        _write(pair.key, _key_pem(key), private=True)
        return pair


def service_account_keys(directory: Path) -> tuple[Path, Path]:
    """An RSA key pair for signing service-account tokens: (private key, public key)."""
    _require()
    private, public = directory / "sa.key", directory / "sa.pub"
    if not (private.is_file() and public.is_file()):
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        _write(private, _key_pem(key), private=True)
        _write(public, key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return private, public


def write_kubeconfig(path: Path, server: str, ca: bytes, client: Pair, user: str) -> Path:
    """A kubeconfig with one cluster, one user (by client certificate) and one context,
    certificates inlined so the file can be copied anywhere."""
    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    doc = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "sandbox",
                      "cluster": {"server": server, "certificate-authority-data": b64(ca)}}],
        "users": [{"name": user,
                   "user": {"client-certificate-data": b64(client.cert.read_bytes()),
                            "client-key-data": b64(client.key.read_bytes())}}],
        "contexts": [{"name": "sandbox", "context": {"cluster": "sandbox", "user": user}}],
        "current-context": "sandbox",
    }
    _write(path, yaml.safe_dump(doc, sort_keys=False).encode(), private=True)
    return path
