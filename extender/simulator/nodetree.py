"""The order in which the scheduler walks nodes: kube-scheduler's `nodeTree`.

Nodes are grouped by zone (region + zone labels) in order of first appearance, each zone
keeping its nodes in insertion order; the snapshot's node list interleaves the zones
round-robin. With `nextStartNodeIndex` this decides which nodes a sampled search examines.
"""

from __future__ import annotations

from collections.abc import Mapping

REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")


def zone_key(labels: Mapping[str, str]) -> str:
    """`utilnode.GetZoneKey`: "" without zone/region labels, else region + ":\\x00:" + zone."""
    region = next((labels[k] for k in REGION_LABELS if labels.get(k)), "")
    zone = next((labels[k] for k in ZONE_LABELS if labels.get(k)), "")
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


class NodeTree:
    """zone -> node names; `list()` interleaves zones as `nodeTree.list()` does."""

    def __init__(self) -> None:
        self._zones: list[str] = []
        self._tree: dict[str, list[str]] = {}
        self._zone_of: dict[str, str] = {}
        self._cache: list[str] | None = None

    def add(self, name: str, labels: Mapping[str, str]) -> None:
        zone = zone_key(labels)
        if name in self._zone_of:
            if self._zone_of[name] == zone:
                return
            self.remove(name)
        if zone not in self._tree:
            self._zones.append(zone)
            self._tree[zone] = []
        self._tree[zone].append(name)
        self._zone_of[name] = zone
        self._cache = None

    def update(self, name: str, labels: Mapping[str, str]) -> None:
        self.add(name, labels)

    def remove(self, name: str) -> None:
        zone = self._zone_of.pop(name, None)
        if zone is None:
            return
        names = self._tree[zone]
        names.remove(name)
        if not names:
            del self._tree[zone]
            self._zones.remove(zone)
        self._cache = None

    def list(self) -> list[str]:
        if self._cache is None:
            out: list[str] = []
            columns = [self._tree[z] for z in self._zones]
            depth = max((len(c) for c in columns), default=0)
            for i in range(depth):
                for column in columns:
                    if i < len(column):
                        out.append(column[i])
            self._cache = out
        return self._cache

    def __len__(self) -> int:
        return len(self._zone_of)

    def __contains__(self, name: object) -> bool:
        return name in self._zone_of
