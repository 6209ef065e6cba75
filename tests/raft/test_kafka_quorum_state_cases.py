"""Cases of Kafka's QuorumStateTest, CandidateStateTest and FollowerStateTest.

Kafka tests its election states as objects (QuorumState and one class per role);
kraftsim keeps the roles inside RaftNode, so each case is run on a node built
from its disk (tests/raft/kafka_context.py) and checked through its role, epoch,
vote, persisted election state, timers and messages.

Not ported, with the reason:

- The state objects' own transition API, legal or refused (Kafka's QuorumState throws
  on an illegal one): kraftsim changes role only as messages and timers drive it, so a
  refused transition cannot be asked for, and the legal ones are those the
  KafkaRaftClientTest cases drive (tests/raft/test_kafka_raft_client*_cases.py):
  testCandidateToResigned, testCandidateToLeader,
  testCandidateToLeaderWithoutGrantedVote, testCandidateToFollower,
  testCandidateToAnyStateLowerEpoch, testLeaderToResigned, testLeaderToCandidate,
  testLeaderToFollower, testLeaderToUnattachedVoted, testLeaderToAnyStateLowerEpoch,
  testCannotFollowOrVoteForSelf, testUnattachedToLeaderOrResigned,
  testUnattachedVotedSameEpoch, testUnattachedToCandidate,
  testUnattachedToFollowerSameEpoch, testUnattachedToFollowerHigherEpoch,
  testUnattachedToAnyStateLowerEpoch, testUnattachedVotedToInvalidLeaderOrResigned,
  testUnattachedVotedToCandidate, testObserverFromUnattachedVotedToCandidate,
  testUnattachedVotedToUnattachedVotedSameEpoch,
  testUnattachedVotedToFollowerSameEpoch, testUnattachedVotedToUnattachedSameEpoch,
  testUnattachedVotedToAnyStateLowerEpoch, testAllStatesToUnattachedFailInSameEpoch,
  testFollowerToFollowerSameEpoch, testFollowerToLeaderOrResigned,
  testFollowerToCandidate, testFollowerToUnattachedSameEpoch,
  testFollowerToUnattachedVotedSameEpoch, testFollowerToUnattachedVotedHigherEpoch,
  testFollowerToAnyStateLowerEpoch, testObserverCannotBecomeCandidateOrLeader,
  testObserverWithIdCanVote, testHasRemoteLeader.
- Voter endpoints (KIP-853; kraftsim's voters have none):
  testInitializeAsUnattachedWhenMissingEndpoints,
  testFollowerToFollowerSameEpochAndMoreEndpoints, CandidateStateTest.testLeaderEndpoints,
  FollowerStateTest.testLeaderIdAndEndpoint.
- CandidateStateTest's checks of its own arguments (a candidate's own id rejecting it,
  a voter set without it): testCannotRejectVoteFromLocalId, testInvalidVoterSet; kraftsim
  makes a node a candidate only as a voter, and never records its own answer.
- A node without a local id (every kraftsim node has one): testInitializeWithEmptyLocalId,
  testNoLocalIdInitializationFailsIfElectionStateHasVotedCandidate.
- An election state that cannot be read (testInitializeWithCorruptedStore): a simulated
  node's election state is kept by its simulated disk, which is wiped or kept whole, never
  unreadable.
"""

from __future__ import annotations

import pytest

from raft import ElectionState, Role
from raft.messages import (
    BeginQuorumEpochRequest,
    Errors,
    FetchRequest,
    VoteRequest,
    VoteResponse,
)
from tests.raft.kafka_context import Context

# ----------------------------------------------------------------- QuorumStateTest: start-up


def test_primordial_epoch() -> None:
    """testInitializePrimordialEpoch: an empty disk starts Unattached in epoch 0; standing
    means epoch 1 with the node's own vote."""
    ctx = Context(1, (1, 2, 3))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.UNATTACHED, 0, None)
    ctx.sleep(ctx.config.election_timeout_ms)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.CANDIDATE, 1, 1)
    assert ctx.storage.election == ElectionState(1, 1, None)


