"""Random, never-repeating ids drawn from one shared range per kind.

Ids are drawn at random rather than counted up, because an id that grows with the
order in which batches were built tells an agent which batch was built first (and
the defective one used to be built first). All customer ids of a case (warehouse,
new, re-sent, orphan) come from the same range, so an orphan or a re-added
customer cannot be spotted by where its id falls.
"""

from __future__ import annotations

import functools
import itertools
import random
from math import floor

CUSTOMER_PREFIX = "C"
ORDER_PREFIX = "O"
CUSTOMER_DIGITS = 3  # C100..C999, as in the original data
ORDER_DIGITS = 5  # O10000..O99999
HEADROOM = 10  # the range holds at least this many times the ids a case needs


def digits_for(needed: int, minimum: int) -> int:
    """The fewest digits (at least ``minimum``) whose range has room for ``needed`` ids.

    Wider ids only when the case is large, so default cases look like the
    original's while a 100k-row batch still gets unique ids cheaply.
    """
    digits = minimum
    while 9 * 10 ** (digits - 1) < HEADROOM * max(needed, 1):
        digits += 1
    return digits


class IdPool:
    """Hands out distinct ids of one kind, uniformly from ``prefix`` + ``digits`` digits."""

    def __init__(self, rng: random.Random, prefix: str, digits: int) -> None:
        self._rng = rng
        self._prefix = prefix
        self._low = 10 ** (digits - 1)
        self._span = 9 * self._low
        self._used: set[int] = set()

    def take(self, count: int) -> list[str]:
        """``count`` fresh ids, in random order, never handed out before by this pool.

        Each draw that repeats an id already handed out is drawn again. At least ``count``
        draws are needed, so they are made at once; when none repeats (nearly always: the
        range is ten times what a case needs), they are the ids, and otherwise they are
        kept or dropped in turn and the draws go on one by one, as if made one at a time.
        """
        used, low, span, rand = self._used, self._low, self._span, self._rng.random
        # floor: int() of the same non-negative product, the same number, at less cost
        fresh = [low + floor(r * span) for r in itertools.starmap(rand, itertools.repeat((), count))]
        if len(set(fresh)) == count and used.isdisjoint(fresh):
            used.update(fresh)
        else:
            drawn, fresh = fresh, []
            for number in drawn:
                if number not in used:
                    used.add(number)
                    fresh.append(number)
            while len(fresh) < count:
                number = low + floor(rand() * span)
                if number not in used:
                    used.add(number)
                    fresh.append(number)
        return _written(self._prefix, self._low * 10, fresh)

    def one(self) -> str:
        """A single fresh id."""
        return self.take(1)[0]


def _written(prefix: str, bound: int, numbers: list[int]) -> list[str]:
    """``prefix`` and each number below ``bound``, as ``f"{prefix}{number}"`` writes them,
    from tables of the texts of up to three digits (writing each number cost more)."""
    heads = _heads(prefix)
    if bound <= 1000:
        return [heads[number] for number in numbers]
    if bound <= 1_000_000:
        return [heads[number // 1000] + _THREE_DIGITS[number % 1000] for number in numbers]
    return [f"{prefix}{number}" for number in numbers]


@functools.cache
def _heads(prefix: str) -> tuple[str, ...]:
    """``prefix`` and each number below 1,000."""
    return tuple(f"{prefix}{number}" for number in range(1000))


_THREE_DIGITS = tuple(f"{number:03d}" for number in range(1000))
