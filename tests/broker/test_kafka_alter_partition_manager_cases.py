"""The cases of Kafka's ``kafka.server.AlterPartitionManagerTest`` that kraftsim models.

Kafka's DefaultAlterPartitionManager takes the ISR changes a broker's partitions
submit and sends them to the active controller, one request in flight, batched. kraftsim's
is :class:`~broker.alter_partition_manager.AlterPartitionManager`, which the broker's
:class:`~broker.replica_manager.ReplicaManager` (Kafka's Partition, for the answers)
submits to: AlterPartition v3 with the members' broker epochs, to the controller leader
its raft client knows. The tests here drive the replica managers of a
:class:`~tests.broker.replica_cell.Cell`, whose AlterPartition requests are kept for the
test to answer.

Ported here: testBasic, testBasicWithBrokerEpoch, testBasicSentLeaderRecoveryState,
testOverwriteWithinBatch, testSingleBatch, testOneInFlight,
testPartitionMissingInResponse.

Covered elsewhere (the Kafka method is named in that test's docstring):
``tests/broker/test_alter_partition_answers.py`` — testStaleBrokerEpoch,
testUnknownServer, testAuthorizationFailed, testRetryOnAuthenticationFailure and
testRetryOnUnsupportedVersionError (a top-level error: nothing answered, the proposals
sent again 50 ms later), testSubmitFromCallback and testNotLeaderOrFollower (a partition
error Partition does not expect: submitted again at once), testInvalidUpdateVersion,
testUnknownTopicPartition and testInvalidRequest (a partition error that leaves the
partition out of the manager: the change waits for new metadata, then the next proposal
is taken), and testOverwriteWithinBatch's refusal of a second proposal while the first
is out. testRetryOnTopLevelError, testRetryOnErrorResponse and testPartitionError are
the private helpers of those tests, not test methods.

Not ported:

- testPartialTopicIds: every kraftsim topic has an id and every request is v3
  (AlterPartition v0/v1 by topic name are not modelled).
- The older metadata versions of the parametrized methods (IBP_2_7_IV2, IBP_3_2_IV0):
  a kraftsim broker always sends v3, with the leader recovery state and the members'
  broker epochs (KIP-704, KIP-903); the v3 variant of each is ported.
- testZkBasic: ZooKeeper mode (ZkAlterPartitionManager) is not modelled.
"""

from __future__ import annotations

from metadata.requests import (
    AlterPartitionPartitionData,
    AlterPartitionPartitionResponse,
    AlterPartitionRequest,
    AlterPartitionResponse,
    AlterPartitionTopicData,
    AlterPartitionTopicResponse,
)
from metadata.schema import PartitionRecord, TopicRecord
from tests.broker.replica_cell import CONTROLLER, TOPIC, TOPIC_ID, Cell, broker_epoch, one


def _shrink_asked(cell: Cell, records: bool = False) -> None:
    """Partition (1, 2, 3) led by 1; broker 3 never fetches (its manager gone), broker 2
    does: past replica.lag.time.max.ms leader 1 asks for ISR (1, 2)."""
    cell.create(replicas=(1, 2, 3), leader=1)
    del cell.managers[3]
    if records:
        cell.produce(1, ["a"], acks=1)
    cell.run(31_000, every=1_000)
    assert [one(r).new_isr for _, r in cell.alters] == [(1, 2)]


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
    ((topic_id, part),) = request.partitions()
    assert (request.broker_id, request.broker_epoch, topic_id, part.partition_index,
            part.leader_epoch, part.partition_epoch) == (1, broker_epoch(1), TOPIC_ID, 0, 0, 0)
    assert tuple(zip(part.new_isr, part.new_isr_epochs, strict=True)) == \
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
    assert (one(request).new_isr, one(request).leader_recovery_state) == ((1, 2), 0)


def test_one_change_per_partition_until_its_answer() -> None:
    """testOverwriteWithinBatch: while the partition's change is unanswered no other
    change of it is sent (Kafka's manager refuses a second submit of the partition,
    OPERATION_NOT_ATTEMPTED; kraftsim's leader, as Kafka's Partition, proposes nothing
    while a change is pending), even once follower 2 is out of sync too; once the first
    is answered and written, the next goes out with ISR (1,). (The unanswered request
    is sent again request.timeout.ms after it went, as Kafka's controller channel does:
    the same proposal; the answer is to the send still out.)"""
    cell = Cell()
    _shrink_asked(cell, records=True)
    del cell.managers[2]  # broker 2 stops fetching too
    cell.produce(1, ["b"], acks=1)
    cell.run(50_000, every=1_000)
    assert {one(r).new_isr for _, r in cell.alters} == {(1, 2)}
    last = cell.alters[-1]
    cell.alters.clear()
    cell.answer_alter(request=last)
    assert cell.registration().isr == (1, 2)
    cell.run(16_000, every=1_000)
    assert [one(r).new_isr for _, r in cell.alters] == [(1,)]


def _leading(cell: Cell) -> None:
    """Partition 0 of the topic, (1, 2) led by broker 1 with broker 2 out of its ISR."""
    cell.create(replicas=(1, 2), isr=(1,), leader=1)


def _propose(cell: Cell, pids: range) -> None:
    """Partitions ``pids`` (0 is there already), each (1, 2) led by broker 1 with broker 2
    out of the ISR, and a produce to each: broker 2's next fetch (within its fetch
    back-off) finds itself caught up on each, and broker 1 proposes each expansion, in
    partition order."""
    cell.publish(*[PartitionRecord(pid, TOPIC_ID, (1, 2), (1,), leader=1, leader_epoch=0,
                                   partition_epoch=0) for pid in pids if pid])
    for pid in pids:
        cell.managers[1].produce(TOPIC, pid, ["a"], 1, lambda _: None)
    cell.step(cell.config.replica_fetch_backoff_ms)


