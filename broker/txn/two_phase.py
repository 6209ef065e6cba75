"""KIP-939 two-phase commit and the KIP-890 (TV2) EndTxn at the transaction coordinator.

KIP-939 lets a transaction take part in an external two-phase commit: the
client prepares it (flushes, keeps it Ongoing) and records its
``PreparedTxnState`` (producer id and epoch) in the external transaction
manager; after a crash the restarted client calls InitProducerId with
``KeepPreparedTxn`` and finds the transaction still there, to be committed
or aborted as the external decision says.

So a transactional id carries two identities while a kept transaction is
open (the KIP's "dual identity"):

- ``ProducerId``/``ProducerEpoch``: the ongoing transaction's, under which
  its records were written; the markers go out under this producer id;
- ``NextProducerId``/``NextProducerEpoch``: the identity the restarted
  client holds. Every InitProducerId(KeepPreparedTxn) bumps it, fencing
  earlier incarnations; at epoch 32,766 it rotates to a new producer id with
  epoch 0 (the KIP's walkthrough: "Eventually, NextProducerEpoch may
  overflow, in which case we can allocate a new NextProducerId").

EndTxn (TV2, KIP-890 part 2, which KIP-939 builds on) bumps the epoch of the
ongoing identity for its markers and answers the identity of the next
transaction: the client's epoch + 1, or a new producer id at epoch 0 when
the client's epoch is exhausted. ``PrevProducerId`` keeps the producer id the
client used, so a retried EndTxn after a rotation is recognised.

Functions here operate on a :class:`~broker.txn.coordinator.TransactionCoordinator`
and are called from its request handlers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from broker.txn.mutations import TxnMutation
from broker.txn.state import (
    EXHAUSTED_EPOCH,
    MAX_EPOCH,
    TV2,
    TransactionMetadata,
    TransactionState,
)

if TYPE_CHECKING:
    from broker.txn.coordinator import Callback, TransactionCoordinator

S = TransactionState


def kept_identity(meta: TransactionMetadata) -> tuple[int, int] | None:
    """The client's (producer id, epoch) while a kept transaction is open, else None."""
    if meta.state == S.ONGOING and meta.next_producer_epoch >= 0:
        return meta.next_producer_id, meta.next_producer_epoch
    return None


def forget_kept(meta: TransactionMetadata) -> dict[str, Any]:
    """Transit fields that drop the kept identity (the fence / force-terminate path)."""
    if meta.next_producer_epoch < 0:
        return {}
    return {"next_producer_id": -1, "next_producer_epoch": -1}


def complete_identity(meta: TransactionMetadata) -> dict[str, Any]:
    """Transit fields of Complete*: under TV2 the next identity takes over (KIP-890/939)."""
    if meta.client_transaction_version < TV2:
        return {}
    if meta.next_producer_id < 0:
        return {"prev_producer_id": meta.prev_producer_id, "next_producer_epoch": -1}
    return {"producer_id": meta.next_producer_id, "producer_epoch": meta.next_producer_epoch,
            "prev_producer_id": meta.prev_producer_id if meta.prev_producer_id >= 0
            else meta.producer_id,
            "next_producer_id": -1, "next_producer_epoch": -1}


def _bumped(coordinator: TransactionCoordinator, producer_id: int, epoch: int
            ) -> tuple[str, int, int]:
    """The identity after (producer_id, epoch): epoch + 1, or a new producer id at 32,766."""
    if epoch >= EXHAUSTED_EPOCH:
        error, new_pid = coordinator.allocate_pid()
        return error, new_pid, 0
    return "NONE", producer_id, epoch + 1


def keep_prepared(coordinator: TransactionCoordinator, meta: TransactionMetadata, now: int,
                  callback: Callback) -> None:
    """InitProducerId(KeepPreparedTxn) on an Ongoing transaction: keep it, fence the client.

    The ongoing (producer id, epoch) stay; the next identity is bumped from the
    latest one the client held (rotated at epoch exhaustion) and written with
    the transaction; the answer carries both.
    """
    from broker.txn.coordinator import TxnResult

    if TxnMutation.KEEP_PREPARED_FENCES in coordinator.mutations:
        coordinator._fence(meta, now, lambda error: callback(
            TxnResult("CONCURRENT_TRANSACTIONS" if error == "NONE" else error)))
        return
    latest = kept_identity(meta) or (meta.producer_id, meta.producer_epoch)
    error, pid, epoch = _bumped(coordinator, *latest)
    if error != "NONE":
        callback(TxnResult(error))
        return
    transit = meta.transit(S.ONGOING, now, prev_producer_id=meta.prev_producer_id,
                           next_producer_id=pid, next_producer_epoch=epoch,
                           client_transaction_version=TV2)
    coordinator._write(meta, transit, lambda: callback(TxnResult(
        "NONE", pid, epoch, transit.producer_id, transit.producer_epoch)),
        lambda e: callback(TxnResult(e)))


