"""The partitions a broker is an eligible leader replica of, against Kafka's
``BrokerToElrsTest`` (metadata/src/test/java/org/apache/kafka/controller/).

Kafka's controller keeps ``BrokersToElrs``, an index broker -> partitions whose ELR
(KIP-966) holds the broker, to find the ELRs a broker leaves after an unclean shutdown.
kraftsim's controller finds them through its one per-broker index, by replica assignment
(:mod:`metadata.broker_index`, see :mod:`controller.operations.elr_changes`): a replica
joins an ELR only from the ISR, so the replica index names every partition Kafka's index
would, apart from a replica that a reassignment removed while the ISR was below min ISR
(Kafka then puts it in the ELR; kraftsim's unclean-shutdown handling does not look for it
there, and as it is no replica it is never elected).

Not ported: ``testIterator``'s index as such (``BrokersToElrs.update`` and
``partitionsWithBrokerInElr``): there is no such index in kraftsim to port against. The
test below keeps its partitions and ELRs and checks what kraftsim does keep: the image
holds each partition's ELR as replayed, and the replica index finds, for each broker, every
partition Kafka's index would name.
"""

from __future__ import annotations

from metadata.broker_index import partitions_of
from metadata.image import MetadataImage
from metadata.schema import PartitionRecord, TopicRecord
from metadata.versions import ELR

from .kafka_cases import brokers, image_of

TOPICS = ("z5XgH_fQSAK3-RYoF2ymgw", "U52uRe20RsGI0RvpcTx33Q")
"""Kafka's UUIDS."""


def _partition(topic: int, partition: int, elr: tuple[int, ...]) -> PartitionRecord:
    return PartitionRecord(partition_id=partition, topic_id=TOPICS[topic],
                           replicas=(1, 2, 3, 4, 5), isr=(5,), leader=5, leader_epoch=0,
                           partition_epoch=0, eligible_leader_replicas=elr, last_known_elr=())


def _in_elr(image: MetadataImage, broker: int) -> set[tuple[str, int]]:
    """The partitions whose ELR holds ``broker``, looked up through the replica index."""
    found = set()
    for topic_id, pid in partitions_of(image.partitions_by_broker, broker):
        elr = image.topics_by_id[topic_id].partitions[pid].eligible_leader_replicas
        if broker in (elr or ()):
            found.add((topic_id, pid))
    return found


def test_the_partitions_whose_elr_holds_a_broker() -> None:
    """testIterator's partitions: (topic 0, 0) with ELR [1, 2, 3] and (topic 1, 1) with
    [2, 3, 4]; broker 1 is in the first, 2 in both, 4 in the second, 5 in none; then
    (topic 1, 2) with [3, 2, 1] adds itself to broker 2's."""
    image = image_of([*brokers(1, 2, 3, 4, 5, level=ELR),
                      TopicRecord(name="a", topic_id=TOPICS[0]),
                      TopicRecord(name="b", topic_id=TOPICS[1])])
    assert _in_elr(image, 1) == set()
    image = image_of([_partition(0, 0, (1, 2, 3)), _partition(1, 1, (2, 3, 4))], image)
    assert _in_elr(image, 1) == {(TOPICS[0], 0)}
    assert _in_elr(image, 2) == {(TOPICS[0], 0), (TOPICS[1], 1)}
    assert _in_elr(image, 4) == {(TOPICS[1], 1)}
    assert _in_elr(image, 5) == set()
    image = image_of([_partition(1, 2, (3, 2, 1))], image)
    assert image.topics_by_id[TOPICS[1]].partitions[2].eligible_leader_replicas == (3, 2, 1)
    assert _in_elr(image, 2) == {(TOPICS[0], 0), (TOPICS[1], 1), (TOPICS[1], 2)}
