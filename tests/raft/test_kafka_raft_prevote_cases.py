"""Cases of Kafka's KafkaRaftClientPreVoteTest (KIP-996), run against one RaftNode.

The node is driven alone (tests/raft/kafka_context.py) with pre-vote on. What the
cases pin: a pre-vote is sent in the prospective node's own epoch and never bumps
an epoch or moves a vote; a request of a newer epoch, pre-vote or not, moves the
receiver to that epoch first (unattached), one of an older epoch or a malformed one
is refused; a pre-vote is granted to an up-to-date log by every voter except the
leader and a follower that has fetched from its leader; a prospective node becomes
a candidate on a majority, follows a leader it hears of, goes back to its leader
(or unattached) when the pre-vote is lost or times out, and resends pre-votes left
unanswered for a request timeout; a candidate whose election times out ungranted goes
back to Prospective (Kafka 4), one refused by a majority backs off first.

Where kraftsim answers differently on purpose (its tests say so):

- kraftsim's VoteResponse has no error code: Kafka's FENCED_LEADER_EPOCH and
  INVALID_REQUEST answers are refusals carrying the receiver's epoch and leader.
- A Resigned node's answers name no leader (Kafka names itself): it never points a
  voter back at a leader that gave up (docs: a resigned leader reports "no leader").
- Observers answer votes and pre-votes as voters do, as Kafka's do (kraftsim's voter
  set is static, so no prospective node or candidate ever asks one: only a test does).
  testHandlePreVoteRequestAsUnattachedObserver and ...AsFollowerObserver are in
  test_observer_answers_pre_votes_as_a_voter_would.
- Vote requests carry no correlation id: a late answer to a pre-vote that was sent
  again still counts (once per voter); Kafka drops the answer to the request it gave
  up on (testPreVoteRequestTimeout's last step).
- A follower refuses pre-votes while it fetched from its leader within the fetch
  timeout (Kafka: once it fetched at all in that FollowerState; the fetch timeout
  ends that state anyway).

Set aside, with the reason:

- testPreVoteRequestClusterIdValidation: kraftsim's RPCs carry no cluster id.
- testInvalidVoterReplicaPreVoteRequest: KIP-853 voter keys (directory ids).
- testPreVoteNotSupportedByRemote: kraftsim's RPCs have no versions (no
  UNSUPPORTED_VERSION); every node answers pre-votes, even one configured without
  pre-vote (pinned in test_a_node_without_pre_vote_still_answers_pre_votes).
- testHandlePreVoteRequestAsUnattachedWithLeader and
  testProspectiveLosesElectionHasLeaderButMissingEndpoint: Kafka's Unattached state
  with a known leader exists for a leader whose endpoint is unknown (KIP-853
  endpoints); kraftsim follows any leader it knows.
- The kraft.version 0/1 and RaftProtocol parameters: one run each here (no KIP-853
  voter sets, no RPC versions).
"""

from __future__ import annotations

import pytest

from raft import Role
from raft.messages import (
    BeginQuorumEpochRequest,
    FetchRequest,
    VoteRequest,
    VoteResponse,
)
from tests.raft.kafka_context import Context


def _pre_vote(ctx: Context, src: int, epoch: int, last_epoch: int,
              end_offset: int) -> VoteResponse:
    """Deliver a pre-vote from ``src`` and return the node's only answer."""
    ctx.drain()
    ctx.deliver(src, ctx.vote_request(src, epoch, last_epoch, end_offset, pre_vote=True))
    _, resp = ctx.one_sent(VoteResponse)
    assert resp.pre_vote
    return resp


def _fetch_once(ctx: Context, leader: int) -> None:
    """Answer the node's outstanding fetch from ``leader`` (an empty, successful one)."""
    dst, fetch = ctx.one_sent(FetchRequest)
    assert dst == leader
    ctx.deliver(leader, ctx.fetch_response(fetch, leader, high_watermark=0))


