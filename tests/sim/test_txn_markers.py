"""WriteTxnMarkers leave the coordinator as soon as the PrepareCommit/PrepareAbort is durable.

Kafka's TransactionMarkerChannelManager wakes its send thread when it queues a
transaction's markers, so a transaction completes about one marker round trip
(plus the partitions' acks=all writes and the Complete record) after its EndTxn
is answered, not at the coordinator's next periodic check. A producer that begins
its next transaction a little later therefore finds the previous one complete
and its AddPartitionsToTxn is not bounced CONCURRENT_TRANSACTIONS.
"""

from __future__ import annotations

from broker.txn.state import TransactionState
from controller.operations import CreateTopics, NewTopic
from sim.cluster import ClusterConfig, KRaftCluster
from sim.txn_clients import TransactionalProducer
from sim.txn_cluster import TxnCluster

TICK_MS = 1_000
"""The coordinators' periodic check, made long: markers must not wait for it."""


def _world(changes: list[tuple[int, str, str]]) -> TxnCluster:
    cluster = KRaftCluster(ClusterConfig(seed=3, controllers=3, brokers=3))
    cluster.start()
    assert cluster.wait(cluster.submit(CreateTopics((NewTopic("t", 2, 3),))))

    def seen(_: int, txn_id: str, before: TransactionState, after: TransactionState) -> None:
        changes.append((cluster.sim.now, before.name, after.name))
    txns = TxnCluster(cluster, tick_ms=TICK_MS, on_transition=seen)
    assert txns.start()
    cluster.sim.run_for(1_000)
    return txns


def _prepare_to_complete_ms(changes: list[tuple[int, str, str]], prepared: str) -> list[int]:
    """For each transaction ended: Prepare* made durable -> Complete* made durable."""
    complete = prepared.replace("PREPARE", "COMPLETE")
    began = [at for at, _, after in changes if after == prepared]
    ended = [at for at, before, after in changes if (before, after) == (prepared, complete)]
    assert len(began) == len(ended)
    return [end - start for start, end in zip(began, ended, strict=True)]


def test_markers_go_when_the_prepare_is_durable_not_at_the_next_tick() -> None:
    changes: list[tuple[int, str, str]] = []
    txns = _world(changes)
    sim = txns.cluster.sim
    p = TransactionalProducer(txns, "app", "app-1")
    p.init_transactions()
    assert sim.run_until_true(lambda: p.idle, 10_000)
    for number in range(1, 7):
        assert p.transaction([("t", 0, 1), ("t", 1, 1)], commit=number % 3 != 0)
        assert sim.run_until_true(lambda: p.idle, 10_000)
        sim.run_for(97 * number % 400)  # the next begin at varied phases of the tick
    sim.run_for(TICK_MS)
    assert p.committed == [1, 2, 4, 5] and p.aborted == [3, 6]
    # two hops of 5 ms, the partitions' acks=all writes and the Complete record: well under
    # one tick, whatever the phase at which the Prepare became durable
    for prepared in ("PREPARE_COMMIT", "PREPARE_ABORT"):
        durations = _prepare_to_complete_ms(changes, prepared)
        assert durations and max(durations) < 60, (prepared, durations)


def test_the_next_transaction_begun_after_the_markers_is_not_bounced() -> None:
    txns = _world([])
    sim = txns.cluster.sim
    p = TransactionalProducer(txns, "app", "app-1")
    p.init_transactions()
    assert sim.run_until_true(lambda: p.idle, 10_000)
    for _ in range(5):
        assert p.transaction([("t", 0, 1)], commit=True)
        assert sim.run_until_true(lambda: p.idle, 10_000)
        sim.run_for(60)  # the application takes 60 ms before its next transaction
    assert p.committed == [1, 2, 3, 4, 5]
    assert p.errors.get("CONCURRENT_TRANSACTIONS", 0) == 0
