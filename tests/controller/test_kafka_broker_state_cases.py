"""How a broker's state (fenced, in controlled shutdown, unregistered, re-registered) shapes
placement, ISRs and leaders, following the cases of Kafka's ReplicationControlManagerTest
and QuorumControllerTest that the other ports leave out: the records of a controlled
shutdown, AlterPartition asking for replicas that are fenced, shutting down or registered
again since (KIP-903), placement with no usable broker, unregistering a topic's only
replica, leaders going back to their preferred replicas as these rejoin the ISR, and
unclean elections as the topic's, the active controller's own or the cluster's
unclean.leader.election.enable allows them."""

from __future__ import annotations

import random

import pytest

from controller.leader_balance import balance_records, imbalanced
from controller.operations import (
    ConfigChange,
    ControlledShutdown,
    CreatePartitions,
    CreateTopics,
    FenceBroker,
    IncrementalAlterConfigs,
    NewTopic,
    OperationContext,
    RegisterBroker,
    UnfenceBroker,
    UnregisterBroker,
)
from controller.operations.configs import RESOURCE_TYPES
from controller.unclean_elections import unclean_records
from metadata.image import NO_LEADER, MetadataImage, PartitionRegistration
from metadata.schema import (
    BrokerRegistrationChangeRecord,
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    TopicRecord,
    UnregisterBrokerRecord,
)
from metadata.versions import LEVELS
from tests.controller.kafka_cases import OnePartitionAlter, alter_partition

from .kafka_cases import brokers, generate, image_of, refusal, run

FOO = "FOOFOOFOOFOOFOOFOOFOOA"


def _topic(base: MetadataImage, *assignments: tuple[int, ...]) -> MetadataImage:
    """``base`` and topic "foo" placed by hand (Kafka's createTestTopic): each partition's
    ISR is its active replicas, led by the first of them, all epochs 0."""
    records: list[MetadataRecord] = [TopicRecord("foo", FOO)]
    for pid, replicas in enumerate(assignments):
        isr = tuple(r for r in replicas if not base.brokers[r].fenced
                    and not base.brokers[r].in_controlled_shutdown)
        records.append(PartitionRecord(partition_id=pid, topic_id=FOO, replicas=replicas,
                                       isr=isr, leader=isr[0], leader_epoch=0,
                                       partition_epoch=0))
    return image_of(records, base)


def _foo(image: MetadataImage, pid: int = 0) -> PartitionRegistration:
    return image.topics_by_id[FOO].partitions[pid]


def _alter(image: MetadataImage, leader: int, isr: tuple[int, ...],
           pid: int = 0) -> OnePartitionAlter:
    reg = _foo(image, pid)
    return alter_partition(leader, image.brokers[leader].epoch, FOO, pid, reg.leader_epoch,
                            reg.partition_epoch, isr)


# ------------------------------------------------------------------ controlled shutdown

@pytest.mark.parametrize("release", ["3.3-IV3", "4.0-IV0"])
def test_a_controlled_shutdown_is_recorded_before_the_broker_leaves_its_partitions(
        release: str) -> None:
    """testProcessBrokerHeartbeatInControlledShutdown: a leader asking to shut down is
    marked in controlled shutdown first, then leaves the ISR and its leadership to the
    next ISR member, in that order."""
    image = _topic(image_of(brokers(0, 1, 2, level=LEVELS[release])), (0, 1, 2))
    records, _ = generate(ControlledShutdown(0), image)
    assert records == [
        BrokerRegistrationChangeRecord(0, 100, in_controlled_shutdown=1),
        PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1, 2), leader=1)]
    after = image_of(records, image)
    assert after.brokers[0].in_controlled_shutdown and not after.brokers[0].fenced


def test_a_controlled_shutdown_before_3_3_iv3_fences_the_broker_instead() -> None:
    """A kept difference: Kafka at 3.3-IV2 cannot record a controlled shutdown and keeps
    it in its heartbeat manager alone (writing only the partition change); kraftsim, whose
    controllers know a broker's state from the image, fences the broker after the change,
    as a fence is written."""
    image = _topic(image_of(brokers(0, 1, 2, level=LEVELS["3.3-IV2"])), (0, 1, 2))
    records, _ = generate(ControlledShutdown(0), image)
    assert records == [
        PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1, 2), leader=1),
        BrokerRegistrationChangeRecord(0, 100, fenced=1)]


# ------------------------------------------------------------------ AlterPartition

