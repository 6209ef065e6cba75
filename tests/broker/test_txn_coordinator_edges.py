"""Edges of the transaction coordinator: fencing failures, marker answers, timeouts.

Each case pins one rule of Kafka's TransactionCoordinator / TransactionMarkerChannelManager /
TransactionStateManager (reference sections 1.3-1.7) at its boundary.
"""

from __future__ import annotations

import pytest

from broker.txn.coordinator import TxnResult
from broker.txn.state import (
    MAX_EPOCH,
    VALID_PREVIOUS,
    IllegalTransition,
    TransactionMetadata,
    TransactionState,
    decode_record,
)
from tests.broker.test_txn_coordinator import Harness, _meta

S = TransactionState
A0, B0 = ("a", 0), ("b", 0)


def _prepared_commit(*partitions: tuple[str, int]) -> tuple[Harness, int]:
    """A transaction over ``partitions`` whose EndTxn(commit) is durable (PrepareCommit)."""
    h = Harness()
    pid = h.init().producer_id
    assert h.add(pid, 0, *partitions) == "NONE"
    assert h.end(pid, 0, True) == "NONE"
    assert h.meta.state == S.PREPARE_COMMIT
    return h, pid


def _states_logged(h: Harness) -> list[S]:
    states = []
    for text in h.log:
        value = decode_record(text).Value
        assert value is not None
        states.append(S(value.TransactionStatus))
    return states


# ---------------------------------------------------------------- fencing
def test_a_fence_whose_append_fails_not_leader_still_fences_the_old_producer() -> None:
    """InitProducerId fences an Ongoing transaction by bumping the epoch; Kafka makes the
    bump in memory before the append and keeps it when the append fails, whatever the
    error. So after a NOT_LEADER_OR_FOLLOWER append (answered NOT_COORDINATOR) the old
    producer can no longer commit, and the next fence does not bump a second time."""
    h = Harness()
    pid = h.init().producer_id
    assert h.add(pid, 0, A0) == "NONE"
    h.fail_next = ["NOT_LEADER_OR_FOLLOWER"]
    assert h.init().error == "NOT_COORDINATOR"
    assert (h.meta.state, h.meta.producer_epoch, h.meta.has_failed_epoch_fence) == \
        (S.ONGOING, 1, True)
    assert h.end(pid, 0, True) == "PRODUCER_FENCED"
    assert h.init().error == "CONCURRENT_TRANSACTIONS"
    assert (h.meta.state, h.meta.producer_epoch) == (S.PREPARE_ABORT, 1)


def test_at_the_exhausted_epoch_only_the_current_or_last_epoch_is_honoured() -> None:
    """At epoch 32,766 InitProducerId rotates the producer id only for a producer that
    names the current epoch (or none); naming the last epoch is a retry answered with the
    current identity, any other epoch is fenced (KIP-360)."""
    h = Harness(first_pid=50)
    h.put(_meta(S.EMPTY, epoch=MAX_EPOCH - 1, last=MAX_EPOCH - 2, pid=10))
    assert h.init((10, 5)) == TxnResult("PRODUCER_FENCED")
    assert h.init((10, MAX_EPOCH - 2)) == TxnResult("NONE", 10, MAX_EPOCH - 1)
    assert h.log == []
    assert h.init((10, MAX_EPOCH - 1)) == TxnResult("NONE", 50, 0)


# ---------------------------------------------------------------- markers
def test_a_fenced_marker_answer_stops_the_completion() -> None:
    """TRANSACTION_COORDINATOR_FENCED (or INVALID_PRODUCER_EPOCH) from a partition leader
    means a newer coordinator or producer took over: this coordinator stops sending the
    transaction's markers and never writes its CompleteCommit, even when the other
    partitions acknowledge."""
    h, _ = _prepared_commit(A0, B0)
    a, b = sorted(h.coordinator.drain_outbox(), key=lambda m: m.topic)
    h.coordinator.on_marker_result(a, "TRANSACTION_COORDINATOR_FENCED", 10)
    h.coordinator.on_marker_result(b, "NONE", 10)
    h.coordinator.poll(10_000)
    assert h.meta.state == S.PREPARE_COMMIT
    assert h.coordinator.drain_outbox() == []
    assert _states_logged(h)[-1] == S.PREPARE_COMMIT