def _prospective(ctx: Context) -> list[tuple[int, VoteRequest]]:
    """Run the node's election timeout out; returns the pre-votes it sent."""
    ctx.drain()
    ctx.sleep(ctx.config.election_timeout_ms)
    assert ctx.node.role is Role.PROSPECTIVE, ctx.node.role
    requests = ctx.sent(VoteRequest)
    assert all(r.pre_vote for _, r in requests)
    return requests


# ---------------------------------------------------------------------- who grants


@pytest.mark.parametrize("fetched", [True, False], ids=["fetched", "not-fetched"])
def test_follower_grants_pre_votes_only_until_it_fetches_from_its_leader(
        fetched: bool) -> None:
    """testHandlePreVoteRequestAsFollower, testFollowerGrantsPreVoteIfHasNotFetchedYet: the
    answer names the leader; a voter and an observer get the same answer; a pre-vote of
    a newer epoch moves the follower to it, unattached and without a vote, and is granted."""
    ctx = Context(1, (1, 2, 3), epoch=2, leader=3, pre_vote=True)
    if fetched:
        _fetch_once(ctx, 3)
    for src in (2, 9):
        resp = _pre_vote(ctx, src, 2, 2, 1)
        assert resp.vote_granted is not fetched and (resp.epoch, resp.leader_id) == (2, 3)
        assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 2, 3)
    resp = _pre_vote(ctx, 2, 3, 3, 1)
    assert resp.vote_granted and (resp.epoch, resp.leader_id) == (3, None)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.UNATTACHED, 3, None)


def test_follower_that_voted_grants_pre_votes_until_its_first_fetch() -> None:
    """testHandlePreVoteRequestAsFollowerWithVotedCandidate: the voted candidate announces
    itself; before the first successful fetch from it a pre-vote is granted, after it
    refused."""
    ctx = Context(1, (1, 2, 3), epoch=2, voted=3, pre_vote=True)
    ctx.deliver(3, BeginQuorumEpochRequest(2, 3))
    assert (ctx.node.role, ctx.node.leader_id) == (Role.FOLLOWER, 3)
    fetches = ctx.sent(FetchRequest)
    resp = _pre_vote(ctx, 2, 2, 2, 1)
    assert resp.vote_granted and resp.leader_id == 3
    [(dst, fetch)] = fetches
    ctx.deliver(dst, ctx.fetch_response(fetch, 3, high_watermark=0))
    assert ctx.node.role is Role.FOLLOWER
    resp = _pre_vote(ctx, 2, 2, 2, 1)
    assert not resp.vote_granted and resp.leader_id == 3


def test_candidate_grants_pre_votes_in_its_epoch_and_keeps_its_own_vote() -> None:
    """testHandlePreVoteRequestAsCandidate."""
    ctx = Context(1, (1, 2), epoch=2, voted=1, pre_vote=True)
    assert ctx.node.role is Role.CANDIDATE
    for src, offset in ((2, 1), (3, 2)):
        resp = _pre_vote(ctx, src, 2, 2, offset)
        assert resp.vote_granted and (resp.epoch, resp.leader_id) == (2, None)
        assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.CANDIDATE, 2, 1)
    resp = _pre_vote(ctx, 2, 3, 3, 2)
    assert resp.vote_granted and (resp.epoch, resp.leader_id) == (3, None)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.UNATTACHED, 3, None)


@pytest.mark.parametrize("voted", [None, 3], ids=["unattached", "voted"])
def test_waiting_voter_grants_every_up_to_date_pre_vote_and_keeps_its_state(
        voted: int | None) -> None:
    """testHandlePreVoteRequestAsUnattachedVoted (and ...AsUnattachedObserver, run as a
    voter): the same voter twice, another voter, the one it voted for, an observer: all
    granted, and neither the epoch nor the vote on disk moves."""
    ctx = Context(1, (1, 2, 3), epoch=2, voted=voted, pre_vote=True)
    role = ctx.node.role
    disk = ctx.storage.election
    for src in (2, 2, 3, 9):
        resp = _pre_vote(ctx, src, 2, 2, 1)
        assert resp.vote_granted and (resp.epoch, resp.leader_id) == (2, None)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (role, 2, voted)
    assert ctx.storage.election == disk


