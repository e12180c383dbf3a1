"""A cache bounded in entries and in bytes, least recently used out first.

The caches that live across requests hold what requests brought (a pod's bytes, a candidate
list, a reply): counting entries alone lets a few legal but huge objects (a pod with a 1.5 MB
annotation) take gigabytes. Each such cache has a byte budget, a share of one setting
(`serve --cache-bytes`); an entry larger than a sixteenth of its cache's budget is not kept at
all (it would evict everything for one use).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

#: The default of `serve --cache-bytes`: what the caches together may hold, sized for the
#: manifests' 1 GiB memory limit next to a 5 000-node, 150 000-pod state (about 260 MiB).
DEFAULT_CACHE_BYTES = 256 * 1024 * 1024


class BoundedCache(Generic[K, V]):
    """`max_entries` entries and `max_bytes` bytes (the sizes callers give) at most."""

    def __init__(self, max_entries: int, max_bytes: int) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self.nbytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: K) -> V | None:
        found = self._entries.get(key)
        return None if found is None else found[0]

    def put(self, key: K, value: V, size: int) -> bool:
        """Keep `value` (of `size` bytes) under `key`; False when it is too large to keep."""
        if size > self.max_bytes // 16:
            return False
        old = self._entries.pop(key, None)
        if old is not None:
            self.nbytes -= old[1]
        self._entries[key] = (value, size)
        self.nbytes += size
        self._evict()
        return True

    def set_budget(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._evict()

    def clear(self) -> None:
        self._entries.clear()
        self.nbytes = 0

    def _evict(self) -> None:
        entries = self._entries
        while entries and (len(entries) > self.max_entries or self.nbytes > self.max_bytes):
            try:
                _, (_, size) = entries.popitem(last=False)
            except KeyError:  # another thread (api.offload) emptied it first
                break
            self.nbytes -= size