def test_a_fenced_replica_cannot_rejoin_the_isr_until_it_is_unfenced() -> None:
    """testAlterPartitionShouldRejectFencedBrokers: fencing broker 3 takes it out of the ISR
    (partition epoch 1, leader epoch kept); the leader's request to take it back is
    INELIGIBLE_REPLICA and writes nothing; once 3 is unfenced the same request is written,
    partition epoch 2, leader epoch still 0."""
    image = _topic(image_of(brokers(0, 1, 2, 3, 4)), (1, 2, 3, 4))
    image, _, _ = run(FenceBroker(3), image)
    reg = _foo(image)
    assert (reg.isr, reg.leader, reg.leader_epoch, reg.partition_epoch) == ((1, 2, 4), 1, 0, 1)
    request = _alter(image, 1, (1, 2, 3, 4))
    assert refusal(request, image).code == "INELIGIBLE_REPLICA"
    image, _, _ = run(UnfenceBroker(3), image, offset=200)
    image, records, response = run(request, image, offset=300)
    assert records == [PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1, 2, 3, 4))]
    assert isinstance(response, PartitionRegistration)
    assert (response.leader, response.leader_epoch, response.isr, response.partition_epoch) \
        == (1, 0, (1, 2, 3, 4), 2)
    assert response == _foo(image)


def test_a_replica_in_controlled_shutdown_cannot_stay_in_the_isr() -> None:
    """testAlterPartitionShouldRejectShuttingDownBrokers: broker 3 is marked in controlled
    shutdown but still in the ISR (its partition changes not written yet); a request naming
    it, even one that changes nothing for it, is INELIGIBLE_REPLICA."""
    image = _topic(image_of(brokers(0, 1, 2, 3, 4)), (1, 2, 3, 4))
    image = image_of([BrokerRegistrationChangeRecord(3, 100, in_controlled_shutdown=1)], image)
    assert _foo(image).isr == (1, 2, 3, 4)
    assert refusal(_alter(image, 1, (1, 2, 3, 4)), image).code == "INELIGIBLE_REPLICA"
    image, [change], _ = run(_alter(image, 1, (1, 2, 4)), image)
    assert change == PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1, 2, 4))


# ------------------------------------------------------------------ placement

def test_with_no_broker_registered_every_broker_counts_as_fenced() -> None:
    """testCreateTopics: with no broker at all Kafka's placer finds no unfenced broker
    before it counts the registered ones: "All brokers are currently fenced."."""
    refused = refusal(CreateTopics((NewTopic("foo", -1, 3),)), image_of(brokers()))
    assert (refused.code, refused.message) == (
        "INVALID_REPLICATION_FACTOR",
        "Unable to replicate the partition 3 time(s): All brokers are currently fenced.")


def test_a_topic_needs_its_broker_unfenced_and_unregistering_it_leaves_the_topic_leaderless(
        ) -> None:
    """QuorumControllerTest.testUnregisterBroker: a single registered broker, still fenced,
    cannot hold a new topic; unfenced it can; unregistered, its partition keeps it as the
    last ISR member and has no leader."""
    create = CreateTopics((NewTopic("foo", 1, 1),))
    image = image_of(brokers(0, fenced=[0]))
    refused = refusal(create, image)
    assert (refused.code, refused.message) == (
        "INVALID_REPLICATION_FACTOR",
        "Unable to replicate the partition 1 time(s): All brokers are currently fenced.")
    image, _, _ = run(UnfenceBroker(0), image)
    image, _, response = run(create, image, offset=200)
    topic_id = response["topics"][0]["topicId"]  # type: ignore[index]
    assert image.topics_by_id[topic_id].partitions[0].isr == (0,)
    image, records, _ = run(UnregisterBroker(0), image, offset=300)
    assert records == [PartitionChangeRecord(partition_id=0, topic_id=topic_id, leader=NO_LEADER),
                       UnregisterBrokerRecord(0, 100)]
    reg = image.topics_by_id[topic_id].partitions[0]
    assert (reg.isr, reg.leader) == ((0,), NO_LEADER)
    assert 0 not in image.brokers


def test_an_unknown_broker_cannot_be_unregistered() -> None:
    """QuorumController.unregisterBroker of a broker that is not registered:
    BROKER_ID_NOT_REGISTERED, in Kafka's words, nothing written."""
    refused = refusal(UnregisterBroker(7), image_of(brokers(0)))
    assert (refused.code, refused.message) == ("BROKER_ID_NOT_REGISTERED",
                                               "Broker ID 7 is not currently registered")


# ------------------------------------------------------------------ leader balance

