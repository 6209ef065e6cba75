"""Cases of Kafka's RequestManagerTest (raft/src/test/java/org/apache/kafka/raft), on RaftNode.

Kafka's RequestManager keeps, per destination, whether a request is in flight (with its
correlation id and request timeout) or backing off after a failed answer, and picks a
ready bootstrap server for an observer's discovery fetch. kraftsim keeps the same facts
inside RaftNode: one outstanding request (correlation id and destination), a ``request``
timer that is either the request timeout or the backoff, and a random draw of a voter for
an observer's fetch to any voter (from the node's seeded rng, over the sorted voters). The
cases therefore run on a node (tests/raft/kafka_context.py) and check what it sends, and
when.

The answers Kafka counts as failed (a connection error, BROKER_NOT_AVAILABLE, which
kraftsim's network does not produce: a lost message is a request timeout; or an error the
client cannot use, INVALID_REQUEST) put the connection in its retry backoff; an answer
that moves nothing (an older epoch, an epoch error naming no newer epoch or other leader)
counts as handled, and the next fetch leaves at once.

Not ported:

- testAnyInflightRequestWithAnyRequest: the bookkeeping of Kafka's connection table
  (entries removed once timed out or backed off); its behaviour, one request in flight
  at a time, is what test_one_discovery_fetch_at_a_time_to_a_voter_drawn_at_random pins.
- testRequestToBootstrapList's later picks, which skip a server backing off after a
  failed answer: kraftsim keeps no per-voter backoff (no answer it receives is Kafka's
  failed one), so every voter is ready at each draw.
"""

from __future__ import annotations

import msgspec

from raft import Batch, Role
from raft.messages import BeginQuorumEpochRequest, Errors, FetchRequest
from tests.raft.kafka_context import Context


def _follower(**config: int) -> tuple[Context, FetchRequest]:
    """A voter following 2 in epoch 2, with the fetch it sent at start."""
    ctx = Context(1, (1, 2, 3), epoch=2, leader=2, **config)
    dst, fetch = ctx.one_sent(FetchRequest)
    assert dst == 2
    return ctx, fetch


def test_a_follower_fetches_again_at_once_after_a_good_answer() -> None:
    """testSuccessfulResponse: an answer handled successfully leaves the connection ready,
    so the follower's next fetch leaves with the answer, at the same instant."""
    ctx, fetch = _follower()
    ctx.sleep(7)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, batches=[Batch(0, 2, ("a",))],
                                      high_watermark=1))
    dst, again = ctx.one_sent(FetchRequest)
    assert dst == 2 and again.fetch_offset == 1
    assert again.correlation_id != fetch.correlation_id


def test_a_follower_backs_off_after_a_failed_answer() -> None:
    """testBackoffAfterFailure: after an answer that failed (INVALID_REQUEST), the
    destination is not asked again until the retry backoff has passed, and then at once."""
    ctx, fetch = _follower(retry_backoff_ms=100)
    ctx.sleep(3)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, error=Errors.INVALID_REQUEST))
    assert (ctx.node.role, ctx.node.leader_id) == (Role.FOLLOWER, 2)
    ctx.sleep(99)
    assert ctx.sent(FetchRequest) == []
    ctx.sleep(1)
    dst, again = ctx.one_sent(FetchRequest)
    assert dst == 2 and again.fetch_offset == 0


def test_a_follower_fetches_again_at_once_after_an_answer_that_moves_nothing() -> None:
    """An answer that moves nothing (NOT_LEADER_OR_FOLLOWER naming the same leader and
    epoch: a resigned leader's) is handled, not failed: the connection is ready and the
    next fetch leaves with the answer, whatever the retry backoff."""
    ctx, fetch = _follower(retry_backoff_ms=100)
    ctx.sleep(3)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, error=Errors.NOT_LEADER_OR_FOLLOWER))
    assert (ctx.node.role, ctx.node.leader_id) == (Role.FOLLOWER, 2)
    dst, again = ctx.one_sent(FetchRequest)
    assert dst == 2 and again.fetch_offset == 0


