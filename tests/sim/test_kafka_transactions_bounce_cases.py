"""Cases of Kafka's TransactionsBounceTest, in kraftsim's terms.

Kafka class followed: ``TransactionsBounceTest``
(``core/src/test/scala/integration/kafka/api``): four brokers; an input topic
seeded with numbered records is copied transactionally to an output topic
(consume, send, sendOffsetsToTransaction, commit; every third transaction
aborted and its input read again from the committed offsets) while a thread
shuts every broker down and starts it again in turn, 500 ms apart; the output,
read read_committed, must hold every input record exactly once, in input order
within each partition.

Here the copy loop is kraftsim's :class:`sim.eos_clients.EosLoop` in an
:class:`sim.eos_world.EosWorld` (input and output topics, three replicas, min
ISR 2, ``__transaction_state`` and ``__consumer_offsets``), on four brokers and
three controllers, with the producer-transaction and exactly-once invariants
watching every step. The bouncer is a scheduled task doing the same graceful
shutdowns and restarts. Kafka copies 10,000 records (200 per transaction); here
one loop copies 60 (5 per transaction). Kafka's two variants, offsets sent with
the group id or with the consumer's group metadata, are the same request in
kraftsim (TxnOffsetCommit without generation or member id: groups are not
modelled), so both run the same scenario (on two seeds).

Not ported: none.
"""

from __future__ import annotations

import pytest

from broker.txn.fetch import READ_COMMITTED
from sim.cluster import ClusterConfig, KRaftCluster
from sim.eos_clients import parse_label
from sim.eos_world import OUTPUT_TOPIC, EosSettings, EosWorld, eos_monitors
from tests.sim.test_kafka_transactions_cases import consume

RECORDS = 60
BOUNCE_PAUSE_MS = 500


def _bounce_forever(world: EosWorld) -> list[int]:
    """Kafka's BounceScheduler: each broker in turn shut down, restarted 500 ms later,
    the next one 500 ms after that, round after round until the copy is done; the
    returned list holds the number of bounces started."""
    sim = world.cluster.sim
    brokers = list(world.cluster.config.broker_ids)
    step = [0]

    def next_bounce() -> None:
        if world.finished():
            return
        broker = brokers[step[0] % len(brokers)]
        step[0] += 1
        sim.shutdown(broker)

        def back() -> None:
            sim.restart(broker)
            sim.schedule(sim.now + BOUNCE_PAUSE_MS, next_bounce, "bounce next broker")
        sim.schedule(sim.now + BOUNCE_PAUSE_MS, back, f"restart broker {broker}")

    sim.schedule(sim.now + BOUNCE_PAUSE_MS, next_bounce, "bounce first broker")
    return step


@pytest.mark.parametrize(("variant", "seed"), [("testWithGroupId", 7),
                                              ("testWithGroupMetadata", 8)])
def test_broker_failure(variant: str, seed: int) -> None:
    """testWithGroupId, testWithGroupMetadata (testBrokerFailure): every third
    transaction aborts, brokers bounce all along; read_committed output has each input
    record once, in order per partition, and no aborted record."""
    txn, eos = eos_monitors()
    cluster = KRaftCluster(ClusterConfig(seed=seed, controllers=3, brokers=4),
                           extra_monitors=[txn, eos])
    cluster.start()
    world = EosWorld(cluster, EosSettings(records=RECORDS, batch=5, output_partitions=3),
                     txn, eos)
    assert world.setup()
    cluster.sim.run_for(500)
    world.start()
    (loop,) = world.loops
    outputs = loop._outputs

    def every_third_aborts(offsets: list[int]) -> list[tuple[str, int, tuple[str, ...]]]:
        loop.abort_next = (loop.committed_txns + loop.aborted_txns) % 3 == 0
        return outputs(offsets)

    loop._outputs = every_third_aborts  # type: ignore[method-assign]
    bounces = _bounce_forever(world)
    sim = cluster.sim
    assert sim.run_until_true(world.finished, 600_000), sim.violation
    assert sim.run_until_true(world.readable, 120_000)
    assert sim.violation is None
    check = world.final_check()
    assert (check.outputs, check.duplicates, check.missing, check.aborted_reads) == \
        (RECORDS, 0, 0, 0)
    assert bounces[0] >= len(cluster.config.broker_ids)  # at least one full round
    assert loop.aborted_txns >= 1 and loop.committed_txns >= RECORDS // 5
    for partition in range(3):
        offsets = []
        for value in consume(world.txns, READ_COMMITTED, (OUTPUT_TOPIC, partition)):
            label = parse_label(value.rsplit("/", 1)[-1])
            assert label is not None
            offsets.append(label[2])
        assert offsets == sorted(offsets), "Out of order messages detected"
