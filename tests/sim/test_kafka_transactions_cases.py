"""Cases of Kafka's TransactionsTest, in kraftsim's terms.

Kafka class followed: ``TransactionsTest``
(``core/src/test/scala/integration/kafka/api``): transactional producers and
read_committed / read_uncommitted consumers against a real cluster. Here the
cluster is kraftsim's simulated one (three brokers, ``topic1`` and ``topic2``
with four partitions, three replicas and min.insync.replicas 2, as Kafka's
setUp), with :class:`~sim.txn_cluster.TxnCluster` coordinators configured as
Kafka's ``overridingProps`` (three ``__transaction_state`` partitions, two
replicas, min ISR 2, timed-out transactions looked for every 200 ms). The
producers are :class:`sim.txn_clients.TransactionalProducer` (and
:class:`sim.eos_clients.EosProducer` for ``sendOffsetsToTransaction``); a
consumer is a fetch from the partition leader at its isolation level
(``broker.txn.fetch``: read_committed stops at the last stable offset and drops
aborted records). Kafka's ``willBeCommitted`` flag in each record is checked
against the producer's committed/aborted transactions (the record values name
the transaction). The producer's Java exceptions are its fatal error or the
error that made the transaction abortable: ProducerFencedException is
PRODUCER_FENCED, InvalidProducerEpochException INVALID_PRODUCER_EPOCH, Java's
IllegalStateException ``TxnClientError('ILLEGAL_STATE')``.

kraftsim's producer speaks transaction version 1 (docs/transactions.md): its
calls do not block (there is no max.block.ms) and are run in order, one request
at a time.

Not ported:

- testOffsetMetadataInSendOffsetsToTransaction: offset metadata strings are not
  modelled.
- the group-metadata flavour of testSendOffsetsWithGroupMetadata: kraftsim's
  TxnOffsetCommit carries no generation or member id (groups are not modelled), so it
  runs the same copy loop as testSendOffsetsWithGroupId (on another seed).
- testInitTransactionsTimeout, testSendOffsetsToTransactionTimeout,
  testCommitTransactionTimeout, testAbortTransactionTimeout: max.block.ms (calls do
  not block in kraftsim).
- the remote-storage checks inside testBasicTransactions and
  testDelayedFetchIncludesAbortedTransaction (tiered storage is not modelled); the
  transactional parts are ported.
- testDelayedFetchIncludesAbortedTransaction's purgatory (fetch.min.bytes): a fetch is
  answered at once; the aborted-transaction list it must carry is checked.
- the timestamp lookups (offsetsForTimes) of
  testReadCommittedConsumerShouldNotSeeUndecidedData: records carry no timestamps.
"""

from __future__ import annotations

import pytest

from broker.txn.coordinator import (
    TRANSACTION_STATE_TOPIC,
    TransactionCoordinator,
    TxnCoordinatorConfig,
)
from broker.txn.fetch import READ_COMMITTED, READ_UNCOMMITTED, consume_fetch, fetch_log
from controller.operations import CreateTopics, IncrementalAlterConfigs, NewTopic
from controller.operations.configs import ConfigChange
from metadata.delta import TOPIC_RESOURCE
from sim.cluster import ClusterConfig, KRaftCluster
from sim.eos_clients import EosProducer
from sim.eos_world import EosSettings, EosWorld, eos_monitors
from sim.group_cluster import GroupCluster
from sim.txn_clients import TransactionalProducer, TxnClientError, TxnProducerState
from sim.txn_cluster import TxnCluster

P = TxnProducerState
TOPIC1 = "topic1"
TOPIC2 = "topic2"
NUM_PARTITIONS = 4
CONFIG = TxnCoordinatorConfig.from_kafka({
    "transaction.state.log.num.partitions": "3",
    "transaction.state.log.replication.factor": "2",
    "transaction.state.log.min.isr": "2",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "200",
})
"""Kafka's overridingProps, as far as the transaction coordinator goes."""


