"""Cases of Kafka's TransactionMetadataTest, in kraftsim's terms.

Kafka class followed: ``TransactionMetadataTest`` (trunk,
``transaction-coordinator/src/test/java/.../TransactionMetadataTest.java``; its
Scala predecessor in ``core/src/test/scala/unit/kafka/coordinator/transaction``).

Kafka tests its ``prepareIncrementProducerEpoch``, ``prepareProducerIdRotation``,
``prepareAddPartitions``, ``prepareAbortOrCommit`` and ``prepareComplete`` helpers
one by one. In kraftsim those helpers are the coordinator's request paths
(InitProducerId, AddPartitionsToTxn, EndTxn TV1/TV2, marker completion), so each
case drives the request against a coordinator holding the case's metadata and
asserts the state, producer id/epoch, last epoch and timestamps both in memory
and in the ``__transaction_state`` record written. Cases already covered by
``test_txn_coordinator.py`` / ``test_txn_two_phase.py`` are not repeated (see the
report in the commit message).
"""

from __future__ import annotations

import pytest

from broker.txn.coordinator import TxnResult
from broker.txn.state import (
    EXHAUSTED_EPOCH,
    MAX_EPOCH,
    TV2,
    VALID_PREVIOUS,
    IllegalTransition,
    TransactionLogValue,
    TransactionMetadata,
    TransactionState,
    decode_record,
)
from tests.broker.test_txn_coordinator import Harness

S = TransactionState
PID = 23423
TIMEOUT = 30_000
NOW = 1_000


def _harness(meta: TransactionMetadata | None = None) -> Harness:
    h = Harness(first_pid=9893)
    if meta is not None:
        h.put(meta)
    return h


def _meta(state: TransactionState, epoch: int, *, last: int = -1, start: int = -1,
          tv: int = 0, partitions: frozenset[tuple[str, int]] = frozenset()
          ) -> TransactionMetadata:
    meta = TransactionMetadata("t", PID, TIMEOUT, NOW, epoch, last, -1, state)
    meta.txn_start_timestamp = start
    meta.client_transaction_version = tv
    meta.topic_partitions = partitions
    return meta


def _init(h: Harness, now: int, expected: tuple[int, int] | None = None) -> TxnResult:
    out: list[TxnResult] = []
    h.coordinator.handle_init_producer_id("t", TIMEOUT, expected, now, out.append)
    return out[0]


def _end_tv1(h: Harness, epoch: int, commit: bool, now: int) -> str:
    out: list[str] = []
    h.coordinator.handle_end_txn("t", PID, epoch, commit, now, out.append)
    return out[0]


def _end_tv2(h: Harness, epoch: int, commit: bool, now: int) -> TxnResult:
    out: list[TxnResult] = []
    h.coordinator.handle_end_txn_tv2("t", PID, epoch, commit, now, out.append)
    return out[0]


def _record(h: Harness) -> TransactionLogValue:
    value = decode_record(h.log[-1]).Value
    assert value is not None
    return value


def _summary(h: Harness) -> tuple[S, int, int, int, int, int]:
    """(state, producer id, epoch, last epoch, start, last update), checked against the log."""
    m = h.meta
    in_memory = (m.state, m.producer_id, m.producer_epoch, m.last_producer_epoch,
                 m.txn_start_timestamp, m.txn_last_update_timestamp)
    r = _record(h)
    assert (S(r.TransactionStatus), r.ProducerId, r.ProducerEpoch, r.LastProducerEpoch,
            r.TransactionStartTimestampMs, r.TransactionLastUpdateTimestampMs) == in_memory
    return in_memory


def test_initialize_epoch() -> None:
    """testInitializeEpoch: a new transactional id starts at epoch 0 with no last epoch."""
    h = _harness()
    assert _init(h, NOW) == TxnResult("NONE", 9893, 0)
    assert _summary(h) == (S.EMPTY, 9893, 0, -1, -1, NOW)


