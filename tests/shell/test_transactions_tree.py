"""What ``/transactions/<id>/`` shows for one ``__transaction_state`` record: a tombstone
says it expired, an empty partition list reads ``(none)``, the record's place names the
partition, offset and leader."""

from __future__ import annotations

from broker.txn.state import TransactionLogRecord, TransactionLogValue, TransactionState
from shell.transactions_tree import _id_dir
from shell.tree import Dir, File


def _cat(node: object, name: str) -> str:
    assert isinstance(node, Dir)
    child = node.child(name)
    assert isinstance(child, File)
    return child.text()


def test_a_tombstone_reads_as_expired() -> None:
    assert _cat(_id_dir(0, 5, 1, TransactionLogRecord("tid", None)), "state") == \
        "(tombstone: expired)"


def test_an_empty_transaction_lists_no_partitions_as_none() -> None:
    value = TransactionLogValue(7, 2, 60_000, int(TransactionState.EMPTY), [], 10, -1)
    node = _id_dir(3, 42, 2, TransactionLogRecord("tid", value))
    assert _cat(node, "state") == "Empty"
    assert _cat(node, "topicPartitions") == "(none)"
    assert (_cat(node, "producerId"), _cat(node, "producerEpoch")) == ("7", "2")
    assert _cat(node, "record") == "__transaction_state-3 offset 42 (leader broker 2)"
    with_two = TransactionLogValue(7, 2, 60_000, int(TransactionState.ONGOING),
                                   [("a", 0), ("b", 1)], 10, 5)
    assert _cat(_id_dir(3, 43, 2, TransactionLogRecord("tid", with_two)),
                "topicPartitions") == "a-0, b-1"
