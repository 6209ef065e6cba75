"""The pre-registration variant (seed 002) against a simulated cluster, classic beside it."""

from __future__ import annotations

import pytest

from broker.txn import prereg
from broker.txn.coordinator import TransactionCoordinator, TxnCoordinatorConfig
from broker.txn.state import TransactionState
from controller.operations import CreateTopics, NewTopic
from sim.cluster import ClusterConfig, KRaftCluster
from sim.eos_world import OUTPUT_TOPIC, EosSettings, EosWorld, eos_monitors
from sim.faults import parse_fault
from sim.fork import fork
from sim.invariants.producer_txn import ProducerTxnInvariants
from sim.txn_clients import TransactionalProducer, TxnClientError, TxnProducerState
from sim.txn_cluster import TxnCluster
from tests.sim.test_txn_scenarios import committed_values
from tests.sim.txn_helpers import monitor_hooks, until_idle

PRE = "pre-registration"
GROUP = "g"
CONFIG = TxnCoordinatorConfig(num_partitions=3, offsets_num_partitions=2)


def _world(config: TxnCoordinatorConfig = CONFIG, marker_delay_ms: int = 5,
           monitor: ProducerTxnInvariants | None = None) -> TxnCluster:
    cluster = KRaftCluster(ClusterConfig(seed=1, controllers=3, brokers=3),
                           extra_monitors=[monitor] if monitor is not None else [])
    cluster.start()
    assert cluster.wait(cluster.submit(CreateTopics((
        NewTopic("t", 3, 3), NewTopic(prereg.GROUP_METADATA_TOPIC, 2, 3)))))
    on_transition = None if monitor is None else (
        lambda b, t, x, y: monitor.transition(b, t, x, y))
    txns = TxnCluster(cluster, config, marker_delay_ms=marker_delay_ms,
                      on_transition=on_transition)
    assert txns.start()
    cluster.sim.run_for(1_000)
    return txns


def _producer(txns: TxnCluster, instance: str, protocol: str = PRE, txn_id: str = "app",
              log: list[str] | None = None, group_id: str | None = None,
              monitor: ProducerTxnInvariants | None = None) -> TransactionalProducer:
    hooks = monitor_hooks(txns, monitor)
    p = TransactionalProducer(txns, txn_id, instance, protocol=protocol, group_id=group_id,
                              on_request=log.append if log is not None else None,
                              **hooks)  # type: ignore[arg-type]
    p.init_transactions()
    assert txns.cluster.sim.run_until_true(lambda: p.idle, 30_000)
    return p


def _coordinator(txns: TxnCluster, txn_id: str = "app") -> TransactionCoordinator:
    coordinator = txns.coordinator(txns.find_coordinator(txn_id))
    assert coordinator is not None
    return coordinator


def _controls(txns: TxnCluster, topic: str, partition: int) -> list[str]:
    c = txns.cluster
    manager = c.replica_manager(c.partition_leader(topic, partition))
    assert manager is not None
    replica = manager.leader_replica(topic, partition)
    assert not isinstance(replica, str)
    return [e.value for e in replica.log.entries if e.control >= 0]


# ------------------------------------------------------------ the seed's example, golden
def test_the_seeds_eos_loop_takes_one_add_partitions_and_an_end_txn_naming_what_was_written(
) -> None:
    """The seed's loop: beginTransaction(outputPartitions, groupId), sends, commit."""
    txns = _world()
    log: list[str] = []
    p = _producer(txns, "app-1", log=log, group_id=GROUP)
    log.clear()
    before = p.coordinator_round_trips
    assert p.transaction([("t", 0, 2), ("t", 1, 1), ("t", 2, 1)], commit=True)
    until_idle(txns, p)
    assert log == ["AddPartitionsToTxn[pre-registration-1]",
                   "Produce t-0", "Produce t-1", "Produce t-2",
                   "EndTxn[pre-registration-1]"]
    assert p.committed == [1] and p.coordinator_round_trips - before == 2
    assert committed_values(txns, "t", 0) == ["app/app-1/1/0", "app/app-1/1/1"]
    # the GroupId stands for the group's __consumer_offsets partition: it gets the marker
    group_tp = prereg.offsets_partition(GROUP, CONFIG.offsets_num_partitions)
    assert _controls(txns, *group_tp) == ["COMMIT"]