def create_topic(txns: TxnCluster, topic: str, partitions: int, rf: int,
                 min_isr: int | None = 2) -> None:
    c = txns.cluster
    assert c.wait(c.submit(CreateTopics((NewTopic(topic, partitions, rf),))))
    if min_isr is not None:
        assert c.wait(c.submit(IncrementalAlterConfigs(
            TOPIC_RESOURCE, topic, (ConfigChange("min.insync.replicas", str(min_isr)),))))


def world(seed: int = 1) -> TxnCluster:
    """Kafka's setUp: three brokers, topic1 and topic2 (4 partitions, RF 3, min ISR 2)."""
    cluster = KRaftCluster(ClusterConfig(seed=seed, controllers=1, brokers=3))
    cluster.start()
    txns = TxnCluster(cluster, CONFIG)
    for topic in (TOPIC1, TOPIC2):
        create_topic(txns, topic, NUM_PARTITIONS, 3)
    assert txns.start()
    cluster.sim.run_for(1_000)
    return txns


def settle(txns: TxnCluster, *producers: TransactionalProducer, ms: int = 60_000) -> None:
    """Run until every producer is idle, then let the markers land."""
    assert txns.cluster.sim.run_until_true(lambda: all(p.idle for p in producers), ms)
    txns.cluster.sim.run_for(1_000)


def consume(txns: TxnCluster, isolation: str, *tps: tuple[str, int]) -> list[str]:
    """What a consumer at ``isolation`` assigned ``tps`` reads from offset 0, in order."""
    values: list[str] = []
    for topic, partition in tps:
        c = txns.cluster
        manager = c.replica_manager(c.partition_leader(topic, partition))
        assert manager is not None
        replica = manager.leader_replica(topic, partition)
        assert not isinstance(replica, str)
        offset = 0
        while True:
            result = fetch_log(replica.log, offset, 500, isolation)
            consumed = consume_fetch(result, offset, isolation)
            if consumed.next_offset == offset:
                break
            values += [e.value for e in consumed.records]
            offset = consumed.next_offset
    return values


def all_tps(*topics: str) -> list[tuple[str, int]]:
    return [(t, p) for t in topics for p in range(NUM_PARTITIONS)]


def committed(producer: TransactionalProducer, value: str) -> bool:
    """Kafka's assertCommittedAndGetValue: was the record's transaction committed?"""
    txn_id, instance, number, _ = value.split("/")
    assert (txn_id, instance) == (producer.transactional_id, producer.instance)
    return int(number) in producer.committed


def init(txns: TxnCluster, producer: TransactionalProducer) -> None:
    producer.init_transactions()
    settle(txns, producer)
    assert producer.state == P.READY, producer.fatal


def test_basic_transactions() -> None:
    """testBasicTransactions: an aborted transaction then a committed one on topic1-1 and
    topic2-2; read_committed sees the two committed records, read_uncommitted all four."""
    txns = world()
    producer = TransactionalProducer(txns, "transactional-producer", "p0")
    init(txns, producer)
    producer.begin_transaction()
    producer.send(TOPIC2, 2, 1)
    producer.send(TOPIC1, 1, 1)
    settle(txns, producer)
    assert consume(txns, READ_COMMITTED, (TOPIC1, 1), (TOPIC2, 2)) == []
    producer.end_transaction(commit=False)
    settle(txns, producer)
    producer.begin_transaction()
    producer.send(TOPIC1, 1, 1)
    producer.send(TOPIC2, 2, 1)
    producer.end_transaction(commit=True)
    settle(txns, producer)
    records = consume(txns, READ_COMMITTED, *all_tps(TOPIC1, TOPIC2))
    assert len(records) == 2 and all(committed(producer, v) for v in records)
    everything = consume(txns, READ_UNCOMMITTED, *all_tps(TOPIC1, TOPIC2))
    assert len(everything) == 4
    assert sorted(committed(producer, v) for v in everything) == [False, False, True, True]


