"""What the producer-transaction simulation tests share."""

from __future__ import annotations

from sim.invariants.producer_txn import ProducerTxnInvariants
from sim.txn_clients import TransactionalProducer
from sim.txn_cluster import TxnCluster


def until_idle(txns: TxnCluster, *producers: TransactionalProducer) -> None:
    """Run until every producer has nothing queued or out (within 60 s), then 1 s more so
    that markers and replication settle."""
    assert txns.cluster.sim.run_until_true(lambda: all(p.idle for p in producers), 60_000)
    txns.cluster.sim.run_for(1_000)


def monitor_hooks(txns: TxnCluster, monitor: ProducerTxnInvariants | None) -> dict[str, object]:
    """The producer's callbacks that feed ``monitor`` (none without one)."""
    if monitor is None:
        return {}
    return {"on_initialized": lambda q: monitor.initialized(
                q.transactional_id, q.instance, txns.cluster.sim.now),
            "on_sent": monitor.sent, "on_committed": monitor.commit_acknowledged}
