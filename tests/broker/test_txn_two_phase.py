"""KIP-939 two-phase commit at the coordinator: the seed's epoch-overflow walkthroughs.

Every (ProducerId, ProducerEpoch), PrevProducerId, (NextProducerId,
NextProducerEpoch) and response pair the KIP lists is asserted, both in
memory and in the ``__transaction_state`` record just written.
"""

from __future__ import annotations

from typing import Any

from broker.txn.coordinator import TransactionCoordinator, TxnCoordinatorConfig, TxnResult
from broker.txn.state import (
    MAX_EPOCH,
    NO_TIMEOUT_MS,
    TransactionMetadata,
    TransactionState,
    decode_record,
)
from tests.broker.test_txn_coordinator import Harness

S = TransactionState
MAX = MAX_EPOCH


def _harness(first_pid: int) -> Harness:
    h = Harness(first_pid=first_pid)
    h.coordinator = TransactionCoordinator(
        0, TxnCoordinatorConfig(num_partitions=1, two_phase_commit_enable=True),
        h._append, h._pid)
    h.coordinator.become_leader(0, 0, [], 0)
    return h


def _empty_at(h: Harness, pid: int, epoch: int, *, two_pc: bool = True) -> None:
    """Step 1 of both walkthroughs: InitProducerId(false) left Empty, ProducerId=pid."""
    h.put(TransactionMetadata("t", pid, NO_TIMEOUT_MS if two_pc else 60_000, 0, epoch))


def init(h: Harness, *, keep: bool, enable_2pc: bool = True,
         expected: tuple[int, int] | None = None) -> TxnResult:
    out: list[TxnResult] = []
    h.coordinator.handle_init_producer_id("t", 60_000, expected, 5, out.append,
                                          enable_2pc=enable_2pc, keep_prepared_txn=keep)
    return out[0]


def add(h: Harness, pid: int, epoch: int) -> str:
    out: list[str] = []
    h.coordinator.handle_add_partitions("t", pid, epoch, frozenset({("a", 0)}), 5, out.append,
                                        transaction_version=2)
    return out[0]


def end(h: Harness, pid: int, epoch: int, commit: bool = True) -> TxnResult:
    out: list[TxnResult] = []
    h.coordinator.handle_end_txn_tv2("t", pid, epoch, commit, 5, out.append)
    return out[0] if out else TxnResult("WAITING")


def tc_state(h: Harness) -> tuple[S, int, int, int, int, int]:
    """(state, ProducerId, ProducerEpoch, PrevProducerId, NextProducerId, NextProducerEpoch)."""
    m = h.meta
    in_memory = (m.state, m.producer_id, m.producer_epoch, m.prev_producer_id,
                 m.next_producer_id, m.next_producer_epoch)
    record = decode_record(h.log[-1]).Value
    assert record is not None
    logged = (S(record.TransactionStatus), record.ProducerId, record.ProducerEpoch,
              record.PreviousProducerId, record.NextProducerId, record.NextProducerEpoch)
    assert logged == in_memory  # the dual identity is kept in the TransactionLogValue
    return in_memory


def test_vanilla_kip890_transaction_with_epoch_overflow() -> None:
    h = _harness(first_pid=85)
    _empty_at(h, 42, MAX - 1, two_pc=False)
    assert add(h, 42, MAX - 1) == "NONE"
    assert tc_state(h) == (S.ONGOING, 42, MAX - 1, -1, -1, -1)
    assert end(h, 42, MAX - 1) == TxnResult("NONE", 85, 0)
    log_at_prepare = len(h.log)
    markers = h.coordinator.drain_outbox()
    assert [(m.producer_id, m.producer_epoch, m.commit) for m in markers] == [(42, MAX, True)]
    # The PrepareCommit record (the complete is not written before the markers return).
    assert len(h.log) == log_at_prepare and tc_state(h) == (S.PREPARE_COMMIT, 42, MAX, -1, 85, 0)
    for marker in markers:
        h.coordinator.on_marker_result(marker, "NONE", 10)
    assert tc_state(h) == (S.COMPLETE_COMMIT, 85, 0, 42, -1, -1)
    # The commit timed out on the client: its retry with the old identity succeeds.
    assert end(h, 42, MAX - 1) == TxnResult("NONE", 85, 0)
    assert add(h, 85, 0) == "NONE"