def test_starts_unattached_with_a_full_election_timeout() -> None:
    """testInitializeAsUnattached: the timeout is election_timeout_ms plus the jitter drawn."""
    ctx = Context(1, (1, 2, 3), epoch=5, election_jitter_ms=2500, seed=4)
    assert (ctx.node.role, ctx.node.epoch) == (Role.UNATTACHED, 5)
    deadline = ctx.node.next_deadline()
    assert deadline is not None and 1000 <= deadline < 1000 + 2500


def test_starts_as_follower_with_a_fetch_timeout() -> None:
    """testInitializeAsFollower."""
    ctx = Context(1, (1, 2, 3), epoch=5, leader=2)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 5, 2)
    ctx.sleep(ctx.config.fetch_timeout_ms - 1)
    assert ctx.node.role is Role.FOLLOWER
    ctx.sleep(1)
    assert (ctx.node.role, ctx.node.epoch) == (Role.CANDIDATE, 6)


def test_starts_voted_with_its_vote_and_an_election_timeout() -> None:
    """testInitializeAsVoted."""
    ctx = Context(1, (1, 2, 3), epoch=5, voted=2)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.VOTED, 5, 2)
    assert ctx.node.next_deadline() == ctx.config.election_timeout_ms


def test_starts_as_the_candidate_it_was() -> None:
    """testInitializeAsResignedCandidate: epoch 5, its own vote only, a fresh election
    timeout, the other voters asked."""
    ctx = Context(1, (1, 2, 3), epoch=5, voted=1)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.CANDIDATE, 5, 1)
    assert ctx.storage.election == ElectionState(5, 1, None)
    assert sorted(dst for dst, _ in ctx.sent(VoteRequest)) == [2, 3]
    ctx.sleep(ctx.config.election_timeout_ms - 1)
    assert ctx.node.epoch == 5  # the election timeout, then a backoff, before epoch 6


def test_starts_resigned_after_leading() -> None:
    """testInitializeAsResignedLeader: never the leader of the same epoch twice (unflushed
    records of the old life would be ambiguous), every other voter still to acknowledge."""
    ctx = Context(1, (1, 2, 3), epoch=5, voted=1, leader=1)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.RESIGNED, 5, None)
    assert ctx.storage.election == ElectionState(5, 1, 1)
    ends = ctx.drain()
    assert sorted(e.dst for e in ends) == [2, 3]
    assert ctx.node.next_deadline() == ctx.config.election_timeout_ms


# -------------------------------------------------------------- QuorumStateTest: transitions


def test_a_higher_epoch_keeps_the_election_timer_of_a_waiting_voter() -> None:
    """testUnattachedToUnattached, testUnattachedVotedToUnattachedHigherEpoch: learning of a
    higher epoch with no leader does not restart the election timeout."""
    for voted in (None, 2):
        ctx = Context(1, (1, 2, 3), epoch=5, voted=voted)
        deadline = ctx.node.next_deadline()
        ctx.sleep(500)
        ctx.deliver(3, ctx.vote_request(3, 6, 0, 0))  # refused if voted: same log, new epoch
        assert (ctx.node.epoch, ctx.node.leader_id) == (6, None)
        if ctx.node.role is Role.UNATTACHED:
            assert ctx.node.next_deadline() == deadline


def test_a_candidate_learning_a_higher_epoch_keeps_its_election_timer() -> None:
    """testCandidateToUnattached: a candidate that learns of a higher epoch with no leader
    (a vote request it refuses) is unattached there, its vote gone, and the election
    timeout it started as a candidate keeps running."""
    ctx = Context(1, (1, 2, 3), epoch=4, log=[(4, ["a", "b"])])
    ctx.sleep(ctx.config.election_timeout_ms)
    assert (ctx.node.role, ctx.node.epoch) == (Role.CANDIDATE, 5)
    deadline = ctx.node.next_deadline()
    ctx.sleep(300)
    ctx.deliver(2, ctx.vote_request(2, 6, 4, 1))  # behind: refused
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.UNATTACHED, 6, None)
    assert ctx.storage.election == ElectionState(6, None, None)
    assert ctx.node.next_deadline() == deadline


