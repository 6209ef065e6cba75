"""The invariant catalogue, checked online after every event.

The same checkers serve the simulator, the Hypothesis stateful tests and the
experiments. Each checker's docstring names its source.
"""

from sim.invariants.history import CommittedLog
from sim.invariants.raft import RAFT_INVARIANTS, RaftInvariants

__all__ = ["RAFT_INVARIANTS", "CommittedLog", "RaftInvariants"]
# The transaction invariants import the controller and broker layers; import them from
# sim.invariants.transactions directly.
