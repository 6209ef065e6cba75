"""The cases of Kafka's ``kafka.server.ListOffsetsRequestTest`` that kraftsim models.

Kafka sends ListOffsets requests (from a consumer, a follower or a debugging
client) to a cluster's brokers. kraftsim's
:meth:`~broker.replica_manager.ReplicaManager.list_offsets` answers one
partition in-process, on the brokers of a :class:`tests.broker.replica_cell.Cell`
(metadata written by hand; killing the first leader is a leader change in the
image, one epoch more). Records carry no timestamps in kraftsim, so only the
EARLIEST, EARLIEST_LOCAL and LATEST lookups exist (each logs starts at offset
0: no retention, no DeleteRecords, no tiered storage), and the answer is a
:class:`~broker.replica_manager.ListedOffset` (error, offset, leader epoch) of
the latest request version.

Not ported:

- testResponseDefaultOffsetAndLeaderEpochForAllVersions: request versions are
  not modelled (its latest-version lookups by EARLIEST and LATEST are those of
  testResponseIncludesLeaderEpoch), nor are record timestamps (lookups by time
  and MAX_TIMESTAMP).

testResponseIncludesLeaderEpoch is ported without its lookups by timestamp 0
and MAX_TIMESTAMP (no record timestamps).
"""

from __future__ import annotations

import pytest

from broker.replica_manager import (
    CONSUMER_REPLICA_ID,
    DEBUGGING_REPLICA_ID,
    EARLIEST_LOCAL_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    ListedOffset,
)
from broker.txn.fetch import READ_COMMITTED
from tests.broker.replica_cell import TOPIC, Cell


def test_list_offsets_error_codes() -> None:
    """testListOffsetsErrorCodes: EARLIEST with current leader epoch 0, from a consumer, a
    broker and a debugging client: an unknown topic is UNKNOWN_TOPIC_OR_PARTITION; a
    follower answers only the debugging client; a broker with no replica answers none."""
    cell = Cell(brokers=(1, 2, 3))

    def errors(broker: int) -> list[str]:
        manager = cell.managers[broker]
        return [manager.list_offsets(TOPIC, 0, EARLIEST_TIMESTAMP, 0, replica_id=replica).error
                for replica in (-1, 1, DEBUGGING_REPLICA_ID)]

    assert errors(1) == ["UNKNOWN_TOPIC_OR_PARTITION"] * 3
    cell.create(replicas=(1, 2), leader=1)
    assert errors(2) == ["NOT_LEADER_OR_FOLLOWER", "NOT_LEADER_OR_FOLLOWER", "NONE"]
    assert errors(3) == ["NOT_LEADER_OR_FOLLOWER"] * 3
    assert errors(1) == ["NONE"] * 3


def test_current_epoch_validation() -> None:
    """testCurrentEpochValidation: the leader answers NONE for no current leader epoch and
    for its own, FENCED_LEADER_EPOCH for an older one, UNKNOWN_LEADER_EPOCH for a newer one;
    a follower checks the epoch before leadership."""
    cell = Cell(brokers=(1, 2, 3))
    cell.create(replicas=(1, 2, 3), leader=1)
    cell.step()
    epoch = cell.change(leader=2, isr=(2, 3)).leader_epoch
    cell.step()

    def error(broker: int, current: int = -1) -> str:
        return cell.managers[broker].list_offsets(TOPIC, 0, EARLIEST_TIMESTAMP, current).error

    assert error(2) == "NONE"
    assert error(2, epoch) == "NONE"
    assert error(2, epoch - 1) == "FENCED_LEADER_EPOCH"
    assert error(2, epoch + 1) == "UNKNOWN_LEADER_EPOCH"
    assert error(3) == "NOT_LEADER_OR_FOLLOWER"
    assert error(3, epoch) == "NOT_LEADER_OR_FOLLOWER"
    assert error(3, epoch + 1) == "UNKNOWN_LEADER_EPOCH"
    assert error(3, epoch - 1) == "FENCED_LEADER_EPOCH"


def test_response_includes_leader_epoch() -> None:
    """testResponseIncludesLeaderEpoch: ten records in the first epoch; EARLIEST (and
    EARLIEST_LOCAL) give offset 0 with the first epoch, before and after the leader
    changes; LATEST gives 10 with the current leader's epoch once the new leader's high
    watermark reached the start of its epoch (OFFSET_NOT_AVAILABLE until then)."""
    cell = Cell(brokers=(1, 2, 3))
    cell.create(replicas=(1, 2, 3), leader=1)
    answers = cell.produce(1, [f"m{i}" for i in range(10)])
    cell.run(500)
    assert [a.error for a in answers] == ["NONE"]
    first_epoch = cell.registration().leader_epoch

    def listed(broker: int, timestamp: int) -> ListedOffset:
        return cell.managers[broker].list_offsets(TOPIC, 0, timestamp)

    assert listed(1, EARLIEST_TIMESTAMP) == ListedOffset("NONE", 0, first_epoch)
    assert listed(1, EARLIEST_LOCAL_TIMESTAMP) == ListedOffset("NONE", 0, first_epoch)
    assert listed(1, LATEST_TIMESTAMP) == ListedOffset("NONE", 10, first_epoch)

    second_epoch = cell.change(leader=2, isr=(2, 3)).leader_epoch
    for _ in range(20):
        if listed(2, LATEST_TIMESTAMP).error != "OFFSET_NOT_AVAILABLE":
            break
        cell.step(50)
    assert listed(2, EARLIEST_LOCAL_TIMESTAMP) == ListedOffset("NONE", 0, first_epoch)
    assert listed(2, EARLIEST_TIMESTAMP) == ListedOffset("NONE", 0, first_epoch)
    assert listed(2, LATEST_TIMESTAMP) == ListedOffset("NONE", 10, second_epoch)


