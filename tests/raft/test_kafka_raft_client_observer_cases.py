"""Kafka's KafkaRaftClientTest cases of an observer whose leader goes quiet, run against one
RaftNode (tests/raft/kafka_context.py).

An observer (kraftsim's brokers observe the metadata quorum) follows the leader it found.
Kafka's pollFollowerAsObserver: when a request to that leader times out, the next fetch
goes to a voter drawn at random (RequestManager.findReadyBootstrapServer: a random start in
the list of static voters, the first ready one, the leader included), and the one after it
back to the leader; when the fetch timeout runs out the observer neither stands nor drops
its leader: it stays that leader's follower, in its epoch, and fetches from a random voter
each time, until an answer names a newer epoch (or a leader for it) or the leader answers
again. kraftsim draws from the node's seeded rng over the sorted voters; the contexts here
use a request timeout below the fetch timeout (as Kafka's test context does), so the two
can be told apart.

Ported: testObserverLeaderRediscoveryAfterRequestTimeout, testObserverHandleRetryFetchToLeader,
testObserverHandleRetryFetchtToBootstrapServer (its late answers),
testObserverSendDiscoveryFetchAfterFetchTimeout, and
testFollowerAsObserverDoesNotBecomeCandidateAfterFetchTimeout (its vote of a newer epoch).
Also kraftsim's own cases of the same search: the fetch timeout with and without a fetch
outstanding, where the fetch after a voter's same-leader answer goes before and after the
fetch timeout, and an observer that grants a vote in its own epoch.

Left out, with the reason:

- The bootstrap servers themselves (controller.quorum.bootstrap.servers, whose nodes get
  ids of their own, -2, -3, …): kraftsim's observers know the static voters only, so the
  "bootstrap server" is a voter, and a voter other than the leader never answers a fetch
  with records (the second half of testObserverHandleRetryFetchtToBootstrapServer).
- testObserverLeaderRediscoveryAfterBrokerNotAvailableError's first step: kraftsim's network
  loses messages (a request timeout) and produces no BROKER_NOT_AVAILABLE answer, so no
  per-voter backoff is kept; its last step is in test_kafka_raft_client_more_cases.py.

An answer that moves nothing (a voter naming the same leader, or none) is asked again at
once, as Kafka's observer does (until this stop kraftsim waited retry_backoff_ms; 1 ms
still when the answer took no simulated time, docs/architecture.md).
"""

from __future__ import annotations

from raft import LeaderAndEpoch, Role, SnapshotId
from raft.batch import Batch
from raft.messages import Errors, FetchRequest, VoteResponse
from tests.raft.kafka_context import Context

VOTERS = (1, 2, 3)
LEADER = 1


def _following(seed: int = 0, **config: int) -> tuple[Context, FetchRequest]:
    """An observer (9) that discovered leader 1 of epoch 5 (Kafka's discoverLeaderAsObserver),
    with the fetch it then sent to the leader."""
    settings = {"request_timeout_ms": 500, "fetch_timeout_ms": 2000}
    settings.update(config)
    ctx = Context(9, VOTERS, seed=seed, **settings)
    dst, fetch = ctx.one_sent(FetchRequest)
    assert dst in VOTERS and (fetch.epoch, fetch.fetch_offset) == (0, 0)
    ctx.deliver(dst, ctx.fetch_response(fetch, LEADER, epoch=5, high_watermark=0))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 5, LEADER)
    dst, fetch = ctx.one_sent(FetchRequest)
    assert dst == LEADER and (fetch.epoch, fetch.fetch_offset) == (5, 0)
    return ctx, fetch


def _seed_whose_retry_goes_to(voter: int) -> int:
    """A seed with which the fetch after the leader's request timeout goes to ``voter``."""
    for seed in range(100):
        ctx, _ = _following(seed)
        ctx.sleep(ctx.config.request_timeout_ms)
        if ctx.one_sent(FetchRequest)[0] == voter:
            return seed
    raise AssertionError(f"no seed sends the retry to {voter}")


