"""The idempotent and transactional cases of Kafka's ``ReplicaManagerTest``, end to end.

Brokers of a :class:`~tests.broker.replica_cell.Cell` take produce requests
and WriteTxnMarkers through :class:`~broker.replica_manager.ReplicaManager`
and replicate to each other; a read_committed consumer reads the leader's log
with :func:`~broker.txn.fetch.fetch_log` (kraftsim's consumer fetch at the
replica manager is read_uncommitted only) and filters with
:func:`~broker.txn.fetch.filter_committed`. Kafka's "fetch as follower to
advance the high watermark" is a step of the cell.

KIP-890 part 1 (the partition leader verifies a transactional produce): the
``test*Verification*`` cases, with a stand-in AddPartitionsToTxnManager that records
each verification and lets the test answer it (Kafka's mocked manager):
testVerificationForTransactionalPartitionsOnly, testTransactionVerificationFlow (the
CLIENT origin), testTransactionVerificationBlocksOutOfOrderSequence,
testTransactionVerificationGuardOnMultiplePartitions,
testExceptionWhenUnverifiedTransactionHasMultipleProducerIds,
testTransactionVerificationWhenNotLeader, testDisabledTransactionVerification,
testTransactionVerificationDynamicDisablement, testVerificationErrorConversions (the five
errors), plus kraftsim's own: a marker between the verification and the append, and
TRANSACTION_ABORTABLE by Produce version. The manager's own cases are in
``test_kafka_add_partitions_to_txn_manager_cases.py``.

Left out: testTransactionVerificationFlow's COORDINATOR origin and testPreVerificationError
(kraftsim's group coordinator does not verify its TxnOffsetCommit writes, so there is no
verification entry point for it), DescribeProducers, delayed consumer fetches (minBytes
and maxWaitMs of a consumer), the log start offset in produce answers, and metrics of
producer ids, late transactions and verification.
"""

from __future__ import annotations

import pytest

from broker.replica_manager import ProduceResult
from broker.txn.add_partitions_manager import AddPartitionsToTxnManager, AppendCallback
from broker.txn.fetch import READ_COMMITTED, fetch_log, filter_committed
from broker.txn.state import TopicPartition
from broker.txn.verification import (
    SENTINEL,
    TRANSACTION_PARTITION_VERIFICATION_ENABLE,
    InvalidPidMapping,
    ProduceBatch,
    TxnVerifier,
    VerificationGuard,
)
from metadata.delta import BROKER_RESOURCE
from metadata.schema import ConfigRecord, PartitionRecord
from tests.broker.replica_cell import TOPIC, TOPIC_ID, Cell

PID, EPOCH = 234, 5


def _send(cell: Cell, leader: int, sequence: int, values: list[str], acks: int = 1,
          transactional: bool = False) -> ProduceResult:
    answers: list[ProduceResult] = []
    cell.managers[leader].produce(TOPIC, 0, values, acks, answers.append, PID, EPOCH,
                                  sequence, transactional)
    [answer] = answers
    return answer


def _marker(cell: Cell, commit: bool) -> list[ProduceResult]:
    answers: list[ProduceResult] = []
    cell.managers[1].write_txn_marker(TOPIC, 0, PID, EPOCH, commit, 0, answers.append)
    return answers


def _open_transaction(cell: Cell) -> None:
    """Three transactional batches at leader 1, replicated to broker 2 (HW 3)."""
    cell.create(replicas=(1, 2), leader=1)
    for sequence in range(3):
        assert _send(cell, 1, sequence, [f"message {sequence}"],
                     transactional=True).error == "NONE"
    cell.step()
    assert cell.replica(1).log.high_watermark == 3


def test_read_committed_at_the_leader_waits_for_the_replicated_marker() -> None:
    """testReadCommittedFetchLimitedAtLSO: the open transaction holds the LSO at 0, also
    once its data is replicated; the COMMIT marker is appended, but until it is below the
    HW nothing of the transaction is visible; then all of it is."""
    cell = Cell()
    _open_transaction(cell)
    log = cell.replica(1).log
    fetched = fetch_log(log, 0, 100_000, READ_COMMITTED)
    assert (fetched.entries, fetched.last_stable_offset, fetched.aborted_transactions) == \
        ((), 0, ())
    answers = _marker(cell, commit=True)
    assert answers == []                       # a marker is answered once replicated
    fetched = fetch_log(log, 0, 100_000, READ_COMMITTED)
    assert (fetched.entries, fetched.last_stable_offset) == ((), 0)
    cell.run(1_000)                            # the follower fetches it (after its backoff)
    assert [a.error for a in answers] == ["NONE"]
    fetched = fetch_log(log, 0, 100_000, READ_COMMITTED)
    assert fetched.last_stable_offset == 4 and fetched.aborted_transactions == ()
    assert len(fetched.entries) == 4           # the three records and the marker
    assert [e.value for e in filter_committed(fetched.entries, fetched.aborted_transactions)] \
        == ["message 0", "message 1", "message 2"]


