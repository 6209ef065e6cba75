"""Cases of Kafka's KafkaRaftClientTest, run against one RaftNode (tests/raft/kafka_context.py).

Each test names the Kafka case it follows. A node is built from its disk, handed
requests and responses as if from the other nodes, and checked for what it sent,
its role, epoch, log and high watermark. The Kafka cases run without KIP-996
pre-vote (the version they come from has none), so the context turns it off.
Where kraftsim deliberately answers differently, the test says so.
"""

from __future__ import annotations

import pytest

from raft import (
    Batch,
    LeaderAndEpoch,
    LeaderChangeMessage,
    NotLeaderError,
    ReplicaDescription,
    Role,
)
from raft.messages import (
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    Errors,
    FetchRequest,
    FetchResponse,
    OffsetAndEpoch,
    VoteRequest,
    VoteResponse,
)
from raft.quorum_info import OBSERVER_SESSION_TIMEOUT_MS
from tests.raft.kafka_context import Context

# ---------------------------------------------------------------------- start-up


def test_single_member_quorum_elects_itself_at_start() -> None:
    """testInitializeSingleMemberQuorum: the only voter is leader of epoch 1 at once."""
    ctx = Context(1, (1,))
    assert ctx.node.role is Role.LEADER and ctx.node.epoch == 1
    assert ctx.log.end_offset == 1
    assert ctx.node.high_watermark == 1


def test_single_member_that_led_bumps_the_epoch_at_start() -> None:
    """testInitializeAsLeaderFromStateStoreSingleMemberQuorum: a lone voter that led epoch 2
    leads epoch 3 at once (it never leads the epoch of a previous life again)."""
    ctx = Context(1, (1,), epoch=2, voted=1, leader=1)
    assert ctx.node.role is Role.LEADER and ctx.node.epoch == 3
    assert ctx.log.end_offset == 1 and ctx.log.last_epoch == 3
    assert ctx.listener.current_leader == LeaderAndEpoch(1, 3)


def test_single_member_leader_appends_and_serves_what_it_wrote() -> None:
    """testLeaderAppendSingleMemberQuorum: the LeaderChange record commits by itself, an
    append commits at its flush, and a fetch reads both batches back."""
    ctx = Context(1, (1,), append_linger_ms=0)
    assert ctx.become_leader() == 1
    assert ctx.node.high_watermark == 1
    ctx.node.append(["a", "b", "c"], 1, ctx.now)
    ctx.poll()
    assert ctx.node.high_watermark == 4
    ctx.deliver(2, ctx.fetch_request(2, 0, 0))
    _, resp = ctx.one_sent(FetchResponse)
    assert [b.base_offset for b in resp.batches] == [0, 1]
    change = resp.batches[0].control_records[0]
    assert isinstance(change, LeaderChangeMessage)
    assert (change.leader_id, change.voters, change.granting_voters) == (1, (1,), (1,))
    assert change.version == 0  # the data version Kafka writes (and kraftsim encodes)
    assert resp.batches[1].records == ("a", "b", "c") and resp.batches[1].epoch == 1


def test_restarted_leader_resigns_refuses_appends_and_stands_again() -> None:
    """testInitializeAsResignedLeaderFromStateStore, testInitializeAsResignedAndBecomeCandidate:
    a node whose disk says it led epoch 2 starts Resigned, refuses appends, tells the other
    voter (EndQuorumEpoch), and stands in epoch 3 after its election timeout."""
    ctx = Context(1, (1, 2), epoch=2, voted=1, leader=1)
    assert ctx.node.role is Role.RESIGNED and ctx.node.epoch == 2
    with pytest.raises(NotLeaderError):
        ctx.node.append(["a", "b"], 2, ctx.now)
    dst, end = ctx.one_sent(EndQuorumEpochRequest)
    assert dst == 2 and (end.epoch, end.leader_id) == (2, 1)
    ctx.deliver(2, EndQuorumEpochResponse(2, 1))
    ctx.sleep(ctx.config.election_timeout_ms)
    assert ctx.node.role is Role.CANDIDATE and ctx.node.epoch == 3 and ctx.node.voted_id == 1
    dst, vote = ctx.one_sent(VoteRequest)
    assert dst == 2 and (vote.epoch, vote.last_epoch, vote.end_offset) == (3, 0, 0)


def test_restarted_candidate_resumes_its_election() -> None:
    """testInitializeAsCandidateFromStateStore: a node that had voted for itself in epoch 2
    comes back as that epoch's candidate and asks both other voters again."""
    ctx = Context(1, (1, 2, 3), epoch=2, voted=1)
    assert ctx.node.role is Role.CANDIDATE and ctx.node.epoch == 2 and ctx.node.voted_id == 1
    votes = ctx.sent(VoteRequest)
    assert sorted(dst for dst, _ in votes) == [2, 3]
    assert all((v.epoch, v.last_epoch, v.end_offset) == (2, 0, 0) for _, v in votes)


def test_follower_fetches_from_its_log_end_at_start() -> None:
    """testInitializeAsFollowerEmptyLog, testInitializeAsFollowerNonEmptyLog."""
    for log, offset, last_epoch in (((), 0, 0), (((3, ["foo"]),), 1, 3)):
        ctx = Context(1, (1, 2), epoch=5, leader=2, log=log)
        assert ctx.node.role is Role.FOLLOWER and ctx.node.leader_id == 2
        dst, fetch = ctx.one_sent(FetchRequest)
        assert dst == 2 and (fetch.epoch, fetch.fetch_offset, fetch.last_fetched_epoch) == (
            5, offset, last_epoch)


# ---------------------------------------------------------------------- votes


def _granted(ctx: Context) -> VoteResponse:
    _, resp = ctx.one_sent(VoteResponse)
    return resp


def test_resigned_leader_refuses_votes_in_its_epoch() -> None:
    """testRejectVotesFromSameEpochAfterResigningLeadership (kraftsim's Resigned node answers
    with no leader: it does not point voters back at itself)."""
    ctx = Context(1, (1, 2), epoch=2, voted=1, leader=1)
    ctx.drain()
    ctx.deliver(2, ctx.vote_request(2, 2, 0, 0))
    resp = _granted(ctx)
    assert not resp.vote_granted and resp.epoch == 2
    assert ctx.node.role is Role.RESIGNED


def test_candidate_refuses_votes_in_its_epoch() -> None:
    """testRejectVotesFromSameEpochAfterResigningCandidacy,
    testCandidateIgnoreVoteRequestOnSameEpoch."""
    ctx = Context(1, (1, 2), epoch=2, voted=1)
    ctx.drain()
    ctx.deliver(2, ctx.vote_request(2, 2, 1, 1))
    resp = _granted(ctx)
    assert not resp.vote_granted and (resp.epoch, resp.leader_id) == (2, None)
    assert ctx.node.voted_id == 1


@pytest.mark.parametrize("led", [True, False], ids=["was-leader", "was-candidate"])
def test_vote_granted_in_a_higher_epoch_after_resigning(led: bool) -> None:
    """testGrantVotesFromHigherEpochAfterResigningLeadership / ...Candidacy."""
    ctx = Context(1, (1, 2), epoch=2, voted=1, leader=1 if led else None)
    ctx.drain()
    ctx.deliver(2, ctx.vote_request(2, 3, 0, 0))
    resp = _granted(ctx)
    assert resp.vote_granted and (resp.epoch, resp.leader_id) == (3, None)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.VOTED, 3, 2)


