"""One KRaft node as a pure state machine.

Inputs are messages (:meth:`RaftNode.handle`), the passing of time
(:meth:`RaftNode.poll` at or after :meth:`RaftNode.next_deadline`) and the
state machine's own requests (:meth:`RaftNode.append`,
:meth:`RaftNode.create_snapshot`, :meth:`RaftNode.resign`). Outputs are the
messages left in :attr:`RaftNode.outbox`, writes to the injected
:class:`~raft.storage.RaftStorage`, and calls on the registered listeners.

Listeners are called only at the end of a step (:meth:`RaftNode.handle`,
:meth:`RaftNode.poll`, :meth:`RaftNode.resign`) and when one registers; a
state machine's requests (:meth:`RaftNode.append`,
:meth:`RaftNode.create_snapshot`) never call back, so a listener is never
re-entered in the middle of its own write (etcd's ``Ready`` discipline: what a
request causes is queued, here as a due timer, and happens at the next step).
A step started from inside a listener callback is refused.
Time is an integer of simulated milliseconds passed in; randomness comes from
the ``random.Random`` handed in. Nothing else is consulted, so a node's
behaviour is a function of its inputs.

Roles follow Kafka's QuorumState: Unattached, Voted, Prospective (KIP-996
pre-vote), Candidate, Follower, Leader, Resigned. Observers fetch and follow,
never stand, and never count towards the high watermark or an election. An
observer that knows no leader, or whose leader went quiet (a request to it timed
out, or the fetch timeout ran out: it stays that leader's follower, as in Kafka),
fetches from a voter drawn at random until an answer names the leader. Asked
for a vote, an observer answers as a voter would (Kafka's observer may be a
voter of a voter set it has not replicated yet); kraftsim's candidates ask
only voters, so only a test asks one.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from enum import StrEnum
from typing import Any

from raft.batch import Batch, LeaderChangeMessage
from raft.config import RaftConfig
from raft.leader_state import LeaderState
from raft.listener import LeaderAndEpoch, ListenerContext, RaftListener
from raft.log import Validation
from raft.messages import (
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    Envelope,
    Errors,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    Message,
    VoteRequest,
    VoteResponse,
)
from raft.mutations import Mutation
from raft.quorum_info import QuorumDescription, describe_quorum
from raft.snapshot import Snapshot, SnapshotId
from raft.storage import ElectionState, RaftStorage


class Role(StrEnum):
    """The roles of Kafka's QuorumState (plus KIP-996's Prospective)."""

    UNATTACHED = "Unattached"
    VOTED = "Voted"
    PROSPECTIVE = "Prospective"
    CANDIDATE = "Candidate"
    FOLLOWER = "Follower"
    LEADER = "Leader"
    RESIGNED = "Resigned"


class NotLeaderError(Exception):
    """An append or snapshot request reached a node that is not the leader of that epoch."""


class RaftProtocolError(Exception):
    """Something the protocol guarantees cannot happen did (a bug, never bad input)."""


_NO_WAIT = 1 << 62

_ROLE_NAMES = {role: role.value for role in Role}

# The members read on every fetch, as module constants (an Enum member read through its
# class is a metaclass attribute lookup, several times a plain global's cost).
_LEADER, _FOLLOWER = Role.LEADER, Role.FOLLOWER
_NONE = Errors.NONE
_SNAPSHOT, _DIVERGING = Validation.SNAPSHOT, Validation.DIVERGING

_AWAITING_ELECTION = (Role.UNATTACHED, Role.VOTED, Role.PROSPECTIVE, Role.CANDIDATE)
"""The roles of a voter that knows no leader and waits for its election timeout."""


def _nested_step(node: RaftNode) -> None:
    """Refuse a step started inside another step."""
    raise RuntimeError(f"node {node.id}: a step was started inside another step "
                       f"(from a listener callback?)")


class _Step:
    """``with node._step():`` (a class, not a generator: it runs at every event)."""

    __slots__ = ("node",)

    def __init__(self, node: RaftNode) -> None:
        self.node = node

    def __enter__(self) -> None:
        node = self.node
        if node._stepping:
            _nested_step(node)
        node._stepping = True

    def __exit__(self, *exc: object) -> None:
        self.node._stepping = False


class RaftNode:
    """A voter or observer of one KRaft quorum."""

    def __init__(
        self,
        node_id: int,
        voters: Iterable[int],
        storage: RaftStorage,
        rng: random.Random,
        now: int,
        *,
        config: RaftConfig | None = None,
        incarnation: int = 0,
        mutations: frozenset[Mutation] = frozenset(),
    ) -> None:
        self.id = node_id
        self.voters = tuple(sorted(set(voters)))
        if not self.voters:
            raise ValueError("a quorum needs at least one voter")
        self.is_voter = node_id in self.voters
        self.config = (config or RaftConfig()).validate()
        self.storage = storage
        self.log = storage.log
        self.rng = rng
        self.incarnation = incarnation
        self.mutations = mutations
        self.outbox: list[Envelope] = []
        self.high_watermark: int | None = None
        self.leader_state: LeaderState | None = None
        self._listeners: list[ListenerContext] = []
        self._polling_listeners = False
        self._listeners_settled: tuple[object, ...] = ()
        self._listener_read: tuple[tuple[int, ...], tuple[Batch, ...]] | None = None
        """The committed range the listeners read last in this poll (see _poll_listener)."""
        self._stepping = False
        self._timers: dict[str, int] = {}
        self._next_correlation = 0
        self._inflight: tuple[int, int] | None = None  # (correlation id, destination)
        self._parked: list[tuple[int, Envelope]] = []  # (deadline, fetch request)
        self._hw_sent: dict[int, int | None] = {}
        self._votes_granted: set[int] = set()
        self._votes_rejected: set[int] = set()
        self._backing_off = False
        self._election_deadline: int | None = None  # when the running election timeout ends
        self._fetched_from_leader_at: int | None = None
        self._resigned_leader: tuple[int, int] | None = None  # (epoch, leader) that resigned
        self._refused: list[Envelope] = []  # parked fetches to refuse once the step ends
        self._vote_pending: set[int] = set()  # voters whose vote this candidate still awaits
        self._end_epoch_pending: set[int] = set()  # voters yet to acknowledge the resignation
        self._end_epoch_successors: tuple[int, ...] = ()
        self._fetching_snapshot: SnapshotId | None = None
        """The leader's snapshot this follower is fetching (Kafka's FollowerState.fetchingSnapshot):
        while set, the follower asks for it (FetchSnapshot) instead of fetching the log."""
        election = storage.election
        self.epoch = election.epoch
        self.voted_id = election.voted_id
        self.leader_id: int | None = None
        self.role = Role.UNATTACHED
        if election.leader_id == node_id:
            self._become_resigned(now, ())
        elif election.leader_id is not None:
            self._become_follower(election.epoch, election.leader_id, now)
        elif election.voted_id == node_id and self.is_voter:
            self._resume_candidacy(now)
        elif election.voted_id is not None and self.is_voter:
            self.role = Role.VOTED
            self._set_election_deadline(now + self._election_timeout())
        else:
            self._become_unattached(election.epoch, now, keep_vote=True)
        if self.voters == (node_id,) and self.role is not Role.CANDIDATE:
            # The only voter stands at once and wins (Kafka's KafkaRaftClient.initialize):
            # in a new epoch, even if it led the last one.
            self._become_candidate(now)

    # ------------------------------------------------------------------ queries
    @property
    def leader_and_epoch(self) -> LeaderAndEpoch:
        """The leader this node knows of in its epoch."""
        return LeaderAndEpoch(self.leader_id, self.epoch)

    @property
    def epoch_start_offset(self) -> int | None:
        """Where this leader's epoch starts (its LeaderChange record); None if not leader."""
        return self.leader_state.epoch_start_offset if self.leader_state else None

    def next_deadline(self) -> int | None:
        """The earliest simulated time at which :meth:`poll` has work, if any."""
        timers = self._timers
        deadline = min(timers.values()) if timers else None
        if self._parked:
            parked = min([d for d, _ in self._parked])
            if deadline is None or parked < deadline:
                return parked
        return deadline

    def drain_outbox(self) -> list[Envelope]:
        """Take the messages produced since the last call."""
        out, self.outbox = self.outbox, []
        return out

    def register_listener(self, listener: RaftListener) -> None:
        """Add a state machine; it is brought up to date as the high watermark allows."""
        self._listeners.append(ListenerContext(listener))
        self._poll_listeners()

    def describe(self) -> dict[str, Any]:
        """A stable summary of the node's state (for traces and status)."""
        return {
            "role": _ROLE_NAMES[self.role],
            "epoch": self.epoch,
            "leader": self.leader_id,
            "log_start": self.log.start_offset,
            "log_end": self.log.end_offset,
            "hw": self.high_watermark,
        }

    def describe_quorum(self, now: int) -> QuorumDescription:
        """Kafka's DescribeQuorum answer at ``now`` (see :mod:`raft.quorum_info`): the
        leader's view of every replica, or NOT_LEADER_OR_FOLLOWER from any other node."""
        return describe_quorum(self.leader_state if self.role is _LEADER else None, now)

    # ------------------------------------------------------------------ inputs
    def handle(self, envelope: Envelope, now: int) -> None:
        """Process one message addressed to this node."""
        if self._stepping:
            _nested_step(self)
        self._stepping = True
        try:
            msg = envelope.message
            if isinstance(msg, FetchRequest):  # the two messages of a steady quorum first
                self._on_fetch_request(envelope, msg, now)
            elif isinstance(msg, FetchResponse):
                self._on_fetch_response(envelope.src, msg, now)
            else:
                self._handle(envelope, now)
            if self._refused:
                self._refuse_parked()
            self._poll_listeners()
        finally:
            self._stepping = False

    def _handle(self, envelope: Envelope, now: int) -> None:
        msg = envelope.message
        src = envelope.src
        if isinstance(msg, FetchRequest):
            self._on_fetch_request(envelope, msg, now)
        elif isinstance(msg, FetchResponse):
            self._on_fetch_response(src, msg, now)
        elif isinstance(msg, VoteRequest):
            self._on_vote_request(src, msg, now)
        elif isinstance(msg, VoteResponse):
            self._on_vote_response(src, msg, now)
        elif isinstance(msg, BeginQuorumEpochRequest):
            self._on_begin_quorum_epoch(src, msg, now)
        elif isinstance(msg, BeginQuorumEpochResponse):
            self._on_begin_quorum_epoch_response(src, msg, now)
        elif isinstance(msg, EndQuorumEpochRequest):
            self._on_end_quorum_epoch(src, msg, now)
        elif isinstance(msg, EndQuorumEpochResponse):
            self._on_end_quorum_epoch_response(src, msg, now)
        elif isinstance(msg, FetchSnapshotRequest):
            self._on_fetch_snapshot_request(src, msg, now)
        elif isinstance(msg, FetchSnapshotResponse):
            self._on_fetch_snapshot_response(src, msg, now)

    def poll(self, now: int) -> None:
        """Run every timer due at ``now``."""
        if self._stepping:
            _nested_step(self)
        self._stepping = True
        try:
            self._run_timers(now)
            if self._refused:
                self._refuse_parked()
            self._poll_listeners()
        finally:
            self._stepping = False

    def _run_timers(self, now: int) -> None:
        timers = self._timers
        while True:
            due = [(t, name) for name, t in timers.items() if t <= now]
            if not due:
                break
            # The earliest, ties by name: a leader's check_quorum before its flush before its
            # heartbeat, as Kafka's pollLeader (a leader that resigns announces nothing).
            _, name = min(due)
            del self._timers[name]
            self._fire(name, now)
        if self._parked and min(d for d, _ in self._parked) <= now:
            expired = [e for d, e in self._parked if d <= now]
            self._parked = [(d, e) for d, e in self._parked if d > now]
            for env in expired:
                self._answer_fetch(env, now, None)

    def append(self, records: Iterable[Any], epoch: int, now: int) -> int:
        """Append one batch as leader of ``epoch``; returns the offset of its last record.

        Raises NotLeaderError when this node is not the leader of ``epoch``, and
        ValueError for an epoch this node has not reached (Kafka's IllegalArgument:
        a state machine only ever appends in an epoch its node told it of).
        The batch is durable (and fetchable) after ``append_linger_ms``: at the
        first step at or after that time (with 0, the next step at ``now``), never
        during this call, which calls no listener.
        """
        if epoch > self.epoch:
            raise ValueError(f"node {self.id} cannot append in epoch {epoch}: it is in "
                             f"epoch {self.epoch}")
        if self.role is not _LEADER or epoch != self.epoch:
            raise NotLeaderError(
                f"node {self.id} is not the leader of epoch {epoch} "
                f"(it is {self.role.value} in epoch {self.epoch})"
            )
        recs = tuple(records)
        if not recs:
            raise ValueError("cannot append an empty batch")
        batch = Batch(self.log.end_offset, epoch, recs, append_time_ms=now)
        self.log.append(batch, flushed=False)
        if "flush" not in self._timers:
            self._set_timer("flush", now + self.config.append_linger_ms)
        return batch.last_offset

    def create_snapshot(self, end_offset: int, records: Iterable[Any], now: int) -> Snapshot:
        """Keep a snapshot of the state up to ``end_offset`` (exclusive) and drop the log before.

        The snapshot's epoch is that of its last record, read from the log.
        ``end_offset`` must be committed (at most the high watermark) and past the log
        start, else ValueError (where Kafka's createSnapshot hands back no writer, at or
        below the start, kraftsim refuses); and a batch boundary, else RaftLogError
        (Kafka may cut inside a batch; kraftsim's log drops whole batches).
        """
        hw = self.high_watermark
        if hw is None or end_offset > hw:
            raise ValueError(f"snapshot end {end_offset} is above the high watermark {hw}")
        if end_offset <= self.log.start_offset:
            raise ValueError(f"snapshot end {end_offset} is not past the log start")
        epoch = self.log.epoch_at(end_offset - 1)
        snapshot = Snapshot(SnapshotId(end_offset, epoch), tuple(records),
                            last_contained_log_time_ms=now)
        self.log.set_snapshot(snapshot)
        return snapshot

    def resign(self, now: int, epoch: int | None = None) -> None:
        """Give up leadership gracefully (EndQuorumEpoch to the voters); no-op otherwise.

        With ``epoch``, Kafka's ``resign(epoch)``: a negative epoch or one this node has not
        reached is the caller's error (ValueError); an older one is a no-op (the caller has
        not yet heard that leadership moved on); this node's own epoch must be one it leads
        or has just resigned (a no-op then), else ValueError (it is not the leader).
        """
        with self._step():
            if epoch is not None:
                if epoch < 0 or epoch > self.epoch:
                    raise ValueError(f"node {self.id} cannot resign from epoch {epoch}: it is "
                                     f"in epoch {self.epoch}")
                if epoch < self.epoch:
                    return
                if self.role not in (_LEADER, Role.RESIGNED):
                    raise ValueError(f"node {self.id} cannot resign from epoch {epoch}: it is "
                                     f"not its leader ({self.role.value})")
            if self.role is _LEADER and self.leader_state is not None:
                self._flush(now)
                self._become_resigned(now, self.leader_state.preferred_successors())
            if self._refused:
                self._refuse_parked()
            self._poll_listeners()

    def flush_all(self, now: int) -> None:
        """Flush the log now (a graceful shutdown does this before stopping)."""
        self._flush(now)

    def _step(self) -> _Step:
        """One input step; steps do not nest (a listener cannot drive its own node)."""
        return _Step(self)

    # ------------------------------------------------------------------ timers
    def _set_timer(self, name: str, deadline: int) -> None:
        self._timers[name] = deadline

    def _set_election_deadline(self, deadline: int) -> None:
        """Start an election timeout (a candidate's backoff is not one: it sets the timer only)."""
        self._election_deadline = deadline
        self._set_timer("election", deadline)

    def _election_timeout(self) -> int:
        jitter = self.config.election_jitter_ms
        return self.config.election_timeout_ms + (self.rng.randrange(jitter) if jitter else 0)

    def _election_backoff(self) -> int:
        cap = self.config.election_backoff_max_ms
        return self.config.retry_backoff_ms + (self.rng.randrange(cap) if cap else 0)

    def _fire(self, name: str, now: int) -> None:
        if name == "election":
            self._on_election_timer(now)
        elif name == "fetch_timeout":
            self._on_fetch_timeout(now)
        elif name == "request":
            self._on_request_timer(now)
        elif name == "flush":
            self._flush(now)
        elif name == "check_quorum":
            self._on_check_quorum(now)
        elif name == "heartbeat":
            self._send_begin_quorum_epoch(now)
        elif name == "end_epoch":
            self._send_end_quorum_epoch(now)
        elif name == "vote_retry":
            self._resend_vote_requests(now)

    def _on_election_timer(self, now: int) -> None:
        if not self.is_voter or self.role in (_LEADER, _FOLLOWER):
            return
        if self.role is Role.PROSPECTIVE:
            self._prospective_failed(now)
            return
        if self.role is Role.CANDIDATE and not self._backing_off:
            if self.config.pre_vote and len(self.voters) > 1:
                # Kafka 4's pollCandidate (KIP-996): an election that timed out ungranted
                # goes straight back to a pre-vote; only a rejected one backs off first.
                self._become_prospective(now)
                return
            self._backing_off = True
            self._timers.pop("vote_retry", None)  # no retries while backing off
            self._set_timer("election", now + self._election_backoff())
            return
        self._start_election(now)

    def _on_fetch_timeout(self, now: int) -> None:
        if self.role is not _FOLLOWER:
            return
        if self.is_voter:
            self._start_election(now)
        elif self._inflight is None:
            # Kafka's pollFollowerAsObserver: an observer never stands, nor drops its leader,
            # when the leader goes quiet; it stays its follower (same epoch, same leader) and
            # asks any voter instead, until an answer names a newer epoch or the leader answers
            # again. With a fetch in flight it waits for that one to end first.
            self._send_any_voter_fetch(now)

    def _on_request_timer(self, now: int) -> None:
        timed_out = self._inflight  # a request that went unanswered; None: a backoff ended
        self._inflight = None
        if self.role is _FOLLOWER:
            if not self.is_voter and (self._fetch_timeout_expired() or (
                    timed_out is not None and timed_out[1] == self.leader_id)):
                # Kafka's pollFollowerAsObserver: a request to the leader that timed out sends
                # the next fetch to any voter (to learn whether leadership moved); the one after
                # that goes back to the leader.
                self._send_any_voter_fetch(now)
            else:
                self._send_fetch(now)
        elif self.role in (Role.UNATTACHED, Role.VOTED) and not self.is_voter:
            self._send_any_voter_fetch(now)

    def _fetch_timeout_expired(self) -> bool:
        """A follower's fetch timeout has run out (its timer fired and no answer from the
        leader re-armed it since): Kafka's FollowerState.hasFetchTimeoutExpired."""
        return "fetch_timeout" not in self._timers

    def _on_check_quorum(self, now: int) -> None:
        state = self.leader_state
        if self.role is not _LEADER or state is None:
            return
        if state.check_quorum_reached():
            self._set_timer("check_quorum", now + self.config.fetch_timeout_ms * 3 // 2)
        else:
            self._become_resigned(now, state.preferred_successors())

    # ------------------------------------------------------------------ transitions
    def _persist(self) -> None:
        self.storage.write_election(ElectionState(self.epoch, self.voted_id, self.leader_id))

    def _leave_role(self) -> None:
        self._timers.clear()
        self._inflight = None
        self._backing_off = False
        self._votes_granted = set()
        self._votes_rejected = set()
        self._vote_pending = set()
        self._end_epoch_pending = set()
        self._fetching_snapshot = None
        if self.leader_state is not None:
            # Appends still lingering were in Kafka's accumulator, which a leader
            # drops when it steps down: they were never in the log.
            self.log.lose_unflushed()
            # Refused at the end of the step, so that the answer carries the epoch and
            # leader this node moved to (Kafka completes its fetch purgatory after the
            # transition): the follower goes straight to the new leader.
            self._refused.extend(env for _, env in self._parked)
            self._parked = []
            self.leader_state = None
            self._hw_sent = {}

    def _become_unattached(self, epoch: int, now: int, *, keep_vote: bool = False) -> None:
        # Kafka's QuorumState.transitionToUnattached: a voter still waiting for an
        # election (unattached, voted, prospective, candidate) keeps the time left on
        # its election timeout when it learns of a higher epoch; only a node leaving a
        # leader behind (follower, leader, resigned) draws a new one. Restarting it
        # instead would let a stale voter that bumps the epoch again and again
        # (without pre-vote) keep every other voter from ever standing.
        remaining = self._election_deadline \
            if epoch > self.epoch and self.role in _AWAITING_ELECTION else None
        if epoch != self.epoch or not keep_vote:
            self.voted_id = None
        self._leave_role()
        self.epoch = epoch
        self.leader_id = None
        self.role = Role.VOTED if self.voted_id is not None else Role.UNATTACHED
        self._persist()
        if self.is_voter:
            self._set_election_deadline(
                max(remaining, now) if remaining is not None
                else now + self._election_timeout())
        else:
            self._send_any_voter_fetch(now)

    def _become_voted(self, candidate: int, now: int) -> None:
        inflight, request_deadline = self._inflight, self._timers.get("request")
        self._leave_role()
        self.voted_id = candidate
        self.role = Role.VOTED
        self._persist()
        if self.is_voter:
            self._set_election_deadline(now + self._election_timeout())
        elif inflight is not None and request_deadline is not None:
            # An observer that voted still looks for the leader. Kafka's move to a voted
            # Unattached resets no connection: the fetch in flight goes on.
            self._inflight = inflight
            self._set_timer("request", request_deadline)
        else:
            self._send_any_voter_fetch(now)

    def _become_follower(self, epoch: int, leader: int, now: int, *,
                         fetch: bool = True) -> None:
        """Follow ``leader`` in ``epoch``; fetch from it at once unless ``fetch`` is False
        (the caller is handling that leader's fetch answer and fetches after it)."""
        if epoch != self.epoch:
            self.voted_id = None
        self._leave_role()
        self.epoch = epoch
        self.leader_id = leader
        self.role = _FOLLOWER
        self._fetched_from_leader_at = None
        self._persist()
        self._set_timer("fetch_timeout", now + self.config.fetch_timeout_ms)
        if fetch:
            self._send_fetch(now)

    def _start_election(self, now: int) -> None:
        if len(self.voters) > 1 and self.config.pre_vote:
            self._become_prospective(now)
        else:
            self._become_candidate(now)

    def _become_prospective(self, now: int) -> None:
        # The leader we lost stays known (Kafka's ProspectiveState keeps it): news of it
        # in this epoch does not end the pre-vote, and a failed pre-vote goes back to it.
        self._leave_role()
        self.role = Role.PROSPECTIVE
        self._votes_granted = {self.id}
        self._set_election_deadline(now + self._election_timeout())
        self._request_votes(pre_vote=True)
        # Kafka's NomineeState: a pre-vote left unanswered for a request timeout is sent
        # again, as a candidate's vote is, until the election timeout ends the pre-vote.
        self._vote_pending = {v for v in self.voters if v != self.id}
        self._set_timer("vote_retry", now + self.config.request_timeout_ms)

    def _become_candidate(self, now: int) -> None:
        self._leave_role()
        self.epoch += 1
        self.voted_id = self.id
        self.leader_id = None
        self.role = Role.CANDIDATE
        self._persist()
        self._votes_granted = {self.id}
        self._set_election_deadline(now + self._election_timeout())
        self._ask_for_votes(now)

    def _resume_candidacy(self, now: int) -> None:
        """Stand again in the persisted epoch this node had voted for itself in.

        Kafka's QuorumState starts such a node as that epoch's candidate (its epoch
        is already bumped and its vote cast): it asks the voters again at once.
        """
        self.leader_id = None
        self.role = Role.CANDIDATE
        self._votes_granted = {self.id}
        self._set_election_deadline(now + self._election_timeout())
        self._ask_for_votes(now)

    def _ask_for_votes(self, now: int) -> None:
        """A candidate with its own vote: lead if that is a majority, else ask the others
        (again after ``request_timeout_ms`` for those that have not answered)."""
        if len(self._votes_granted) >= len(self.voters) // 2 + 1:
            self._become_leader(now)
            return
        self._request_votes(pre_vote=False)
        self._vote_pending = {v for v in self.voters if v != self.id}
        self._set_timer("vote_retry", now + self.config.request_timeout_ms)

    def _resend_vote_requests(self, now: int) -> None:
        """Kafka's candidate (and prospective node) resends a vote (pre-vote) request left
        unanswered for a request timeout (not while it backs off after a lost election)."""
        if self.role not in (Role.CANDIDATE, Role.PROSPECTIVE) or self._backing_off \
                or not self._vote_pending:
            return
        pre_vote = self.role is Role.PROSPECTIVE
        end = self.log.end_offset_and_epoch()
        for voter in sorted(self._vote_pending):
            self._send(voter, VoteRequest(self.epoch, self.id, end.epoch, end.offset, pre_vote))
        self._set_timer("vote_retry", now + self.config.request_timeout_ms)

    def _request_votes(self, *, pre_vote: bool) -> None:
        # Both carry the sender's own epoch: a candidate's is already bumped, a prospective
        # node's is not (Kafka's KIP-996 PreVote is sent in the epoch the node is in, so
        # it never brings a newer epoch to anyone than one that exists).
        end = self.log.end_offset_and_epoch()
        for voter in self.voters:
            if voter != self.id:
                self._send(voter, VoteRequest(self.epoch, self.id, end.epoch, end.offset,
                                              pre_vote))

    def _become_leader(self, now: int) -> None:
        granting = tuple(sorted(self._votes_granted))
        self._leave_role()
        self.leader_id = self.id
        self.role = _LEADER
        self._persist()
        start = self.log.end_offset
        self.high_watermark = None  # unknown until this epoch commits its first batch
        self.leader_state = LeaderState(self.id, self.epoch, start, self.voters, self.mutations)
        change = LeaderChangeMessage(self.id, self.voters, granting)
        self.log.append(Batch(start, self.epoch, control_records=(change,), append_time_ms=now),
                        flushed=True)
        self._on_local_flush(now)
        self._set_timer("check_quorum", now + self.config.fetch_timeout_ms * 3 // 2)
        self._send_begin_quorum_epoch(now)

    def _become_resigned(self, now: int, successors: tuple[int, ...]) -> None:
        self._leave_role()
        self.leader_id = None
        self.role = Role.RESIGNED
        self._end_epoch_successors = successors
        self._end_epoch_pending = {v for v in self.voters if v != self.id}
        self._send_end_quorum_epoch(now)
        if self.is_voter:
            self._set_election_deadline(now + self._election_timeout())

    def _send_end_quorum_epoch(self, now: int) -> None:
        """Tell the voters that have not acknowledged it yet that this leader resigned;
        again every ``request_timeout_ms`` while Resigned (Kafka's ResignedState)."""
        if self.role is not Role.RESIGNED or not self._end_epoch_pending:
            return
        for voter in sorted(self._end_epoch_pending):
            self._send(voter, EndQuorumEpochRequest(self.epoch, self.id,
                                                    self._end_epoch_successors))
        self._set_timer("end_epoch", now + self.config.request_timeout_ms)

    def _observe_epoch(self, epoch: int, leader: int | None, now: int) -> bool:
        """React to the epoch and leader a message carries; False when the message is stale."""
        if epoch < self.epoch:
            return False
        if epoch > self.epoch:
            if leader is not None and leader != self.id:
                self._become_follower(epoch, leader, now)
            else:
                self._become_unattached(epoch, now)
            return True
        if leader is not None and leader != self.leader_id \
                and self._resigned_leader != (epoch, leader):
            if self.role is _LEADER:
                raise RaftProtocolError(
                    f"node {self.id} leads epoch {epoch} but hears of leader {leader}"
                )
            if leader != self.id and self.role is not Role.RESIGNED:
                self._become_follower(epoch, leader, now)
        return True

    # ------------------------------------------------------------------ votes
    def _log_is_at_least(self, last_epoch: int, end_offset: int) -> bool:
        mine = self.log.end_offset_and_epoch()
        return (last_epoch, end_offset) >= (mine.epoch, mine.offset)

    def _on_vote_request(self, src: int, req: VoteRequest, now: int) -> None:
        """Kafka's handleVoteRequest, for votes and KIP-996 pre-votes alike.

        A malformed request (a negative offset or epoch, or a last epoch past the one it
        is sent in: a candidate's last epoch is below its bumped epoch, a prospective
        node's at most its epoch) and one of an older epoch are refused (Kafka answers
        INVALID_REQUEST and FENCED_LEADER_EPOCH; kraftsim's VoteResponse has no error, the
        epoch and the refusal say it). A newer epoch, pre-vote or not, is taken on first
        (unattached in it), as any message's. Then a pre-vote is granted to an up-to-date
        log unless this node leads, or follows a leader it fetched from within the fetch
        timeout; it never changes the vote or the epoch beyond that.
        """
        too_late = req.last_epoch > req.epoch if req.pre_vote else req.last_epoch >= req.epoch
        if req.last_epoch < 0 or req.end_offset < 0 or too_late or req.epoch < self.epoch:
            self._send(src, VoteResponse(self.epoch, self.leader_id, False, req.pre_vote))
            return
        if req.epoch > self.epoch:
            self._become_unattached(req.epoch, now)
        if req.pre_vote:
            recently_led = (
                self.role is _LEADER
                or (self.role is _FOLLOWER and self._fetched_from_leader_at is not None
                    and now - self._fetched_from_leader_at < self.config.fetch_timeout_ms)
            )
            granted = not recently_led and self._log_is_at_least(req.last_epoch, req.end_offset)
            self._send(src, VoteResponse(self.epoch, self.leader_id, granted, True))
            return
        # Kafka's unattachedOrProspectiveCanGrantVote, for a voter still waiting for an
        # election (unattached, voted, or prospective: a candidate of its own epoch may be
        # asking): one that has voted in this epoch grants its candidate again, whatever the
        # logs (the vote is cast and on disk), and no one else; one that has not votes for an
        # up-to-date log, unless it knows the epoch's leader (a prospective node keeps the
        # leader it lost). A follower, candidate, leader or resigned node never votes in its
        # own epoch.
        if self.role in (Role.UNATTACHED, Role.VOTED, Role.PROSPECTIVE):
            if self.voted_id is not None:
                granted = self.voted_id == req.candidate_id
            else:
                granted = self.leader_id is None \
                    and self._log_is_at_least(req.last_epoch, req.end_offset)
        else:
            granted = False
        if Mutation.DOUBLE_VOTE in self.mutations:
            granted = self.role in (Role.UNATTACHED, Role.VOTED) \
                and self._log_is_at_least(req.last_epoch, req.end_offset)
        if granted and self.voted_id != req.candidate_id:
            # A new vote. Granted again to the same candidate, it changes nothing: not even
            # the election timeout (Kafka moves to the voted state only from no vote).
            if self.role is Role.PROSPECTIVE:
                # Kafka's prospectiveAddVotedState: the vote is kept on disk, the pre-vote
                # goes on.
                self.voted_id = req.candidate_id
                self._persist()
            else:
                self._become_voted(req.candidate_id, now)
        self._send(src, VoteResponse(self.epoch, self.leader_id, granted))

    def _on_vote_response(self, src: int, resp: VoteResponse, now: int) -> None:
        if not self._observe_epoch(resp.epoch, resp.leader_id, now):
            return
        expected = Role.PROSPECTIVE if resp.pre_vote else Role.CANDIDATE
        if self.role is not expected or resp.epoch != self.epoch:
            return
        if self._backing_off or src not in self.voters \
                or src in self._votes_granted or src in self._votes_rejected:
            # A non-voter's answer counts neither way, and a voter's first answer is its
            # answer for the epoch (Kafka's CandidateState refuses to record either).
            return
        self._vote_pending.discard(src)
        (self._votes_granted if resp.vote_granted else self._votes_rejected).add(src)
        majority = len(self.voters) // 2 + 1
        if len(self._votes_granted) >= majority:
            if resp.pre_vote:
                self._become_candidate(now)
            else:
                self._become_leader(now)
        elif len(self._votes_rejected) >= len(self.voters) - majority + 1:
            if resp.pre_vote:
                self._prospective_failed(now)
            else:
                self._backing_off = True
                self._timers.pop("vote_retry", None)  # no retries while backing off
                self._set_timer("election", now + self._election_backoff())

    def _prospective_failed(self, now: int) -> None:
        """A pre-vote was lost or timed out: back to the known leader, else unattached."""
        leader = self.leader_id
        if leader is not None and leader != self.id \
                and self._resigned_leader != (self.epoch, leader):
            self._become_follower(self.epoch, leader, now)
        else:
            self._become_unattached(self.epoch, now, keep_vote=True)

    # ------------------------------------------------------------------ epochs
    def _send_begin_quorum_epoch(self, now: int) -> None:
        """Announce this leader to every other voter, at once and then every half fetch
        timeout for as long as it leads (Kafka's LeaderState beginQuorumEpochTimer, a
        heartbeat since KIP-853: sent whether or not the voter acknowledged the leader, so
        that a voter that lost track of it, or never heard of it, learns of it again well
        before its own fetch timeout)."""
        if self.role is not _LEADER or self.leader_state is None:
            return
        for voter in self.voters:
            if voter != self.id:
                self._send(voter, BeginQuorumEpochRequest(self.epoch, self.id))
        if len(self.voters) > 1:
            self._set_timer("heartbeat", now + self.config.fetch_timeout_ms // 2)

    def _on_begin_quorum_epoch(self, src: int, req: BeginQuorumEpochRequest, now: int) -> None:
        if req.epoch < self.epoch:
            self._send(src, BeginQuorumEpochResponse(self.epoch, self.leader_id,
                                                     Errors.FENCED_LEADER_EPOCH))
            return
        self._observe_epoch(req.epoch, req.leader_id, now)
        self._send(src, BeginQuorumEpochResponse(self.epoch, self.leader_id))

    def _on_begin_quorum_epoch_response(
        self, src: int, resp: BeginQuorumEpochResponse, now: int
    ) -> None:
        if not self._observe_epoch(resp.epoch, resp.leader_id, now):
            return
        if self.leader_state is not None and resp.epoch == self.epoch \
                and resp.error is _NONE and src in self.voters:
            # Only voters are asked (Kafka's LeaderState refuses an acknowledgement from
            # anyone else); the record is kept for the leader's view of its quorum, the
            # heartbeat goes to every voter regardless.
            self.leader_state.acknowledged.add(src)

    def _on_end_quorum_epoch(self, src: int, req: EndQuorumEpochRequest, now: int) -> None:
        if not self._observe_epoch(req.epoch, None, now):
            self._send(src, EndQuorumEpochResponse(self.epoch, self.leader_id,
                                                   Errors.FENCED_LEADER_EPOCH))
            return
        if req.epoch == self.epoch:
            self._resigned_leader = (req.epoch, req.leader_id)
        # A follower of the resigning leader, or a voter of its epoch that never heard
        # from it (Kafka makes that one follow the leader first), stands after a backoff
        # set by its place among the preferred successors.
        if req.epoch == self.epoch and self.is_voter and (
                (self.role is _FOLLOWER and self.leader_id == req.leader_id)
                or self.role in (Role.UNATTACHED, Role.VOTED)):
            self._become_unattached(self.epoch, now, keep_vote=True)
            if self.id in req.preferred_successors:
                self._set_election_deadline(now + self._successor_backoff(
                    req.preferred_successors.index(self.id), len(req.preferred_successors)))
        self._send(src, EndQuorumEpochResponse(self.epoch, self.leader_id))

    def _successor_backoff(self, position: int, successors: int) -> int:
        """Kafka's strict exponential election backoff: none for the first successor,
        then ``election_backoff_max_ms >> (successors - 1)`` doubled per place, capped at
        ``election_backoff_max_ms``."""
        if position == 0:
            return 0
        cap = self.config.election_backoff_max_ms
        return min(cap, (cap >> (successors - 1)) << (position - 1))

    def _on_end_quorum_epoch_response(self, src: int, resp: EndQuorumEpochResponse,
                                      now: int) -> None:
        if not self._observe_epoch(resp.epoch, resp.leader_id, now):
            return
        if self.role is Role.RESIGNED and resp.epoch == self.epoch and resp.error is _NONE:
            self._end_epoch_pending.discard(src)

    # ------------------------------------------------------------------ fetch (leader side)
    def _on_fetch_request(self, env: Envelope, req: FetchRequest, now: int) -> None:
        if req.last_fetched_epoch > req.epoch or req.last_fetched_epoch < 0 \
                or req.fetch_offset < 0 or req.max_wait_ms < 0:
            # Kafka's handleFetchRequest: no replica can have fetched from an epoch later than
            # the one it fetches in, nor from a negative offset or epoch.
            self._send(env.src, FetchResponse(req.correlation_id, self.epoch, self.leader_id,
                                              Errors.INVALID_REQUEST, req.fetch_offset))
            return
        if req.epoch != self.epoch or self.role is not _LEADER or self.leader_state is None:
            # Kafka's validateLeaderOnlyRequest: the epoch first (an older one is fenced, a
            # newer one unknown), whatever the role; only a fetch of this node's own epoch
            # is told that it is not the leader.
            if req.epoch < self.epoch:
                error = Errors.FENCED_LEADER_EPOCH
            elif req.epoch > self.epoch:
                error = Errors.UNKNOWN_LEADER_EPOCH
            else:
                error = Errors.NOT_LEADER_OR_FOLLOWER
            self._send(env.src, FetchResponse(req.correlation_id, self.epoch, self.leader_id,
                                              error, req.fetch_offset))
            return
        # A resent fetch replaces the one this replica left parked.
        if self._parked:
            self._parked = [(d, e) for d, e in self._parked if e.src != env.src]
        park_until = now + req.max_wait_ms if req.max_wait_ms > 0 else None
        self._answer_fetch(env, now, park_until)

    def _answer_fetch(self, envelope: Envelope, now: int, park_until: int | None) -> None:
        """Answer a valid-epoch fetch now, or park it until ``park_until`` if nothing is new."""
        src = envelope.src
        req = envelope.message
        assert isinstance(req, FetchRequest)
        state = self.leader_state
        if state is None:
            return
        kind, position = self.log.validate_offset_and_epoch(req.fetch_offset,
                                                             req.last_fetched_epoch)
        if kind is _SNAPSHOT:
            assert self.log.snapshot is not None
            self._send(src, FetchResponse(req.correlation_id, self.epoch, self.id, _NONE,
                                          req.fetch_offset, self.high_watermark,
                                          snapshot_id=self.log.snapshot.snapshot_id))
            return
        if kind is _DIVERGING:
            self._send(src, FetchResponse(req.correlation_id, self.epoch, self.id, _NONE,
                                          req.fetch_offset, self.high_watermark,
                                          diverging=position))
            return
        if state.update_replica_end_offset(src, req.fetch_offset, now):
            self._on_high_watermark(now)
        batches = self.log.read(req.fetch_offset, self.log.flushed_end,
                                self.config.fetch_max_records)
        hw = self.high_watermark
        # Parked when there is nothing to tell: no batch, and the high watermark this replica
        # was last told (none yet counts as unknown) is the current one. A leader that does not
        # know its high watermark yet has none to tell (Kafka's KIP-1166 fetch: the leader
        # completes an empty fetch at once only for a replica whose high watermark is unknown
        # or behind the leader's known one).
        if park_until is not None and not batches and self._hw_sent.get(src) == hw:
            self._parked.append((park_until, envelope))
            return
        self._hw_sent[src] = hw
        self.outbox.append(Envelope(self.id, src, FetchResponse(  # _send, inline (every fetch)
            req.correlation_id, self.epoch, self.id, _NONE, req.fetch_offset, hw, batches)))

    def _wake_parked(self, now: int) -> None:
        if not self._parked:
            return
        parked, self._parked = self._parked, []
        for deadline, env in parked:
            self._answer_fetch(env, now, deadline)

    def _refuse_parked(self) -> None:
        """Answer the fetches parked by a leadership that ended in this step."""
        refused, self._refused = self._refused, []
        for env in refused:
            assert isinstance(env.message, FetchRequest)
            self._send(env.src, FetchResponse(env.message.correlation_id, self.epoch,
                                              self.leader_id, Errors.NOT_LEADER_OR_FOLLOWER,
                                              env.message.fetch_offset))

    def _flush(self, now: int) -> None:
        self._timers.pop("flush", None)
        if self.log.flushed_end == self.log.end_offset:
            return
        self.log.flush()
        if self.role is _LEADER:
            self._on_local_flush(now)

    def _on_local_flush(self, now: int) -> None:
        state = self.leader_state
        if state is None:
            return
        if state.update_local_end_offset(self.log.flushed_end):
            self._on_high_watermark(now)
        self._wake_parked(now)

    def _on_high_watermark(self, now: int) -> None:
        assert self.leader_state is not None
        self.high_watermark = self.leader_state.high_watermark
        self._wake_parked(now)

    def _on_fetch_snapshot_request(self, src: int, req: FetchSnapshotRequest, now: int) -> None:
        """Serve the latest snapshot (Kafka's handleFetchSnapshotRequest, whole, in one piece).

        The epoch is checked first, as Kafka's validateLeaderOnlyRequest does. A bootstrap
        snapshot (ending at 0) is never served: the first leader wrote its content to the
        log. A voter fetching a snapshot counts as following the leader (check quorum).
        """
        snap = self.log.snapshot
        state = self.leader_state
        error = _NONE
        if req.epoch < self.epoch:
            error = Errors.FENCED_LEADER_EPOCH
        elif req.epoch > self.epoch:
            error = Errors.UNKNOWN_LEADER_EPOCH
        elif self.role is not _LEADER or state is None:
            error = Errors.NOT_LEADER_OR_FOLLOWER
        elif snap is None or snap.snapshot_id != req.snapshot_id \
                or snap.snapshot_id.end_offset == 0:
            error = Errors.SNAPSHOT_NOT_FOUND
        if error is not _NONE or state is None or snap is None:
            self._send(src, FetchSnapshotResponse(req.correlation_id, self.epoch, self.leader_id,
                                                  error))
            return
        state.update_check_quorum_for_following_voter(src)
        self._send(src, FetchSnapshotResponse(req.correlation_id, self.epoch, self.id,
                                              _NONE, snap))

    # ------------------------------------------------------------------ fetch (follower side)
    def _new_correlation(self) -> int:
        self._next_correlation += 1
        return (self.incarnation << 32) | self._next_correlation

    def _send_fetch(self, now: int) -> None:
        if self.role is not _FOLLOWER or self.leader_id is None:
            return
        if self._fetching_snapshot is not None:
            self._send_fetch_snapshot(self.leader_id, self._fetching_snapshot, now)
            return
        self._send_fetch_to(self.leader_id, now)

    def _send_fetch_snapshot(self, dst: int, snapshot_id: SnapshotId, now: int) -> None:
        correlation = self._new_correlation()
        self._inflight = (correlation, dst)
        self._send(dst, FetchSnapshotRequest(correlation, self.epoch, self.id, snapshot_id))
        self._set_timer("request", now + self.config.request_timeout_ms)

    def _send_any_voter_fetch(self, now: int) -> None:
        """An observer's fetch to a voter drawn at random (Kafka's maybeSendAnyVoterFetch).

        Kafka's RequestManager.findReadyBootstrapServer starts at a random place in the list
        of bootstrap servers (the static voters) and takes the first ready one; with one
        request at a time and no per-connection backoff here, every voter is ready, the
        leader included (a request to it that timed out leaves its connection ready). The
        draw comes from this node's seeded rng over the sorted voters.
        """
        voters = self.voters
        self._send_fetch_to(voters[self.rng.randrange(len(voters))], now)

    def _send_fetch_to(self, dst: int, now: int) -> None:
        # _new_correlation and _send, inline: a follower sends a fetch per response
        self._next_correlation = sequence = self._next_correlation + 1
        correlation = (self.incarnation << 32) | sequence
        self._inflight = (correlation, dst)
        log = self.log
        config = self.config
        self.outbox.append(Envelope(self.id, dst, FetchRequest(
            correlation, self.epoch, self.id, log.end_offset, log.last_epoch,
            config.fetch_max_wait_ms)))
        self._timers["request"] = now + config.request_timeout_ms

    def _is_outstanding(self, src: int, correlation_id: int) -> bool:
        return self._inflight is not None and self._inflight == (correlation_id, src)

    def _on_fetch_response(self, src: int, resp: FetchResponse, now: int) -> None:
        inflight = self._inflight
        if inflight is None or inflight[0] != resp.correlation_id or inflight[1] != src:
            if resp.epoch > self.epoch:
                self._observe_epoch(resp.epoch, resp.leader_id, now)
            return
        self._inflight = None
        timers = self._timers
        request_deadline = timers.pop("request", None)
        if resp.error is _NONE and resp.leader_id == src and resp.epoch == self.epoch \
                and self.leader_id is None and self.role in (Role.UNATTACHED, Role.VOTED):
            # A discovery fetch answered by the leader of this node's own epoch: follow it
            # and take what it sent in the same answer (Kafka's maybeHandleCommonResponse
            # lets an observer discover the leader and append in one Fetch).
            self._become_follower(resp.epoch, src, now, fetch=False)
        if resp.error is not _NONE or src != self.leader_id or resp.epoch != self.epoch:
            before = (self.epoch, self.leader_id, self.role)
            self._observe_epoch(resp.epoch, resp.leader_id, now)
            if (self.epoch, self.leader_id, self.role) == before:
                self._ask_again(resp.error, request_deadline, now)
            return
        snapshot_id = resp.snapshot_id
        if snapshot_id is not None and (snapshot_id.end_offset < 0 or snapshot_id.epoch < 0):
            # Kafka: an invalid snapshot id fails the fetch (retried after a backoff); the
            # fetch timeout keeps running.
            timers["request"] = now + self.config.retry_backoff_ms
            return
        self._fetched_from_leader_at = now
        timers["fetch_timeout"] = now + self.config.fetch_timeout_ms
        if resp.diverging is not None:
            hw = self.high_watermark or 0
            new_end = self.log.truncate_to_end_offset(resp.diverging)
            if new_end < hw:
                raise RaftProtocolError(
                    f"node {self.id} was asked to truncate to {new_end}, below its "
                    f"high watermark {hw}"
                )
            self._send_fetch(now)
            return
        if snapshot_id is not None:
            held = self.log.snapshot
            if held is not None and held.snapshot_id == snapshot_id:
                # Kafka's createNewSnapshotUnchecked hands back no writer for a snapshot
                # already on disk (the bootstrap snapshot, say): nothing to download, the
                # follower fetches the log again.
                self._send_fetch(now)
                return
            self._fetching_snapshot = snapshot_id
            self._send_fetch_snapshot(src, snapshot_id, now)
            return
        if resp.fetch_offset != self.log.end_offset:
            self._send_fetch(now)
            return
        epoch = self.epoch
        for batch in resp.batches:
            if batch.epoch > epoch:
                # Kafka's appendAsFollower stops at the first batch of an epoch later than the
                # follower's own: no leader of this epoch wrote it, and the follower's log must
                # never run ahead of the epoch it is in.
                break
            self.log.append(batch, flushed=True)
        self._update_follower_high_watermark(resp.high_watermark)
        self._send_fetch(now)

    def _ask_again(self, error: Errors, request_deadline: int | None, now: int) -> None:
        """The next request after a Fetch or FetchSnapshot answer that moved nothing (an
        older epoch, or an epoch error naming no newer epoch or other leader).

        Kafka's maybeHandleCommonResponse counts such an answer as handled: the connection
        is ready again and the next poll sends at once (to the leader, or to a voter drawn
        at random by an observer still looking for one). Only an answer it cannot use
        (INVALID_REQUEST) puts the connection in its retry_backoff_ms. A round trip that
        took no simulated time (a link without latency) waits 1 ms before the next, so
        that two nodes stuck in this exchange cannot hold the clock still.
        """
        if error is Errors.INVALID_REQUEST:
            self._set_timer("request", now + self.config.retry_backoff_ms)
        elif request_deadline is not None and \
                request_deadline - self.config.request_timeout_ms >= now:
            self._set_timer("request", now + 1)
        else:
            self._on_request_timer(now)

    def _update_follower_high_watermark(self, leader_hw: int | None) -> None:
        if leader_hw is None:
            return
        hw = min(leader_hw, self.log.end_offset)
        if self.high_watermark is None or hw > self.high_watermark:
            self.high_watermark = hw

    def _on_fetch_snapshot_response(self, src: int, resp: FetchSnapshotResponse,
                                    now: int) -> None:
        if not self._is_outstanding(src, resp.correlation_id):
            if resp.epoch > self.epoch:
                self._observe_epoch(resp.epoch, resp.leader_id, now)
            return
        self._inflight = None
        request_deadline = self._timers.pop("request", None)
        current = resp.epoch == self.epoch and src == self.leader_id
        invalid = resp.error is _NONE and resp.snapshot is not None and (
            resp.snapshot.snapshot_id.end_offset < 0 or resp.snapshot.snapshot_id.epoch < 0)
        if current and (resp.error is Errors.SNAPSHOT_NOT_FOUND or invalid):
            # Kafka: the leader no longer holds that snapshot (it took a newer one): start
            # over with a fetch at once, which names the new one. An answer naming an
            # invalid snapshot id (a negative end offset or epoch) is taken the same way.
            self._fetching_snapshot = None
            self._fetched_from_leader_at = now
            self._set_timer("fetch_timeout", now + self.config.fetch_timeout_ms)
            self._send_fetch(now)
            return
        snapshot = resp.snapshot
        if resp.error is not _NONE or snapshot is None or not current:
            # A stale answer leaves the download pending: it is asked for again (see
            # _ask_again). A newer epoch or leader ends it (a new role has no download).
            before = (self.epoch, self.leader_id, self.role)
            self._observe_epoch(resp.epoch, resp.leader_id, now)
            if (self.epoch, self.leader_id, self.role) == before:
                self._ask_again(resp.error, request_deadline, now)
            return
        if snapshot.snapshot_id != self._fetching_snapshot:
            raise RaftProtocolError(
                f"node {self.id} asked for snapshot {self._fetching_snapshot} and received "
                f"{snapshot.snapshot_id}"
            )
        self._fetching_snapshot = None
        self._fetched_from_leader_at = now
        self._set_timer("fetch_timeout", now + self.config.fetch_timeout_ms)
        end = snapshot.snapshot_id.end_offset
        if end > self.log.end_offset or self.log.start_offset < end:
            self.log.install_snapshot(snapshot)
            if self.high_watermark is None or self.high_watermark < end:
                self.high_watermark = end
        self._send_fetch(now)

    # ------------------------------------------------------------------ listeners
    def _poll_listeners(self) -> None:
        if self._polling_listeners:
            return
        # Once every listener is up to date, polling again changes nothing until one
        # of the inputs does: most steps (an empty fetch, a timer) skip the loop. The
        # inputs are everything _poll_listener reads of the node (built inline twice
        # below: this runs at every step).
        log = self.log
        inputs = (self.high_watermark, self.leader_id, self.epoch, self.leader_state,
                  log.snapshot, log.start_offset, log.end_offset, len(self._listeners))
        if inputs == self._listeners_settled:
            return
        self._polling_listeners = True
        self._listener_read = None
        try:
            # A listener polled twice with the same inputs is not moved the second time:
            # another round is needed only when a callback changed an input.
            while True:
                progress = False
                for ctx in self._listeners:
                    progress |= self._poll_listener(ctx)
                before = inputs
                inputs = (self.high_watermark, self.leader_id, self.epoch, self.leader_state,
                          log.snapshot, log.start_offset, log.end_offset, len(self._listeners))
                if not progress or inputs == before:
                    break
            self._listeners_settled = inputs
        finally:
            self._polling_listeners = False
            self._listener_read = None

    def _poll_listener(self, ctx: ListenerContext) -> bool:
        moved = False
        last = ctx.last_leader  # compared field by field: no LeaderAndEpoch per poll
        if self.leader_id != self.id and (
                last is None or last.leader_id != self.leader_id or last.epoch != self.epoch):
            leader = LeaderAndEpoch(self.leader_id, self.epoch)
            ctx.last_leader = leader
            ctx.listener.handle_leader_change(leader)
            moved = True
        log = self.log
        snap = log.snapshot
        # A new listener starts from the snapshot whatever its offset (Kafka: next
        # offset 0 and a snapshot exists), so a bootstrap snapshot ending at 0 counts.
        if snap is not None and (ctx.next_offset < log.start_offset or (
                ctx.next_offset == 0 and not ctx.loaded_snapshot)):
            ctx.next_offset = snap.snapshot_id.end_offset
            ctx.loaded_snapshot = True
            ctx.listener.handle_load_snapshot(snap)
            moved = True
        hw = self.high_watermark
        if hw is not None:
            if ctx.next_offset < hw:
                # Every listener of a node usually reads the same committed range: read once
                # per round of _poll_listeners (a range of the same log, below its HW).
                key = (ctx.next_offset, hw, log.start_offset, log.end_offset)
                memo = self._listener_read
                if memo is not None and memo[0] == key:
                    batches = memo[1]
                else:
                    batches = log.read(ctx.next_offset, hw, _NO_WAIT)
                    self._listener_read = (key, batches)
                if batches:
                    ctx.next_offset = batches[-1].end_offset
                    ctx.last_high_watermark = hw
                    ctx.listener.handle_commit(batches, hw)
                    moved = True
            if ctx.next_offset >= hw and (
                    ctx.last_high_watermark is None or hw > ctx.last_high_watermark):
                ctx.last_high_watermark = hw  # nothing new to read, but the HW is news
                ctx.listener.handle_commit((), hw)
                moved = True
        state = self.leader_state
        if state is not None and self.leader_id == self.id \
                and ctx.next_offset > state.epoch_start_offset:
            last = ctx.last_leader
            if last is None or last.leader_id != self.leader_id or last.epoch != self.epoch:
                leader = LeaderAndEpoch(self.leader_id, self.epoch)
                ctx.last_leader = leader
                ctx.listener.handle_leader_change(leader)
                moved = True
        return moved

    # ------------------------------------------------------------------ output
    def _send(self, dst: int, message: Message) -> None:
        self.outbox.append(Envelope(self.id, dst, message))