def test_a_late_answer_for_an_acknowledged_partition_is_ignored() -> None:
    """A second (late) answer for a partition already acknowledged neither resends its
    marker nor stops the completion."""
    h, _ = _prepared_commit(A0, B0)
    a, b = sorted(h.coordinator.drain_outbox(), key=lambda m: m.topic)
    h.coordinator.on_marker_result(a, "NONE", 10)
    h.coordinator.on_marker_result(a, "NOT_LEADER_OR_FOLLOWER", 11)
    h.coordinator.on_marker_result(a, "TRANSACTION_COORDINATOR_FENCED", 11)
    h.coordinator.poll(1_000)
    assert h.coordinator.drain_outbox() == []
    h.coordinator.on_marker_result(b, "NONE", 12)
    assert h.meta.state == S.COMPLETE_COMMIT


def test_an_answer_from_an_older_coordinator_epoch_is_ignored() -> None:
    """After the coordinator reloads the partition under a new coordinator epoch, the
    answers to the markers it sent under the old epoch do not count: only the markers
    resent under the new epoch complete the transaction."""
    h, _ = _prepared_commit(A0)
    [old] = h.coordinator.drain_outbox()
    h.coordinator.resign(0)
    h.coordinator.become_leader(0, 1, list(h.log), 20)
    [new] = h.coordinator.drain_outbox()
    assert (old.coordinator_epoch, new.coordinator_epoch) == (0, 1)
    h.coordinator.on_marker_result(old, "NONE", 21)
    assert h.meta.state == S.PREPARE_COMMIT
    h.coordinator.on_marker_result(new, "NONE", 22)
    assert h.meta.state == S.COMPLETE_COMMIT


def test_a_failed_complete_write_is_retried_by_the_next_poll() -> None:
    """All markers written but the CompleteCommit append fails: the transaction stays
    PrepareCommit (CompleteCommit still pending, as Kafka's retryOnError keeps it) and the
    coordinator's next poll writes the CompleteCommit again."""
    h, _ = _prepared_commit(A0)
    h.fail_next = ["NOT_ENOUGH_REPLICAS"]
    h.deliver_markers()
    assert (h.meta.state, h.meta.pending_state) == (S.PREPARE_COMMIT, S.COMPLETE_COMMIT)
    h.coordinator.poll(50)
    assert h.meta.state == S.COMPLETE_COMMIT
    assert _states_logged(h)[-1] == S.COMPLETE_COMMIT


def test_the_next_deadline_includes_a_marker_retry() -> None:
    """A marker to retry after its backoff makes the coordinator's next deadline the
    retry time when that comes before the next timeout check."""
    h, _ = _prepared_commit(A0)
    h.coordinator.poll(5)  # the next timeout check is at 10,005
    assert h.coordinator.next_deadline() == 10_005
    [marker] = h.coordinator.drain_outbox()
    h.coordinator.on_marker_result(marker, "NOT_LEADER_OR_FOLLOWER", 10)
    assert h.coordinator.next_deadline() == 10 + h.coordinator.config.marker_retry_backoff_ms


def test_a_marker_retry_is_sent_once_at_its_due_time() -> None:
    """A retry due at T goes out at a poll at T, once: a later poll sends nothing more."""
    h, _ = _prepared_commit(A0)
    h.coordinator.poll(5)
    [marker] = h.coordinator.drain_outbox()
    h.coordinator.on_marker_result(marker, "NOT_LEADER_OR_FOLLOWER", 10)
    due = 10 + h.coordinator.config.marker_retry_backoff_ms
    h.coordinator.poll(due - 1)
    assert h.coordinator.drain_outbox() == []
    h.coordinator.poll(due)
    assert h.coordinator.drain_outbox() == [marker]
    h.coordinator.poll(due + 1)
    assert h.coordinator.drain_outbox() == [] and h.coordinator.retries == []


# ---------------------------------------------------------------- timeouts
def test_a_transaction_times_out_only_strictly_after_its_timeout() -> None:
    """timedOutTransactions: txnStartTimestamp + txnTimeoutMs < now."""
    h = Harness()
    h.put(_meta(S.ONGOING))  # started at 0 with a 60 s timeout
    h.coordinator.abort_timed_out(60_000)
    assert h.meta.state == S.ONGOING and h.log == []
    h.coordinator.abort_timed_out(60_001)
    assert (h.meta.state, h.meta.producer_epoch) == (S.PREPARE_ABORT, 11)


def test_the_periodic_timeout_check_runs_at_its_deadline() -> None:
    """poll at exactly the next check time (what next_deadline asks for) runs the check."""
    h = Harness()
    meta = _meta(S.ONGOING)
    meta.txn_timeout_ms = 1_000
    h.put(meta)
    h.coordinator.poll(0)
    assert h.meta.state == S.ONGOING
    deadline = h.coordinator.next_deadline()
    assert deadline == 10_000
    h.coordinator.poll(deadline)
    assert h.meta.state == S.PREPARE_ABORT


