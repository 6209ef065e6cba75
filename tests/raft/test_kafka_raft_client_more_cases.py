"""More cases of Kafka's KafkaRaftClientTest, run against one RaftNode
(tests/raft/kafka_context.py): those test_kafka_raft_client_cases.py leaves open.

Each test names the Kafka case (or the KafkaRaftClient rule a case goes through) it
follows. As there, the cases run without KIP-996 pre-vote unless they say otherwise.

Kafka's ``resign(epoch)`` is ``RaftNode.resign(now, epoch)`` here; without an epoch,
``resign(now)`` gives up whatever leadership the node holds (what a stopping node does).

KafkaRaftClientTest's cases not ported anywhere (with test_kafka_raft_client_cases.py,
test_kafka_raft_fetch_cases.py and test_kafka_raft_client_observer_cases.py, which has the
observer whose leader goes quiet), with the reason:

- No cluster id in raft messages: testFetchRequestClusterIdValidation,
  testVoteRequestClusterIdValidation, testBeginQuorumEpochRequestClusterIdValidation,
  testEndQuorumEpochRequestClusterIdValidation.
- No authorization: testClusterAuthorizationFailedInFetch,
  testClusterAuthorizationFailedInBeginQuorumEpoch, testClusterAuthorizationFailedInVote,
  testClusterAuthorizationFailedInEndQuorumEpoch.
- No replica directory ids, voter endpoints or dynamic voters (KIP-853):
  testNodeDirectoryId, testInvalidVoterReplicaVoteRequest,
  testInvalidVoterReplicaBeginQuorumEpochRequest, testHandleBeginQuorumRequestMoreEndpoints,
  testStaticVotersIgnoredWithBootstrapSnapshot.
- No batch accumulator between the state machine and the log (the controller appends each
  batch itself): testAppendFailedWithBufferAllocationException,
  testAppendFailedWithRecordBatchTooLargeException, testAccumulatorClearedAfterBecomingVoted,
  testAccumulatorClearedAfterBecomingUnattached,
  testChannelWokenUpIfLingerTimeoutReachedDuringAppend.
- No shutdown of the raft client itself: the simulation stops a node at once, after a
  leader's resign (sim.world's shutdown), with no timeout to wait on:
  testLeaderGracefulShutdownTimeout, testFollowerGracefulShutdown,
  testObserverGracefulShutdown, testGracefulShutdownSingleMemberQuorum.
- No listener unregistration: testReregistrationChangesListenerContext.
- Request versions and metrics are not modelled:
  testLeaderStateUpdateWithDifferentFetchRequestVersions, testMetrics.

Ported here later: testGrantVotesFromHigherEpochAfterResigningCandidacy and
testHandleLeaderChangeFiresAfterListenerReachesEpochStartOffset (at the end).
testHandleCommitCallbackFiresInCandidateState is test_kafka_raft_client_cases.py's
test_listener_catches_up_during_an_election.
"""

from __future__ import annotations

import pytest

from raft import Batch, LeaderAndEpoch, Role
from raft.messages import (
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    EndQuorumEpochRequest,
    Errors,
    FetchRequest,
    VoteRequest,
    VoteResponse,
)
from tests.raft.kafka_context import Context

# ---------------------------------------------------------------------- observers


def test_observer_takes_the_records_of_the_discovery_answer_that_names_the_leader() -> None:
    """testObserverReplication, reached by discovery: an observer in epoch 3 that knows no
    leader asks a voter; the voter answers as the leader of epoch 3, with records. Kafka's
    common response handling makes the observer follow it and append those records from
    that same answer; the observer then fetches after them, from the leader."""
    ctx = Context(4, (1, 2, 3), epoch=3)
    leader, fetch = ctx.one_sent(FetchRequest)  # a voter drawn at random
    assert leader in (1, 2, 3) and (fetch.epoch, fetch.fetch_offset) == (3, 0)
    ctx.deliver(leader, ctx.fetch_response(fetch, leader, high_watermark=3,
                                           batches=[Batch(0, 3, ("a", "b", "c"))]))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 3, leader)
    assert (ctx.log.end_offset, ctx.node.high_watermark) == (3, 3)
    assert ctx.listener.data_batches == [("a", "b", "c")]
    assert ctx.listener.current_leader == LeaderAndEpoch(leader, 3)
    [(dst, fetch)] = ctx.sent(FetchRequest)
    assert (dst, fetch.epoch, fetch.fetch_offset, fetch.last_fetched_epoch) == \
        (leader, 3, 3, 3)