@pytest.mark.parametrize("role", ["leader", "follower", "resigned"])
def test_leaving_a_leader_behind_for_a_higher_epoch_draws_a_new_election_timeout(
        role: str) -> None:
    """testLeaderToUnattached, testFollowerToUnattachedHigherEpoch (and a Resigned node): a
    node that had a leader (itself or another) in its epoch and learns of a higher one with
    no leader waits a whole new election timeout from then."""
    if role == "leader":
        ctx = Context(1, (1, 2, 3), epoch=4, log=[(4, ["a", "b"])])
        ctx.become_leader()
    elif role == "follower":
        ctx = Context(1, (1, 2, 3), epoch=5, leader=2, log=[(4, ["a", "b"])])
    else:
        ctx = Context(1, (1, 2, 3), epoch=5, voted=1, leader=1, log=[(4, ["a", "b"])])
    assert ctx.node.role is Role[role.upper()] and ctx.node.epoch == 5
    ctx.sleep(300)
    ctx.deliver(2, ctx.vote_request(2, 6, 4, 1))  # behind: refused
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.UNATTACHED, 6, None)
    assert ctx.node.next_deadline() == ctx.now + ctx.config.election_timeout_ms


def test_a_vote_restarts_the_election_timeout() -> None:
    """testUnattachedVotedHigherEpoch, testCandidateToUnattachedVoted: voting for a candidate
    (here a candidate that had stood itself and learns of a higher epoch) starts a whole new
    election timeout: the candidate voted for has as good a chance as this node."""
    ctx = Context(1, (1, 2, 3), epoch=4)
    ctx.sleep(ctx.config.election_timeout_ms)
    assert (ctx.node.role, ctx.node.epoch) == (Role.CANDIDATE, 5)
    ctx.sleep(300)
    ctx.deliver(2, ctx.vote_request(2, 6, 0, 0))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.VOTED, 6, 2)
    assert ctx.storage.election == ElectionState(6, 2, None)
    assert ctx.node.next_deadline() == ctx.now + ctx.config.election_timeout_ms


def test_following_the_leader_of_a_higher_epoch_drops_the_vote_and_restarts_the_fetch_timeout(
        ) -> None:
    """testFollowerToFollowerHigherEpoch, testUnattachedVotedToFollowerHigherEpoch: a voter
    that voted in epoch 5, or followed 2 there, hears of leader 3 in epoch 6: it follows 3
    (no vote in epoch 6 on disk), fetches from it at once, and its fetch timeout starts
    then."""
    for voted, leader in ((2, None), (None, 2)):
        ctx = Context(1, (1, 2, 3), epoch=5, voted=voted, leader=leader)
        ctx.sleep(400)
        ctx.drain()
        ctx.deliver(3, BeginQuorumEpochRequest(6, 3))
        assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id, ctx.node.voted_id) == (
            Role.FOLLOWER, 6, 3, None)
        assert ctx.storage.election == ElectionState(6, None, 3)
        [(dst, fetch)] = ctx.sent(FetchRequest)
        assert (dst, fetch.epoch) == (3, 6)
        ctx.sleep(ctx.config.fetch_timeout_ms - 1)
        assert ctx.node.role is Role.FOLLOWER
        ctx.sleep(1)
        assert ctx.node.role is Role.CANDIDATE


def test_a_voter_follows_a_leader_outside_its_voter_set() -> None:
    """testCanBecomeFollowerOfNonVoter: a leader this node does not count as a voter is
    still followed when it announces itself in a new epoch."""
    ctx = Context(1, (1, 2, 3), epoch=5)
    ctx.deliver(9, BeginQuorumEpochRequest(6, 9))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 6, 9)
    [(dst, fetch)] = ctx.sent(FetchRequest)
    assert (dst, fetch.epoch) == (9, 6)


