"""Cases of Kafka's ProspectiveStateTest, UnattachedStateTest, UnattachedStateWithVoteTest,
ResignedStateTest, ElectionStateTest and LeaderStateTest not covered elsewhere.

Kafka tests its election states as objects; kraftsim keeps the roles inside RaftNode,
so each case runs on a node built from its disk (tests/raft/kafka_context.py), with
pre-vote on where the state is KIP-996's, and is checked through its role, epoch,
vote, persisted election state, timers and messages. LeaderStateTest's bookkeeping
cases run on raft.LeaderState directly, as tests/raft/test_leader_state.py does.

Already covered elsewhere (by the named kraftsim test):

- ProspectiveStateTest.testSingleNodeQuorum: test_kafka_raft_client_cases::
  test_single_member_quorum_elects_itself_at_start (and here with pre-vote on).
- UnattachedStateTest.testElectionTimeout: test_kafka_quorum_state_cases::
  test_starts_unattached_with_a_full_election_timeout.
- ResignedStateTest.testResignedState (its acknowledgement part): test_kafka_raft_client_cases::
  test_resigned_leader_resends_end_quorum_epoch_to_voters_that_did_not_answer;
  ResignedStateTest.testGrantVote: test_resigned_leader_refuses_votes_in_its_epoch (its
  pre-vote side: test_kafka_raft_prevote_cases::test_resigned_leader_grants_pre_votes).
- ElectionStateTest.testQuorumStateDataRoundTrip: tests/kafka_format/test_node_state.py::
  test_quorum_state_version_0_keeps_its_voters_and_round_trips and
  test_quorum_state_version_1_has_the_voted_directory_and_round_trips.
- LeaderStateTest.testUpdateHighWatermarkQuorumSizeOne, testUpdateHighWatermarkQuorumSizeTwo,
  testUpdateHighWatermarkQuorumSizeThree and
  testNonMonotonicHighWatermarkUpdate: test_leader_state.py (every quorum size, never
  back); testGetNonLeaderFollowersByFetchOffsetDescending: test_leader_state::
  test_preferred_successors_are_most_up_to_date_first; testGrantVote:
  test_kafka_raft_client_cases::
  test_leader_refuses_votes_in_its_own_epoch_from_voters_and_observers (pre-votes:
  test_kafka_raft_prevote_cases::test_leader_refuses_pre_votes_from_voters_and_observers).

Differences kept on purpose (pinned below):

- ProspectiveStateTest.testCanChangePreVote: Kafka's ProspectiveState lets a later
  answer replace a voter's pre-vote. kraftsim counts a voter's first answer only: its
  vote requests carry no correlation id, and Kafka's client accepts one answer per
  voter anyway (it resends only to voters it has no answer from).
- testCannotGrantOrRejectNonVoters, testNegativeScenarioAcknowledgeResignation,
  testNonFollowerAcknowledgement: Kafka throws IllegalArgumentException on an answer
  from a non-voter; kraftsim ignores it (a message from anyone must not crash a node).
- testNonMonotonicLocalEndOffsetUpdate: Kafka throws when the leader's own end offset
  goes back; kraftsim's leader log never shrinks, and LeaderState keeps the HW.

Set aside, with the reason:

- KIP-853 directory ids and endpoints: ProspectiveStateTest.testCanGrantVoteWithoutDirectoryId,
  testCanGrantVoteWithDirectoryId, testLeaderEndpoints; UnattachedStateTest.testLeaderEndpoints;
  ResignedStateTest.testLeaderEndpoints; ElectionStateTest.testVotedCandidateWithoutVotedId,
  testVotedCandidateWithoutVotedDirectoryId, testVotedCandidateWithVotedDirectoryId (kraftsim's
  vote is a node id); LeaderStateTest.testLeaderEndpoints,
  testUpdateVotersFromNoDirectoryIdToDirectoryId. The withDirectoryId parameters run once.
- KIP-853 voter set changes: LeaderStateTest.testHighWatermarkDoesIncreaseFromNewVoter,
  testHighWatermarkDoesNotDecreaseFromNewVoter,
  testUpdateHighWatermarkRemovingFollowerFromVoterStates,
  testUpdateHighWatermarkQuorumRemovingLeaderFromVoterStates, testCheckQuorumAfterVoterSetChanges.
- UnattachedStateTest.testUnattachedWithLeader: Kafka's Unattached state knows a leader
  only when its endpoint is unknown (KIP-853); kraftsim follows any leader it knows.
- LeaderStateTest.testRequireNonNullAccumulator (a Java null check) and
  testUpdateHighWatermarkMetadata (log offset metadata, which kraftsim's offsets lack).
"""

