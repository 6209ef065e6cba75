"""What a node keeps on its (simulated) disk across crashes.

The log (with its flush point and snapshot) and the election state, Kafka's
``quorum-state`` file: the current epoch, the vote cast in it and the leader
known in it. The election state is written synchronously on every change, as
Kafka does; log appends survive a crash only once flushed. The simulator owns
one ``RaftStorage`` per node and hands it to every incarnation of that node.
"""

from __future__ import annotations

import msgspec

from raft.log import RaftLog


class ElectionState(msgspec.Struct, frozen=True, gc=False):
    """Kafka's quorum-state: epoch, the vote cast in it, the leader known in it."""

    epoch: int = 0
    voted_id: int | None = None
    leader_id: int | None = None


class RaftStorage:
    """A node's durable state: the log and the election state."""

    def __init__(self) -> None:
        self.log = RaftLog()
        self.election = ElectionState()

    def write_election(self, state: ElectionState) -> None:
        """Persist the election state (synchronous, like Kafka's quorum-state file)."""
        self.election = state

    def crash(self) -> None:
        """A hard crash: unflushed appends are lost; the election state survives."""
        self.log.lose_unflushed()

    def wipe(self) -> None:
        """Kill-and-wipe: the disk comes back empty."""
        self.log = RaftLog()
        self.election = ElectionState()