def test_observer_answers_pre_votes_as_a_voter_would() -> None:
    """testHandlePreVoteRequestAsUnattachedObserver, testHandlePreVoteRequestAsFollowerObserver:
    an observer that knows no leader, or follows one it has not fetched from yet, grants a
    pre-vote to an up-to-date log (from a voter or another observer, again and again),
    without moving its epoch or vote; one that has fetched from its leader refuses."""
    for leader in (None, 2):
        ctx = Context(9, (1, 2), epoch=2, leader=leader, pre_vote=True)
        role = ctx.node.role
        for src in (1, 1, 2, 8):
            resp = _pre_vote(ctx, src, 2, 2, 1)
            assert resp.vote_granted and (resp.epoch, resp.leader_id) == (2, leader)
        assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (role, 2, None)
    ctx = Context(9, (1, 2), epoch=2, leader=2, pre_vote=True)
    _fetch_once(ctx, 2)
    resp = _pre_vote(ctx, 1, 2, 2, 1)
    assert not resp.vote_granted and (resp.epoch, resp.leader_id) == (2, 2)


def test_a_node_without_pre_vote_still_answers_pre_votes() -> None:
    """testPreVoteNotSupportedByRemote, kraftsim's side of it: a node configured without
    pre-vote (it stands as a candidate at once) grants a pre-vote like any other, without
    moving its epoch or vote (kraftsim has no RPC versions, so no UNSUPPORTED_VERSION)."""
    ctx = Context(1, (1, 2, 3), epoch=2, voted=3, pre_vote=False)
    resp = _pre_vote(ctx, 2, 2, 2, 1)
    assert resp.vote_granted and (ctx.node.epoch, ctx.node.voted_id) == (2, 3)
    ctx.sleep(ctx.config.election_timeout_ms)
    assert (ctx.node.role, ctx.node.epoch) == (Role.CANDIDATE, 3)


# ---------------------------------------------------------------------- who refuses


def test_pre_vote_of_an_older_epoch_is_refused() -> None:
    """testHandleInvalidPreVoteRequestWithOlderEpoch (Kafka: FENCED_LEADER_EPOCH)."""
    ctx = Context(1, (1, 2), epoch=2, pre_vote=True)
    resp = _pre_vote(ctx, 2, 1, 1, 1)
    assert not resp.vote_granted and (resp.epoch, resp.leader_id) == (2, None)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.UNATTACHED, 2, None)


def test_leader_refuses_pre_votes_from_voters_and_observers() -> None:
    """testLeaderRejectPreVoteRequestOnSameEpoch, testLeaderAcceptPreVoteFromObserver: in its
    epoch or an older one (Kafka: FENCED_LEADER_EPOCH), the answer names the leader."""
    ctx = Context(1, (1, 2), epoch=4, pre_vote=True)
    epoch = ctx.become_leader()
    assert epoch == 5
    for src, vote_epoch, last_epoch, offset in ((2, epoch, epoch, 1), (3, epoch - 1, 0, 0),
                                                (3, epoch, 0, 0)):
        resp = _pre_vote(ctx, src, vote_epoch, last_epoch, offset)
        assert not resp.vote_granted and (resp.epoch, resp.leader_id) == (epoch, 1)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.LEADER, epoch, 1)


def test_resigned_leader_grants_pre_votes() -> None:
    """testHandlePreVoteRequestAsResigned: in its epoch to an up-to-date log (kraftsim's
    answer names no leader), and in a newer one after moving to it, unattached."""
    ctx = Context(1, (1, 2), pre_vote=True)
    epoch = ctx.become_leader()
    ctx.node.resign(ctx.now)
    assert ctx.node.role is Role.RESIGNED
    end = ctx.log.end_offset
    resp = _pre_vote(ctx, 2, epoch, epoch, end)
    assert resp.vote_granted and (resp.epoch, resp.leader_id) == (epoch, None)
    assert ctx.node.role is Role.RESIGNED
    resp = _pre_vote(ctx, 2, epoch + 1, epoch + 1, end)
    assert resp.vote_granted and (resp.epoch, resp.leader_id) == (epoch + 1, None)
    assert (ctx.node.role, ctx.node.epoch) == (Role.UNATTACHED, epoch + 1)