from __future__ import annotations

import pytest

from raft import ElectionState, LeaderState, Role
from raft.messages import (
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    FetchRequest,
    VoteRequest,
    VoteResponse,
)
from tests.raft.kafka_context import Context


def _prospective(ctx: Context, timeout: int | None = None) -> None:
    ctx.sleep(ctx.config.election_timeout_ms if timeout is None else timeout)
    assert ctx.node.role is Role.PROSPECTIVE, ctx.node.role
    ctx.drain()


def _answer(ctx: Context, src: int, request: VoteRequest) -> VoteResponse:
    ctx.drain()
    ctx.deliver(src, request)
    _, resp = ctx.one_sent(VoteResponse)
    return resp


# ---------------------------------------------------------------------- ProspectiveStateTest


def test_single_voter_with_pre_vote_stands_and_leads_at_once() -> None:
    """testSingleNodeQuorum: no pre-vote is needed (its own answer is a majority)."""
    ctx = Context(1, (1,), pre_vote=True)
    assert (ctx.node.role, ctx.node.epoch) == (Role.LEADER, 1)


@pytest.mark.parametrize("granted", [True, False], ids=["granted", "rejected"])
def test_two_voter_pre_vote_is_decided_by_the_other_answer(granted: bool) -> None:
    """testTwoNodeQuorumVoteGranted, testTwoNodeQuorumVoteRejected."""
    ctx = Context(1, (1, 2), epoch=5, pre_vote=True)
    _prospective(ctx)
    ctx.deliver(2, VoteResponse(5, None, granted, True))
    assert ctx.node.role is (Role.CANDIDATE if granted else Role.UNATTACHED)
    assert ctx.node.epoch == (6 if granted else 5)


def test_three_voter_pre_vote_needs_one_grant_or_two_rejections() -> None:
    """testThreeNodeQuorumVoteGranted, testThreeNodeQuorumVoteRejected."""
    ctx = Context(1, (1, 2, 3), epoch=5, pre_vote=True)
    _prospective(ctx)
    ctx.deliver(2, VoteResponse(5, None, False, True))
    assert ctx.node.role is Role.PROSPECTIVE
    ctx.deliver(3, VoteResponse(5, None, False, True))
    assert (ctx.node.role, ctx.node.epoch) == (Role.UNATTACHED, 5)
    ctx = Context(1, (1, 2, 3), epoch=5, pre_vote=True)
    _prospective(ctx)
    ctx.deliver(2, VoteResponse(5, None, True, True))
    assert (ctx.node.role, ctx.node.epoch) == (Role.CANDIDATE, 6)


def test_a_voters_first_pre_vote_answer_is_its_answer() -> None:
    """testConsecutiveGrant, testConsecutiveReject, testCanChangePreVote (kraftsim differs:
    a later answer from the same voter changes nothing)."""
    ctx = Context(1, (1, 2, 3, 4, 5), epoch=5, pre_vote=True)
    _prospective(ctx)
    ctx.deliver(2, VoteResponse(5, None, True, True))
    ctx.deliver(2, VoteResponse(5, None, True, True))  # the same grant twice: one grant
    assert ctx.node.role is Role.PROSPECTIVE
    ctx.deliver(3, VoteResponse(5, None, False, True))
    ctx.deliver(3, VoteResponse(5, None, True, True))  # a change of mind is not counted
    assert ctx.node.role is Role.PROSPECTIVE
    ctx.deliver(4, VoteResponse(5, None, False, True))
    ctx.deliver(4, VoteResponse(5, None, False, True))
    assert ctx.node.role is Role.PROSPECTIVE  # two rejections of five: not yet lost
    ctx.deliver(5, VoteResponse(5, None, True, True))
    assert (ctx.node.role, ctx.node.epoch) == (Role.CANDIDATE, 6)