def test_an_observer_leaves_its_leader_for_a_higher_epoch_and_looks_for_the_next() -> None:
    """testObserverFollowerToUnattached, testObserverUnattachedToFollower: an observer
    following 2 in epoch 5 told of epoch 6 (no leader named) is unattached in epoch 6 with
    no election timeout of its own: it asks the voters, and follows the leader it is told
    of."""
    ctx = Context(4, (1, 2, 3), epoch=5, leader=2)
    _, fetch = ctx.one_sent(FetchRequest)
    ctx.deliver(2, ctx.fetch_response(fetch, None, epoch=6, error=Errors.FENCED_LEADER_EPOCH))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.UNATTACHED, 6, None)
    dst, fetch = ctx.one_sent(FetchRequest)
    assert dst in (1, 2, 3) and fetch.epoch == 6
    ctx.sleep(10 * ctx.config.election_timeout_ms)
    assert ctx.sent(VoteRequest) == [] and ctx.node.role is Role.UNATTACHED
    ctx.deliver(3, BeginQuorumEpochRequest(6, 3))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 6, 3)


def test_high_watermark_outlives_every_role_but_a_new_leaders() -> None:
    """testHighWatermarkRetained: a follower's HW stays through Unattached, Voted and
    Candidate; a new leader knows none until its own epoch commits."""
    ctx = Context(1, (1, 2), epoch=5, leader=2, log=[(5, list("abcdefghij"))])
    _, fetch = ctx.one_sent(FetchRequest)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, high_watermark=10))
    assert ctx.node.high_watermark == 10
    ctx.deliver(2, ctx.vote_request(2, 6, 5, 5))  # refused: its log is behind
    assert (ctx.node.role, ctx.node.epoch, ctx.node.high_watermark) == (Role.UNATTACHED, 6, 10)
    ctx.deliver(2, ctx.vote_request(2, 7, 5, 10))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.high_watermark) == (Role.VOTED, 7, 10)
    ctx.sleep(ctx.config.election_timeout_ms)
    assert (ctx.node.role, ctx.node.high_watermark) == (Role.CANDIDATE, 10)
    ctx.deliver(2, VoteResponse(ctx.node.epoch, None, True))
    assert ctx.node.role is Role.LEADER and ctx.node.high_watermark is None


# ---------------------------------------------------------------------- CandidateStateTest


def test_single_voter_candidate_wins_on_its_own_vote() -> None:
    """CandidateStateTest.testSingleNodeQuorum."""
    ctx = Context(1, (1,))
    ctx.sleep(ctx.config.election_timeout_ms)
    assert (ctx.node.role, ctx.node.epoch) == (Role.LEADER, 1)


def test_two_voters_one_answer_decides() -> None:
    """testTwoNodeQuorumVoteGranted, testTwoNodeQuorumVoteRejected."""
    for granted in (True, False):
        ctx = Context(1, (1, 2))
        ctx.sleep(ctx.config.election_timeout_ms)
        ctx.deliver(2, VoteResponse(1, None, granted))
        if granted:
            assert ctx.node.role is Role.LEADER
        else:  # lost: it backs off before the next epoch
            assert (ctx.node.role, ctx.node.epoch) == (Role.CANDIDATE, 1)
            ctx.sleep(ctx.config.retry_backoff_ms + ctx.config.election_backoff_max_ms)
            assert (ctx.node.role, ctx.node.epoch) == (Role.CANDIDATE, 2)


def test_three_voters_need_one_grant_or_two_rejections() -> None:
    """testThreeNodeQuorumVoteGranted, testThreeNodeQuorumVoteRejected."""
    ctx = Context(1, (1, 2, 3))
    ctx.sleep(ctx.config.election_timeout_ms)
    ctx.deliver(2, VoteResponse(1, None, True))
    assert ctx.node.role is Role.LEADER

    ctx = Context(1, (1, 2, 3), election_backoff_max_ms=0, retry_backoff_ms=1)
    ctx.sleep(ctx.config.election_timeout_ms)
    ctx.deliver(2, VoteResponse(1, None, False))
    assert ctx.node.next_deadline() == 2 * ctx.config.election_timeout_ms  # still running
    ctx.deliver(3, VoteResponse(1, None, False))
    assert ctx.node.next_deadline() == ctx.now + 1  # lost: only the backoff left