def test_2pc_transaction_with_two_epoch_overflows() -> None:
    h = _harness(first_pid=73)
    _empty_at(h, 42, MAX - 1)
    assert add(h, 42, MAX - 1) == "NONE"
    assert tc_state(h) == (S.ONGOING, 42, MAX - 1, -1, -1, -1)
    # (Transaction is prepared on the client, then the client crashed.)
    assert init(h, keep=True) == TxnResult("NONE", 73, 0, 42, MAX - 1)
    assert tc_state(h) == (S.ONGOING, 42, MAX - 1, -1, 73, 0)
    # (Crash the client.)
    assert init(h, keep=True) == TxnResult("NONE", 73, 1, 42, MAX - 1)
    assert tc_state(h) == (S.ONGOING, 42, MAX - 1, -1, 73, 1)
    # (Crash the client a few times more.)
    for epoch in range(2, MAX - 1):
        assert init(h, keep=True) == TxnResult("NONE", 73, epoch, 42, MAX - 1)
    # The KIP's state column reads NextProducerEpoch=MAX here but its response and the
    # commit request that follows both carry MAX-1; the state and the answer must agree
    # (the client holds what it was told), so the state is MAX-1 (docs/transactions.md).
    assert init(h, keep=True) == TxnResult("NONE", 73, MAX - 1, 42, MAX - 1)
    assert tc_state(h) == (S.ONGOING, 42, MAX - 1, -1, 73, MAX - 1)
    h.next_pid = 85
    assert end(h, 73, MAX - 1) == TxnResult("NONE", 85, 0)
    markers = h.coordinator.drain_outbox()
    assert tc_state(h) == (S.PREPARE_COMMIT, 42, MAX, 73, 85, 0)
    # Markers go out under the ongoing transaction's producer id, its epoch bumped.
    assert [(m.producer_id, m.producer_epoch) for m in markers] == [(42, MAX)]
    assert end(h, 73, MAX - 1).error == "CONCURRENT_TRANSACTIONS"  # a retry, not fenced
    for marker in markers:
        h.coordinator.on_marker_result(marker, "NONE", 10)
    assert tc_state(h) == (S.COMPLETE_COMMIT, 85, 0, 73, -1, -1)
    assert end(h, 73, MAX - 1) == TxnResult("NONE", 85, 0)  # PrevProducerId: no self-fencing


def test_keep_prepared_txn_without_ongoing_transaction_returns_no_ongoing_pair() -> None:
    h = _harness(first_pid=11)
    _empty_at(h, 10, 3)
    assert init(h, keep=True) == TxnResult("NONE", 10, 4, -1, -1)
    assert h.meta.state == S.EMPTY


def test_the_kept_identity_can_only_complete_and_fences_older_incarnations() -> None:
    h = _harness(first_pid=11)
    _empty_at(h, 10, 3)
    assert add(h, 10, 3) == "NONE"
    assert init(h, keep=True) == TxnResult("NONE", 10, 4, 10, 3)
    assert add(h, 10, 4) == "INVALID_TXN_STATE"       # only commit/abort/complete now
    assert init(h, keep=True) == TxnResult("NONE", 10, 5, 10, 3)
    assert end(h, 10, 4).error == "PRODUCER_FENCED"   # the previous incarnation
    assert end(h, 10, 3).error == "PRODUCER_FENCED"   # the crashed original
    assert end(h, 10, 5, commit=False) == TxnResult("NONE", 10, 6)
    markers = h.coordinator.drain_outbox()
    assert [(m.producer_id, m.producer_epoch, m.commit) for m in markers] == [(10, 4, False)]
    for marker in markers:
        h.coordinator.on_marker_result(marker, "NONE", 10)
    assert tc_state(h) == (S.COMPLETE_ABORT, 10, 6, 10, -1, -1)
    assert end(h, 10, 5, commit=False) == TxnResult("NONE", 10, 6)  # retry after the bump


