"""KIP-890 part 1 in a simulated cluster: the partition leader verifies before appending.

A transactional batch that reaches its partition after its transaction was
aborted, or that was never added to the transaction, is refused by the leader
after its AddPartitionsToTxn VerifyOnly round trip to the coordinator, and
leaves no hanging transaction: the last stable offset moves on. The same
batches with transaction.partition.verification.enable=false are appended and
hold the LSO back for good (what KIP-890 closes).
"""

from __future__ import annotations

from broker.replica import Replica
from broker.replica_manager import ProduceResult, ReplicaManager
from broker.txn.coordinator import TxnCoordinatorConfig
from controller.operations import CreateTopics, IncrementalAlterConfigs, NewTopic
from controller.operations.configs import ConfigChange
from metadata.delta import BROKER_RESOURCE
from sim.cluster import ClusterConfig, KRaftCluster
from sim.txn_clients import TransactionalProducer
from sim.txn_cluster import TxnCluster
from tests.sim.test_txn_scenarios import committed_values
from tests.sim.txn_helpers import until_idle


def _world(verify: bool = True) -> TxnCluster:
    cluster = KRaftCluster(ClusterConfig(seed=1, controllers=3, brokers=3))
    cluster.start()
    assert cluster.wait(cluster.submit(CreateTopics((NewTopic("t", 2, 3),))))
    txns = TxnCluster(cluster, TxnCoordinatorConfig(num_partitions=3,
                                                    partition_verification_enable=verify))
    assert txns.start()
    cluster.sim.run_for(1_000)
    return txns


def _producer(txns: TxnCluster) -> TransactionalProducer:
    p = TransactionalProducer(txns, "app", "app-1")
    p.init_transactions()
    until_idle(txns, p)
    return p


def _leader(txns: TxnCluster, partition: int) -> tuple[ReplicaManager, Replica]:
    manager = txns.data_replica_manager(txns.cluster.partition_leader("t", partition))
    assert manager is not None
    replica = manager.leader_replica("t", partition)
    assert not isinstance(replica, str)
    return manager, replica


def _late_batch(txns: TxnCluster, p: TransactionalProducer, partition: int,
                sequence: int) -> list[ProduceResult]:
    """A batch of ``p``'s current producer id and epoch, sent now to ``partition``'s leader
    the way the client sends it (transactional id and all)."""
    manager, _ = _leader(txns, partition)
    answers: list[ProduceResult] = []
    manager.produce("t", partition, ["app/app-1/late/0"], -1, answers.append, p.producer_id,
                    p.producer_epoch, sequence, transactional=True, transactional_id="app")
    txns.cluster.sim.run_for(100)
    return answers


def _aborted(txns: TxnCluster) -> tuple[TransactionalProducer, Replica, int, int]:
    """A producer whose transaction on partition 0 aborted; that partition's leader
    replica, its log end and the verifications sent so far."""
    p = _producer(txns)
    assert p.transaction([("t", 0, 2)], commit=False)
    until_idle(txns, p)
    _, replica = _leader(txns, 0)
    return p, replica, replica.log.end_offset, txns.verifications_sent


def _lso(replica: Replica) -> int:
    return replica.log.txns.last_stable_offset(replica.log.high_watermark)


def test_a_batch_delayed_past_its_abort_is_refused_and_leaves_no_hanging_transaction(
) -> None:
    txns = _world()
    p, replica, end, sent = _aborted(txns)

    # the abort's marker is written; a retry of the transaction's batch comes in late
    answers = _late_batch(txns, p, 0, sequence=2)

    assert [a.error for a in answers] == ["TRANSACTION_ABORTABLE"]  # Produce v11's answer
    assert txns.verifications_sent == sent + 1  # the leader asked the coordinator
    txns.cluster.sim.run_for(30_000)  # past the transaction timeout: nothing to wait for
    assert replica.log.end_offset == end
    assert not replica.log.has_ongoing_transaction(p.producer_id)
    assert _lso(replica) == replica.log.high_watermark == end


def test_without_verification_the_late_batch_hangs_the_partition() -> None:
    """What KIP-890 closes: the late batch opens a transaction no coordinator knows, so
    neither the coordinator's timeout nor the producer's next commit ever ends it."""
    txns = _world(verify=False)
    p, replica, end, sent = _aborted(txns)

    answers = _late_batch(txns, p, 0, sequence=2)

    assert [a.error for a in answers] == ["NONE"] and txns.verifications_sent == sent
    txns.cluster.sim.run_for(30_000)
    assert replica.log.has_ongoing_transaction(p.producer_id)
    assert _lso(replica) == end < replica.log.high_watermark
    assert p.transaction([("t", 1, 1)], commit=True)  # a later transaction elsewhere
    until_idle(txns, p)
    assert _lso(replica) == end


def test_a_partition_never_added_to_the_transaction_is_refused() -> None:
    """A produce to a partition the client did not add (no AddPartitionsToTxn): the
    coordinator says it is not in the ongoing transaction; the commit covers t-0 only
    and t-1's LSO is not held back."""
    txns = _world()
    p = _producer(txns)
    p.begin_transaction()
    p.send("t", 0, 1)
    until_idle(txns, p)
    answers = _late_batch(txns, p, 1, sequence=0)
    assert [a.error for a in answers] == ["TRANSACTION_ABORTABLE"]
    p.end_transaction(commit=True)
    until_idle(txns, p)
    assert p.committed == [1]
    _, replica = _leader(txns, 1)
    assert replica.log.end_offset == 0 and committed_values(txns, "t", 1) == []
    assert committed_values(txns, "t", 0) == ["app/app-1/1/0"]


def test_the_clients_own_sends_verify_once_per_partition_and_commit() -> None:
    """The producer adds each partition first, so the leader's check passes: one
    VerifyOnly per partition and transaction (later batches find the transaction open)."""
    txns = _world()
    p = _producer(txns)
    sent = txns.verifications_sent
    assert p.transaction([("t", 0, 1), ("t", 0, 1), ("t", 1, 1)], commit=True)
    until_idle(txns, p)
    assert p.committed == [1] and p.state == "READY"
    assert txns.verifications_sent == sent + 2
    assert committed_values(txns, "t", 0) == ["app/app-1/1/0", "app/app-1/1/1"]


def test_verification_turned_off_by_a_dynamic_broker_config() -> None:
    """transaction.partition.verification.enable is a dynamic broker config: the cluster
    default set to false lets the late batch in (and hang the partition)."""
    txns = _world()
    c = txns.cluster
    p = _producer(txns)
    assert p.transaction([("t", 0, 2)], commit=False)
    until_idle(txns, p)
    assert c.wait(c.submit(IncrementalAlterConfigs(BROKER_RESOURCE, "", (
        ConfigChange("transaction.partition.verification.enable", "false"),))))
    c.sim.run_for(1_000)
    sent = txns.verifications_sent
    assert [a.error for a in _late_batch(txns, p, 0, sequence=2)] == ["NONE"]
    assert txns.verifications_sent == sent
    _, replica = _leader(txns, 0)
    assert replica.log.has_ongoing_transaction(p.producer_id)
