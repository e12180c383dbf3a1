"""`extender certs`: the certificates of mutual TLS between kube-scheduler and the extender,
as the Secrets `manifests/components/tls` mounts, ready for `kubectl apply -f -`.

One private CA signs both directions: the extender's serving certificate (for its Service's
DNS names) and kube-scheduler's client certificate (and, with `--metrics-client`, one for
Prometheus). The CA's key is kept only with `--dir` (which also reuses a CA found there, to
renew the leaves without redistributing the CA).
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
import tempfile
from pathlib import Path

import yaml

NAMESPACE = "scheduler-extender"
SERVICE = "scheduler-extender"
SERVER_SECRET = "scheduler-extender-tls"
CLIENT_SECRET = "extender-scheduler-client-tls"
METRICS_SECRET = "scheduler-extender-metrics-client-tls"
#: manifests/base/namespace.yaml, as `extender certs` prints it first so one `kubectl apply`
#: works on a fresh cluster (the same labels: re-applying either never removes the other's).
MANIFESTS_NAMESPACE = {
    "apiVersion": "v1", "kind": "Namespace",
    "metadata": {"name": NAMESPACE, "labels": {
        "pod-security.kubernetes.io/enforce": "restricted",
        "pod-security.kubernetes.io/warn": "restricted"}}}


def add_commands(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "certs", help="make the mutual-TLS certificates as the Secrets the manifests mount",
        description="Make a CA, the extender's serving certificate and kube-scheduler's client "
                    "certificate, and print them as the two Secrets of manifests/components/tls "
                    f"({SERVER_SECRET}: tls.crt, tls.key, client-ca.crt; {CLIENT_SECRET}: "
                    "ca.crt, tls.crt, tls.key). Apply them with `extender certs | kubectl "
                    "apply -f -` (the manifests' Namespace comes first, so this works before "
                    "`kubectl apply -k`). Needs the certs extra (pip install -e '.[certs]').")
    parser.add_argument("--namespace", default=NAMESPACE,
                        help=f"where the Secrets and the extender's Service are (default: "
                             f"{NAMESPACE}, printed too, as the manifests make it; another "
                             "namespace must exist)")
    parser.add_argument("--service", default=SERVICE,
                        help=f"the extender's Service, whose DNS names the serving certificate "
                             f"carries (default: {SERVICE})")
    parser.add_argument("--days", type=int, default=365,
                        help="validity of the serving and client certificates (default: 365)")
    parser.add_argument("--metrics-client", action="store_true",
                        help=f"also {METRICS_SECRET}, Prometheus' client certificate (with "
                             "components/servicemonitor)")
    parser.add_argument("--dir", type=Path, default=None, metavar="DIR",
                        help="keep the CA and every key and certificate in DIR; a CA already "
                             "there is reused (renewal). Default: nothing is kept but the output")
    parser.add_argument("-o", "--output", type=Path, default=None, metavar="FILE",
                        help="write the Secrets to FILE instead of standard output")
    parser.set_defaults(func=run_certs)


def _secret(name: str, namespace: str, files: dict[str, Path]) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": name, "namespace": namespace,
                         "labels": {"app.kubernetes.io/name": "scheduler-extender"}},
            "data": {key: base64.b64encode(path.read_bytes()).decode()
                     for key, path in files.items()}}


def make_secrets(directory: Path, namespace: str = NAMESPACE, service: str = SERVICE,
                 days: int = 365, metrics_client: bool = False) -> list[dict[str, object]]:
    """The Secrets (after the manifests' Namespace, when it is theirs), with every file
    written to `directory` (its CA reused if present)."""
    from extender.ops.pki import Authority

    if days <= 0:
        raise ValueError(f"--days {days}: must be positive")
    ca = Authority(directory, name="scheduler-extender-ca")
    names = (f"{service}.{namespace}.svc", f"{service}.{namespace}.svc.cluster.local",
             f"{service}.{namespace}", service)
    server = ca.issue("server", service, server_names=names, days=days)
    client = ca.issue("kube-scheduler", "kube-scheduler", client=True, days=days)
    secrets: list[dict[str, object]] = [MANIFESTS_NAMESPACE] if namespace == NAMESPACE else []
    secrets += [
        _secret(SERVER_SECRET, namespace, {"tls.crt": server.cert, "tls.key": server.key,
                                           "client-ca.crt": ca.cert_path}),
        _secret(CLIENT_SECRET, namespace, {"ca.crt": ca.cert_path, "tls.crt": client.cert,
                                           "tls.key": client.key}),
    ]
    if metrics_client:
        metrics = ca.issue("prometheus", "prometheus", client=True, days=days)
        secrets.append(_secret(METRICS_SECRET, namespace, {
            "ca.crt": ca.cert_path, "tls.crt": metrics.cert, "tls.key": metrics.key}))
    return secrets


def run_certs(args: argparse.Namespace) -> int:
    from extender.ops.pki import PkiUnavailable

    try:
        if args.dir is not None:
            secrets = make_secrets(args.dir, args.namespace, args.service, args.days,
                                   args.metrics_client)
        else:
            with tempfile.TemporaryDirectory(prefix="extender-certs-") as tmp:
                secrets = make_secrets(Path(tmp), args.namespace, args.service, args.days,
                                       args.metrics_client)
    except (PkiUnavailable, ValueError, OSError) as exc:
        print(f"certs: {exc}", file=sys.stderr)
        return 2
    text = yaml.safe_dump_all(secrets, sort_keys=False)
    if args.output is not None:
        try:
            _write_private(args.output, text)
        except OSError as exc:
            print(f"certs: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        count = sum(doc["kind"] == "Secret" for doc in secrets)
        print(f"wrote {count} Secrets to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _write_private(path: Path, text: str) -> None:
    """Write the Secrets (private keys among them) readable by the owner alone from the
    first byte: created 0600, and an existing file made 0600 before it is filled."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        os.fchmod(out.fileno(), 0o600)
        out.write(text)
