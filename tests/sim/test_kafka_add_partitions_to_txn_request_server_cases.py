"""Cases of Kafka's AddPartitionsToTxnRequestServerTest, in kraftsim's terms.

Kafka class followed: ``AddPartitionsToTxnRequestServerTest``
(``core/src/test/scala/unit/kafka/server``). Kafka starts a cluster of three
brokers with topic ``topic1`` (one partition, one replica per broker) and sends
AddPartitionsToTxn requests to a broker's socket. Here the cluster is kraftsim's
simulated one with :class:`~sim.txn_cluster.TxnCluster`, and the request goes
to a broker's request handler (:func:`broker.txn.requests.handle_add_partitions_to_txn`
through ``TxnCluster.add_partitions_to_txn``); InitProducerId goes to the
coordinator FindCoordinator names. Kafka's two transactional ids "foobar" and
"barfoo" must share a coordinator; with kraftsim's hash they do when
``__transaction_state`` has one partition, which the cases use. Kafka's
parametrization over ZooKeeper and KRaft is KRaft only here.

Not ported: none.
"""

from __future__ import annotations

import pytest

from broker.txn.coordinator import TxnCoordinatorConfig, TxnResult
from broker.txn.requests import MAX_VERSION, AddPartitionsTxn, InvalidTxnRequest
from controller.operations import CreateTopics, NewTopic
from sim.cluster import ClusterConfig, KRaftCluster
from sim.txn_cluster import TxnCluster

TOPIC = "topic1"
TP0 = (TOPIC, 0)


def _world() -> TxnCluster:
    cluster = KRaftCluster(ClusterConfig(seed=1, controllers=1, brokers=3))
    cluster.start()
    assert cluster.wait(cluster.submit(CreateTopics((NewTopic(TOPIC, 1, 3),))))
    txns = TxnCluster(cluster, TxnCoordinatorConfig(num_partitions=1))
    assert txns.start()
    cluster.sim.run_for(1_000)
    return txns


def _send(txns: TxnCluster, broker: int, version: int, transactions: list[AddPartitionsTxn]
          ) -> dict[str, dict[tuple[str, int], str]]:
    out: list[dict[str, dict[tuple[str, int], str]]] = []
    assert txns.add_partitions_to_txn(broker, version, transactions, out.append)
    assert txns.cluster.sim.run_until_true(lambda: bool(out), 10_000)
    return out[0]


def _set_up_transactions(txns: TxnCluster, txn_id: str, verify_only: bool
                         ) -> tuple[int, AddPartitionsTxn]:
    """Kafka's setUpTransactions: find the coordinator, InitProducerId (timeout 10 s),
    and the AddPartitionsToTxn transaction of that producer for ``topic1-0``."""
    coordinator_id = txns.find_coordinator(txn_id)
    assert coordinator_id is not None
    out: list[TxnResult] = []
    for _ in range(50):  # as Kafka's: again while COORDINATOR_LOAD_IN_PROGRESS
        coordinator = txns.sync(coordinator_id)
        assert coordinator is not None
        out.clear()
        coordinator.handle_init_producer_id(txn_id, 10_000, None, txns.cluster.sim.now,
                                            out.append)
        assert txns.cluster.sim.run_until_true(lambda: bool(out), 10_000)
        if out[0].error != "COORDINATOR_LOAD_IN_PROGRESS":
            break
        txns.cluster.sim.run_for(100)
    assert out[0].error == "NONE"
    return coordinator_id, AddPartitionsTxn(txn_id, out[0].producer_id, out[0].producer_epoch,
                                            (TP0,), verify_only)


@pytest.mark.parametrize("version", range(MAX_VERSION + 1))
def test_should_receive_operation_not_attempted_when_other_partition_has_error(
        version: int) -> None:
    """shouldReceiveOperationNotAttemptedWhenOtherPartitionHasError, every version: the
    unknown topic's partition gets UNKNOWN_TOPIC_OR_PARTITION and the known one
    OPERATION_NOT_ATTEMPTED (nothing is added, whatever the producer)."""
    txns = _world()
    unknown = ("unknownTopic", 0)
    request = AddPartitionsTxn("foobar", 1000, 0, (TP0, unknown))
    broker = txns.cluster.config.broker_ids[0]
    errors = _send(txns, broker, version, [request])
    assert errors == {"foobar": {TP0: "OPERATION_NOT_ATTEMPTED",
                                 unknown: "UNKNOWN_TOPIC_OR_PARTITION"}}