def test_leaders_go_back_to_preferred_replicas_as_these_rejoin_the_isr() -> None:
    """testBalancePartitionLeaders: with brokers 0 and 1 fenced, partitions (1, 2, 3) and
    (0, 2, 1) are led by 2, off their preferred replicas. A balance moves a leader only
    to a preferred replica that is unfenced and back in the ISR: first partition 0 to 1,
    partition 2 staying imbalanced, then, once 0 is back too, partition 2 to 0."""
    image = _topic(image_of(brokers(0, 1, 2, 3, 4, fenced=[0, 1])), (1, 2, 3), (2, 3, 4),
                   (0, 2, 1))
    assert [pid for _, pid, _ in imbalanced(image)] == [0, 2]
    image, _, _ = run(UnfenceBroker(1), image)
    image, _, response = run(_alter(image, 2, (1, 2, 3)), image, offset=200)
    assert isinstance(response, PartitionRegistration)
    assert (response.leader, response.leader_epoch, response.isr, response.partition_epoch) \
        == (2, 0, (1, 2, 3), 1)
    records, _ = balance_records(image)
    assert records == [PartitionChangeRecord(partition_id=0, topic_id=FOO, leader=1)]
    image = image_of(records, image, 300)
    assert [pid for _, pid, _ in imbalanced(image)] == [2]
    image, _, _ = run(UnfenceBroker(0), image, offset=400)
    image, _, response = run(_alter(image, 2, (0, 2, 1), pid=2), image, offset=500)
    assert isinstance(response, PartitionRegistration)
    assert (response.leader, response.isr, response.partition_epoch) == (2, (0, 2, 1), 1)
    records, _ = balance_records(image)
    assert records == [PartitionChangeRecord(partition_id=2, topic_id=FOO, leader=0)]
    image = image_of(records, image, 600)
    assert not list(imbalanced(image))


def test_a_late_request_naming_a_replica_that_registered_again_is_refused() -> None:
    """testAlterPartitionShouldRejectBrokersWithStaleEpoch (KIP-903): the leader builds a
    request to take broker 4 back with the epoch it knew, then 4 restarts, registers with a
    new incarnation and epoch, and is unfenced. With the epochs the request is
    INELIGIBLE_REPLICA; without them (AlterPartition before v3) it is written."""
    image = _topic(image_of(brokers(0, 1, 2, 3, 4)), (1, 2, 3, 4))
    image, _, _ = run(_alter(image, 1, (1, 2, 3)), image)
    def late_with(epochs: tuple[int, ...]) -> OnePartitionAlter:
        return alter_partition(1, 100, FOO, 0, 0, 1, (1, 2, 3, 4), new_isr_epochs=epochs)

    late = late_with((100,) * 4)
    image, _, registered = run(RegisterBroker(4, incarnation_id="inc-4-again"), image,
                               offset=1100)
    assert registered == {"brokerId": 4, "brokerEpoch": 1100}
    image, _, _ = run(UnfenceBroker(4), image, offset=1200)
    refused = refusal(late, image)
    assert refused.code == "INELIGIBLE_REPLICA" and "epoch mismatch" in refused.message
    current = late_with((100, 100, 100, 1100))
    assert generate(current, image)[0] == [
        PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1, 2, 3, 4))]
    unknown = late_with((100, 100, 100, -1))
    assert generate(unknown, image)[0] == generate(current, image)[0]
    assert generate(late_with(()), image)[0] == \
        generate(current, image)[0]
    assert refusal(late_with((100,)), image).code == \
        "INVALID_REQUEST"


# ------------------------------------------------------------------ unclean elections