def test_leader_resigned_by_check_quorum_grants_pre_votes() -> None:
    """Check quorum and pre-vote together: a leader refuses pre-votes while it leads; once
    no majority fetched for 1.5 fetch timeouts it resigns, and then grants them, so the
    rest of the quorum can elect without it."""
    ctx = Context(1, (1, 2, 3), pre_vote=True)
    epoch = ctx.become_leader()
    end = ctx.log.end_offset
    assert not _pre_vote(ctx, 2, epoch, epoch, end).vote_granted
    ctx.sleep(ctx.config.fetch_timeout_ms * 3 // 2)
    assert ctx.node.role is Role.RESIGNED and ctx.node.epoch == epoch
    resp = _pre_vote(ctx, 2, epoch, epoch, end)
    assert resp.vote_granted and ctx.node.epoch == epoch


def test_malformed_pre_vote_is_refused() -> None:
    """testInvalidPreVoteRequest: a negative end offset, a negative last epoch, or a last
    epoch past the pre-vote's own (Kafka: INVALID_REQUEST): refused, nothing moves."""
    ctx = Context(1, (1, 2), epoch=5, leader=2, pre_vote=True)
    for last_epoch, offset in ((0, -5), (-1, 0), (6, 0)):
        resp = _pre_vote(ctx, 2, 5, last_epoch, offset)
        assert not resp.vote_granted and (resp.epoch, resp.leader_id) == (5, 2)
        assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 5, 2)


def test_pre_vote_refused_to_a_log_behind_this_one() -> None:
    """testRejectPreVoteIfRemoteLogIsNotUpToDate: refused in an older epoch, and in this one
    when the requester's log ends before this node's."""
    ctx = Context(1, (1, 2, 3), epoch=2, log=((2, ["a", "b", "c"]),), pre_vote=True)
    assert ctx.log.end_offset == 3
    assert not _pre_vote(ctx, 2, 1, 1, 0).vote_granted
    resp = _pre_vote(ctx, 2, 2, 1, 2)
    assert not resp.vote_granted and resp.epoch == 2
    assert ctx.node.role is Role.UNATTACHED


# ---------------------------------------------------------------------- the prospective node


def test_pre_votes_are_sent_in_the_current_epoch() -> None:
    """testProspectiveTransitionsToUnattachedOnElectionFailure's first step: a timed-out
    voter asks every other voter, in its own epoch, with its log end; its epoch and vote
    stay as they were."""
    ctx = Context(1, (1, 2, 3), epoch=5, log=((4, ["a"]),), pre_vote=True)
    requests = _prospective(ctx)
    assert sorted(dst for dst, _ in requests) == [2, 3]
    assert all((r.epoch, r.candidate_id, r.last_epoch, r.end_offset) == (5, 1, 4, 1)
               for _, r in requests)
    assert (ctx.node.epoch, ctx.node.voted_id) == (5, None)


def test_pre_vote_answers_after_following_are_ignored() -> None:
    """testPreVoteResponseIgnoredAfterBecomingFollower."""
    ctx = Context(1, (1, 2, 3), epoch=5, pre_vote=True)
    _prospective(ctx)
    ctx.deliver(3, BeginQuorumEpochRequest(5, 3))
    assert (ctx.node.role, ctx.node.leader_id) == (Role.FOLLOWER, 3)
    ctx.deliver(2, VoteResponse(5, None, True, True))
    ctx.deliver(3, VoteResponse(5, 3, True, True))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 5, 3)


def test_prospective_follows_a_leader_that_announces_itself() -> None:
    """testProspectiveReceivesBeginQuorumRequest."""
    ctx = Context(1, (1, 2), epoch=5, pre_vote=True)
    _prospective(ctx)
    ctx.deliver(2, BeginQuorumEpochRequest(5, 2))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 5, 2)


