"""The cases of Kafka's ``kafka.cluster.PartitionTest`` that kraftsim models.

Kafka's Partition is kraftsim's :class:`~broker.replica.Replica` (with its
:class:`~broker.partition_log.PartitionLog`), run by the broker's
:class:`~broker.replica_manager.ReplicaManager`: the leader checks a follower's
fetch (leader epoch, replica, last fetched epoch), tracks what each follower
holds and when it was last caught up, moves the high watermark over the
maximal ISR, and asks the controller for ISR changes. A leadership comes from
the broker's published image (Kafka's makeLeader/makeFollower).

Ported in tests/broker/test_alter_partition_answers.py (a leader taking the
controller's AlterPartition answer): testAlterIsrNewLeaderElected,
testAlterIsrUnknownTopic, testAlterIsrInvalidVersion, testIsrNotShrunkIfUpdateFails (its
INVALID_UPDATE_VERSION leaves the shrink pending, the ISR as written) and
testInvalidAlterPartitionRequestsAreNotRetried
(test_an_error_of_stale_metadata_keeps_the_change_pending_until_new_metadata);
testAlterIsrUnexpectedError and testPartitionShouldRetryAlterPartitionRequest
(test_another_error_sends_the_same_proposal_again). The
high watermark read back from its checkpoint (testUseCheckpointToInitializeHighWatermark)
is LogRecoveryTest's (test_kafka_log_recovery_cases.py).

Left out, as kraftsim does not model them, with the cases:

- future replicas and alter-log-dirs: testMaybeReplaceCurrentWithFutureReplica,
  testMaybeReplaceCurrentWithFutureReplicaDifferentBaseOffsets,
  testPartitionListenerWhenCurrentIsReplacedWithFutureLog; log directories (JBOD):
  makeLeaderInvokesgetOrCreateLog_OnOnlineLogDir,
  makeFollowerInvokesgetOrCreateLog_OnOnlineLogDir,
  makeLeaderInvokesgetOrCreateLog_WhenNoLogDirOffline,
  makeFollowerInvokesgetOrCreateLog_WhenNoLogDirOffline,
  makeLeaderInvokesgetOrCreateLog_WhenTargetDirIsUnassigned,
  makeFollowerInvokesgetOrCreateLog_WhenTargetDirIsUnassigned;
- log start offsets (no retention or DeleteRecords):
  testAppendRecordsAsFollowerBelowLogStartOffset;
- ListOffsets lookups by record timestamp (records carry none; the EARLIEST and LATEST
  lookups and OffsetsForLeaderEpoch are ported on the replica manager, which answers
  them), and consumer fetches from followers (testLeaderEpochValidationOnFollower; its
  epoch checks, which come first in both, are in test_kafka_fetch_request_cases.py);
- Partition.fetchOffsetSnapshot, an internal read of the log's offsets that checks the
  leader epoch as ListOffsets does (test_fetch_offset_for_timestamp_epoch_validation_for_
  leader and _for_follower): testFetchOffsetSnapshotEpochValidationForLeader,
  testFetchOffsetSnapshotEpochValidationForFollower;
- metrics and partition listeners: testAddAndRemoveMetrics,
  testUnderReplicatedPartitionsCorrectSemantics, testAddAndRemoveListeners,
  testAddListenerFailsWhenPartitionIsDeleted, testPartitionListenerWhenLogOffsetsChanged,
  testPartitionListenerWhenPartitionFailed, testPartitionListenerWhenPartitionIsDeleted;
- ZooKeeper modes: testZkIsrManagerAsyncCallback;
- partition states older than the current one (images only move forward):
  testIgnoreLeaderPartitionStateChangeWithOlderPartitionEpoch,
  testIgnoreFollowerPartitionStateChangeWithOlderPartitionEpoch;
- transaction verification (KIP-890): testMaybeStartTransactionVerification;
- topic-id files: testTopicIdAndPartitionMetadataFileForLeader,
  testTopicIdAndPartitionMetadataFileForFollower;
- a log's cached config marked dirty (kraftsim's replicas read configs from the image):
  testLogConfigNotDirty, testLogConfigDirtyAsTopicUpdated, testLogConfigDirtyAsBrokerUpdated;
- threads and Kafka's internal accessors, with no behaviour of their own here:
  testMakeFollowerWithWithFollowerAppendRecords (an append racing a leader change on two
  threads), testGetReplica, testAppendRecordsToFollowerWithNoReplicaThrowsException,
  testIsReplicaIsrEligibleWithEmptyReplicaMap, tryCompleteDelayedRequestsCatchesExceptions.
"""

from __future__ import annotations

import pytest

from broker.fetch_messages import NO_LEADER_EPOCH, FetchPartition
from broker.partition_log import LogEntry, PartitionLog
from broker.replica import Replica
from broker.replica_manager import (
    DEBUGGING_REPLICA_ID,
    EARLIEST_LOCAL_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
)
from broker.txn.fetch import READ_COMMITTED, READ_UNCOMMITTED
from metadata.image import PartitionRegistration
from tests.broker.replica_cell import KEY, TOPIC, TOPIC_ID, Cell, broker_epoch, one

ME, F1, F2 = 1, 2, 3


def _log(batches: list[tuple[int, int]]) -> PartitionLog:
    """A log of ``(leader epoch, records)`` batches."""
    log = PartitionLog(check_sequences=False)
    for epoch, count in batches:
        log.append_as_leader([f"{log.end_offset + i}" for i in range(count)], epoch)
    return log