def test_latest_offset_is_not_available_while_a_new_leaders_hw_lags() -> None:
    """Beside testResponseIncludesLeaderEpoch (Kafka's Partition.fetchOffsetForTimestamp):
    a new leader that holds records above its high watermark answers a consumer's LATEST
    OFFSET_NOT_AVAILABLE until the high watermark reaches the start of its epoch; a
    broker's request is answered with its log end offset meanwhile."""
    cell = Cell(brokers=(1, 2))
    cell.create(replicas=(1, 2), leader=1)
    cell.step()
    cell.produce(1, [f"v{i}" for i in range(10)], acks=1)
    for _ in range(3):  # broker 2 fetches the records, not yet the high watermark
        cell.step(50, rounds=1)
    assert (cell.replica(2).log.end_offset, cell.replica(2).log.high_watermark) == (10, 0)
    epoch = cell.change(leader=2).leader_epoch
    manager = cell.managers[2]
    assert manager.list_offsets(TOPIC, 0, LATEST_TIMESTAMP) == \
        ListedOffset("OFFSET_NOT_AVAILABLE")
    assert manager.list_offsets(TOPIC, 0, LATEST_TIMESTAMP, replica_id=1) == \
        ListedOffset("NONE", 10, epoch)
    assert manager.list_offsets(TOPIC, 0, EARLIEST_TIMESTAMP) == ListedOffset("NONE", 0, 0)
    cell.run(500)
    assert manager.list_offsets(TOPIC, 0, LATEST_TIMESTAMP) == ListedOffset("NONE", 10, epoch)
    assert manager.list_offsets(TOPIC, 0, LATEST_TIMESTAMP, isolation=READ_COMMITTED) == \
        ListedOffset("NONE", 10, epoch)


def test_an_empty_leaders_earliest_epoch_is_its_own() -> None:
    """Kafka's leader enters its epoch in its cache when it becomes leader: an empty log's
    EARLIEST names that epoch; a follower's empty log (asked by a debugging client) has
    none."""
    cell = Cell(brokers=(1, 2))
    cell.create(replicas=(1, 2), leader=1, leader_epoch=3)
    assert cell.managers[1].list_offsets(TOPIC, 0, EARLIEST_TIMESTAMP) == \
        ListedOffset("NONE", 0, 3)
    assert cell.managers[1].list_offsets(TOPIC, 0, LATEST_TIMESTAMP) == \
        ListedOffset("NONE", 0, 3)
    assert cell.managers[2].list_offsets(TOPIC, 0, EARLIEST_TIMESTAMP,
                                         replica_id=DEBUGGING_REPLICA_ID) == \
        ListedOffset("NONE", 0, -1)


def test_a_lookup_by_time_is_refused() -> None:
    """Records carry no timestamp here: a lookup by time (or MAX_TIMESTAMP, -3) is a
    caller's error, not an answer; so is an isolation level that does not exist."""
    cell = Cell(brokers=(1,))
    cell.create(replicas=(1,), leader=1)
    for timestamp in (0, 1_000, -3):
        with pytest.raises(ValueError, match="timestamps are not modelled"):
            cell.managers[1].list_offsets(TOPIC, 0, timestamp)
    with pytest.raises(ValueError, match="isolation"):
        cell.managers[1].list_offsets(TOPIC, 0, LATEST_TIMESTAMP, isolation="committed")


def test_earliest_names_the_epoch_of_the_first_record() -> None:
    """Beyond Kafka's cases: EARLIEST and EARLIEST_LOCAL give the log start with the epoch
    of its first leader-epoch entry, here 3 (records written in epochs 3 and 4), not the
    current one."""
    cell = Cell(brokers=(1,))
    cell.create(replicas=(1,), leader=1, leader_epoch=3)
    cell.produce(1, ["a", "b"])
    assert cell.change(leader=1).leader_epoch == 4
    cell.produce(1, ["c"])
    cell.run(500)
    manager = cell.managers[1]
    assert manager.list_offsets(TOPIC, 0, EARLIEST_TIMESTAMP) == ListedOffset("NONE", 0, 3)
    assert manager.list_offsets(TOPIC, 0, EARLIEST_LOCAL_TIMESTAMP) == \
        ListedOffset("NONE", 0, 3)
    assert manager.list_offsets(TOPIC, 0, LATEST_TIMESTAMP) == ListedOffset("NONE", 3, 4)


def test_the_sentinels_are_kafkas_numbers() -> None:
    """Kafka's wire values: timestamps EARLIEST -2, LATEST -1, EARLIEST_LOCAL -4; replica
    ids -1 for a consumer and -2 for a debugging client (which a follower answers); an
    error comes with offset and epoch -1 (UNKNOWN_OFFSET, UNKNOWN_EPOCH)."""
    assert (EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP) == (-2, -1, -4)
    assert (CONSUMER_REPLICA_ID, DEBUGGING_REPLICA_ID) == (-1, -2)
    cell = Cell(brokers=(1, 2))
    cell.create(replicas=(1, 2), leader=1)
    follower = cell.managers[2]
    assert follower.list_offsets(TOPIC, 0, -4, replica_id=-2) == ListedOffset("NONE", 0, -1)
    assert follower.list_offsets(TOPIC, 0, -2, replica_id=-1) == \
        ListedOffset("NOT_LEADER_OR_FOLLOWER", -1, -1)