def test_a_transaction_with_the_maximum_timeout_still_times_out() -> None:
    """Only a KIP-939 2PC transaction (stored with Int.MaxValue) is exempt from the
    timeout; one with transaction.max.timeout.ms is aborted once it passes."""
    h = Harness()
    out: list[TxnResult] = []
    max_timeout = h.coordinator.config.max_timeout_ms
    h.coordinator.handle_init_producer_id("t", max_timeout, None, 5, out.append)
    pid = out[0].producer_id
    assert h.add(pid, 0, A0) == "NONE"  # started at 5
    assert not h.meta.two_phase_commit
    h.coordinator.abort_timed_out(5 + max_timeout + 1)
    assert h.meta.state == S.PREPARE_ABORT


# ---------------------------------------------------------------- metadata transitions
def test_the_whole_valid_previous_state_table() -> None:
    """Kafka's TransactionState valid previous states (trunk, with KIP-890's empty abort)."""
    expected = {
        S.EMPTY: {S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT},
        S.ONGOING: {S.ONGOING, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT},
        S.PREPARE_COMMIT: {S.ONGOING},
        S.PREPARE_ABORT: {S.ONGOING, S.PREPARE_EPOCH_FENCE, S.EMPTY, S.COMPLETE_COMMIT,
                          S.COMPLETE_ABORT},
        S.COMPLETE_COMMIT: {S.PREPARE_COMMIT},
        S.COMPLETE_ABORT: {S.PREPARE_ABORT},
        S.DEAD: {S.EMPTY, S.COMPLETE_ABORT, S.COMPLETE_COMMIT},
        S.PREPARE_EPOCH_FENCE: {S.ONGOING},
    }
    assert expected == VALID_PREVIOUS


def test_an_ongoing_transition_may_not_drop_partitions() -> None:
    """completeTransitionTo(Ongoing) refuses a partition set that is not a superset of the
    current one (Kafka: topicPartitions.subsetOf(transit.topicPartitions))."""
    meta = TransactionMetadata("t", 10, 60_000, 0, 3, state=S.ONGOING)
    meta.topic_partitions = frozenset({A0, B0})
    transit = meta.transit(S.ONGOING, 1, topic_partitions=frozenset({A0}))
    with pytest.raises(IllegalTransition):
        meta.complete_transition_to(transit)


def test_a_prepare_abort_may_not_change_the_producer_id() -> None:
    """completeTransitionTo(PrepareAbort) keeps the producer id (the fence may bump the
    epoch, never move to another producer)."""
    meta = TransactionMetadata("t", 10, 60_000, 0, 3, state=S.ONGOING)
    meta.topic_partitions = frozenset({A0})
    transit = meta.transit(S.PREPARE_ABORT, 1, producer_id=11)
    with pytest.raises(IllegalTransition):
        meta.complete_transition_to(transit)


def test_marker_retries_of_a_resigned_partition_are_forgotten() -> None:
    """removeMarkersForTxnTopicPartition: a marker waiting for its retry is dropped when the
    coordinator resigns; after reloading the partition under a new coordinator epoch only
    the new epoch's markers go out, and no wake-up is kept for the old retry."""
    h, _ = _prepared_commit(A0)
    h.coordinator.poll(5)
    [marker] = h.coordinator.drain_outbox()
    h.coordinator.on_marker_result(marker, "NOT_LEADER_OR_FOLLOWER", 10)
    h.coordinator.resign(0)
    assert h.coordinator.next_deadline() == 10_005
    h.coordinator.become_leader(0, 1, list(h.log), 20)
    [resent] = h.coordinator.drain_outbox()
    assert resent.coordinator_epoch == 1
    h.coordinator.poll(1_000)
    assert h.coordinator.drain_outbox() == []


def test_a_loaded_ongoing_transaction_times_out_from_its_own_start() -> None:
    """A coordinator that loads an Ongoing transaction takes its start time from the log:
    the timeout counts from there, not from the load."""
    h = Harness()
    pid = h.init().producer_id
    h.coordinator.handle_add_partitions("t", pid, 0, frozenset({A0}), 1_000, lambda e: None)
    h.coordinator.resign(0)
    h.coordinator.become_leader(0, 1, list(h.log), 2_000)
    assert h.meta.txn_start_timestamp == 1_000
    h.coordinator.abort_timed_out(61_000)
    assert h.meta.state == S.ONGOING
    h.coordinator.abort_timed_out(61_001)
    assert h.meta.state == S.PREPARE_ABORT
