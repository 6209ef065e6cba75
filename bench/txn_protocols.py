"""Classic vs pre-registration transactions, producer only: the table of docs/transactions.md.

``python -m bench.txn_protocols`` prints it. Two transactional producers whose ids
share one coordinator each commit ``TRANSACTIONS`` back-to-back transactions of one
record to each of 3 partitions (RF 3, acks all), the next begun as soon as the
previous commit is acknowledged (its markers are then still in flight); 3
brokers, ``marker_delay_ms`` 5, seeds 1-5. Figures are means per committed
transaction, in simulated time; every producer-transaction invariant is checked
online (a violation stops the benchmark).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from broker.txn.coordinator import TransactionCoordinator, TxnCoordinatorConfig
from controller.operations import CreateTopics, NewTopic
from sim.cluster import ClusterConfig, KRaftCluster
from sim.invariants.producer_txn import ProducerTxnInvariants
from sim.txn_clients import PROTOCOLS, TransactionalProducer
from sim.txn_cluster import TxnCluster

TRANSACTIONS = 40
"""Transactions each producer commits."""
CONFIG = TxnCoordinatorConfig(num_partitions=3)
SENDS = [("t", 0, 1), ("t", 1, 1), ("t", 2, 1)]

Report = Callable[[str], None]


def _shared_ids(count: int) -> list[str]:
    """``count`` transactional ids on the same __transaction_state partition."""
    ids = (f"id{n}" for n in range(1_000))
    return [i for i in ids if TransactionCoordinator.partition_of_id(i, CONFIG) == 0][:count]


def measure(protocol: str, seed: int, transactions: int = TRANSACTIONS) -> dict[str, float]:
    """One seed's totals: transactions, requests, coordinator requests, bounces, summed
    latencies (ms) and the simulated time the producers took (ms)."""
    monitor = ProducerTxnInvariants()
    cluster = KRaftCluster(ClusterConfig(seed=seed, controllers=3, brokers=3),
                           extra_monitors=[monitor])
    cluster.start()
    if not cluster.wait(cluster.submit(CreateTopics((NewTopic("t", 3, 3),)))):
        raise RuntimeError(f"seed {seed}: the topic was not created")
    txns = TxnCluster(cluster, CONFIG, marker_delay_ms=5,
                      on_transition=lambda b, t, x, y: monitor.transition(b, t, x, y))
    if not txns.start():
        raise RuntimeError(f"seed {seed}: the transaction coordinators did not start")
    sim = cluster.sim
    sim.run_for(1_000)
    producers = []
    for n, txn_id in enumerate(_shared_ids(2)):
        producer = TransactionalProducer(
            txns, txn_id, f"p-{n}", protocol=protocol,
            on_initialized=lambda q: monitor.initialized(q.transactional_id, q.instance,
                                                         sim.now),
            on_sent=monitor.sent, on_committed=monitor.commit_acknowledged)
        producer.init_transactions()
        producers.append(producer)
    if not sim.run_until_true(lambda: all(p.idle for p in producers), 30_000):
        raise RuntimeError(f"seed {seed}: initTransactions did not finish")
    started = sim.now
    base = [(p.round_trips, p.coordinator_round_trips, p.concurrent_transactions_bounces)
            for p in producers]

    def next_due() -> bool:
        return any(p.idle and len(p.committed) < transactions for p in producers) or \
            all(len(p.committed) >= transactions for p in producers)

    while not all(len(p.committed) >= transactions for p in producers):
        for p in producers:
            if p.idle and len(p.committed) < transactions:
                p.transaction(SENDS, commit=True)
        if not sim.run_until_true(next_due, 60_000) or sim.violation is not None:
            raise RuntimeError(f"seed {seed} ({protocol}): stuck or an invariant failed: "
                               f"{sim.violation}")
    elapsed = sim.now - started
    totals = {"transactions": 0.0, "requests": 0.0, "coordinator": 0.0, "bounces": 0.0,
              "commit_ms": 0.0, "txn_ms": 0.0, "elapsed_ms": float(elapsed)}
    for p, (requests, coordinator, bounces) in zip(producers, base, strict=True):
        totals["transactions"] += len(p.committed)
        totals["requests"] += p.round_trips - requests
        totals["coordinator"] += p.coordinator_round_trips - coordinator
        totals["bounces"] += p.concurrent_transactions_bounces - bounces
        totals["commit_ms"] += sum(p.commit_latencies_ms)
        totals["txn_ms"] += sum(p.txn_latencies_ms)
    return totals


def bench_txn_protocols(report: Report, seeds: range = range(1, 6)) -> None:
    """Print the table: one row per protocol, means per committed transaction."""
    report("| protocol | requests / txn | to the coordinator / txn | CONCURRENT_TRANSACTIONS "
           "/ txn | commit latency (commitTransaction -> ack) | begin -> commit ack | "
           "txns / s (simulated) |")
    report("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for protocol in PROTOCOLS:
        sums: dict[str, float] = {}
        for seed in seeds:
            for key, value in measure(protocol, seed).items():
                sums[key] = sums.get(key, 0.0) + value
        n = sums["transactions"]
        report(f"| {protocol} | {sums['requests'] / n:.2f} | {sums['coordinator'] / n:.2f} | "
               f"{sums['bounces'] / n:.2f} | {sums['commit_ms'] / n:.1f} ms | "
               f"{sums['txn_ms'] / n:.0f} ms | {n / (sums['elapsed_ms'] / 1000):.2f} |")


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.txn_protocols [--seeds N]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seeds", type=int, default=5, help="seeds 1..N (default 5)")
    args = parser.parse_args(argv)
    bench_txn_protocols(print, range(1, args.seeds + 1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