def test_pre_vote_answers_from_non_voters_count_neither_way() -> None:
    """testCannotGrantOrRejectNonVoters (Kafka throws; kraftsim ignores the answer)."""
    ctx = Context(1, (1, 2, 3), epoch=5, pre_vote=True)
    _prospective(ctx)
    for granted in (True, False, False):
        ctx.deliver(9, VoteResponse(5, None, granted, True))
    assert (ctx.node.role, ctx.node.epoch) == (Role.PROSPECTIVE, 5)


@pytest.mark.parametrize("up_to_date", [True, False], ids=["up-to-date", "behind"])
def test_prospective_without_vote_or_leader_grants_votes_to_an_up_to_date_log(
        up_to_date: bool) -> None:
    """ProspectiveStateTest.testGrantVote: pre-votes and votes alike, to any replica, as
    the log allows; a vote granted is kept on disk and the pre-vote goes on."""
    ctx = Context(1, (1, 2, 3), epoch=5, log=((3, ["a", "b"]),), pre_vote=True)
    _prospective(ctx)
    end = 2 if up_to_date else 1
    for src in (2, 3, 9):
        resp = _answer(ctx, src, ctx.vote_request(src, 5, 3, end, pre_vote=True))
        assert resp.vote_granted is up_to_date
    resp = _answer(ctx, 2, ctx.vote_request(2, 5, 3, end))
    assert resp.vote_granted is up_to_date and resp.epoch == 5
    assert (ctx.node.role, ctx.node.epoch) == (Role.PROSPECTIVE, 5)
    assert ctx.node.voted_id == (2 if up_to_date else None)
    assert ctx.storage.election == ElectionState(5, 2 if up_to_date else None, None)
    if up_to_date:  # its own pre-vote still counts: a grant makes it a candidate
        ctx.deliver(3, VoteResponse(5, None, True, True))
        assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.CANDIDATE, 6, 1)


@pytest.mark.parametrize("up_to_date", [True, False], ids=["up-to-date", "behind"])
def test_prospective_that_voted_grants_pre_votes_to_all_but_votes_to_its_candidate(
        up_to_date: bool) -> None:
    """testGrantVoteWithVotedKey: pre-votes go to every up-to-date log; the vote goes to the
    candidate voted for only, and to it whatever the logs (the vote is already cast)."""
    ctx = Context(1, (1, 2, 3), epoch=5, voted=2, log=((3, ["a", "b"]),), pre_vote=True)
    _prospective(ctx)
    end = 2 if up_to_date else 1
    for src in (2, 3, 9):
        resp = _answer(ctx, src, ctx.vote_request(src, 5, 3, end, pre_vote=True))
        assert resp.vote_granted is up_to_date
    assert not _answer(ctx, 3, ctx.vote_request(3, 5, 3, end)).vote_granted
    assert _answer(ctx, 2, ctx.vote_request(2, 5, 3, end)).vote_granted
    assert (ctx.node.role, ctx.node.voted_id) == (Role.PROSPECTIVE, 2)


@pytest.mark.parametrize("up_to_date", [True, False], ids=["up-to-date", "behind"])
def test_prospective_that_knows_a_leader_grants_pre_votes_but_no_vote(
        up_to_date: bool) -> None:
    """testGrantVoteWithLeader."""
    ctx = Context(1, (1, 2, 3), epoch=5, leader=2, log=((3, ["a", "b"]),), pre_vote=True)
    _prospective(ctx, ctx.config.fetch_timeout_ms)
    end = 2 if up_to_date else 1
    for src in (2, 3, 9):
        resp = _answer(ctx, src, ctx.vote_request(src, 5, 3, end, pre_vote=True))
        assert resp.vote_granted is up_to_date and resp.leader_id == 2
    for src in (2, 3):
        assert not _answer(ctx, src, ctx.vote_request(src, 5, 3, end)).vote_granted
    assert (ctx.node.role, ctx.node.voted_id, ctx.node.leader_id) == (Role.PROSPECTIVE, None, 2)


