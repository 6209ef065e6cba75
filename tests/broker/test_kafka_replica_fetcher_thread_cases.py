"""The case of Kafka's ReplicaFetcherThreadTest that kraftsim's follower can follow.

Kafka class followed: ``ReplicaFetcherThreadTest``
(``core/src/test/scala/unit/kafka/server``), whose fetcher thread, leader end point, log
and partition are mocks. kraftsim's follower side of a fetch answer is
:meth:`broker.replica.Replica.apply_fetched` (the replica manager hands it each
partition of a leader's answer); its log is a :class:`~broker.partition_log.PartitionLog`
written to match Kafka's stubs.

Ported: testTruncateOnFetchDoesNotUpdateHighWatermark.

Not ported:

- testFetchLeaderEpochRequestIfLastEpochDefinedForSomePartitions: the fetcher of an old
  inter.broker.protocol.version that asks OffsetsForLeaderEpoch before fetching; kraftsim's
  followers always truncate on fetch (a diverging epoch in the answer), as KRaft's do.
- testLagIsUpdatedWhenNoRecords: fetcher lag metrics are not modelled.
- testBuildFetch: its session drops an unchanged partition and marks one whose topic id
  changed as "replaced"; kraftsim's fetch session keys partitions by topic id, so a new
  topic id is a new partition, and the request builder is not separate from the replica
  manager.
- testLocalFetchCompletionIfHighWatermarkUpdated: a follower's high watermark completing
  delayed consumer fetches; kraftsim's consumer fetches are not delayed.
"""

from __future__ import annotations

from broker.fetch_messages import FetchedPartition
from broker.partition_log import PartitionLog
from broker.replica import Replica
from metadata.image import PartitionRegistration

TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAA"
LEADER, FOLLOWER = 0, 1


def test_truncate_on_fetch_does_not_update_high_watermark() -> None:
    """The follower's log ends at 150 (epoch 4 to offset 149, then epoch 5), its high
    watermark is 130; the leader answers that it diverged at epoch 4, ending at 140, with
    its high watermark 160. The follower cuts its log at 140 and keeps its high watermark:
    the leader's is not taken from an answer that carries a divergence."""
    log = PartitionLog(check_sequences=False)
    for epoch, count in ((4, 149), (5, 1)):
        log.append_as_leader([f"v{i}" for i in range(count)], epoch)
    log.update_high_watermark(130)
    assert (log.end_offset, log.high_watermark, log.end_offset_for_epoch(4)) == \
        (150, 130, (4, 149))
    follower = Replica(FOLLOWER, TOPIC_ID, "t1", 0, log)
    follower.become(PartitionRegistration(replicas=(LEADER, FOLLOWER), isr=(LEADER,),
                                          leader=LEADER, leader_epoch=6,
                                          partition_epoch=6), 0)
    arrived = follower.apply_fetched(FetchedPartition(
        TOPIC_ID, 0, "NONE", high_watermark=160, diverging=True, diverging_epoch=4,
        diverging_end_offset=140))
    assert not arrived
    assert (log.end_offset, log.high_watermark, log.truncations) == (140, 130, 1)
