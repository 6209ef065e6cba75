"""Test your ideas against kraftsim with Hypothesis and pytest (``kraftsim[testing]``).

- :mod:`sim.testing.strategies`: :func:`cluster_configs`, :func:`operations`,
  :func:`fault_schedules`, :func:`topic_names`.
- :class:`ClusterMachine`: a ``RuleBasedStateMachine`` of a whole cluster with
  operation and fault rules and every invariant checked after each step
  (acknowledged = durable included); subclass it to add rules and invariants.
  :class:`RaftMachine` does the same for a raft quorum alone.
- :func:`find_failure`: run a machine, get the shrunk failing steps back;
  :data:`SEARCH_PHASES` are the Hypothesis phases it runs (for searches of your own).
- :mod:`sim.testing.fixtures`: the ``kraft_cluster`` pytest fixture (a pytest
  plugin, loaded automatically).

The names are imported on first use, so ``import sim.testing`` needs neither
Hypothesis nor pytest until a name that needs one is used; without
Hypothesis that use raises ImportError naming the extra to install.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sim.testing.machine import SEARCH_PHASES, ClusterMachine, Failure, find_failure
    from sim.testing.raft_machine import RaftMachine
    from sim.testing.strategies import cluster_configs, fault_schedules, operations, topic_names

_WHERE = {
    "SEARCH_PHASES": "sim.testing.machine",
    "ClusterMachine": "sim.testing.machine",
    "Failure": "sim.testing.machine",
    "find_failure": "sim.testing.machine",
    "RaftMachine": "sim.testing.raft_machine",
    "cluster_configs": "sim.testing.strategies",
    "fault_schedules": "sim.testing.strategies",
    "operations": "sim.testing.strategies",
    "topic_names": "sim.testing.strategies",
}

__all__ = [
    "SEARCH_PHASES",
    "ClusterMachine",
    "Failure",
    "RaftMachine",
    "cluster_configs",
    "fault_schedules",
    "find_failure",
    "operations",
    "topic_names",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use (see the module docs)."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'sim.testing' has no attribute {name!r}")
    try:
        return getattr(importlib.import_module(module), name)
    except ModuleNotFoundError as exc:
        if exc.name != "hypothesis":
            raise
        raise ImportError("sim.testing needs Hypothesis: pip install 'kraftsim[testing]'") \
            from exc
