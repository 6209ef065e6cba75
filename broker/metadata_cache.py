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
from metadata.uuids import LOST_DIRECTORY, MIGRATING_DIRECTORY, UNASSIGNED_DIRECTORY

DEFAULT_LISTENER = "PLAINTEXT"
"""The listener every simulated broker registers (``RegisterBroker``'s one endpoint)."""

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
"""The internal topics a Metadata answer marks ``is_internal`` (Kafka's Topic.isInternal)."""


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
    controllers), -1 when none is alive or the one drawn has no endpoint on the listener
    (Kafka's AuthHelper.computeDescribeClusterResponse names only a listed node)."""

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
    if all(b.broker_id != controller_id for b in brokers):
        controller_id = -1  # drawn without the listener: Kafka names no node not listed
    return ClusterDescription(tuple(brokers), controller_id)


MATCH_TYPE_EXACT = 0
"""A quota filter component naming one entity name (Kafka's MATCH_TYPE_EXACT)."""
MATCH_TYPE_DEFAULT = 1
"""A quota filter component naming the type's default entity (MATCH_TYPE_DEFAULT)."""
MATCH_TYPE_SPECIFIED = 2
"""A quota filter component matching any name of the type (MATCH_TYPE_SPECIFIED)."""

_QUOTA_ENTITY_TYPES = ("ip", "user", "client-id")


class QuotaFilterComponent(msgspec.Struct, frozen=True):
    """One component of a DescribeClientQuotas filter (Kafka's ComponentData): an entity
    type, how it matches (``MATCH_TYPE_*``) and, for an exact match, the name."""

    entity_type: str
    match_type: int = MATCH_TYPE_EXACT
    match: str | None = None


QuotaValues = tuple[tuple[str, float], ...]
"""An entity's quota values, by key."""


class QuotaDescription(msgspec.Struct, frozen=True):
    """A DescribeClientQuotas answer: NONE and the matching entities with their values
    (entities in type then name order, a default name first; keys sorted), or an error
    (INVALID_REQUEST, UNSUPPORTED_VERSION) with Kafka's message and no entity."""

    error: str
    message: str | None
    entries: tuple[tuple[tuple[tuple[str, str | None], ...], QuotaValues], ...] = ()

    def as_dict(self) -> dict[tuple[tuple[str, str | None], ...], dict[str, float]]:
        """The entries as a dict of entity to its values."""
        return {entity: dict(values) for entity, values in self.entries}


def _refused_filter(error: str, message: str) -> QuotaDescription:
    return QuotaDescription(error, message)


def describe_client_quotas(image: MetadataImage, components: Iterable[QuotaFilterComponent],
                           strict: bool = False) -> QuotaDescription:
    """What a broker answers a DescribeClientQuotas request from its image (Kafka's
    ClientQuotasImage.describe): the filter is checked first, in Kafka's order and words;
    then every entity whose types and names match every component (with ``strict``, an
    entity with no other type) is listed."""
    exact: dict[str, str | None] = {}
    specified: set[str] = set()
    for component in components:
        kind = component.entity_type
        if not kind:
            return _refused_filter("INVALID_REQUEST", "Invalid empty entity type.")
        if kind in exact or kind in specified:
            return _refused_filter("INVALID_REQUEST", f"Entity type {kind} cannot appear more "
                                                      f"than once in the filter.")
        if kind not in _QUOTA_ENTITY_TYPES:
            return _refused_filter("UNSUPPORTED_VERSION", f"Unsupported entity type {kind}")
        if component.match_type == MATCH_TYPE_EXACT:
            if component.match is None:
                return _refused_filter("INVALID_REQUEST", "Request specified MATCH_TYPE_EXACT, "
                                                          "but set match string to null.")
            exact[kind] = component.match
        elif component.match_type == MATCH_TYPE_DEFAULT:
            if component.match is not None:
                return _refused_filter("INVALID_REQUEST", "Request specified "
                                                          "MATCH_TYPE_DEFAULT, but also "
                                                          "specified a match string.")
            exact[kind] = None
        elif component.match_type == MATCH_TYPE_SPECIFIED:
            if component.match is not None:
                return _refused_filter("INVALID_REQUEST", "Request specified "
                                                          "MATCH_TYPE_SPECIFIED, but also "
                                                          "specified a match string.")
            specified.add(kind)
        else:
            return _refused_filter("INVALID_REQUEST",
                                   f"Unknown match type {component.match_type}")
    named = exact.keys() | specified
    if "ip" in named and ("user" in named or "client-id" in named):
        return _refused_filter("INVALID_REQUEST", "Invalid entity filter component "
                                                  "combination. IP filter component should "
                                                  "not be used with user or clientId filter "
                                                  "component.")
    entries = []
    for entity, values in image.client_quotas.items():
        names = dict(entity)
        if strict and len(names) != len(named):
            continue
        if any(kind not in names or names[kind] != name for kind, name in exact.items()):
            continue
        if any(kind not in names for kind in specified):
            continue
        entries.append((entity, tuple(sorted(values.items()))))
    entries.sort(key=lambda entry: tuple((kind, name is not None, name or "")
                                         for kind, name in entry[0]))
    return QuotaDescription("NONE", None, tuple(entries))
