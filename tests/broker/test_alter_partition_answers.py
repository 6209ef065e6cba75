"""How a partition leader takes the controller's answer to its AlterPartition, as Kafka's
Partition does (``submitAlterPartition``'s callback and ``handleAlterPartitionError``,
with the AlterPartitionManager and controller channel beneath them):

- INELIGIBLE_REPLICA, OPERATION_NOT_ATTEMPTED: back to the ISR as written (the pending
  change dropped), proposed again later;
- UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID, FENCED_LEADER_EPOCH,
  INVALID_UPDATE_VERSION, INVALID_REQUEST, NEW_LEADER_ELECTED: the change stays pending,
  nothing else proposed, until new metadata;
- any other partition error (UNKNOWN_SERVER_ERROR, NOT_LEADER_OR_FOLLOWER, ...): the same
  proposal is submitted again at once;
- a top-level error (STALE_BROKER_EPOCH, UNKNOWN_SERVER_ERROR, ...) answers no partition:
  the AlterPartitionManager sends its proposals again 50 ms later (NOT_CONTROLLER is the
  controller channel's: test_alter_partition_resend);
- an answer to a proposal replaced since is ignored;
- a broker not registered (broker epoch -1) proposes nothing, and a manager whose retry
  finds it so waits for its registration (kraftsim's one difference from Kafka's manager).
"""

from __future__ import annotations

import pytest

from broker.alter_partition_manager import ALTER_RETRY_MS
from tests.broker.replica_cell import KEY, Cell, broker_epoch, one


def _expansion_pending(cell: Cell) -> None:
    """Partition (1, 2) led by 1, ISR (1,); broker 2 catches up and 1 asks to take it back."""
    cell.create(replicas=(1, 2), isr=(1,), leader=1)
    cell.produce(1, ["a"], acks=1)
    cell.step()
    assert [one(r).new_isr for _, r in cell.alters] == [(1, 2)]
    assert cell.replica(1).maximal_isr() == (1, 2)


@pytest.mark.parametrize("error", ["INELIGIBLE_REPLICA", "OPERATION_NOT_ATTEMPTED"])
def test_a_refusal_that_was_not_applied_goes_back_to_the_isr_as_written(error: str) -> None:
    """testIsrNotExpandedIfReplicaIsFencedOrShutdown's refusal path: the pending
    expansion is dropped at once and asked again at the follower's next fetch."""
    cell = Cell(brokers=(1, 2))
    _expansion_pending(cell)
    cell.answer_alter(error)
    leader = cell.replica(1)
    assert leader.pending_isr is None and leader.maximal_isr() == (1,)
    cell.produce(1, ["b"], acks=1)
    cell.step(100)
    assert [one(r).new_isr for _, r in cell.alters] == [(1, 2)]


@pytest.mark.parametrize("error", [
    "UNKNOWN_TOPIC_OR_PARTITION", "UNKNOWN_TOPIC_ID", "FENCED_LEADER_EPOCH",
    "INVALID_UPDATE_VERSION", "INVALID_REQUEST", "NEW_LEADER_ELECTED"])
def test_an_error_of_stale_metadata_keeps_the_change_pending_until_new_metadata(
        error: str) -> None:
    """testIsrNotExpandedIfUpdateFails, testInvalidAlterPartitionRequestsAreNotRetried:
    the expansion stays pending (the maximal ISR keeps broker 2) and nothing is asked
    again however long the follower fetches; once the image moves the partition epoch
    (a new leader epoch here) the leader asks again. (AlterPartitionManagerTest's
    testInvalidUpdateVersion, testUnknownTopicPartition and testInvalidRequest: such a
    partition error clears the partition from the manager, so its next change is
    taken and sent.)"""
    cell = Cell(brokers=(1, 2))
    _expansion_pending(cell)
    cell.answer_alter(error)
    leader = cell.replica(1)
    assert leader.pending_isr == (1, 2) and leader.maximal_isr() == (1, 2)
    assert cell.managers[1].alter_partitions.unsent == {}
    cell.run(40_000, every=1_000)
    assert cell.alters == [] and leader.pending_isr == (1, 2)
    cell.change(leader=1)  # new metadata: leader epoch 1
    assert leader.pending_isr is None
    cell.produce(1, ["b"], acks=1)
    cell.run(500)
    assert [(one(r).new_isr, one(r).leader_epoch) for _, r in cell.alters] == [((1, 2), 1)]


@pytest.mark.parametrize("error", [
    "STALE_BROKER_EPOCH", "UNKNOWN_SERVER_ERROR", "NETWORK_EXCEPTION",
    "CLUSTER_AUTHORIZATION_FAILED", "UNSUPPORTED_VERSION"])