def test_after_a_request_timeout_the_observer_asks_another_voter_then_the_leader() -> None:
    """testObserverLeaderRediscoveryAfterRequestTimeout: the fetch to the leader goes
    unanswered; at the request timeout the observer, still the leader's follower in its
    epoch, fetches from another voter. That voter names the same leader and epoch; the
    observer keeps following it and its next fetch goes back to the leader at once, not
    after the retry backoff (the answer is handled, not failed)."""
    ctx, _ = _following(_seed_whose_retry_goes_to(2))
    ctx.sleep(ctx.config.request_timeout_ms - 1)
    assert ctx.sent(FetchRequest) == []
    ctx.sleep(1)
    dst, fetch = ctx.one_sent(FetchRequest)
    assert (dst, fetch.epoch, fetch.fetch_offset) == (2, 5, 0)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 5, LEADER)
    ctx.sleep(2)
    ctx.deliver(2, ctx.fetch_response(fetch, LEADER, error=Errors.FENCED_LEADER_EPOCH))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 5, LEADER)
    assert ctx.listener.current_leader == LeaderAndEpoch(LEADER, 5)
    dst, fetch = ctx.one_sent(FetchRequest)
    assert (dst, fetch.epoch) == (LEADER, 5)


def test_the_voter_asked_after_a_request_timeout_is_drawn_at_random_from_all_voters() -> None:
    """findReadyBootstrapServer's random start over the static voters: the leader whose
    request timed out is ready again, so it can be drawn too. The draw is the node's seeded
    rng: one seed gives one destination, and the seeds between them reach every voter."""
    retried = []
    for seed in range(30):
        ctx, _ = _following(seed)
        ctx.sleep(ctx.config.request_timeout_ms)
        dst, fetch = ctx.one_sent(FetchRequest)
        assert fetch.epoch == 5 and ctx.node.leader_id == LEADER
        again, _ = _following(seed)
        again.sleep(again.config.request_timeout_ms)
        assert again.one_sent(FetchRequest)[0] == dst
        retried.append(dst)
    assert set(retried) == set(VOTERS)


def test_no_second_fetch_while_the_retry_to_another_voter_is_outstanding() -> None:
    """testObserverHandleRetryFetchToLeader and testObserverHandleRetryFetchtToBootstrapServer:
    while the fetch sent to another voter after the leader's request timeout is outstanding,
    nothing else is sent, and the leader's late answer to the request given up is ignored
    (its records are not written). When that voter does not answer either, the next fetch
    goes back to the leader."""
    ctx, first = _following(_seed_whose_retry_goes_to(3))
    ctx.sleep(ctx.config.request_timeout_ms)
    dst, _ = ctx.one_sent(FetchRequest)
    assert dst == 3
    ctx.deliver(LEADER, ctx.fetch_response(first, LEADER, batches=[Batch(0, 5, ("a", "b"))],
                                           high_watermark=0))
    assert ctx.log.end_offset == 0
    ctx.sleep(ctx.config.request_timeout_ms - 1)
    assert ctx.sent(FetchRequest) == []
    ctx.sleep(1)
    dst, fetch = ctx.one_sent(FetchRequest)
    assert (dst, fetch.epoch, fetch.fetch_offset) == (LEADER, 5, 0)


def test_a_retry_that_reaches_the_leader_is_taken() -> None:
    """The voter drawn after the request timeout may be the leader itself (its connection is
    ready again): its answer is a leader's answer, records and all, and the fetches go on to
    the leader."""
    ctx, _ = _following(_seed_whose_retry_goes_to(LEADER))
    ctx.sleep(ctx.config.request_timeout_ms)
    dst, fetch = ctx.one_sent(FetchRequest)
    assert dst == LEADER
    ctx.deliver(LEADER, ctx.fetch_response(fetch, LEADER, batches=[Batch(0, 5, ("a", "b"))],
                                           high_watermark=2))
    assert (ctx.log.end_offset, ctx.node.high_watermark) == (2, 2)
    dst, fetch = ctx.one_sent(FetchRequest)
    assert (dst, fetch.fetch_offset) == (LEADER, 2)