def test_prospective_that_voted_and_knows_a_leader_grants_its_candidate_only() -> None:
    """testCanGrantVoteWithoutDirectoryId and testElectionState ("with both"): a follower
    that had voted for 2 in epoch 5 before it learnt of leader 3 keeps both when its fetch
    timeout makes it prospective; it grants 2's vote again (the vote comes before the
    leader) and refuses 3's."""
    ctx = Context(1, (1, 2, 3), epoch=5, voted=2, leader=3, log=((3, ["a", "b"]),),
                  pre_vote=True)
    _prospective(ctx, ctx.config.fetch_timeout_ms)
    assert (ctx.node.voted_id, ctx.node.leader_id) == (2, 3)
    assert _answer(ctx, 2, ctx.vote_request(2, 5, 3, 1)).vote_granted
    assert not _answer(ctx, 3, ctx.vote_request(3, 5, 3, 2)).vote_granted
    assert (ctx.node.role, ctx.node.voted_id, ctx.node.leader_id) == (Role.PROSPECTIVE, 2, 3)
    assert ctx.storage.election == ElectionState(5, 2, 3)


@pytest.mark.parametrize("voted, leader", [(None, None), (None, 3), (2, None), (2, 3)],
                         ids=["nothing", "leader", "voted", "both"])
def test_prospective_keeps_the_election_state_it_came_with(
        voted: int | None, leader: int | None) -> None:
    """testElectionState: becoming prospective writes nothing: the disk keeps the vote and
    the leader of the epoch."""
    ctx = Context(1, (1, 2, 3), epoch=5, voted=voted, leader=leader, pre_vote=True)
    timeout = ctx.config.election_timeout_ms if leader is None else ctx.config.fetch_timeout_ms
    _prospective(ctx, timeout)
    assert ctx.storage.election == ElectionState(5, voted, leader)
    assert (ctx.node.epoch, ctx.node.voted_id, ctx.node.leader_id) == (5, voted, leader)


def test_prospective_election_timeout_is_the_full_timeout() -> None:
    """ProspectiveStateTest.testElectionTimeout: the pre-vote lasts one election timeout
    (plus the jitter drawn; none here), then ends."""
    ctx = Context(1, (1, 2), epoch=5, voted=2, pre_vote=True, request_timeout_ms=5000,
                  election_timeout_ms=2000)
    _prospective(ctx)
    started = ctx.now
    assert ctx.node.next_deadline() == started + 2000
    ctx.sleep(1999)
    assert ctx.node.role is Role.PROSPECTIVE
    ctx.sleep(1)
    assert (ctx.node.role, ctx.node.voted_id) == (Role.VOTED, 2)


# ---------------------------------------------------------------------- UnattachedStateTest


@pytest.mark.parametrize("up_to_date", [True, False], ids=["up-to-date", "behind"])
def test_unattached_voter_grants_votes_and_pre_votes_as_its_log_allows(up_to_date: bool) -> None:
    """UnattachedStateTest.testGrantVote (every voter alike; pre-votes too, which move
    nothing)."""
    end = 2 if up_to_date else 1
    for src in (2, 3):
        ctx = Context(1, (1, 2, 3), epoch=5, log=((3, ["a", "b"]),), pre_vote=True)
        assert _answer(ctx, src, ctx.vote_request(src, 5, 3, end, pre_vote=True)) \
            .vote_granted is up_to_date
        assert (ctx.node.role, ctx.node.voted_id) == (Role.UNATTACHED, None)
        assert _answer(ctx, src, ctx.vote_request(src, 5, 3, end)).vote_granted is up_to_date
        assert ctx.node.voted_id == (src if up_to_date else None)


# ---------------------------------------------------------------------- UnattachedStateWithVoteTest


@pytest.mark.parametrize("up_to_date", [True, False], ids=["up-to-date", "behind"])
def test_voter_that_voted_grants_its_candidate_again_whatever_the_logs(up_to_date: bool) -> None:
    """UnattachedStateWithVoteTest.testCanGrantVoteWithoutDirectoryId: a voter that voted for
    2 in epoch 5 grants 2's vote again even when 2's log now looks behind its own (the vote
    is cast and on disk), refuses 3's, and grants pre-votes to any up-to-date log, 3's
    included; none of it changes its vote."""
    ctx = Context(1, (1, 2, 3), epoch=5, voted=2, log=((3, ["a", "b"]),), pre_vote=True)
    assert (ctx.node.role, ctx.node.voted_id) == (Role.VOTED, 2)
    end = 2 if up_to_date else 1
    assert _answer(ctx, 2, ctx.vote_request(2, 5, 3, end)).vote_granted
    assert not _answer(ctx, 3, ctx.vote_request(3, 5, 3, 2)).vote_granted
    for src in (2, 3):
        assert _answer(ctx, src, ctx.vote_request(src, 5, 3, end, pre_vote=True)) \
            .vote_granted is up_to_date
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.VOTED, 5, 2)
    assert ctx.storage.election == ElectionState(5, 2, None)


