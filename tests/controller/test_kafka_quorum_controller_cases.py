"""Cases of Kafka's QuorumControllerTest (metadata/src/test/java/org/apache/kafka/controller/),
in kraftsim's terms: a simulated quorum of three controllers stands in for Kafka's
LocalLogManagerTestEnv, an OperationHandle for a controller future, the committed
image (the state at the last stable offset) for a controller read.

Also two cases that Kafka's test had on its 3.4 and 3.5 branches and later dropped
with the controller's own snapshot code: a non-atomic write cut by a failover
(testMissingInMemorySnapshot) and snapshots that go on after repeated
resignations (testSnapshotAfterRepeatedResign).

testRegisterBrokerKRaftVersions: kraft.version finalized by UpdateFeatures (kraftsim keeps
it among the image's features), then a broker's registration checked against it.

testUncleanShutdownBroker, testUncleanShutdownElrDisabled and testMinIsrUpdateWithElr:
eligible leader replicas (KIP-966), as Kafka 4.1 runs them (a cluster formatted at
4.1-IV0 has them on; its brokers are fenced by operations, not by session expiry).

Cases already ported elsewhere: testFatalMetadataReplayErrorOnActive
(test_fatal_replay_on_active.py); testAppendRecords and testAppendRecordsAtomically
(test_activation_and_write_modes.py: kraftsim refuses an oversized atomic write with
POLICY_VIOLATION where Kafka's appendRecords throws and fails over);
testActivationRecordsPartialTransaction and testActivationRecordsPartialTransactionNoSupport
(test_activation_and_write_modes.py, test_failover.py); the broker-lifecycle cases,
testFenceMultipleBrokers in test_broker_service.py and testUnregisterBroker in
test_kafka_broker_state_cases.py; and testBalancePartitionLeaders in
test_kafka_broker_state_cases.py and tests/sim/test_leader_balance_e2e.py (a broker fenced
by its session's expiry, back and in the ISR again, leads its preferred partitions again
at the imbalance check).

Cases left out, as kraftsim does not model what they test:
- testTimeouts: events timing out on the controller's queue (kraftsim has no queue: an
  operation runs when it is submitted).
- testActivationRecordsPartialBootstrap: a partial bootstrap transaction, unreachable in
  Kafka (see controller/activation.py).
- the authorizer's initial load.
"""

from __future__ import annotations

import pytest

from controller import ControllerConfig, QuorumController, WriteMode
from controller.activation import activation_records
from controller.operations import (
    AllocateProducerIds,
    AlterPartitionReassignments,
    ConfigChange,
    CreateTopics,
    DeleteTopics,
    ElectLeaders,
    FenceBroker,
    IncrementalAlterConfigs,
    ListPartitionReassignments,
    NewTopic,
    Operation,
    RegisterBroker,
    UnfenceBroker,
    UpdateFeatures,
)
from controller.operations.cluster import FeatureUpdate
from controller.operations.controllers import CONTROLLER_FEATURES, CONTROLLER_LISTENER
from metadata.bootstrap import BootstrapMetadata
from metadata.delta import BROKER_RESOURCE, TOPIC_RESOURCE, MetadataDelta
from metadata.image import NO_LEADER, MetadataImage, PartitionRegistration
from metadata.schema import (
    BeginTransactionRecord,
    BrokerFeature,
    BrokerRegistrationChangeRecord,
    ConfigRecord,
    EndTransactionRecord,
    FeatureLevelRecord,
    MetadataRecord,
    NoOpRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    RegisterControllerRecord,
    TopicRecord,
    UnfenceBrokerRecord,
    ZkMigrationStateRecord,
    is_marker,
)
from metadata.snapshot import image_from_records
from metadata.versions import LEVELS, MINIMUM_KRAFT
from raft import Batch, RaftConfig, Snapshot, SnapshotId
from raft.storage import ElectionState
from sim.cluster import ClusterConfig, KRaftCluster
from sim.faults import parse_fault
from tests.controller.conftest import cluster

