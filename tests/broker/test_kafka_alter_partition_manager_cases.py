"""The cases of Kafka's ``kafka.server.AlterPartitionManagerTest`` that kraftsim models.

Kafka's DefaultAlterPartitionManager takes the ISR changes a broker's partitions
submit and sends them to the active controller. kraftsim has no manager of its own:
the broker's :class:`~broker.replica_manager.ReplicaManager` sends each proposal as
its own AlterPartition request (one partition per request, AlterPartition v3 with
the members' broker epochs, to the controller leader its raft client knows), keeps
one request per partition in flight, and takes the answers as Kafka's Partition and
manager together take them. The tests here drive the replica managers of a
:class:`~tests.broker.replica_cell.Cell`, whose AlterPartition requests are kept for
the test to answer.

Covered elsewhere (the Kafka method is named in that test's docstring):
``tests/broker/test_alter_partition_answers.py`` —
testSubmitFromCallback, testAuthorizationFailed, testStaleBrokerEpoch,
testUnknownServer, testRetryOnAuthenticationFailure, testRetryOnUnsupportedVersionError
and testNotLeaderOrFollower (an error to retry: the same proposal is sent again, then
its answer taken), testInvalidUpdateVersion, testUnknownTopicPartition and
testInvalidRequest (an error that leaves nothing in flight: the change waits for new
metadata, then the next proposal is sent). testRetryOnTopLevelError,
testRetryOnErrorResponse and testPartitionError are the private helpers of those tests,
not test methods.

Not ported:

- testSingleBatch, testOneInFlight, testPartitionMissingInResponse: kraftsim does
  not batch AlterPartition; each partition's proposal is a request of its own, sent at
  once, however many are in flight (Kafka: one request in flight per broker, the
  changes submitted meanwhile queued for the next, which carries them all; a partition
  missing from an answer is sent again). An answer therefore always names its one
  partition.
- testPartialTopicIds: every kraftsim topic has an id and every request is v3
  (AlterPartition v0/v1 by topic name are not modelled).
- The older metadata versions of the parametrized methods (IBP_2_7_IV2, IBP_3_2_IV0):
  a kraftsim broker always sends v3, with the leader recovery state and the members'
  broker epochs (KIP-704, KIP-903); the v3 variant of each is ported.
- testZkBasic: ZooKeeper mode (ZkAlterPartitionManager) is not modelled.
"""

from __future__ import annotations

from metadata.schema import PartitionRecord, TopicRecord
from tests.broker.replica_cell import CONTROLLER, TOPIC, TOPIC_ID, Cell, broker_epoch


def _shrink_asked(cell: Cell, records: bool = False) -> None:
    """Partition (1, 2, 3) led by 1; broker 3 never fetches (its manager gone), broker 2
    does: past replica.lag.time.max.ms leader 1 asks for ISR (1, 2)."""
    cell.create(replicas=(1, 2, 3), leader=1)
    del cell.managers[3]
    if records:
        cell.produce(1, ["a"], acks=1)
    cell.run(31_000, every=1_000)
    assert [r.new_isr for _, r in cell.alters] == [(1, 2)]


def test_a_proposal_goes_to_the_controller_with_the_members_broker_epochs() -> None:
    """testBasic and testBasicWithBrokerEpoch (AlterPartition v3): the proposal goes to
    the active controller as one request naming the leader, its broker epoch, the
    partition by topic id, the leader and partition epochs the leader holds, and each
    member of the new ISR with the broker epoch the leader holds for it (its own; the
    one follower 2's fetches carried)."""
    cell = Cell()
    _shrink_asked(cell)
    ((src, request),) = cell.alters
    assert src == 1 and cell.alter_controllers[1, request.correlation_id] == CONTROLLER
    assert (request.broker_id, request.broker_epoch, request.topic_id, request.partition_id,
            request.leader_epoch, request.partition_epoch) == \
        (1, broker_epoch(1), TOPIC_ID, 0, 0, 0)
    assert tuple(zip(request.new_isr, request.new_isr_epochs, strict=True)) == \
        ((1, broker_epoch(1)), (2, broker_epoch(2)))


def test_the_leader_recovery_state_sent_is_recovered() -> None:
    """testBasicSentLeaderRecoveryState, as Kafka's Partition submits it: a partition the
    image holds RECOVERING (KIP-704, after an unclean election) is RECOVERED once this
    broker leads it, and its first AlterPartition says so (leader recovery state 0), so
    the controller records the end of the recovery with the ISR change. (Kafka's manager
    test submits RECOVERING by hand too; a kraftsim leader never proposes it.)"""
    cell = Cell()
    cell.publish(TopicRecord(TOPIC, TOPIC_ID),
                 PartitionRecord(0, TOPIC_ID, (1, 2, 3), (1, 2, 3), leader=1,
                                 leader_epoch=0, partition_epoch=0, leader_recovery_state=1))
    assert cell.registration().leader_recovery_state == 1
    del cell.managers[3]
    cell.run(31_000, every=1_000)
    ((_, request),) = cell.alters
    assert (request.new_isr, request.leader_recovery_state) == ((1, 2), 0)


def test_one_change_per_partition_until_its_answer() -> None:
    """testOverwriteWithinBatch: while the partition's change is unanswered no other
    change of it is sent (Kafka's manager refuses a second submit of the partition,
    OPERATION_NOT_ATTEMPTED; kraftsim's leader, as Kafka's Partition, proposes nothing
    while a change is pending), even once follower 2 is out of sync too; once the first
    is answered and written, the next goes out with ISR (1,). (The unanswered request
    is sent again every request.timeout.ms, as Kafka's controller channel does: the same
    proposal each time.)"""
    cell = Cell()
    _shrink_asked(cell, records=True)
    del cell.managers[2]  # broker 2 stops fetching too
    cell.produce(1, ["b"], acks=1)
    cell.run(60_000, every=1_000)
    assert {r.new_isr for _, r in cell.alters} == {(1, 2)}
    last = cell.alters[-1]
    cell.alters.clear()
    cell.answer_alter(request=last)
    assert cell.registration().isr == (1, 2)
    cell.run(16_000, every=1_000)
    assert [r.new_isr for _, r in cell.alters] == [(1,)]
