"""One-line renderings of raft messages, batches and node states for the transcripts.

Notation: ``log=5@e2`` is a log end offset (exclusive) with the epoch of the
record before it, as a Vote or Fetch carries it; ``-`` is "none".
"""

from __future__ import annotations

from typing import Any

from raft import Batch, Envelope, LeaderChangeMessage, RaftNode
from raft.messages import (
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    Errors,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    VoteRequest,
    VoteResponse,
)


def opt(value: object) -> str:
    """A value, or ``-`` for None."""
    return "-" if value is None else str(value)


def ids(values: tuple[int, ...]) -> str:
    """Node ids joined by commas (``-`` when empty)."""
    return ",".join(str(v) for v in values) or "-"


def record(value: Any) -> str:
    """A record of a batch: data records as themselves, control records by kind."""
    if isinstance(value, LeaderChangeMessage):
        return (f"LeaderChange(leader={value.leader_id} "
                f"granting={ids(value.granting_voters)})")
    if isinstance(value, str):
        return value
    return type(value).__name__


def batch(b: Batch) -> str:
    """``[1-2 e1: a b]``: offsets, epoch and records of a batch."""
    offsets = str(b.base_offset) if b.count == 1 else f"{b.base_offset}-{b.last_offset}"
    records = b.control_records if b.is_control else b.records
    return f"[{offsets} e{b.epoch}: {' '.join(record(r) for r in records)}]"


def correlation(value: int) -> str:
    """A correlation id as ``#n``, or ``#incarnation.n`` after a restart."""
    incarnation, n = value >> 32, value & 0xFFFFFFFF
    return f"#{incarnation}.{n}" if incarnation else f"#{n}"


def _error(error: Errors) -> str:
    return "" if error is Errors.NONE else f" error={error.value}"


def message_kind(env: Envelope) -> str:
    """The name a message goes by in transcripts and in ``type=`` filters."""
    msg = env.message
    if isinstance(msg, VoteRequest):
        return "PreVote" if msg.pre_vote else "Vote"
    if isinstance(msg, VoteResponse):
        return "PreVoteResponse" if msg.pre_vote else "VoteResponse"
    return type(msg).__name__.removesuffix("Request")


def message(env: Envelope) -> str:
    """``src->dst Kind fields...``."""
    msg = env.message
    head = f"{env.src}->{env.dst} {message_kind(env)}"
    if isinstance(msg, VoteRequest):
        body = f"epoch={msg.epoch} candidate={msg.candidate_id} " \
               f"log={msg.end_offset}@e{msg.last_epoch}"
    elif isinstance(msg, VoteResponse):
        granted = "granted" if msg.vote_granted else "rejected"
        body = f"epoch={msg.epoch} leader={opt(msg.leader_id)} {granted}"
    elif isinstance(msg, BeginQuorumEpochRequest | EndQuorumEpochRequest):
        body = f"epoch={msg.epoch} leader={msg.leader_id}"
        if isinstance(msg, EndQuorumEpochRequest):
            body += f" successors={ids(msg.preferred_successors)}"
    elif isinstance(msg, BeginQuorumEpochResponse | EndQuorumEpochResponse):
        body = f"epoch={msg.epoch} leader={opt(msg.leader_id)}{_error(msg.error)}"
    elif isinstance(msg, FetchRequest):
        body = f"{correlation(msg.correlation_id)} epoch={msg.epoch} " \
               f"log={msg.fetch_offset}@e{msg.last_fetched_epoch}"
    elif isinstance(msg, FetchResponse):
        body = f"{correlation(msg.correlation_id)} epoch={msg.epoch} " \
               f"leader={opt(msg.leader_id)}{_error(msg.error)}"
        if msg.error is Errors.NONE:
            body += f" hw={opt(msg.high_watermark)}"
        if msg.diverging is not None:
            body += f" diverging={msg.diverging.offset}@e{msg.diverging.epoch}"
        if msg.snapshot_id is not None:
            body += f" snapshot={msg.snapshot_id.end_offset}@e{msg.snapshot_id.epoch}"
        if msg.batches:
            body += " " + " ".join(batch(b) for b in msg.batches)
    elif isinstance(msg, FetchSnapshotRequest):
        body = f"{correlation(msg.correlation_id)} epoch={msg.epoch} " \
               f"snapshot={msg.snapshot_id.end_offset}@e{msg.snapshot_id.epoch}"
    else:
        assert isinstance(msg, FetchSnapshotResponse)
        body = f"{correlation(msg.correlation_id)} epoch={msg.epoch} " \
               f"leader={opt(msg.leader_id)}{_error(msg.error)}"
        if msg.snapshot is not None:
            sid = msg.snapshot.snapshot_id
            body += f" snapshot={sid.end_offset}@e{sid.epoch} " \
                    f"records={' '.join(record(r) for r in msg.snapshot.records)}"
    return f"{head} {body}"


def state(node: RaftNode) -> str:
    """``2 Follower epoch=1 leader=1 voted=- log=3@e1 hw=3``, the fields a transcript tracks.

    ``log`` is start..end when a snapshot replaced the log's head; ``flushed``
    appears while appends wait for their flush.
    """
    log = node.log
    span = f"{log.start_offset}..{log.end_offset}" if log.start_offset else str(log.end_offset)
    parts = [str(node.id), node.role.value + ("" if node.is_voter else "(observer)"),
             f"epoch={node.epoch}", f"leader={opt(node.leader_id)}",
             f"voted={opt(node.voted_id)}", f"log={span}@e{log.last_epoch}"]
    if log.flushed_end != log.end_offset:
        parts.append(f"flushed={log.flushed_end}")
    parts.append(f"hw={opt(node.high_watermark)}")
    return " ".join(parts)
