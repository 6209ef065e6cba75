"""Unfencing a broker elects leaders for every leaderless partition one more active broker
allows (Kafka's ReplicationControlManager.handleBrokerUnfenced runs the topic's election
over all leaderless partitions), not only for the unfenced broker's own partitions."""

from __future__ import annotations

from controller.operations.brokers import UnfenceBroker
from metadata.delta import TOPIC_RESOURCE
from metadata.image import NO_LEADER, RECOVERING, MetadataImage
from metadata.schema import (
    BrokerRegistrationChangeRecord,
    ConfigRecord,
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    TopicRecord,
)

from .kafka_cases import brokers, generate, image_of

FOO = "FOOFOOFOOFOOFOOFOOFOOA"
BAR = "BARBARBARBARBARBARBARA"


def _unclean(name: str, value: str) -> ConfigRecord:
    return ConfigRecord(resource_type=TOPIC_RESOURCE, resource_name=name,
                        name="unclean.leader.election.enable", value=value)


def _image(parts: dict[str, list[tuple[tuple[int, ...], tuple[int, ...], int]]],
           fenced: tuple[int, ...], configs: tuple[ConfigRecord, ...] = ()) -> MetadataImage:
    """Brokers 0-3 (``fenced`` fenced); topics "foo" and "bar" with partitions of
    (replicas, isr, leader)."""
    records: list[MetadataRecord] = [*brokers(0, 1, 2, 3, fenced=fenced),
                                     TopicRecord("foo", FOO), TopicRecord("bar", BAR)]
    for topic_id, regs in parts.items():
        records += [PartitionRecord(partition_id=p, topic_id=topic_id, replicas=r, isr=i,
                                    leader=leader) for p, (r, i, leader) in enumerate(regs)]
    return image_of([*records, *configs])


def _unfence(broker: int) -> BrokerRegistrationChangeRecord:
    return BrokerRegistrationChangeRecord(broker, 100, fenced=-1)


def test_unfencing_a_broker_elects_an_active_replica_of_another_partition_uncleanly() -> None:
    # foo-0: its only ISR member (0) is fenced, replica 1 is active; foo allows unclean
    # elections. Broker 3 is no replica of it: unfencing it elects broker 1 at once, as
    # Kafka does (before, foo-0 waited for the periodic unclean-election check).
    image = _image({FOO: [((0, 1), (0,), NO_LEADER)]}, fenced=(0, 3),
                   configs=(_unclean("foo", "true"),))
    records, _ = generate(UnfenceBroker(3), image)
    assert records == [
        _unfence(3),
        PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1,), leader=1,
                              leader_recovery_state=RECOVERING)]


def test_unfencing_elects_nothing_uncleanly_where_the_topic_does_not_allow_it() -> None:
    image = _image({FOO: [((0, 1), (0,), NO_LEADER)]}, fenced=(0, 3),
                   configs=(_unclean("foo", "false"),))
    records, _ = generate(UnfenceBroker(3), image)
    assert records == [_unfence(3)]


def test_unfencing_elects_a_clean_leader_from_the_isr_of_another_partition() -> None:
    # A leaderless partition with an active ISR member (made directly: no operation
    # leaves one) gets it as clean leader, the ISR kept, whatever the topic allows.
    image = _image({FOO: [((0, 1), (0, 1), NO_LEADER)]}, fenced=(0, 3))
    records, _ = generate(UnfenceBroker(3), image)
    assert records == [_unfence(3), PartitionChangeRecord(partition_id=0, topic_id=FOO,
                                                          leader=1)]


def test_unfencing_elects_in_topic_id_and_partition_order_its_own_partitions_too() -> None:
    # bar-0 and foo-1 are broker 3's (clean: it is in the ISR; unclean: bar allows it);
    # foo-0 is broker 1's and 2's (clean once more: 2 leads, first active ISR member in
    # replica order); foo-2 has no active replica: no election.
    image = _image({FOO: [((0, 2, 1), (0, 1, 2), NO_LEADER), ((3, 1), (3,), NO_LEADER),
                          ((0,), (0,), NO_LEADER)],
                    BAR: [((3, 0), (0,), NO_LEADER), ((0, 1), (0,), NO_LEADER)]},
                   fenced=(0, 3), configs=(_unclean("bar", "true"),))
    records, _ = generate(UnfenceBroker(3), image)
    assert records == [
        _unfence(3),
        PartitionChangeRecord(partition_id=0, topic_id=BAR, isr=(3,), leader=3,
                              leader_recovery_state=RECOVERING),
        PartitionChangeRecord(partition_id=1, topic_id=BAR, isr=(1,), leader=1,
                              leader_recovery_state=RECOVERING),
        PartitionChangeRecord(partition_id=0, topic_id=FOO, leader=2),
        PartitionChangeRecord(partition_id=1, topic_id=FOO, leader=3)]


def test_a_broker_in_controlled_shutdown_is_not_elected_on_an_unfence() -> None:
    records = [*brokers(0, 1, 2, 3, fenced=(0, 3), shutting=(1,)), TopicRecord("foo", FOO),
               PartitionRecord(partition_id=0, topic_id=FOO, replicas=(0, 1, 2), isr=(0,),
                               leader=NO_LEADER), _unclean("foo", "true")]
    out, _ = generate(UnfenceBroker(3), image_of(records))
    assert out == [_unfence(3), PartitionChangeRecord(
        partition_id=0, topic_id=FOO, isr=(2,), leader=2, leader_recovery_state=RECOVERING)]