def test_voter_granting_its_candidate_again_keeps_its_election_timeout() -> None:
    """UnattachedStateWithVoteTest.testElectionTimeout with a candidate's resent request:
    granting the same candidate again is no new vote, so the election timeout that started
    with the vote keeps running (Kafka moves to the voted state only from no vote)."""
    ctx = Context(1, (1, 2, 3), election_timeout_ms=10_000)
    assert _answer(ctx, 2, ctx.vote_request(2, 1, 0, 0)).vote_granted
    voted_at = ctx.now
    assert ctx.node.next_deadline() == voted_at + 10_000
    ctx.sleep(5000)
    assert _answer(ctx, 2, ctx.vote_request(2, 1, 0, 0)).vote_granted
    assert ctx.node.next_deadline() == voted_at + 10_000
    ctx.sleep(4999)
    assert (ctx.node.role, ctx.node.voted_id) == (Role.VOTED, 2)
    ctx.sleep(1)
    assert (ctx.node.role, ctx.node.epoch) == (Role.CANDIDATE, 2)


# ---------------------------------------------------------------------- ResignedStateTest


def test_resigned_leader_keeps_its_leadership_on_disk_and_stands_after_a_timeout() -> None:
    """ResignedStateTest.testResignedState: the disk still names it leader of its epoch; the
    election timeout runs from the resignation, exactly."""
    ctx = Context(1, (1, 2), epoch=5, voted=1, leader=1, election_timeout_ms=5000)
    assert ctx.node.role is Role.RESIGNED
    assert ctx.storage.election == ElectionState(5, 1, 1)
    ctx.sleep(4999)
    assert ctx.node.role is Role.RESIGNED
    ctx.sleep(1)
    assert (ctx.node.role, ctx.node.epoch) == (Role.CANDIDATE, 6)


def test_resignation_acknowledged_by_a_non_voter_changes_nothing() -> None:
    """testNegativeScenarioAcknowledgeResignation (Kafka throws; kraftsim ignores it): the
    voters that did not answer are still told again."""
    ctx = Context(0, (0, 1, 2, 3, 4, 5), epoch=5, voted=0, leader=0,
                  election_timeout_ms=10_000, request_timeout_ms=1000)
    assert sorted(dst for dst, _ in ctx.sent(EndQuorumEpochRequest)) == [1, 2, 3, 4, 5]
    ctx.deliver(10, EndQuorumEpochResponse(5, None))
    ctx.deliver(1, EndQuorumEpochResponse(5, None))
    assert ctx.node.role is Role.RESIGNED
    ctx.sleep(1000)
    assert sorted(dst for dst, _ in ctx.sent(EndQuorumEpochRequest)) == [2, 3, 4, 5]


# ---------------------------------------------------------------------- LeaderStateTest