def end_txn(coordinator: TransactionCoordinator, meta: TransactionMetadata, producer_id: int,
            epoch: int, commit: bool, now: int, callback: Callback) -> None:
    """EndTxn under TV2 (reference 1.5), with KIP-939's kept identity.

    Prepare* answers CONCURRENT_TRANSACTIONS to every known producer id (as
    Kafka's PR #21735 does); Complete* and Empty follow Kafka's retry matrix.
    """
    from broker.txn.coordinator import TxnResult

    state = meta.state
    if state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
        known = producer_id in (meta.producer_id, meta.prev_producer_id, meta.next_producer_id)
        callback(TxnResult("INVALID_PRODUCER_ID_MAPPING" if not known
                           else "CONCURRENT_TRANSACTIONS"
                           if (state == S.PREPARE_COMMIT) == commit else "INVALID_TXN_STATE"))
        return
    retry_bump = producer_id == meta.producer_id and meta.producer_epoch == epoch + 1
    retry_overflow = producer_id == meta.prev_producer_id != meta.producer_id and \
        epoch == EXHAUSTED_EPOCH and meta.producer_epoch == 0
    kept = kept_identity(meta)
    if kept is not None:
        if producer_id not in (meta.producer_id, kept[0]):
            callback(TxnResult("INVALID_PRODUCER_ID_MAPPING"))
            return
        valid = (producer_id, epoch) == kept
    else:
        if producer_id != meta.producer_id and not retry_overflow:
            callback(TxnResult("INVALID_PRODUCER_ID_MAPPING"))
            return
        valid = epoch == meta.producer_epoch or (
            state in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT) and (retry_bump or retry_overflow))
    if not valid:
        callback(TxnResult("PRODUCER_FENCED"))
        return
    if meta.pending_state is not None:
        callback(TxnResult("CONCURRENT_TRANSACTIONS"))
        return
    if state == S.ONGOING or (state != S.DEAD and not commit and not (
            retry_bump or retry_overflow)):
        _prepare(coordinator, meta, producer_id, epoch, commit, now, callback)
    elif state in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT) and (retry_bump or retry_overflow) \
            and (state == S.COMPLETE_COMMIT) == commit:
        callback(TxnResult("NONE", meta.producer_id, meta.producer_epoch))  # a retry
    else:
        callback(TxnResult("INVALID_TXN_STATE"))


def _prepare(coordinator: TransactionCoordinator, meta: TransactionMetadata, producer_id: int,
             epoch: int, commit: bool, now: int, callback: Callback) -> None:
    """Ongoing (or an empty abort) -> Prepare*: markers bump the ongoing epoch."""
    from broker.txn.coordinator import TxnResult

    error, next_pid, next_epoch = _bumped(coordinator, producer_id, epoch)
    if error != "NONE":
        callback(TxnResult(error))
        return
    marker_epoch = min(meta.producer_epoch + 1, MAX_EPOCH)
    separate = (next_pid, next_epoch) != (meta.producer_id, marker_epoch)
    transit = meta.transit(
        S.PREPARE_COMMIT if commit else S.PREPARE_ABORT, now, producer_epoch=marker_epoch,
        last_producer_epoch=meta.producer_epoch,
        prev_producer_id=producer_id if producer_id != meta.producer_id
        else meta.prev_producer_id,
        next_producer_id=next_pid if separate else -1,
        next_producer_epoch=next_epoch if separate else -1,
        client_transaction_version=TV2,
        txn_start_timestamp=meta.txn_start_timestamp if meta.state == S.ONGOING else now)

    def on_success() -> None:
        callback(TxnResult("NONE", next_pid, next_epoch))
        coordinator._send_markers(meta, now)

    coordinator._write(meta, transit, on_success, lambda e: callback(TxnResult(e)))
