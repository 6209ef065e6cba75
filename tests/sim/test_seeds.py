"""The named sub-streams of a run's seed and the SHA-256 seed derivation."""

from __future__ import annotations

import random

from experiments.seeds import run_seed
from sim.seeds import derive_seed, named_random, stream_key


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