def test_classic_takes_an_add_partitions_per_partition_for_the_same_transaction() -> None:
    txns = _world()
    log: list[str] = []
    p = _producer(txns, "app-1", "classic", log=log)
    log.clear()
    before = p.coordinator_round_trips
    assert p.transaction([("t", 0, 2), ("t", 1, 1), ("t", 2, 1)], commit=True)
    until_idle(txns, p)
    assert log == ["AddPartitionsToTxn", "Produce t-0",
                   "AddPartitionsToTxn", "Produce t-1", "AddPartitionsToTxn", "Produce t-2",
                   "EndTxn"]
    assert p.coordinator_round_trips - before == 4


def test_registered_but_unwritten_partitions_get_no_marker() -> None:
    """The seed's edge case: many partitions registered, few written; EndTxn narrows."""
    txns = _world()
    p = _producer(txns, "app-1")
    assert p.transaction([("t", 0, 1)], commit=True,
                         partitions={("t", 0), ("t", 1), ("t", 2)})
    until_idle(txns, p)
    assert p.committed == [1]
    assert [_controls(txns, "t", i) for i in range(3)] == [["COMMIT"], [], []]


def test_a_send_outside_the_registered_partitions_fails_and_the_transaction_aborts() -> None:
    txns = _world()
    p = _producer(txns, "app-1")
    assert p.transaction([("t", 0, 1), ("t", 1, 1)], commit=True, partitions={("t", 0)})
    until_idle(txns, p)
    assert p.errors.get("UNKNOWN_TOPIC_OR_PARTITION") == 1
    assert p.committed == [] and p.aborted == [1] and p.state == TxnProducerState.READY
    assert committed_values(txns, "t", 0) == [] and _controls(txns, "t", 1) == []
    assert _controls(txns, "t", 0) == ["ABORT"]


def test_a_broker_without_the_variant_answers_unsupported_version() -> None:
    txns = _world(TxnCoordinatorConfig(num_partitions=3, pre_registration=False))
    p = _producer(txns, "app-1")
    assert p.transaction([("t", 0, 1)], commit=True)
    until_idle(txns, p)
    assert p.state == TxnProducerState.FATAL_ERROR and p.fatal == "UNSUPPORTED_VERSION"


def test_an_unknown_protocol_is_a_clear_error() -> None:
    txns = _world()
    with pytest.raises(ValueError, match="choose one of classic, pre-registration"):
        TransactionalProducer(txns, "app", "app-1", protocol="prereg")


def test_an_end_txn_naming_an_unregistered_partition_is_invalid() -> None:
    txns = _world()
    p = _producer(txns, "app-1")
    assert p.transaction([("t", 0, 1)], commit=True)
    assert txns.cluster.sim.run_until_true(lambda: p.registered == {("t", 0)}, 5_000)
    answers: list[str] = []
    prereg.end_txn(_coordinator(txns), prereg.EndTxnPreRegRequest(
        "app", p.producer_id, p.producer_epoch, True, prereg.to_topics({("t", 1)})),
        txns.cluster.sim.now, answers.append)
    assert answers == ["INVALID_REQUEST"]
    until_idle(txns, p)
    assert p.committed == [1]


def test_the_version_tag_is_not_a_kafka_wire_version() -> None:
    assert prereg.AddPartitionsToTxnPreRegRequest.version == "pre-registration-1"
    assert prereg.EndTxnPreRegRequest.version == prereg.PRE_REGISTRATION_VERSION
    assert prereg.to_topics({("b", 2), ("a", 1), ("b", 0)}) == (("a", (1,)), ("b", (0, 2)))
    assert prereg.from_topics((("a", (1,)), ("b", (0, 2)))) == {("a", 1), ("b", 0), ("b", 2)}


# ------------------------------------------------------------ the blocking begin
def _back_to_back(txns: TxnCluster, p: TransactionalProducer) -> None:
    """Commit, then begin the next transaction while the first one's markers are in flight."""
    assert p.transaction([("t", 0, 1), ("t", 1, 1)], commit=True)
    assert txns.cluster.sim.run_until_true(lambda: p.committed == [1], 10_000)
    assert p.transaction([("t", 0, 1)], commit=True)