MV = "metadata.version"


def _quorum(seed: int, *, level: int = 22, batch: int = 100, noop_ms: int = 0,
            snapshot_every: int = 0, bootstrap: BootstrapMetadata | None = None,
            initial_snapshot: Snapshot | None = None) -> KRaftCluster:
    """Three controllers, no brokers (operations register them), not started."""
    config = ClusterConfig(seed=seed, brokers=0, controller=ControllerConfig(
        max_records_per_batch=batch, bootstrap_metadata_version=level, noop_interval_ms=noop_ms,
        snapshot_every_records=snapshot_every), raft=RaftConfig(fetch_max_records=batch))
    return KRaftCluster(config, initial_snapshot=initial_snapshot, bootstrap=bootstrap)


def _run(c: KRaftCluster, op: Operation, mode: WriteMode | None = None) -> str:
    handle = c.submit(op, mode)
    assert c.wait(handle, 20_000), handle
    return handle.outcome()


def _settled(c: KRaftCluster) -> QuorumController:
    """Run until a controller is active and has committed its whole log, then is idle."""
    active = c.run_until_active()
    assert active is not None
    end = active.raft.log.end_offset
    assert c.run_until(lambda: active.offsets.last_committed_offset >= end - 1, 10_000)
    assert c.run_until(c.idle, 10_000), c.sim.violation
    return active


def _data_records(c: KRaftCluster) -> list[MetadataRecord]:
    """The active controller's log, data records only, periodic NoOps left out."""
    active = c.active_controller()
    assert active is not None
    return [r for b in active.raft.log.batches if not b.is_control for r in b.records
            if not isinstance(r, NoOpRecord)]


# ---------------------------------------------------------------- operations and reads


def test_a_config_set_is_read_back_once_committed() -> None:
    """testConfigurationOperations: a validate-only request succeeds and changes nothing;
    the same request then sets the config."""
    c = cluster(seed=41)
    active = c.active_controller()
    assert active is not None
    assert (BROKER_RESOURCE, "0") not in active.committed_image().configs
    change = (ConfigChange("min.insync.replicas", "2"),)
    end = active.raft.log.end_offset
    check = c.submit(IncrementalAlterConfigs(BROKER_RESOURCE, "0", change, validate_only=True))
    assert c.wait(check) and check.outcome() == "committed" and check.record_count == 0
    assert active.raft.log.end_offset == end
    assert (BROKER_RESOURCE, "0") not in active.committed_image().configs
    bad = c.submit(IncrementalAlterConfigs(BROKER_RESOURCE, "0", (
        ConfigChange("min.insync.replicas", "two"),), validate_only=True))
    assert c.wait(bad) and bad.outcome() == "INVALID_REQUEST"  # Kafka's KAFKA-13609
    op = IncrementalAlterConfigs(BROKER_RESOURCE, "0", change)
    assert _run(c, op) == "committed"
    assert dict(active.committed_image().configs[(BROKER_RESOURCE, "0")]) == {
        "min.insync.replicas": "2"}


def test_a_write_completes_only_when_committed_and_reads_do_not_see_it_before() -> None:
    """testDelayedConfigurationOperations: the future waits for the commit; a read at the
    same time does not see the change."""
    c = cluster(seed=42)
    active = c.active_controller()
    assert active is not None
    handle = c.submit(IncrementalAlterConfigs(BROKER_RESOURCE, "0", (
        ConfigChange("min.insync.replicas", "2"),)))
    assert handle.last_offset >= 0 and not handle.done  # appended, not committed yet
    assert active.image.configs[(BROKER_RESOURCE, "0")]["min.insync.replicas"] == "2"
    assert (BROKER_RESOURCE, "0") not in active.committed_image().configs
    assert c.wait(handle) and handle.outcome() == "committed"
    assert active.offsets.last_stable_offset >= handle.last_offset
    assert (BROKER_RESOURCE, "0") in active.committed_image().configs


