"""KIP-890 part 2 in a simulated cluster: transaction-version-2 producers add partitions
implicitly.

A cluster formatted at metadata.version 4.0-IV2 finalizes transaction.version 2. A
(classic, non-2PC) producer that sees it speaks TV2: no AddPartitionsToTxn (the
partition leader adds the partition on its behalf, Produce v12), no AddOffsetsToTxn
(TxnOffsetCommit v5: the group coordinator's broker adds the offsets partition), and
every EndTxn bumps the epoch. At kraftsim's default 4.0-IV0 nothing changes.
"""

from __future__ import annotations

import pytest

from broker.replica_manager import ProduceResult
from broker.txn.state import TransactionState
from controller.config import ControllerConfig
from controller.operations import CreateTopics, NewTopic
from metadata.versions import LEVELS
from sim.cluster import ClusterConfig, KRaftCluster
from sim.eos_world import EosSettings, EosWorld, eos_monitors
from sim.invariants.producer_txn import ProducerTxnInvariants
from sim.txn_clients import TransactionalProducer, TxnProducerState
from sim.txn_cluster import TxnCluster
from tests.sim.test_txn_scenarios import committed_values
from tests.sim.txn_helpers import monitor_hooks, until_idle

TV2_RELEASE = "4.0-IV2"


def _config(release: str, seed: int = 1) -> ClusterConfig:
    return ClusterConfig(seed=seed, controllers=3, brokers=3, controller=ControllerConfig(
        bootstrap_metadata_version=LEVELS[release]))


def _world(release: str = TV2_RELEASE,
           monitor: ProducerTxnInvariants | None = None) -> TxnCluster:
    cluster = KRaftCluster(_config(release), extra_monitors=[monitor] if monitor else [])
    cluster.start()
    assert cluster.wait(cluster.submit(CreateTopics((NewTopic("t", 2, 3),))))
    on_transition = None if monitor is None else (
        lambda b, t, x, y: monitor.transition(b, t, x, y))
    txns = TxnCluster(cluster, on_transition=on_transition)
    assert txns.start()
    cluster.sim.run_for(1_000)
    return txns


def _producer(txns: TxnCluster, log: list[str], instance: str = "app-1",
              monitor: ProducerTxnInvariants | None = None) -> TransactionalProducer:
    hooks = monitor_hooks(txns, monitor)
    p = TransactionalProducer(txns, "app", instance, on_request=log.append,
                              **hooks)  # type: ignore[arg-type]
    p.init_transactions()
    until_idle(txns, p)
    return p


def test_a_tv2_producer_sends_no_add_partitions_and_bumps_the_epoch_per_transaction() -> None:
    monitor = ProducerTxnInvariants()
    txns = _world(monitor=monitor)
    assert txns.finalized_transaction_version() == 2
    log: list[str] = []
    p = _producer(txns, log, monitor=monitor)
    sent = txns.verifications_sent
    assert p.transaction([("t", 0, 2), ("t", 1, 1)], commit=True)
    until_idle(txns, p)
    assert p.transaction([("t", 0, 1)], commit=False)
    until_idle(txns, p)
    assert p.transaction([("t", 1, 1)], commit=True)
    until_idle(txns, p)
    assert (p.committed, p.aborted, p.state) == ([1, 3], [2], TxnProducerState.READY)
    assert "AddPartitionsToTxn" not in log and log.count("EndTxn") == 3
    assert p.producer_epoch == 3  # 0 at init, +1 per EndTxn
    assert txns.verifications_sent - sent == 4  # the leaders added each partition
    assert committed_values(txns, "t", 0) == ["app/app-1/1/0", "app/app-1/1/1"]
    assert committed_values(txns, "t", 1) == ["app/app-1/1/0", "app/app-1/3/0"]
    coordinator = txns.coordinator(txns.find_coordinator("app"))
    assert coordinator is not None
    meta = coordinator.txns["app"]
    assert meta.state == TransactionState.COMPLETE_COMMIT
    assert meta.client_transaction_version == 2
    assert txns.cluster.sim.violation is None


def test_at_the_default_release_nothing_changes() -> None:
    """4.0-IV0 finalizes transaction.version 0: the producer adds its partitions itself
    and keeps its epoch."""
    txns = _world("4.0-IV0")
    assert txns.finalized_transaction_version() == 0
    log: list[str] = []
    p = _producer(txns, log)
    assert p.transaction([("t", 0, 1), ("t", 1, 1)], commit=True)
    until_idle(txns, p)
    assert log.count("AddPartitionsToTxn") == 2 and p.producer_epoch == 0
    assert p.committed == [1]


def test_a_tv2_batch_delayed_past_its_abort_is_refused() -> None:
    """Under TV2 the abort bumped the epoch: the late batch of the old epoch is refused
    (the coordinator fences it) and no transaction hangs."""
    txns = _world()
    p = _producer(txns, [])
    old_epoch = p.producer_epoch
    assert p.transaction([("t", 0, 2)], commit=False)
    until_idle(txns, p)
    leader = txns.data_replica_manager(txns.cluster.partition_leader("t", 0))
    assert leader is not None
    answers: list[ProduceResult] = []
    leader.produce("t", 0, ["late"], -1, answers.append, p.producer_id, old_epoch, 2,
                   transactional=True, transactional_id="app", produce_version=12)
    txns.cluster.sim.run_for(30_000)
    assert [a.error for a in answers] == ["INVALID_PRODUCER_EPOCH"]
    replica = leader.leader_replica("t", 0)
    assert not isinstance(replica, str)
    assert not replica.log.has_ongoing_transaction(p.producer_id)
    assert replica.log.txns.last_stable_offset(replica.log.high_watermark) == \
        replica.log.high_watermark


@pytest.mark.parametrize("release", [TV2_RELEASE, "4.0-IV0"])
def test_exactly_once_with_offsets(release: str) -> None:
    """The consume-transform-produce loop: under TV2 its offsets go straight to
    TxnOffsetCommit v5 (no AddOffsetsToTxn), and every input still has one committed
    output."""
    txn, eos = eos_monitors()
    cluster = KRaftCluster(_config(release), extra_monitors=[txn, eos])
    cluster.start()
    world = EosWorld(cluster, EosSettings(records=20), txn, eos)
    assert world.setup()
    cluster.sim.run_for(500)
    requests: list[str] = []
    world.start()
    for loop in world.loops:
        producer = loop.producer
        assert producer is not None
        producer.on_request = requests.append
    sim = cluster.sim
    assert sim.run_until_true(world.finished, 120_000), sim.violation
    sim.run_for(2_000)
    assert sim.violation is None
    check = world.final_check()
    assert (check.outputs, check.duplicates, check.missing, check.aborted_reads) == \
        (20, 0, 0, 0)
    tv2 = release == TV2_RELEASE
    assert ("AddOffsetsToTxn" in requests) is not tv2
    assert ("TxnOffsetCommit[v5]" in requests) is tv2
    assert ("AddPartitionsToTxn" in requests) is not tv2