def test_vote_granted_while_resigning_for_shutdown() -> None:
    """testGrantVotesWhenShuttingDown, testLeaderGracefulShutdown: a leader that resigned
    (kraftsim's graceful shutdown resigns first) still votes for its successor, and
    follows it once it announces itself."""
    ctx = Context(1, (1, 2))
    epoch = ctx.become_leader()
    ctx.node.resign(ctx.now)
    dst, end = ctx.one_sent(EndQuorumEpochRequest)
    assert dst == 2 and end.epoch == epoch
    ctx.deliver(2, ctx.vote_request(2, epoch + 1, epoch, 1))
    resp = _granted(ctx)
    assert resp.vote_granted and resp.epoch == epoch + 1
    assert (ctx.node.role, ctx.node.voted_id) == (Role.VOTED, 2)
    ctx.deliver(2, BeginQuorumEpochRequest(epoch + 1, 2))
    assert (ctx.node.role, ctx.node.leader_id) == (Role.FOLLOWER, 2)


def test_unattached_voter_grants_a_vote_in_its_epoch() -> None:
    """testHandleValidVoteRequestAsFollower."""
    ctx = Context(1, (1, 2), epoch=2)
    ctx.deliver(2, ctx.vote_request(2, 2, 1, 1))
    resp = _granted(ctx)
    assert resp.vote_granted and (resp.epoch, resp.leader_id) == (2, None)
    assert (ctx.node.role, ctx.node.voted_id) == (Role.VOTED, 2)


def test_follower_refuses_a_vote_in_its_leaders_epoch() -> None:
    """testHandleVoteRequestAsFollowerWithElectedLeader."""
    ctx = Context(1, (1, 2, 3), epoch=2, leader=3)
    ctx.drain()
    ctx.deliver(2, ctx.vote_request(2, 2, 1, 1))
    resp = _granted(ctx)
    assert not resp.vote_granted and (resp.epoch, resp.leader_id) == (2, 3)
    assert (ctx.node.role, ctx.node.leader_id) == (Role.FOLLOWER, 3)


def test_voter_refuses_a_second_candidate_in_the_epoch() -> None:
    """testHandleVoteRequestAsFollowerWithVotedCandidate."""
    ctx = Context(1, (1, 2, 3), epoch=2, voted=3)
    ctx.deliver(2, ctx.vote_request(2, 2, 1, 1))
    resp = _granted(ctx)
    assert not resp.vote_granted and (resp.epoch, resp.leader_id) == (2, None)
    assert ctx.node.voted_id == 3


def test_vote_request_whose_last_epoch_is_not_below_its_epoch_is_refused() -> None:
    """testInvalidVoteRequest: a candidate bumped its epoch before asking, so its log's last
    epoch is below the one it asks in; a (non-pre-)vote with a last epoch equal to it or
    past it is malformed (Kafka: INVALID_REQUEST): refused, and the voter takes on neither
    the epoch nor a vote."""
    ctx = Context(1, (1, 2), epoch=2)
    for last_epoch in (3, 4):
        ctx.drain()
        ctx.deliver(2, ctx.vote_request(2, 3, last_epoch, 1))
        resp = _granted(ctx)
        assert not resp.vote_granted and resp.epoch == 2
        assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.UNATTACHED, 2, None)


def test_vote_request_of_an_older_epoch_is_refused() -> None:
    """testHandleInvalidVoteRequestWithOlderEpoch (Kafka's answer also carries
    FENCED_LEADER_EPOCH; kraftsim's VoteResponse has no error: the epoch says it)."""
    ctx = Context(1, (1, 2), epoch=2)
    ctx.deliver(2, ctx.vote_request(2, 1, 0, 1))
    resp = _granted(ctx)
    assert not resp.vote_granted and resp.epoch == 2
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.UNATTACHED, 2, None)


def test_leader_refuses_votes_in_its_own_epoch_from_voters_and_observers() -> None:
    """testLeaderIgnoreVoteRequestOnSameEpoch, testLeaderAcceptVoteFromObserver."""
    ctx = Context(1, (1, 2), epoch=2)
    epoch = ctx.become_leader()
    for candidate, vote_epoch in ((2, epoch), (9, epoch - 1), (9, epoch)):
        ctx.deliver(candidate, ctx.vote_request(candidate, vote_epoch, epoch - 1, 1))
        resp = _granted(ctx)
        assert not resp.vote_granted and (resp.epoch, resp.leader_id) == (epoch, 1)
    assert ctx.node.role is Role.LEADER and ctx.node.epoch == epoch


def test_candidate_becomes_leader_with_the_other_voters_vote() -> None:
    """testInitializeAsCandidateAndBecomeLeader: epoch 1, a LeaderChange record naming the
    voters and who granted, flushed at once, then BeginQuorumEpoch."""
    ctx = Context(1, (1, 2))
    ctx.sleep(ctx.config.election_timeout_ms)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.CANDIDATE, 1, 1)
    dst, vote = ctx.one_sent(VoteRequest)
    assert dst == 2 and (vote.epoch, vote.last_epoch, vote.end_offset) == (1, 0, 0)
    ctx.deliver(2, VoteResponse(1, None, True))
    assert ctx.node.role is Role.LEADER and ctx.node.leader_id == 1
    assert ctx.log.end_offset == 1 and ctx.log.flushed_end == 1
    [batch] = ctx.log.batches
    assert batch.is_control and batch.append_time_ms == ctx.now
    assert batch.control_records == (LeaderChangeMessage(1, (1, 2), (1, 2)),)
    assert [dst for dst, _ in ctx.sent(BeginQuorumEpochRequest)] == [2]


def test_candidate_of_three_needs_one_vote() -> None:
    """testInitializeAsCandidateAndBecomeLeaderQuorumOfThree."""
    ctx = Context(1, (1, 2, 3))
    ctx.sleep(ctx.config.election_timeout_ms)
    assert sorted(dst for dst, _ in ctx.sent(VoteRequest)) == [2, 3]
    ctx.deliver(3, VoteResponse(1, None, True))
    assert ctx.node.role is Role.LEADER
    assert ctx.log.batches[0].control_records == (LeaderChangeMessage(1, (1, 2, 3), (1, 3)),)
    assert sorted(dst for dst, _ in ctx.sent(BeginQuorumEpochRequest)) == [2, 3]


def test_rejected_candidate_backs_off_then_stands_in_the_next_epoch() -> None:
    """testRetryElection: rejected by the only other voter, the candidate keeps its vote
    through a backoff of at most retry_backoff + election_backoff_max, then stands again."""
    ctx = Context(1, (1, 2), election_backoff_max_ms=100, retry_backoff_ms=50)
    ctx.sleep(ctx.config.election_timeout_ms)
    ctx.drain()
    ctx.deliver(2, VoteResponse(1, None, False))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.CANDIDATE, 1, 1)
    deadline = ctx.node.next_deadline()
    assert deadline is not None and ctx.now + 50 <= deadline < ctx.now + 150
    ctx.sleep(deadline - ctx.now - 1)
    assert ctx.node.epoch == 1
    ctx.sleep(1)
    assert (ctx.node.role, ctx.node.epoch) == (Role.CANDIDATE, 2)
    _, vote = ctx.one_sent(VoteRequest)
    assert vote.epoch == 2