def test_empty_requests_complete_at_once_without_waiting_or_writing() -> None:
    """testEarlyControllerResults: a request with nothing in it completes at once, even
    behind a pending write and on a controller that is not active (an election naming no
    partition too; naming none at all, None, means every partition; a reassignment of no
    topic, and a listing of none, which Kafka answers at once too)."""
    c = cluster(seed=43, batch=10, fetch=10)
    active = c.active_controller()
    assert active is not None
    pending = c.submit(CreateTopics((NewTopic("big", 40, 3),)))
    assert not pending.done
    end = active.raft.log.end_offset
    standby = next(c.controller(n) for n in c.config.controller_ids if n != active.node_id)
    assert standby is not None
    for op in (CreateTopics(()), DeleteTopics(()), ElectLeaders("PREFERRED", ()),
               AlterPartitionReassignments(()), ListPartitionReassignments(())):
        for node in (active.node_id, standby.node_id):
            handle = c.submit(op, node_id=node)
            assert handle.done and handle.outcome() == "committed", (op, node, handle)
            assert handle.record_count == 0
    assert active.raft.log.end_offset == end
    assert not pending.done
    assert c.wait(pending) and pending.outcome() == "committed"


def test_config_resources_must_exist() -> None:
    """testConfigResourceExistenceChecker: the cluster default, a registered broker, a
    controller and an existing topic may get configs; an unknown broker or topic not."""
    c = cluster(seed=44)
    assert _run(c, CreateTopics((NewTopic("foo", 1, 3),))) == "committed"
    key = (ConfigChange("min.insync.replicas", "2"),)
    controller_id = c.config.controller_ids[0]
    for name in ("", "2", str(controller_id)):
        assert _run(c, IncrementalAlterConfigs(BROKER_RESOURCE, name, key)) == "committed", name
    unknown = c.submit(IncrementalAlterConfigs(BROKER_RESOURCE, "10", key))
    assert unknown.outcome() == "BROKER_ID_NOT_REGISTERED"
    assert unknown.error is not None and unknown.error.message == "No node with id 10 found."
    topic_key = (ConfigChange("retention.ms", "1000"),)
    assert _run(c, IncrementalAlterConfigs(TOPIC_RESOURCE, "foo", topic_key)) == "committed"
    missing = c.submit(IncrementalAlterConfigs(TOPIC_RESOURCE, "bar", topic_key))
    assert missing.outcome() == "UNKNOWN_TOPIC_OR_PARTITION"


def test_noop_records_move_the_high_watermark_of_an_idle_quorum() -> None:
    """testNoOpRecordWriteAfterTimeout: twice, so the leader's epoch start does not count."""
    c = _quorum(45, noop_ms=500)
    c.start(register_brokers=False)
    active = _settled(c)
    for _ in range(2):
        before = active.raft.high_watermark
        assert before is not None
        assert c.run_until(lambda b=before: (active.raft.high_watermark or 0) > b, 5_000)
    noops = sum(isinstance(r, NoOpRecord) for b in active.raft.log.batches for r in b.records)
    assert noops >= 2 and active.raft.log.batches[-1].records == (NoOpRecord(),)


