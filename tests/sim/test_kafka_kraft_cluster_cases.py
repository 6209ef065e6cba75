"""Whole-cluster scenarios, following Kafka's KRaftClusterTest
(core/src/test/scala/integration/kafka/server/).

Kafka's test builds real clusters with its KafkaClusterTestKit (brokers 0..B-1, controllers
3000..) and drives them through an Admin client. Here each cluster is a
:class:`~sim.cluster.KRaftCluster` of the same shape, started by :mod:`sim.startup` (the
brokers register and heartbeat by themselves); an admin request is a controller operation
submitted to the active controller and resubmitted after a retriable error (NOT_CONTROLLER
during a failover, as Kafka's Admin client retries); what Kafka reads back through a broker
(listTopics, describeConfigs, describeFeatures, the metadata cache's cluster image) is read
from a running broker's published image, waiting until it shows the change (Kafka's
``waitUntilTrue``/``retry``). Kafka's per-resource results of a batch (createTopics,
createPartitions, incrementalAlterConfigs of several resources) are one operation per
resource here, except CreateTopics, which takes several topics and answers each.
Client quotas are altered by :class:`~controller.operations.AlterClientQuotas` (Kafka's
ClientQuotaControlManager) and described by a broker from its image with
:func:`broker.metadata_cache.describe_client_quotas` (Kafka's ClientQuotasImage.describe);
an entity is its (type, name) pairs, a None name the type's default. A DescribeCluster sent
to a controller (KIP-919: an Admin client bootstrapping from the controllers) is answered
by :func:`controller.describe_cluster.describe_cluster_controllers` from that controller's
published image.

Not ported:

- testCreateClusterWithAdvertisedPortZero: socket servers and bound ports are not
  modelled (Kafka's broker advertises its bound port in place of 0; kraftsim refuses a
  registration with port 0, as Kafka's ListenerInfo would).
- testSetLog4jConfigurations: BROKER_LOGGER resources (log4j) are not modelled.
- testLegacyAlterConfigs: the legacy (non-incremental) AlterConfigs API is not modelled.
- testRemoteLogManagerInstantiation,
  testCreateClusterAndCreateTopicWithRemoteLogManagerInstantiation: tiered storage and its
  RemoteLogManager are not modelled.
- testSnapshotCount: snapshots are made after a count of records
  (``snapshot_every_records``), not on Kafka's time interval
  (metadata.log.max.snapshot.interval.ms), and snapshot files and emitter metrics are not
  modelled (controller snapshots: RaftClusterSnapshotTest's port).
- testAuthorizerFailureFoundInControllerStartup, testReconfigureControllerAuthorizer:
  authorizers are not modelled.
- testReconfigureControllerClientQuotas: pluggable client quota callbacks are not modelled.
- testIncreaseNumIoThreads: request handler thread pools are not modelled (the bootstrap
  half of testStartupWithNonDefaultKControllerDynamicConfiguration is ported; its thread
  pool size is not).
- testAbandonedFutureReplicaRecovered_mainReplicaInOfflineLogDir,
  testAbandonedFutureReplicaRecovered_mainReplicaInOnlineLogDir: multiple log directories
  per broker and future replicas (AlterReplicaLogDirs) are not modelled.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from broker.config import BrokerConfig
from broker.lifecycle import BrokerLifecycleManager, BrokerState
from broker.metadata_cache import (
    MATCH_TYPE_DEFAULT,
    MATCH_TYPE_SPECIFIED,
    DescribedBroker,
    QuotaFilterComponent,
    describe_client_quotas,
    describe_cluster,
)
from controller import ControllerConfig
from controller.describe_cluster import describe_cluster_controllers
from controller.errors import ApiError
from controller.handle import OperationHandle
from controller.operations import (
    AlterClientQuotas,
    AlterPartitionReassignments,
    ConfigChange,
    CreatePartitions,
    CreateTopics,
    DeleteTopics,
    FeatureUpdate,
    IncrementalAlterConfigs,
    ListPartitionReassignments,
    NewTopic,
    Operation,
    QuotaAlteration,
    ReassignablePartition,
    ReassignableTopic,
    RegisterBroker,
    UnregisterBroker,
    UpdateFeatures,
)
from controller.operations.reassignments import list_partition_reassignments
from metadata.bootstrap import BootstrapError, BootstrapMetadata
from metadata.delta import BROKER_RESOURCE, TOPIC_RESOURCE
from metadata.image import MetadataImage
from metadata.schema import ConfigRecord, FeatureLevelRecord, NoOpRecord
from metadata.versions import (
    LEVELS,
    METADATA_VERSION_FEATURE,
    MINIMUM_BOOTSTRAP,
    PRE_KRAFT,
    SUPPORTED_FEATURES,
)
from raft import Errors
from raft.config import ConfigError
from raft.quorum_info import QuorumDescription, ReplicaDescription
from sim.brokers import BrokerSettings
from sim.cluster import ClusterConfig, KRaftCluster

WAIT_MS = 60_000
"""How long a wait may run (simulated ms), as Kafka's waitUntilTrue's default."""
LATEST_TESTING = SUPPORTED_FEATURES[METADATA_VERSION_FEATURE][1]
"""Kafka's MetadataVersion.latestTesting(): the highest metadata.version kraftsim knows."""