def test_observer_discovering_a_newer_epoch_drops_that_answers_records() -> None:
    """The other half of Kafka's rule: an answer from a newer epoch only moves the observer
    there (following the leader it names); its records are not taken, and the observer
    fetches again from its own log end."""
    ctx = Context(4, (1, 2, 3), epoch=3)
    dst, fetch = ctx.one_sent(FetchRequest)
    ctx.deliver(dst, ctx.fetch_response(fetch, 1, epoch=5,
                                        batches=[Batch(0, 5, ("a", "b", "c"))],
                                        high_watermark=3))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 5, 1)
    assert ctx.log.end_offset == 0 and ctx.node.high_watermark is None
    [(dst, fetch)] = ctx.sent(FetchRequest)
    assert (dst, fetch.epoch, fetch.fetch_offset) == (1, 5, 0)


def test_observer_told_not_leader_by_the_voter_it_asked_follows_the_leader_named() -> None:
    """testObserverLeaderRediscoveryAfterBrokerNotAvailableError (its last step): a voter
    that is not the leader refuses the observer's fetch naming the leader of the
    observer's epoch; the observer follows that leader and fetches from it at once."""
    ctx = Context(4, (1, 2, 3), epoch=5)
    asked, fetch = ctx.one_sent(FetchRequest)
    leader = 3 if asked != 3 else 2
    ctx.deliver(asked, ctx.fetch_response(fetch, leader, error=Errors.NOT_LEADER_OR_FOLLOWER))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 5, leader)
    assert ctx.log.end_offset == 0
    [(dst, fetch)] = ctx.sent(FetchRequest)
    assert (dst, fetch.epoch, fetch.fetch_offset) == (leader, 5, 0)


# ---------------------------------------------------------------------- resigning by epoch


def test_resigning_from_an_older_epoch_changes_nothing() -> None:
    """testResignInOlderEpochIgnored: a state machine asking to resign from an epoch before
    the current one (it has not heard that leadership moved on) leaves the leader leading,
    well past two election timeouts, and sends nothing."""
    ctx = Context(1, (1, 2))
    epoch = ctx.become_leader()
    ctx.node.resign(ctx.now, epoch - 1)
    assert ctx.sent(EndQuorumEpochRequest) == []
    for _ in range(4):
        ctx.deliver(2, ctx.fetch_request(2, ctx.log.end_offset, epoch))
        ctx.sleep(ctx.config.election_timeout_ms // 2)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.LEADER, epoch, 1)


def test_resigning_from_an_epoch_not_reached_is_refused() -> None:
    """testCannotResignWithLargerEpochThanCurrentEpoch: an epoch past the node's is the
    caller's error (Kafka's IllegalArgumentException; kraftsim's ValueError), and the leader
    stays leader."""
    ctx = Context(1, (1, 2))
    epoch = ctx.become_leader()
    with pytest.raises(ValueError, match="cannot resign from epoch"):
        ctx.node.resign(ctx.now, epoch + 1)
    with pytest.raises(ValueError, match="cannot resign from epoch"):
        ctx.node.resign(ctx.now, -1)
    assert (ctx.node.role, ctx.node.epoch) == (Role.LEADER, epoch)
    assert ctx.sent(EndQuorumEpochRequest) == []


@pytest.mark.parametrize("voters", [(1, 2), (2, 3)], ids=["follower", "observer"])
def test_resigning_from_an_epoch_led_by_another_node_is_refused(voters: tuple[int, ...]) -> None:
    """testCannotResignIfNotLeader, testCannotResignIfObserver: a follower (voter or
    observer) of epoch 2 asked to resign from epoch 2 refuses (it is not the leader) and
    keeps following."""
    ctx = Context(1, voters, epoch=2, leader=2)
    with pytest.raises(ValueError, match="not its leader"):
        ctx.node.resign(ctx.now, 2)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 2, 2)


