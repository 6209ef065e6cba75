"""More cases of Kafka's KafkaRaftClientTest, run against one RaftNode
(tests/raft/kafka_context.py): those test_kafka_raft_client_cases.py leaves open.

Each test names the Kafka case (or the KafkaRaftClient rule a case goes through) it
follows. As there, the cases run without KIP-996 pre-vote unless they say otherwise.
"""

from __future__ import annotations

from raft import Batch, LeaderAndEpoch, Role
from raft.messages import Errors, FetchRequest
from tests.raft.kafka_context import Context

# ---------------------------------------------------------------------- observers


def test_observer_takes_the_records_of_the_discovery_answer_that_names_the_leader() -> None:
    """testObserverReplication, reached by discovery: an observer in epoch 3 that knows no
    leader asks a voter; the voter answers as the leader of epoch 3, with records. Kafka's
    common response handling makes the observer follow it and append those records from
    that same answer; the observer then fetches after them, from the leader."""
    ctx = Context(4, (1, 2, 3), epoch=3)
    dst, fetch = ctx.one_sent(FetchRequest)
    assert (dst, fetch.epoch, fetch.fetch_offset) == (1, 3, 0)
    ctx.deliver(1, ctx.fetch_response(fetch, 1, batches=[Batch(0, 3, ("a", "b", "c"))],
                                      high_watermark=3))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 3, 1)
    assert (ctx.log.end_offset, ctx.node.high_watermark) == (3, 3)
    assert ctx.listener.data_batches == [("a", "b", "c")]
    assert ctx.listener.current_leader == LeaderAndEpoch(1, 3)
    [(dst, fetch)] = ctx.sent(FetchRequest)
    assert (dst, fetch.epoch, fetch.fetch_offset, fetch.last_fetched_epoch) == (1, 3, 3, 3)


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
    dst, fetch = ctx.one_sent(FetchRequest)
    assert dst == 1
    ctx.deliver(1, ctx.fetch_response(fetch, 2, error=Errors.NOT_LEADER_OR_FOLLOWER))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 5, 2)
    assert ctx.log.end_offset == 0
    [(dst, fetch)] = ctx.sent(FetchRequest)
    assert (dst, fetch.epoch, fetch.fetch_offset) == (2, 5, 0)