def _started(brokers: int, controllers: int, seed: int = 7,
             metadata_version: int | None = None) -> KRaftCluster:
    """A cluster of Kafka's test kit's shape, formatted and started: every broker registered
    and unfenced (Kafka's startup and waitForReadyBrokers)."""
    controller = ControllerConfig() if metadata_version is None else \
        ControllerConfig(bootstrap_metadata_version=metadata_version)
    cluster = KRaftCluster(ClusterConfig(seed=seed, brokers=brokers, controllers=controllers,
                                         controller=controller))
    assert cluster.start()
    return cluster


def _call(cluster: KRaftCluster, operation: Operation) -> OperationHandle:
    """An admin request: submitted to the active controller until it is answered other than
    retriably (Kafka's Admin client retries NOT_CONTROLLER)."""
    while True:
        assert cluster.run_until_active(WAIT_MS) is not None
        handle = cluster.submit(operation)
        assert cluster.wait(handle, WAIT_MS)
        if handle.error is None or not handle.error.retriable:
            return handle


def _ok(cluster: KRaftCluster, operation: Operation) -> object:
    """An admin request that must succeed: its response."""
    handle = _call(cluster, operation)
    assert handle.error is None, handle.error
    return handle.response


def _refused(cluster: KRaftCluster, operation: Operation) -> ApiError:
    """An admin request that must fail: its error."""
    handle = _call(cluster, operation)
    assert handle.error is not None
    return handle.error


def _image(cluster: KRaftCluster, broker: int) -> MetadataImage:
    """What broker ``broker``'s metadata cache holds (its published image)."""
    loader = cluster.loader(broker)
    assert loader is not None and loader.published is not None
    return loader.published


def _eventually(cluster: KRaftCluster, predicate: Callable[[], bool]) -> None:
    """Kafka's waitUntilTrue: run until ``predicate`` holds."""
    assert cluster.run_until(predicate, WAIT_MS)


def _broker_images(cluster: KRaftCluster) -> list[MetadataImage]:
    """The published images of the running brokers."""
    return [_image(cluster, b) for b in cluster.config.broker_ids
            if cluster.sim.slots[b].running]


def _wait_for_topic_listing(cluster: KRaftCluster, expected: list[str],
                            not_expected: list[str]) -> None:
    """Kafka's waitForTopicListing: every running broker lists the expected topics and none
    of the others."""
    def listed() -> bool:
        return all(all(t in image.topics_by_name for t in expected)
                   and not any(t in image.topics_by_name for t in not_expected)
                   for image in _broker_images(cluster))
    _eventually(cluster, listed)


def _lifecycle(cluster: KRaftCluster, broker: int) -> BrokerLifecycleManager:
    """Broker ``broker``'s lifecycle manager (its BrokerState)."""
    found = next(a for a in cluster.sim.slots[broker].apps
                 if isinstance(a, BrokerLifecycleManager))
    assert isinstance(found, BrokerLifecycleManager)
    return found


def _running(cluster: KRaftCluster, broker: int) -> bool:
    slot = cluster.sim.slots[broker]
    return slot.running and _lifecycle(cluster, broker).state is BrokerState.RUNNING


def test_create_cluster_and_close() -> None:
    """testCreateClusterAndClose: one controller and one broker start (and the broker is
    unfenced); closing is dropping the simulation."""
    cluster = _started(brokers=1, controllers=1)
    assert cluster.brokers_unfenced()
    assert cluster.sim.violation is None


def test_create_cluster_and_perform_reassignment() -> None:
    """testCreateClusterAndPerformReassignment: four partitions of foo reassigned at once
    (a reordering, another, a shrink to two replicas, a growth to four); the reassignments
    complete (none listed), every broker's metadata shows the new replica lists, and each
    broker's replica manager hosts exactly the partitions it is a replica of."""
    cluster = _started(brokers=4, controllers=3)
    _ok(cluster, CreateTopics((NewTopic("foo", -1, -1, assignments=(
        (0, 1, 2), (1, 2, 3), (2, 3, 0), (3, 2, 1))),)))
    _wait_for_topic_listing(cluster, ["foo"], [])
    assert _ok(cluster, ListPartitionReassignments()) == {"topics": []}
    targets = ((2, 1, 0), (0, 1, 2), (2, 3), (3, 2, 0, 1))
    answer = _ok(cluster, AlterPartitionReassignments((ReassignableTopic("foo", tuple(
        ReassignablePartition(p, r) for p, r in enumerate(targets))),)))
    assert answer == {"responses": [{"name": "foo", "partitions": [
        {"partitionIndex": p, "errorCode": "NONE", "errorMessage": None}
        for p in range(4)]}]}

    def none_listed() -> bool:  # (read from the active controller's committed state)
        active = cluster.active_controller()
        return active is not None and \
            list_partition_reassignments(active.committed_image()) == {"topics": []}
    _eventually(cluster, none_listed)
    assert _ok(cluster, ListPartitionReassignments()) == {"topics": []}

    def mapping(image: MetadataImage) -> tuple[tuple[int, ...], ...]:
        topic = image.topic("foo")
        return () if topic is None else \
            tuple(topic.partitions[p].replicas for p in sorted(topic.partitions))
    _eventually(cluster, lambda: all(mapping(i) == targets for i in _broker_images(cluster)))
    topic_id = _image(cluster, 0).topics_by_name["foo"]
    hosting = {0: (True, True, False, True), 1: (True, True, False, True),
               2: (True, True, True, True), 3: (False, False, True, True)}

    def hosted() -> bool:
        for broker, expected in hosting.items():
            manager = cluster.replica_manager(broker)
            assert manager is not None
            if tuple(manager.held((topic_id, p)) is not None for p in range(4)) != expected:
                return False
        return True
    _eventually(cluster, hosted)
    assert cluster.sim.violation is None