def test_resigning_again_from_the_epoch_just_resigned_is_a_no_op() -> None:
    """testInitializeAsResignedLeaderFromStateStore with a resign call: a node that led epoch
    2 before it restarted is Resigned; resigning from epoch 2 again sends nothing more and
    changes nothing (Kafka: it is no longer the leader of that epoch's state)."""
    ctx = Context(1, (1, 2), epoch=2, voted=1, leader=1)
    assert ctx.node.role is Role.RESIGNED
    ctx.drain()
    ctx.node.resign(ctx.now, 2)
    assert ctx.drain() == []
    assert (ctx.node.role, ctx.node.epoch) == (Role.RESIGNED, 2)


def test_resigning_from_the_current_epoch_resigns() -> None:
    """testElectionTimeoutAfterUserInitiatedResign's first step: resigning from the epoch the
    node leads tells the other voter (EndQuorumEpoch) and leaves the node Resigned."""
    ctx = Context(1, (1, 2))
    epoch = ctx.become_leader()
    ctx.node.resign(ctx.now, epoch)
    assert ctx.node.role is Role.RESIGNED
    [(dst, end)] = ctx.sent(EndQuorumEpochRequest)
    assert (dst, end.epoch, end.leader_id) == (2, epoch, 1)


# ---------------------------------------------------------------------- votes


@pytest.mark.parametrize(("last_epoch", "end_offset"), [(0, -5), (-1, 0), (6, 0)],
                         ids=["negative-offset", "negative-last-epoch", "last-epoch-not-below"])
def test_malformed_vote_of_a_newer_epoch_moves_a_follower_nowhere(last_epoch: int,
                                                                  end_offset: int) -> None:
    """testInvalidVoteRequest: a follower of leader 2 in epoch 5 asked for its vote in epoch
    6 by a malformed request (a negative end offset or last epoch, or a last epoch not below
    the epoch asked in) refuses it with its own epoch and leader (Kafka: INVALID_REQUEST),
    and stays in epoch 5 following 2: a malformed request's epoch is never taken on."""
    ctx = Context(1, (1, 2), epoch=5, leader=2)
    ctx.drain()
    ctx.deliver(2, ctx.vote_request(2, 6, last_epoch, end_offset))
    [(_, answer)] = ctx.sent(VoteResponse)
    assert (answer.vote_granted, answer.epoch, answer.leader_id) == (False, 5, 2)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 5, 2)
    assert ctx.storage.election.epoch == 5


# ---------------------------------------------------------------------- observers asked to vote


def test_observer_asked_for_a_vote_of_a_newer_epoch_takes_the_epoch_and_grants_it() -> None:
    """testHandleVoteRequestAsObserver: Kafka's observer answers a vote as a voter would (it
    may be a voter of a voter set it has not replicated yet, KIP-853): a request of a newer
    epoch moves it there, and an up-to-date candidate gets its vote, kept on disk. It still
    never stands, and goes on looking for the leader. kraftsim's candidates ask only voters,
    so only a test asks an observer."""
    ctx = Context(9, (1, 2), epoch=2)
    ctx.drain()
    ctx.deliver(1, ctx.vote_request(1, 3, 2, 1))
    _, resp = ctx.one_sent(VoteResponse)
    assert resp.vote_granted and (resp.epoch, resp.leader_id) == (3, None)
    assert (ctx.node.epoch, ctx.node.voted_id) == (3, 1)
    assert (ctx.storage.election.epoch, ctx.storage.election.voted_id) == (3, 1)
    assert ctx.node.role is Role.VOTED  # Kafka's Unattached with a voted key
    assert ctx.sent(VoteResponse) == []
    # A second candidate of the epoch is refused; the same one is granted again.
    ctx.deliver(2, ctx.vote_request(2, 3, 2, 1))
    ctx.deliver(1, ctx.vote_request(1, 3, 2, 1))
    assert [(dst, r.vote_granted) for dst, r in ctx.sent(VoteResponse)] == [(2, False), (1, True)]
    # It never stands, and keeps asking the voters who leads (one each request timeout).
    ctx.sleep(10 * ctx.config.election_timeout_ms)
    assert ctx.node.role is Role.VOTED and ctx.node.epoch == 3
    fetches = ctx.sent(FetchRequest)
    assert len(fetches) == 10 * ctx.config.election_timeout_ms // ctx.config.request_timeout_ms
    assert {dst for dst, _ in fetches} <= {1, 2} and {f.epoch for _, f in fetches} == {3}
    assert ctx.sent(VoteRequest) == []