@pytest.mark.parametrize("state", [S.EMPTY, S.COMPLETE_ABORT, S.COMPLETE_COMMIT])
def test_an_empty_abort_under_tv2_bumps_the_epoch_and_restarts_the_clock(
        state: TransactionState) -> None:
    """testTransitFrom{Empty,CompleteAbort,CompleteCommit}ToPrepareAbortInV2. With no
    partition to mark, the abort completes at once (Kafka's empty marker set)."""
    h = _harness(_meta(state, 735, start=NOW - 1, tv=TV2))
    assert _end_tv2(h, 735, False, NOW + 1) == TxnResult("NONE", PID, 736)
    prepare = decode_record(h.log[-2]).Value
    assert prepare is not None
    assert (S(prepare.TransactionStatus), prepare.ProducerEpoch, prepare.LastProducerEpoch,
            prepare.TransactionStartTimestampMs) == (S.PREPARE_ABORT, 736, 735, NOW + 1)
    assert _summary(h) == (S.COMPLETE_ABORT, PID, 736, 735, NOW + 1, NOW + 1)


def test_an_epoch_bump_tolerates_time_going_back_and_clears_the_start_time() -> None:
    """testTolerateUpdateTimeShiftDuringEpochBump."""
    h = _harness(_meta(S.EMPTY, 1, start=1))
    assert _init(h, NOW - 1, (PID, 1)) == TxnResult("NONE", PID, 2)
    assert _summary(h) == (S.EMPTY, PID, 2, 1, -1, NOW - 1)


def test_a_producer_id_rotation_tolerates_time_going_back() -> None:
    """testTolerateUpdateTimeResetDuringProducerIdRotation (kraftsim rotates only at the
    exhausted epoch, as Kafka's coordinator does)."""
    h = _harness(_meta(S.EMPTY, EXHAUSTED_EPOCH, start=1))
    assert _init(h, NOW - 1, (PID, EXHAUSTED_EPOCH)) == TxnResult("NONE", 9893, 0)
    assert _summary(h) == (S.EMPTY, 9893, 0, EXHAUSTED_EPOCH, -1, NOW - 1)
    assert h.meta.prev_producer_id == PID


def test_add_partitions_tolerates_time_going_back() -> None:
    """testTolerateTimeShiftDuringAddPartitions: from Empty the start time is the update
    time; while Ongoing it stays."""
    h = _harness(_meta(S.EMPTY, 1, start=NOW))
    out: list[str] = []
    h.coordinator.handle_add_partitions("t", PID, 1, frozenset({("topic1", 0)}), NOW - 1,
                                        out.append)
    assert out == ["NONE"]
    assert _summary(h) == (S.ONGOING, PID, 1, -1, NOW - 1, NOW - 1)
    h.coordinator.handle_add_partitions("t", PID, 1, frozenset({("topic2", 0)}), NOW - 2,
                                        out.append)
    assert out == ["NONE", "NONE"]
    assert _summary(h) == (S.ONGOING, PID, 1, -1, NOW - 1, NOW - 2)
    assert h.meta.topic_partitions == {("topic1", 0), ("topic2", 0)}


@pytest.mark.parametrize(("commit", "state"), [(True, S.PREPARE_COMMIT),
                                               (False, S.PREPARE_ABORT)])
def test_prepare_tolerates_time_going_back(commit: bool, state: TransactionState) -> None:
    """testTolerateTimeShiftDuringPrepare{Commit,Abort} (TV1: the epoch stays)."""
    h = _harness(_meta(S.ONGOING, 1, start=1, partitions=frozenset({("a", 0)})))
    assert _end_tv1(h, 1, commit, NOW - 1) == "NONE"
    assert _summary(h) == (state, PID, 1, -1, 1, NOW - 1)


@pytest.mark.parametrize("tv", [0, TV2])
@pytest.mark.parametrize(("prepared", "complete"), [(S.PREPARE_COMMIT, S.COMPLETE_COMMIT),
                                                    (S.PREPARE_ABORT, S.COMPLETE_ABORT)])
def test_complete_tolerates_time_going_back(tv: int, prepared: TransactionState,
                                            complete: TransactionState) -> None:
    """testTolerateTimeShiftDuringComplete{Commit,Abort}: the producer, last epoch and
    start time stay; the update time is the (earlier) completion time."""
    h = _harness(_meta(prepared, 1, last=0, start=1, tv=tv,
                       partitions=frozenset({("a", 0)})))
    h.coordinator._send_markers(h.meta, NOW)
    for marker in h.coordinator.drain_outbox():
        h.coordinator.on_marker_result(marker, "NONE", NOW - 1)
    assert _summary(h) == (complete, PID, 1, 0, 1, NOW - 1)