def test_after_the_fetch_timeout_the_observer_stays_a_follower_and_asks_any_voter() -> None:
    """testObserverSendDiscoveryFetchAfterFetchTimeout, testFollowerAsObserverDoesNotBecome
    CandidateAfterFetchTimeout: an observer that has heard nothing from its leader for the
    fetch timeout stays its follower in its epoch (its state machine is told of no change),
    never stands, and from then on fetches from a voter drawn at random each time; voters
    that still name the same leader change nothing. A vote request of the next epoch moves
    it there (granted; it does not stand), and it fetches any voter in that epoch."""
    ctx, _ = _following(request_timeout_ms=2000, retry_backoff_ms=20)
    ctx.sleep(ctx.config.fetch_timeout_ms)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 5, LEADER)
    assert ctx.listener.current_leader == LeaderAndEpoch(LEADER, 5)
    assert ctx.storage.election.leader_id == LEADER
    asked = []
    for _ in range(12):
        dst, fetch = ctx.one_sent(FetchRequest)
        assert fetch.epoch == 5
        asked.append(dst)
        if dst != LEADER:
            ctx.sleep(2)
            ctx.deliver(dst, ctx.fetch_response(fetch, LEADER,
                                                error=Errors.NOT_LEADER_OR_FOLLOWER))
        else:
            ctx.sleep(ctx.config.request_timeout_ms)  # the crashed leader answers nothing
        assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == \
            (Role.FOLLOWER, 5, LEADER)
    assert {2, 3} <= set(asked)  # not the leader each time: any voter
    ctx.drain()
    ctx.deliver(2, ctx.vote_request(2, 6, 0, 0))
    sent = [(e.dst, e.message) for e in ctx.drain()]
    assert [(dst, m.epoch, m.vote_granted) for dst, m in sent
            if isinstance(m, VoteResponse)] == [(2, 6, True)]
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.VOTED, 6, None)
    [fetch] = [m for _, m in sent if isinstance(m, FetchRequest)]
    assert fetch.epoch == 6


def test_after_the_fetch_timeout_the_leaders_answer_or_a_newer_epoch_ends_the_search() -> None:
    """The observer past its fetch timeout goes back to its leader when a fetch it drew
    reaches that leader and is answered (the fetch timeout starts again), and moves on when
    a voter answers from a newer epoch: unattached in that epoch when it names no leader,
    then following the leader a voter names."""
    seed = _seed_whose_retry_goes_to(LEADER)  # the first draw, whatever the timeout
    ctx, _ = _following(seed, request_timeout_ms=2000)
    ctx.sleep(ctx.config.fetch_timeout_ms)
    dst, fetch = ctx.one_sent(FetchRequest)
    assert dst == LEADER
    ctx.deliver(LEADER, ctx.fetch_response(fetch, LEADER, high_watermark=0))
    dst, fetch = ctx.one_sent(FetchRequest)
    assert dst == LEADER  # the fetch timeout runs again
    ctx.sleep(ctx.config.fetch_timeout_ms - 1)
    assert ctx.sent(FetchRequest) == []

    ctx, _ = _following(request_timeout_ms=2000)
    ctx.sleep(ctx.config.fetch_timeout_ms)
    dst, fetch = ctx.one_sent(FetchRequest)
    ctx.deliver(dst, ctx.fetch_response(fetch, None, epoch=6,
                                        error=Errors.FENCED_LEADER_EPOCH))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.UNATTACHED, 6, None)
    assert ctx.listener.current_leader == LeaderAndEpoch(None, 6)
    dst, fetch = ctx.one_sent(FetchRequest)
    assert fetch.epoch == 6
    ctx.deliver(dst, ctx.fetch_response(fetch, 3, error=Errors.NOT_LEADER_OR_FOLLOWER))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 6, 3)
    dst, fetch = ctx.one_sent(FetchRequest)
    assert (dst, fetch.epoch) == (3, 6)


def test_the_fetch_timeout_asks_any_voter_at_once_unless_a_fetch_is_outstanding() -> None:
    """pollFollowerAsObserver at the fetch timeout: with nothing in flight (here the leader's
    answer, naming an invalid snapshot, put the observer in its retry backoff) the fetch to
    a voter drawn at random goes out at once, not at the end of the backoff; with a fetch
    outstanding (the retry after the leader's request timeout) nothing more is sent until
    that one ends."""
    ctx, fetch = _following(request_timeout_ms=500, retry_backoff_ms=1600)
    ctx.sleep(499)
    ctx.deliver(LEADER, ctx.fetch_response(fetch, LEADER, high_watermark=0,
                                           snapshot_id=SnapshotId(-1, 1)))
    assert ctx.sent(FetchRequest) == []
    ctx.sleep(ctx.config.fetch_timeout_ms - 499 - 1)
    assert ctx.sent(FetchRequest) == []
    ctx.sleep(1)  # the fetch timeout, 1501 ms before the backoff would end
    dst, fetch = ctx.one_sent(FetchRequest)
    assert dst in VOTERS and fetch.epoch == 5
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 5, LEADER)

    ctx, _ = _following(request_timeout_ms=1500)
    ctx.sleep(ctx.config.request_timeout_ms)
    ctx.one_sent(FetchRequest)  # the retry to any voter, outstanding until 3000
    ctx.sleep(ctx.config.fetch_timeout_ms - ctx.config.request_timeout_ms)
    assert ctx.sent(FetchRequest) == []
    ctx.sleep(2 * ctx.config.request_timeout_ms - ctx.config.fetch_timeout_ms - 1)
    assert ctx.sent(FetchRequest) == []
    ctx.sleep(1)
    assert ctx.one_sent(FetchRequest)[1].epoch == 5


