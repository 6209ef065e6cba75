"""Every experiment by name."""

from __future__ import annotations

from experiments.broker_failover import BROKER_FAILOVER
from experiments.eos import EOS
from experiments.failover import FAILOVER
from experiments.model import Experiment, ExperimentError
from experiments.swarm import SWARM
from experiments.visibility import VISIBILITY

EXPERIMENTS: dict[str, Experiment] = {e.name: e for e in (FAILOVER, VISIBILITY, SWARM,
                                                             BROKER_FAILOVER, EOS)}
"""The experiments, by name."""


def get_experiment(name: str) -> Experiment:
    """The experiment called ``name``; raises ExperimentError naming the choices."""
    try:
        return EXPERIMENTS[name]
    except KeyError:
        raise ExperimentError(f"unknown experiment {name!r}; choose from "
                              f"{', '.join(EXPERIMENTS)}") from None