def test_prospective_becomes_candidate_on_a_majority_of_pre_votes() -> None:
    """testPreVoteRequestTimeout's end, testProspectiveWithoutLeaderTransitionsToFollower's
    set-up: one grant of two other voters makes a majority; the epoch is bumped only now,
    with the node's own vote."""
    ctx = Context(1, (1, 2, 3), epoch=5, pre_vote=True)
    _prospective(ctx)
    ctx.deliver(2, VoteResponse(5, None, True, True))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.CANDIDATE, 6, 1)
    assert ctx.storage.election.voted_id == 1 and ctx.storage.election.epoch == 6
    votes = ctx.sent(VoteRequest)
    assert sorted(dst for dst, _ in votes) == [2, 3]
    assert all(v.epoch == 6 and not v.pre_vote for _, v in votes)


def test_prospective_goes_back_to_unattached_when_its_pre_vote_fails() -> None:
    """testProspectiveTransitionsToUnattachedOnElectionFailure: on its election timeout, or
    at once when a majority refuses; each further election timeout asks again."""
    ctx = Context(1, (1, 2), epoch=5, pre_vote=True)
    [(dst, request)] = _prospective(ctx)
    assert dst == 2 and (request.epoch, request.last_epoch, request.end_offset) == (5, 0, 0)
    ctx.sleep(ctx.config.election_timeout_ms)
    assert (ctx.node.role, ctx.node.epoch) == (Role.UNATTACHED, 5)
    [(dst, request)] = _prospective(ctx)
    ctx.deliver(2, VoteResponse(5, None, False, True))
    assert (ctx.node.role, ctx.node.epoch) == (Role.UNATTACHED, 5)
    [(dst, request)] = _prospective(ctx)
    assert request.epoch == 5


def test_prospective_that_voted_keeps_its_vote_when_its_pre_vote_fails() -> None:
    """A prospective node that granted a candidate of its epoch its vote (kept on disk, the
    pre-vote going on) still holds that vote once its pre-vote fails: it waits as a voted
    node and refuses a second candidate of the epoch."""
    ctx = Context(1, (1, 2, 3), epoch=6, pre_vote=True)
    _prospective(ctx)
    ctx.drain()
    ctx.deliver(2, ctx.vote_request(2, 6, 0, 0))
    [(_, granted)] = ctx.sent(VoteResponse)
    assert granted.vote_granted
    assert (ctx.node.role, ctx.node.voted_id) == (Role.PROSPECTIVE, 2)
    ctx.sleep(ctx.config.election_timeout_ms)  # the pre-vote times out
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.VOTED, 6, 2)
    ctx.drain()
    ctx.deliver(3, ctx.vote_request(3, 6, 0, 0))
    [(_, refused)] = ctx.sent(VoteResponse)
    assert not refused.vote_granted and ctx.node.voted_id == 2
    assert ctx.storage.election.voted_id == 2


def test_prospective_goes_back_to_the_leader_it_lost() -> None:
    """testProspectiveWithLeaderTransitionsToFollower: a follower whose fetch timed out asks
    for pre-votes still knowing its leader; on the election timeout, or once a majority
    refuses, it follows that leader again (and fetches); an answer naming a newer leader
    makes it follow that one."""
    ctx = Context(1, (1, 2, 3), epoch=5, leader=2, pre_vote=True)
    fetch_timeout = ctx.config.fetch_timeout_ms
    ctx.drain()
    ctx.sleep(fetch_timeout)
    assert (ctx.node.role, ctx.node.leader_id) == (Role.PROSPECTIVE, 2)
    assert [(d, r.epoch, r.last_epoch, r.end_offset) for d, r in ctx.sent(VoteRequest)] == [
        (2, 5, 0, 0), (3, 5, 0, 0)]
    ctx.sleep(ctx.config.election_timeout_ms)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 5, 2)
    assert [dst for dst, _ in ctx.sent(FetchRequest)] == [2]
    ctx.sleep(fetch_timeout)
    assert len(ctx.sent(VoteRequest)) == 2 and ctx.node.role is Role.PROSPECTIVE
    ctx.deliver(2, VoteResponse(5, None, False, True))
    assert ctx.node.role is Role.PROSPECTIVE
    ctx.deliver(3, VoteResponse(5, None, False, True))
    assert (ctx.node.role, ctx.node.leader_id) == (Role.FOLLOWER, 2)
    assert [dst for dst, _ in ctx.sent(FetchRequest)] == [2]
    ctx.sleep(fetch_timeout)
    assert ctx.node.role is Role.PROSPECTIVE
    ctx.deliver(2, VoteResponse(6, 3, False, True))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 6, 3)