def test_a_read_committed_fetch_after_an_abort_names_the_aborted_transaction() -> None:
    """testDelayedFetchIncludesAbortedTransactions (without the consumer's wait): once the
    ABORT marker is replicated, the fetch lists the transaction and the consumer drops
    its records; the follower built the same abort index."""
    cell = Cell()
    _open_transaction(cell)
    answers = _marker(cell, commit=False)
    cell.run(1_000)
    assert [a.error for a in answers] == ["NONE"]
    fetched = fetch_log(cell.replica(1).log, 0, 100_000, READ_COMMITTED)
    assert fetched.last_stable_offset == 4
    assert fetched.aborted_transactions == ((PID, 0),)
    assert filter_committed(fetched.entries, fetched.aborted_transactions) == []
    assert cell.replica(2).log.txns.aborted == cell.replica(1).log.txns.aborted


def test_a_plain_batch_inside_the_producers_transaction_is_refused_at_the_leader() -> None:
    """ProducerAppendInfo.appendDataBatch through the produce path: INVALID_TXN_STATE and
    nothing written."""
    cell = Cell()
    _open_transaction(cell)
    assert _send(cell, 1, 3, ["plain"]).error == "INVALID_TXN_STATE"
    assert cell.replica(1).log.end_offset == 3


def test_a_new_leader_without_the_producers_batches_takes_its_next_sequence() -> None:
    """Kafka's checkSequence after a failover that lost an acks=1 batch: the new leader has
    no state of the producer and takes the next batch (sequence 1) as it comes, where a
    partition before KIP-360 answered UNKNOWN_PRODUCER_ID; the former leader truncates
    the lost batch and copies the new one."""
    cell = Cell()
    cell.create(replicas=(1, 2), leader=1)
    assert _send(cell, 1, 0, ["lost"]).first_offset == 0     # acks=1, never replicated
    cell.change(leader=2)
    answer = _send(cell, 2, 1, ["next"])
    assert (answer.error, answer.first_offset) == ("NONE", 0)
    assert _send(cell, 2, 1, ["next"]).first_offset == 0     # its retry is a duplicate
    cell.step()
    assert [e.value for e in cell.replica(1).log.entries] == ["next"]
    assert cell.replica(1).log.producers[PID].batches[-1].last_sequence == 1


def test_a_clients_batch_with_a_producer_id_needs_a_sequence() -> None:
    """LogValidator.validateBatch: a client's batch carrying a producer id but no sequence
    is INVALID_RECORD and not written; the group coordinator's transactional offset
    records (AppendOrigin.COORDINATOR) carry none and are written."""
    cell = Cell()
    cell.create(replicas=(1, 2), leader=1)
    answers: list[ProduceResult] = []
    cell.managers[1].produce(TOPIC, 0, ["x"], 1, answers.append, PID, EPOCH, -1, True)
    assert [a.error for a in answers] == ["INVALID_RECORD"]
    assert cell.replica(1).log.end_offset == 0
    cell.managers[1].produce(TOPIC, 0, ["offsets"], 1, answers.append, PID, EPOCH, -1, True,
                             from_coordinator=True)
    assert answers[-1].error == "NONE"
    assert cell.replica(1).log.txns.ongoing == {PID: 0}


# ---------------------------------------------------------------- KIP-890 verification
TXN_ID = "txn1"


class _Verifications(AddPartitionsToTxnManager):
    """Kafka's mocked AddPartitionsToTxnManager: records each verification; the test
    answers it through the recorded callback."""

    def __init__(self) -> None:
        super().__init__(1, lambda _: 0, lambda *_: None)
        self.calls: list[tuple[str, int, int, list[TopicPartition], AppendCallback, str]] = []

    def verify_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int,
                           partitions: list[TopicPartition], callback: AppendCallback,
                           operation: str = "defaultError") -> None:
        self.calls.append((transactional_id, producer_id, producer_epoch, partitions, callback,
                           operation))