def _asked(request: AlterPartitionRequest) -> list[tuple[str, int]]:
    return [(topic_id, part.partition_index) for topic_id, part in request.partitions()]


def _answer(cell: Cell, request: AlterPartitionRequest,
            errors: dict[int, str]) -> None:
    """Answer ``request`` with no top-level error: partition -> its error, in that order;
    the partitions not named are left out of the answer."""
    cell.respond(1, request, AlterPartitionResponse(request.correlation_id, "NONE", (
        AlterPartitionTopicResponse(TOPIC_ID, tuple(
            AlterPartitionPartitionResponse(pid, error) for pid, error in errors.items())),)))


def test_proposals_made_while_a_request_is_out_go_in_one_batch() -> None:
    """testSingleBatch: the first partition's proposal goes out alone; the nine proposed
    while it is unanswered wait (nothing more is sent); an answer that leaves the first
    partition out sends the next request at once, with all ten, one topic, in the order
    proposed."""
    cell = Cell(brokers=(1, 2))
    _leading(cell)
    _propose(cell, range(1))
    _propose(cell, range(1, 10))
    ((_, first),) = cell.alters
    cell.alters.clear()
    assert _asked(first) == [(TOPIC_ID, 0)]
    _answer(cell, first, {})
    cell.step()
    ((_, batch),) = cell.alters
    assert len(batch.topics) == 1 and _asked(batch) == [(TOPIC_ID, pid) for pid in range(10)]
    assert batch.broker_epoch == broker_epoch(1)


def test_one_request_in_flight() -> None:
    """testOneInFlight: with the first request out, two more proposals send nothing
    however long it stays unanswered (short of the request timeout); once it is answered,
    the next request carries the two."""
    cell = Cell(brokers=(1, 2))
    _leading(cell)
    _propose(cell, range(1))
    _propose(cell, range(1, 3))
    cell.run(1_000)
    ((_, first),) = cell.alters
    cell.alters.clear()
    assert _asked(first) == [(TOPIC_ID, 0)]
    cell.answer_alter(request=(1, first))
    cell.step()
    ((_, second),) = cell.alters
    assert _asked(second) == [(TOPIC_ID, 1), (TOPIC_ID, 2)]


def test_a_partition_missing_from_the_answer_goes_again() -> None:
    """testPartitionMissingInResponse: partition 0's request is answered
    UNKNOWN_SERVER_ERROR (a partition error: taken, and submitted again by the
    partition, as Kafka's Partition does), which sends the next request at once with
    partitions 1 and 2 and 0 again; that one's answer names only 2 and 0: partition 1,
    missing, stays in the manager and goes alone in the next request, at once; each
    partition's proposal is taken once its answer comes."""
    cell = Cell(brokers=(1, 2))
    _leading(cell)
    _propose(cell, range(1))
    _propose(cell, range(1, 3))
    manager = cell.managers[1]
    ((_, first),) = cell.alters
    cell.alters.clear()
    _answer(cell, first, {0: "UNKNOWN_SERVER_ERROR"})
    cell.step()
    ((_, second),) = cell.alters
    cell.alters.clear()
    assert _asked(second) == [(TOPIC_ID, 1), (TOPIC_ID, 2), (TOPIC_ID, 0)]
    _answer(cell, second, {2: "INELIGIBLE_REPLICA", 0: "INELIGIBLE_REPLICA"})
    assert [manager.replicas[TOPIC_ID, pid].pending_isr for pid in range(3)] == \
        [None, (1, 2), None]
    assert list(manager.alter_partitions.unsent) == [(TOPIC_ID, 1)]
    cell.step()
    ((_, third),) = cell.alters
    assert _asked(third) == [(TOPIC_ID, 1)] and third.topics == (
        AlterPartitionTopicData(TOPIC_ID, (next(
            part for _, part in second.partitions() if part.partition_index == 1),)),)
    cell.answer_alter(request=(1, third))
    assert manager.replicas[TOPIC_ID, 1].isr == (1, 2)
    assert manager.alter_partitions.unsent == {}


def test_a_second_proposal_of_a_partition_waiting_is_not_attempted() -> None:
    """testOverwriteWithinBatch, at the manager: while a partition's proposal waits (a
    request is out), another of the same partition is refused at once (None: Kafka's
    OPERATION_NOT_ATTEMPTED) and the first is kept; once the first is answered, the
    partition may be proposed again."""
    cell = Cell(brokers=(1, 2))
    _leading(cell)
    _propose(cell, range(1))
    _propose(cell, range(1, 2))
    apm = cell.managers[1].alter_partitions
    waiting = apm.unsent[TOPIC_ID, 1]
    other = AlterPartitionPartitionData(1, 0, 0, (1,))
    assert apm.submit(TOPIC_ID, other, cell.now) is None
    assert apm.unsent[TOPIC_ID, 1] is waiting
    ((_, first),) = cell.alters
    cell.alters.clear()
    cell.answer_alter(request=(1, first))
    cell.step()
    ((_, second),) = cell.alters
    assert one(second) == waiting.partition
    cell.answer_alter(request=(1, second), write=False)
    assert apm.submit(TOPIC_ID, other, cell.now) is not None