def test_read_committed_consumer_should_not_see_undecided_data() -> None:
    """testReadCommittedConsumerShouldNotSeeUndecidedData: producer2 writes one record to
    topic1-0 and topic2-0, producer1 writes after it and leaves its transaction open,
    producer2 writes again and commits. read_uncommitted sees all eight; read_committed
    only producer2's first records: the last stable offset (its end position) stays at
    1, below producer1's open transaction."""
    txns = world()
    producer1 = TransactionalProducer(txns, "transactional-producer", "p1")
    producer2 = TransactionalProducer(txns, "other", "p2")
    init(txns, producer1)
    init(txns, producer2)
    producer1.begin_transaction()
    producer2.begin_transaction()
    producer2.send(TOPIC1, 0, 1)
    producer2.send(TOPIC2, 0, 1)
    settle(txns, producer2)
    producer1.send(TOPIC1, 0, 2)
    producer1.send(TOPIC2, 0, 2)
    settle(txns, producer1)
    producer2.send(TOPIC1, 0, 1)
    producer2.send(TOPIC2, 0, 1)
    producer2.end_transaction(commit=True)
    settle(txns, producer2)
    tps = [(TOPIC1, 0), (TOPIC2, 0)]
    assert len(consume(txns, READ_UNCOMMITTED, *tps)) == 8
    visible = consume(txns, READ_COMMITTED, *tps)
    assert visible == ["other/p2/1/0", "other/p2/1/0"]
    for topic, partition in tps:  # seekToEnd of read_committed: the last stable offset
        c = txns.cluster
        manager = c.replica_manager(c.partition_leader(topic, partition))
        assert manager is not None
        replica = manager.leader_replica(topic, partition)
        assert not isinstance(replica, str)
        assert fetch_log(replica.log, 0, 500, READ_COMMITTED).last_stable_offset == 1


def test_delayed_fetch_includes_aborted_transaction() -> None:
    """testDelayedFetchIncludesAbortedTransaction: producer2's records at offsets 0 and 3
    around producer1's two; producer1 aborts, producer2 commits. read_committed returns
    offsets 0 and 3 only: the fetch names producer1's aborted transaction."""
    txns = world()
    producer1 = TransactionalProducer(txns, "transactional-producer", "p1")
    producer2 = TransactionalProducer(txns, "other", "p2")
    init(txns, producer1)
    init(txns, producer2)
    producer1.begin_transaction()
    producer2.begin_transaction()
    producer2.send(TOPIC1, 0, 1)
    settle(txns, producer2)
    producer1.send(TOPIC1, 0, 2)
    settle(txns, producer1)
    producer2.send(TOPIC1, 0, 1)
    settle(txns, producer2)
    producer1.end_transaction(commit=False)
    settle(txns, producer1)
    producer2.end_transaction(commit=True)
    settle(txns, producer2)
    c = txns.cluster
    manager = c.replica_manager(c.partition_leader(TOPIC1, 0))
    assert manager is not None
    replica = manager.leader_replica(TOPIC1, 0)
    assert not isinstance(replica, str)
    result = fetch_log(replica.log, 0, 500, READ_COMMITTED)
    assert result.aborted_transactions == ((producer1.producer_id, 1),)
    records = consume_fetch(result, 0, READ_COMMITTED).records
    assert [(e.offset, e.value) for e in records] == [(0, "other/p2/1/0"), (3, "other/p2/1/1")]