def test_create_cluster_and_restart_broker_node() -> None:
    """testCreateClusterAndRestartBrokerNode: the one broker shuts down and starts again,
    and comes back RUNNING and unfenced."""
    cluster = _started(brokers=1, controllers=1)
    cluster.sim.shutdown(0)
    _eventually(cluster, lambda: not cluster.sim.slots[0].running)
    cluster.sim.restart(0)
    _eventually(cluster, lambda: _running(cluster, 0) and cluster.brokers_unfenced())


def test_create_cluster_and_restart_controller_node() -> None:
    """testCreateClusterAndRestartControllerNode: the active one of three controllers shuts
    down and starts again; a controller is active again."""
    cluster = _started(brokers=1, controllers=3)
    active = cluster.active_controller()
    assert active is not None
    cluster.sim.shutdown(active.node_id)
    cluster.sim.restart(active.node_id)
    _eventually(cluster, lambda: cluster.active_controller() is not None)
    assert cluster.controller(active.node_id) is not None


def test_registered_controller_endpoints() -> None:
    """testRegisteredControllerEndpoints: every one of three controllers registers itself
    with a CONTROLLER listener on a port; each controller's registrations (and a
    DescribeCluster sent to it) list all three."""
    cluster = _started(brokers=1, controllers=3)
    for node in cluster.config.controller_ids:
        controller = cluster.controller(node)
        assert controller is not None
        registered = controller.committed_image().controllers
        assert sorted(registered) == list(cluster.config.controller_ids)
        for registration in registered.values():
            listener = next(e for e in registration.endpoints if e.name == "CONTROLLER")
            assert listener.port != 0
        answer = describe_cluster_controllers(controller.committed_image(),
                                              controller.raft.leader_id)
        assert [c.controller_id for c in answer.controllers] == list(
            cluster.config.controller_ids)
        assert answer.controller_id == cluster.sim.leader_id()


def test_direct_to_controller_communication_fails_on_older_metadata_version() -> None:
    """testDirectToControllerCommunicationFailsOnOlderMetadataVersion: at 3.6-IV2 a
    DescribeCluster sent to a controller is refused with UNSUPPORTED_VERSION (and no
    controller has registered)."""
    cluster = _started(brokers=1, controllers=1, metadata_version=LEVELS["3.6-IV2"])
    controller = cluster.controller(cluster.config.controller_ids[0])
    assert controller is not None
    image = controller.committed_image()
    assert not image.controllers
    with pytest.raises(ApiError) as refused:
        describe_cluster_controllers(image, controller.raft.leader_id)
    assert refused.value.code == "UNSUPPORTED_VERSION"


def test_create_cluster_and_wait_for_broker_in_running_state() -> None:
    """testCreateClusterAndWaitForBrokerInRunningState: the broker reaches RUNNING and its
    raft client knows the leader. (The cluster id answer is not ported: kraftsim's brokers
    carry no cluster id.)"""
    cluster = _started(brokers=1, controllers=1)
    _eventually(cluster, lambda: _running(cluster, 0))
    raft = cluster.sim.slots[0].raft
    assert raft is not None
    _eventually(cluster, lambda: raft.leader_id is not None)
    assert raft.leader_id == cluster.config.controller_ids[0]


def test_create_cluster_with_advertised_host_and_port_different_from_socket_server() -> None:
    """testCreateClusterWithAdvertisedHostAndPortDifferentFromSocketServer (three brokers,
    one controller): each broker advertises ``advertised-host-<id>`` port ``<id> + 100``
    (here its registration amended with that listener; kraftsim has no socket server), and
    DescribeCluster answers those, once every broker knows all three."""
    cluster = _started(brokers=3, controllers=1)
    for broker in cluster.config.broker_ids:
        incarnation = _image(cluster, broker).brokers[broker].incarnation_id
        _ok(cluster, RegisterBroker(broker, host=f"advertised-host-{broker}", port=broker + 100,
                                    incarnation_id=incarnation))
    expected = {DescribedBroker(b, f"advertised-host-{b}", b + 100)
                for b in cluster.config.broker_ids}
    _eventually(cluster, lambda: set(describe_cluster(
        _image(cluster, 0), random.Random(0)).brokers) == expected)
    refused = _refused(cluster, RegisterBroker(0, port=0))
    assert (refused.code, refused.message) == (
        "INVALID_REQUEST", "Cannot serialize ephemeral port 0 in ListenerInfo.")


def test_create_cluster_and_create_list_delete_topic() -> None:
    """testCreateClusterAndCreateListDeleteTopic: a topic of one partition and three
    replicas is listed by the brokers once created, and no more once deleted."""
    cluster = _started(brokers=3, controllers=3)
    _eventually(cluster, lambda: _running(cluster, 0))
    _ok(cluster, CreateTopics((NewTopic("test-topic", 1, 3),)))
    _wait_for_topic_listing(cluster, ["test-topic"], [])
    assert _ok(cluster, DeleteTopics(("test-topic",))) == {"deleted": ["test-topic"]}
    _wait_for_topic_listing(cluster, [], ["test-topic"])


def test_create_cluster_and_create_and_many_topics() -> None:
    """testCreateClusterAndCreateAndManyTopics: three topics in one request are all
    created and listed."""
    cluster = _started(brokers=3, controllers=3)
    names = ["test-topic-1", "test-topic-2", "test-topic-3"]
    response = _ok(cluster, CreateTopics(tuple(NewTopic(n, 2, 3) for n in names)))
    assert isinstance(response, dict)
    assert [t["name"] for t in response["topics"]] == names
    assert all("errorCode" not in t for t in response["topics"])
    _wait_for_topic_listing(cluster, names, [])
    for image in _broker_images(cluster):
        for name in names:
            topic = image.topic(name)
            assert topic is not None and len(topic.partitions) == 2
            assert all(len(p.replicas) == 3 for p in topic.partitions.values())


