"""What a broker answers about the cluster from its published image (Kafka's KRaftMetadataCache).

A broker answers a client's Metadata request, and its own questions about
other brokers (may a follower join an ISR?), from the last image its loader
published: never from a part of an open transaction, never from what the
controller has not committed. Every function here reads one image and is
pure; the image is immutable, so an answer never changes once given.

A broker is *alive* when it is registered and not fenced. For a partition:

- the leader is named when it is registered and has an endpoint on the
  client's listener, fenced or not (as Kafka's ``getAliveEndpoint``); else the
  leader is -1 with LEADER_NOT_AVAILABLE (leader not registered, or the caller
  does not ask for LISTENER_NOT_FOUND) or LISTENER_NOT_FOUND;
- replicas and ISR are listed whole, or, when the caller asks to leave out
  unavailable endpoints (Kafka's Metadata v0), only the alive brokers with
  the listener, REPLICA_NOT_AVAILABLE naming the loss;
- a replica is offline when its broker is not registered, is fenced, lacks
  the listener, or its directory is not one of the broker's online log
  directories (LOST; an unassigned or migrating one counts as online, and so
  does any directory of a broker that registered none).

DescribeCluster (:func:`describe_cluster`) lists the alive brokers with an endpoint on the
client's listener and names a random alive broker as the controller (KIP-590).
"""

from __future__ import annotations

import random
from collections.abc import Iterable

import msgspec

from metadata.image import BrokerRegistration, MetadataImage, PartitionRegistration
from metadata.schema import BrokerEndpoint

DEFAULT_LISTENER = "PLAINTEXT"
"""The listener every simulated broker registers (``RegisterBroker``'s one endpoint)."""

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
"""The internal topics a Metadata answer marks ``is_internal`` (Kafka's Topic.isInternal)."""

MIGRATING_DIRECTORY = "AAAAAAAAAAAAAAAAAAAAAA"
"""Kafka's ``DirectoryId.MIGRATING``: a replica placed before directories were tracked."""
UNASSIGNED_DIRECTORY = "AAAAAAAAAAAAAAAAAAAAAQ"
"""Kafka's ``DirectoryId.UNASSIGNED``: a replica waiting for its directory."""
LOST_DIRECTORY = "AAAAAAAAAAAAAAAAAAAAAg"
"""Kafka's ``DirectoryId.LOST``: a replica in a directory that went offline."""

NO_LEADER = -1
"""The leader id of a partition whose leader cannot be named."""


class PartitionMetadata(msgspec.Struct, frozen=True):
    """One partition of a Metadata answer (Kafka's MetadataResponsePartition)."""

    partition_index: int
    error: str
    """NONE, LEADER_NOT_AVAILABLE, LISTENER_NOT_FOUND or REPLICA_NOT_AVAILABLE."""
    leader_id: int
    leader_epoch: int
    replica_nodes: tuple[int, ...]
    isr_nodes: tuple[int, ...]
    offline_replicas: tuple[int, ...]


class TopicMetadata(msgspec.Struct, frozen=True):
    """One topic of a Metadata answer (Kafka's MetadataResponseTopic), partitions by index."""

    name: str
    topic_id: str
    is_internal: bool
    partitions: tuple[PartitionMetadata, ...]
    error: str = "NONE"


def topic_metadata(image: MetadataImage, topics: Iterable[str],
                   listener: str = DEFAULT_LISTENER, *, error_unavailable_endpoints: bool = False,
                   error_unavailable_listeners: bool = False) -> list[TopicMetadata]:
    """The Metadata answer for ``topics``, in their order; a topic the image does not hold
    is left out (the caller answers it UNKNOWN_TOPIC_OR_PARTITION or creates it).
    ``error_unavailable_endpoints``: list only the replicas and ISR members that are alive
    with ``listener`` (Metadata v0); ``error_unavailable_listeners``: a registered leader
    without ``listener`` is LISTENER_NOT_FOUND rather than LEADER_NOT_AVAILABLE."""
    answer = []
    for name in topics:
        topic = image.topic(name)
        if topic is None:
            continue
        answer.append(TopicMetadata(name, topic.topic_id, name in INTERNAL_TOPICS, tuple(
            _partition(image, index, topic.partitions[index], listener,
                       error_unavailable_endpoints, error_unavailable_listeners)
            for index in sorted(topic.partitions))))
    return answer


def partition_metadata(image: MetadataImage, topic: str, partition: int,
                       listener: str = DEFAULT_LISTENER) -> PartitionMetadata | None:
    """One partition as :func:`topic_metadata` answers it; None when the image lacks it."""
    found = image.topic(topic)
    registration = found.partitions.get(partition) if found is not None else None
    if registration is None:
        return None
    return _partition(image, partition, registration, listener, False, False)