def test_observer_refuses_a_vote_to_a_log_behind_its_own() -> None:
    """testHandleVoteRequestAsObserver's rule, the other way: an observer whose log is ahead
    of the candidate's moves to the newer epoch but refuses the vote."""
    ctx = Context(9, (1, 2), epoch=2, log=[(2, ["a", "b"])])
    ctx.drain()
    ctx.deliver(1, ctx.vote_request(1, 3, 2, 1))
    _, resp = ctx.one_sent(VoteResponse)
    assert not resp.vote_granted and resp.epoch == 3
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.UNATTACHED, 3, None)


def test_observer_following_a_leader_refuses_votes_in_its_epoch() -> None:
    """testHandleVoteRequestAsFollowerWithElectedLeader, for an observer: one that follows
    the epoch's leader refuses a vote in that epoch, naming the leader."""
    ctx = Context(9, (1, 2), epoch=2, leader=2)
    ctx.drain()
    ctx.deliver(1, ctx.vote_request(1, 2, 1, 5))
    _, resp = ctx.one_sent(VoteResponse)
    assert not resp.vote_granted and (resp.epoch, resp.leader_id) == (2, 2)
    assert (ctx.node.role, ctx.node.leader_id) == (Role.FOLLOWER, 2)


# ---------------------------------------------------------------------- the leader's heartbeat