def _leader(log: PartitionLog, leader_epoch: int, isr: tuple[int, ...] = (ME, F1, F2),
            replicas: tuple[int, ...] = (ME, F1, F2), now: int = 0) -> Replica:
    replica = Replica(ME, TOPIC_ID, "t", 0, log)
    replica.become(PartitionRegistration(replicas=replicas, isr=isr, leader=ME,
                                         leader_epoch=leader_epoch, partition_epoch=1), now)
    return replica


def _fetch(replica: Replica, follower: int, offset: int, epoch: int | None = None,
           last_fetched_epoch: int = -1, now: int = 0):  # type: ignore[no-untyped-def]
    part = FetchPartition(TOPIC_ID, 0, replica.leader_epoch if epoch is None else epoch,
                          offset, last_fetched_epoch)
    return replica.serve_fetch(follower, part, now, 100)


# ---------------------------------------------------------------- fetch validation
def test_last_fetched_epoch_validation_answers_where_the_follower_diverged() -> None:
    """testLastFetchedOffsetValidation, without the log start offset parts: the leader
    answers the largest epoch at or below the follower's last fetched one and where it
    ends, when that epoch is older or ends before the fetch offset."""
    log = _log([(0, 2), (3, 3), (3, 3), (4, 5), (7, 1), (9, 3)])
    assert log.end_offset == 17
    leader = _leader(log, leader_epoch=10)
    for last_epoch, offset, diverged_at in [(2, 5, (0, 2)), (0, 4, (0, 2)), (6, 6, (4, 13)),
                                            (5, 9, (4, 13))]:
        answer = _fetch(leader, F1, offset, last_fetched_epoch=last_epoch)
        assert answer.error == "NONE" and answer.diverging and not answer.entries
        assert (answer.diverging_epoch, answer.diverging_end_offset) == diverged_at
    for last_epoch, offset in [(0, 2), (7, 14), (9, 17)]:
        answer = _fetch(leader, F1, offset, last_fetched_epoch=last_epoch)
        assert answer.error == "NONE" and not answer.diverging


def test_a_diverging_fetch_does_not_update_the_followers_state() -> None:
    """Kafka updates a follower's fetch state only for a read without divergence
    (Partition.fetchRecords; ReplicaManagerTest.testFollowerStateNotUpdatedIfLogReadFails)."""
    leader = _leader(_log([(0, 2), (3, 3)]), leader_epoch=5, now=0)
    _fetch(leader, F1, 7, last_fetched_epoch=4, now=100)
    state = leader.follower(F1)
    assert state is not None and state.end_offset == -1 and state.last_fetch_at == -1


def test_a_fetch_sent_to_a_follower_checks_the_epoch_first() -> None:
    """testReplicaFetchToFollower: a follower refuses a replica fetch; a stale or a future
    leader epoch is named as such before the role."""
    follower = Replica(ME, TOPIC_ID, "t", 0, PartitionLog())
    follower.become(PartitionRegistration(replicas=(ME, F1, F2), isr=(ME, F1, F2), leader=F2,
                                          leader_epoch=8, partition_epoch=1), 0)
    assert _fetch(follower, F1, 0, epoch=8).error == "NOT_LEADER_OR_FOLLOWER"
    assert _fetch(follower, F1, 0, epoch=NO_LEADER_EPOCH).error == "NOT_LEADER_OR_FOLLOWER"
    assert _fetch(follower, F1, 0, epoch=9).error == "UNKNOWN_LEADER_EPOCH"
    assert _fetch(follower, F1, 0, epoch=7).error == "FENCED_LEADER_EPOCH"


def test_leader_epoch_validation_on_the_leader() -> None:
    """testLeaderEpochValidationOnLeader."""
    leader = _leader(PartitionLog(), leader_epoch=5)
    assert _fetch(leader, F1, 0, epoch=NO_LEADER_EPOCH).error == "NONE"  # names none
    assert _fetch(leader, F1, 0, epoch=5).error == "NONE"
    assert _fetch(leader, F1, 0, epoch=4).error == "FENCED_LEADER_EPOCH"
    assert _fetch(leader, F1, 0, epoch=6).error == "UNKNOWN_LEADER_EPOCH"


def test_a_fetch_from_a_broker_that_is_not_a_replica_is_refused_until_it_is_one() -> None:
    """testFetchFromUnrecognizedFollower: UNKNOWN_LEADER_EPOCH (the follower may know an
    assignment the leader does not know yet; NOT_LEADER_OR_FOLLOWER when the fetch names
    no leader epoch) and no state kept; once a reassignment adds
    it in the same epoch its fetches are served."""
    leader = _leader(_log([(8, 2)]), leader_epoch=8, replicas=(ME, F1), isr=(ME, F1))
    assert _fetch(leader, F2, 0).error == "UNKNOWN_LEADER_EPOCH"
    assert leader.follower(F2) is None
    # a fetch naming no leader epoch: the leader cannot tell whose state is stale
    assert _fetch(leader, F2, 0, epoch=NO_LEADER_EPOCH).error == "NOT_LEADER_OR_FOLLOWER"
    assert leader.follower(F2) is None
    assert not leader.become(PartitionRegistration(replicas=(ME, F1, F2), isr=(ME, F1),
                                                   leader=ME, leader_epoch=8,
                                                   partition_epoch=2, adding_replicas=(F2,)), 1)
    answer = _fetch(leader, F2, 0)
    assert answer.error == "NONE" and len(answer.entries) == 2
    state = leader.follower(F2)
    assert state is not None and state.end_offset == 0


