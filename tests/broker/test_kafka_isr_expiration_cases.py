"""The cases of Kafka's ``kafka.server.IsrExpirationTest``.

Kafka's test builds a Partition led by broker 0 with follower 1 in its ISR, the
leader's log end at 20, ``replica.lag.time.max.ms`` 100, and asks
``Partition.getOutOfSyncReplicas`` which followers the ISR-expiration task would
drop. kraftsim's leader is a :class:`~broker.replica.Replica`; the followers its
periodic check would drop are those its shrink proposal leaves out
(:meth:`~broker.replica.Replica.isr_proposal` with ``expand=False``, as the
replica manager's ISR check asks it). Kafka's setup records a fetch at offset 0
against a leader end of 0 to make the follower caught up at the start; kraftsim's
leader takes the ISR members as caught up when its epoch begins, which is the same.
A follower's fetches are the leader's ``serve_fetch`` (Kafka's
``updateFetchStateOrThrow``). The last test runs the same case through the replica
manager, for a leader with records and for one with an empty log (held compact).

Not ported: none; every method of the class is here.
"""

from __future__ import annotations

import pytest

from broker.fetch_messages import FetchPartition
from broker.partition_log import PartitionLog
from broker.replica import Replica
from metadata.image import PartitionRegistration
from tests.broker.replica_cell import TOPIC_ID, Cell, one

LEADER, FOLLOWER = 0, 1
LAG_MS = 100
"""replica.lag.time.max.ms of Kafka's test."""
LEADER_END = 20
START = 1_000


def _partition_with_all_replicas_in_isr() -> Replica:
    """Kafka's getPartitionWithAllReplicasInIsr: broker 0 leads (0, 1), both in the ISR,
    its log ending at 20, at time START."""
    log = PartitionLog(check_sequences=False)
    log.append_as_leader([str(i) for i in range(LEADER_END)], 0)
    replica = Replica(LEADER, TOPIC_ID, "foo", 0, log)
    replica.become(PartitionRegistration(replicas=(LEADER, FOLLOWER), isr=(LEADER, FOLLOWER),
                                         leader=LEADER, leader_epoch=0, partition_epoch=0),
                   START)
    assert replica.isr == (LEADER, FOLLOWER)
    return replica


def _fetch(replica: Replica, offset: int, now: int) -> None:
    """The follower fetches from ``offset`` at ``now`` (updateFetchStateOrThrow)."""
    answer = replica.serve_fetch(FOLLOWER, FetchPartition(TOPIC_ID, 0, 0, offset, -1), now,
                                 100, broker_epoch=1)
    assert answer.error == "NONE"


def _out_of_sync(replica: Replica, now: int) -> set[int]:
    """Kafka's getOutOfSyncReplicas: the members the periodic check would drop."""
    proposal = replica.isr_proposal(now, LAG_MS, expand=False)
    return set() if proposal is None else set(replica.isr) - set(proposal)


def test_isr_expiration_for_stuck_followers() -> None:
    """testIsrExpirationForStuckFollowers: a follower one record behind that stops fetching
    is out of sync once replica.lag.time.max.ms has passed."""
    partition = _partition_with_all_replicas_in_isr()
    _fetch(partition, LEADER_END - 1, START)
    assert _out_of_sync(partition, START) == set()
    assert _out_of_sync(partition, START + 150) == {FOLLOWER}


def test_isr_expiration_if_no_fetch_request_made() -> None:
    """testIsrExpirationIfNoFetchRequestMade: a follower that never fetches is out of sync
    once replica.lag.time.max.ms has passed since the leader's epoch began."""
    partition = _partition_with_all_replicas_in_isr()
    assert _out_of_sync(partition, START + LAG_MS) == set()
    assert _out_of_sync(partition, START + 150) == {FOLLOWER}


def test_isr_expiration_for_slow_followers() -> None:
    """testIsrExpirationForSlowFollowers: a follower that keeps fetching but never reaches
    the log end is out of sync once it has not been caught up for replica.lag.time.max.ms
    (its fetches alone do not keep it in); a fetch reaching the log end makes it in sync
    again."""
    partition = _partition_with_all_replicas_in_isr()
    _fetch(partition, LEADER_END - 2, START)
    assert _out_of_sync(partition, START) == set()
    _fetch(partition, LEADER_END - 1, START + 75)
    assert _out_of_sync(partition, START + 75) == set()
    assert _out_of_sync(partition, START + 150) == {FOLLOWER}
    _fetch(partition, LEADER_END, START + 150)
    assert _out_of_sync(partition, START + 150) == set()


def test_isr_expiration_for_caught_up_followers() -> None:
    """testIsrExpirationForCaughtUpFollowers: a follower whose log end offset is the
    leader's is never out of sync, however long ago it last fetched (Kafka's
    ReplicaState.isCaughtUp; before, kraftsim's leader dropped it after
    replica.lag.time.max.ms like a stuck follower). Once the leader appends, it is out of
    sync replica.lag.time.max.ms after it was last caught up."""
    partition = _partition_with_all_replicas_in_isr()
    _fetch(partition, LEADER_END, START)
    assert _out_of_sync(partition, START) == set()
    assert _out_of_sync(partition, START + 150) == set()
    assert _out_of_sync(partition, START + 1_000_000) == set()
    partition.log.append_as_leader(["x"], 0)
    assert _out_of_sync(partition, START + 150) == {FOLLOWER}


@pytest.mark.parametrize("records", [True, False], ids=["replica", "compact-leader"])
def test_a_caught_up_follower_that_stops_fetching_stays_until_the_leader_appends(
        records: bool) -> None:
    """testIsrExpirationForCaughtUpFollowers through the replica manager: follower 2 has
    fetched everything leader 1 holds (one record, or nothing: a leader with an empty log,
    held compact) and stops fetching; the periodic ISR check asks for nothing, however
    long it runs. Once the leader appends a record, the check drops 2
    replica.lag.time.max.ms after its last fetch. (Before, both leaders asked to drop it
    replica.lag.time.max.ms after its last fetch without the append.)"""
    cell = Cell(brokers=(1, 2))
    cell.create(replicas=(1, 2), leader=1)
    if records:
        cell.produce(1, ["a"])
    cell.run(1_000)
    assert cell.replica(2).log.end_offset == (1 if records else 0)
    del cell.managers[2]  # the follower stops fetching
    lag = cell.config.replica_lag_time_max_ms
    cell.run(3 * lag, every=1_000)
    assert cell.alters == []
    assert (cell.managers[1].compact_leader_epoch((TOPIC_ID, 0)) is None) == records
    cell.produce(1, ["b"], acks=1)
    cell.run(lag, every=1_000)
    assert [(src, one(request).new_isr) for src, request in cell.alters] == [(1, (1,))]