def test_a_voters_same_leader_answer_sends_the_next_fetch_by_the_fetch_timeout() -> None:
    """What follows a voter's answer that names the same leader (at once):
    while the fetch timeout still runs, the fetch goes back to the leader, whatever the
    draw; once it has run out, to a voter drawn at random again (not the leader each
    time: the observer is still looking for whoever leads)."""
    for seed in range(8):
        ctx, _ = _following(seed, request_timeout_ms=500, retry_backoff_ms=20)
        ctx.sleep(ctx.config.request_timeout_ms)
        dst, fetch = ctx.one_sent(FetchRequest)
        ctx.sleep(2)
        ctx.deliver(dst, ctx.fetch_response(fetch, LEADER, error=Errors.NOT_LEADER_OR_FOLLOWER))
        assert ctx.one_sent(FetchRequest)[0] == LEADER

    ctx, _ = _following(request_timeout_ms=2000, retry_backoff_ms=20)
    ctx.sleep(ctx.config.fetch_timeout_ms)
    after_an_answer = []
    dst, fetch = ctx.one_sent(FetchRequest)
    for _ in range(16):
        if dst == LEADER:
            ctx.sleep(ctx.config.request_timeout_ms)  # the crashed leader answers nothing
        else:
            ctx.sleep(2)
            ctx.deliver(dst, ctx.fetch_response(fetch, LEADER,
                                                error=Errors.NOT_LEADER_OR_FOLLOWER))
        answered = dst != LEADER
        dst, fetch = ctx.one_sent(FetchRequest)
        if answered:
            after_an_answer.append(dst)
    assert {2, 3} & set(after_an_answer)


def test_an_observer_granting_a_vote_keeps_its_fetch_or_fetches_at_once() -> None:
    """An unattached observer asked for a vote in its own epoch grants it (it never stands)
    and goes on looking for the leader: the fetch it has in flight stays outstanding (Kafka's
    move to a voted Unattached resets no connection), so its answer, naming the leader, is
    taken. An answer naming no leader sends the next fetch at once (no retry backoff), and
    a vote granted while that one is in flight sends nothing more."""
    ctx = Context(9, VOTERS, epoch=5)
    dst, fetch = ctx.one_sent(FetchRequest)
    ctx.deliver(2, ctx.vote_request(2, 5, 0, 0))
    assert [(m.epoch, m.vote_granted) for _, m in ctx.sent(VoteResponse)] == [(5, True)]
    assert (ctx.node.role, ctx.node.voted_id) == (Role.VOTED, 2)
    assert ctx.sent(FetchRequest) == []
    ctx.deliver(dst, ctx.fetch_response(fetch, 2, error=Errors.NOT_LEADER_OR_FOLLOWER))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 5, 2)
    assert ctx.one_sent(FetchRequest)[0] == 2

    ctx = Context(9, VOTERS, epoch=5, retry_backoff_ms=500)
    dst, fetch = ctx.one_sent(FetchRequest)
    ctx.sleep(2)
    ctx.deliver(dst, ctx.fetch_response(fetch, None, error=Errors.NOT_LEADER_OR_FOLLOWER))
    assert ctx.node.role is Role.UNATTACHED
    dst, fetch = ctx.one_sent(FetchRequest)
    assert dst in VOTERS and fetch.epoch == 5
    ctx.sleep(100)
    ctx.deliver(3, ctx.vote_request(3, 5, 0, 0))
    assert (ctx.node.role, ctx.node.voted_id) == (Role.VOTED, 3)
    assert ctx.sent(FetchRequest) == []