def test_a_top_level_error_answers_nothing_and_sends_again_after_50_ms(error: str) -> None:
    """testRetryShrinkIsr with AlterPartitionManagerTest's testStaleBrokerEpoch,
    testUnknownServer, testAuthorizationFailed, testRetryOnAuthenticationFailure (Kafka's
    manager takes an authentication failure as NETWORK_EXCEPTION) and
    testRetryOnUnsupportedVersionError (their helpers testRetryOnTopLevelError and
    testRetryOnErrorResponse): broker 3 stops fetching and the periodic check asks for
    ISR (1, 2); the request fails as a whole. No partition is answered (the shrink stays
    pending, the manager keeps it), and ALTER_RETRY_MS later (not at the next periodic
    check, 15 s on) the manager sends it again in a request built anew, with the broker
    epoch of that moment (here the broker registered again meanwhile); its success is
    taken as usual."""
    cell = Cell()
    cell.create(replicas=(1, 2, 3), leader=1)
    del cell.managers[3]
    cell.run(31_000, every=1_000)
    ((_, first),) = cell.alters
    assert (first.broker_epoch, one(first).new_isr) == (broker_epoch(1), (1, 2))
    cell.answer_alter(error, top_level=True)
    manager = cell.managers[1]
    leader = cell.replica(1)
    assert leader.pending_isr == (1, 2)
    assert list(manager.alter_partitions.unsent) == [KEY]
    manager.lifecycle.broker_epoch = 50  # type: ignore[union-attr]
    cell.step(49)  # (Kafka's manager schedules its next send 50 ms on)
    assert cell.alters == []
    cell.step(1)
    ((_, again),) = cell.alters
    assert again.correlation_id != first.correlation_id
    assert (again.topics, again.broker_epoch) == (first.topics, 50)
    cell.answer_alter()
    assert leader.isr == (1, 2) and leader.pending_isr is None
    assert manager.alter_partitions.unsent == {}


@pytest.mark.parametrize("error", ["UNKNOWN_SERVER_ERROR", "NOT_LEADER_OR_FOLLOWER"])
def test_an_unexpected_partition_error_submits_the_same_proposal_again_at_once(
        error: str) -> None:
    """testSubmitFromCallback and testNotLeaderOrFollower (a partition error clears the
    partition from the manager, so that its next submit is taken), with Kafka's
    Partition, which submits the same change again from the answer's callback when the
    error is not one it expects: the request carrying it goes at once (the answer had no
    top-level error), and its success is taken."""
    cell = Cell()
    cell.create(replicas=(1, 2, 3), leader=1)
    del cell.managers[3]
    cell.run(31_000, every=1_000)
    ((_, first),) = cell.alters
    cell.answer_alter(error)
    cell.step()  # (no time passes: the broker's outbox is read)
    ((_, again),) = cell.alters
    assert again.correlation_id != first.correlation_id and again.topics == first.topics
    leader = cell.replica(1)
    assert leader.pending_isr == (1, 2)
    cell.answer_alter()
    assert leader.isr == (1, 2) and leader.pending_isr is None
    assert cell.managers[1].alter_partitions.unsent == {}


def test_a_proposal_sent_again_waits_for_its_answer() -> None:
    """One AlterPartition in flight (Kafka's AlterPartitionManager keeps the unsent or
    unanswered item until its answer): once the retried proposal is out, nothing more
    goes to the controller while it is unanswered, and a success answer that the image
    has not brought yet leaves the change pending with no further request, however long
    the leader waits."""
    cell = Cell()
    cell.create(replicas=(1, 2, 3), leader=1)
    del cell.managers[3]
    cell.run(31_000, every=1_000)
    cell.answer_alter("UNKNOWN_SERVER_ERROR", top_level=True)
    cell.step(ALTER_RETRY_MS)
    assert len(cell.alters) == 1
    cell.step(3 * ALTER_RETRY_MS)
    assert len(cell.alters) == 1  # still only the retry, unanswered
    cell.answer_alter(write=False)
    cell.step(3 * ALTER_RETRY_MS)
    leader = cell.replica(1)
    assert cell.alters == [] and leader.pending_isr == (1, 2)


def test_the_broker_asks_to_be_woken_for_a_retry() -> None:
    """A top-level error makes the retry's time the broker's next deadline (nothing else
    of leader 1 is due sooner here), so a simulation that runs the broker only at its
    deadlines sends the proposal again ALTER_RETRY_MS after the answer, not at the next
    periodic ISR check."""
    cell = Cell()
    cell.create(replicas=(1, 2, 3), leader=1)
    del cell.managers[3]
    cell.run(31_000, every=1_000)
    leader = cell.managers[1]
    before = leader.next_deadline()
    assert before is not None and before > cell.now + ALTER_RETRY_MS
    cell.answer_alter("UNKNOWN_SERVER_ERROR", top_level=True)
    assert leader.next_deadline() == cell.now + ALTER_RETRY_MS
    cell.step(ALTER_RETRY_MS)
    assert len(cell.alters) == 1
    after = leader.next_deadline()  # the retry's wake is spent once it went
    assert after is not None and after > cell.now


