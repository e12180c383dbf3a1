"""Cheap draws for the fields of generated objects in property tests.

Hypothesis pays tens of microseconds for each draw; a generated cluster of pods and nodes takes
a few hundred, and drawing them took most of the time of the property tests over generated
clusters. Their fields are drawn here instead, from a `random.Random` that Hypothesis seeds
(`st.randoms(use_true_random=True)`: one draw), while the sizes (how many nodes, pods,
containers) stay Hypothesis's own draws. The same number of examples is run; what is given up
is shrinking within an object: a failing example shrinks to fewer objects, not to simpler ones.
`integer` leans to the ends of its range as Hypothesis's integers do, so boundaries (0, the
largest value) still come up often.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

from hypothesis import strategies as st

T = TypeVar("T")


class Draws:
    """A seeded source of field values (see the module's docstring)."""

    __slots__ = ("rng",)

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choice(self, options: Sequence[T]) -> T:
        return self.rng.choice(options)

    def boolean(self) -> bool:
        return self.rng.random() < 0.5

    def one_in(self, n: int) -> bool:
        return self.rng.randrange(n) == 0

    def integer(self, low: int, high: int) -> int:
        """In [low, high]: `low` one time in five, another end or a value next to it one in
        five, a small offset from `low` one in five, otherwise any."""
        rng = self.rng
        roll = rng.randrange(5)
        if roll == 0:
            return low
        if roll == 1:
            return rng.choice((high, min(low + 1, high), max(high - 1, low)))
        if roll == 2:
            return low + rng.randrange(min(256, high - low + 1))
        return rng.randint(low, high)

    def some(self, options: Sequence[T], max_size: int, *, unique: bool = False) -> list[T]:
        """Up to `max_size` of `options` (distinct ones when `unique`), every count as likely."""
        rng = self.rng
        if unique:
            distinct = list(dict.fromkeys(options))
            return rng.sample(distinct, rng.randint(0, min(max_size, len(distinct))))
        return [rng.choice(options) for _ in range(rng.randint(0, max_size))] if options else []

    def permutation(self, options: Sequence[T]) -> list[T]:
        return self.rng.sample(list(options), len(options))


def seeded(draw: st.DrawFn) -> Draws:
    """A `Draws` seeded by one Hypothesis draw."""
    return Draws(draw(st.randoms(use_true_random=True)))
