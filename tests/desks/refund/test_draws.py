"""The generator's unchecked draws return what ``random.Random``'s own give, from the same state."""

from __future__ import annotations

import random

from batchgate_gym.desks.refund.generator.draws import Draws

# Bounds the generator draws with, powers of two (one bit more than they need) and one.
BOUNDS = (1, 2, 3, 4, 8, 9, 16, 100, 120, 900, 940, 2360, 98_999, 2**31, 2**32, 2**40 + 3)


def test_below_is_randrange_of_one_bound_value_and_state() -> None:
    for seed in range(200):
        draws, plain = Draws(seed), random.Random(seed)
        for bound in BOUNDS:
            assert draws.below(bound) == plain.randrange(bound), (seed, bound)
        assert draws.getstate() == plain.getstate()


def test_between_is_randint_value_and_state() -> None:
    for seed in range(200):
        draws, plain = Draws(seed), random.Random(seed)
        for low in (-120, 0, 1, 1000, 5001):
            for bound in BOUNDS:
                high = low + bound - 1
                assert draws.between(low, high) == plain.randint(low, high), (seed, low, high)
        assert draws.getstate() == plain.getstate()


def test_the_other_draws_are_random_randoms() -> None:
    draws, plain = Draws(7), random.Random(7)
    assert [draws.random(), draws.sample(range(40), 9), draws.getrandbits(24)] == [
        plain.random(),
        plain.sample(range(40), 9),
        plain.getrandbits(24),
    ]


def test_few_is_sample_for_every_count_and_population_size() -> None:
    for size in (1, 5, 21, 22, 40, 100):
        population = [f"item-{i}" for i in range(size)]
        for count in range(min(size, 20) + 1):
            for seed in range(40):
                draws, plain = Draws(seed), random.Random(seed)
                assert draws.few(population, count) == plain.sample(population, count), (size, count, seed)
                assert draws.getstate() == plain.getstate()


def test_seeded_is_the_constructor_s_state() -> None:
    for seed in (0, 1, 2**31, 2**64 + 5, 10**30):
        draws = Draws.seeded(seed)
        assert draws.getstate() == Draws(seed).getstate() == random.Random(seed).getstate()
        assert draws.random() == random.Random(seed).random()