def test_create_cluster_invalid_metadata_version() -> None:
    """testCreateClusterInvalidMetadataVersion: bootstrap metadata at a release before
    3.3-IV0 (Kafka's 2.7-IV0, a pre-KRaft level) is refused, in Kafka's words."""
    with pytest.raises(BootstrapError) as refused:
        BootstrapMetadata.from_version(PRE_KRAFT, "testkit")
    assert str(refused.value) == ("Bootstrap metadata.version before 3.3-IV0 are not "
                                  "supported. Can't load metadata from testkit")
    # a cluster configured below 3.3-IV0 is refused before it is built
    with pytest.raises(ConfigError):
        KRaftCluster(ClusterConfig(brokers=1, controllers=1, controller=ControllerConfig(
            bootstrap_metadata_version=LEVELS["3.2-IV0"])))


def _alter(cluster: KRaftCluster, resource_type: int, name: str,
           *changes: tuple[str, str]) -> ApiError | None:
    """One resource's incrementalAlterConfigs SETs: its error (None: NONE)."""
    op = IncrementalAlterConfigs(resource_type, name,
                                 tuple(ConfigChange(k, v) for k, v in changes))
    return _call(cluster, op).error


def _configs_shown(cluster: KRaftCluster, resource_type: int, name: str,
                   expected: dict[str, str], exhaustive: bool = False) -> None:
    """Kafka's validateConfigs: every broker comes to show the expected values (all of
    them, and only them, when ``exhaustive``)."""
    def shown() -> bool:
        for image in _broker_images(cluster):
            configs = dict(image.configs.get((resource_type, name)) or {})
            if exhaustive and configs != expected:
                return False
            if any(configs.get(k) != v for k, v in expected.items()):
                return False
        return True
    _eventually(cluster, shown)


def _error(error: ApiError | None) -> tuple[str, str] | None:
    return None if error is None else (error.code, error.message)


def test_incremental_alter_configs() -> None:
    """testIncrementalAlterConfigs (four brokers, three controllers): the cluster's broker
    default, then topics' configs (one good, one unknown name, one unknown topic, each
    answered on its own), then one broker's."""
    cluster = _started(brokers=4, controllers=3)
    assert _alter(cluster, BROKER_RESOURCE, "", ("log.roll.ms", "1234567"),
                  ("max.connections.per.ip", "60")) is None
    _configs_shown(cluster, BROKER_RESOURCE, "",
                   {"log.roll.ms": "1234567", "max.connections.per.ip": "60"}, exhaustive=True)

    _ok(cluster, CreateTopics((NewTopic("foo", 2, 3), NewTopic("bar", 2, 3))))
    _eventually(cluster, lambda: all(
        (t := image.topic(n)) is not None and len(t.partitions) == 2
        for image in _broker_images(cluster) for n in ("foo", "bar")))
    _configs_shown(cluster, TOPIC_RESOURCE, "bar", {}, exhaustive=True)

    results = [_error(_alter(cluster, TOPIC_RESOURCE, "foo", ("segment.jitter.ms", "345"))),
               _error(_alter(cluster, TOPIC_RESOURCE, "bar", ("not.a.real.topic.config",
                                                              "789"))),
               _error(_alter(cluster, TOPIC_RESOURCE, "baz", ("segment.jitter.ms", "678")))]
    assert results == [
        None,
        ("INVALID_CONFIG", "Unknown topic config name: not.a.real.topic.config"),
        ("UNKNOWN_TOPIC_OR_PARTITION", "The topic 'baz' does not exist."),
    ]
    _configs_shown(cluster, TOPIC_RESOURCE, "foo", {"segment.jitter.ms": "345"})

    assert _alter(cluster, BROKER_RESOURCE, "2", ("max.connections.per.ip", "7")) is None
    _configs_shown(cluster, BROKER_RESOURCE, "2", {"max.connections.per.ip": "7"})


@pytest.mark.parametrize("metadata_version", ["3.7-IV0", "3.7-IV2"])
def test_create_partitions(metadata_version: str) -> None:
    """testCreatePartitions (at 3.7-IV0 and 3.7-IV2): foo grows from one partition to
    three; bar, asked to grow to the two it has, is INVALID_PARTITIONS."""
    cluster = _started(brokers=4, controllers=3, metadata_version=LEVELS[metadata_version])
    response = _ok(cluster, CreateTopics((NewTopic("foo", 1, 3), NewTopic("bar", 2, 3))))
    assert isinstance(response, dict)
    assert all("errorCode" not in t for t in response["topics"])
    _ok(cluster, CreatePartitions("foo", 3))
    refused = _refused(cluster, CreatePartitions("bar", 2))
    assert (refused.code, refused.message) == ("INVALID_PARTITIONS",
                                               "Topic already has 2 partition(s).")
    active = cluster.active_controller()
    assert active is not None
    foo = active.image.topic("foo")
    assert foo is not None and sorted(foo.partitions) == [0, 1, 2]
    assert all(len(p.replicas) == 3 for p in foo.partitions.values())


def _unfenced(image: MetadataImage, broker: int) -> bool:
    registration = image.brokers.get(broker)
    return registration is not None and not registration.fenced