def test_fencing_at_the_exhausted_epoch_uses_the_last_epoch() -> None:
    """testFenceProducerAfterEpochsExhausted: the fence takes 32767, last epoch -1, the
    producer id stays."""
    h = _harness(_meta(S.ONGOING, EXHAUSTED_EPOCH, last=EXHAUSTED_EPOCH - 1, start=1,
                       partitions=frozenset({("a", 0)})))
    assert _init(h, NOW).error == "CONCURRENT_TRANSACTIONS"
    assert _summary(h) == (S.PREPARE_ABORT, PID, MAX_EPOCH, -1, 1, NOW)


@pytest.mark.parametrize("state", [S.COMPLETE_COMMIT, S.COMPLETE_ABORT])
def test_only_an_ongoing_transaction_can_be_fenced(state: TransactionState) -> None:
    """testInvalidTransitionFromComplete{Commit,Abort}ToFence."""
    with pytest.raises(IllegalTransition):
        _meta(state, EXHAUSTED_EPOCH).transit(S.PREPARE_EPOCH_FENCE, NOW)


def test_tv2_end_txn_bumps_the_epoch_once_and_completion_keeps_it() -> None:
    """testEpochBumpOnEndTxn."""
    h = _harness(_meta(S.ONGOING, 10, start=NOW, partitions=frozenset({("a", 0)})))
    assert _end_tv2(h, 10, True, NOW - 1) == TxnResult("NONE", PID, 11)
    assert _summary(h)[:3] == (S.PREPARE_COMMIT, PID, 11)
    assert h.meta.client_transaction_version == TV2
    for marker in h.coordinator.drain_outbox():
        h.coordinator.on_marker_result(marker, "NONE", NOW)
    assert _summary(h)[:3] == (S.COMPLETE_COMMIT, PID, 11)
    assert h.meta.client_transaction_version == TV2


def test_tv2_end_txn_at_the_exhausted_epoch_moves_to_the_next_producer_id() -> None:
    """testEpochBumpOnEndTxnOverflow: PrepareCommit at 32767 under the old producer id,
    then Complete under the new one at epoch 0; the last epoch stays 32766."""
    h = _harness(_meta(S.ONGOING, EXHAUSTED_EPOCH, start=NOW, partitions=frozenset({("a", 0)})))
    assert _end_tv2(h, EXHAUSTED_EPOCH, True, NOW - 1) == TxnResult("NONE", 9893, 0)
    assert _summary(h)[:4] == (S.PREPARE_COMMIT, PID, MAX_EPOCH, EXHAUSTED_EPOCH)
    for marker in h.coordinator.drain_outbox():
        h.coordinator.on_marker_result(marker, "NONE", NOW)
    assert _summary(h)[:4] == (S.COMPLETE_COMMIT, 9893, 0, EXHAUSTED_EPOCH)


def test_no_rotation_while_a_transaction_is_open() -> None:
    """testRotateProducerIdInOngoingState: at the exhausted epoch an Ongoing transaction is
    fenced (and aborted), never rotated; Prepare* answers CONCURRENT_TRANSACTIONS
    (test_txn_coordinator's vectors 13)."""
    h = _harness(_meta(S.ONGOING, EXHAUSTED_EPOCH, start=1, partitions=frozenset({("a", 0)})))
    assert _init(h, NOW, (PID, EXHAUSTED_EPOCH)).error == "CONCURRENT_TRANSACTIONS"
    assert (h.meta.producer_id, h.meta.state) == (PID, S.PREPARE_ABORT)


def test_an_epoch_bump_of_newly_created_metadata_ignores_the_expected_epoch() -> None:
    """testAttemptedEpochBumpWithNewlyCreatedMetadata: epoch -1 -> 0, last epoch -1."""
    h = _harness(_meta(S.EMPTY, -1))
    assert _init(h, NOW, (PID, 735)) == TxnResult("NONE", PID, 0)
    assert _summary(h)[:4] == (S.EMPTY, PID, 0, -1)


def test_an_expected_epoch_older_than_the_last_one_is_fenced() -> None:
    """testAttemptedEpochBumpWithFencedEpoch."""
    h = _harness(_meta(S.EMPTY, 735, last=734))
    h.meta.prev_producer_id = PID
    assert _init(h, NOW, (PID, 733)) == TxnResult("PRODUCER_FENCED")
    assert h.log == [] and h.meta.pending_state is None