def test_candidate_asks_again_after_the_request_timeout() -> None:
    """testVoteRequestTimeout: an unanswered vote request is sent again after
    request_timeout_ms (while the election timeout still runs)."""
    ctx = Context(1, (1, 2), election_timeout_ms=10_000, request_timeout_ms=5000)
    ctx.sleep(10_000)
    _, first = ctx.one_sent(VoteRequest)
    ctx.sleep(5000)
    dst, again = ctx.one_sent(VoteRequest)
    assert dst == 2 and again == first
    ctx.deliver(2, VoteResponse(1, None, True))
    assert ctx.node.role is Role.LEADER


def test_vote_responses_after_following_are_ignored() -> None:
    """testVoteResponseIgnoredAfterBecomingFollower."""
    ctx = Context(1, (1, 2, 3), epoch=4)
    ctx.sleep(ctx.config.election_timeout_ms)
    assert (ctx.node.role, ctx.node.epoch) == (Role.CANDIDATE, 5)
    ctx.deliver(3, BeginQuorumEpochRequest(5, 3))
    assert (ctx.node.role, ctx.node.leader_id) == (Role.FOLLOWER, 3)
    ctx.deliver(2, VoteResponse(5, None, False))
    ctx.deliver(3, VoteResponse(5, 3, False))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 5, 3)


def test_voter_becomes_candidate_after_the_fetch_timeout() -> None:
    """testVoterBecomeCandidateAfterFetchTimeout."""
    ctx = Context(1, (1, 2), epoch=5, leader=2, log=[(3, ["foo"])])
    ctx.drain()
    ctx.sleep(ctx.config.fetch_timeout_ms)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.CANDIDATE, 6, 1)
    _, vote = ctx.one_sent(VoteRequest)
    assert (vote.epoch, vote.last_epoch, vote.end_offset) == (6, 3, 1)


# ---------------------------------------------------------------------- appends


def test_append_refused_unless_leader_of_that_epoch() -> None:
    """testAppendFailedWithNotLeaderException, testAppendFailedWithFencedEpoch: an older
    epoch is NotLeaderError, an epoch the node has not reached is the caller's error."""
    ctx = Context(1, (1, 2), epoch=2)
    with pytest.raises(NotLeaderError):
        ctx.node.append(["a"], 2, ctx.now)
    epoch = ctx.become_leader()
    with pytest.raises(ValueError):
        ctx.node.append(["a"], epoch + 1, ctx.now)
    with pytest.raises(NotLeaderError):
        ctx.node.append(["a"], epoch - 1, ctx.now)


def test_lingering_append_waits_for_the_linger_only() -> None:
    """testChannelWokenUpIfLingerTimeoutReachedWithoutAppend / ...DuringAppend: the flush is
    due append_linger_ms after the first append; a second append does not delay it."""
    ctx = Context(1, (1, 2), append_linger_ms=50)
    ctx.become_leader()
    assert ctx.node.append(["a"], ctx.node.epoch, ctx.now) == 1
    start = ctx.now
    assert ctx.node.next_deadline() == start + 50
    ctx.sleep(20)
    assert ctx.node.append(["b"], ctx.node.epoch, ctx.now) == 2
    assert ctx.node.next_deadline() == start + 50
    ctx.sleep(29)
    assert ctx.log.flushed_end == 1
    ctx.sleep(1)
    assert ctx.log.flushed_end == 3


@pytest.mark.parametrize("how", ["follower", "voted", "unattached"])
def test_lingering_appends_are_dropped_when_leadership_ends(how: str) -> None:
    """testAccumulatorClearedAfterBecomingFollower / ...Voted / ...Unattached: appends still
    waiting for their flush are gone when the leader steps down."""
    ctx = Context(1, (1, 2), append_linger_ms=50)
    epoch = ctx.become_leader()
    ctx.node.append(["a"], epoch, ctx.now)
    if how == "follower":
        ctx.deliver(2, BeginQuorumEpochRequest(epoch + 1, 2))
        assert (ctx.node.role, ctx.node.leader_id) == (Role.FOLLOWER, 2)
    elif how == "voted":
        ctx.deliver(2, ctx.vote_request(2, epoch + 1, epoch, 1))
        assert (ctx.node.role, ctx.node.voted_id) == (Role.VOTED, 2)
    else:
        ctx.deliver(2, ctx.vote_request(2, epoch + 1, epoch, 0))  # its log is behind
        assert (ctx.node.role, ctx.node.voted_id) == (Role.UNATTACHED, None)
    assert ctx.node.epoch == epoch + 1
    assert ctx.log.end_offset == 1 and ctx.log.flushed_end == 1


# ---------------------------------------------------------------------- resigning


def test_resigned_leader_resends_end_quorum_epoch_to_voters_that_did_not_answer() -> None:
    """testEndQuorumEpochRetriesWhileResigned."""
    ctx = Context(1, (1, 2, 3), epoch=19, voted=1, leader=1,
                  election_timeout_ms=10_000, request_timeout_ms=5000)
    ends = ctx.sent(EndQuorumEpochRequest)
    assert sorted(dst for dst, _ in ends) == [2, 3]
    ctx.deliver(2, EndQuorumEpochResponse(19, None))
    assert ctx.drain() == []
    ctx.sleep(6000)
    [(dst, again)] = ctx.sent(EndQuorumEpochRequest)
    assert dst == 3 and again.epoch == 19


def test_resignation_answers_parked_fetches() -> None:
    """testResignWillCompleteFetchPurgatory (without its append: kraftsim's resign flushes
    first, which would answer the parked fetch with the record while still leader)."""
    ctx = Context(1, (1, 2))
    epoch = ctx.become_leader()
    ctx.deliver(2, ctx.fetch_request(2, 1, epoch))  # moves the HW: answered at once
    ctx.drain()
    ctx.deliver(2, ctx.fetch_request(2, 1, epoch, max_wait_ms=1000))
    assert ctx.sent(FetchResponse) == []
    ctx.node.resign(ctx.now)
    _, resp = ctx.one_sent(FetchResponse)
    assert (resp.error, resp.epoch) == (Errors.NOT_LEADER_OR_FOLLOWER, epoch)
    assert ctx.node.role is Role.RESIGNED


def test_resigned_leader_follows_the_next_leader() -> None:
    """testHandleBeginQuorumEpochAfterUserInitiatedResign."""
    ctx = Context(1, (1, 2, 3))
    epoch = ctx.become_leader()
    ctx.node.resign(ctx.now)
    ctx.deliver(2, BeginQuorumEpochRequest(epoch + 1, 2))
    _, resp = ctx.one_sent(BeginQuorumEpochResponse)
    assert resp.error is Errors.NONE
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, epoch + 1, 2)
    assert ctx.listener.current_leader == LeaderAndEpoch(2, epoch + 1)


