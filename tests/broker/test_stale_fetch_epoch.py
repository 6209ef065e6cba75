"""A partition leader refuses a follower fetch whose broker epoch is older than the one its
image holds for that follower, registered and unfenced (Kafka's
Replica.updateFetchStateOrThrow, KIP-903): the fetch of an incarnation that registered
again since is answered NOT_LEADER_OR_FOLLOWER and nothing of it is recorded. A fetch
with no broker epoch (-1), one newer than the image's, and one from a follower the image
holds fenced are served (Kafka compares with the metadata cache's alive brokers only)."""

from __future__ import annotations

import pytest

from broker.compact_leader import CompactLeader
from broker.fetch_messages import FetchPartition, ReplicaFetchRequest, ReplicaFetchResponse
from metadata.requests import NodeMessage
from metadata.schema import RegisterBrokerRecord
from tests.broker.replica_cell import KEY, TOPIC_ID, Cell, broker_epoch, one

NEW_EPOCH = 20
"""The broker epoch broker 2 registers again with."""


def _reregister(cell: Cell, fenced: bool = False) -> None:
    """Broker 2 registers again (a new incarnation, epoch 20), unfenced unless ``fenced``;
    every broker's image shows it, broker 2's lifecycle still holds its old epoch (its
    fetches are those of the old incarnation)."""
    cell.publish(RegisterBrokerRecord(2, "again-2", broker_epoch=NEW_EPOCH, fenced=fenced))


def _fetch(cell: Cell, epoch: int, offset: int = 1, last_epoch: int = 0,
           leader_epoch: int = 0) -> ReplicaFetchResponse:
    """Hand leader 1 a full fetch of broker 2 carrying broker ``epoch``; its answer."""
    manager = cell.managers[1]
    manager.drain_outbox()
    manager.handle_message(NodeMessage(2, 1, ReplicaFetchRequest(
        500, 2, epoch, (FetchPartition(TOPIC_ID, 0, leader_epoch, offset, last_epoch),))),
        cell.now)
    (answer,) = [env.message for env in manager.drain_outbox()
                 if isinstance(env.message, ReplicaFetchResponse)]
    return answer


def _leader_with_a_record(cell: Cell) -> None:
    """Partition (1, 2) led by 1, ISR (1,), one record at offset 0, broker 2 not fetching."""
    del cell.managers[2]
    cell.create(replicas=(1, 2), isr=(1,), leader=1)
    cell.produce(1, ["a"], acks=1)
    cell.step()


def test_a_fetch_with_a_stale_broker_epoch_is_refused_and_records_nothing() -> None:
    """The image holds broker 2 at epoch 20, unfenced; a fetch carrying its old epoch 2,
    caught up, is answered NOT_LEADER_OR_FOLLOWER: the leader records no position, no
    fetch time and no broker epoch for 2, and asks for no ISR change (Kafka's
    testFenceFollowerFetchWithStaleBrokerEpoch)."""
    cell = Cell()
    _leader_with_a_record(cell)
    _reregister(cell)
    leader = cell.replica(1)
    before = leader.follower(2)
    assert before is None or not before.has_fetched()
    answer = _fetch(cell, broker_epoch(2))
    assert [(p.error, p.entries) for p in answer.partitions] == \
        [("NOT_LEADER_OR_FOLLOWER", ())]
    state = leader.follower(2)
    assert state is None or (not state.has_fetched() and state.end_offset == -1
                             and state.fetched_broker_epoch() == -1)
    cell.step()
    assert cell.alters == []


@pytest.mark.parametrize(("epoch", "fenced"), [
    (-1, False),             # a fetch before Fetch v15 carries no epoch
    (NEW_EPOCH, False),      # the current incarnation
    (NEW_EPOCH + 5, False),  # an epoch the leader's image does not know yet
    (broker_epoch(2), True),  # the image holds 2 fenced: Kafka compares alive brokers only
])
def test_a_fetch_that_is_not_stale_is_served(epoch: int, fenced: bool) -> None:
    cell = Cell()
    _leader_with_a_record(cell)
    _reregister(cell, fenced=fenced)
    answer = _fetch(cell, epoch)
    assert [p.error for p in answer.partitions] == ["NONE"]
    state = cell.replica(1).follower(2)
    assert state is not None and state.end_offset == 1
    assert state.fetched_broker_epoch() == epoch