def test_a_fetch_naming_no_leader_epoch_is_not_fenced_in_compact_form() -> None:
    """testLeaderEpochValidationOnLeader and testFetchFromUnrecognizedFollower with no
    leader epoch (Kafka's NO_PARTITION_LEADER_EPOCH, an absent one), at a leader and a
    follower held compact (empty logs): the leader serves its replica and refuses a
    stranger NOT_LEADER_OR_FOLLOWER; the follower answers NOT_LEADER_OR_FOLLOWER."""
    from broker.fetch_messages import ReplicaFetchRequest, ReplicaFetchResponse
    from metadata.requests import NodeMessage
    cell = Cell(brokers=(1, 2, 3, 4))
    cell.create(replicas=(1, 2, 3), leader=1, leader_epoch=4)

    def error(sender: int, to: int) -> str:
        manager = cell.managers[to]
        manager.drain_outbox()
        manager.handle_message(NodeMessage(sender, to, ReplicaFetchRequest(
            1, sender, broker_epoch(sender),
            (FetchPartition(TOPIC_ID, 0, NO_LEADER_EPOCH, 0, -1),))), 0)
        [answer] = [env.message for env in manager.drain_outbox()
                    if isinstance(env.message, ReplicaFetchResponse)]
        return answer.partitions[0].error

    assert cell.managers[1].compact_leader_epoch(KEY) == 4
    assert error(2, 1) == "NONE"
    assert error(4, 1) == "NOT_LEADER_OR_FOLLOWER"
    assert error(4, 3) == "NOT_LEADER_OR_FOLLOWER"  # broker 3 follows


def test_a_stranger_to_a_leader_held_compact_is_refused_too() -> None:
    cell = Cell(brokers=(1, 2, 3, 4))
    cell.create(replicas=(1, 2), leader=1)
    manager = cell.managers[1]
    assert manager.compact_leader_epoch(KEY) == 0
    from broker.fetch_messages import ReplicaFetchRequest
    from metadata.requests import NodeMessage
    manager.handle_message(NodeMessage(4, 1, ReplicaFetchRequest(
        1, 4, broker_epoch(4), (FetchPartition(TOPIC_ID, 0, 0, 0, -1),))), 0)
    answer = manager.drain_outbox()[-1].message
    assert [p.error for p in answer.partitions] == ["UNKNOWN_LEADER_EPOCH"]
    assert manager.compact_leader_epoch(KEY) == 0  # still compact


def test_a_replica_added_to_an_empty_leader_in_the_same_epoch_is_served() -> None:
    """testFetchFromUnrecognizedFollower for a leader whose log is still empty (held
    compact): a reassignment that adds broker 3 in the same leader epoch makes it a
    follower the leader serves and tracks, and broker 2 stays one."""
    cell = Cell(brokers=(1, 2, 3))
    cell.create(replicas=(1, 2), leader=1)
    cell.step()
    reg = cell.change(replicas=(1, 2, 3), adding_replicas=(3,))
    assert reg.leader_epoch == 0
    cell.step()
    leader = cell.replica(1)
    for follower in (2, 3):
        state = leader.follower(follower)
        assert state is not None and state.end_offset == 0
    assert cell.replica(3).fetch_position().current_leader_epoch == 0


# ---------------------------------------------------------------- makeLeader / makeFollower
def test_the_epoch_start_and_follower_states_reset_only_when_the_epoch_moves() -> None:
    """testDoNotResetReplicaStateIfLeaderEpochIsNotBumped and
    testDoNotUpdateEpochStartOffsetIfLeaderEpochIsNotBumped."""
    log = _log([(1, 3)])
    leader = _leader(log, leader_epoch=2, isr=(ME, F1), replicas=(ME, F1), now=0)
    assert leader.leader_epoch_start == 3
    _fetch(leader, F1, 3, now=10)
    log.append_as_leader(["x"], 2)
    # an ISR change in the same leader epoch: the leader keeps what it knows
    assert not leader.become(PartitionRegistration(replicas=(ME, F1), isr=(ME,), leader=ME,
                                                   leader_epoch=2, partition_epoch=2), 20)
    state = leader.follower(F1)
    assert state is not None and (state.end_offset, state.caught_up_at) == (3, 10)
    assert leader.leader_epoch_start == 3
    # a new leader epoch starts again at the log end; the same leader keeps each follower's
    # log end offset (Kafka's resetReplicaState with isNewLeader false), nothing else
    assert leader.become(PartitionRegistration(replicas=(ME, F1), isr=(ME, F1), leader=ME,
                                               leader_epoch=3, partition_epoch=3), 30)
    state = leader.follower(F1)
    assert state is not None and (state.end_offset, state.caught_up_at) == (3, 30)
    assert not state.has_fetched() and state.leo_at_last_fetch == -1
    assert leader.leader_epoch_start == 4
    assert leader.log.high_watermark == 3  # moved at once on the offset already known


def test_a_leader_new_to_the_partition_knows_no_follower_offset() -> None:
    """A broker that was a follower and becomes leader starts with every follower's log
    end offset unknown (Kafka's resetReplicaState with isNewLeader true): the high
    watermark waits for the ISR's first fetches."""
    log = _log([(1, 3)])
    replica = Replica(ME, TOPIC_ID, "t", 0, log)
    replica.become(PartitionRegistration(replicas=(ME, F1), isr=(ME, F1), leader=F1,
                                         leader_epoch=2, partition_epoch=1), 0)
    assert replica.become(PartitionRegistration(replicas=(ME, F1), isr=(ME, F1), leader=ME,
                                                leader_epoch=3, partition_epoch=2), 10)
    state = replica.follower(F1)
    assert state is not None and state.end_offset == -1
    _fetch(replica, F1, 3, now=20)
    assert replica.log.high_watermark == 3