def _fenced_by_second_instance(txns: TxnCluster, flush_first: bool
                               ) -> tuple[TransactionalProducer, TransactionalProducer]:
    """producer1 writes to topic1 and topic2 in a transaction; producer2 (same id)
    initializes (fencing producer1 and aborting its transaction) and writes its own."""
    producer1 = TransactionalProducer(txns, "transactional-producer", "p1")
    producer2 = TransactionalProducer(txns, "transactional-producer", "p2")
    init(txns, producer1)
    producer1.begin_transaction()
    producer1.send(TOPIC1, 0, 1)
    producer1.send(TOPIC2, 0, 1)
    if flush_first:
        settle(txns, producer1)
    init(txns, producer2)
    producer2.begin_transaction()
    producer2.send(TOPIC1, 1, 1)
    producer2.send(TOPIC2, 1, 1)
    settle(txns, producer2)
    return producer1, producer2


def _only_producer2_committed(txns: TxnCluster, producer2: TransactionalProducer) -> None:
    producer2.end_transaction(commit=True)
    settle(txns, producer2)
    records = consume(txns, READ_COMMITTED, *all_tps(TOPIC1, TOPIC2))
    assert len(records) == 2 and all(committed(producer2, v) for v in records)


def test_fencing_on_commit() -> None:
    """testFencingOnCommit: producer1's commit after producer2's initTransactions fails
    with PRODUCER_FENCED (fatal); producer2 commits."""
    txns = world()
    producer1, producer2 = _fenced_by_second_instance(txns, flush_first=True)
    producer1.end_transaction(commit=True)
    settle(txns, producer1)
    assert (producer1.state, producer1.fatal) == (P.FATAL_ERROR, "PRODUCER_FENCED")
    with pytest.raises(TxnClientError) as raised:
        producer1.end_transaction(commit=True)
    assert raised.value.error == "PRODUCER_FENCED"
    _only_producer2_committed(txns, producer2)


def test_fencing_on_send_offsets() -> None:
    """testFencingOnSendOffsets: producer1's sendOffsetsToTransaction after producer2's
    initTransactions fails with PRODUCER_FENCED (its AddOffsetsToTxn is refused)."""
    txns = world()
    groups = GroupCluster(txns.cluster)
    assert groups.start()
    producer1 = EosProducer(txns, groups, "transactional-producer", "p1")
    producer2 = TransactionalProducer(txns, "transactional-producer", "p2")
    init(txns, producer1)
    producer1.begin_transaction()
    producer1.send(TOPIC1, 0, 1)
    producer1.send(TOPIC2, 0, 1)
    settle(txns, producer1)
    init(txns, producer2)
    producer2.begin_transaction()
    producer2.send(TOPIC1, 1, 1)
    producer2.send(TOPIC2, 1, 1)
    producer1.send_offsets_to_transaction({("foobartopic", 0): 110}, "foobarGroup")
    settle(txns, producer1, producer2)
    assert (producer1.state, producer1.fatal) == (P.FATAL_ERROR, "PRODUCER_FENCED")
    _only_producer2_committed(txns, producer2)


def test_fencing_on_send() -> None:
    """testFencingOnSend: once producer2 has written to topic1-0 and topic2-0 under the
    bumped epoch, producer1's next send there fails: the partition refuses its old epoch
    (Kafka accepts ProducerFencedException or InvalidProducerEpochException)."""
    txns = world()
    producer1, producer2 = _fenced_by_second_instance(txns, flush_first=False)
    producer2.send(TOPIC1, 0, 1)
    producer2.send(TOPIC2, 0, 1)
    settle(txns, producer2)
    producer1.send(TOPIC1, 0, 1)
    settle(txns, producer1)
    assert producer1.state in (P.FATAL_ERROR, P.ABORTABLE_ERROR)
    assert (producer1.fatal or producer1.last_error) in ("PRODUCER_FENCED",
                                                         "INVALID_PRODUCER_EPOCH")
    producer2.end_transaction(commit=True)
    settle(txns, producer2)
    records = consume(txns, READ_COMMITTED, *all_tps(TOPIC1, TOPIC2))
    assert len(records) == 4 and all(committed(producer2, v) for v in records)