def test_unregister_broker() -> None:
    """testUnregisterBroker: broker 0, shut down, is seen fenced by broker 1; unregistered,
    it is gone from broker 1's cluster image."""
    cluster = _started(brokers=4, controllers=3)
    _eventually(cluster, lambda: _unfenced(_image(cluster, 1), 0))
    cluster.sim.shutdown(0)
    _eventually(cluster, lambda: not _unfenced(_image(cluster, 1), 0))
    _ok(cluster, UnregisterBroker(0))
    _eventually(cluster, lambda: 0 not in _image(cluster, 1).brokers)


def test_unregister_broker_not_registered() -> None:
    """(testUnregisterBroker, the request's refusal) A broker id nobody registered is
    BROKER_ID_NOT_REGISTERED, in Kafka's words."""
    cluster = _started(brokers=1, controllers=1)
    refused = _refused(cluster, UnregisterBroker(7))
    assert (refused.code, refused.message) == ("BROKER_ID_NOT_REGISTERED",
                                               "Broker ID 7 is not currently registered")


def test_describe_quorum_request_to_brokers() -> None:
    """testDescribeQuorumRequestToBrokers (four brokers, three controllers): once every
    broker is RUNNING, the quorum's description (the raft leader's answer, which a broker
    forwards to) names the controllers as voters and a controller as leader; it comes to
    show every voter and every broker (the observers) past offset 0 with known last fetch
    and caught-up times."""
    cluster = _started(brokers=4, controllers=3)
    _eventually(cluster, lambda: all(_running(cluster, b) for b in range(4)))

    def described() -> QuorumDescription:
        slot = cluster.sim.leader_slot()
        assert slot is not None and slot.raft is not None
        answer = slot.raft.describe_quorum(cluster.sim.now)
        assert answer.error is Errors.NONE
        return answer
    first = described()
    assert {v.replica_id for v in first.current_voters} == set(cluster.config.controller_ids)
    assert first.leader_id in cluster.config.controller_ids

    def known(replicas: tuple[ReplicaDescription, ...]) -> bool:
        return all(r.log_end_offset > 0 and r.last_fetch_timestamp != -1
                   and r.last_caught_up_timestamp != -1 for r in replicas)
    _eventually(cluster, lambda: known(described().current_voters))
    _eventually(cluster, lambda: {o.replica_id for o in described().observers}
                == set(cluster.config.broker_ids) and known(described().observers))


def test_update_metadata_version() -> None:
    """testUpdateMetadataVersion: a cluster bootstrapped at 3.3-IV0 upgrades
    metadata.version to the latest testing level at once; kraft.version is supported at
    0-1; broker 0 comes to publish the new version."""
    cluster = _started(brokers=4, controllers=3, metadata_version=MINIMUM_BOOTSTRAP)
    _ok(cluster, UpdateFeatures((FeatureUpdate(METADATA_VERSION_FEATURE, LATEST_TESTING),)))
    assert SUPPORTED_FEATURES["kraft.version"] == (0, 1)
    _eventually(cluster, lambda: _image(cluster, 0).metadata_version == LATEST_TESTING)


def test_timed_out_heartbeats() -> None:
    """testTimedOutHeartbeats (three brokers, one controller, heartbeats every 10 ms, a
    session of 1 s): the controller stalls for 1,001 ms (Kafka pauses its event queue;
    here the node is paused: messages wait, timers stand still); once it goes on, the
    heartbeats that waited keep every session alive and no broker is fenced. (Kafka's
    timedOutHeartbeats metric is not modelled.)"""
    config = ClusterConfig(seed=7, brokers=3, controllers=1, brokers_settings=BrokerSettings(
        session_timeout_ms=1000, config=BrokerConfig(heartbeat_interval_ms=10)))
    cluster = KRaftCluster(config)
    assert cluster.start()
    controller = config.controller_ids[0]
    for _ in range(3):
        cluster.sim.pause(controller)
        cluster.sim.run_for(1001)
        cluster.sim.resume(controller)
        cluster.sim.run_for(100)
        active = cluster.active_controller()
        assert active is not None
        assert not any(b.fenced for b in active.committed_image().brokers.values())
    assert cluster.sim.violation is None


def test_startup_with_non_default_controller_dynamic_configuration() -> None:
    """testStartupWithNonDefaultKControllerDynamicConfiguration: bootstrap records at
    3.7-IV0 with the cluster's broker default num.io.threads=9 start the cluster, and the
    controller and the broker hold the config (Kafka then checks the controller's request
    handler pool is sized 9: thread pools are not modelled)."""
    bootstrap = BootstrapMetadata.from_records(
        [FeatureLevelRecord(METADATA_VERSION_FEATURE, LEVELS["3.7-IV0"]),
         ConfigRecord(BROKER_RESOURCE, "", "num.io.threads", "9")], "testRecords")
    cluster = KRaftCluster(ClusterConfig(seed=7, brokers=1, controllers=1),
                           bootstrap=bootstrap)
    assert cluster.start()
    active = cluster.active_controller()
    assert active is not None
    assert active.committed_image().metadata_version == LEVELS["3.7-IV0"]
    assert dict(active.committed_image().configs[(BROKER_RESOURCE, "")]) == {
        "num.io.threads": "9"}
    _configs_shown(cluster, BROKER_RESOURCE, "", {"num.io.threads": "9"}, exhaustive=True)