def test_a_follower_keeps_no_state_of_other_replicas() -> None:
    """testFollowerShouldNotHaveAnyRemoteReplicaStates."""
    leader = _leader(_log([(1, 2)]), leader_epoch=1)
    _fetch(leader, F1, 2)
    assert leader.followers
    assert leader.become(PartitionRegistration(replicas=(ME, F1, F2), isr=(ME, F1, F2),
                                               leader=F1, leader_epoch=2, partition_epoch=2), 5)
    assert leader.followers == () and not leader.is_leader


def test_make_follower_reports_a_new_epoch_even_with_the_same_leader() -> None:
    """testMakeFollowerWithNoLeaderIdChange: a new epoch restarts the fetch (with the new
    epoch) even when the leader stays the same broker."""
    follower = Replica(ME, TOPIC_ID, "t", 0, PartitionLog())
    reg = PartitionRegistration(replicas=(ME, F1), isr=(ME, F1), leader=F1, leader_epoch=1,
                                partition_epoch=1)
    assert follower.become(reg, 0)
    assert not follower.become(reg, 1)
    assert follower.become(PartitionRegistration(replicas=(ME, F1), isr=(ME, F1), leader=F1,
                                                 leader_epoch=2, partition_epoch=2), 2)
    assert follower.fetch_position().current_leader_epoch == 2


# ---------------------------------------------------------------- follower fetch state
def test_update_follower_fetch_state() -> None:
    """testUpdateFollowerFetchState: a follower in the ISR counts as caught up when the
    epoch begins; a fetch below the log end keeps that time, one at the log end moves it."""
    leader = _leader(_log([(4, 6)]), leader_epoch=5, isr=(ME, F1), replicas=(ME, F1), now=0)
    state = leader.follower(F1)
    assert state is not None and (state.caught_up_at, state.end_offset) == (0, -1)
    _fetch(leader, F1, 3, now=500)
    assert (state.caught_up_at, state.end_offset) == (0, 3)
    _fetch(leader, F1, 6, now=1000)
    assert (state.caught_up_at, state.end_offset) == (1000, 6)


def test_a_follower_caught_up_at_its_previous_fetch_is_caught_up_then() -> None:
    """testShouldNotShrinkIsrIfPreviousFetchIsCaughtUp: a fetch reaching the leader's log
    end as of the previous fetch makes the follower caught up as of that fetch."""
    log = _log([(1, 10)])
    leader = _leader(log, leader_epoch=2, isr=(ME, F1), replicas=(ME, F1), now=0)
    _fetch(leader, F1, 10, now=1_000)
    log.append_as_leader(["a", "b"], 2)
    _fetch(leader, F1, 10, now=20_000)  # caught up at 1000; leader end now 12
    log.append_as_leader(["c"], 2)
    _fetch(leader, F1, 12, now=40_000)  # reached the end of the previous fetch (20000)
    assert leader.isr_proposal(45_000, 30_000) is None
    assert leader.isr_proposal(50_001, 30_000) == (ME,)


def test_a_follower_at_the_log_end_is_never_out_of_sync() -> None:
    """testShouldNotShrinkIsrIfFollowerCaughtUpToLogEnd and testMaybeShrinkIsr: a follower
    whose log end offset is the leader's stays in sync however long ago it fetched (Kafka's
    ReplicaState.isCaughtUp; before, kraftsim dropped it like a stuck follower)."""
    log = _log([(1, 10)])
    leader = _leader(log, leader_epoch=2, isr=(ME, F1, F2), now=0)
    _fetch(leader, F1, 10, now=5_000)
    _fetch(leader, F2, 3, now=5_000)
    assert leader.isr_proposal(30_000, 30_000) is None
    assert leader.isr_proposal(30_001, 30_000) == (ME, F1)  # F2 has not caught up since 0
    assert leader.isr_proposal(100_000, 30_000) == (ME, F1)  # F1 at the log end still
    _fetch(leader, F1, 10, now=60_000)
    assert leader.isr_proposal(60_001, 30_000) == (ME, F1)


# ---------------------------------------------------------------- ISR expansion
def test_isr_expansion_is_asked_at_the_fetch_that_catches_up() -> None:
    """testIsrExpansion: the fetch that reaches the high watermark sends the expansion at
    once; the follower counts in the maximal ISR until the controller writes it."""
    cell = Cell()
    cell.create(replicas=(1, 2), isr=(1,), leader=1)
    cell.produce(1, [f"v{i}" for i in range(10)], acks=1)
    leader = cell.replica(1)
    assert leader.log.high_watermark == 10
    cell.step()  # broker 2 fetches from 0, then from 10
    assert [one(r).new_isr for _, r in cell.alters] == [(1, 2)]
    assert leader.isr == (1,) and leader.maximal_isr() == (1, 2)
    cell.answer_alter()
    assert leader.isr == (1, 2) and leader.pending_isr is None


def test_isr_expansion_only_from_the_leaders_epoch_start() -> None:
    """testFollowerDoesNotJoinISRUntilCaughtUpToOffsetWithinCurrentLeaderEpoch: a follower
    at the high watermark but below where this leader's epoch started stays out."""
    log = _log([(8, 5)])
    leader = _leader(log, leader_epoch=8, isr=(ME, F2), now=0)
    _fetch(leader, F2, 2)
    assert leader.log.high_watermark == 2
    leader.become(PartitionRegistration(replicas=(ME, F1, F2), isr=(ME, F2), leader=F2,
                                        leader_epoch=9, partition_epoch=2), 1)
    leader.become(PartitionRegistration(replicas=(ME, F1, F2), isr=(ME, F2), leader=ME,
                                        leader_epoch=10, partition_epoch=3), 2)
    assert leader.leader_epoch_start == 5
    log.append_as_leader(["x", "y"], 10)
    _fetch(leader, F1, 0, now=3)
    _fetch(leader, F1, 2, now=4)  # at the high watermark, below the epoch start
    assert leader.isr_proposal(5, 30_000, shrink=False) is None
    _fetch(leader, F1, 5, now=6)
    assert leader.isr_proposal(7, 30_000, shrink=False) == (ME, F2, F1)


