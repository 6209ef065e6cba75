"""Run seeds: a stable hash of (experiment, master seed, scenario, index).

SHA-256, never Python's ``hash()`` (which changes with PYTHONHASHSEED), so a
run's seed is the same in every process, on every worker of a cluster.
"""

from __future__ import annotations

import hashlib

SEED_BITS = 63
"""Run seeds fit a signed 64-bit integer (Spark's LongType, Parquet's INT64)."""


def run_seed(experiment: str, master_seed: int, scenario: str, index: int) -> int:
    """The seed of run ``index`` of ``scenario`` in a sweep with ``master_seed``."""
    key = f"kraftsim-experiment/{experiment}/{master_seed}/{scenario}/{index}".encode()
    digest = hashlib.sha256(key).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)