def test_a_broker_not_registered_sends_its_proposals_once_it_registers() -> None:
    """kraftsim's one difference from Kafka's manager (which would send broker epoch -1
    and be refused STALE_BROKER_EPOCH): a request refused as a whole, then the broker's
    epoch is unknown (-1, as after a restart before its registration is answered) when
    the retry is due: nothing is sent, and the manager looks again every ALTER_RETRY_MS;
    the first look after the broker registered sends the proposal with the new epoch."""
    cell = Cell()
    cell.create(replicas=(1, 2, 3), leader=1)
    del cell.managers[3]
    cell.run(31_000, every=1_000)
    cell.answer_alter("STALE_BROKER_EPOCH", top_level=True)
    manager = cell.managers[1]
    assert manager.lifecycle is not None
    manager.lifecycle.broker_epoch = -1
    cell.step(ALTER_RETRY_MS)
    cell.step(ALTER_RETRY_MS)
    assert cell.alters == [] and list(manager.alter_partitions.unsent) == [KEY]
    manager.lifecycle.broker_epoch = 60
    cell.step(ALTER_RETRY_MS - 1)
    assert cell.alters == []
    cell.step(1)
    ((_, again),) = cell.alters
    assert (again.broker_epoch, one(again).new_isr) == (60, (1, 2))


def test_a_retry_of_a_proposal_new_metadata_replaced_is_sent_and_its_answer_ignored(
        ) -> None:
    """A top-level error, then the image moves the partition epoch before the retry is
    due: the manager does not know the proposal was replaced and sends it again (as
    Kafka's, which keeps every unanswered item); the leader ignores its answer (Kafka's
    callback finds the partition state changed) and nothing more is sent."""
    cell = Cell()
    cell.create(replicas=(1, 2, 3), leader=1)
    del cell.managers[3]
    cell.run(31_000, every=1_000)
    cell.answer_alter("UNKNOWN_SERVER_ERROR", top_level=True)
    cell.change(isr=(1, 2))  # written meanwhile (e.g. by an earlier attempt)
    leader = cell.replica(1)
    assert leader.pending_isr is None
    cell.step(ALTER_RETRY_MS)
    ((_, again),) = cell.alters
    assert (one(again).new_isr, one(again).partition_epoch) == ((1, 2), 0)
    cell.answer_alter("INVALID_UPDATE_VERSION")
    cell.run(1_000)
    assert cell.alters == [] and leader.pending_isr is None and leader.isr == (1, 2)


def test_a_new_proposal_while_the_replaced_one_is_out_is_not_attempted() -> None:
    """testOverwriteWithinBatch: the leader asks to take broker 2 back; before the answer,
    new metadata (a new leader epoch of the same leader) replaces the pending change and
    the leader, at broker 2's next fetches, proposes it again: the manager still holds
    the first proposal, in flight, and refuses each (OPERATION_NOT_ATTEMPTED: the leader
    goes back to the ISR as written). The first request's INELIGIBLE_REPLICA, arriving
    then, answers a proposal that is gone and is ignored; the partition is free in the
    manager again, so the next proposal (leader epoch 1) goes out, and is written."""
    cell = Cell(brokers=(1, 2))
    _expansion_pending(cell)
    cell.change(leader=1)  # leader epoch 1: the pending change is dropped
    cell.produce(1, ["b"], acks=1)
    cell.run(500)
    assert [(one(r).new_isr, one(r).leader_epoch) for _, r in cell.alters] == [((1, 2), 0)]
    leader = cell.replica(1)
    assert leader.pending_isr is None and leader.maximal_isr() == (1,)
    cell.answer_alter("INELIGIBLE_REPLICA")  # the answer to the first
    assert leader.pending_isr is None
    cell.produce(1, ["c"], acks=1)
    cell.run(500)
    assert [(one(r).new_isr, one(r).leader_epoch) for _, r in cell.alters] == [((1, 2), 1)]
    assert leader.pending_isr == (1, 2) and leader.maximal_isr() == (1, 2)
    cell.answer_alter()  # the second is written
    assert leader.isr == (1, 2)


def test_a_leader_not_registered_proposes_nothing_until_it_registers() -> None:
    """A leader whose broker epoch is unknown (-1: not registered yet, as after a restart
    before its registration is answered) proposes no ISR change, since its proposal
    would name itself without an epoch; once registered, the next periodic check
    proposes the shrink naming its new epoch for itself (KIP-903)."""
    cell = Cell()
    cell.create(replicas=(1, 2, 3), leader=1)
    del cell.managers[3]
    manager = cell.managers[1]
    assert manager.lifecycle is not None
    manager.lifecycle.broker_epoch = -1
    cell.run(31_000, every=1_000)
    assert cell.alters == [] and cell.replica(1).pending_isr is None
    manager.lifecycle.broker_epoch = 60
    cell.run(16_000, every=1_000)
    (_, request), *_ = cell.alters
    part = one(request)
    assert request.broker_epoch == 60
    assert tuple(zip(part.new_isr, part.new_isr_epochs, strict=True)) == \
        ((1, 60), (2, broker_epoch(2)))