def test_the_log_holds_the_bootstrap_transaction_then_each_operation_and_reloads() -> None:
    """testSnapshotSaveAndLoad: the records written, in order, at metadata.version 3.7-IV0;
    and every controller, restarted, replays them to the same state."""
    c = _quorum(46, level=LEVELS["3.7-IV0"])
    c.start(register_brokers=False)
    assert c.run_until_active() is not None
    assert c.run_until(c.controllers_registered, 10_000)  # Kafka's test registers them first
    for broker in range(4):
        assert _run(c, RegisterBroker(broker, port=9092 + broker)) == "committed"
    for broker in range(3):
        assert _run(c, UnfenceBroker(broker)) == "committed"
    assert _run(c, CreateTopics((NewTopic("foo", 2, 3),))) == "committed"
    assert _run(c, AllocateProducerIds(0)) == "committed"
    records = _data_records(c)
    assert records[:4] == [BeginTransactionRecord("Bootstrap records"),
                           FeatureLevelRecord(MV, LEVELS["3.7-IV0"]), ZkMigrationStateRecord(0),
                           EndTransactionRecord()]
    # each controller registered itself once the bootstrap committed (KIP-919), with the
    # CONTROLLER listener and the features it supports
    own = records[4:7]
    assert all(isinstance(r, RegisterControllerRecord) for r in own)
    assert sorted(r.controller_id for r in own) == list(c.config.controller_ids)
    assert all(r.end_points == (CONTROLLER_LISTENER,) and r.features == CONTROLLER_FEATURES
               for r in own)
    assert [type(r) for r in records[7:]] == [
        *[RegisterBrokerRecord] * 4, *[BrokerRegistrationChangeRecord] * 3, TopicRecord,
        PartitionRecord, PartitionRecord, ProducerIdsRecord]
    registrations = [r for r in records if isinstance(r, RegisterBrokerRecord)]
    assert [(r.broker_id, r.fenced, r.end_points[0].port) for r in registrations] == [
        (0, True, 9092), (1, True, 9093), (2, True, 9094), (3, True, 9095)]
    assert records[-1] == ProducerIdsRecord(broker_id=0, broker_epoch=registrations[0].broker_epoch,
                                            next_producer_id=1000)
    assert c.run_until(c.idle, 10_000)
    before = image_from_records((r for r in records if not is_marker(r)), 0, 0)
    for node in c.config.controller_ids:
        c.sim.crash(node)
    for node in c.config.controller_ids:
        c.sim.restart(node)
    assert c.run_until(c.idle, 30_000), c.sim.violation
    assert c.run_until(c.controllers_registered, 10_000)
    assert c.run_until(c.idle, 30_000), c.sim.violation
    # the restarted processes registered again, with new incarnation ids: the state is what
    # the log written before says, with the new registrations replayed over it
    again = [r for r in _data_records(c)[len(records):]
             if isinstance(r, RegisterControllerRecord)]
    assert sorted(r.controller_id for r in again) == list(c.config.controller_ids)
    assert not {r.incarnation_id for r in again} & {r.incarnation_id for r in own}
    after = image_from_records((r for r in (*records, *again) if not is_marker(r)), 0, 0)
    assert not after.same_content(before)
    for node in c.config.controller_ids:
        controller = c.controller(node)
        assert controller is not None
        assert controller.committed_image().same_content(after)


# ---------------------------------------------------------------- fatal faults while loading


def _faults_on_every_controller(c: KRaftCluster) -> set[int]:
    """Start the quorum; a controller whose fault stopped it is restarted (a supervisor
    would) until every controller has stopped on the fault at least once."""
    c.sim.start()
    everyone = set(c.config.controller_ids)

    def faulted() -> set[int]:
        return {node for node, _, _ in c.controller_faults}

    for _ in range(10):
        if faulted() >= everyone:
            break
        seen = len(c.controller_faults)
        c.sim.run_until_true(lambda n=seen: len(c.controller_faults) > n, 10_000)
        # the log's checker flags the record too; go on to see every controller stop
        c.sim.violation = None
        c.sim.run_until_true(lambda: False, 100)  # the faulted process exits
        c.sim.violation = None
        for node in everyone:
            if not c.sim.slots[node].running:
                c.sim.restart(node)
    assert c.active_controller() is None or c.active_controller().fault is None
    return faulted()


def test_a_record_that_cannot_apply_in_the_initial_snapshot_stops_every_controller() -> None:
    """testFatalMetadataErrorDuringSnapshotLoading: a PartitionRecord of no known topic."""
    c = _quorum(47)
    bad = Snapshot(SnapshotId(0, 0), (PartitionRecord(0, "AAAAAAAAAAAAAAAAAAAAAQ", (0,), (0,)),))
    for node in c.config.controller_ids:
        c.sim.slots[node].storage.log.install_snapshot(bad)
    assert _faults_on_every_controller(c) == set(c.config.controller_ids)
    assert all("snapshot" in message for _, _, message in c.controller_faults)