def test_single_controller_single_broker_cluster() -> None:
    """testSingleControllerSingleBrokerCluster: at the minimum bootstrap level (3.3-IV0,
    which has no periodic NoOpRecords) one controller and one broker come up, and none
    is written."""
    cluster = _started(brokers=1, controllers=1, metadata_version=MINIMUM_BOOTSTRAP)
    assert cluster.brokers_unfenced()
    cluster.sim.run_for(5_000)
    assert cluster.sim.violation is None
    active = cluster.active_controller()
    assert active is not None
    assert not any(isinstance(r, NoOpRecord) for batch in active.raft.log.batches
                   for r in batch.records)


def test_overly_large_create_topics() -> None:
    """testOverlyLargeCreateTopics: 10,001 topics of 100,000 partitions each is
    POLICY_VIOLATION, in Kafka's words, and nothing is created."""
    cluster = _started(brokers=1, controllers=1)
    topics = tuple(NewTopic(f"foo{i}", 100_000, 1) for i in range(10_001))
    refused = _refused(cluster, CreateTopics(topics))
    assert refused.code == "POLICY_VIOLATION"
    assert refused.message == "Unable to perform excessively large batch operation."
    active = cluster.active_controller()
    assert active is not None and not active.image.topics_by_name


def test_controller_failover() -> None:
    """testControllerFailover (five controllers, one broker): a topic is created; the
    active controller stops; another topic is created on the new active controller, and
    both are listed."""
    cluster = _started(brokers=1, controllers=5)
    _eventually(cluster, lambda: _running(cluster, 0))
    _ok(cluster, CreateTopics((NewTopic("test-topic", 1, 1),)))
    _wait_for_topic_listing(cluster, ["test-topic"], [])
    active = cluster.active_controller()
    assert active is not None
    cluster.sim.shutdown(active.node_id)
    _ok(cluster, CreateTopics((NewTopic("test-topic2", 1, 1),)))
    new_active = cluster.active_controller()
    assert new_active is not None and new_active.node_id != active.node_id
    _wait_for_topic_listing(cluster, ["test-topic", "test-topic2"], [])


def test_topic_deleted_and_recreated_while_broker_is_down() -> None:
    """testTopicDeletedAndRecreatedWhileBrokerIsDown (3.6-IV2, three brokers): broker 0
    stops and leaves foo-0's ISR; foo is deleted and created again (a new topic id) while
    it is down; started again, broker 0 rejoins the new foo-0's ISR. (Kafka's test edits
    the partition.metadata file to a stale topic id instead; kraftsim's log directory keys
    a partition's log by topic id, so a recreated topic is a new log either way.)"""
    cluster = _started(brokers=3, controllers=1, metadata_version=LEVELS["3.6-IV2"])
    _ok(cluster, CreateTopics((NewTopic("foo", 3, 3),)))
    _eventually(cluster, lambda: all(
        (t := image.topic("foo")) is not None and 0 in t.partitions[0].isr
        for image in _broker_images(cluster)))
    cluster.sim.shutdown(0)

    def isr_of_foo0() -> set[int]:
        topic = _image(cluster, 1).topic("foo")
        return set(topic.partitions[0].isr) if topic is not None else set()
    _eventually(cluster, lambda: isr_of_foo0() == {1, 2})
    _ok(cluster, DeleteTopics(("foo",)))
    _ok(cluster, CreateTopics((NewTopic("foo", -1, -1, assignments=((0, 1, 2),)),)))
    _eventually(cluster, lambda: isr_of_foo0() == {1, 2}
                and not cluster.sim.slots[0].running)
    cluster.sim.restart(0)
    _eventually(cluster, lambda: isr_of_foo0() == {0, 1, 2})


Entity = tuple[tuple[str, str | None], ...]


def _alter_quotas(cluster: KRaftCluster, entity: Entity,
                  *ops: tuple[str, float | None]) -> None:
    """Kafka's alterClientQuotas of one entity, which must succeed."""
    response = _ok(cluster, AlterClientQuotas((QuotaAlteration(entity, ops),)))
    assert response == {"entries": [{"entity": dict(entity)}]}


def _described(cluster: KRaftCluster, components: tuple[QuotaFilterComponent, ...],
               strict: bool) -> dict[Entity, dict[str, float]]:
    """Broker 0's DescribeClientQuotas answer, which must not be an error."""
    answer = describe_client_quotas(_image(cluster, 0), components, strict)
    assert answer.error == "NONE", answer.message
    return answer.as_dict()