def test_isr_expansion_at_a_fetch_names_only_the_fetching_follower() -> None:
    """Kafka's maybeExpandIsr(followerReplica): a fetch asks for its own follower only, judged
    by the broker epoch that fetch carried; another follower caught up earlier waits for its
    own fetch."""
    log = _log([(1, 4)])
    leader = _leader(log, leader_epoch=1, isr=(ME,), now=0)
    _fetch(leader, F1, 4, now=10)
    _fetch(leader, F2, 4, now=10)

    def registered(broker: int, epoch: int) -> bool:
        return epoch in (-1, 40)

    assert leader.isr_proposal(11, 30_000, registered, shrink=False) == (ME, F1, F2)
    assert leader.isr_proposal(11, 30_000, registered, shrink=False,
                               fetch=(F2, 40)) == (ME, F2)
    assert leader.isr_proposal(11, 30_000, registered, shrink=False, fetch=(F2, 39)) is None


def test_isr_not_expanded_when_the_update_fails() -> None:
    """testIsrNotExpandedIfUpdateFails: an expansion refused INVALID_UPDATE_VERSION leaves
    the ISR as the image has it and the expansion pending (the maximal ISR keeps the
    follower) until new metadata, and is not asked again."""
    cell = Cell()
    cell.create(replicas=(1, 2), isr=(1,), leader=1)
    cell.produce(1, ["a", "b"], acks=1)
    cell.step()
    assert cell.alters
    cell.answer_alter("INVALID_UPDATE_VERSION", write=False)
    leader = cell.replica(1)
    assert leader.isr == (1,) and leader.maximal_isr() == (1, 2)
    cell.run(40_000, every=1_000)
    assert cell.alters == [] and leader.maximal_isr() == (1, 2)


@pytest.mark.parametrize("state", ["fenced", "shutdown", "stale-epoch"])
def test_an_ineligible_follower_is_not_proposed_for_the_isr(state: str) -> None:
    """testIsrNotExpandedIfReplicaIsFencedOrShutdown,
    testIsrNotExpandedIfReplicaIsInControlledShutdown and
    testIsrCanExpandedIfBrokerEpochsMatchWithKraftMetadataCache
    (KIP-841, KIP-903). "stale-epoch": the fetches carry an epoch the image does not
    have, newer than its own, so they are served but not proposed; a fetch with an older
    epoch is refused (testFenceFollowerFetchWithStaleBrokerEpoch: test_stale_fetch_epoch)."""
    cell = Cell()
    cell.create(replicas=(1, 2), isr=(1,), leader=1)
    cell.produce(1, ["a"], acks=1)
    if state == "fenced":
        cell.broker_state(2, fenced=True)
    elif state == "shutdown":
        cell.broker_state(2, in_controlled_shutdown=True)
    else:  # broker 2 fetches with an epoch the image does not have
        cell.managers[2].lifecycle.broker_epoch = 7  # type: ignore[union-attr]
    cell.step()
    cell.run(40_000, every=1_000)  # the periodic checks too
    assert cell.alters == []
    leader = cell.replica(1)
    assert leader.follower(2).end_offset == 1  # type: ignore[union-attr]
    if state == "fenced":
        cell.broker_state(2, fenced=False)
    elif state == "shutdown":
        return  # a broker in controlled shutdown stays out until it registers again
    else:
        cell.managers[2].lifecycle.broker_epoch = broker_epoch(2)  # type: ignore[union-attr]
    cell.produce(1, ["b"], acks=1)
    cell.step(100)
    cell.step(100)
    assert [one(r).new_isr for _, r in cell.alters] == [(1, 2)]


def test_the_periodic_check_never_expands_the_isr() -> None:
    """Kafka's isr-expiration task runs maybeShrinkIsr, which only shrinks; a follower joins
    the ISR at a fetch (maybeExpandIsr). Broker 2 caught up while fenced, then stopped
    fetching; unfenced afterwards, it stays out of the ISR however many checks pass."""
    cell = Cell(brokers=(1, 2))
    cell.create(replicas=(1, 2), isr=(1,), leader=1)
    cell.produce(1, ["a"], acks=1)
    cell.broker_state(2, fenced=True)
    cell.step()
    cell.step(100)
    leader = cell.replica(1)
    assert leader.follower(2).end_offset == 1 and cell.alters == []  # type: ignore[union-attr]
    del cell.managers[2]  # it stops: no fetch from now on
    cell.broker_state(2, fenced=False)
    cell.run(60_000, every=1_000)
    assert cell.alters == [] and leader.isr == (1,)


def test_one_isr_change_in_flight_at_a_time() -> None:
    """testSingleInFlightAlterIsr: while a change is pending no other is asked for; once it
    is dropped (a refusal the controller did not apply: INELIGIBLE_REPLICA) the next check
    asks again. (testRetryShrinkIsr, the same request sent again after an error to retry:
    test_alter_partition_answers.py.)"""
    log = _log([(1, 10)])
    leader = _leader(log, leader_epoch=2, isr=(ME, F1, F2), now=0)
    assert leader.isr_proposal(30_001, 30_000) == (ME,)
    leader.pending_isr = (ME,)
    assert leader.isr_proposal(30_002, 30_000) is None
    assert leader.maximal_isr() == (ME, F1, F2)  # a shrink counts once written
    leader.pending_isr = None  # the controller refused it, not applied
    assert leader.isr_proposal(30_003, 30_000) == (ME,)