def test_resigned_leader_stands_again_after_its_election_timeout() -> None:
    """testElectionTimeoutAfterUserInitiatedResign: an acknowledged EndQuorumEpoch is not
    sent again, a fetch meanwhile is refused, and the election timeout starts an election
    in the next epoch (listeners hear of the epoch, leader unknown)."""
    ctx = Context(1, (1, 2))
    epoch = ctx.become_leader()
    ctx.node.resign(ctx.now)
    assert [dst for dst, _ in ctx.sent(EndQuorumEpochRequest)] == [2]
    ctx.deliver(2, EndQuorumEpochResponse(epoch, None))
    ctx.sleep(ctx.config.retry_backoff_ms)
    assert ctx.drain() == []
    ctx.deliver(9, ctx.fetch_request(9, 0, 0, epoch=1))
    _, resp = ctx.one_sent(FetchResponse)
    assert (resp.error, resp.epoch) == (Errors.NOT_LEADER_OR_FOLLOWER, epoch)
    ctx.sleep(2 * ctx.config.election_timeout_ms)
    assert (ctx.node.role, ctx.node.epoch) == (Role.CANDIDATE, epoch + 1)
    assert ctx.listener.current_leader == LeaderAndEpoch(None, epoch + 1)


def test_end_quorum_epoch_lists_successors_by_fetch_offset() -> None:
    """testEndQuorumEpochSentBasedOnFetchOffset."""
    ctx = Context(1, (1, 2, 3), append_linger_ms=0)
    epoch = ctx.become_leader()
    ctx.deliver(2, ctx.fetch_request(2, 1, epoch))
    ctx.node.append(["foo", "bar"], epoch, ctx.now)
    ctx.poll()
    ctx.deliver(3, ctx.fetch_request(3, 3, epoch))
    ctx.drain()
    ctx.node.resign(ctx.now)
    ends = ctx.sent(EndQuorumEpochRequest)
    assert sorted(dst for dst, _ in ends) == [2, 3]
    assert all(end.preferred_successors == (3, 2) for _, end in ends)


def test_end_quorum_epoch_of_an_older_epoch_is_fenced() -> None:
    """testEndQuorumIgnoredAsCandidateIfOlderEpoch, testEndQuorumIgnoredAsLeaderIfOlderEpoch."""
    ctx = Context(1, (1, 2), epoch=4)
    ctx.sleep(ctx.config.election_timeout_ms)
    assert (ctx.node.role, ctx.node.epoch) == (Role.CANDIDATE, 5)
    ctx.drain()
    ctx.deliver(2, EndQuorumEpochRequest(3, 2, (1,)))
    _, resp = ctx.one_sent(EndQuorumEpochResponse)
    assert (resp.error, resp.epoch, resp.leader_id) == (Errors.FENCED_LEADER_EPOCH, 5, None)
    assert (ctx.node.role, ctx.node.epoch) == (Role.CANDIDATE, 5)

    ctx = Context(1, (1, 2, 3), epoch=6)
    epoch = ctx.become_leader()
    ctx.deliver(2, EndQuorumEpochRequest(epoch - 2, 2, (1, 3)))
    _, resp = ctx.one_sent(EndQuorumEpochResponse)
    assert (resp.error, resp.epoch, resp.leader_id) == (Errors.FENCED_LEADER_EPOCH, epoch, 1)
    ctx.sleep(ctx.config.fetch_timeout_ms - 1)
    assert ctx.node.role is Role.LEADER


def test_end_quorum_epoch_to_its_first_successor_starts_an_election_at_once() -> None:
    """testHandleEndQuorumRequest (a follower) and
    testEndQuorumStartsNewElectionImmediatelyIfFollowerUnattached (a voter that never
    learnt the resigning leader)."""
    for leader in (2, None):
        ctx = Context(1, (1, 2, 3), epoch=2, leader=leader)
        ctx.drain()
        ctx.deliver(2, EndQuorumEpochRequest(2, 2, (1, 3)))
        _, resp = ctx.one_sent(EndQuorumEpochResponse)
        assert (resp.error, resp.epoch) == (Errors.NONE, 2)
        ctx.poll()
        assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.CANDIDATE, 3, 1)


def test_later_successors_wait_a_strict_exponential_backoff() -> None:
    """testHandleEndQuorumRequestWithLowerPriorityToBecomeLeader: the second of two successors
    waits election_backoff_max >> 1 (Kafka's strict exponential backoff) before standing."""
    ctx = Context(1, (1, 2, 3), epoch=2, leader=2, election_backoff_max_ms=100,
                  retry_backoff_ms=50)
    ctx.drain()
    ctx.deliver(2, EndQuorumEpochRequest(2, 2, (3, 1)))
    ctx.sleep(49)
    assert ctx.node.epoch == 2
    ctx.sleep(1)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.CANDIDATE, 3, 1)
    assert len(ctx.sent(VoteRequest)) == 2


# ---------------------------------------------------------------------- leader: fetch handling


def test_leader_commits_only_once_a_follower_holds_its_epoch_start() -> None:
    """testListenerCommitCallbackAfterLeaderWrite."""
    ctx = Context(1, (1, 2), epoch=4, append_linger_ms=0)
    epoch = ctx.become_leader()
    assert ctx.node.high_watermark is None and ctx.log.end_offset == 1
    ctx.deliver(2, ctx.fetch_request(2, 1, epoch))
    _, resp = ctx.one_sent(FetchResponse)
    assert resp.error is Errors.NONE and ctx.node.high_watermark == 1
    last = ctx.node.append(["a", "b", "c"], epoch, ctx.now)
    ctx.poll()
    assert ctx.listener.last_commit_offset == 0
    ctx.deliver(2, ctx.fetch_request(2, 1, epoch, max_wait_ms=500))
    assert ctx.node.high_watermark == 1 and ctx.listener.last_commit_offset == 0
    ctx.deliver(2, ctx.fetch_request(2, 4, epoch, max_wait_ms=500))
    assert ctx.node.high_watermark == 4 and ctx.listener.last_commit_offset == last
    assert ctx.listener.data_batches == [("a", "b", "c")]


def test_leader_answers_a_diverging_fetch_at_once() -> None:
    """testLeaderImmediatelySendsDivergingEpoch: a fetch at 6 after epoch 2, against a log
    of epochs 1, 3 and 5, is told where epoch 1 ends (3), without waiting."""
    ctx = Context(1, (1, 2), epoch=5,
                  log=[(1, ["a", "b", "c"]), (3, ["d", "e", "f"]), (5, ["g", "h", "i"])])
    epoch = ctx.become_leader()
    ctx.deliver(2, ctx.fetch_request(2, 6, 2, max_wait_ms=500))
    _, resp = ctx.one_sent(FetchResponse)
    assert (resp.error, resp.epoch, resp.leader_id) == (Errors.NONE, epoch, 1)
    assert resp.diverging == OffsetAndEpoch(3, 1) and resp.batches == ()


def test_fetch_of_the_wrong_epoch_is_refused() -> None:
    """testInvalidFetchRequest (its epoch cases: the malformed ones cannot be sent here)."""
    ctx = Context(1, (1, 2), epoch=4)
    epoch = ctx.become_leader()
    for fetch_epoch, error in ((epoch + 1, Errors.UNKNOWN_LEADER_EPOCH),
                               (epoch - 1, Errors.FENCED_LEADER_EPOCH)):
        ctx.deliver(2, ctx.fetch_request(2, 0, 0, epoch=fetch_epoch))
        _, resp = ctx.one_sent(FetchResponse)
        assert (resp.error, resp.epoch, resp.leader_id) == (error, epoch, 1)