def test_an_answer_to_another_request_is_ignored_and_the_fetch_stays_outstanding() -> None:
    """testIgnoreUnexpectedResponse: an answer whose correlation id is not the outstanding
    request's is dropped: nothing is appended, no new fetch leaves, and the outstanding
    fetch still times out when it would have. Its own answer is then taken."""
    ctx, fetch = _follower(request_timeout_ms=500)
    stray = ctx.fetch_response(fetch, 2, batches=[Batch(0, 2, ("x",))], high_watermark=1)
    ctx.deliver(2, msgspec.structs.replace(stray, correlation_id=fetch.correlation_id + 1))
    assert ctx.log.end_offset == 0 and ctx.sent(FetchRequest) == []
    ctx.sleep(499)
    assert ctx.sent(FetchRequest) == []
    ctx.deliver(2, ctx.fetch_response(fetch, 2, batches=[Batch(0, 2, ("a",))],
                                      high_watermark=1))
    assert ctx.log.end_offset == 1 and ctx.listener.data_batches == [("a",)]
    dst, again = ctx.one_sent(FetchRequest)
    assert dst == 2 and again.fetch_offset == 1


def test_an_unanswered_fetch_is_sent_again_at_the_request_timeout() -> None:
    """testRequestTimeout, testFindReadyWithRequestTimedout: a request left unanswered keeps
    the destination busy for the request timeout, not a millisecond less; then a new
    request leaves, and the late answer to the old one is no longer expected (ignored)."""
    ctx, fetch = _follower(request_timeout_ms=500)
    ctx.sleep(499)
    assert ctx.sent(FetchRequest) == []
    ctx.sleep(1)
    dst, again = ctx.one_sent(FetchRequest)
    assert dst == 2 and again.correlation_id != fetch.correlation_id
    ctx.deliver(2, ctx.fetch_response(fetch, 2, batches=[Batch(0, 2, ("late",))],
                                      high_watermark=1))
    assert ctx.log.end_offset == 0 and ctx.sent(FetchRequest) == []


def test_a_new_leader_is_fetched_from_at_once_whatever_the_old_connection_did() -> None:
    """testResetAllConnections: a state change resets every connection, the one with a
    request in flight and the one backing off, so the next request leaves at once."""
    ctx, fetch = _follower(retry_backoff_ms=100)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, error=Errors.NOT_LEADER_OR_FOLLOWER))
    assert ctx.sent(FetchRequest) == []  # backing off
    ctx.deliver(3, BeginQuorumEpochRequest(3, 3))
    dst, to_new = ctx.one_sent(FetchRequest)
    assert (dst, to_new.epoch) == (3, 3)  # in flight now, unanswered
    ctx.deliver(2, BeginQuorumEpochRequest(4, 2))
    dst, to_next = ctx.one_sent(FetchRequest)
    assert (dst, to_next.epoch) == (2, 4)
    # The answer to the fetch sent to 3 is no longer expected.
    ctx.deliver(3, ctx.fetch_response(to_new, 3, batches=[Batch(0, 3, ("x",))],
                                      high_watermark=1))
    assert ctx.log.end_offset == 0 and ctx.sent(FetchRequest) == []


def test_one_discovery_fetch_at_a_time_to_a_voter_drawn_at_random() -> None:
    """testRequestToBootstrapList, testFindReadyWithInflightRequest: an observer looking for
    the leader has one discovery fetch in flight at a time; none leaves while it is
    outstanding; once it times out, the next one goes to a voter drawn again at random
    among all of them (a connection that timed out is ready again). After an answer that
    names no leader the next one leaves at once, whatever the retry backoff (the answer is
    handled, not failed). The draws are the node's seeded rng: the same seed asks the same
    voters, and a few seeds reach every voter first."""
    def asked(seed: int) -> list[int]:
        ctx = Context(1, (2, 3, 4), request_timeout_ms=500, retry_backoff_ms=100, seed=seed)
        first, fetch = ctx.one_sent(FetchRequest)
        ctx.sleep(499)
        assert ctx.sent(FetchRequest) == []
        ctx.sleep(1)
        second, fetch = ctx.one_sent(FetchRequest)
        ctx.sleep(2)
        ctx.deliver(second, ctx.fetch_response(fetch, None, epoch=0,
                                               error=Errors.NOT_LEADER_OR_FOLLOWER))
        third, _ = ctx.one_sent(FetchRequest)
        assert ctx.node.role is Role.UNATTACHED
        return [first, second, third]

    for seed in range(10):
        assert asked(seed) == asked(seed) and set(asked(seed)) <= {2, 3, 4}
    assert {asked(seed)[0] for seed in range(10)} == {2, 3, 4}