def test_a_record_that_cannot_apply_in_the_log_stops_every_controller() -> None:
    """testFatalMetadataErrorDuringLogLoading: the same record as the log's first."""
    c = _quorum(48)
    for node in c.config.controller_ids:
        storage = c.sim.slots[node].storage
        storage.log.append(Batch(0, 1, (PartitionRecord(0, "AAAAAAAAAAAAAAAAAAAAAQ", (0,),
                                                        (0,)),)), flushed=True)
        storage.write_election(ElectionState(epoch=1))
    assert _faults_on_every_controller(c) == set(c.config.controller_ids)
    assert all("PARTITION_RECORD" in message for _, _, message in c.controller_faults)


# ---------------------------------------------------------------- bootstrap and activation

PRE_PRODUCTION = Snapshot(SnapshotId(0, 0), (
    RegisterBrokerRecord(123, "v78Gbc6sQXK0y5qqRxiryw", broker_epoch=42),
    UnfenceBrokerRecord(123, 42),
    TopicRecord("bar", "cxBT72dK4si8Ied1iP4wBA"),
))
"""A log from before metadata.version existed (no FeatureLevelRecord)."""

COMPLEX_BOOTSTRAP = BootstrapMetadata.from_records(
    (FeatureLevelRecord(MV, LEVELS["3.3-IV1"]), ConfigRecord(BROKER_RESOURCE, "", "foo", "bar")),
    "test bootstrap")


def test_a_log_from_before_metadata_version_keeps_3_0_iv1_and_gets_no_bootstrap() -> None:
    """testUpgradeFromPreProductionVersion: bootstrap records are never written to a log
    that has records, so metadata.version stays 3.0-IV1 and the bootstrap config is absent."""
    c = _quorum(49, bootstrap=COMPLEX_BOOTSTRAP, initial_snapshot=PRE_PRODUCTION)
    c.start(register_brokers=False)
    active = _settled(c)
    image = active.committed_image()
    assert image.metadata_version == MINIMUM_KRAFT
    assert (BROKER_RESOURCE, "") not in image.configs
    assert image.topic("bar") is not None and image.brokers[123].epoch == 42
    assert active.activations[0][1] == []


def test_bootstrap_records_are_written_to_an_empty_log() -> None:
    """testInsertBootstrapRecordsToEmptyLog: every bootstrap record, not only the version;
    below 3.6-IV1 in one batch without markers (and below 3.4-IV0 without the ZK state)."""
    c = _quorum(50, bootstrap=COMPLEX_BOOTSTRAP)
    c.start(register_brokers=False)
    active = _settled(c)
    image = active.committed_image()
    assert image.metadata_version == LEVELS["3.3-IV1"]
    assert dict(image.configs[(BROKER_RESOURCE, "")]) == {"foo": "bar"}
    assert _data_records(c)[:2] == list(COMPLEX_BOOTSTRAP.records)
    [first] = [b for b in active.raft.log.batches if not b.is_control][:1]
    assert first.records == COMPLEX_BOOTSTRAP.records


def test_a_cluster_formatted_at_the_default_release_finalizes_group_version() -> None:
    """With no bootstrap.checkpoint given, the first leader writes what Kafka's Formatter
    writes at kraftsim's default release (4.0-IV0): metadata.version, then group.version 1
    (GroupVersion.GV_1 bootstraps at 4.0-IV0), in the bootstrap transaction; a
    registration naming no group.version range is refused, as Kafka's broker supporting
    it at 0 only would be."""
    c = _quorum(51)
    c.start(register_brokers=False)
    active = _settled(c)
    assert _data_records(c)[:5] == [BeginTransactionRecord("Bootstrap records"),
                                    FeatureLevelRecord(MV, LEVELS["4.0-IV0"]),
                                    FeatureLevelRecord("group.version", 1),
                                    ZkMigrationStateRecord(0), EndTransactionRecord()]
    assert dict(active.committed_image().features) == {MV: LEVELS["4.0-IV0"],
                                                      "group.version": 1}
    handle = c.submit(RegisterBroker(0, features=(BrokerFeature(MV, 1, LEVELS["4.0-IV0"]),)))
    assert c.wait(handle, 20_000) and handle.error is not None
    assert handle.error.message == (
        "Unable to register because the broker does not support finalized version 1 of "
        "group.version. The broker wants a version between 0 and 0, inclusive.")