def test_parked_fetch_is_answered_empty_after_its_wait() -> None:
    """testPurgatoryFetchTimeout."""
    ctx = Context(1, (1, 2), epoch=4)
    epoch = ctx.become_leader()
    ctx.deliver(2, ctx.fetch_request(2, 1, epoch, max_wait_ms=500))
    ctx.drain()  # the first fetch at the epoch start moved the HW: answered at once
    ctx.deliver(2, ctx.fetch_request(2, 1, epoch, max_wait_ms=500))
    assert ctx.sent(FetchResponse) == []
    ctx.sleep(499)
    assert ctx.sent(FetchResponse) == []
    ctx.sleep(1)
    _, resp = ctx.one_sent(FetchResponse)
    assert resp.error is Errors.NONE and resp.batches == ()


def test_parked_fetch_is_answered_by_a_write() -> None:
    """testPurgatoryFetchSatisfiedByWrite."""
    ctx = Context(1, (1, 2), epoch=4, append_linger_ms=0)
    epoch = ctx.become_leader()
    ctx.deliver(2, ctx.fetch_request(2, 1, epoch, max_wait_ms=500))
    ctx.drain()
    ctx.deliver(2, ctx.fetch_request(2, 1, epoch, max_wait_ms=500))
    assert ctx.sent(FetchResponse) == []
    ctx.node.append(["a", "b", "c"], epoch, ctx.now)
    ctx.poll()
    _, resp = ctx.one_sent(FetchResponse)
    assert [b.records for b in resp.batches] == [("a", "b", "c")]


def test_parked_fetch_is_refused_with_the_new_leader_when_leadership_moves() -> None:
    """testPurgatoryFetchCompletedByFollowerTransition: the answer names the new epoch and
    leader, so the follower goes to it at once."""
    ctx = Context(1, (1, 2, 3), epoch=4)
    epoch = ctx.become_leader()
    ctx.deliver(2, ctx.fetch_request(2, 1, epoch, max_wait_ms=500))
    ctx.drain()
    ctx.deliver(2, ctx.fetch_request(2, 1, epoch, max_wait_ms=500))
    assert ctx.sent(FetchResponse) == []
    ctx.deliver(3, BeginQuorumEpochRequest(epoch + 1, 3))
    out = ctx.drain()
    begin = [e.message for e in out if isinstance(e.message, BeginQuorumEpochResponse)]
    fetch = [e.message for e in out if isinstance(e.message, FetchResponse)]
    assert [(b.error, b.epoch, b.leader_id) for b in begin] == [(Errors.NONE, epoch + 1, 3)]
    assert [(f.error, f.epoch, f.leader_id, f.batches) for f in fetch] == [
        (Errors.NOT_LEADER_OR_FOLLOWER, epoch + 1, 3, ())]


def test_a_fetch_acknowledges_the_leader_in_place_of_begin_quorum_epoch() -> None:
    """testFetchShouldBeTreatedAsLeaderAcknowledgement (with its timeouts: a request timeout
    well below the fetch timeout): a voter that found the leader by fetching acknowledges
    it, and a lost BeginQuorumEpoch is not sent again when its request times out; only the
    leader's heartbeat, every fetch_timeout_ms / 2, announces it again."""
    ctx = Context(1, (1, 2), epoch=4, request_timeout_ms=5000, fetch_timeout_ms=50_000)
    ctx.sleep(ctx.config.election_timeout_ms)
    ctx.drain()
    ctx.deliver(2, VoteResponse(5, None, True))
    assert [dst for dst, _ in ctx.sent(BeginQuorumEpochRequest)] == [2]
    ctx.deliver(2, ctx.fetch_request(2, 0, 0, max_wait_ms=500))
    state = ctx.node.leader_state
    assert state is not None and 2 in state.acknowledged
    ctx.sleep(ctx.config.request_timeout_ms)
    assert ctx.sent(BeginQuorumEpochRequest) == []
    ctx.sleep(ctx.config.fetch_timeout_ms // 2 - ctx.config.request_timeout_ms)
    assert [dst for dst, _ in ctx.sent(BeginQuorumEpochRequest)] == [2]


def test_a_lower_fetch_offset_never_moves_the_high_watermark_back() -> None:
    """testDescribeQuorumNonMonotonicFollowerFetch (its high-watermark part): a follower
    that lost its disk fetches from lower down; the HW stays. (Its DescribeQuorum part is
    not ported: for a fetch offset inside a batch Kafka records the start of that batch as
    the follower's end offset, kraftsim the fetch offset; kraftsim's followers only fetch
    at batch ends.)"""
    ctx = Context(1, (1, 2), append_linger_ms=0)
    epoch = ctx.become_leader()
    ctx.node.append(["foo", "bar"], epoch, ctx.now)
    ctx.poll()
    ctx.deliver(2, ctx.fetch_request(2, 3, epoch))
    assert ctx.node.high_watermark == 3
    ctx.drain()
    ctx.deliver(2, ctx.fetch_request(2, 1, epoch))
    _, resp = ctx.one_sent(FetchResponse)
    assert resp.high_watermark == 3 and ctx.node.high_watermark == 3


def test_observer_fetches_do_not_keep_a_leader_in_office() -> None:
    """testLeaderShouldResignLeadershipIfNotGetFetchRequestFromMajorityVoters,
    testLeaderShouldNotResignLeadershipIfOnlyOneVoters. (kraftsim checks the quorum once
    per window of 1.5 x fetch_timeout_ms rather than timing each fetch, so a leader may
    last up to two windows after its last majority.)"""
    ctx = Context(1, (1, 2, 3), election_timeout_ms=10_000)
    epoch = ctx.become_leader()
    window = ctx.config.fetch_timeout_ms * 3 // 2
    for step in range(4):
        ctx.deliver(2 + step % 2, ctx.fetch_request(2 + step % 2, 0, 0))
        ctx.sleep(window // 2)
    assert ctx.node.role is Role.LEADER
    last_voter_fetch = ctx.now - window // 2
    while ctx.node.role is Role.LEADER:
        ctx.deliver(9, ctx.fetch_request(9, 0, 0, epoch=epoch))
        ctx.sleep(100)
    assert ctx.node.role is Role.RESIGNED and ctx.node.epoch == epoch
    assert window <= ctx.now - last_voter_fetch <= 2 * window + 100

    alone = Context(1, (1,))
    alone.sleep(3 * window)
    assert alone.node.role is Role.LEADER


# ---------------------------------------------------------------------- follower: fetch responses


def test_follower_appends_what_it_fetched() -> None:
    """testFollowerReplication, testObserverReplication (kraftsim's followers write fetched
    batches durably at once, Kafka's alwaysFlush)."""
    for voters in ((1, 2), (2,)):
        ctx = Context(1, voters, epoch=5, leader=2)
        _, fetch = ctx.one_sent(FetchRequest)
        ctx.deliver(2, ctx.fetch_response(fetch, 2, batches=[Batch(0, 3, ("a", "b"))],
                                          high_watermark=0))
        assert ctx.log.end_offset == 2 and ctx.log.flushed_end == 2


def test_empty_fetch_response_still_moves_the_high_watermark() -> None:
    """testEmptyRecordSetInFetchResponse."""
    ctx = Context(1, (1, 2), epoch=5, leader=2)
    _, fetch = ctx.one_sent(FetchRequest)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, high_watermark=0))
    assert ctx.log.end_offset == 0 and ctx.node.high_watermark == 0
    _, fetch = ctx.one_sent(FetchRequest)
    assert (fetch.fetch_offset, fetch.last_fetched_epoch) == (0, 0)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, batches=[Batch(0, 5, ("a", "b"))],
                                      high_watermark=0))
    assert ctx.log.end_offset == 2 and ctx.node.high_watermark == 0
    _, fetch = ctx.one_sent(FetchRequest)
    assert (fetch.fetch_offset, fetch.last_fetched_epoch) == (2, 5)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, high_watermark=2))
    assert ctx.log.end_offset == 2 and ctx.node.high_watermark == 2