def test_the_begin_waits_for_the_previous_markers_instead_of_bouncing() -> None:
    txns = _world(marker_delay_ms=150)
    p = _producer(txns, "app-1")
    _back_to_back(txns, p)
    sim = txns.cluster.sim
    sim.run_for(50)
    coordinator = _coordinator(txns)

    def state() -> TransactionState:
        return coordinator.txns["app"].state

    assert state() == TransactionState.PREPARE_COMMIT
    assert len(coordinator.purgatory) == 1 and p.state == TxnProducerState.IN_TRANSACTION
    assert p.registered == set()  # still waiting in begin
    assert sim.run_until_true(lambda: p.registered == {("t", 0)}, 5_000)
    assert state() == TransactionState.ONGOING
    assert _controls(txns, "t", 1) == ["COMMIT"]  # the markers landed first
    until_idle(txns, p)
    assert p.committed == [1, 2]
    assert p.concurrent_transactions_bounces == 0 and "CONCURRENT_TRANSACTIONS" not in p.errors


def test_classic_bounces_on_the_same_schedule_unless_the_coordinator_blocks_it() -> None:
    bounces = []
    for block in (False, True):
        txns = _world(TxnCoordinatorConfig(num_partitions=3, block_classic_begin=block),
                      marker_delay_ms=150)
        p = _producer(txns, "app-1", "classic")
        _back_to_back(txns, p)
        until_idle(txns, p)
        assert p.committed == [1, 2]
        bounces.append(p.concurrent_transactions_bounces)
    assert bounces[0] > 0 and bounces[1] == 0


def test_coordinator_failover_during_a_blocked_begin() -> None:
    txns = _world(marker_delay_ms=150)
    p = _producer(txns, "app-1")
    _back_to_back(txns, p)
    sim = txns.cluster.sim
    sim.run_for(50)
    assert len(_coordinator(txns).purgatory) == 1
    old = txns.find_coordinator("app")
    assert old is not None
    sim.crash(old)  # the markers in flight die with it; the new coordinator resends them
    until_idle(txns, p)
    assert txns.find_coordinator("app") not in (None, old)
    assert p.committed == [1, 2] and p.concurrent_transactions_bounces == 0
    # the held begin saw the broker go (a disconnect), not its own request timeout
    assert p.errors.get("NETWORK_EXCEPTION") == 1 and "REQUEST_TIMED_OUT" not in p.errors
    assert committed_values(txns, "t", 0) == ["app/app-1/1/0", "app/app-1/2/1"]
    assert committed_values(txns, "t", 1) == ["app/app-1/1/0"]


def test_a_blocked_begin_is_answered_not_coordinator_when_leadership_moves() -> None:
    txns = _world(marker_delay_ms=150)
    p = _producer(txns, "app-1")
    _back_to_back(txns, p)
    txns.cluster.sim.run_for(50)
    coordinator = _coordinator(txns)
    answers: list[str] = []
    coordinator.purgatory.hold("app", lambda now: None, answers.append)
    coordinator.resign(coordinator.partition_of("app"))
    assert answers == ["NOT_COORDINATOR"] and len(coordinator.purgatory) == 0


# ------------------------------------------------------------ fencing and mixed clients
def test_a_new_instance_fences_a_zombie_blocked_in_begin() -> None:
    monitor = ProducerTxnInvariants()
    txns = _world(marker_delay_ms=150, monitor=monitor)
    old = _producer(txns, "app-1", monitor=monitor)
    assert old.transaction([("t", 0, 1), ("t", 1, 1)], commit=True)
    assert txns.cluster.sim.run_until_true(lambda: old.committed == [1], 10_000)
    old.begin_transaction({("t", 0)})  # held while the first one's markers are written
    old.send("t", 0, 1)
    txns.cluster.sim.run_for(50)
    assert len(_coordinator(txns).purgatory) == 1
    new = _producer(txns, "app-2", monitor=monitor)  # bounces until the markers land
    # the woken zombie opened its transaction first; the new instance's InitProducerId
    # fenced it (abort at epoch 1) while the zombie's produce was being verified (KIP-890:
    # the leader asks the coordinator, which answers PRODUCER_FENCED, told to the producer
    # as INVALID_PRODUCER_EPOCH, abortable), then took epoch 2
    assert old.state == TxnProducerState.ABORTABLE_ERROR
    assert old.last_error == "INVALID_PRODUCER_EPOCH"
    with pytest.raises(TxnClientError):
        old.end_transaction(commit=True)  # too late: the zombie's transaction was aborted
    old.end_transaction(commit=False)  # and its abort is fenced
    until_idle(txns, old, new)
    assert old.fatal == "PRODUCER_FENCED" and new.producer_epoch == 2
    assert new.concurrent_transactions_bounces > 0  # InitProducerId still bounces (classic)
    assert old.committed == [1]
    assert new.transaction([("t", 0, 1)], commit=True)
    until_idle(txns, new)
    assert committed_values(txns, "t", 0) == ["app/app-1/1/0", "app/app-2/1/0"]
    assert txns.cluster.sim.violation is None


