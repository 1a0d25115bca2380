"""The generator's random stream: ``random.Random`` with its two common draws made cheaper.

A case is a function of its seed through the draws made from one Mersenne Twister in a
fixed order, so a draw may only be made cheaper if it returns the same value and leaves
the same state. ``randint`` and ``randrange`` check and convert their arguments and go
through two more Python calls before they reach ``_randbelow``; for the ints the
generator passes, :meth:`Draws.below` and :meth:`Draws.between` are that last step alone,
written out: ``getrandbits`` of the bound's bit length, drawn again while it is not below
the bound (``random.Random._randbelow_with_getrandbits``); :meth:`Draws.few` is
``sample`` of a few items out of many, without its checks. The test holds them to the
standard methods on the same states.
"""

from __future__ import annotations

import _random
import random
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

# random.sample draws up to FEW items out of more than SMALL_POPULATION by index into the
# population, keeping the indexes drawn (a set); more items, or a smaller population,
# from a shrinking copy of it.
FEW = 5
SMALL_POPULATION = 21


class Draws(random.Random):
    """``random.Random`` (seeded the same way, the same stream) with unchecked draws for ints."""

    gauss_next: float | None  # Random's own, set by its __init__ (the typeshed leaves it out)

    @classmethod
    def seeded(cls, seed: int) -> Draws:
        """``Draws(seed)`` for an int ``seed``: the same state, seeded by the C generator
        directly (``Random.__init__`` and ``Random.seed`` only check the type and pass an
        int on to it, then clear the Gaussian draw kept)."""
        draws = cls.__new__(cls)
        _random.Random.seed(draws, seed)
        draws.gauss_next = None
        return draws

    def below(self, bound: int) -> int:
        """``randrange(bound)`` for an int ``bound >= 1``: the same value, the same state after."""
        getrandbits = self.getrandbits
        width = (
            bound.bit_length()
        )  # of bound, not bound - 1: as _randbelow, so a power of 2 draws one bit more
        drawn = getrandbits(width)
        while drawn >= bound:
            drawn = getrandbits(width)
        return drawn

    def between(self, low: int, high: int) -> int:
        """``randint(low, high)`` for ints ``low <= high``: the same value, the same state after."""
        bound = high - low + 1
        getrandbits = self.getrandbits
        width = bound.bit_length()
        drawn = getrandbits(width)
        while drawn >= bound:
            drawn = getrandbits(width)
        return low + drawn

    def few(self, population: Sequence[T], count: int) -> list[T]:
        """``sample(population, count)``: the same items from the same state. A few items
        (at most :data:`FEW`) out of more than :data:`SMALL_POPULATION` are drawn as
        ``sample`` draws them then, by index, again while the index was drawn already;
        any other size goes to ``sample`` itself."""
        size = len(population)
        if count > FEW or size <= SMALL_POPULATION:
            return self.sample(population, count)
        picked: list[T] = []
        drawn: set[int] = set()
        for _ in range(count):
            index = self.below(size)
            while index in drawn:
                index = self.below(size)
            drawn.add(index)
            picked.append(population[index])
        return picked


__all__ = ["FEW", "SMALL_POPULATION", "Draws"]