def test_follower_truncates_to_the_diverging_epoch_end_and_fetches_again() -> None:
    """testFollowerLogReconciliation."""
    ctx = Context(1, (1, 2), epoch=5, leader=2, log=[(3, ["foo", "bar"]), (3, ["baz"])])
    _, fetch = ctx.one_sent(FetchRequest)
    assert (fetch.fetch_offset, fetch.last_fetched_epoch) == (3, 3)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, high_watermark=1,
                                      diverging=OffsetAndEpoch(2, 3)))
    assert ctx.log.end_offset == 2 and ctx.log.flushed_end == 2
    _, fetch = ctx.one_sent(FetchRequest)
    assert (fetch.epoch, fetch.fetch_offset, fetch.last_fetched_epoch) == (5, 2, 3)


def test_fetch_response_after_becoming_candidate_is_ignored() -> None:
    """testFetchResponseIgnoredAfterBecomingCandidate."""
    ctx = Context(1, (1, 2), epoch=5, leader=2)
    _, fetch = ctx.one_sent(FetchRequest)
    ctx.sleep(ctx.config.fetch_timeout_ms)
    assert (ctx.node.role, ctx.node.epoch) == (Role.CANDIDATE, 6)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, batches=[Batch(0, 3, ("a", "b"))],
                                      high_watermark=0))
    assert ctx.log.end_offset == 0
    assert (ctx.node.role, ctx.node.epoch) == (Role.CANDIDATE, 6)


def test_fetch_response_after_becoming_prospective_is_ignored() -> None:
    """testFetchResponseIgnoredAfterBecomingCandidate with pre-vote: the follower whose fetch
    timed out is prospective, still in its epoch and knowing its leader; the late answer to
    the fetch it sent as a follower is not outstanding any more and moves nothing."""
    ctx = Context(1, (1, 2), epoch=5, leader=2, pre_vote=True)
    _, fetch = ctx.one_sent(FetchRequest)
    ctx.sleep(ctx.config.fetch_timeout_ms)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.PROSPECTIVE, 5, 2)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, batches=[Batch(0, 3, ("a", "b"))],
                                      high_watermark=2))
    assert ctx.log.end_offset == 0 and ctx.node.high_watermark is None
    assert ctx.node.role is Role.PROSPECTIVE


def test_a_duplicated_fetch_answer_is_handled_once() -> None:
    """An answer settles its fetch: the refusal moves nothing, so the follower fetches
    again at once (Kafka's maybeHandleCommonResponse counts it as handled); a copy of the
    refusal delivered later is not outstanding any more and sends nothing else."""
    ctx = Context(1, (1, 2), epoch=5, leader=2)
    _, fetch = ctx.one_sent(FetchRequest)
    refused = ctx.fetch_response(fetch, 2, error=Errors.NOT_LEADER_OR_FOLLOWER)
    ctx.sleep(3)
    ctx.deliver(2, refused)
    dst, again = ctx.one_sent(FetchRequest)
    assert dst == 2 and again.correlation_id != fetch.correlation_id
    ctx.sleep(1)
    ctx.deliver(2, refused)
    assert ctx.drain() == []
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 5, 2)


def test_fetch_response_from_the_previous_leader_is_ignored() -> None:
    """testFetchResponseIgnoredAfterBecomingFollowerOfDifferentLeader,
    testObserverHandleRetryFetchtToBootstrapServer (a late answer to a request given up)."""
    ctx = Context(1, (1, 2, 3), epoch=5, leader=2)
    _, fetch = ctx.one_sent(FetchRequest)
    ctx.deliver(3, BeginQuorumEpochRequest(6, 3))
    assert (ctx.node.leader_id, ctx.node.epoch) == (3, 6)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, batches=[Batch(0, 3, ("a", "b"))],
                                      high_watermark=0))
    assert ctx.log.end_offset == 0 and (ctx.node.leader_id, ctx.node.epoch) == (3, 6)

    ctx = Context(1, (1, 2, 3), epoch=5, leader=2, request_timeout_ms=1000)
    _, first = ctx.one_sent(FetchRequest)
    ctx.sleep(ctx.config.request_timeout_ms)
    _, second = ctx.one_sent(FetchRequest)
    assert second.correlation_id != first.correlation_id
    ctx.deliver(2, ctx.fetch_response(second, 2, batches=[Batch(0, 3, ("a", "b"))],
                                      high_watermark=0))
    ctx.deliver(2, ctx.fetch_response(first, 2, batches=[Batch(0, 3, ("a", "b"))],
                                      high_watermark=0))
    assert ctx.log.end_offset == 2 and len(ctx.log) == 1


# ---------------------------------------------------------------------- observers


def test_observer_never_stands() -> None:
    """testFollowerAsObserverDoesNotBecomeCandidateAfterFetchTimeout,
    testUnattachedAsObserverDoesNotBecomeCandidateAfterElectionTimeout,
    testObserverSendDiscoveryFetchAfterFetchTimeout: after its fetch timeout an observer
    stays the leader's follower in its epoch and fetches from any voter (here the only
    one); without a leader it stays unattached past any election timeout. It never asks
    for a vote. (test_kafka_raft_client_observer_cases.py has more voters.)"""
    ctx = Context(1, (2,), epoch=5, leader=2, log=[(3, ["foo"])])
    ctx.drain()
    ctx.sleep(ctx.config.fetch_timeout_ms)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 5, 2)
    dst, fetch = ctx.one_sent(FetchRequest)
    assert (dst, fetch.epoch, fetch.fetch_offset, fetch.last_fetched_epoch) == (2, 5, 1, 3)
    ctx.sleep(4 * ctx.config.fetch_timeout_ms)
    assert ctx.node.role is Role.FOLLOWER
    assert ctx.sent(VoteRequest) == []

    ctx = Context(1, (2,), epoch=5)
    dst, fetch = ctx.one_sent(FetchRequest)
    assert dst == 2 and (fetch.epoch, fetch.fetch_offset, fetch.last_fetched_epoch) == (5, 0, 0)
    ctx.sleep(2 * ctx.config.election_timeout_ms)
    assert ctx.node.role is Role.UNATTACHED
    assert ctx.sent(VoteRequest) == []