def test_heartbeat_answers_do_not_keep_a_leader_in_office() -> None:
    """testLeaderShouldResignLeadershipIfNotGetFetchRequestFromMajorityVoters, with the
    heartbeat: voters that answer every BeginQuorumEpoch but never fetch do not count for
    the check quorum (Kafka counts fetches and snapshot fetches only); the leader resigns
    after 1.5 x fetch_timeout_ms all the same."""
    ctx = Context(1, (1, 2, 3), epoch=2, election_timeout_ms=10_000)
    epoch = ctx.become_leader()
    window = ctx.config.fetch_timeout_ms * 3 // 2
    half = ctx.config.fetch_timeout_ms // 2
    for _ in range(window // half - 1):
        ctx.sleep(half)
        announced = ctx.sent(BeginQuorumEpochRequest)
        assert sorted(dst for dst, _ in announced) == [2, 3]
        for dst, _ in announced:
            ctx.deliver(dst, BeginQuorumEpochResponse(epoch, 1))
        assert ctx.node.role is Role.LEADER
    ctx.sleep(window - (window // half - 1) * half)
    assert ctx.node.role is Role.RESIGNED


def test_a_leader_that_resigns_at_its_heartbeat_announces_nothing() -> None:
    """Kafka's pollLeader checks the quorum before it sends BeginQuorumEpoch: when the check
    quorum and the heartbeat fall due together and the check fails, the leader resigns and
    sends EndQuorumEpoch only."""
    ctx = Context(1, (1, 2, 3), epoch=2, election_timeout_ms=10_000, fetch_timeout_ms=2000)
    ctx.become_leader()
    ctx.sleep(2000)  # heartbeats at 1000 and 2000
    assert len(ctx.sent(BeginQuorumEpochRequest)) == 4
    ctx.sleep(1000)  # 3000: the check quorum (1.5 x 2000) and the third heartbeat
    assert ctx.node.role is Role.RESIGNED
    sent = ctx.drain()
    assert {type(e.message) for e in sent} == {EndQuorumEpochRequest}
    assert sorted(e.dst for e in sent) == [2, 3]


def test_observer_that_voted_restarts_with_its_vote_and_finds_the_leader() -> None:
    """An observer's vote is on its disk like a voter's (Kafka's Unattached with a voted
    key): restarted, it is still voted in that epoch and asks a voter drawn at random who
    leads, again after each request timeout (Kafka's pollUnattachedAsObserver), keeping its
    vote; it follows the leader whose answer names itself, taking that answer's records
    (testObserverReplication's discovery, as a voted observer), and that leader is on disk."""
    ctx = Context(9, (1, 2), epoch=3, voted=1, seed=1)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.VOTED, 3, 1)
    asked = [ctx.one_sent(FetchRequest)[0]]
    for _ in range(3):
        ctx.sleep(ctx.config.request_timeout_ms)
        dst, fetch = ctx.one_sent(FetchRequest)
        asked.append(dst)
        assert (ctx.node.role, ctx.node.voted_id, fetch.epoch) == (Role.VOTED, 1, 3)
    assert set(asked) == {1, 2}  # seed 1 draws both
    leader = asked[-1]
    ctx.deliver(leader, ctx.fetch_response(fetch, leader, high_watermark=1,
                                           batches=[Batch(0, 3, ("a",))]))
    assert (ctx.node.role, ctx.node.leader_id, ctx.node.epoch) == (Role.FOLLOWER, leader, 3)
    assert ctx.log.end_offset == 1 and ctx.node.high_watermark == 1  # that answer's records
    assert (ctx.storage.election.epoch, ctx.storage.election.leader_id) == (3, leader)


# ---------------------------------------------------------------------- left open before


def test_a_candidate_restarted_with_its_own_vote_grants_a_higher_epoch() -> None:
    """testGrantVotesFromHigherEpochAfterResigningCandidacy: a node that restarts as the
    candidate of epoch 2 (its own vote on disk) grants a vote request of epoch 3 from a
    voter whose log is as long as its own, and is then voted in that epoch."""
    ctx = Context(1, (1, 2), epoch=2, voted=1)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.CANDIDATE, 2, 1)
    assert ctx.log.end_offset == 0
    ctx.drain()
    ctx.deliver(2, ctx.vote_request(2, 3, 0, 0))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id, ctx.node.leader_id) == \
        (Role.VOTED, 3, 2, None)
    [(dst, answer)] = ctx.sent(VoteResponse)
    assert (dst, answer.epoch, answer.leader_id, answer.vote_granted) == (2, 3, None, True)


def test_the_listener_hears_of_the_leadership_once_it_reaches_the_epoch_start() -> None:
    """testHandleLeaderChangeFiresAfterListenerReachesEpochStartOffset: a new leader's
    listener is told nothing, neither a commit nor the leadership, while the high watermark
    is unknown or below the epoch's start (a fetch from offset 3); once a fetch reaches the
    leader's LeaderChange record, the listener gets the three data batches, then that
    record, and only then hears that its node leads."""
    ctx = Context(1, (1, 2), epoch=4,
                  log=[(1, ["1", "2", "3"]), (1, ["4", "5", "6"]), (2, ["7", "8", "9"])])
    epoch = ctx.become_leader()
    assert epoch == 5 and ctx.log.end_offset == 10
    assert ctx.listener.last_commit_offset is None
    assert all(leader.leader_id != 1 for leader in ctx.listener.leaders)
    ctx.deliver(2, ctx.fetch_request(2, 3, 1))
    assert ctx.listener.last_commit_offset is None
    assert all(leader.leader_id != 1 for leader in ctx.listener.leaders)
    ctx.deliver(2, ctx.fetch_request(2, 10, epoch))
    assert ctx.listener.data_batches == [("1", "2", "3"), ("4", "5", "6"), ("7", "8", "9")]
    assert len(ctx.listener.committed) == 4 and ctx.listener.committed[-1].is_control
    assert ctx.listener.last_commit_offset == 9
    assert ctx.listener.current_leader == LeaderAndEpoch(1, epoch)

