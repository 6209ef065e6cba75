"""A leader with an empty log held in its compact form answers as the full Replica would,
and gives way to the Replica for what it cannot answer (a divergence check); a broker that
is not a replica is refused as the Replica refuses it."""

from __future__ import annotations

from broker.compact_leader import (
    CAUGHT_UP,
    ClockShare,
    FetchedAt,
    fetched_at,
    materialize,
    new_compact_leader,
)
from broker.fetch_messages import FetchPartition
from broker.partition_log import PartitionLog
from broker.replica import FetchClock, Replica
from metadata.image import PartitionRegistration

TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAA"
ME = 1
REG = PartitionRegistration(replicas=(2, ME, 3), isr=(2, ME, 3), leader=ME, leader_epoch=4,
                            partition_epoch=7)


def _fetch(leader_epoch: int = 4, last_fetched_epoch: int = -1) -> FetchPartition:
    return FetchPartition(TOPIC_ID, 0, leader_epoch, 0, last_fetched_epoch)


def test_a_plain_fetch_of_the_current_epoch_is_caught_up() -> None:
    leader, share = new_compact_leader(REG, ME, 100), ClockShare()
    assert leader.clocks == (None, None)  # followers 2 and 3, this broker left out
    assert leader.serve(3, ME, _fetch(), share, fetched_at(120)) is CAUGHT_UP
    clocks: tuple[object, ...] = leader.clocks
    assert clocks == (None, FetchedAt(120))
    assert (leader.last_caught_up(0), leader.last_caught_up(1)) == (100, 120)


def test_stale_and_future_epochs_are_refused_like_the_replica_does() -> None:
    leader, share = new_compact_leader(REG, ME, 100), ClockShare()
    fenced = leader.serve(2, ME, _fetch(leader_epoch=3), share, fetched_at(110))
    unknown = leader.serve(2, ME, _fetch(leader_epoch=5), share, fetched_at(110))
    assert fenced is not None and fenced.error == "FENCED_LEADER_EPOCH"
    assert unknown is not None and unknown.error == "UNKNOWN_LEADER_EPOCH"
    assert leader.clocks == (None, None)


def test_a_divergence_check_needs_the_full_replica_and_a_stranger_is_refused() -> None:
    """A follower that names a last fetched epoch (epoch 0 included) holds records: the
    empty log must tell it where to truncate, which only the Replica does."""
    leader, share = new_compact_leader(REG, ME, 100), ClockShare()
    for epoch in (0, 3):
        assert leader.serve(2, ME, _fetch(last_fetched_epoch=epoch), share,
                            fetched_at(110)) is None
    stranger = leader.serve(9, ME, _fetch(), share, fetched_at(110))  # not a replica
    assert stranger is not None and stranger.error == "UNKNOWN_LEADER_EPOCH"
    assert leader.clocks == (None, None)


def test_idle_and_wake_move_a_fetched_follower_between_its_session_and_a_time() -> None:
    leader, share = new_compact_leader(REG, ME, 100), ClockShare()
    session = FetchClock(150)
    assert not leader.idle(2, ME, session, share)  # never fetched: it stays pending
    assert not leader.idle(9, ME, session, share)  # not a follower
    leader.serve(2, ME, _fetch(), share, fetched_at(140))
    assert leader.idle(2, ME, session, share)
    assert leader.clocks[0] is session
    session.at = 180  # the session fetched again: the follower was caught up then too
    assert leader.last_caught_up(0) == 180
    leader.wake(2, ME, share)
    assert type(leader.clocks[0]) is FetchedAt and leader.clocks[0].at == 180
    leader.wake(3, ME, share)  # never fetched: nothing to wake
    assert leader.clocks[1] is None


def test_the_materialized_replica_holds_the_same_followers() -> None:
    leader, share = new_compact_leader(REG, ME, 100), ClockShare()
    leader.serve(2, ME, _fetch(), share, fetched_at(130))
    session = FetchClock(160)
    leader.serve(3, ME, _fetch(), share, fetched_at(150))
    leader.idle(3, ME, session, share)
    replica = Replica(ME, TOPIC_ID, "t", 0, PartitionLog())
    materialize(leader, replica)
    assert (replica.leader, replica.leader_epoch, replica.isr) == (ME, 4, (2, ME, 3))
    two, three = replica.follower(2), replica.follower(3)
    assert two is not None and three is not None
    assert (two.end_offset, two.caught_up_at, two.last_fetch_at, two.idle_clock) == \
        (0, 130, 130, None)
    assert (three.end_offset, three.last_caught_up(), three.idle_clock) == (0, 160, session)
    assert replica.serve_fetch(2, _fetch(), 170, 10).error == "NONE"


def test_shared_clock_tuples_are_reused_by_identity() -> None:
    share = ClockShare()
    first, second = new_compact_leader(REG, ME, 0), new_compact_leader(REG, ME, 0)
    clock = fetched_at(5)
    assert share.replaced(first.clocks, 0, clock) is share.replaced(second.clocks, 0, clock)
    other = FetchedAt(5)  # equal but another object: another tuple
    assert share.replaced(first.clocks, 0, other) is not share.replaced(first.clocks, 0, clock)


def test_an_isr_change_is_due_as_the_replica_would_propose_one() -> None:
    """A member that has not fetched in this epoch leaves once the lag limit has passed
    since the epoch began; one that fetched holds the whole empty log and never leaves
    (Kafka's isCaughtUp: its log end offset is the leader's; IsrExpirationTest's
    testIsrExpirationForCaughtUpFollowers); a replica out of the ISR that fetched comes
    back at its fetch, never at the periodic check (Kafka's maybeShrinkIsr only shrinks); a
    member this form does not know of leaves the decision to the Replica."""
    leader, share = new_compact_leader(REG, ME, 100), ClockShare()
    assert not leader.isr_change_due(ME, 100 + 500, 500)  # caught up as of the epoch start
    assert leader.isr_change_due(ME, 100 + 501, 500)
    leader.serve(2, ME, _fetch(), share, fetched_at(400))
    assert leader.isr_change_due(ME, 901, 500)  # 3 has not fetched
    leader.serve(3, ME, _fetch(), share, fetched_at(400))
    assert not leader.isr_change_due(ME, 900, 500)
    assert not leader.isr_change_due(ME, 100_000, 500)  # at the log end, however long ago
    shrunk = PartitionRegistration(replicas=(2, ME, 3), isr=(ME, 2), leader=ME,
                                   leader_epoch=4, partition_epoch=8)
    out = new_compact_leader(shrunk, ME, 100)
    assert not out.isr_change_due(ME, 200, 500)  # 3 has not fetched: it stays out
    out.serve(3, ME, _fetch(), share, fetched_at(150))
    assert not out.isr_change_due(ME, 200, 500)  # 3 fetched: it joins at its fetch
    stranger = PartitionRegistration(replicas=(ME, 2), isr=(ME, 2, 7), leader=ME,
                                     leader_epoch=4, partition_epoch=8)
    assert new_compact_leader(stranger, ME, 100).isr_change_due(ME, 100, 500)