def test_observer_discovers_the_leader_from_a_fenced_fetch() -> None:
    """testInitializeObserverNoPreviousState, testObserverQuorumDiscoveryFailure,
    testObserverFetchWithNoLocalId: discovery fetches go to a voter drawn at random; an error that
    names no newer epoch is retried after retry_backoff_ms; one that does makes the
    observer follow that leader and fetch from it."""
    ctx = Context(1, (2, 3))
    dst, fetch = ctx.one_sent(FetchRequest)
    assert dst in (2, 3) and (fetch.epoch, fetch.fetch_offset, fetch.last_fetched_epoch) == (
        0, 0, 0)
    ctx.deliver(dst, ctx.fetch_response(fetch, None, epoch=0,
                                        error=Errors.NOT_LEADER_OR_FOLLOWER))
    assert ctx.sent(FetchRequest) == []
    ctx.sleep(ctx.config.retry_backoff_ms)
    dst, fetch = ctx.one_sent(FetchRequest)
    ctx.deliver(dst, ctx.fetch_response(fetch, 2, epoch=5, error=Errors.FENCED_LEADER_EPOCH))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 5, 2)
    dst, fetch = ctx.one_sent(FetchRequest)
    assert dst == 2 and fetch.epoch == 5
    ctx.deliver(2, ctx.fetch_response(fetch, 2, batches=[Batch(0, 3, ("a", "b", "c"))],
                                      high_watermark=0))
    assert ctx.log.end_offset == 3 and ctx.log.last_epoch == 3


# ---------------------------------------------------------------------- begin quorum epoch


def test_begin_quorum_epoch_makes_a_voter_follow() -> None:
    """testHandleBeginQuorumRequest, testHandleBeginQuorumResponse (a restarted leader
    hearing of the next epoch's leader)."""
    for voted, leader in ((2, None), (1, 1)):
        ctx = Context(1, (1, 2), epoch=2, voted=voted, leader=leader)
        ctx.drain()
        epoch = 2 if leader is None else 3
        ctx.deliver(2, BeginQuorumEpochRequest(epoch, 2))
        _, resp = ctx.one_sent(BeginQuorumEpochResponse)
        assert (resp.error, resp.epoch, resp.leader_id) == (Errors.NONE, epoch, 2)
        assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, epoch, 2)


# ---------------------------------------------------------------------- listeners


def test_new_leader_claims_only_after_its_listener_reaches_the_epoch_start() -> None:
    """testHandleLeaderChangeFiresAfterListenerReachesEpochStartOffsetOnEmptyLog and
    ...EpochStartOffset."""
    ctx = Context(1, (1, 2))
    epoch = ctx.become_leader()
    assert ctx.listener.committed == [] and LeaderAndEpoch(1, epoch) not in ctx.listener.leaders
    ctx.deliver(2, ctx.fetch_request(2, 0, 0))
    assert ctx.listener.committed == [] and LeaderAndEpoch(1, epoch) not in ctx.listener.leaders
    ctx.deliver(2, ctx.fetch_request(2, 1, epoch))
    assert ctx.listener.last_commit_offset == 0
    assert ctx.listener.current_leader == LeaderAndEpoch(1, epoch)

    ctx = Context(1, (1, 2), epoch=4,
                  log=[(1, ["1", "2", "3"]), (1, ["4", "5", "6"]), (2, ["7", "8", "9"])])
    epoch = ctx.become_leader()
    assert ctx.log.end_offset == 10
    ctx.deliver(2, ctx.fetch_request(2, 3, 1, max_wait_ms=500))
    assert ctx.listener.committed == [] and LeaderAndEpoch(1, epoch) not in ctx.listener.leaders
    ctx.deliver(2, ctx.fetch_request(2, 10, epoch, max_wait_ms=500))
    assert ctx.listener.data_batches == [("1", "2", "3"), ("4", "5", "6"), ("7", "8", "9")]
    assert len(ctx.listener.committed) == 4 and ctx.listener.committed[-1].is_control
    assert ctx.listener.last_commit_offset == 9
    assert ctx.listener.current_leader == LeaderAndEpoch(1, epoch)


def test_late_listener_catches_up_before_hearing_of_leadership() -> None:
    """testLateRegisteredListenerCatchesUp."""
    from tests.raft.kafka_context import RecordingListener

    ctx = Context(1, (1, 2), epoch=4,
                  log=[(1, ["1", "2", "3"]), (1, ["4", "5", "6"]), (2, ["7", "8", "9"])])
    epoch = ctx.become_leader()
    ctx.deliver(2, ctx.fetch_request(2, 10, epoch))
    assert ctx.node.high_watermark == 10 and ctx.listener.last_commit_offset == 9
    second = RecordingListener()
    ctx.node.register_listener(second)
    assert second.last_commit_offset == 9
    assert second.current_leader == LeaderAndEpoch(1, epoch)
    assert len(second.committed) == 4


def test_follower_delivers_only_below_the_leaders_high_watermark() -> None:
    """testHandleCommitCallbackFiresAfterFollowerHighWatermarkAdvances."""
    ctx = Context(1, (1, 2), epoch=5, leader=2)
    assert ctx.node.high_watermark is None
    _, fetch = ctx.one_sent(FetchRequest)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, batches=[Batch(0, 3, ("a", "b", "c"))],
                                      high_watermark=0))
    assert ctx.node.high_watermark == 0 and ctx.listener.committed == []
    _, fetch = ctx.one_sent(FetchRequest)
    assert (fetch.fetch_offset, fetch.last_fetched_epoch) == (3, 3)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, batches=[Batch(3, 3, ("d", "e", "f"))],
                                      high_watermark=3))
    assert ctx.node.high_watermark == 3
    assert ctx.listener.data_batches == [("a", "b", "c")]
    assert ctx.listener.last_commit_offset == 2


@pytest.mark.parametrize("state", ["voted", "candidate"])
def test_listener_catches_up_during_an_election(state: str) -> None:
    """testHandleCommitCallbackFiresInVotedState / ...InCandidateState: the high watermark
    outlives the leadership, so a new listener still reads up to it."""
    from tests.raft.kafka_context import RecordingListener

    ctx = Context(1, (1, 2), epoch=6,
                  log=[(2, ["a", "b", "c"]), (4, ["d", "e", "f"]), (4, ["g", "h", "i"])])
    epoch = ctx.become_leader()
    ctx.deliver(2, ctx.fetch_request(2, 10, epoch))
    assert ctx.node.high_watermark == 10
    if state == "voted":
        ctx.deliver(2, ctx.vote_request(2, epoch + 1, epoch, 10))
        assert (ctx.node.role, ctx.node.voted_id) == (Role.VOTED, 2)
    else:
        ctx.deliver(2, ctx.vote_request(2, epoch + 1, epoch, 9))
        assert ctx.node.role is Role.UNATTACHED
        ctx.sleep(2 * ctx.config.election_timeout_ms)
        assert (ctx.node.role, ctx.node.epoch) == (Role.CANDIDATE, epoch + 2)
    assert ctx.node.high_watermark == 10
    second = RecordingListener()
    ctx.node.register_listener(second)
    assert second.last_commit_offset == 9
    assert all(leader.leader_id != 1 for leader in second.leaders)


