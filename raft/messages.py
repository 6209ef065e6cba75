"""The KRaft RPCs exchanged between nodes, as frozen Structs.

Names and fields follow Kafka's Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch
and FetchSnapshot APIs, reduced to what the protocol needs. A response carries
the sender's epoch and known leader so that a stale node learns of a newer
epoch from any reply. ``correlation_id`` ties a response to the request that
is still outstanding; a reply to anything else is ignored.
"""

from __future__ import annotations

from enum import StrEnum

import msgspec

from raft.batch import Batch
from raft.snapshot import Snapshot, SnapshotId


class Errors(StrEnum):
    """Kafka error codes used by the raft RPCs."""

    NONE = "NONE"
    FENCED_LEADER_EPOCH = "FENCED_LEADER_EPOCH"
    NOT_LEADER_OR_FOLLOWER = "NOT_LEADER_OR_FOLLOWER"
    UNKNOWN_LEADER_EPOCH = "UNKNOWN_LEADER_EPOCH"
    SNAPSHOT_NOT_FOUND = "SNAPSHOT_NOT_FOUND"
    INCONSISTENT_VOTER_SET = "INCONSISTENT_VOTER_SET"
    INVALID_REQUEST = "INVALID_REQUEST"


class OffsetAndEpoch(msgspec.Struct, frozen=True, gc=False):
    """An (exclusive end) offset together with the epoch of the record before it."""

    offset: int
    epoch: int


class VoteRequest(msgspec.Struct, frozen=True, gc=False):
    """A candidate asks for a vote; ``pre_vote`` asks without bumping anyone's epoch.

    ``epoch`` is the sender's own: a candidate's bumped one, or (KIP-996) the epoch a
    prospective node is still in.
    """

    epoch: int
    candidate_id: int
    last_epoch: int
    end_offset: int
    pre_vote: bool = False


class VoteResponse(msgspec.Struct, frozen=True, gc=False):
    """A vote, granted or not, with the voter's epoch and known leader."""

    epoch: int
    leader_id: int | None
    vote_granted: bool
    pre_vote: bool = False


class BeginQuorumEpochRequest(msgspec.Struct, frozen=True, gc=False):
    """A new leader announces itself to the voters."""

    epoch: int
    leader_id: int


class BeginQuorumEpochResponse(msgspec.Struct, frozen=True, gc=False):
    """Acknowledges a BeginQuorumEpoch."""

    epoch: int
    leader_id: int | None
    error: Errors = Errors.NONE


class EndQuorumEpochRequest(msgspec.Struct, frozen=True, gc=False):
    """A resigning leader tells the voters, most up-to-date successors first."""

    epoch: int
    leader_id: int
    preferred_successors: tuple[int, ...]


class EndQuorumEpochResponse(msgspec.Struct, frozen=True, gc=False):
    """Acknowledges an EndQuorumEpoch."""

    epoch: int
    leader_id: int | None
    error: Errors = Errors.NONE


class FetchRequest(msgspec.Struct, frozen=True, gc=False):
    """A follower or observer fetches from ``fetch_offset`` (its log end).

    ``last_fetched_epoch`` is the epoch of its last batch; the leader checks the
    pair against its own log and answers VALID, DIVERGING or SNAPSHOT.
    """

    correlation_id: int
    epoch: int
    replica_id: int
    fetch_offset: int
    last_fetched_epoch: int
    max_wait_ms: int


class FetchResponse(msgspec.Struct, frozen=True, gc=False):
    """Batches from ``fetch_offset`` on, or where to truncate to, or a snapshot to fetch."""

    correlation_id: int
    epoch: int
    leader_id: int | None
    error: Errors
    fetch_offset: int
    high_watermark: int | None = None
    batches: tuple[Batch, ...] = ()
    diverging: OffsetAndEpoch | None = None
    snapshot_id: SnapshotId | None = None


class FetchSnapshotRequest(msgspec.Struct, frozen=True, gc=False):
    """A follower behind the leader's log start asks for its latest snapshot."""

    correlation_id: int
    epoch: int
    replica_id: int
    snapshot_id: SnapshotId


class FetchSnapshotResponse(msgspec.Struct, frozen=True, gc=False):
    """The whole snapshot (the simulation sends it in one piece)."""

    correlation_id: int
    epoch: int
    leader_id: int | None
    error: Errors
    snapshot: Snapshot | None = None


Message = (
    VoteRequest | VoteResponse | BeginQuorumEpochRequest | BeginQuorumEpochResponse
    | EndQuorumEpochRequest | EndQuorumEpochResponse | FetchRequest | FetchResponse
    | FetchSnapshotRequest | FetchSnapshotResponse
)
"""Any raft RPC."""


class Envelope(msgspec.Struct, frozen=True, gc=False):
    """A message on its way from ``src`` to ``dst``."""

    src: int
    dst: int
    message: Message
