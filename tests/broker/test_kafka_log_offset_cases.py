"""The cases of Kafka's ``kafka.server.LogOffsetTest`` that kraftsim models.

Kafka's test lists offsets of a broker's partitions, mostly with version 0 of
ListOffsets (a list of segment start offsets before a time, at most
``maxNumOffsets`` of them) and by record timestamps. kraftsim answers
:meth:`~broker.replica_manager.ReplicaManager.list_offsets` for the EARLIEST
and LATEST offsets only, on the brokers of a
:class:`tests.broker.replica_cell.Cell`, and has no request versions, log
segments, record timestamps, retention or DeleteRecords: a partition's log
always starts at offset 0.

Not ported:

- testGetOffsetsAfterDeleteRecords: no DeleteRecords (the log start offset is
  always 0) and no version 0 offset lists.
- testFetchOffsetByTimestampForMaxTimestampAfterTruncate,
  testFetchOffsetByTimestampForMaxTimestampWithUnorderedTimestamps,
  testFetchOffsetByTimestampForMaxTimestampWithEmptyLog: records carry no
  timestamps (no MAX_TIMESTAMP lookup).
- testGetOffsetsBeforeLatestTime, testGetOffsetsBeforeNow,
  testGetOffsetsBeforeEarliestTime: version 0 offset lists of segment starts
  (no log segments) and lookups by time.
- testFetchOffsetsBeforeWithChangingSegmentSize,
  testFetchOffsetsBeforeWithChangingSegments: races on log segments (no
  segments, no threads).
"""

from __future__ import annotations

from broker.replica_manager import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, ListedOffset
from metadata.schema import PartitionRecord, TopicRecord
from tests.broker.replica_cell import Cell


def test_get_offsets_for_unknown_topic() -> None:
    """testGetOffsetsForUnknownTopic: LATEST of a topic the broker does not know."""
    cell = Cell(brokers=(1,))
    assert cell.managers[1].list_offsets("foo", 0, LATEST_TIMESTAMP) == \
        ListedOffset("UNKNOWN_TOPIC_OR_PARTITION")


def test_empty_logs_get_offsets() -> None:
    """testEmptyLogsGetOffsets: a broker's EARLIEST of an empty partition is 0, however
    often it is asked (Kafka's leftover directory of another partition changes nothing;
    kraftsim's logs are not directories)."""
    cell = Cell(brokers=(1,))
    cell.publish(TopicRecord("kafka-", "a2Fma2EtAAAAAAAAAAAAAA"),
                 *[PartitionRecord(p, "a2Fma2EtAAAAAAAAAAAAAA", (1,), (1,), leader=1,
                                   leader_epoch=0, partition_epoch=0) for p in range(10)])
    manager = cell.managers[1]
    offsets = {manager.list_offsets("kafka-", 0, EARLIEST_TIMESTAMP, replica_id=0).offset
               for _ in range(14)}
    assert offsets == {0}
