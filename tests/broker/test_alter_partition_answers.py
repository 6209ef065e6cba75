"""How a partition leader takes the controller's answer to its AlterPartition, as Kafka's
Partition does (``submitAlterPartition``'s callback and ``handleAlterPartitionError``,
with the AlterPartitionManager and controller channel beneath them):

- INELIGIBLE_REPLICA, OPERATION_NOT_ATTEMPTED: back to the ISR as written (the pending
  change dropped), proposed again later;
- UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID, FENCED_LEADER_EPOCH,
  INVALID_UPDATE_VERSION, INVALID_REQUEST, NEW_LEADER_ELECTED: the change stays pending,
  nothing else proposed, until new metadata;
- any other error (STALE_BROKER_EPOCH, UNKNOWN_SERVER_ERROR, ...): the same proposal is
  sent again (NOT_CONTROLLER is the controller channel's: test_alter_partition_resend);
- an answer to a proposal replaced since is ignored.
"""

from __future__ import annotations

import pytest

from broker.replica_manager import ALTER_RETRY_MS
from tests.broker.replica_cell import Cell, broker_epoch


def _expansion_pending(cell: Cell) -> None:
    """Partition (1, 2) led by 1, ISR (1,); broker 2 catches up and 1 asks to take it back."""
    cell.create(replicas=(1, 2), isr=(1,), leader=1)
    cell.produce(1, ["a"], acks=1)
    cell.step()
    assert [r.new_isr for _, r in cell.alters] == [(1, 2)]
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
    assert [r.new_isr for _, r in cell.alters] == [(1, 2)]


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
    partition error leaves nothing of the partition in flight, so its next change is
    sent.)"""
    cell = Cell(brokers=(1, 2))
    _expansion_pending(cell)
    cell.answer_alter(error)
    leader = cell.replica(1)
    assert leader.pending_isr == (1, 2) and leader.maximal_isr() == (1, 2)
    cell.run(40_000, every=1_000)
    assert cell.alters == [] and leader.pending_isr == (1, 2)
    cell.change(leader=1)  # new metadata: leader epoch 1
    assert leader.pending_isr is None
    cell.produce(1, ["b"], acks=1)
    cell.run(500)
    assert [(r.new_isr, r.leader_epoch) for _, r in cell.alters] == [((1, 2), 1)]


@pytest.mark.parametrize("error", [
    "STALE_BROKER_EPOCH", "UNKNOWN_SERVER_ERROR", "NETWORK_EXCEPTION",
    "CLUSTER_AUTHORIZATION_FAILED", "UNSUPPORTED_VERSION", "NOT_LEADER_OR_FOLLOWER"])
def test_another_error_sends_the_same_proposal_again(error: str) -> None:
    """testRetryShrinkIsr: broker 3 stops fetching and the periodic check asks for ISR
    (1, 2); the controller answers an error to retry: the shrink stays pending and the
    same request goes out again ALTER_RETRY_MS later (not at the next periodic check,
    15 s on), and its success is taken as usual.

    AlterPartitionManagerTest: testStaleBrokerEpoch, testUnknownServer and
    testAuthorizationFailed (request-level errors, which its manager sends again 50 ms
    later), testRetryOnAuthenticationFailure (Kafka's manager takes an authentication
    failure as NETWORK_EXCEPTION), testRetryOnUnsupportedVersionError (UNSUPPORTED_VERSION),
    testSubmitFromCallback and testNotLeaderOrFollower (partition errors Kafka's Partition
    does not expect, so it submits the same change again, at once where kraftsim waits
    ALTER_RETRY_MS: kraftsim's answer has one error, not a request's and a
    partition's)."""
    cell = Cell()
    cell.create(replicas=(1, 2, 3), leader=1)
    del cell.managers[3]
    cell.run(31_000, every=1_000)
    ((_, first),) = cell.alters
    assert first.new_isr == (1, 2)
    cell.answer_alter(error)
    leader = cell.replica(1)
    assert leader.pending_isr == (1, 2)
    cell.step(ALTER_RETRY_MS - 1)
    assert cell.alters == []
    cell.step(1)
    ((_, again),) = cell.alters
    assert again.correlation_id != first.correlation_id
    assert (again.new_isr, again.new_isr_epochs, again.leader_epoch, again.partition_epoch,
            again.broker_epoch) == (first.new_isr, first.new_isr_epochs, first.leader_epoch,
                                    first.partition_epoch, broker_epoch(1))
    cell.answer_alter()
    assert leader.isr == (1, 2) and leader.pending_isr is None


def test_a_proposal_sent_again_waits_for_its_answer() -> None:
    """One AlterPartition in flight per partition (Kafka's AlterPartitionManager keeps
    the unsent or unanswered item until its answer): once the retried proposal is out,
    nothing more goes to the controller while it is unanswered, and a success answer
    that the image has not brought yet leaves the change pending with no further
    request, however long the leader waits."""
    cell = Cell()
    cell.create(replicas=(1, 2, 3), leader=1)
    del cell.managers[3]
    cell.run(31_000, every=1_000)
    cell.answer_alter("UNKNOWN_SERVER_ERROR")
    cell.step(ALTER_RETRY_MS)
    assert len(cell.alters) == 1
    cell.step(3 * ALTER_RETRY_MS)
    assert len(cell.alters) == 1  # still only the retry, unanswered
    cell.answer_alter(write=False)
    cell.step(3 * ALTER_RETRY_MS)
    leader = cell.replica(1)
    assert cell.alters == [] and leader.pending_isr == (1, 2)


def test_the_broker_asks_to_be_woken_for_a_retry() -> None:
    """An error to retry makes the retry's time the broker's next deadline (nothing else
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
    cell.answer_alter("UNKNOWN_SERVER_ERROR")
    assert leader.next_deadline() == cell.now + ALTER_RETRY_MS


def test_a_retry_is_dropped_when_new_metadata_replaced_the_proposal() -> None:
    """An error to retry, then the image moves the partition epoch before the retry is due:
    the old proposal is not sent again (Kafka's callback finds the partition state changed
    and drops it)."""
    cell = Cell()
    cell.create(replicas=(1, 2, 3), leader=1)
    del cell.managers[3]
    cell.run(31_000, every=1_000)
    cell.answer_alter("UNKNOWN_SERVER_ERROR")
    cell.change(isr=(1, 2))  # written meanwhile (e.g. by an earlier attempt)
    cell.step(ALTER_RETRY_MS)
    assert cell.alters == [] and cell.replica(1).pending_isr is None


def test_an_answer_to_a_replaced_proposal_is_ignored() -> None:
    """The leader asks to take broker 2 back; before the answer, new metadata (a new leader
    epoch of the same leader) replaces the pending change and the leader asks again. The
    first request's INELIGIBLE_REPLICA, arriving now, answers a proposal that is gone:
    the second stays pending (before, any error answer dropped whatever was pending)."""
    cell = Cell(brokers=(1, 2))
    _expansion_pending(cell)
    cell.change(leader=1)  # leader epoch 1: the pending change is dropped
    cell.produce(1, ["b"], acks=1)
    cell.run(500)
    assert [(r.new_isr, r.leader_epoch) for _, r in cell.alters] == [((1, 2), 0), ((1, 2), 1)]
    cell.answer_alter("INELIGIBLE_REPLICA")  # the answer to the first
    leader = cell.replica(1)
    assert leader.pending_isr == (1, 2) and leader.maximal_isr() == (1, 2)
    cell.answer_alter()  # the second is written
    assert leader.isr == (1, 2)