def test_leader_announces_itself_to_every_voter_every_half_fetch_timeout() -> None:
    """testBeginQuorumEpochTimer, testFollowerAcknowledgement, testNonFollowerAcknowledgement
    (and KafkaRaftClientTest.testBeginQuorumEpochHeartbeat): the new leader sends
    BeginQuorumEpoch to every other voter at once, then again every fetch_timeout_ms / 2
    whether or not a voter acknowledged it; acknowledgements are recorded (a voter's only:
    an observer's answer counts for nothing) but do not change who is told."""
    ctx = Context(1, (1, 2, 3), epoch=4, fetch_timeout_ms=2000, election_timeout_ms=5000)
    ctx.sleep(ctx.config.election_timeout_ms)
    ctx.drain()
    ctx.deliver(2, VoteResponse(5, None, True))
    assert ctx.node.role is Role.LEADER
    assert sorted(dst for dst, _ in ctx.sent(BeginQuorumEpochRequest)) == [2, 3]
    ctx.deliver(2, BeginQuorumEpochResponse(5, 1))
    ctx.deliver(9, BeginQuorumEpochResponse(5, 1))
    state = ctx.node.leader_state
    assert state is not None and state.acknowledged == {1, 2}
    half = ctx.config.fetch_timeout_ms // 2
    ctx.sleep(half - 1)
    assert ctx.sent(BeginQuorumEpochRequest) == []
    ctx.sleep(1)
    assert sorted(dst for dst, _ in ctx.sent(BeginQuorumEpochRequest)) == [2, 3]
    ctx.deliver(3, BeginQuorumEpochResponse(5, 1))
    ctx.sleep(half // 2)
    assert ctx.sent(BeginQuorumEpochRequest) == []
    ctx.sleep(half - half // 2)
    assert sorted(dst for dst, _ in ctx.sent(BeginQuorumEpochRequest)) == [2, 3]


def test_leader_state_acknowledges_voters_only() -> None:
    """testFollowerAcknowledgement, testNonFollowerAcknowledgement, on LeaderState: a voter's
    valid fetch acknowledges the leader; an observer's is kept apart."""
    state = LeaderState(local_id=0, epoch=5, epoch_start_offset=0, voters=(0, 1, 2))
    assert state.acknowledged == {0}
    state.update_replica_end_offset(1, 0)
    state.update_replica_end_offset(9, 0)
    assert state.acknowledged == {0, 1}
    assert state.observer_end_offsets == {9: 0}


def test_same_end_offset_twice_moves_nothing() -> None:
    """testIdempotentEndOffsetUpdate."""
    state = LeaderState(local_id=0, epoch=5, epoch_start_offset=0, voters=(0,))
    assert state.update_local_end_offset(15)
    assert not state.update_local_end_offset(15)
    assert state.high_watermark == 15


def test_lower_local_end_offset_keeps_the_high_watermark() -> None:
    """testNonMonotonicLocalEndOffsetUpdate (Kafka throws; kraftsim's leader log never
    shrinks, and its HW never moves back)."""
    state = LeaderState(local_id=0, epoch=5, epoch_start_offset=0, voters=(0,))
    assert state.update_local_end_offset(15)
    assert not state.update_local_end_offset(14)
    assert state.high_watermark == 15


def test_check_quorum_counts_voter_fetches_in_each_window() -> None:
    """testCheckQuorum: a window passes when a majority of voters (the leader included)
    fetched in it; observers never count; each check starts a new window."""
    state = LeaderState(local_id=0, epoch=5, epoch_start_offset=0, voters=(0, 1, 2, 3, 4))
    state.update_replica_end_offset(1, 0)
    state.update_replica_end_offset(9, 0)
    state.update_replica_end_offset(8, 0)
    assert not state.check_quorum_reached()
    state.update_replica_end_offset(1, 0)
    state.update_check_quorum_for_following_voter(2)  # a FetchSnapshot counts too
    assert state.check_quorum_reached()
    state.update_replica_end_offset(3, 0)
    assert not state.check_quorum_reached()


def test_leader_without_fetches_resigns_after_one_and_a_half_fetch_timeouts() -> None:
    """testCheckQuorum at the node: the window is 1.5 fetch timeouts; a voter fetching in
    each keeps the leader of three in office, silence makes it resign."""
    ctx = Context(1, (1, 2, 3))
    epoch = ctx.become_leader()
    window = ctx.config.fetch_timeout_ms * 3 // 2
    for _ in range(3):
        ctx.sleep(window - 1)
        ctx.deliver(2, ctx.fetch_request(2, ctx.log.end_offset, epoch))
        ctx.sleep(1)
        assert ctx.node.role is Role.LEADER
    ctx.sleep(window)
    assert (ctx.node.role, ctx.node.epoch) == (Role.RESIGNED, epoch)
    assert sorted(dst for dst, _ in ctx.sent(EndQuorumEpochRequest)) == [2, 3]


def test_single_voter_leader_never_resigns_by_check_quorum() -> None:
    """testCheckQuorumWithOneVoter."""
    ctx = Context(1, (1,))
    ctx.sleep(ctx.config.fetch_timeout_ms * 20)
    assert (ctx.node.role, ctx.node.epoch) == (Role.LEADER, 1)
    assert ctx.sent(FetchRequest) == []