def test_fencing_on_add_partitions() -> None:
    """testFencingOnAddPartitions: producer1 aborted its transaction; after producer2's
    initTransactions, producer1's next transaction fails at AddPartitionsToTxn with
    PRODUCER_FENCED."""
    txns = world()
    producer1 = TransactionalProducer(txns, "transactional-producer", "p1")
    producer2 = TransactionalProducer(txns, "transactional-producer", "p2")
    init(txns, producer1)
    producer1.begin_transaction()
    producer1.send(TOPIC1, 0, 1)
    producer1.send(TOPIC2, 0, 1)
    producer1.end_transaction(commit=False)
    settle(txns, producer1)
    init(txns, producer2)
    producer2.begin_transaction()
    producer2.send(TOPIC1, 1, 1)
    producer2.send(TOPIC2, 1, 1)
    settle(txns, producer2)
    producer1.begin_transaction()
    producer1.send(TOPIC1, 0, 1)
    settle(txns, producer1)
    assert (producer1.state, producer1.fatal) == (P.FATAL_ERROR, "PRODUCER_FENCED")
    assert producer1.errors.get("PRODUCER_FENCED") == 1
    _only_producer2_committed(txns, producer2)


def test_fencing_on_transaction_expiration() -> None:
    """testFencingOnTransactionExpiration: transaction.timeout.ms 100; the first record is
    written, then the coordinator aborts the transaction (a 200 ms check) by bumping the
    epoch; the second send fails PRODUCER_FENCED. read_uncommitted sees the first
    record, read_committed nothing."""
    txns = world()
    producer = TransactionalProducer(txns, "expiringProducer", "p", txn_timeout_ms=100)
    init(txns, producer)
    producer.begin_transaction()
    producer.send(TOPIC1, 0, 1)
    settle(txns, producer)
    assert producer.state == P.IN_TRANSACTION
    txns.cluster.sim.run_for(600)
    producer.send(TOPIC1, 1, 1)
    settle(txns, producer)
    assert (producer.state, producer.fatal) == (P.FATAL_ERROR, "PRODUCER_FENCED")
    assert consume(txns, READ_UNCOMMITTED, *all_tps(TOPIC1)) == ["expiringProducer/p/1/0"]
    assert consume(txns, READ_COMMITTED, *all_tps(TOPIC1)) == []


def test_multiple_markers_one_leader() -> None:
    """testMultipleMarkersOneLeader: a transaction over 20 partitions (10 with three
    replicas, 10 with one) aborted, then one over the first 10 committed: every partition
    gets its marker; read_committed sees the committed records only, read_uncommitted
    all of them. (Kafka sends 11,000 records; here 22 per partition set.)"""
    txns = world()
    create_topic(txns, "largeTopic", 10, 3)
    create_topic(txns, "largeTopicOneReplica", 10, 1, min_isr=None)
    txns.cluster.sim.run_for(1_000)
    producer = TransactionalProducer(txns, "transactional-producer", "p")
    init(txns, producer)
    sends = [(t, p, 2) for t in ("largeTopic", "largeTopicOneReplica") for p in range(10)]
    assert producer.transaction(sends, commit=False)
    settle(txns, producer)
    assert producer.transaction([("largeTopic", p, 1) for p in range(10)], commit=True)
    settle(txns, producer)
    tps = [(t, p) for t in ("largeTopicOneReplica", "largeTopic") for p in range(10)]
    records = consume(txns, READ_COMMITTED, *tps)
    assert len(records) == 10 and all(committed(producer, v) for v in records)
    assert len(consume(txns, READ_UNCOMMITTED, *tps)) == 50


def test_consecutively_run_init_transactions() -> None:
    """testConsecutivelyRunInitTransactions: initTransactions() again once initialized is
    an IllegalStateException."""
    txns = world()
    producer = TransactionalProducer(txns, "normalProducer", "p")
    init(txns, producer)
    with pytest.raises(TxnClientError) as raised:
        producer.init_transactions()
    assert raised.value.error == "ILLEGAL_STATE"
    assert producer.state == P.READY


