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