def test_enable_2pc_needs_the_broker_config_and_lifts_the_timeout() -> None:
    h = Harness()
    assert init(h, keep=False).error == "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"
    h = _harness(first_pid=11)
    assert init(h, keep=False) == TxnResult("NONE", 11, 0)
    assert h.meta.txn_timeout_ms == NO_TIMEOUT_MS and h.meta.two_phase_commit
    assert add(h, 11, 0) == "NONE"
    record = decode_record(h.log[-1]).Value
    assert record is not None and record.TransactionTimeoutMs == 2**31 - 1  # Int.MaxValue
    h.coordinator.abort_timed_out(10**12)
    assert h.meta.state == S.ONGOING and h.coordinator.drain_outbox() == []


def test_force_terminate_aborts_the_prepared_transaction_and_fences_the_kept_client() -> None:
    h = _harness(first_pid=11)
    _empty_at(h, 10, 3)
    assert add(h, 10, 3) == "NONE"
    assert init(h, keep=True) == TxnResult("NONE", 10, 4, 10, 3)
    # Admin forceTerminateTransaction: InitProducerId(Enable2Pc=false, KeepPreparedTxn=false).
    assert init(h, keep=False, enable_2pc=False).error == "CONCURRENT_TRANSACTIONS"
    markers = h.coordinator.drain_outbox()
    assert [(m.producer_id, m.producer_epoch, m.commit) for m in markers] == [(10, 4, False)]
    for marker in markers:
        h.coordinator.on_marker_result(marker, "NONE", 10)
    assert h.meta.state == S.COMPLETE_ABORT and h.meta.next_producer_epoch == -1
    assert init(h, keep=False, enable_2pc=False) == TxnResult("NONE", 10, 5)
    assert end(h, 10, 4).error == "PRODUCER_FENCED"


def test_a_new_coordinator_loads_the_kept_transaction() -> None:
    h = _harness(first_pid=73)
    _empty_at(h, 42, 7)
    assert add(h, 42, 7) == "NONE"
    assert init(h, keep=True) == TxnResult("NONE", 42, 8, 42, 7)
    other = TransactionCoordinator(1, h.coordinator.config, h._append, h._pid)
    other.become_leader(0, 1, list(h.log), 10**12)
    other.abort_timed_out(10**12)
    meta = other.txns["t"]
    assert (meta.state, meta.producer_id, meta.producer_epoch, meta.next_producer_id,
            meta.next_producer_epoch) == (S.ONGOING, 42, 7, 42, 8)
    assert meta.client_transaction_version == h.meta.client_transaction_version == 2  # TV2
    out: list[TxnResult] = []
    other.handle_init_producer_id("t", 1, None, 10**12, out.append, enable_2pc=True,
                                  keep_prepared_txn=True)
    assert out == [TxnResult("NONE", 42, 9, 42, 7)]


def test_list_transactions_filters_by_state_producer_id_and_running_time() -> None:
    from broker.txn.admin import describe_transactions, list_transactions

    h = _harness(first_pid=11)
    _empty_at(h, 10, 3)
    assert add(h, 10, 3) == "NONE"                      # started at 5
    h.put(TransactionMetadata("idle", 20, 60_000, 0, 0))
    c = h.coordinator

    def ids(**filters: Any) -> list[tuple[str, int, str]]:
        result = list_transactions(c, 1_005, **filters)
        return [(t.TransactionalId, t.ProducerId, t.TransactionState)
                for t in result.TransactionStates]

    assert ids() == [("idle", 20, "Empty"), ("t", 10, "Ongoing")]
    assert ids(states_filter=["Ongoing"]) == [("t", 10, "Ongoing")]
    assert ids(producer_id_filter=[20]) == [("idle", 20, "Empty")]
    assert ids(states_filter=["Ongoing"], duration_filter_ms=999) == [("t", 10, "Ongoing")]
    assert ids(states_filter=["Ongoing"], duration_filter_ms=1_000) == []  # not longer
    assert list_transactions(c, 0, ["Bogus"]).UnknownStateFilters == ["Bogus"]
    described = describe_transactions(c, ["t", "nope"])
    assert [(d.ErrorCode, d.TransactionState, d.ProducerId, d.Topics) for d in described] == [
        ("NONE", "Ongoing", 10, [("a", [0])]), ("TRANSACTIONAL_ID_NOT_FOUND", "", -1, [])]


