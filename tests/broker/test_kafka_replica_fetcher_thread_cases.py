"""The case of Kafka's ReplicaFetcherThreadTest that kraftsim's follower can follow.

Kafka class followed: ``ReplicaFetcherThreadTest``
(``core/src/test/scala/unit/kafka/server``), whose fetcher thread, leader end point, log
and partition are mocks. kraftsim's follower side of a fetch answer is
:meth:`broker.replica.Replica.apply_fetched` (the replica manager hands it each
partition of a leader's answer); its log is a :class:`~broker.partition_log.PartitionLog`
written to match Kafka's stubs.

Ported: testTruncateOnFetchDoesNotUpdateHighWatermark,
shouldTruncateIfLeaderRepliesWithDivergingEpochNotKnownToFollower.

Not ported:

- testFetchLeaderEpochRequestIfLastEpochDefinedForSomePartitions: the fetcher of an old
  inter.broker.protocol.version that asks OffsetsForLeaderEpoch before fetching; kraftsim's
  followers always truncate on fetch (a diverging epoch in the answer), as KRaft's do.
- The OffsetsForLeaderEpoch path of old inter.broker.protocol versions and the fetcher
  thread's own states around it (kraftsim's followers truncate on fetch only):
  shouldFetchLeaderEpochOnFirstFetchOnlyIfLeaderEpochKnownToBothIbp26,
  shouldNotFetchLeaderEpochOnFirstFetchWithTruncateOnFetch,
  shouldTruncateToOffsetSpecifiedInEpochOffsetResponse,
  shouldTruncateToOffsetSpecifiedInEpochOffsetResponseIfFollowerHasNoMoreEpochs,
  shouldFetchLeaderEpochSecondTimeIfLeaderRepliesWithEpochNotKnownToFollower,
  shouldUseLeaderEndOffsetIfInterBrokerVersionBelow20,
  shouldTruncateToInitialFetchOffsetIfLeaderReturnsUndefinedOffset,
  shouldPollIndefinitelyIfLeaderReturnsAnyException, shouldMovePartitionsOutOfTruncatingLogState,
  shouldFilterPartitionsMadeLeaderDuringLeaderEpochRequest.
- Request versions, the network client's exceptions and thread shutdown:
  shouldSendLatestRequestVersionsByDefault, shouldHandleExceptionFromBlockingSend,
  shouldCatchExceptionFromBlockingSendWhenShuttingDownReplicaFetcherThread.
- testLagIsUpdatedWhenNoRecords, shouldUpdateReassignmentBytesInMetrics,
  shouldNotUpdateReassignmentBytesInMetricsWhenNoReassignmentsInProgress: fetcher metrics
  are not modelled.
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


def test_a_diverging_epoch_the_follower_does_not_know_truncates_to_its_own_epochs_end() -> None:
    """shouldTruncateIfLeaderRepliesWithDivergingEpochNotKnownToFollower, on a log whose
    epochs are 1 to offset 118, 2 to 128, 4 to 148 and 5 to 199 (Kafka's stubs answer each
    loop with offsets of their own; here one log answers all three). A divergence at epoch
    4 ending at 140, an epoch the follower has, cuts the log at 140; one at epoch 3, which
    it never had, cuts it where its largest older epoch (2) ends, 129, and the follower keeps
    fetching; one at epoch 2 ending at 120 then cuts it at 120."""
    log = PartitionLog(check_sequences=False)
    for epoch, count in ((1, 119), (2, 10), (4, 20), (5, 51)):
        log.append_as_leader([f"v{i}" for i in range(count)], epoch)
    log.update_high_watermark(115)
    assert (log.end_offset, log.end_offset_for_epoch(3)) == (200, (2, 129))
    follower = Replica(FOLLOWER, TOPIC_ID, "t1", 0, log)
    follower.become(PartitionRegistration(replicas=(LEADER, FOLLOWER), isr=(LEADER,),
                                          leader=LEADER, leader_epoch=6,
                                          partition_epoch=6), 0)
    for epoch, leader_end, cut in ((4, 140, 140), (3, 130, 129), (2, 120, 120)):
        assert not follower.apply_fetched(FetchedPartition(
            TOPIC_ID, 0, "NONE", high_watermark=160, diverging=True, diverging_epoch=epoch,
            diverging_end_offset=leader_end))
        assert log.end_offset == cut, epoch
    assert log.high_watermark == 115 and log.truncations == 3