def _verifying_cell(enabled: bool = True, partitions: int = 1
                    ) -> tuple[Cell, _Verifications, TxnVerifier]:
    cell = Cell()
    cell.create(replicas=(1, 2), leader=1)
    for partition in range(1, partitions):
        cell.publish(PartitionRecord(partition, TOPIC_ID, (1, 2), (1, 2), leader=1,
                                     leader_epoch=0, partition_epoch=0))
    verifications = _Verifications()
    verifier = TxnVerifier(verifications, enabled)
    cell.managers[1].txn_verifier = verifier
    return cell, verifications, verifier


def _txn_produce(cell: Cell, sequence: int, txn_id: str | None = TXN_ID, partition: int = 0,
                 version: int = 11) -> list[ProduceResult]:
    answers: list[ProduceResult] = []
    cell.managers[1].produce(TOPIC, partition, [f"message {sequence}"], -1, answers.append,
                             PID, EPOCH, sequence, transactional=True, transactional_id=txn_id,
                             produce_version=version)
    return answers


def _guard(cell: Cell, partition: int = 0) -> VerificationGuard:
    return cell.managers[1].replicas[TOPIC_ID, partition].log.verification_guard(PID)


def _ongoing(cell: Cell) -> bool:
    return cell.replica(1).log.has_ongoing_transaction(PID)


def test_verification_for_transactional_partitions_only() -> None:
    """testVerificationForTransactionalPartitionsOnly: no transactional id and idempotent
    records: nothing verified; of a request with a transactional and an idempotent
    partition, only the transactional one is verified."""
    cell, verifications, verifier = _verifying_cell(partitions=2)
    answers: list[ProduceResult] = []
    cell.managers[1].produce(TOPIC, 0, ["message"], -1, answers.append, PID, EPOCH, 0)
    assert verifications.calls == [] and _guard(cell) is SENTINEL
    verifier.handle_produce_append(cell.managers[1], TXN_ID, {
        (TOPIC, 0): ProduceBatch(["message"], PID, EPOCH, 1, transactional=True),
        (TOPIC, 1): ProduceBatch(["message"], PID, EPOCH, 0)}, -1, lambda _: None)
    [(txn_id, pid, epoch, partitions, _, _)] = verifications.calls
    assert (txn_id, pid, epoch, partitions) == (TXN_ID, PID, EPOCH, [(TOPIC, 0)])
    assert _guard(cell, 0) is not SENTINEL and _guard(cell, 1) is SENTINEL


def test_transaction_verification_flow() -> None:
    """testTransactionVerificationFlow: a refused verification writes nothing and keeps
    the guard; the next produce verifies again with the same guard, and once verified the
    batch is written, the transaction is ongoing and the guard is gone."""
    cell, verifications, _ = _verifying_cell()
    result = _txn_produce(cell, 6)
    [(txn_id, pid, epoch, partitions, answer, _)] = verifications.calls
    assert (txn_id, pid, epoch, partitions) == (TXN_ID, PID, EPOCH, [(TOPIC, 0)])
    guard = _guard(cell)
    assert guard is not SENTINEL and result == []
    answer({(TOPIC, 0): "INVALID_TXN_STATE"})
    assert [r.error for r in result] == ["INVALID_TXN_STATE"]
    assert _guard(cell) is guard and cell.replica(1).log.end_offset == 0

    result = _txn_produce(cell, 6)
    assert len(verifications.calls) == 2 and _guard(cell) is guard
    verifications.calls[1][4]({})
    assert _guard(cell) is SENTINEL and _ongoing(cell)
    assert cell.replica(1).log.end_offset == 1


def test_transaction_verification_blocks_out_of_order_sequence() -> None:
    """testTransactionVerificationBlocksOutOfOrderSequence: after sequence 6 failed its
    verification, sequence 7 verifies but is OUT_OF_ORDER_SEQUENCE_NUMBER (6 must come
    first) and the guard stays."""
    cell, verifications, _ = _verifying_cell()
    result = _txn_produce(cell, 6)
    guard = _guard(cell)
    verifications.calls[0][4]({(TOPIC, 0): "INVALID_PRODUCER_ID_MAPPING"})
    assert [r.error for r in result] == ["INVALID_PRODUCER_ID_MAPPING"]
    result = _txn_produce(cell, 7)
    assert len(verifications.calls) == 2 and _guard(cell) is guard
    verifications.calls[1][4]({})
    assert [r.error for r in result] == ["OUT_OF_ORDER_SEQUENCE_NUMBER"]
    assert _guard(cell) is guard and cell.replica(1).log.end_offset == 0


