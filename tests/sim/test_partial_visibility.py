"""Which published images show part of a multi-batch operation (the visibility
experiment's partial-visibility count, and a TxnAtomicVisibility violation when the
operation is a transaction), against a hand-made committed history."""

from __future__ import annotations

from controller import ControllerConfig
from controller.operations import CreateTopics, NewTopic
from metadata.schema import NoOpRecord
from raft import Batch
from sim.cluster import ClusterConfig, KRaftCluster
from sim.invariants.history import CommittedLog
from sim.invariants.transactions import OperationSpan, TransactionInvariants


def _history(*batches: tuple[int, int, int]) -> CommittedLog:
    """Committed batches of (base offset, record count, epoch)."""
    history = CommittedLog()
    for base, count, epoch in batches:
        batch = Batch(base, epoch, tuple(NoOpRecord() for _ in range(count)))
        assert history.observe(batch) is None
    return history


def _partial(invariants: TransactionInvariants, offset: int) -> bool:
    return invariants._span_containing(offset) is not None


def test_a_committed_operation_is_partial_only_strictly_inside() -> None:
    """Batches at 10-13, 14-17, 18-21 of epoch 2: an image at 10..20 shows part of it, one
    at its last offset (21) or later the whole."""
    for transactional in (False, True):
        invariants = TransactionInvariants(_history((0, 10, 1), (10, 4, 2), (14, 4, 2),
                                                    (18, 4, 2), (22, 3, 2)))
        invariants.spans = [OperationSpan(10, 21, 2, transactional, "op")]
        assert [o for o in range(0, 25) if _partial(invariants, o)] == list(range(10, 21))


def test_a_committed_prefix_whose_tail_was_lost_stays_partial_for_good_unless_a_txn() -> None:
    """A failover kept batches 10-13 and 14-17 of epoch 2 and lost the tail (18-21); the new
    leader's epoch 3 wrote 18-24. A non-atomic operation's prefix is visible for good, so
    every later image shows part of it; a transaction's prefix shows only inside the
    committed batches (its Abort follows)."""
    history = _history((0, 10, 1), (10, 4, 2), (14, 4, 2), (18, 7, 3))
    plain = TransactionInvariants(history)
    plain.spans = [OperationSpan(10, 21, 2, False, "op")]
    assert [o for o in range(0, 25) if _partial(plain, o)] == list(range(10, 25))
    txn = TransactionInvariants(history)
    txn.spans = [OperationSpan(10, 21, 2, True, "txn")]
    assert [o for o in range(0, 25) if _partial(txn, o)] == list(range(10, 18))


def test_an_operation_none_of_which_committed_is_never_partial() -> None:
    invariants = TransactionInvariants(_history((0, 10, 1), (10, 12, 3)))
    invariants.spans = [OperationSpan(10, 21, 2, False, "op")]
    assert not any(_partial(invariants, o) for o in range(0, 25))


def test_a_clusters_multi_batch_operations_are_tracked() -> None:
    """An operation the cluster submits that spans several batches is tracked with its
    offsets, writer epoch and mode, for the partial-visibility count."""
    cluster = KRaftCluster(ClusterConfig(seed=3, controllers=3, brokers=3,
                                         controller=ControllerConfig(max_records_per_batch=10)))
    cluster.start()
    handle = cluster.submit(CreateTopics((NewTopic("big", 30, 3),)))
    assert cluster.wait(handle) and handle.batch_count > 1
    assert cluster.txn_invariants.spans == [OperationSpan(
        handle.first_offset, handle.last_offset, 1, True, "CreateTopics(big: 30 partitions)")]
    assert cluster.txn_invariants.partial_observations == 0 and cluster.sim.violation is None
    # every broker's loader publishes to the checker
    assert {pub.node_id for pub in cluster.txn_invariants.on_publish} == \
        set(cluster.config.broker_ids)
