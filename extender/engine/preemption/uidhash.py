"""UIDs hashed as bytes, many at once, for the pod columns' lookups (`columns.py`).

A UID becomes fixed-width ASCII bytes (`request_bytes`, `stored_bytes`), those a 64-bit hash
(`hashes`: the same for a value whatever width it is padded to), and a `HashIndex` finds many
hashes together, so a request's thousand victim UIDs cost a few numpy calls instead of a
thousand dict probes, each a cache miss or more.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: UIDs are hashed as 8-byte words, at most this many (longer ones go through the dict).
WORDS = 16
_MULTIPLIERS = np.random.default_rng(0x9E3779B97F4A7C15).integers(
    0, np.iinfo(np.uint64).max, size=WORDS, dtype=np.uint64, endpoint=True) | np.uint64(1)
_MIX = np.uint64(0xBF58476D1CE4E5B9)
#: The stored bytes of a UID a request's ASCII bytes never equal.
NEVER = b"\xff"


def hashes(array: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each fixed-width bytes value (width a multiple of 8); the same for a
    value whatever the width it is padded to."""
    count = array.itemsize // 8
    words = np.ascontiguousarray(array).view(np.uint64).reshape(len(array), count)
    mixed = (words * _MULTIPLIERS[:count]).sum(axis=1, dtype=np.uint64)
    mixed ^= mixed >> np.uint64(29)
    mixed *= _MIX
    mixed ^= mixed >> np.uint64(32)
    return mixed  # type: ignore[no-any-return]


def _word_width(width: int) -> int:
    """The bytes a value of `width` is padded to: whole 8-byte words, at least one."""
    return max(8, -(-width // 8) * 8)


def _padded(array: np.ndarray) -> np.ndarray:
    width = _word_width(array.itemsize)
    return array if width == array.itemsize else array.astype(f"S{width}")


def request_bytes(uids: Sequence[str]) -> np.ndarray | None:
    """The UIDs as one bytes array for `hashes`; None when some UID is not ASCII, holds a
    NUL (bytes values drop trailing NULs) or is too long."""
    if not uids:
        return np.zeros(0, dtype="S8")
    width = len(uids[0])
    if width > 8 * WORDS:
        return None
    try:
        joined = "\x00".join(uids).encode("ascii")
    except UnicodeEncodeError:
        return None
    count = len(uids)
    if len(joined) == count * (width + 1) - 1:
        # Every UID as long as the first, maybe (a UID the API server made is a
        # 36-character UUID): the joined bytes are then the array, one row per UID, if each
        # row's last byte is its separator and no other byte is a NUL. NumPy reading 5 000
        # strings one by one took 250 µs; this, 40.
        rows = np.frombuffer(joined + b"\x00", dtype=np.uint8).reshape(count, width + 1)
        if not rows[:, width].any():
            if np.count_nonzero(rows) != count * width:
                return None  # some UID holds a NUL
            # To `_padded`'s width for the UIDs, dropping a separator that would run past it.
            return rows.reshape(-1).view(f"S{width + 1}").astype(f"S{_word_width(width)}")
    if "\x00" in "".join(uids):
        return None
    array = np.array(uids, dtype="S")
    if array.itemsize > 8 * WORDS:
        return None
    return _padded(array)


def stored_bytes(uids: list[str]) -> np.ndarray:
    """`request_bytes` for the columns: `NEVER` for a UID a request's bytes could not
    stand for."""
    array = request_bytes(uids)
    if array is None:
        array = np.array([uid.encode() if uid.isascii() and "\x00" not in uid
                          and len(uid) <= 8 * WORDS else NEVER for uid in uids], dtype="S")
        array = _padded(array)
    return array


class HashIndex:
    """64-bit hashes with a value each (non-negative), for looking many hashes up at once:
    an open-addressing table with linear probing, laid out in one pass (keys sorted by home
    slot, each placed at the first free slot from its home: a running maximum), and probed
    for all hashes together, one gather per probe step. The table is at most a quarter full
    and never wraps (its tail holds what runs past the last home slot). A hash held twice
    finds the first; callers check what they find."""

    __slots__ = ("shift", "hashes", "values")

    def __init__(self, hashes: np.ndarray, values: np.ndarray) -> None:
        bits = max(4, int(len(hashes)).bit_length() + 1)
        self.shift = np.uint64(64 - bits)
        home = (hashes >> self.shift).astype(np.int64)
        order = np.argsort(home, kind="stable")
        home = home[order]
        steps = np.arange(len(home), dtype=np.int64)
        slot = np.maximum.accumulate(home - steps) + steps if len(home) else home
        size = max(1 << bits, int(slot[-1]) + 1 if len(slot) else 0) + 1
        self.hashes = np.zeros(size, dtype=np.uint64)
        self.values = np.full(size, -1, dtype=np.int64)
        self.hashes[slot] = hashes[order]
        self.values[slot] = values[order]

    def find(self, hashes: np.ndarray) -> np.ndarray:
        """The value of each hash (the first slot holding it); -1 for one not held."""
        found = np.full(len(hashes), -1, dtype=np.int64)
        where = (hashes >> self.shift).astype(np.int64)
        todo = np.arange(len(hashes))
        stored, values = self.hashes, self.values
        while len(todo):
            at = where[todo]
            value = values[at]
            hit = (stored[at] == hashes[todo]) & (value >= 0)
            found[todo[hit]] = value[hit]
            more = ~hit & (value >= 0)
            todo = todo[more]
            where[todo] += 1
        return found