def test_an_isr_change_written_in_the_same_epoch_keeps_leading() -> None:
    """testUpdateAssignmentAndIsr and testAlterIsrLeaderAndIsrRace: the image's ISR and
    replicas replace the leader's, its pending change is dropped with the partition
    epoch it was made against."""
    leader = _leader(_log([(1, 2)]), leader_epoch=2, now=0)
    leader.pending_isr = (ME, F1)
    leader.become(PartitionRegistration(replicas=(ME, F1, F2, 4), isr=(ME, F1), leader=ME,
                                        leader_epoch=2, partition_epoch=2), 1)
    assert leader.is_leader and leader.pending_isr is None
    assert (leader.isr, leader.replicas) == ((ME, F1), (ME, F1, F2, 4))


# ---------------------------------------------------------------- min ISR and the HW
@pytest.mark.parametrize(("isr", "min_isr", "under", "at"), [
    ((ME,), 1, False, True),  # testAtMinIsr
    ((ME,), 2, True, False),  # testIsUnderMinIsr
    ((ME, F1), 2, False, True),
    ((ME, F1, F2), 5, False, True),  # min ISR above the replication factor: capped at 3
])
def test_min_isr_is_at_most_the_replication_factor(isr: tuple[int, ...], min_isr: int,
                                                   under: bool, at: bool) -> None:
    leader = _leader(PartitionLog(), leader_epoch=1, isr=isr)
    leader.min_isr = min_isr
    assert leader.under_min_isr() == under
    assert (len(leader.isr) == leader.effective_min_isr()) == at


def test_the_high_watermark_waits_while_the_isr_is_under_min_isr() -> None:
    """testHighWatermarkAdvanceShouldNotAdvanceWhenUnderMinISR (KAFKA-15583)."""
    cell = Cell()
    cell.create(replicas=(1, 2, 3), isr=(1, 2), leader=1, min_isr=2)
    cell.produce(1, ["a", "b"], acks=1)
    cell.step()
    leader = cell.replica(1)
    assert leader.log.high_watermark == 2
    cell.change(isr=(1,))  # the controller shrank it
    cell.produce(1, ["c", "d"], acks=1)
    cell.step(100)
    assert leader.log.high_watermark == 2
    cell.set_min_isr(1)  # lowering the config lets it move
    assert leader.log.high_watermark == 4


def test_a_leader_alone_in_the_isr_advances_with_min_isr_one() -> None:
    leader = _leader(_log([(1, 3)]), leader_epoch=2, isr=(ME,), now=0)
    assert leader.log.high_watermark == 3


@pytest.mark.parametrize("state", ["fenced", "shutdown", "unfenced"])
def test_the_high_watermark_waits_for_a_caught_up_follower_about_to_join(state: str) -> None:
    """testHighWatermarkIncreasesWithFencedOrShutdownFollower: after the controller shrank
    the ISR to the leader, a follower outside it that was caught up within
    replica.lag.time.max.ms and may join the ISR still holds the high watermark (Kafka's
    maybeIncrementLeaderHW); a fenced or shutting-down one does not."""
    cell = Cell(brokers=(1, 2))
    cell.create(replicas=(1, 2), isr=(1, 2), leader=1)
    cell.produce(1, [str(i) for i in range(10)], acks=1)
    cell.step()
    leader = cell.replica(1)
    assert leader.log.high_watermark == 10 and leader.follower(2).end_offset == 10  # type: ignore[union-attr]
    if state == "fenced":
        cell.broker_state(2, fenced=True)
    elif state == "shutdown":
        cell.broker_state(2, in_controlled_shutdown=True)
    cell.produce(1, [str(i) for i in range(10)], acks=1)
    cell.change(isr=(1,))
    assert leader.isr == (1,) and leader.maximal_isr() == (1,)
    assert leader.log.high_watermark == (10 if state == "unfenced" else 20)


def test_a_follower_outside_the_isr_holds_the_high_watermark_up_to_the_lag_time() -> None:
    """Kafka's isCaughtUp bound is inclusive: a follower outside the ISR last caught up
    exactly replica.lag.time.max.ms ago still holds the high watermark; a millisecond
    later it no longer does."""
    log = _log([(1, 3)])
    leader = _leader(log, leader_epoch=2, isr=(ME, F1), replicas=(ME, F1, F2), now=0)
    _fetch(leader, F1, 3, now=0)
    _fetch(leader, F2, 3, now=0)  # caught up at 0, outside the ISR
    log.append_as_leader(["x"], 2)
    _fetch(leader, F1, 4, now=30_000)
    assert log.high_watermark == 3
    _fetch(leader, F1, 4, now=30_001)
    assert log.high_watermark == 4


def test_a_follower_that_never_fetched_from_this_leader_holds_no_high_watermark() -> None:
    """Kafka stores a follower's broker epoch at its fetches only, and a follower with none
    stored is not ISR-eligible: one that left the ISR before ever fetching from this leader
    does not hold the high watermark, even unfenced and within the lag time of the epoch
    start (with -1 taken for "no epoch", the high watermark stuck at the shrink's value)."""
    cell = Cell(brokers=(1, 2, 3))
    cell.create(replicas=(1, 2, 3), isr=(1, 2, 3), leader=1)
    cell.managers.pop(3)  # broker 3 never fetches in this leader epoch
    cell.produce(1, ["a", "b"], acks=1)
    cell.step(100)
    leader = cell.replica(1)
    assert leader.log.high_watermark == 0  # 3, in the ISR, holds it
    cell.broker_state(3, fenced=True)
    cell.change(isr=(1, 2))
    cell.broker_state(3, fenced=False)
    cell.step(100)
    assert leader.log.high_watermark == 2
    cell.produce(1, ["c"], acks=1)
    cell.step(100)
    assert not leader.follower(3).has_fetched()  # type: ignore[union-attr]
    assert cell.now < 30_000 and leader.log.high_watermark == 3