def test_activation_records_set_the_bootstrap_version_and_no_zk_migration() -> None:
    """testActivationRecords33, testActivationRecords34 and testActivationRecordsNonEmptyLog
    (which, despite its name, activates on an empty log at 3.9-IV0): replayed, the
    activation records give the bootstrap's metadata.version and ZK migration state NONE."""
    for release in ("3.3-IV0", "3.4-IV0", "3.9-IV0"):
        level = LEVELS[release]
        result = activation_records(True, -1, MINIMUM_KRAFT,
                                     BootstrapMetadata.from_version(level, "test"))
        delta = MetadataDelta(MetadataImage.EMPTY)
        delta.replay_all(r for r in result.records if not is_marker(r))
        image = delta.apply(len(result.records) - 1, 1)
        assert image.metadata_version == level
        assert image.zk_migration_state == 0
        assert result.atomic is (level < LEVELS["3.6-IV1"])


# ---------------------------------------------------------------- failover (3.4/3.5 branches)


def test_a_non_atomic_write_cut_by_a_failover_keeps_its_committed_prefix() -> None:
    """testMissingInMemorySnapshot: the leader loses leadership after the first batches of
    a non-atomic write commit; the operation fails, the committed prefix stays, the rest
    never appears, and the new state is the committed log's."""
    c = cluster(seed=51, batch=10, fetch=10, noop_ms=0)
    active = c.active_controller()
    assert active is not None
    handle = c.submit(CreateTopics((NewTopic("t", 29, 3),)), WriteMode.NON_ATOMIC)
    assert handle.batch_count == 3 and not handle.transactional
    first_end = handle.first_offset + 10
    assert c.run_until(lambda: (active.raft.high_watermark or 0) >= first_end, 5_000)
    c.sim.apply_fault(parse_fault(f"isolate:{active.node_id}@0"))
    c.run_until(lambda: handle.done, 20_000)
    assert handle.outcome() == "NOT_CONTROLLER"
    c.sim.apply_fault(parse_fault("heal@0"))
    assert c.run_until(c.idle, 30_000), c.sim.violation
    new = c.active_controller()
    assert new is not None
    topic = new.committed_image().topic("t")
    assert topic is not None and 9 <= len(topic.partitions) < 29
    for node in c.config.controller_ids:
        controller = c.controller(node)
        assert controller is not None
        assert controller.committed_state().image.same_content(
            c.txn_invariants.reference.image_at(controller.offsets.last_committed_offset))


def test_snapshots_go_on_after_repeated_resignations() -> None:
    """testSnapshotAfterRepeatedResign: a leader change between writes does not stop the
    next leader from taking snapshots."""
    c = cluster(seed=52, batch=10, fetch=10, snapshot_every=30, noop_ms=0)
    leaders = set()
    for i in range(4):
        active = c.active_controller()
        assert active is not None
        leaders.add(active.node_id)
        assert _run(c, CreateTopics((NewTopic(f"foo-{i}", 5, 3),))) == "committed"
        c.sim.act("resign", lambda a=active: a.raft.resign(c.sim.now))
        assert c.run_until(lambda old=active: (a := c.active_controller()) is not None
                           and a is not old, 10_000), c.sim.violation
    assert c.run_until(c.idle, 20_000)
    assert len(leaders) > 1
    active = c.active_controller()
    assert active is not None
    snapshot = active.raft.log.snapshot
    assert snapshot is not None
    assert snapshot.snapshot_id.end_offset > 30


