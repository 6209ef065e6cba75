"""``/transactions``: the ``__transaction_state`` content, one directory per transactional id.

Each ``/transactions/<transactional.id>/`` shows the latest TransactionLogValue
written for the id below the high watermark of its ``__transaction_state``
partition leader (what a coordinator taking over would load)::

    state                  Empty, Ongoing, PrepareCommit, ... (TransactionStatus)
    producerId             ProducerId
    producerEpoch          ProducerEpoch
    lastProducerEpoch      LastProducerEpoch (kraftsim keeps it; see docs/transactions.md)
    previousProducerId     PreviousProducerId
    nextProducerId         NextProducerId
    transactionTimeoutMs   TransactionTimeoutMs
    topicPartitions        TransactionPartitions, as topic-partition names
    transactionStartTimeMs TransactionStartTimestampMs
    lastUpdateTimeMs       TransactionLastUpdateTimestampMs
    record                 where it is: partition, offset, leader broker (coordinator)

With ``--format json`` each file is its value, ``record`` Kafka's field names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from broker.txn.coordinator import TRANSACTION_STATE_TOPIC
from broker.txn.state import TransactionLogRecord
from shell.tree import Dir, File, Node, mapped_dir, static_dir, text_file
from shell.txn_lab import state_name

if TYPE_CHECKING:
    from shell.lab import Lab


def _id_dir(partition: int, offset: int, leader: int, record: TransactionLogRecord) -> Node:
    value = record.Value
    if value is None:
        return static_dir({"state": text_file("(tombstone: expired)")})
    names = [f"{t}-{p}" for t, p in value.TransactionPartitions]
    where: dict[str, Any] = {"topic": TRANSACTION_STATE_TOPIC, "partition": partition,
                             "offset": offset, "leader": leader,
                             "value": msgspec.to_builtins(value)}
    return static_dir({
        "state": text_file(state_name(value.TransactionStatus)),
        "producerId": text_file(value.ProducerId),
        "producerEpoch": text_file(value.ProducerEpoch),
        "lastProducerEpoch": text_file(value.LastProducerEpoch),
        "previousProducerId": text_file(value.PreviousProducerId),
        "nextProducerId": text_file(value.NextProducerId),
        "transactionTimeoutMs": text_file(value.TransactionTimeoutMs),
        "topicPartitions": File(lambda: ", ".join(names) if names else "(none)",
                                lambda: names),
        "transactionStartTimeMs": text_file(value.TransactionStartTimestampMs),
        "lastUpdateTimeMs": text_file(value.TransactionLastUpdateTimestampMs),
        "record": File(lambda: f"{TRANSACTION_STATE_TOPIC}-{partition} offset {offset} "
                               f"(leader broker {leader})", lambda: where),
    })


def transactions_dir(lab: Lab) -> Dir:
    """``/transactions`` of a lab whose transaction coordinators run."""
    txns = lab.txn.txns

    def records() -> dict[str, tuple[int, int, int, TransactionLogRecord]]:
        return {} if txns is None else lab.txn.records()

    def build(name: str) -> Node | None:
        found = records().get(name)
        return None if found is None else _id_dir(*found)

    return mapped_dir(lambda: records().keys(), build)