def test_listener_registered_while_unattached_or_following_hears_of_the_leader() -> None:
    """testHandleLeaderChangeFiresAfterUnattachedRegistration,
    testHandleLeaderChangeFiresAfterFollowerRegistration."""
    ctx = Context(1, (1, 2), epoch=7)
    assert ctx.listener.current_leader == LeaderAndEpoch(None, 7)
    ctx.deliver(2, BeginQuorumEpochRequest(7, 2))
    assert ctx.listener.current_leader == LeaderAndEpoch(2, 7)

    ctx = Context(1, (1, 2), epoch=7, leader=2)
    assert ctx.listener.current_leader == LeaderAndEpoch(2, 7)


def test_listener_of_a_resigned_leader_is_told_the_leader_is_unknown() -> None:
    """testHandleLeaderChangeFiresAfterResignRegistration, where kraftsim differs on
    purpose: Kafka tells a Resigned node's listeners nothing (its controller learns of the
    lost leadership when an append fails); kraftsim tells them (no leader, same epoch), and
    its controller renounces on that."""
    ctx = Context(1, (1, 2), epoch=7, voted=1, leader=1)
    assert ctx.node.role is Role.RESIGNED
    assert ctx.listener.current_leader == LeaderAndEpoch(None, 7)


# ---------------------------------------------------------------------- describe quorum


def test_describe_quorum_non_leader() -> None:
    """testDescribeQuorumNonLeader: a voter that does not lead answers
    NOT_LEADER_OR_FOLLOWER for the metadata partition, and nothing else."""
    ctx = Context(1, (1, 2, 3), epoch=2)
    answer = ctx.node.describe_quorum(ctx.now)
    assert answer.error is Errors.NOT_LEADER_OR_FOLLOWER
    assert (answer.topic_name, answer.partition_index) == ("__cluster_metadata", 0)
    assert (answer.current_voters, answer.observers) == ((), ())


def test_describe_quorum_with_only_static_voters() -> None:
    """testDescribeQuorumWithOnlyStaticVoters: a new leader knows its own end offset (its
    LeaderChange record) and nothing of the follower; no high watermark yet."""
    ctx = Context(1, (1, 2))
    epoch = ctx.become_leader()
    answer = ctx.node.describe_quorum(ctx.now)
    assert (answer.error, answer.leader_id, answer.leader_epoch, answer.high_watermark) == \
        (Errors.NONE, 1, epoch, -1)
    assert answer.current_voters == (ReplicaDescription(1, 1, ctx.now, ctx.now),
                                     ReplicaDescription(2, -1, -1, -1))
    assert answer.observers == ()


def test_describe_quorum_with_followers() -> None:
    """testDescribeQuorumWithFollowers (static voters): before any fetch only the leader is
    known; a follower's fetch at the leader's end is caught up at its time; a write moves
    the leader's end; the other follower catching up moves the high watermark; a leader
    that lost its quorum answers NOT_LEADER_OR_FOLLOWER."""
    ctx = Context(1, (1, 2, 3), append_linger_ms=0)
    epoch = ctx.become_leader()
    answer = ctx.node.describe_quorum(ctx.now)
    assert answer.high_watermark == -1
    assert answer.current_voters == (ReplicaDescription(1, 1, ctx.now, ctx.now),
                                     ReplicaDescription(2, -1, -1, -1),
                                     ReplicaDescription(3, -1, -1, -1))
    ctx.sleep(100)
    first_fetch = ctx.now
    ctx.deliver(2, ctx.fetch_request(2, 1, epoch))
    assert ctx.node.high_watermark == 1
    ctx.node.append(["foo", "bar"], epoch, ctx.now)
    ctx.poll()
    ctx.sleep(100)
    answer = ctx.node.describe_quorum(ctx.now)
    assert answer.high_watermark == 1
    assert answer.current_voters == (ReplicaDescription(1, 3, ctx.now, ctx.now),
                                     ReplicaDescription(2, 1, first_fetch, first_fetch),
                                     ReplicaDescription(3, -1, -1, -1))
    ctx.sleep(100)
    second_fetch = ctx.now
    ctx.deliver(3, ctx.fetch_request(3, 3, epoch))
    ctx.sleep(100)
    answer = ctx.node.describe_quorum(ctx.now)
    assert answer.high_watermark == 3
    assert answer.current_voters == (ReplicaDescription(1, 3, ctx.now, ctx.now),
                                     ReplicaDescription(2, 1, first_fetch, first_fetch),
                                     ReplicaDescription(3, 3, second_fetch, second_fetch))
    ctx.sleep(2 * ctx.config.fetch_timeout_ms * 3 // 2)  # kraftsim: up to two check windows
    assert ctx.node.role is not Role.LEADER
    assert ctx.node.describe_quorum(ctx.now).error is Errors.NOT_LEADER_OR_FOLLOWER


def test_describe_quorum_with_observer() -> None:
    """testDescribeQuorumWithObserver (static voters): an observer's first fetch, behind
    the leader, is not caught up; its fetch at the end is; it falls behind a write without
    losing its caught-up time; five minutes without a fetch leave it out; a fetch from a
    negative replica id (not a replica's) changes nothing."""
    ctx = Context(1, (1, 2), append_linger_ms=0)
    epoch = ctx.become_leader()
    ctx.sleep(100)
    follower_fetch = caught_up = ctx.now
    ctx.deliver(2, ctx.fetch_request(2, 1, epoch))
    assert ctx.node.high_watermark == 1
    ctx.sleep(100)
    observer_fetch = ctx.now
    ctx.deliver(3, ctx.fetch_request(3, 0, 0))
    ctx.sleep(100)
    answer = ctx.node.describe_quorum(ctx.now)
    assert answer.current_voters == (ReplicaDescription(1, 1, ctx.now, ctx.now),
                                     ReplicaDescription(2, 1, follower_fetch, follower_fetch))
    assert answer.observers == (ReplicaDescription(3, 0, observer_fetch, -1),)

    ctx.sleep(100)
    observer_fetch = ctx.now
    ctx.deliver(3, ctx.fetch_request(3, 1, epoch))
    ctx.sleep(100)
    answer = ctx.node.describe_quorum(ctx.now)
    assert answer.observers == (ReplicaDescription(3, 1, observer_fetch, observer_fetch),)

    ctx.sleep(100)
    ctx.node.append(["foo", "bar"], epoch, ctx.now)
    ctx.poll()
    answer = ctx.node.describe_quorum(ctx.now)
    assert answer.current_voters[0] == ReplicaDescription(1, 3, ctx.now, ctx.now)
    assert answer.observers == (ReplicaDescription(3, 1, observer_fetch, observer_fetch),)

    check_quorum_ms = ctx.config.fetch_timeout_ms * 3 // 2
    remaining = OBSERVER_SESSION_TIMEOUT_MS
    while remaining > 0:  # the follower keeps the leader in office
        follower_fetch = ctx.now
        ctx.deliver(2, ctx.fetch_request(2, 1, epoch))
        ctx.sleep(check_quorum_ms - 1)
        remaining -= check_quorum_ms - 1
    answer = ctx.node.describe_quorum(ctx.now)
    assert answer.error is Errors.NONE
    assert answer.current_voters == (ReplicaDescription(1, 3, ctx.now, ctx.now),
                                     ReplicaDescription(2, 1, follower_fetch, caught_up))
    assert answer.observers == ()

    ctx.deliver(-1, ctx.fetch_request(-1, 0, 0))
    assert ctx.node.describe_quorum(ctx.now).observers == ()
