"""The fingerprint of a set of pods (k8stopologyawareschedwg/podfingerprint, `pfp0v001`): what
a node agent stamps on its NodeResourceTopology report so a scheduler can tell whether the
report accounts for exactly the pods it knows on the node.

Each pod is identified by its namespace and name only: the xxHash64 of its name, seeded with
the xxHash64 of its namespace. The hashes are sorted, written as little-endian 64-bit words
and hashed again; the sum is written big-endian in hex after the prefix and the version."""

from __future__ import annotations

import struct
from collections.abc import Iterable

import xxhash

PREFIX = "pfp0"
VERSION = "v001"
#: The report's annotation, and (preferred) its attribute, carrying the fingerprint.
ANNOTATION = "topology.node.k8s.io/fingerprint"
ATTRIBUTE = "nodeTopologyPodsFingerprint"
#: The report's attribute saying which pods the agent counted.
ATTRIBUTE_METHOD = "nodeTopologyPodsFingerprintMethod"
METHOD_WITH_EXCLUSIVE_RESOURCES = "with-exclusive-resources"


def pod_hash(namespace: str, name: str) -> int:
    """One pod's part of a fingerprint."""
    return xxhash.xxh64_intdigest(name.encode(), seed=xxhash.xxh64_intdigest(namespace.encode()))


def sign_hashes(hashes: Iterable[int]) -> str:
    """The fingerprint of the pods whose `pod_hash`es these are, in any order."""
    ordered = sorted(hashes)
    total = xxhash.xxh64_intdigest(struct.pack(f"<{len(ordered)}Q", *ordered))
    return f"{PREFIX}{VERSION}{total:016x}"


def sign(pods: Iterable[tuple[str, str]]) -> str:
    """The fingerprint of the pods, given as (namespace, name) pairs, in any order."""
    return sign_hashes(pod_hash(namespace, name) for namespace, name in pods)


def matches(expected: str, hashes: Iterable[int]) -> bool:
    """`Fingerprint.Check`: whether `expected` is this package's version and the sum of the
    pods whose `pod_hash`es these are. A malformed or other-version fingerprint never matches."""
    if len(expected) < 16 or expected[:4] != PREFIX or expected[4:8] != VERSION:
        return False
    return expected[8:] == sign_hashes(hashes)[8:]