def _overflowed_prepare_commit() -> Harness:
    """The vanilla KIP-890 overflow up to PrepareCommit (42, MAX) with next identity (85, 0),
    its markers not yet answered."""
    h = _harness(first_pid=85)
    _empty_at(h, 42, MAX - 1, two_pc=False)
    assert add(h, 42, MAX - 1) == "NONE"
    assert end(h, 42, MAX - 1) == TxnResult("NONE", 85, 0)
    assert tc_state(h) == (S.PREPARE_COMMIT, 42, MAX, -1, 85, 0)
    return h


def test_the_client_at_its_next_identity_is_told_to_retry_while_markers_are_written() -> None:
    """EndTxn from the identity the client was just given (85, 0) while the previous
    transaction's markers are still out is CONCURRENT_TRANSACTIONS (a known producer id),
    not an unknown mapping; AddPartitionsToTxn of that producer id is still Kafka's
    INVALID_PRODUCER_ID_MAPPING (reference 1.4: the id is not the transaction's yet)."""
    h = _overflowed_prepare_commit()
    assert end(h, 85, 0).error == "CONCURRENT_TRANSACTIONS"
    assert end(h, 99, 0).error == "INVALID_PRODUCER_ID_MAPPING"
    assert add(h, 85, 0) == "INVALID_PRODUCER_ID_MAPPING"
    assert h.meta.state == S.PREPARE_COMMIT


def test_an_end_txn_retry_after_an_overflow_needs_the_exhausted_epoch() -> None:
    """Only (previous producer id, 32,766) is a retry of the EndTxn that rotated the
    producer id; the previous producer id at another epoch is an unknown mapping."""
    h = _overflowed_prepare_commit()
    for marker in h.coordinator.drain_outbox():
        h.coordinator.on_marker_result(marker, "NONE", 10)
    assert tc_state(h) == (S.COMPLETE_COMMIT, 85, 0, 42, -1, -1)
    assert end(h, 42, 5).error == "INVALID_PRODUCER_ID_MAPPING"
    assert end(h, 42, MAX - 1) == TxnResult("NONE", 85, 0)
    assert tc_state(h) == (S.COMPLETE_COMMIT, 85, 0, 42, -1, -1)


def test_the_marker_epoch_of_a_tv2_end_never_passes_32767() -> None:
    """A TV2 EndTxn of a transaction already at epoch 32,767 writes its markers at 32,767
    (the bump stops at Short.MAX_VALUE) and hands the client a new producer id."""
    h = _harness(first_pid=85)
    meta = TransactionMetadata("t", 42, 60_000, 0, MAX, MAX - 1, -1, S.ONGOING)
    meta.client_transaction_version = 2
    meta.topic_partitions = frozenset({("a", 0)})
    meta.txn_start_timestamp = 0
    h.put(meta)
    assert end(h, 42, MAX) == TxnResult("NONE", 85, 0)
    markers = h.coordinator.drain_outbox()
    assert [(m.producer_id, m.producer_epoch) for m in markers] == [(42, MAX)]
    for marker in markers:
        h.coordinator.on_marker_result(marker, "NONE", 10)
    assert tc_state(h)[:3] == (S.COMPLETE_COMMIT, 85, 0)


def test_init_producer_id_with_the_kept_identity_as_expected_is_accepted() -> None:
    """A restarted 2PC client that names the rotated identity it holds (KIP-360's expected
    producer id and epoch) is re-initialised, its next identity bumped; an identity the
    coordinator never gave out is fenced."""
    h = _harness(first_pid=73)
    _empty_at(h, 42, MAX - 1)
    assert add(h, 42, MAX - 1) == "NONE"
    assert init(h, keep=True) == TxnResult("NONE", 73, 0, 42, MAX - 1)
    assert init(h, keep=True, expected=(99, 0)).error == "PRODUCER_FENCED"
    assert init(h, keep=True, expected=(73, 0)) == TxnResult("NONE", 73, 1, 42, MAX - 1)
    assert tc_state(h) == (S.ONGOING, 42, MAX - 1, -1, 73, 1)


