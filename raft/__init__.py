"""KRaft, Kafka's pull-based Raft, as a pure and deterministic state machine.

No wall clock, no global random, no I/O: time and randomness are handed in, and
outputs are messages, storage writes and listener calls. See :class:`RaftNode`.
"""

from raft.batch import Batch, ControlRecord, LeaderChangeMessage
from raft.config import ConfigError, RaftConfig
from raft.leader_state import LeaderState
from raft.listener import LeaderAndEpoch, RaftListener
from raft.log import RaftLog, RaftLogError, Validation
from raft.messages import Envelope, Errors, Message, OffsetAndEpoch
from raft.mutations import Mutation
from raft.node import NotLeaderError, RaftNode, RaftProtocolError, Role
from raft.quorum_info import QuorumDescription, ReplicaDescription, describe_quorum
from raft.snapshot import Snapshot, SnapshotId
from raft.storage import ElectionState, RaftStorage

__all__ = [
    "Batch",
    "ConfigError",
    "ControlRecord",
    "ElectionState",
    "Envelope",
    "Errors",
    "LeaderAndEpoch",
    "LeaderChangeMessage",
    "LeaderState",
    "Message",
    "Mutation",
    "NotLeaderError",
    "OffsetAndEpoch",
    "QuorumDescription",
    "RaftConfig",
    "RaftListener",
    "RaftLog",
    "RaftLogError",
    "RaftNode",
    "RaftProtocolError",
    "RaftStorage",
    "ReplicaDescription",
    "Role",
    "Snapshot",
    "SnapshotId",
    "Validation",
    "describe_quorum",
]