def _leader_epoch_of(txns: TxnCluster, topic: str, partition: int, producer_id: int
                     ) -> int | None:
    """The epoch the partition leader's producer state holds for ``producer_id``."""
    c = txns.cluster
    manager = c.replica_manager(c.partition_leader(topic, partition))
    if manager is None:
        return None
    replica = manager.leader_replica(topic, partition)
    assert not isinstance(replica, str)
    entry = replica.log.producers.get(producer_id)
    return entry.epoch if entry is not None else None


def test_bump_transactional_epoch() -> None:
    """testBumpTransactionalEpoch: a record to a one-replica topic whose leader is down
    expires (delivery.timeout.ms 5 s); the transaction is aborted with an epoch bump
    (KIP-360), and the next transaction commits everything, the partition's producer
    state then holding a higher epoch than before."""
    txns = world()
    create_topic(txns, "test-topic", NUM_PARTITIONS, 1, min_isr=None)
    txns.cluster.sim.run_for(1_000)
    # Kafka's test keeps its helper's transaction.timeout.ms of 60 s: the leader's restart,
    # its re-registration once its old session has run out, and the abort fit well inside it
    producer = TransactionalProducer(txns, "transactionalProducer", "p", txn_timeout_ms=60_000,
                                     request_timeout_ms=5_000, delivery_timeout_ms=5_000)
    init(txns, producer)
    assert producer.transaction([("test-topic", 0, 1)], commit=True)
    settle(txns, producer)
    initial_epoch = _leader_epoch_of(txns, "test-topic", 0, producer.producer_id)
    assert initial_epoch == producer.producer_epoch
    leader = txns.cluster.partition_leader("test-topic", 0)
    assert leader is not None
    producer.begin_transaction()
    producer.send(TOPIC1, 0, 1)
    settle(txns, producer)
    txns.cluster.sim.crash(leader)
    producer.send("test-topic", 0, 1)
    txns.cluster.sim.run_for(6_000)
    txns.cluster.sim.restart(leader)
    settle(txns, producer)
    assert producer.state == P.ABORTABLE_ERROR and producer.last_error == "DELIVERY_TIMEOUT"
    producer.end_transaction(commit=False)
    settle(txns, producer)
    assert producer.state == P.READY and producer.producer_epoch == initial_epoch + 1
    producer.begin_transaction()
    producer.send(TOPIC2, 0, 1)
    producer.send(TOPIC1, 0, 1)
    producer.send("test-topic", 0, 2)
    producer.end_transaction(commit=True)
    settle(txns, producer, ms=120_000)
    assert producer.state == P.READY, (producer.fatal, producer.last_error)
    records = consume(txns, READ_COMMITTED, *all_tps(TOPIC1, TOPIC2, "test-topic"))
    assert len(records) == 5 and all(committed(producer, v) for v in records)
    after = _leader_epoch_of(txns, "test-topic", 0, producer.producer_id)
    assert after is not None and after > initial_epoch


def _state_partition_in_sync(txns: TxnCluster, txn_id: str) -> bool:
    """The id's ``__transaction_state`` partition has at least its min ISR in sync."""
    manager = txns.cluster.replica_manager(txns.find_coordinator(txn_id))
    if manager is None:
        return False
    partition = TransactionCoordinator.partition_of_id(txn_id, txns.config)
    replica = manager.leader_replica(TRANSACTION_STATE_TOPIC, partition)
    return not isinstance(replica, str) and not replica.under_min_isr()