def test_a_tv2_transaction_without_rotation_keeps_no_previous_producer_id() -> None:
    """docs/transactions.md: on the TV2 paths PrevProducerId follows the KIP and stays -1
    until a rotation or a kept identity sets it, through the Complete record too."""
    h = _harness(first_pid=85)
    _empty_at(h, 10, 3, two_pc=False)
    assert add(h, 10, 3) == "NONE"
    assert end(h, 10, 3) == TxnResult("NONE", 10, 4)
    # the prepare record holds no next identity either: the markers' epoch is the next one
    assert tc_state(h) == (S.PREPARE_COMMIT, 10, 4, -1, -1, -1)
    for marker in h.coordinator.drain_outbox():
        h.coordinator.on_marker_result(marker, "NONE", 10)
    assert tc_state(h) == (S.COMPLETE_COMMIT, 10, 4, -1, -1, -1)


def test_a_tv2_end_txn_while_its_prepare_is_being_written_is_concurrent() -> None:
    """EndTxn arriving while the coordinator's previous state change is not yet durable is
    told CONCURRENT_TRANSACTIONS (the client retries); nothing else is prepared."""
    h = _harness(first_pid=85)
    _empty_at(h, 10, 3, two_pc=False)
    assert add(h, 10, 3) == "NONE"
    h.auto_ack = False
    assert end(h, 10, 3) == TxnResult("WAITING")
    assert end(h, 10, 3).error == "CONCURRENT_TRANSACTIONS"
    assert h.meta.pending_state == S.PREPARE_COMMIT


def test_force_terminate_fences_a_rotated_kept_identity() -> None:
    """The kept client holds a rotated identity (73, 0); a force-terminate aborts the
    prepared transaction of (42, 32766) and drops that identity, so once the abort is
    complete the kept client can neither add partitions nor end a transaction."""
    h = _harness(first_pid=73)
    _empty_at(h, 42, MAX - 1)
    assert add(h, 42, MAX - 1) == "NONE"
    assert init(h, keep=True) == TxnResult("NONE", 73, 0, 42, MAX - 1)
    assert init(h, keep=False, enable_2pc=False).error == "CONCURRENT_TRANSACTIONS"
    for marker in h.coordinator.drain_outbox():
        h.coordinator.on_marker_result(marker, "NONE", 10)
    assert h.meta.state == S.COMPLETE_ABORT and h.meta.producer_id == 42
    assert add(h, 73, 0) == "INVALID_PRODUCER_ID_MAPPING"
    assert end(h, 73, 0).error == "INVALID_PRODUCER_ID_MAPPING"


def test_force_terminate_fences_a_client_kept_twice() -> None:
    """The application restarted twice after its prepare: the kept identity went 10/4 then
    10/5. The force-terminate's fence reaches 10/5 (not 10/4, which the admin's retry
    would have bumped to 10/5 again, handing the last client's identity back): once it
    is done, neither kept client can end a transaction or add partitions."""
    h = _harness(first_pid=11)
    _empty_at(h, 10, 3)
    assert add(h, 10, 3) == "NONE"
    assert init(h, keep=True) == TxnResult("NONE", 10, 4, 10, 3)
    assert init(h, keep=True) == TxnResult("NONE", 10, 5, 10, 3)
    assert init(h, keep=False, enable_2pc=False).error == "CONCURRENT_TRANSACTIONS"
    markers = h.coordinator.drain_outbox()
    assert [(m.producer_id, m.producer_epoch, m.commit) for m in markers] == [(10, 5, False)]
    for marker in markers:
        h.coordinator.on_marker_result(marker, "NONE", 10)
    assert init(h, keep=False, enable_2pc=False) == TxnResult("NONE", 10, 6)
    for epoch in (4, 5):
        assert end(h, 10, epoch, commit=False).error == "PRODUCER_FENCED"
        assert add(h, 10, epoch) == "PRODUCER_FENCED"