@pytest.mark.parametrize(("finalized", "broker_max"), [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_register_broker_kraft_versions(finalized: int, broker_max: int) -> None:
    """testRegisterBrokerKRaftVersions: with kraft.version finalized at 1, a broker whose
    registration supports only 0 (or names no kraft.version range, as Kafka's broker does
    for a feature it supports at 0 only) is refused UNSUPPORTED_VERSION in Kafka's words;
    every other registration is written, with a broker epoch past the bootstrap's. As in
    Kafka's QuorumControllerTestEnv, the bootstrap holds metadata.version alone: a formatted
    one would finalize group.version 1, which these registrations do not name."""
    c = _quorum(1, bootstrap=BootstrapMetadata.from_version(22, "test-provided version"))
    c.start()
    _settled(c)
    if finalized:
        assert _run(c, UpdateFeatures((FeatureUpdate("kraft.version", finalized),))) == \
            "committed"
    features = [BrokerFeature(MV, LEVELS["3.0-IV1"], max(LEVELS.values()))]
    if broker_max:
        features.append(BrokerFeature("kraft.version", 0, broker_max))
    handle = c.submit(RegisterBroker(0, incarnation_id="kxAT73dKQsitIedpiPtwBA",
                                     features=tuple(features),
                                     log_dirs=("vBpaRsZVSaGsQT53wtYGtg",)))
    assert c.wait(handle, 20_000)
    image = c.active_controller().image  # type: ignore[union-attr]
    if broker_max < finalized:
        assert handle.error is not None
        assert (handle.error.code, handle.error.message) == (
            "UNSUPPORTED_VERSION",
            f"Unable to register because the broker does not support finalized version "
            f"{finalized} of kraft.version. The broker wants a version between 0 and "
            f"{broker_max}, inclusive.")
        assert 0 not in image.brokers
    else:
        assert handle.error is None
        assert handle.response["brokerEpoch"] >= 5  # type: ignore[index]
        assert image.brokers[0].epoch == handle.response["brokerEpoch"]  # type: ignore


def _elr_quorum(seed: int, level: str = "4.1-IV0") -> tuple[KRaftCluster, QuorumController]:
    """A quorum formatted at ``level`` with brokers 1-3 registered and unfenced."""
    c = _quorum(seed, level=LEVELS[level])
    c.start()
    active = _settled(c)
    for broker in (1, 2, 3):
        assert _run(c, RegisterBroker(broker, incarnation_id=f"first-{broker}")) == "committed"
        assert _run(c, UnfenceBroker(broker)) == "committed"
    return c, active


def _foo(active: QuorumController, name: str = "foo") -> PartitionRegistration:
    topic = active.image.topic(name)
    assert topic is not None
    return topic.partitions[0]


def test_unclean_shutdown_broker() -> None:
    """testUncleanShutdownBroker, as Kafka 4.1 runs it: a cluster formatted at 4.1-IV0
    starts with eligible leader replicas on (and the cluster's min.insync.replicas 1 that
    they need); ``foo`` over brokers 1-3 with min.insync.replicas 2 loses all three: the
    ISR empties, two replicas are eligible and lastKnownElr keeps the last leader. The
    last leader registers again after an unclean shutdown: it leaves the ELR and stays in
    lastKnownElr; the other eligible broker registers again after a clean one (naming the
    broker epoch it held) and stays eligible; unfenced, it is elected cleanly and the ELR
    and lastKnownElr empty."""
    c, active = _elr_quorum(7)
    image = active.committed_image()
    assert image.features.get("eligible.leader.replicas.version") == 1
    assert image.configs[(BROKER_RESOURCE, "")]["min.insync.replicas"] == "1"
    assert _run(c, CreateTopics((NewTopic("foo", 1, 3),))) == "committed"
    assert _run(c, IncrementalAlterConfigs(TOPIC_RESOURCE, "foo", (
        ConfigChange("min.insync.replicas", "2"),))) == "committed"
    for broker in (1, 2, 3):
        assert _run(c, FenceBroker(broker)) == "committed"
    reg = _foo(active)
    last_known = reg.last_known_elr or ()
    elr = reg.eligible_leader_replicas or ()
    assert (reg.isr, reg.leader, len(last_known), len(elr)) == ((), NO_LEADER, 1, 2)
    unclean = last_known[0]
    to_lead = elr[1] if elr[0] == unclean else elr[0]
    assert _run(c, RegisterBroker(unclean, incarnation_id=f"second-{unclean}")) == "committed"
    reg = _foo(active)
    assert (reg.eligible_leader_replicas, reg.last_known_elr) == ((to_lead,), last_known)
    epoch = active.image.brokers[to_lead].epoch
    assert _run(c, RegisterBroker(to_lead, incarnation_id=f"second-{to_lead}",
                                  previous_broker_epoch=epoch)) == "committed"
    reg = _foo(active)
    assert (reg.eligible_leader_replicas, reg.last_known_elr) == ((to_lead,), last_known)
    assert _run(c, UnfenceBroker(to_lead)) == "committed"
    reg = _foo(active)
    assert (reg.isr, reg.leader) == ((to_lead,), to_lead)
    assert not reg.eligible_leader_replicas and not reg.last_known_elr


def test_unclean_shutdown_elr_disabled() -> None:
    """testUncleanShutdownElrDisabled: at 4.0-IV0 (no ELR) each leader of ``foo`` in turn
    registers again as a new incarnation (its old session not yet fenced): it leaves the
    ISR and the leadership moves (the leader epoch with it); the last one stays in the
    ISR, with no leader; no ELR is ever written."""
    c, active = _elr_quorum(8, level="4.0-IV0")
    assert _run(c, CreateTopics((NewTopic("foo", 1, 3),))) == "committed"
    reg = _foo(active)
    for step in range(3):
        assert not reg.eligible_leader_replicas and not reg.last_known_elr
        leader, epoch = reg.leader, reg.leader_epoch
        assert _run(c, RegisterBroker(leader, incarnation_id=f"step{step}-{leader}")) == \
            "committed"
        reg = _foo(active)
        assert reg.leader != leader and reg.leader_epoch != epoch
        if step == 2:
            assert (reg.isr, reg.leader) == ((leader,), NO_LEADER)
        else:
            assert leader not in reg.isr


def test_min_isr_update_with_elr() -> None:
    """testMinIsrUpdateWithElr: the cluster's min.insync.replicas 2, ``foo`` and ``bar``
    over brokers 1-3, brokers 2 and 3 fenced: each has ISR [1] and one eligible replica.
    Lowering ``foo``'s min.insync.replicas to 1 writes the config and a ClearElrRecord for
    ``foo``, which empties its ELR; lowering the cluster's does the same for every topic,
    ``bar`` among them."""
    c, active = _elr_quorum(9)
    assert _run(c, CreateTopics((NewTopic("foo", 1, 3), NewTopic("bar", 1, 3)))) == \
        "committed"
    assert _run(c, IncrementalAlterConfigs(BROKER_RESOURCE, "", (
        ConfigChange("min.insync.replicas", "2"),))) == "committed"
    for broker in (2, 3):
        assert _run(c, FenceBroker(broker)) == "committed"
    for name in ("foo", "bar"):
        reg = _foo(active, name)
        assert len(reg.eligible_leader_replicas or ()) == 1 and len(reg.isr) == 1
    handle = c.submit(IncrementalAlterConfigs(TOPIC_RESOURCE, "foo", (
        ConfigChange("min.insync.replicas", "1"),)))
    assert c.wait(handle, 20_000) and handle.record_count == 2
    assert not _foo(active).eligible_leader_replicas
    assert _foo(active, "bar").eligible_leader_replicas
    handle = c.submit(IncrementalAlterConfigs(BROKER_RESOURCE, "", (
        ConfigChange("min.insync.replicas", "1"),)))
    assert c.wait(handle, 20_000) and handle.record_count == 2
    reg = _foo(active, "bar")
    assert not reg.eligible_leader_replicas and len(reg.isr) == 1