def test_a_pre_registration_instance_fences_a_classic_one_with_the_same_id() -> None:
    txns = _world()
    old = _producer(txns, "app-1", "classic")
    new = _producer(txns, "app-2")
    assert old.transaction([("t", 0, 1)], commit=True)
    until_idle(txns, old)
    assert old.fatal == "PRODUCER_FENCED"
    assert new.transaction([("t", 0, 1)], commit=True)
    until_idle(txns, new)
    assert committed_values(txns, "t", 0) == ["app/app-2/1/0"]


def test_classic_and_pre_registration_clients_share_a_coordinator_under_invariants() -> None:
    monitor = ProducerTxnInvariants()
    txns = _world(marker_delay_ms=40, monitor=monitor)
    # two ids on the same __transaction_state partition: one coordinator serves both
    ids = [i for i in (f"id{n}" for n in range(50))
           if TransactionCoordinator.partition_of_id(i, CONFIG) == 0][:2]
    classic = _producer(txns, "c-1", "classic", txn_id=ids[0], monitor=monitor)
    pre = _producer(txns, "p-1", txn_id=ids[1], group_id=GROUP, monitor=monitor)
    sim = txns.cluster.sim
    for n in range(6):
        for producer in (classic, pre):
            assert producer.transaction([("t", n % 3, 1), ("t", (n + 1) % 3, 1)],
                                        commit=n != 3)
        assert sim.run_until_true(lambda: classic.idle and pre.idle, 30_000)
    until_idle(txns, classic, pre)
    assert sim.violation is None
    assert txns.find_coordinator(ids[0]) == txns.find_coordinator(ids[1])
    for producer in (classic, pre):
        assert producer.committed == [1, 2, 3, 5, 6] and producer.aborted == [4]
    assert pre.concurrent_transactions_bounces == 0
    assert pre.round_trips_per_txn < classic.round_trips_per_txn


def test_offsets_go_only_to_the_group_registered_at_begin() -> None:
    txns = _world()
    p = _producer(txns, "app-1", group_id=GROUP)
    other = "other-group"
    assert prereg.offsets_partition(other, 2) != prereg.offsets_partition(GROUP, 2)
    assert p.transaction([("t", 0, 1)], commit=True, group_id=other)
    assert txns.cluster.sim.run_until_true(lambda: p.registered_group == other, 5_000)
    assert p.check_offsets_group(other) == "NONE"
    assert p.check_offsets_group(GROUP) == "INVALID_GROUP_ID"
    until_idle(txns, p)
    assert _controls(txns, *prereg.offsets_partition(other, 2)) == ["COMMIT"]
    assert _controls(txns, *prereg.offsets_partition(GROUP, 2)) == []
    classic = _producer(txns, "c-1", "classic", txn_id="other-app")
    assert classic.check_offsets_group(GROUP) == "NONE"  # classic registers by AddOffsetsToTxn


def test_a_held_begin_past_the_request_timeout_is_sent_again() -> None:
    txns = _world(marker_delay_ms=150)
    p = TransactionalProducer(txns, "app", "app-1", protocol=PRE, request_timeout_ms=100)
    p.init_transactions()
    assert txns.cluster.sim.run_until_true(lambda: p.idle, 30_000)
    _back_to_back(txns, p)
    until_idle(txns, p)
    assert p.committed == [1, 2] and p.errors.get("REQUEST_TIMED_OUT", 0) >= 1
    assert p.concurrent_transactions_bounces == 0
    assert committed_values(txns, "t", 0) == ["app/app-1/1/0", "app/app-1/2/1"]


