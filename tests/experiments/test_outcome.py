"""What the failover experiment reports of an operation: how many of its batches
committed in its epoch, its outcome, and whether an acknowledged operation was lost
(the ``acked_lost`` column), against a real cluster whose history a test then edits."""

from __future__ import annotations

import copy

import msgspec

from controller import ControllerConfig, WriteMode
from controller.handle import OperationHandle, OperationStatus
from controller.operations import CreateTopics, NewTopic
from experiments.outcome import acked_lost, committed_batches, operation_outcome
from sim.cluster import ClusterConfig, KRaftCluster
from sim.invariants.reference import Transaction


def _created(mode: WriteMode = WriteMode.NON_ATOMIC
             ) -> tuple[KRaftCluster, OperationHandle, int]:
    """A cluster that committed a CreateTopics of 30 partitions written in ``mode`` in
    batches of 10 records, settled; the handle and the epoch it was written in."""
    cluster = KRaftCluster(ClusterConfig(seed=11, controllers=3, brokers=2, controller=
                                         ControllerConfig(max_records_per_batch=10,
                                                          write_mode=mode)))
    cluster.start()
    handle = cluster.submit(CreateTopics((NewTopic("t", 30, 2),)))
    assert cluster.wait(handle) and cluster.run_until(cluster.idle, 30_000)
    active = cluster.active_controller()
    assert active is not None and handle.batch_count > 2
    return cluster, handle, active.claimed_epoch or 0


def test_a_committed_and_settled_operation_is_not_lost() -> None:
    for mode in (WriteMode.NON_ATOMIC, WriteMode.TRANSACTIONAL):  # atomic: one batch at most
        cluster, handle, epoch = _created(mode)
        assert handle.transactional is (mode is WriteMode.TRANSACTIONAL)
        assert committed_batches(cluster, handle, epoch) == handle.batch_count
        assert operation_outcome(cluster, handle, epoch) == ("committed", 0)
        assert acked_lost(cluster, handle, epoch, "t", 30, settled=True) == 0


def test_batches_count_only_in_a_row_and_in_their_epoch() -> None:
    cluster, handle, epoch = _created()
    assert committed_batches(cluster, handle, epoch + 1) == 0
    second = cluster.history.batch_containing(handle.first_offset)
    assert second is not None
    history = copy.copy(cluster.history)
    history.batches = dict(cluster.history.batches)
    later = history.batches[second.end_offset]
    history.batches[second.end_offset] = msgspec.structs.replace(later, epoch=epoch + 1)
    cluster.history = history  # the second batch came from another leader
    assert committed_batches(cluster, handle, epoch) == 1
    assert operation_outcome(cluster, handle, epoch) == ("partial", 0)
    assert acked_lost(cluster, handle, epoch, "t", 30, settled=False) == 1


def test_a_topic_missing_or_short_on_a_node_once_settled_is_lost() -> None:
    cluster, handle, epoch = _created()
    assert acked_lost(cluster, handle, epoch, "t", 31, settled=True) == 1  # one too few
    assert acked_lost(cluster, handle, epoch, "u", 30, settled=True) == 1  # no such topic
    assert acked_lost(cluster, handle, epoch, "u", 30, settled=False) == 0  # not looked at
    for broker in cluster.config.broker_ids:  # the brokers' images count too
        loader = cluster.loader(broker)
        assert loader is not None and loader.published is not None
    cluster.sim.crash(cluster.config.broker_ids[1])  # a stopped broker is not looked at
    assert cluster.loader(cluster.config.broker_ids[1]) is None
    assert acked_lost(cluster, handle, epoch, "t", 30, settled=True) == 0
    broker = cluster.config.broker_ids[0]
    loader = cluster.loader(broker)
    assert loader is not None and loader.published is not None
    loader.published = msgspec.structs.replace(
        loader.published, topics_by_name=loader.published.topics_by_name.delete("t"))
    assert acked_lost(cluster, handle, epoch, "t", 30, settled=True) == 1


def test_only_an_acknowledged_written_operation_can_be_lost() -> None:
    cluster, handle, epoch = _created()
    handle.status = OperationStatus.FAILED
    assert acked_lost(cluster, handle, epoch, "u", 30, settled=True) == 0
    refused = OperationHandle(99, "refused", 3000, 0, "non-atomic")
    refused.status = OperationStatus.COMMITTED  # (an operation without records)
    assert refused.first_offset == -1
    assert acked_lost(cluster, refused, epoch, "u", 30, settled=True) == 0
    assert operation_outcome(cluster, refused, epoch) == ("refused", 0)


def test_a_transaction_outcome_is_its_own_and_nothing_committed_is_dropped() -> None:
    """The outcome of a transactional operation is that of the transaction begun at its
    first offset, whatever came after it; an operation none of whose batches committed
    in its epoch was dropped."""
    cluster, handle, epoch = _created(WriteMode.TRANSACTIONAL)
    reference = cluster.txn_invariants.reference
    reference.transactions.append(Transaction(handle.last_offset + 5, "later", None,
                                              "aborted", 7))
    assert operation_outcome(cluster, handle, epoch) == ("committed", 0)
    mine = next(t for t in reference.transactions if t.begin_offset == handle.first_offset)
    mine.outcome, mine.records = "aborted", handle.record_count
    assert operation_outcome(cluster, handle, epoch) == ("aborted", handle.record_count)
    unwritten = OperationHandle(98, "lost", 3000, 0, "non-atomic")
    unwritten.first_offset = unwritten.last_offset = cluster.history.end + 10
    unwritten.batch_count = 1
    assert operation_outcome(cluster, unwritten, epoch) == ("dropped", 0)