def test_prospective_follows_a_leader_named_in_a_granted_pre_vote() -> None:
    """testProspectiveWithoutLeaderTransitionsToFollower."""
    ctx = Context(1, (1, 2, 3), epoch=5, pre_vote=True)
    _prospective(ctx)
    ctx.deliver(2, VoteResponse(5, 2, True, True))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 5, 2)


def test_prospective_resends_unanswered_pre_votes_after_the_request_timeout() -> None:
    """testPreVoteRequestTimeout: the pre-vote goes again after the request timeout (while
    the election timeout runs). kraftsim differs on the late answer: with no correlation
    ids, the first answer from the voter counts, whichever request it answers, and the
    other is then stale."""
    ctx = Context(1, (1, 2), epoch=1, pre_vote=True, request_timeout_ms=400)
    [(dst, first)] = _prospective(ctx)
    ctx.sleep(400)
    [(dst, again)] = ctx.sent(VoteRequest)
    assert dst == 2 and again == first and again.pre_vote
    assert ctx.node.role is Role.PROSPECTIVE
    ctx.deliver(2, VoteResponse(1, None, True, True))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.CANDIDATE, 2, 1)
    ctx.deliver(2, VoteResponse(1, None, True, True))
    assert (ctx.node.role, ctx.node.epoch) == (Role.CANDIDATE, 2)


def test_answered_pre_votes_are_not_sent_again() -> None:
    """testPreVoteRequestTimeout (Kafka resends only to voters whose answer it lacks)."""
    ctx = Context(1, (1, 2, 3), epoch=1, pre_vote=True, request_timeout_ms=400)
    _prospective(ctx)
    ctx.deliver(2, VoteResponse(1, None, False, True))
    assert ctx.node.role is Role.PROSPECTIVE
    ctx.sleep(400)
    assert [dst for dst, _ in ctx.sent(VoteRequest)] == [3]


def test_candidate_whose_election_times_out_asks_for_pre_votes_again() -> None:
    """testPreVoteNotSupportedByRemote's later steps (Kafka 4's pollCandidate): a candidate
    left without a majority goes back to Prospective at its election timeout, in its bumped
    epoch and keeping its vote; a candidate refused by a majority backs off first."""
    ctx = Context(1, (1, 2, 3), epoch=5, pre_vote=True)
    _prospective(ctx)
    ctx.deliver(2, VoteResponse(5, None, True, True))
    assert (ctx.node.role, ctx.node.epoch) == (Role.CANDIDATE, 6)
    ctx.drain()
    ctx.sleep(ctx.config.election_timeout_ms)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.PROSPECTIVE, 6, 1)
    requests = ctx.sent(VoteRequest)
    assert sorted(d for d, _ in requests) == [2, 3]
    assert all(r.pre_vote and r.epoch == 6 for _, r in requests)
    ctx.deliver(3, VoteResponse(6, None, True, True))
    assert (ctx.node.role, ctx.node.epoch) == (Role.CANDIDATE, 7)
    ctx.deliver(2, VoteResponse(7, None, False))
    ctx.deliver(3, VoteResponse(7, None, False))
    assert ctx.node.role is Role.CANDIDATE  # rejected: backing off, still a candidate
    ctx.drain()
    ctx.sleep(ctx.config.retry_backoff_ms + ctx.config.election_backoff_max_ms)
    assert (ctx.node.role, ctx.node.epoch) == (Role.PROSPECTIVE, 7)