def test_failure_to_fence_epoch() -> None:
    """testFailureToFenceEpoch: with two brokers down, ``__transaction_state`` is below its
    min ISR, so a second instance's InitProducerId cannot be written (Kafka: its
    initTransactions() times out after max.block.ms 1 s and it is closed) and leaves the
    epoch as it was; a third instance started after the restart bumps it exactly once
    (the leader of topic1-0 then holds the first epoch + 1)."""
    txns = world()
    sim = txns.cluster.sim
    producer1 = TransactionalProducer(txns, "transactional-producer", "p1")
    init(txns, producer1)
    assert producer1.transaction([(TOPIC1, 0, 1)], commit=True)
    settle(txns, producer1)
    initial_epoch = _leader_epoch_of(txns, TOPIC1, 0, producer1.producer_id)
    assert initial_epoch == producer1.producer_epoch
    coordinator = txns.find_coordinator("transactional-producer")
    others = [b for b in txns.cluster.config.broker_ids if b != coordinator]
    for broker in others:
        sim.crash(broker)
    assert sim.run_until_true(
        lambda: not _state_partition_in_sync(txns, "transactional-producer"), 60_000)
    producer2 = TransactionalProducer(txns, "transactional-producer", "p2")
    producer2.init_transactions()
    sim.run_for(1_000)
    assert producer2.state == P.INITIALIZING and producer2.producer_epoch == -1
    assert producer2.errors.get("COORDINATOR_NOT_AVAILABLE", 0) >= 1  # NOT_ENOUGH_REPLICAS
    producer2.close()
    for broker in others:
        sim.restart(broker)
    assert sim.run_until_true(
        lambda: _state_partition_in_sync(txns, "transactional-producer"), 60_000)
    producer1.begin_transaction()  # Kafka accepts this or ProducerFencedException
    producer1.close()
    producer3 = TransactionalProducer(txns, "transactional-producer", "p3")
    init(txns, producer3)
    assert producer3.transaction([(TOPIC1, 0, 1)], commit=True)
    settle(txns, producer3)
    assert producer3.producer_epoch == initial_epoch + 1
    assert _leader_epoch_of(txns, TOPIC1, 0, producer3.producer_id) == initial_epoch + 1
    with pytest.raises(TxnClientError) as raised:
        producer2.init_transactions()
    assert raised.value.error == "CLOSED"


@pytest.mark.parametrize(("variant", "seed"), [("testSendOffsetsWithGroupId", 1),
                                              ("testSendOffsetsWithGroupMetadata", 2)])
def test_send_offsets(variant: str, seed: int) -> None:
    """testSendOffsetsWithGroupId, testSendOffsetsWithGroupMetadata (sendOffset): a
    consume-transform-produce loop copies numbered input records to the output in
    transactions that alternately commit and abort (the first commits), committing the
    consumed offsets in each; after an abort it reads again from the committed offset.
    The output, read_committed, holds every input record exactly once. (Kafka copies
    500 records, at most 10 per transaction; here 40, at most 5.)"""
    txn, eos = eos_monitors()
    cluster = KRaftCluster(ClusterConfig(seed=seed, controllers=1, brokers=3),
                           extra_monitors=[txn, eos])
    cluster.start()
    world = EosWorld(cluster, EosSettings(records=40, batch=5, output_partitions=4), txn, eos)
    assert world.setup()
    cluster.sim.run_for(500)
    world.start()
    (loop,) = world.loops
    outputs = loop._outputs

    def alternate(offsets: list[int]) -> list[tuple[str, int, tuple[str, ...]]]:
        loop.abort_next = (loop.committed_txns + loop.aborted_txns) % 2 == 1
        return outputs(offsets)

    loop._outputs = alternate  # type: ignore[method-assign]
    sim = cluster.sim
    assert sim.run_until_true(world.finished, 300_000), sim.violation
    assert sim.run_until_true(world.readable, 60_000)
    assert sim.violation is None
    check = world.final_check()
    assert (check.outputs, check.duplicates, check.missing, check.aborted_reads) == (40, 0, 0, 0)
    assert loop.committed_txns == 8 and loop.aborted_txns in (7, 8)
