"""The named sub-streams of a run's seed and the SHA-256 seed derivation."""

from __future__ import annotations

import random
from collections.abc import Callable

from experiments.seeds import run_seed
from sim.fork import fork
from sim.seeds import derive_seed, named_random, seed_later, stream_key


def test_stream_is_random_seeded_with_the_historic_string() -> None:
    assert stream_key(7, "node", 3000, 1) == "kraftsim/7/node/3000/1"
    ours = named_random(7, "node", 3000, 1)
    theirs = random.Random("kraftsim/7/node/3000/1")
    assert [ours.random() for _ in range(5)] == [theirs.random() for _ in range(5)]


def test_known_values_are_pinned() -> None:
    assert named_random(3, "world").randrange(1 << 30) == \
        random.Random("kraftsim/3/world").randrange(1 << 30)
    assert named_random(0, "faults").random() == 0.7233249697521548
    assert derive_seed("kraftsim-experiment", "failover", 1, "crash", 0) == 7564640859006447709
    assert run_seed("failover", 1, "crash", 0) == 7564640859006447709


def test_streams_are_independent_and_seeds_fit_63_bits() -> None:
    assert named_random(1, "world").random() != named_random(1, "network").random()
    seeds = {derive_seed("x", i) for i in range(200)}
    assert len(seeds) == 200
    assert all(0 <= s < 1 << 63 for s in seeds)


def test_a_stream_seeded_later_draws_as_one_seeded_now() -> None:
    """seed_later (a reseeded or forked world's streams): the same draws, state and copies
    as seeding at once, whichever use comes first."""
    key = stream_key(5, "node", 3000, 1)
    first_uses: dict[str, Callable[[random.Random], object]] = {
        "randrange": lambda r: r.randrange(10**9),  # holds a bound getrandbits across draws
        "random": lambda r: r.random(),
        "getstate": lambda r: r.getstate(),
        "choice": lambda r: r.choice(range(1000)),
    }
    for use in first_uses.values():
        eager, lazy = random.Random(key), random.Random(1)
        seed_later(lazy, key)
        assert type(lazy) is not random.Random  # nothing seeded yet
        assert use(lazy) == use(eager)
        assert type(lazy) is random.Random
        assert [lazy.randrange(1000) for _ in range(50)] == [eager.randrange(1000)
                                                               for _ in range(50)]
    lazy = random.Random(1)
    seed_later(lazy, key)
    assert fork(lazy).random() == random.Random(key).random()  # a fork of a pending stream
    lazy = random.Random(1)
    seed_later(lazy, random.Random(9).getstate())  # a state instead of a key
    assert lazy.random() == random.Random(9).random()
    lazy = random.Random(1)
    seed_later(lazy, key)
    lazy.seed(3)  # seeding now forgets what was pending
    assert lazy.random() == random.Random(3).random()