def test_state_ids_and_names() -> None:
    """testTransactionStateIdAndNameMapping and testAllTransactionStatesAreMapped."""
    names = {s: s.kafka_name for s in S}
    assert names == {S.EMPTY: "Empty", S.ONGOING: "Ongoing", S.PREPARE_COMMIT: "PrepareCommit",
                     S.PREPARE_ABORT: "PrepareAbort", S.COMPLETE_COMMIT: "CompleteCommit",
                     S.COMPLETE_ABORT: "CompleteAbort", S.DEAD: "Dead",
                     S.PREPARE_EPOCH_FENCE: "PrepareEpochFence"}
    assert [int(s) for s in S] == list(range(8))
    assert all(S(int(s)) is s for s in S)
    assert set(VALID_PREVIOUS) == set(S)


def test_a_plain_epoch_bump() -> None:
    """testNormalEpochBump: no expected epoch -> epoch + 1, no last epoch."""
    h = _harness(_meta(S.EMPTY, 735))
    assert _init(h, NOW) == TxnResult("NONE", PID, 736)
    assert _summary(h)[:4] == (S.EMPTY, PID, 736, -1)


def test_an_epoch_bump_with_the_current_epoch_records_it_as_last() -> None:
    """testEpochBumpWithCurrentEpochProvided."""
    h = _harness(_meta(S.EMPTY, 735))
    assert _init(h, NOW, (PID, 735)) == TxnResult("NONE", PID, 736)
    assert _summary(h)[:4] == (S.EMPTY, PID, 736, 735)


def test_an_epoch_bump_with_the_last_epoch_is_a_retry() -> None:
    """testAttemptedEpochBumpWithLastEpoch: the epoch and last epoch stay; the coordinator
    answers the current producer without writing."""
    h = _harness(_meta(S.EMPTY, 735, last=734))
    assert _init(h, NOW, (PID, 734)) == TxnResult("NONE", PID, 735)
    assert (h.meta.producer_epoch, h.meta.last_producer_epoch, h.log) == (735, 734, [])


@pytest.mark.parametrize("expected", [None, (PID, EXHAUSTED_EPOCH)])
def test_the_exhausted_epoch_is_never_bumped(expected: tuple[int, int] | None) -> None:
    """testBumpEpochNotAllowedIfEpochsExhausted (and testRotateProducerId): Kafka's
    prepareIncrementProducerEpoch refuses 32,766, so the coordinator rotates instead: a new
    producer id at epoch 0, the old one as previous; the last epoch is kept only when the
    client named it."""
    h = _harness(_meta(S.EMPTY, EXHAUSTED_EPOCH))
    assert _init(h, NOW, expected) == TxnResult("NONE", 9893, 0)
    assert _summary(h)[:4] == (S.EMPTY, 9893, 0, -1 if expected is None else EXHAUSTED_EPOCH)
    assert h.meta.prev_producer_id == PID


def test_fencing_at_the_maximum_epoch_aborts_without_a_bump() -> None:
    """testFenceProducerNotAllowedIfItWouldOverflow, kept difference: Kafka's mirrored
    prepareFenceProducerEpoch throws at 32,767; kraftsim follows trunk (#21469), where the
    fence at 32,767 aborts the transaction without a bump (no overflow either way)."""
    h = _harness(_meta(S.ONGOING, MAX_EPOCH, start=1, partitions=frozenset({("a", 0)})))
    assert _init(h, NOW).error == "CONCURRENT_TRANSACTIONS"
    assert _summary(h)[:4] == (S.PREPARE_ABORT, PID, MAX_EPOCH, -1)


@pytest.mark.parametrize("state", [S.PREPARE_ABORT, S.PREPARE_COMMIT])
def test_no_rotation_while_a_transaction_is_prepared(state: TransactionState) -> None:
    """testRotateProducerIdIn{PrepareAbort,PrepareCommit}State: at the exhausted epoch an
    InitProducerId waits (CONCURRENT_TRANSACTIONS); no producer id is taken, nothing is
    written."""
    h = _harness(_meta(state, EXHAUSTED_EPOCH, start=1, partitions=frozenset({("a", 0)})))
    assert _init(h, NOW, (PID, EXHAUSTED_EPOCH)) == TxnResult("CONCURRENT_TRANSACTIONS")
    assert (h.meta.producer_id, h.meta.state, h.log, h.next_pid) == (PID, state, [], 9893)