def test_a_follower_outside_the_isr_at_the_epoch_start_holds_no_high_watermark() -> None:
    """Kafka resets the last caught-up time of a follower outside the ISR to 0 when a
    leader epoch begins: it does not hold the new leader's high watermark until it has
    caught up (even early in a simulation, when "now" is below the lag time)."""
    leader = _leader(_log([(1, 5)]), leader_epoch=2, isr=(ME, F1), now=0)
    _fetch(leader, F1, 5, now=10)
    assert leader.log.high_watermark == 5  # F2, outside the ISR, never fetched
    leader.log.append_as_leader(["x", "y"], 2)
    _fetch(leader, F2, 3, now=20)  # F2 behind, never caught up: it holds nothing
    _fetch(leader, F1, 7, now=20)
    assert leader.log.high_watermark == 7
    _fetch(leader, F2, 7, now=30)  # caught up now: from here it holds the HW
    leader.log.append_as_leader(["z"], 2)
    _fetch(leader, F1, 8, now=40)
    assert leader.log.high_watermark == 7
    _fetch(leader, F2, 8, now=30_031)  # caught up within the lag: the HW moves with it
    assert leader.log.high_watermark == 8


def test_a_follower_no_longer_a_replica_is_not_proposed_for_the_isr() -> None:
    """A reassignment that removes F2 from the replicas (same leader epoch) leaves the
    leader with F2's fetch state; caught up or not, F2 is never proposed for the ISR
    (Kafka proposes only assigned replicas)."""
    log = _log([(1, 3)])
    leader = _leader(log, leader_epoch=1, isr=(ME, F1))
    assert _fetch(leader, F2, 3, now=10).error == "NONE"
    leader.become(PartitionRegistration(replicas=(ME, F1), isr=(ME, F1), leader=ME,
                                        leader_epoch=1, partition_epoch=2), 10)
    assert leader.isr_proposal(20, 30_000) is None


# ---------------------------------------------------------------- epochs and offsets
def _manager_leader(leader_epoch: int, is_leader: bool = True) -> Cell:
    """Kafka's setupPartitionWithMocks: partition 0 on brokers 1 and 2 in ``leader_epoch``,
    led by broker 1 (ME) when ``is_leader``, else by broker 2."""
    cell = Cell(brokers=(ME, F1))
    cell.create(replicas=(ME, F1), leader=ME if is_leader else F1, leader_epoch=leader_epoch)
    return cell


def test_make_leader_updates_epoch_cache() -> None:
    """testMakeLeaderUpdatesEpochCache: a log with records of epochs 0 and 5 whose broker
    becomes leader in epoch 8 answers epoch 8 with the log end offset (its own epoch starts
    there, with no record of it yet)."""
    cell = Cell(brokers=(ME, F1))
    cell.create(replicas=(ME, F1), leader=F1, leader_epoch=7)
    log = cell.replica(ME).log  # the log this broker holds before it leads
    log.append_entries([LogEntry(0, 0, "v1"), LogEntry(1, 0, "v2"), LogEntry(2, 5, "v3"),
                        LogEntry(3, 5, "v4")])
    assert cell.change(leader=ME).leader_epoch == 8
    assert cell.replica(ME).log.end_offset == 4
    answer = cell.managers[ME].last_offset_for_leader_epoch(TOPIC, 0, 8, current_leader_epoch=8)
    assert (answer.error, answer.leader_epoch, answer.end_offset) == ("NONE", 8, 4)
    # an epoch between the cached ones ends where the next one starts (Kafka's cache)
    answer = cell.managers[ME].last_offset_for_leader_epoch(TOPIC, 0, 6)
    assert (answer.leader_epoch, answer.end_offset) == (5, 4)


def test_offset_for_leader_epoch_validation_for_leader() -> None:
    """testOffsetForLeaderEpochValidationForLeader."""
    cell = _manager_leader(5)

    def error(current: int) -> str:
        return cell.managers[ME].last_offset_for_leader_epoch(TOPIC, 0, 0, current).error

    assert [error(c) for c in (-1, 5, 4, 6)] == \
        ["NONE", "NONE", "FENCED_LEADER_EPOCH", "UNKNOWN_LEADER_EPOCH"]


def test_offset_for_leader_epoch_validation_for_follower() -> None:
    """testOffsetForLeaderEpochValidationForFollower, its fetchOnlyFromLeader half: Kafka's
    ReplicaManager asks only with it (the request is the leader's to answer), and so does
    kraftsim's, so the other half has no request path."""
    cell = _manager_leader(5, is_leader=False)

    def error(current: int) -> str:
        return cell.managers[ME].last_offset_for_leader_epoch(TOPIC, 0, 0, current).error

    assert [error(c) for c in (-1, 5, 4, 6)] == \
        ["NOT_LEADER_OR_FOLLOWER", "NOT_LEADER_OR_FOLLOWER", "FENCED_LEADER_EPOCH",
         "UNKNOWN_LEADER_EPOCH"]