def test_transaction_verification_guard_on_multiple_partitions() -> None:
    """testTransactionVerificationGuardOnMultiplePartitions: one request, two partitions,
    both verified: both written."""
    cell, verifications, verifier = _verifying_cell(partitions=2)
    results: list[dict[TopicPartition, ProduceResult]] = []
    batch = ProduceBatch(["message 0"], PID, EPOCH, 0, transactional=True)
    verifier.handle_produce_append(cell.managers[1], TXN_ID, {(TOPIC, 0): batch,
                                                              (TOPIC, 1): batch}, 1,
                                   results.append)
    [(_, _, _, partitions, answer, _)] = verifications.calls
    assert partitions == [(TOPIC, 0), (TOPIC, 1)]
    answer({})
    [result] = results
    assert {tp: r.error for tp, r in result.items()} == {(TOPIC, 0): "NONE", (TOPIC, 1): "NONE"}


def test_exception_when_unverified_transaction_has_multiple_producer_ids() -> None:
    """testExceptionWhenUnverifiedTransactionHasMultipleProducerIds: refused before any
    verification."""
    cell, verifications, verifier = _verifying_cell(partitions=2)
    with pytest.raises(InvalidPidMapping):
        verifier.handle_produce_append(cell.managers[1], TXN_ID, {
            (TOPIC, 0): ProduceBatch(["m"], PID, EPOCH, 0, transactional=True),
            (TOPIC, 1): ProduceBatch(["m"], PID + 1, EPOCH, 0, transactional=True)},
            -1, lambda _: None)
    assert verifications.calls == []


def test_transaction_verification_when_not_leader() -> None:
    """testTransactionVerificationWhenNotLeader: NOT_LEADER_OR_FOLLOWER, nothing verified
    (here the broker hosts a follower)."""
    cell, verifications, verifier = _verifying_cell()
    cell.managers[2].txn_verifier = verifier
    answers: list[ProduceResult] = []
    cell.managers[2].produce(TOPIC, 0, ["m"], -1, answers.append, PID, EPOCH, 6,
                             transactional=True, transactional_id=TXN_ID)
    assert [a.error for a in answers] == ["NOT_LEADER_OR_FOLLOWER"]
    assert verifications.calls == []


def test_disabled_transaction_verification() -> None:
    """testDisabledTransactionVerification: with verification off the batch is written
    without asking; turned on dynamically, the next batch of the open transaction is not
    verified either."""
    cell, verifications, _ = _verifying_cell(enabled=False)
    _txn_produce(cell, 0)
    assert cell.replica(1).log.end_offset == 1 and _guard(cell) is SENTINEL
    assert verifications.calls == []
    cell.publish(ConfigRecord(BROKER_RESOURCE, "", TRANSACTION_PARTITION_VERIFICATION_ENABLE,
                              "true"))
    _txn_produce(cell, 1)
    assert verifications.calls == [] and _guard(cell) is SENTINEL and _ongoing(cell)
    assert cell.replica(1).log.end_offset == 2


def test_transaction_verification_dynamic_disablement() -> None:
    """testTransactionVerificationDynamicDisablement: verification turned off while one is
    under way; its refusal still refuses, and the next produce is written unverified,
    which clears the guard."""
    cell, verifications, _ = _verifying_cell()
    result = _txn_produce(cell, 6)
    guard = _guard(cell)
    cell.publish(ConfigRecord(BROKER_RESOURCE, "1", TRANSACTION_PARTITION_VERIFICATION_ENABLE,
                              "false"))
    verifications.calls[0][4]({(TOPIC, 0): "INVALID_TXN_STATE"})
    assert [r.error for r in result] == ["INVALID_TXN_STATE"] and _guard(cell) is guard
    _txn_produce(cell, 6)
    assert len(verifications.calls) == 1
    assert _guard(cell) is SENTINEL and _ongoing(cell)