def test_client_quotas() -> None:
    """testClientQuotas: a user's quotas set, replaced, partly and then wholly removed, set
    again, each change seen by the broker through a strict filter; a user and client-id
    entity beside it; a non-strict filter on the user finds both."""
    cluster = _started(brokers=1, controllers=1)
    _eventually(cluster, lambda: _running(cluster, 0))
    entity: Entity = (("user", "testkit"),)
    only_user = (QuotaFilterComponent("user", match="testkit"),)

    def alter_then_describe(who: Entity, ops: tuple[tuple[str, float | None], ...],
                            components: tuple[QuotaFilterComponent, ...],
                            expect_count: int) -> dict[Entity, dict[str, float]]:
        _alter_quotas(cluster, who, *ops)
        _eventually(cluster, lambda: len(_described(cluster, components, True).get(
            who, {})) == expect_count)
        return _described(cluster, components, True)

    result = alter_then_describe(entity, (("request_percentage", 0.99),), only_user, 1)
    assert result[entity]["request_percentage"] == pytest.approx(0.99, abs=1e-6)

    result = alter_then_describe(entity, (("request_percentage", 0.97),
                                          ("producer_byte_rate", 10000),
                                          ("consumer_byte_rate", 10001)), only_user, 3)
    assert result[entity] == pytest.approx({"request_percentage": 0.97,
                                            "producer_byte_rate": 10000.0,
                                            "consumer_byte_rate": 10001.0}, abs=1e-6)

    result = alter_then_describe(entity, (("request_percentage", 0.95),
                                          ("producer_byte_rate", None),
                                          ("consumer_byte_rate", None)), only_user, 1)
    assert result[entity] == pytest.approx({"request_percentage": 0.95}, abs=1e-6)

    result = alter_then_describe(entity, (("request_percentage", None),), only_user, 0)
    assert entity not in result

    result = alter_then_describe(entity, (("producer_byte_rate", 9999),), only_user, 1)
    assert result[entity]["producer_byte_rate"] == pytest.approx(9999.0, abs=1e-6)

    entity2: Entity = (("client-id", "some-client"), ("user", "testkit"))
    both = (QuotaFilterComponent("user", match="testkit"),
            QuotaFilterComponent("client-id", match="some-client"))
    result = alter_then_describe(entity2, (("producer_byte_rate", 9998),), both, 1)
    assert result[entity2]["producer_byte_rate"] == pytest.approx(9998.0, abs=1e-6)

    results = _described(cluster, only_user, strict=False)
    assert len(results) == 2
    assert results[entity]["producer_byte_rate"] == pytest.approx(9999.0, abs=1e-6)
    assert results[entity2]["producer_byte_rate"] == pytest.approx(9998.0, abs=1e-6)


def _consumer_byte_rates(cluster: KRaftCluster) -> dict[Entity, int]:
    """Kafka's getConsumerByteRates: every entity's consumer_byte_rate (an empty filter)."""
    return {entity: int(values["consumer_byte_rate"])
            for entity, values in _described(cluster, (), strict=False).items()
            if "consumer_byte_rate" in values}


def test_default_client_quotas() -> None:
    """testDefaultClientQuotas: none at first; the default user's consumer_byte_rate, then
    bob's beside it."""
    cluster = _started(brokers=1, controllers=1)
    _eventually(cluster, lambda: _running(cluster, 0))
    default_user: Entity = (("user", None),)
    bob: Entity = (("user", "bob"),)
    assert _consumer_byte_rates(cluster) == {}
    _alter_quotas(cluster, default_user, ("consumer_byte_rate", 100.0))
    _eventually(cluster, lambda: _consumer_byte_rates(cluster) == {default_user: 100})
    _alter_quotas(cluster, bob, ("consumer_byte_rate", 1000.0))
    _eventually(cluster, lambda: _consumer_byte_rates(cluster) == {default_user: 100,
                                                                   bob: 1000})
    defaults = (QuotaFilterComponent("user", MATCH_TYPE_DEFAULT),)
    assert _described(cluster, defaults, strict=True) == {default_user: {
        "consumer_byte_rate": 100.0}}
    any_user = (QuotaFilterComponent("user", MATCH_TYPE_SPECIFIED),)
    assert list(_described(cluster, any_user, strict=True)) == [default_user, bob]


def test_described_quotas_come_in_type_then_name_order() -> None:
    """(testClientQuotas' describes) The matching entities come in type then name order, a
    default name first, whatever order they were written in (the image's own order follows
    hashes); a filter matching any user (match type 2, MATCH_TYPE_SPECIFIED) is not strict
    unless asked (Kafka's default), so an entity with a client-id too matches."""
    cluster = _started(brokers=1, controllers=1)
    _eventually(cluster, lambda: _running(cluster, 0))
    names = ["frank", "erin", "dave", "carol", "bob", "alice"]
    users: list[tuple[Entity, float]] = [((("user", name),), 1000.0 + 10 * index)
                                         for index, name in enumerate(names)]
    default_user: Entity = (("user", None),)
    bob_app: Entity = (("client-id", "app"), ("user", "bob"))
    for entity, rate in [*users, (default_user, 3000.0), (bob_app, 500.0)]:
        _alter_quotas(cluster, entity, ("consumer_byte_rate", rate))
    _eventually(cluster, lambda: len(_described(cluster, (), strict=False)) == 8)
    answer = describe_client_quotas(_image(cluster, 0), (QuotaFilterComponent("user", 2),))
    assert answer.entries == (
        (bob_app, (("consumer_byte_rate", 500.0),)),
        (default_user, (("consumer_byte_rate", 3000.0),)),
        *((entity, (("consumer_byte_rate", rate),)) for entity, rate in reversed(users)))