def test_answers_from_non_voters_count_neither_way() -> None:
    """testCannotGrantOrRejectNonVoters (Kafka refuses to record them)."""
    ctx = Context(1, (1, 2, 3))
    ctx.sleep(ctx.config.election_timeout_ms)
    ctx.deliver(9, VoteResponse(1, None, True))
    assert ctx.node.role is Role.CANDIDATE
    ctx = Context(1, (1, 2, 3), election_backoff_max_ms=0, retry_backoff_ms=1)
    ctx.sleep(ctx.config.election_timeout_ms)
    ctx.deliver(8, VoteResponse(1, None, False))
    ctx.deliver(9, VoteResponse(1, None, False))
    ctx.deliver(2, VoteResponse(1, None, False))
    assert ctx.node.next_deadline() == 2 * ctx.config.election_timeout_ms  # not lost


def test_a_voters_answer_counts_once() -> None:
    """testIdempotentGrant, testIdempotentReject, testCannotChangeVoteGrantedToRejected,
    testCannotChangeVoteRejectedToGranted: a repeated or contradicting answer from the same
    voter changes nothing (Kafka throws on the contradiction)."""
    ctx = Context(1, (1, 2, 3, 4, 5), election_backoff_max_ms=0, retry_backoff_ms=1)
    ctx.sleep(ctx.config.election_timeout_ms)
    timeout = 2 * ctx.config.election_timeout_ms
    for _ in range(2):
        ctx.deliver(2, VoteResponse(1, None, False))
    ctx.deliver(2, VoteResponse(1, None, True))
    ctx.deliver(3, VoteResponse(1, None, True))
    assert ctx.node.role is Role.CANDIDATE  # 1 and 3 granted: no majority of five
    ctx.deliver(3, VoteResponse(1, None, False))
    ctx.deliver(4, VoteResponse(1, None, False))
    assert ctx.node.next_deadline() == timeout  # 2 and 4 rejected: not lost yet
    ctx.deliver(5, VoteResponse(1, None, True))
    assert ctx.node.role is Role.LEADER


def test_candidate_grants_no_vote_in_its_epoch_and_persists_its_own() -> None:
    """CandidateStateTest.testGrantVote, testElectionState."""
    ctx = Context(1, (1, 2, 3))
    ctx.sleep(ctx.config.election_timeout_ms)
    assert ctx.storage.election == ElectionState(1, 1, None)
    ctx.drain()
    for candidate in (2, 3):
        ctx.deliver(candidate, ctx.vote_request(candidate, 1, 0, 0))
        [(_, resp)] = ctx.sent(VoteResponse)
        assert not resp.vote_granted
    assert ctx.node.voted_id == 1


# ---------------------------------------------------------------------- FollowerStateTest


def test_follower_fetch_timeout_restarts_with_each_good_answer() -> None:
    """FollowerStateTest.testFetchTimeoutExpiration."""
    ctx = Context(1, (1, 2), epoch=5, leader=2, election_timeout_ms=10_000)
    _, fetch = ctx.one_sent(FetchRequest)
    ctx.sleep(1500)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, high_watermark=0))
    ctx.sleep(ctx.config.fetch_timeout_ms - 1)
    assert ctx.node.role is Role.FOLLOWER
    ctx.sleep(1)
    assert ctx.node.role is Role.CANDIDATE


def test_follower_high_watermark_never_moves_back() -> None:
    """FollowerStateTest.testMonotonicHighWatermark (Kafka throws on a lower HW; kraftsim
    keeps the higher one)."""
    ctx = Context(1, (1, 2), epoch=5, leader=2, log=[(5, list("abcdefghij"))])
    _, fetch = ctx.one_sent(FetchRequest)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, high_watermark=10))
    _, fetch = ctx.one_sent(FetchRequest)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, high_watermark=5))
    assert ctx.node.high_watermark == 10


def test_follower_grants_no_vote_in_its_leaders_epoch() -> None:
    """FollowerStateTest.testGrantVote."""
    ctx = Context(1, (1, 2, 3), epoch=5, leader=2)
    ctx.drain()
    for candidate in (2, 3):
        ctx.deliver(candidate, ctx.vote_request(candidate, 5, 0, 0))
        [(_, resp)] = ctx.sent(VoteResponse)
        assert not resp.vote_granted