@pytest.mark.parametrize("error", ["NOT_COORDINATOR", "CONCURRENT_TRANSACTIONS",
                                   "NETWORK_EXCEPTION", "COORDINATOR_LOAD_IN_PROGRESS",
                                   "COORDINATOR_NOT_AVAILABLE"])
def test_verification_error_conversions(error: str) -> None:
    """testVerificationErrorConversions: a coordinator that cannot answer is
    NOT_ENOUGH_REPLICAS for the producer (retriable for every client)."""
    cell, verifications, _ = _verifying_cell()
    result = _txn_produce(cell, 0)
    verifications.calls[0][4]({(TOPIC, 0): error})
    assert [r.error for r in result] == ["NOT_ENOUGH_REPLICAS"]
    assert cell.replica(1).log.end_offset == 0


def test_a_marker_between_verification_and_append_refuses_the_batch() -> None:
    """The guard (kraftsim's own case of UnifiedLog's append check): the coordinator said
    yes, but an ABORT marker reached the partition before the verified batch: the marker
    cleared the guard, so the batch is INVALID_TXN_STATE and opens no transaction."""
    cell, verifications, _ = _verifying_cell()
    result = _txn_produce(cell, 0)
    markers: list[ProduceResult] = []
    cell.managers[1].write_txn_marker(TOPIC, 0, PID, EPOCH, False, 0, markers.append)
    assert _guard(cell) is SENTINEL
    verifications.calls[0][4]({})
    assert [r.error for r in result] == ["INVALID_TXN_STATE"]
    assert not _ongoing(cell) and cell.replica(1).log.end_offset == 1  # the marker only


def test_a_late_yes_from_the_previous_transaction_cannot_pass_the_new_guard() -> None:
    """The ABA case Kafka's unique guards close: a verification of transaction 1 is under
    way, its ABORT marker lands, transaction 2's first batch starts a verification with a
    new guard, and then the coordinator's (stale) yes for transaction 1 arrives: its batch
    is INVALID_TXN_STATE, nothing is written."""
    cell, verifications, _ = _verifying_cell()
    first = _txn_produce(cell, 0)
    old = _guard(cell)
    markers: list[ProduceResult] = []
    cell.managers[1].write_txn_marker(TOPIC, 0, PID, EPOCH, False, 0, markers.append)
    _txn_produce(cell, 0)  # transaction 2's first batch
    assert _guard(cell) is not SENTINEL and _guard(cell) is not old
    verifications.calls[0][4]({})  # the late yes for transaction 1
    assert [r.error for r in first] == ["INVALID_TXN_STATE"]
    assert not _ongoing(cell) and cell.replica(1).log.end_offset == 1  # the marker only


@pytest.mark.parametrize(("version", "error"), [(10, "INVALID_TXN_STATE"),
                                                (11, "TRANSACTION_ABORTABLE")])
def test_a_partition_not_in_the_transaction_by_produce_version(version: int,
                                                               error: str) -> None:
    """The manager's operation follows the Produce version: up to v10 Kafka's
    ``defaultError`` (the coordinator's TRANSACTION_ABORTABLE is told as
    INVALID_TXN_STATE), from v11 ``genericError`` (passed through)."""
    cell = Cell()
    cell.create(replicas=(1, 2), leader=1)
    cell.managers[1].txn_verifier = TxnVerifier(AddPartitionsToTxnManager(
        1, lambda _: 3, lambda node, txns, answer: answer(
            {t.transactional_id: dict.fromkeys(t.partitions, "TRANSACTION_ABORTABLE")
             for t in txns})))
    assert [r.error for r in _txn_produce(cell, 0, version=version)] == [error]
    assert cell.replica(1).log.end_offset == 0


def test_a_broker_that_stops_fails_the_produces_it_is_verifying() -> None:
    """kraftsim's own: the leader stops while it waits for the coordinator: the produce
    fails as a lost connection (NETWORK_EXCEPTION), as the produces waiting for the HW do."""
    cell = Cell()
    cell.create(replicas=(1, 2), leader=1)
    cell.managers[1].txn_verifier = TxnVerifier(AddPartitionsToTxnManager(
        1, lambda _: 3, lambda node, txns, answer: None))
    result = _txn_produce(cell, 0)
    assert result == []
    cell.managers[1].close(cell.now)
    assert [r.error for r in result] == ["NETWORK_EXCEPTION"]
    assert cell.replica(1).log.end_offset == 0