@pytest.mark.parametrize("setting", ["none", "cluster", "node", "topic"])
def test_leaderless_partitions_are_elected_uncleanly_once_a_config_allows_it(
        setting: str) -> None:
    """testMaybeTriggerUncleanLeaderElectionForLeaderlessPartitions (its dynamic settings;
    kraftsim has no static controller config): every broker fenced leaves the partitions
    (1, 2, 4), (1, 3, 4) and (0, 2, 4) leaderless with the ISR (4,); broker 2 coming back
    leads none of them. Once unclean.leader.election.enable is set for the cluster, for
    the active controller's own node (a broker resource named by its id) or for the topic,
    the periodic check elects 2 uncleanly where it is a replica; partition 1 stays
    leaderless. Another controller's own setting does not apply."""
    image = _topic(image_of(brokers(0, 1, 2, 3, 4)), (1, 2, 4), (1, 3, 4), (0, 2, 4))
    for broker in range(5):
        image, _, _ = run(FenceBroker(broker), image, offset=image.offset + 1)
    image, _, _ = run(UnfenceBroker(2), image, offset=image.offset + 1)
    for pid in range(3):
        assert (_foo(image, pid).isr, _foo(image, pid).leader) == ((4,), NO_LEADER)
    resource = {"cluster": ("BROKER", ""), "node": ("BROKER", "0"),
                "topic": ("TOPIC", "foo")}.get(setting)
    if resource is not None:
        image, _, _ = run(IncrementalAlterConfigs(
            RESOURCE_TYPES[resource[0]], resource[1],
            (ConfigChange("unclean.leader.election.enable", "true"),)), image,
            offset=image.offset + 1)
    records, remaining = unclean_records(image, node_id=0)
    assert remaining
    elsewhere, _ = unclean_records(image, node_id=3001)  # another controller's reading
    assert elsewhere == ([] if setting == "node" else records)
    if setting == "none":
        assert records == []
        return
    image = image_of(records, image, image.offset + 1)
    expected = {0: ((2,), 2), 1: ((4,), NO_LEADER), 2: ((2,), 2)}
    for pid, (isr, leader) in expected.items():
        assert (_foo(image, pid).isr, _foo(image, pid).leader) == (isr, leader)


def test_a_controllers_own_setting_overrides_the_cluster_default() -> None:
    """Kafka reads unclean.leader.election.enable as the topic's, else the active
    controller's own (node) config, else the cluster's: with the cluster default true and
    controller 0 saying false, a fence of the last ISR member elects the out-of-sync
    replica uncleanly when controller 7 writes it, and leaves the partition leaderless
    when controller 0 does."""
    image = image_of([*brokers(0, 1), TopicRecord("foo", FOO),
                      PartitionRecord(partition_id=0, topic_id=FOO, replicas=(1, 0), isr=(1,),
                                      leader=1, leader_epoch=0, partition_epoch=0)])
    for node, value in ((0, "false"), (None, "true")):
        image, _, _ = run(IncrementalAlterConfigs(
            RESOURCE_TYPES["BROKER"], "" if node is None else str(node),
            (ConfigChange("unclean.leader.election.enable", value),)), image,
            offset=image.offset + 1)
    for node, (isr, leader) in ((0, ((1,), NO_LEADER)), (7, ((0,), 0))):
        context = OperationContext(image, random.Random(3), image.offset + 1, node)
        after = image_of(FenceBroker(1).generate(context).records, image)
        assert (_foo(after).isr, _foo(after).leader) == (isr, leader), node


def test_with_the_only_unfenced_broker_shutting_down_nothing_can_be_placed() -> None:
    """testCreateTopics and
    testCreatePartitionsFailsWhenAllBrokersAreFencedOrInControlledShutdown: brokers 1 and 2
    fenced and 0 unfenced but in controlled shutdown leave no broker to lead a new
    partition, for a new topic or a grown one."""
    image = image_of(brokers(0, 1, 2, fenced=[1, 2], shutting=[0]))
    refused = refusal(CreateTopics((NewTopic("foo", -1, 3),)), image)
    assert (refused.code, refused.message) == (
        "INVALID_REPLICATION_FACTOR", "Unable to replicate the partition 3 time(s): All "
        "brokers are currently fenced or in controlled shutdown.")
    image, _, _ = run(CreateTopics((NewTopic("foo", 1, 2),)), image_of(brokers(0, 1)))
    image = image_of(brokers(0, 1, fenced=[1], shutting=[0]), image)
    refused = refusal(CreatePartitions("foo", 2), image)
    assert (refused.code, refused.message) == (
        "INVALID_REPLICATION_FACTOR", "Unable to replicate the partition 2 time(s): All "
        "brokers are currently fenced or in controlled shutdown.")


def test_a_fenced_broker_marked_shutting_down_counts_as_fenced_for_placement() -> None:
    """Only an *unfenced* broker in controlled shutdown makes the refusal read "fenced or
    in controlled shutdown" (Kafka's createTopic check of the placed replicas' activity):
    a broker whose registration is fenced and still marked in controlled shutdown (its
    session expired while shutting down) is fenced to the StripedReplicaPlacer, whose
    refusal is "All brokers are currently fenced."."""
    image = image_of(brokers(0, 1, fenced=[0, 1], shutting=[0]))
    refused = refusal(CreateTopics((NewTopic("foo", -1, 2),)), image)
    assert (refused.code, refused.message) == (
        "INVALID_REPLICATION_FACTOR", "Unable to replicate the partition 2 time(s): All "
        "brokers are currently fenced.")