@pytest.mark.parametrize(("entity", "ops", "message"), [
    ((), (("producer_byte_rate", 1.0),), "Invalid empty client quota entity"),
    ((("user", "a"), ("user", "b")), (("producer_byte_rate", 1.0),),
     "Invalid client quota entity, duplicate entity entry user"),
    ((("group", "g"),), (("producer_byte_rate", 1.0),),
     "Unhandled client quota entity type: group"),
    ((("client-id", ""),), (("producer_byte_rate", 1.0),), "Empty client-id not supported"),
    ((("ip", "1.2.3.4"), ("user", "u")), (("connection_creation_rate", 1.0),),
     "Invalid quota entity combination, IP entity shouldnot be combined with User or "
     "ClientId"),
    ((("ip", "not an ip"),), (("connection_creation_rate", 1.0),),
     "not an ip is not a valid IP or resolvable host."),
    ((("user", "u"),), (("connection_creation_rate", 1.0),),
     "Invalid configuration key connection_creation_rate"),
    ((("ip", "1.2.3.4"),), (("producer_byte_rate", 1.0),),
     "Invalid configuration key producer_byte_rate"),
    ((("user", "u"),), (("producer_byte_rate", 0.0),),
     "Quota producer_byte_rate must be greater than 0"),
    ((("user", "u"),), (("producer_byte_rate", 1.5),),
     "producer_byte_rate cannot be a fractional value."),
    ((("ip", "::1"),), (("connection_creation_rate", 2.0**31),),
     "Proposed value for connection_creation_rate is too large for an INT."),
    ((("user", "u"),), (("producer_byte_rate", 1.0), ("producer_byte_rate", 2.0)),
     "Ignoring duplicate entity ClientQuotaEntity(entries={user=u})"),
])
def test_refused_client_quota_alterations(entity: Entity,
                                          ops: tuple[tuple[str, float | None], ...],
                                          message: str) -> None:
    """(testClientQuotas' requests, refused) An alteration the controller refuses is
    INVALID_REQUEST in Kafka's words (ClientQuotaControlManager), and writes nothing."""
    cluster = _started(brokers=1, controllers=1)
    refused = _refused(cluster, AlterClientQuotas((QuotaAlteration(entity, ops),)))
    assert (refused.code, refused.message) == ("INVALID_REQUEST", message)
    active = cluster.active_controller()
    assert active is not None and not active.image.client_quotas


def test_client_quota_alterations_answered_each() -> None:
    """(testClientQuotas' requests) Each entity of one request gets its own answer: the good
    one is written, the refused one is not; a removal of a key not set writes nothing."""
    cluster = _started(brokers=1, controllers=1)
    good: Entity = (("user", "good"),)
    bad: Entity = (("user", "bad"),)
    response = _ok(cluster, AlterClientQuotas((
        QuotaAlteration(good, (("request_percentage", 12.5), ("consumer_byte_rate", None))),
        QuotaAlteration(bad, (("request_percentage", -1.0),)))))
    assert response == {"entries": [
        {"entity": {"user": "good"}},
        {"entity": {"user": "bad"}, "errorCode": "INVALID_REQUEST",
         "errorMessage": "Quota request_percentage must be greater than 0"}]}
    _eventually(cluster, lambda: _described(cluster, (), strict=False) == {
        good: {"request_percentage": 12.5}})


def test_client_quota_entity_given_twice() -> None:
    """(testClientQuotas' requests) An entity given twice in one request, its types in
    another order the second time: the first alteration is written, and the entity answers
    that the duplicate was ignored (Kafka's ClientQuotaControlManager)."""
    cluster = _started(brokers=1, controllers=1)
    first: Entity = (("user", "u"), ("client-id", "c"))
    again: Entity = (("client-id", "c"), ("user", "u"))
    response = _ok(cluster, AlterClientQuotas((
        QuotaAlteration(first, (("producer_byte_rate", 100.0),)),
        QuotaAlteration(again, (("producer_byte_rate", 200.0),)))))
    assert response == {"entries": [
        {"entity": {"user": "u", "client-id": "c"}, "errorCode": "INVALID_REQUEST",
         "errorMessage": "Ignoring duplicate entity ClientQuotaEntity(entries={client-id=c, "
                         "user=u})"}]}
    _eventually(cluster, lambda: _described(cluster, (), strict=False) == {
        (("client-id", "c"), ("user", "u")): {"producer_byte_rate": 100.0}})


@pytest.mark.parametrize(("components", "error", "message"), [
    ((QuotaFilterComponent(""),), "INVALID_REQUEST", "Invalid empty entity type."),
    ((QuotaFilterComponent("user", match="a"), QuotaFilterComponent("user", match="b")),
     "INVALID_REQUEST", "Entity type user cannot appear more than once in the filter."),
    ((QuotaFilterComponent("group", match="g"),), "UNSUPPORTED_VERSION",
     "Unsupported entity type group"),
    ((QuotaFilterComponent("user"),), "INVALID_REQUEST",
     "Request specified MATCH_TYPE_EXACT, but set match string to null."),
    ((QuotaFilterComponent("user", MATCH_TYPE_DEFAULT, "x"),), "INVALID_REQUEST",
     "Request specified MATCH_TYPE_DEFAULT, but also specified a match string."),
    ((QuotaFilterComponent("user", MATCH_TYPE_SPECIFIED, "x"),), "INVALID_REQUEST",
     "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string."),
    ((QuotaFilterComponent("user", 7, "x"),), "INVALID_REQUEST", "Unknown match type 7"),
    ((QuotaFilterComponent("user", 3),), "INVALID_REQUEST", "Unknown match type 3"),
    ((QuotaFilterComponent("ip", MATCH_TYPE_SPECIFIED),
      QuotaFilterComponent("user", MATCH_TYPE_SPECIFIED)), "INVALID_REQUEST",
     "Invalid entity filter component combination. IP filter component should not be used "
     "with user or clientId filter component."),
    ((QuotaFilterComponent("client-id", match="c"), QuotaFilterComponent("ip", MATCH_TYPE_DEFAULT)),
     "INVALID_REQUEST",
     "Invalid entity filter component combination. IP filter component should not be used "
     "with user or clientId filter component."),
])
def test_refused_client_quota_filters(components: tuple[QuotaFilterComponent, ...],
                                      error: str, message: str) -> None:
    """(testClientQuotas' describes, refused) A filter the broker refuses, in Kafka's words
    (ClientQuotasImage.describe)."""
    cluster = _started(brokers=1, controllers=1)
    answer = describe_client_quotas(_image(cluster, 0), components)
    assert (answer.error, answer.message, answer.entries) == (error, message, ())
