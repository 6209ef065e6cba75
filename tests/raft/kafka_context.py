"""One RaftNode driven alone, message by message, in the manner of Kafka's RaftClientTestContext.

A test builds a node from what its disk holds (election state and log), hands it
requests and responses as if from other nodes, moves the clock, and looks at what
the node sent. Nothing else runs: the other nodes exist only as the messages a
test writes for them.

Defaults: no election jitter (so election timeouts are exact), and no pre-vote
unless asked for, because the Kafka tests these cases come from predate KIP-996
(their candidates bump the epoch at once).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

import msgspec

from raft import (
    Batch,
    ElectionState,
    Envelope,
    LeaderAndEpoch,
    RaftConfig,
    RaftNode,
    RaftStorage,
    Role,
    Snapshot,
)
from raft.messages import (
    BeginQuorumEpochRequest,
    Errors,
    FetchRequest,
    FetchResponse,
    Message,
    VoteRequest,
    VoteResponse,
)

M = TypeVar("M")


class RecordingListener:
    """A state machine that keeps everything its node told it."""

    def __init__(self) -> None:
        self.committed: list[Batch] = []
        self.high_watermarks: list[int] = []
        self.snapshots: list[Snapshot] = []
        self.leaders: list[LeaderAndEpoch] = []

    def handle_commit(self, batches: Sequence[Batch], high_watermark: int) -> None:
        self.committed.extend(batches)
        self.high_watermarks.append(high_watermark)

    def handle_load_snapshot(self, snapshot: Snapshot) -> None:
        self.snapshots.append(snapshot)

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None:
        self.leaders.append(leader)

    @property
    def last_commit_offset(self) -> int | None:
        """Offset of the last record delivered (control records included), if any."""
        return self.committed[-1].last_offset if self.committed else None

    @property
    def data_batches(self) -> list[tuple[Any, ...]]:
        """The records of each delivered data batch, in order."""
        return [b.records for b in self.committed if not b.is_control]

    @property
    def current_leader(self) -> LeaderAndEpoch | None:
        """The last leader the node announced, if any."""
        return self.leaders[-1] if self.leaders else None


class Context:
    """A node, its disk, a clock, and what it sent since the last look."""

    def __init__(
        self,
        local_id: int,
        voters: Iterable[int],
        *,
        epoch: int = 0,
        voted: int | None = None,
        leader: int | None = None,
        log: Iterable[tuple[int, Sequence[Any]]] = (),
        snapshot: Snapshot | None = None,
        seed: int = 0,
        **config: Any,
    ) -> None:
        settings: dict[str, Any] = {"election_jitter_ms": 0, "pre_vote": False}
        settings.update(config)
        self.config = msgspec.structs.replace(RaftConfig(), **settings).validate()
        self.storage = RaftStorage()
        if snapshot is not None:  # on disk before the log, which then starts at its end
            self.storage.log.install_snapshot(snapshot)
        for batch_epoch, records in log:
            self.storage.log.append(
                Batch(self.storage.log.end_offset, batch_epoch, tuple(records)), flushed=True)
        self.storage.write_election(ElectionState(epoch, voted, leader))
        self.now = 0
        self.local_id = local_id
        self.node = RaftNode(local_id, voters, self.storage, random.Random(seed), self.now,
                             config=self.config)
        self.listener = RecordingListener()
        self.node.register_listener(self.listener)
        self._sent: list[Envelope] = []
        self._correlation = 1000

    # ------------------------------------------------------------------ driving
    @property
    def log(self) -> Any:
        """The node's log."""
        return self.storage.log

    def deliver(self, src: int, message: Message) -> None:
        """Hand the node a message from ``src`` at the current time."""
        self.node.handle(Envelope(src, self.local_id, message), self.now)
        self._collect()

    def poll(self) -> None:
        """Run the timers due now."""
        self.node.poll(self.now)
        self._collect()

    def sleep(self, ms: int) -> None:
        """Move the clock by ``ms``, firing every timer due on the way, in time order."""
        target = self.now + ms
        while True:
            deadline = self.node.next_deadline()
            if deadline is None or deadline > target:
                break
            self.now = max(self.now, deadline)
            self.poll()
        self.now = target

    def _collect(self) -> None:
        self._sent.extend(self.node.drain_outbox())

    def drain(self) -> list[Envelope]:
        """Everything sent since the last drain."""
        self._collect()
        out, self._sent = self._sent, []
        return out

    def sent(self, kind: type[M]) -> list[tuple[int, M]]:
        """(destination, message) of every message of ``kind`` sent since the last drain
        (the others are dropped)."""
        return [(e.dst, e.message) for e in self.drain() if isinstance(e.message, kind)]

    def one_sent(self, kind: type[M]) -> tuple[int, M]:
        """The only message of ``kind`` sent since the last drain."""
        found = self.sent(kind)
        assert len(found) == 1, found
        return found[0]

    # ------------------------------------------------------------------ messages
    def next_correlation(self) -> int:
        """A fresh correlation id for a request written by the test."""
        self._correlation += 1
        return self._correlation

    def fetch_request(self, replica: int, fetch_offset: int, last_fetched_epoch: int,
                      *, epoch: int | None = None, max_wait_ms: int = 0) -> FetchRequest:
        """A fetch from ``replica`` in the node's epoch unless told otherwise."""
        return FetchRequest(self.next_correlation(), self.node.epoch if epoch is None else epoch,
                            replica, fetch_offset, last_fetched_epoch, max_wait_ms)

    def vote_request(self, candidate: int, epoch: int, last_epoch: int,
                     end_offset: int, *, pre_vote: bool = False) -> VoteRequest:
        """A candidate's (or prospective node's) vote request."""
        return VoteRequest(epoch, candidate, last_epoch, end_offset, pre_vote)

    # ------------------------------------------------------------------ elections
    def become_leader(self) -> int:
        """Time the node out and grant it every vote; returns its new epoch.

        The node must be a voter waiting for an election (its election timeout
        is moved to). With pre-vote on, every pre-vote is granted first.
        """
        node = self.node
        deadline = node.next_deadline()
        assert deadline is not None
        self.sleep(max(0, deadline - self.now))
        for voter in node.voters:
            if voter != self.local_id and node.role is Role.PROSPECTIVE:
                self.deliver(voter, VoteResponse(node.epoch, None, True, True))
        assert node.role in (Role.CANDIDATE, Role.LEADER), node.role
        for voter in node.voters:
            if voter != self.local_id and node.role is Role.CANDIDATE:
                self.deliver(voter, VoteResponse(node.epoch, None, True))
        assert node.role is Role.LEADER, node.role
        self.drain()
        return node.epoch

    def begin_epoch(self, leader: int, epoch: int) -> BeginQuorumEpochRequest:
        """A leader's announcement."""
        return BeginQuorumEpochRequest(epoch, leader)

    def fetch_response(self, request: FetchRequest, leader: int, *,
                       batches: Sequence[Batch] = (), high_watermark: int | None = None,
                       epoch: int | None = None, error: Errors = Errors.NONE,
                       **fields: Any) -> FetchResponse:
        """The leader's answer to ``request``."""
        return FetchResponse(request.correlation_id, request.epoch if epoch is None else epoch,
                             leader, error, request.fetch_offset, high_watermark,
                             tuple(batches), **fields)