def _partition(image: MetadataImage, index: int, partition: PartitionRegistration,
               listener: str, error_unavailable_endpoints: bool,
               error_unavailable_listeners: bool) -> PartitionMetadata:
    replicas, isr = partition.replicas, partition.isr
    if error_unavailable_endpoints:
        replicas = tuple(b for b in replicas if _alive_with(image, b, listener))
        isr = tuple(b for b in isr if _alive_with(image, b, listener))
    offline = offline_replicas(image, partition, listener)
    leader = image.brokers.get(partition.leader)
    if leader is None or _endpoint(leader, listener) is None:
        error = "LISTENER_NOT_FOUND" if leader is not None and error_unavailable_listeners \
            else "LEADER_NOT_AVAILABLE"
        return PartitionMetadata(index, error, NO_LEADER, partition.leader_epoch, replicas,
                                 isr, offline)
    error = "REPLICA_NOT_AVAILABLE" if len(replicas) < len(partition.replicas) or \
        len(isr) < len(partition.isr) else "NONE"
    return PartitionMetadata(index, error, partition.leader, partition.leader_epoch, replicas,
                             isr, offline)


def offline_replicas(image: MetadataImage, partition: PartitionRegistration,
                     listener: str = DEFAULT_LISTENER) -> tuple[int, ...]:
    """The partition's replicas that are offline (see the module docs), in replica order."""
    offline = []
    for position, broker_id in enumerate(partition.replicas):
        broker = image.brokers.get(broker_id)
        if broker is None or broker.fenced or _endpoint(broker, listener) is None or \
                not _directory_online(broker, partition, position):
            offline.append(broker_id)
    return tuple(offline)


def _directory_online(broker: BrokerRegistration, partition: PartitionRegistration,
                      position: int) -> bool:
    directories = partition.directories
    directory = directories[position] if position < len(directories) else MIGRATING_DIRECTORY
    if directory in (UNASSIGNED_DIRECTORY, MIGRATING_DIRECTORY):
        return True
    if directory == LOST_DIRECTORY:
        return False
    return not broker.directories or directory in broker.directories


def _endpoint(broker: BrokerRegistration, listener: str) -> BrokerEndpoint | None:
    return next((e for e in broker.endpoints if e.name == listener), None)


def _alive_with(image: MetadataImage, broker_id: int, listener: str) -> bool:
    broker = image.brokers.get(broker_id)
    return broker is not None and not broker.fenced and _endpoint(broker, listener) is not None


def partition_leader(image: MetadataImage, topic: str, partition: int,
                     listener: str = DEFAULT_LISTENER) -> int | None:
    """The leader a client is told for a partition, or None (no such partition, or its
    leader cannot be named: LEADER_NOT_AVAILABLE or LISTENER_NOT_FOUND)."""
    found = image.topic(topic)
    registration = found.partitions.get(partition) if found is not None else None
    if registration is None:
        return None
    leader = image.brokers.get(registration.leader)  # the rule of _partition, without the rest
    return registration.leader if leader is not None and _endpoint(leader, listener) is not None \
        else None


def alive_brokers(image: MetadataImage) -> tuple[int, ...]:
    """The ids of the registered, unfenced brokers, ascending."""
    return tuple(sorted(b for b, reg in image.brokers.items() if not reg.fenced))


def alive_broker_node(image: MetadataImage, broker_id: int,
                      listener: str = DEFAULT_LISTENER) -> BrokerEndpoint | None:
    """The endpoint of an alive broker on ``listener``; None if it is not alive or lacks it."""
    broker = image.brokers.get(broker_id)
    return None if broker is None or broker.fenced else _endpoint(broker, listener)


def is_broker_fenced(image: MetadataImage, broker_id: int) -> bool:
    """True when the broker is registered and fenced (an unknown broker is not fenced)."""
    broker = image.brokers.get(broker_id)
    return broker is not None and broker.fenced


def is_broker_shutting_down(image: MetadataImage, broker_id: int) -> bool:
    """True when the broker is registered and in controlled shutdown."""
    broker = image.brokers.get(broker_id)
    return broker is not None and broker.in_controlled_shutdown


def alive_broker_epoch(image: MetadataImage, broker_id: int) -> int | None:
    """The broker epoch of an alive broker; None if it is unknown or fenced."""
    broker = image.brokers.get(broker_id)
    return None if broker is None or broker.fenced else broker.epoch


class DescribedBroker(msgspec.Struct, frozen=True):
    """One broker of a DescribeCluster answer (Kafka's DescribeClusterBroker)."""

    broker_id: int
    host: str
    port: int
    rack: str | None = None


class ClusterDescription(msgspec.Struct, frozen=True):
    """A broker's DescribeCluster answer from its image (Kafka's KafkaApis.handleDescribeCluster
    in KRaft mode): the alive brokers with an endpoint on the client's listener, and as the
    controller id a random alive broker (KIP-590: KRaft's clients never talk to the
    controllers), -1 when none is alive."""

    brokers: tuple[DescribedBroker, ...]
    controller_id: int


def describe_cluster(image: MetadataImage, rng: random.Random,
                     listener: str = DEFAULT_LISTENER) -> ClusterDescription:
    """What a broker whose published image is ``image`` answers a DescribeCluster request
    that came in on ``listener``; ``rng`` draws the controller id (brokers in id order)."""
    brokers = []
    for broker_id in alive_brokers(image):
        registration = image.brokers[broker_id]
        endpoint = _endpoint(registration, listener)
        if endpoint is not None:
            brokers.append(DescribedBroker(broker_id, endpoint.host, endpoint.port,
                                           registration.rack))
    alive = alive_brokers(image)
    controller_id = alive[rng.randrange(len(alive))] if alive else -1
    return ClusterDescription(tuple(brokers), controller_id)