@pytest.mark.parametrize("records", [True, False], ids=["replica", "compact-leader"])
def test_a_diverging_stale_fetch_is_answered_with_the_divergence(records: bool) -> None:
    """Kafka checks the epoch only when it records the fetch, which a divergence skips:
    the follower is told where it diverged, and still nothing is recorded. The same for a
    leader with an empty log, which the broker holds compact: a stale fetch naming a last
    fetched epoch needs the divergence check, so the compact leader hands it to its full
    Replica, and the follower is told where it diverged (end offset 0 of epoch 0), not
    refused NOT_LEADER_OR_FOLLOWER."""
    cell = Cell()
    if records:
        _leader_with_a_record(cell)
    else:
        del cell.managers[2]
        cell.create(replicas=(1, 2), isr=(1,), leader=1)
        cell.step()
        assert type(cell.managers[1]._replicas.get(KEY)) is CompactLeader
    _reregister(cell)
    answer = _fetch(cell, broker_epoch(2), offset=3, last_epoch=0)
    (part,) = answer.partitions
    assert part.error == "NONE" and part.diverging
    state = cell.replica(1).follower(2)
    assert state is None or not state.has_fetched()


def test_a_stale_fetch_with_an_old_leader_epoch_is_fenced_first() -> None:
    """The leader epoch checks come before the broker epoch's (Kafka's fetchRecords)."""
    cell = Cell()
    _leader_with_a_record(cell)
    cell.change(leader=1)  # leader epoch 1
    _reregister(cell)
    answer = _fetch(cell, broker_epoch(2), leader_epoch=0)
    assert [p.error for p in answer.partitions] == ["FENCED_LEADER_EPOCH"]


@pytest.mark.parametrize("records", [True, False], ids=["replica", "compact-leader"])
def test_an_isr_member_fetching_with_a_stale_epoch_leaves_the_isr(records: bool) -> None:
    """Broker 2 is in the ISR, caught up and idle on its fetch session; it registers again
    (epoch 20 in every image) but the fetches keep carrying epoch 2. Each is refused,
    the idle partition too (Kafka reads every partition of the session), and counts as no
    fetch: once the leader has appended a record (a follower at the leader's log end is
    never out of sync), past replica.lag.time.max.ms it asks to shrink the ISR to (1,). (A
    leader with an empty log, held compact, refuses them alike.)"""
    cell = Cell(brokers=(1, 2))
    cell.create(replicas=(1, 2), isr=(1, 2), leader=1)
    if records:
        cell.produce(1, ["a"])
    cell.run(1_000)
    assert cell.alters == []
    _reregister(cell)
    answers: list[str] = []
    take = cell.managers[2]._on_fetch_response

    def noted(leader: int, msg: ReplicaFetchResponse, now: int) -> None:
        answers.extend(p.error for p in msg.partitions)
        take(leader, msg, now)
    cell.managers[2]._on_fetch_response = noted  # type: ignore[method-assign]
    cell.run(5_000, every=1_000)
    assert answers and set(answers) == {"NOT_LEADER_OR_FOLLOWER"}
    assert (cell.managers[1].compact_leader_epoch(KEY) is None) == records
    cell.produce(1, ["b"], acks=1)
    cell.run(40_000, every=1_000)
    assert answers and set(answers) == {"NOT_LEADER_OR_FOLLOWER"}
    assert [(one(request).new_isr, one(request).new_isr_epochs) for _, request in cell.alters] == \
        [((1,), (broker_epoch(1),))]
    assert KEY in cell.managers[1].replicas