def test_one_success_one_error_in_batched_request() -> None:
    """testOneSuccessOneErrorInBatchedRequest: a v4+ batch of two transactions; the
    initialized one is added (NONE), the unknown id gets INVALID_PRODUCER_ID_MAPPING."""
    txns = _world()
    coordinator_id, txn1 = _set_up_transactions(txns, "foobar", verify_only=False)
    assert txns.find_coordinator("barfoo") == coordinator_id
    txn2 = AddPartitionsTxn("barfoo", 1000, 0, (TP0,))
    errors = _send(txns, coordinator_id, MAX_VERSION, [txn1, txn2])
    assert errors == {"foobar": {TP0: "NONE"}, "barfoo": {TP0: "INVALID_PRODUCER_ID_MAPPING"}}


def test_verify_only() -> None:
    """testVerifyOnly: a partition not in the transaction verifies TRANSACTION_ABORTABLE."""
    txns = _world()
    coordinator_id, txn = _set_up_transactions(txns, "foobar", verify_only=True)
    errors = _send(txns, coordinator_id, MAX_VERSION, [txn])
    assert errors == {"foobar": {TP0: "TRANSACTION_ABORTABLE"}}


def test_verify_only_after_the_partition_was_added() -> None:
    """After a (non-verify) add, VerifyOnly of the same partition answers NONE, and of the
    same producer with another epoch PRODUCER_FENCED."""
    txns = _world()
    coordinator_id, txn = _set_up_transactions(txns, "foobar", verify_only=False)
    assert _send(txns, coordinator_id, MAX_VERSION, [txn]) == {"foobar": {TP0: "NONE"}}
    verify = AddPartitionsTxn("foobar", txn.producer_id, txn.producer_epoch, (TP0,), True)
    assert _send(txns, coordinator_id, MAX_VERSION, [verify]) == {"foobar": {TP0: "NONE"}}
    stale = AddPartitionsTxn("foobar", txn.producer_id, txn.producer_epoch + 1, (TP0,), True)
    assert _send(txns, coordinator_id, MAX_VERSION, [stale]) == \
        {"foobar": {TP0: "PRODUCER_FENCED"}}


@pytest.mark.parametrize(("version", "error"), [(0, "INVALID_PRODUCER_EPOCH"),
                                                (1, "INVALID_PRODUCER_EPOCH"),
                                                (2, "PRODUCER_FENCED"),
                                                (3, "PRODUCER_FENCED")])
def test_a_fenced_client_request_is_answered_in_its_versions_terms(version: int,
                                                                   error: str) -> None:
    """PRODUCER_FENCED is sent as INVALID_PRODUCER_EPOCH to clients below version 2."""
    txns = _world()
    coordinator_id, txn = _set_up_transactions(txns, "foobar", verify_only=False)
    stale = AddPartitionsTxn("foobar", txn.producer_id, txn.producer_epoch + 1, (TP0,))
    assert _send(txns, coordinator_id, version, [stale]) == {"foobar": {TP0: error}}


@pytest.mark.parametrize(("version", "transactions"), [
    (3, []), (3, [AddPartitionsTxn("a", 1, 0, (TP0,)), AddPartitionsTxn("b", 1, 0, (TP0,))]),
    (3, [AddPartitionsTxn("a", 1, 0, (TP0,), True)]), (6, [AddPartitionsTxn("a", 1, 0, (TP0,))]),
])
def test_client_versions_carry_one_transaction_without_verify_only(
        version: int, transactions: list[AddPartitionsTxn]) -> None:
    txns = _world()
    with pytest.raises(InvalidTxnRequest):
        txns.add_partitions_to_txn(txns.cluster.config.broker_ids[0], version, transactions,
                                   lambda _: None)
