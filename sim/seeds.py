"""Every random stream of a run, derived from its seed by name.

A run has one seed. Each consumer of randomness takes a stream of its own,
named by a path under that seed, so that adding draws to one stream never
shifts another (tigerbeetle's VOPR splits its generator the same way):

==============================  ============================================
``world``                       the simulation's own choices
``network``                     latency, jitter, drops, duplicates, reorders
``node/ID/INCARNATION``         one raft node process
``app/ID/INCARNATION``          the controller on that node process
``config``                      ``raft-sim --randomize``: the drawn setup
``faults``                      ``raft-sim --random-faults``
``failover``, ``visibility``    an experiment's own draws
==============================  ============================================

A stream is ``random.Random`` seeded with the string ``kraftsim/SEED/NAME...``
(string seeds are hashed with SHA-512 by ``random``, the same in every
process whatever ``PYTHONHASHSEED`` is). :func:`derive_seed` makes integer
seeds from names (SHA-256), e.g. an experiment run's seed from its sweep's.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

SEED_BITS = 63
"""Derived seeds fit a signed 64-bit integer (Spark's LongType, Parquet's INT64)."""


def stream_key(seed: int, *names: object) -> str:
    """The string a named stream is seeded with: ``kraftsim/SEED/NAME/...``."""
    return "/".join(("kraftsim", str(seed), *map(str, names)))


def named_random(seed: int, *names: object) -> random.Random:
    """The stream ``names`` of the run with ``seed`` (e.g. ``named_random(7, "node", 3000, 1)``)."""
    return random.Random(stream_key(seed, *names))


def derive_seed(*parts: object) -> int:
    """A seed of :data:`SEED_BITS` bits: SHA-256 of the parts joined by ``/``.

    Never Python's ``hash()``, which changes with PYTHONHASHSEED: the same
    parts give the same seed in every process, on every worker of a cluster.
    """
    key = "/".join(map(str, parts)).encode()
    digest = hashlib.sha256(key).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


class _Pending(random.Random):
    """A stream whose seed (a key) or state (a tuple) is applied at its first use.

    A run reseeds every stream of a forked world, and most of them (the
    world's own, most nodes' and apps') never draw: seeding one costs a
    SHA-512 and a Mersenne Twister initialisation. A pending stream becomes a
    plain ``random.Random`` again (same object, ``__class__`` switched back)
    before it draws, so its draws are exactly those of one seeded at once.
    """

    __slots__ = ()

    def _start(self) -> None:
        # Idempotent: a caller may hold one of these bound methods across draws
        # (random._randbelow does).
        pending = self.__dict__.pop("_pending", None)
        self.__class__ = random.Random  # type: ignore[assignment]
        if type(pending) is str:
            random.Random.seed(self, pending)
        elif pending is not None:
            random.Random.setstate(self, pending)

    def random(self) -> float:
        """Start the stream, then draw."""
        _Pending._start(self)
        return random.Random.random(self)

    def getrandbits(self, k: int, /) -> int:
        """Start the stream, then draw."""
        _Pending._start(self)
        return random.Random.getrandbits(self, k)

    def getstate(self) -> tuple[Any, ...]:
        """Start the stream, then read its state."""
        _Pending._start(self)
        return random.Random.getstate(self)

    def seed(self, a: Any = None, version: int = 2) -> None:
        """Seed now: what was pending is forgotten."""
        self.__dict__.pop("_pending", None)
        self.__class__ = random.Random  # type: ignore[assignment]
        random.Random.seed(self, a, version)

    def setstate(self, state: tuple[Any, ...]) -> None:
        """Set the state now: what was pending is forgotten."""
        self.__dict__.pop("_pending", None)
        self.__class__ = random.Random  # type: ignore[assignment]
        random.Random.setstate(self, state)


PENDING_STREAM = _Pending
"""The class of a stream whose seed or state waits for its first use (:func:`seed_later`)."""


def seed_later(rng: random.Random, pending: str | tuple[Any, ...]) -> None:
    """Seed ``rng`` with the key ``pending`` (a str) or give it the state ``pending`` (a
    tuple, :meth:`random.Random.getstate`'s) when it is first used; the same draws as doing
    it now."""
    rng.__class__ = _Pending
    rng.__dict__["_pending"] = pending
