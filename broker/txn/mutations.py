"""Deliberate transaction bugs, switched on only by the mutation tests."""

from __future__ import annotations

from enum import StrEnum


class TxnMutation(StrEnum):
    """A deliberately broken coordinator or data-partition behaviour."""

    MARKERS_BEFORE_PREPARE_DURABLE = "markers-before-prepare-durable"
    """EndTxn sends the markers (and answers) as soon as PrepareCommit/PrepareAbort is
    pending, before the ISR has the record: a coordinator failover can then abort a
    transaction some partitions already committed."""
    LSO_IGNORES_OPEN_TXN = "lso-ignores-open-txn"
    """The last stable offset is the high watermark, open transactions or not."""
    EPOCH_NOT_BUMPED_ON_FENCE = "epoch-not-bumped-on-fence"
    """InitProducerId hands out the current epoch instead of a bumped one, so the old
    producer instance (the zombie) is not fenced."""
    TWO_PC_TIMEOUT_KEPT = "2pc-timeout-kept"
    """InitProducerId(Enable2Pc) stores transaction.max.timeout.ms instead of no timeout,
    so the coordinator aborts a prepared 2PC transaction on timeout (KIP-939 says never)."""
    KEEP_PREPARED_FENCES = "keep-prepared-fences"
    """InitProducerId(KeepPreparedTxn) fences and aborts the ongoing transaction like a
    plain InitProducerId: a restarted 2PC client loses its prepared transaction."""
    OFFSETS_OUTSIDE_TXN = "offsets-outside-txn"
    """TxnOffsetCommit writes the offsets as plain (non-transactional) records, so they are
    committed at once even when the transaction that consumed the input aborts: the
    restarted loop skips the input whose output was aborted."""


TWO_PC_MUTATIONS = frozenset({TxnMutation.TWO_PC_TIMEOUT_KEPT,
                              TxnMutation.KEEP_PREPARED_FENCES})
"""The mutations only a world with KIP-939 two-phase-commit producers can catch."""