def test_fetch_offset_for_timestamp_epoch_validation_for_leader() -> None:
    """testFetchOffsetForTimestampEpochValidationForLeader (EARLIEST for Kafka's timestamp
    0: records carry no timestamps here), asked by a broker (no isolation level)."""
    cell = _manager_leader(5)

    def error(current: int) -> str:
        return cell.managers[ME].list_offsets(TOPIC, 0, EARLIEST_TIMESTAMP, current,
                                              replica_id=F1).error

    assert [error(c) for c in (-1, 5, 4, 6)] == \
        ["NONE", "NONE", "FENCED_LEADER_EPOCH", "UNKNOWN_LEADER_EPOCH"]


def test_fetch_offset_for_timestamp_epoch_validation_for_follower() -> None:
    """testFetchOffsetForTimestampEpochValidationForFollower: without fetchOnlyFromLeader
    (a debugging client's ListOffsets) the follower answers; with it only its epoch errors
    differ from NOT_LEADER_OR_FOLLOWER."""
    cell = _manager_leader(5, is_leader=False)

    def error(current: int, replica_id: int) -> str:
        return cell.managers[ME].list_offsets(TOPIC, 0, EARLIEST_TIMESTAMP, current,
                                              replica_id=replica_id).error

    assert [error(c, DEBUGGING_REPLICA_ID) for c in (-1, 5, 4, 6)] == \
        ["NONE", "NONE", "FENCED_LEADER_EPOCH", "UNKNOWN_LEADER_EPOCH"]
    assert [error(c, F1) for c in (-1, 5, 4, 6)] == \
        ["NOT_LEADER_OR_FOLLOWER", "NOT_LEADER_OR_FOLLOWER", "FENCED_LEADER_EPOCH",
         "UNKNOWN_LEADER_EPOCH"]


def test_fetch_latest_offset_includes_leader_epoch() -> None:
    """testFetchLatestOffsetIncludesLeaderEpoch."""
    cell = _manager_leader(5)
    listed = cell.managers[ME].list_offsets(TOPIC, 0, LATEST_TIMESTAMP, replica_id=F1)
    assert (listed.error, listed.leader_epoch) == ("NONE", 5)


def test_monotonic_offsets_after_leader_change() -> None:
    """testMonotonicOffsetsAfterLeaderChange (KIP-207), without its lookups by timestamp:
    a leader whose high watermark is below the start of its epoch answers a client's
    LATEST OFFSET_NOT_AVAILABLE (a broker's with its log end offset, EARLIEST as always)
    until its followers' fetches move the high watermark up."""
    cell = Cell(brokers=(ME, F1, F2))
    cell.create(replicas=(ME, F1, F2), isr=(ME, F2), leader=ME, leader_epoch=8)
    manager = cell.managers[ME]
    assert [a.error for a in cell.produce(ME, ["v1", "v2"], acks=0)] == ["NONE"]
    assert [a.error for a in cell.produce(ME, ["v1", "v2", "v3"], acks=0)] == ["NONE"]
    leader = cell.replica(ME)
    assert leader.log.high_watermark == 0
    for follower in (F1, F2):
        _fetch(leader, follower, 0)
        _fetch(leader, follower, 2)
    assert leader.log.high_watermark == 2

    def latest(replica_id: int = -1) -> tuple[str, int]:
        listed = manager.list_offsets(TOPIC, 0, LATEST_TIMESTAMP, 8, replica_id=replica_id)
        return listed.error, listed.offset

    assert latest(F1) == ("NONE", 5)  # the log end offset
    assert latest() == ("NONE", 2)  # the high watermark
    cell.change(leader=F2)  # a follower in epoch 9 (its log is not cut: no fetch)
    reg = cell.change(leader=ME)  # back to leader in epoch 10: its epoch starts at 5
    assert reg.leader_epoch == 10
    leader = cell.replica(ME)

    def listed(timestamp: int, replica_id: int = -1) -> tuple[str, int]:
        answer = manager.list_offsets(TOPIC, 0, timestamp, 10, replica_id=replica_id)
        return answer.error, answer.offset

    assert listed(LATEST_TIMESTAMP) == ("OFFSET_NOT_AVAILABLE", -1)
    assert listed(LATEST_TIMESTAMP, F1) == ("NONE", 5)
    assert listed(EARLIEST_TIMESTAMP) == ("NONE", 0)
    assert listed(EARLIEST_LOCAL_TIMESTAMP) == ("NONE", 0)
    for follower in (F1, F2):
        _fetch(leader, follower, 5)
    assert leader.log.high_watermark == 5
    assert listed(LATEST_TIMESTAMP) == ("NONE", 5)


def test_list_offset_isolation_levels() -> None:
    """testListOffsetIsolationLevels: three records of an open transaction; LATEST is the
    log end offset for a broker, the high watermark read_uncommitted and the last stable
    offset read_committed; EARLIEST and EARLIEST_LOCAL are 0 for all."""
    cell = _manager_leader(5)
    manager = cell.managers[ME]
    answers: list[object] = []
    manager.produce(TOPIC, 0, ["v1", "v2", "v3"], 0, answers.append, producer_id=2,
                    producer_epoch=0, first_sequence=0, transactional=True)

    def offsets(timestamp: int) -> list[int]:
        return [manager.list_offsets(TOPIC, 0, timestamp, replica_id=F1).offset,
                manager.list_offsets(TOPIC, 0, timestamp, isolation=READ_UNCOMMITTED).offset,
                manager.list_offsets(TOPIC, 0, timestamp, isolation=READ_COMMITTED).offset]

    assert offsets(LATEST_TIMESTAMP) == [3, 0, 0]
    cell.replica(ME).log.update_high_watermark(1)
    assert offsets(LATEST_TIMESTAMP) == [3, 1, 0]
    assert offsets(EARLIEST_TIMESTAMP) == [0, 0, 0]
    assert offsets(EARLIEST_LOCAL_TIMESTAMP) == [0, 0, 0]
