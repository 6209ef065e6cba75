"""The idempotent and transactional cases of Kafka's ``ReplicaManagerTest``, end to end.

Brokers of a :class:`~tests.broker.replica_cell.Cell` take produce requests
and WriteTxnMarkers through :class:`~broker.replica_manager.ReplicaManager`
and replicate to each other; a read_committed consumer reads the leader's log
with :func:`~broker.txn.fetch.fetch_log` (kraftsim's consumer fetch at the
replica manager is read_uncommitted only) and filters with
:func:`~broker.txn.fetch.filter_committed`. Kafka's "fetch as follower to
advance the high watermark" is a step of the cell.

Left out: transaction verification (KIP-890 AddPartitionsToTxn verify-only
before an append), DescribeProducers, delayed consumer fetches (minBytes
and maxWaitMs of a consumer), the log start offset in produce answers, and
metrics of producer ids and late transactions.

Not ported either: Kafka's ``kafka.server.AddPartitionsToTxnManagerTest`` (testAddTxnData,
testGenerateRequests, testTransactionCoordinatorResolution,
testAddPartitionsToTxnHandlerErrorHandling, testAddPartitionsToTxnManagerMetrics). Its
AddPartitionsToTxnManager is the broker side of KIP-890's verification: before appending
a transactional produce, the partition leader asks the transaction coordinator (found
through the ``__transaction_state`` leaders of its metadata cache) whether the partition
is in the producer's transaction, batching the checks by coordinator node. kraftsim's
leaders append a transactional produce without that check (the producer's
AddPartitionsToTxn to the coordinator, ``broker/txn/coordinator.py``, is the only
registration), so there is no manager to test; its metrics are not modelled either.
"""

from __future__ import annotations

from broker.replica_manager import ProduceResult
from broker.txn.fetch import READ_COMMITTED, fetch_log, filter_committed
from tests.broker.replica_cell import TOPIC, Cell

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
