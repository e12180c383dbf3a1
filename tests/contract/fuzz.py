"""A seeded mutator of kube-scheduler's wire payloads, for the fuzz test.

Each mutation starts from a valid payload and breaks it the ways a fuzzer, a broken proxy or
an attacker would: at the byte level (flips, insertions, cuts, invalid UTF-8 sequences inside
strings) and at the JSON level (a value replaced by a huge number, a deep nest, a long array or
string, a lone surrogate escape, a wrong type; keys dropped, duplicated or added). The same seed
gives the same payloads.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from typing import Any

#: Byte sequences that are not UTF-8: stray continuation bytes, a truncated sequence, an
#: overlong encoding, an encoded surrogate, bytes never valid in UTF-8, a code point > U+10FFFF.
INVALID_UTF8 = [b"\x80", b"\xbf", b"\xc3\x28", b"\xe2\x82", b"\xc0\xaf", b"\xed\xa0\x80",
                b"\xff", b"\xfe\xfe", b"\xf4\x90\x80\x80", b"\xf0\x9f\x98"]


def _huge_values(rng: random.Random) -> list[bytes]:
    depth = rng.choice([50, 500, 5_000, 100_000])
    return [
        b"1" + b"0" * rng.choice([20, 40, 400, 4000]),        # an integer far past 64 bits
        b"-" + b"9" * rng.choice([19, 30, 300]),
        b"1e400", b"-1e400", b"1.7976931348623157e308", b"4.9e-324", b"1e-400",
        b"[" * depth + b"]" * depth,                          # deep nesting
        b'{"a":' * min(depth, 20_000) + b"1" + b"}" * min(depth, 20_000),
        b"[" + b",".join([b"0"] * rng.choice([1_000, 20_000])) + b"]",   # long arrays
        b"[" + b",".join([b'"n"'] * rng.choice([1_000, 20_000])) + b"]",
        b'"' + b"x" * rng.choice([10_000, 1_000_000]) + b'"',  # long strings
        b'"\\ud800"', b'"\\udc80x"', b'"\\u0000"', b'"\\uD83D\\uDE00"', b'"\\"',
        b"null", b"true", b"false", b"{}", b"[]", b'""', b"0", b"-0", b"1.5",
        b'{"' + b"k" * 100 + b'": 1}',
    ]


def _values(tree: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    yield path, tree
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from _values(value, (*path, key))
    elif isinstance(tree, list):
        for index, value in enumerate(tree):
            yield from _values(value, (*path, index))


_MARK = "\u0001MUTATED\u0001"


def _replace(tree: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(tree, dict):
        return {k: (_replace(v, rest, value) if k == head else v) for k, v in tree.items()}
    return [(_replace(v, rest, value) if i == head else v) for i, v in enumerate(tree)]


class Mutator:
    """Mutated payloads from a list of valid seeds, reproducibly."""

    def __init__(self, seeds: list[bytes], seed: int) -> None:
        self.seeds = seeds
        self.trees = [json.loads(s) for s in seeds]
        self.rng = random.Random(seed)
        self.strategies: list[Callable[[int], bytes]] = [
            self.flip_bytes, self.insert_bytes, self.cut, self.invalid_utf8_in_string,
            self.replace_value, self.replace_value, self.replace_value, self.drop_key,
            self.duplicate_key, self.wrong_type, self.splice,
        ]

    def __iter__(self) -> Iterator[bytes]:
        while True:
            yield self.next()

    def next(self) -> bytes:
        index = self.rng.randrange(len(self.seeds))
        body = self.rng.choice(self.strategies)(index)
        if self.rng.random() < 0.15:  # sometimes stack a second, byte-level mutation
            body = self._bytes_mutation(body)
        return body

    # ---- byte level ---------------------------------------------------------------------
    def _bytes_mutation(self, body: bytes) -> bytes:
        rng = self.rng
        data = bytearray(body)
        if not data:
            return bytes(rng.choice(INVALID_UTF8))
        at = rng.randrange(len(data))
        choice = rng.randrange(3)
        if choice == 0:
            data[at] = rng.randrange(256)
        elif choice == 1:
            data[at:at] = rng.choice(INVALID_UTF8)
        else:
            del data[at:at + rng.randrange(1, 64)]
        return bytes(data)

    def flip_bytes(self, index: int) -> bytes:
        data = bytearray(self.seeds[index])
        for _ in range(self.rng.randrange(1, 8)):
            at = self.rng.randrange(len(data))
            data[at] ^= 1 << self.rng.randrange(8)
        return bytes(data)

    def insert_bytes(self, index: int) -> bytes:
        data = bytearray(self.seeds[index])
        at = self.rng.randrange(len(data) + 1)
        junk = bytes(self.rng.randrange(256) for _ in range(self.rng.randrange(1, 16)))
        data[at:at] = junk
        return bytes(data)

    def cut(self, index: int) -> bytes:
        data = self.seeds[index]
        return data[: self.rng.randrange(len(data))]

    def invalid_utf8_in_string(self, index: int) -> bytes:
        """Invalid UTF-8 inside a JSON string: in a key, a name, a label, a node's bytes."""
        data = self.seeds[index]
        quotes = [i for i, b in enumerate(data) if b == 0x22]  # '"'
        at = self.rng.choice(quotes) + 1
        return data[:at] + self.rng.choice(INVALID_UTF8) + data[at:]

    def splice(self, index: int) -> bytes:
        """Half of one payload and half of another (also across verbs)."""
        a, b = self.seeds[index], self.rng.choice(self.seeds)
        return a[: self.rng.randrange(len(a))] + b[self.rng.randrange(len(b)):]

    # ---- JSON level ---------------------------------------------------------------------
    def _dump_with(self, index: int, path: tuple, raw: bytes) -> bytes:
        tree = _replace(self.trees[index], path, _MARK)
        text = json.dumps(tree).encode()
        return text.replace(json.dumps(_MARK).encode(), raw, 1)

    def _path(self, index: int) -> tuple:
        return self.rng.choice([p for p, _ in _values(self.trees[index])])

    def replace_value(self, index: int) -> bytes:
        return self._dump_with(index, self._path(index), self.rng.choice(_huge_values(self.rng)))

    def wrong_type(self, index: int) -> bytes:
        raw = self.rng.choice([b"1", b'"s"', b"[]", b"{}", b"null", b"true", b"-1", b"0.5"])
        return self._dump_with(index, self._path(index), raw)

    def _object_paths(self, index: int) -> list[tuple]:
        return [p for p, v in _values(self.trees[index]) if isinstance(v, dict) and v]

    def drop_key(self, index: int) -> bytes:
        path = self.rng.choice(self._object_paths(index))
        tree = self.trees[index]
        target: Any = tree
        for part in path:
            target = target[part]
        key = self.rng.choice(list(target))
        smaller = {k: v for k, v in target.items() if k != key}
        return json.dumps(_replace(tree, path, smaller)).encode()

    def duplicate_key(self, index: int) -> bytes:
        """The same key twice in one object (or an unknown one), spliced in textually."""
        data = self.seeds[index]
        braces = [i for i, b in enumerate(data) if b == 0x7B]  # '{'
        at = self.rng.choice(braces) + 1
        key = self.rng.choice([b'"Pod"', b'"NodeNames"', b'"metadata"', b'"name"', b'"Nodes"',
                               b'"PodUID"', b'"items"', b'"zzz"', b'"NodeNameToMetaVictims"'])
        value = self.rng.choice([b"null", b"1", b'"x"', b"[]", b"{}"])
        return data[:at] + key + b":" + value + b"," + data[at:]
