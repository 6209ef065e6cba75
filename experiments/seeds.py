"""Run seeds: a stable hash of (experiment, master seed, scenario, index).

SHA-256 (:func:`sim.seeds.derive_seed`), never Python's ``hash()`` (which
changes with PYTHONHASHSEED), so a run's seed is the same in every process, on
every worker of a cluster.
"""

from __future__ import annotations

from sim.seeds import SEED_BITS, derive_seed

__all__ = ["SEED_BITS", "run_seed"]


def run_seed(experiment: str, master_seed: int, scenario: str, index: int) -> int:
    """The seed of run ``index`` of ``scenario`` in a sweep with ``master_seed``."""
    return derive_seed("kraftsim-experiment", experiment, master_seed, scenario, index)