# ------------------------------------------------------------ the seed's EOS loop, end to end
@pytest.mark.parametrize("fault", [None, "coordinator", "producer"])
def test_the_eos_loop_is_exactly_once_with_pre_registration(fault: str | None) -> None:
    txn, eos = eos_monitors()
    cluster = KRaftCluster(ClusterConfig(seed=1, controllers=3, brokers=3),
                           extra_monitors=[txn, eos])
    cluster.start()
    world = EosWorld(cluster, EosSettings(records=20, protocol=PRE), txn, eos)
    assert world.setup()
    sim = cluster.sim
    sim.run_for(500)
    requests: list[str] = []
    world.start()
    loop = world.loops[0]
    assert loop.producer is not None
    loop.producer.on_request = requests.append
    assert sim.run_until_true(lambda: loop.committed_txns >= 1 and loop.busy, 30_000)
    if fault == "producer":
        loop.crash_producer()
    elif fault == "coordinator":
        broker = world.txns.find_coordinator(loop.name)
        assert broker is not None
        sim.apply_fault(parse_fault(f"crash:{broker}@{sim.now}"))
    assert sim.run_until_true(world.finished, 120_000), sim.violation
    sim.run_for(2_000)
    assert sim.violation is None
    check = world.final_check()
    assert (check.outputs, check.duplicates, check.missing, check.aborted_reads) == (20, 0, 0, 0)
    assert "AddOffsetsToTxn" not in requests and "AddPartitionsToTxn" not in requests
    assert "TxnOffsetCommit" in requests
    # begins never bounce; a restarted instance's InitProducerId still may (fence running)
    assert loop.producers[0].concurrent_transactions_bounces == 0


def test_end_txn_with_null_topics_marks_every_registered_partition() -> None:
    txns = _world()
    p = _producer(txns, "app-1")
    p.begin_transaction({("t", 1), ("t", 2)})
    until_idle(txns, p)
    assert p.registered == {("t", 1), ("t", 2)}
    answers: list[str] = []
    prereg.end_txn(_coordinator(txns), prereg.EndTxnPreRegRequest(
        "app", p.producer_id, p.producer_epoch, False, None), txns.cluster.sim.now,
        answers.append)
    txns.cluster.sim.run_for(2_000)
    assert answers == ["NONE"]
    assert [_controls(txns, "t", i) for i in range(3)] == [[], ["ABORT"], ["ABORT"]]


def test_send_offsets_to_another_group_than_registered_is_invalid_group_id() -> None:
    txn, eos = eos_monitors()
    cluster = KRaftCluster(ClusterConfig(seed=1, controllers=3, brokers=3),
                           extra_monitors=[txn, eos])
    cluster.start()
    world = EosWorld(cluster, EosSettings(records=5, protocol=PRE), txn, eos)
    assert world.setup()
    sim = cluster.sim
    sim.run_for(500)
    world.start()
    loop = world.loops[0]
    assert sim.run_until_true(world.finished, 60_000)
    loop.stop()
    producer = loop.producer
    assert producer is not None and producer.idle
    aborted = len(producer.aborted)
    assert producer.transaction([(OUTPUT_TOPIC, 0, 1)], commit=True, group_id=loop.group_id)
    producer.send_offsets_to_transaction({loop.input_tp: 5}, "another-group")
    assert sim.run_until_true(lambda: producer.idle, 30_000)
    assert producer.errors.get("INVALID_GROUP_ID") == 1
    assert len(producer.aborted) == aborted + 1
    assert sim.violation is None


def test_a_fork_of_a_world_with_a_held_begin_wakes_its_own_producer() -> None:
    """sim.fork shares frozen Structs: a held begin's callbacks must be the fork's own."""
    txns = _world(marker_delay_ms=150)
    p = _producer(txns, "app-1")
    _back_to_back(txns, p)
    txns.cluster.sim.run_for(50)
    assert len(_coordinator(txns).purgatory) == 1
    original = p
    forked_txns, copy = fork((txns, p))
    for world, producer in ((forked_txns, copy), (txns, original)):
        assert world.cluster.sim.run_until_true(lambda q=producer: q.idle, 30_000)
        assert producer.committed == [1, 2]
    assert copy is not original and copy.committed is not original.committed
