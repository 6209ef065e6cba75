"""MetadataImage: the cluster metadata at one offset, immutable and structurally shared.

Every collection is an ``immutables.Map`` (a HAMT): a new image after a small
delta shares everything unchanged with the old one, and keeping an old image
as a revert point costs one reference. The same model serves the controller
(its state and revert points) and the brokers (their published images):
Kafka keeps two replay implementations; kraftsim keeps one, so that a broker
image and the controller's state at the same offset can be compared directly.

Maps are iterated in hash order, which for string keys changes with
PYTHONHASHSEED: anything that leaves the process (snapshots, listings, JSON)
sorts first. ``digest`` is an order-independent checksum of the content,
maintained incrementally, so that two images can be compared in O(1).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import repeat
from typing import ClassVar, TypeVar

import immutables
import msgspec
from msgspec.structs import replace

from metadata.schema import (
    BrokerEndpoint,
    BrokerFeature,
    DelegationTokenRecord,
    PartitionChangeRecord,
    UserScramCredentialRecord,
)
from metadata.uuids import ZERO_UUID
from metadata.versions import METADATA_VERSION_FEATURE, MINIMUM_KRAFT

NO_LEADER = -1
"""Kafka's leader id for a partition without a leader."""
NO_LEADER_CHANGE = -2
"""PartitionChangeRecord's leader value for "unchanged"."""
RECOVERED = 0
"""Kafka's LeaderRecoveryState of a partition whose leader has every acknowledged record."""
RECOVERING = 1
"""Kafka's LeaderRecoveryState after an unclean election, until the leader says RECOVERED."""
LEADER_RECOVERY_STATES = (RECOVERED, RECOVERING)
"""Every leader recovery state a partition can be in (Kafka's LeaderRecoveryState)."""

DIGEST_MASK = (1 << 64) - 1


def _recovery_name(state: int) -> str:
    return "RECOVERING" if state == RECOVERING else "RECOVERED"


class PartitionRegistration(msgspec.Struct, frozen=True, gc=False):
    """One partition's replicas, ISR, leader and epochs (Kafka's PartitionRegistration)."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    leader_epoch: int
    partition_epoch: int
    removing_replicas: tuple[int, ...] = ()
    adding_replicas: tuple[int, ...] = ()
    leader_recovery_state: int = 0
    directories: tuple[str, ...] = ()
    eligible_leader_replicas: tuple[int, ...] | None = None
    last_known_elr: tuple[int, ...] | None = None

    def merge(self, change: PartitionChangeRecord) -> PartitionRegistration:
        """Apply a PartitionChangeRecord with Kafka's rules.

        ``None`` lists and leader -2 keep the current value; a new leader value
        (even the same one) bumps the leader epoch; every change bumps the
        partition epoch.
        """
        leader, leader_epoch = self.leader, self.leader_epoch
        if change.leader != NO_LEADER_CHANGE:
            leader, leader_epoch = change.leader, leader_epoch + 1
        if change.replicas is None and change.directories is None \
                and change.removing_replicas is None and change.adding_replicas is None \
                and change.leader_recovery_state == -1 \
                and change.eligible_leader_replicas is None and change.last_known_elr is None:
            # the common change (ISR and leader: a fence, an AlterPartition), copied in C
            return replace(self, isr=self.isr if change.isr is None else change.isr,
                           leader=leader, leader_epoch=leader_epoch,
                           partition_epoch=self.partition_epoch + 1)
        return PartitionRegistration(
            replicas=self.replicas if change.replicas is None else change.replicas,
            isr=self.isr if change.isr is None else change.isr,
            leader=leader,
            leader_epoch=leader_epoch,
            partition_epoch=self.partition_epoch + 1,
            removing_replicas=(self.removing_replicas if change.removing_replicas is None
                               else change.removing_replicas),
            adding_replicas=(self.adding_replicas if change.adding_replicas is None
                             else change.adding_replicas),
            leader_recovery_state=(self.leader_recovery_state
                                   if change.leader_recovery_state == -1
                                   else change.leader_recovery_state),
            directories=self.directories if change.directories is None else change.directories,
            eligible_leader_replicas=(self.eligible_leader_replicas
                                      if change.eligible_leader_replicas is None
                                      else change.eligible_leader_replicas),
            last_known_elr=(self.last_known_elr if change.last_known_elr is None
                            else change.last_known_elr),
        )

    def describe(self) -> str:
        """Kafka's PartitionRegistration text, as the metadata shell prints it. A
        registration whose record named no directories prints one MIGRATING (zero) id per
        replica, as Kafka's registration fills them in."""
        directories = self.directories or (ZERO_UUID,) * len(self.replicas)
        return (f"PartitionRegistration(replicas={list(self.replicas)}, "
                f"directories=[{', '.join(directories)}], isr={list(self.isr)}, "
                f"removingReplicas={list(self.removing_replicas)}, "
                f"addingReplicas={list(self.adding_replicas)}, "
                f"elr={list(self.eligible_leader_replicas or ())}, "
                f"lastKnownElr={list(self.last_known_elr or ())}, leader={self.leader}, "
                f"leaderRecoveryState={_recovery_name(self.leader_recovery_state)}, "
                f"leaderEpoch={self.leader_epoch}, partitionEpoch={self.partition_epoch})")


class TopicImage(msgspec.Struct, frozen=True, gc=False):
    """A topic: its name, id and partitions by partition id."""

    name: str
    topic_id: str
    partitions: immutables.Map[int, PartitionRegistration]


class BrokerRegistration(msgspec.Struct, frozen=True, gc=False):
    """A registered broker (Kafka's BrokerRegistration)."""

    broker_id: int
    epoch: int
    incarnation_id: str
    endpoints: tuple[BrokerEndpoint, ...] = ()
    features: tuple[BrokerFeature, ...] = ()
    rack: str | None = None
    fenced: bool = True
    in_controlled_shutdown: bool = False
    is_migrating_zk_broker: bool = False
    directories: tuple[str, ...] = ()


class ControllerRegistration(msgspec.Struct, frozen=True, gc=False):
    """A registered controller (from RegisterControllerRecord; read for interop)."""

    controller_id: int
    incarnation_id: str
    zk_migration_ready: bool = False
    endpoints: tuple[BrokerEndpoint, ...] = ()
    features: tuple[BrokerFeature, ...] = ()


ConfigKey = tuple[int, str]
"""A config resource: (Kafka ConfigResource type id, resource name)."""


class StandardAcl(msgspec.Struct, frozen=True, gc=False):
    """One ACL (Kafka's StandardAcl), kept by its id; the codes are Kafka's enum codes
    (see :class:`~metadata.schema.AccessControlEntryRecord`)."""

    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int


class ScramCredentialData(msgspec.Struct, frozen=True, gc=False):
    """A user's SCRAM credential for one mechanism (Kafka's ScramCredentialData).

    Its ``repr`` hides every field, as Kafka's ``toString`` does, so that a credential
    printed in a log line, an error or a trace gives nothing away; the shell shows one
    through :mod:`shell.security_tree` (redacted unless ``--show-secrets``).
    """

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def __repr__(self) -> str:
        return ("ScramCredentialData(salt=[hidden], storedKey=[hidden], "
                "serverKey=[hidden], iterations=[hidden])")

    @classmethod
    def from_record(cls, record: UserScramCredentialRecord) -> ScramCredentialData:
        """The credential a UserScramCredentialRecord sets."""
        return cls(salt=record.salt, stored_key=record.stored_key,
                   server_key=record.server_key, iterations=record.iterations)

    def to_record(self, name: str, mechanism: int) -> UserScramCredentialRecord:
        """The record that sets this credential for user ``name`` and ``mechanism``."""
        return UserScramCredentialRecord(name=name, mechanism=mechanism, salt=self.salt,
                                         stored_key=self.stored_key,
                                         server_key=self.server_key,
                                         iterations=self.iterations)


class DelegationTokenData(msgspec.Struct, frozen=True, gc=False):
    """A delegation token (Kafka's DelegationTokenData: its TokenInformation).

    Its ``repr`` hides the token, as Kafka's ``toString`` does.
    """

    token_id: str
    owner: str
    requester: str
    renewers: tuple[str, ...]
    issue_timestamp: int
    max_timestamp: int
    expiration_timestamp: int

    def __repr__(self) -> str:
        return "DelegationTokenData(tokenInformation=[hidden])"

    @classmethod
    def from_record(cls, record: DelegationTokenRecord) -> DelegationTokenData:
        """The token a DelegationTokenRecord creates or renews."""
        return cls(token_id=record.token_id, owner=record.owner, requester=record.requester,
                   renewers=record.renewers, issue_timestamp=record.issue_timestamp,
                   max_timestamp=record.max_timestamp,
                   expiration_timestamp=record.expiration_timestamp)

    def to_record(self) -> DelegationTokenRecord:
        """The record that creates this token as it is."""
        return DelegationTokenRecord(
            owner=self.owner, requester=self.requester, renewers=self.renewers,
            issue_timestamp=self.issue_timestamp, max_timestamp=self.max_timestamp,
            expiration_timestamp=self.expiration_timestamp, token_id=self.token_id)


QuotaEntity = tuple[tuple[str, str | None], ...]
"""A client quota entity: its (entity type, name) pairs sorted by type, one per type
(``None``: the type's default entity), as Kafka's ClientQuotaEntity map holds them."""


class SecurityImage(msgspec.Struct, frozen=True, gc=False):
    """Client quotas, ACLs, SCRAM credentials and delegation tokens: four parts of Kafka's
    MetadataImage (``clientQuotas``, ``acls``, ``scram``, ``delegationTokens``) that
    kraftsim keeps together, as one field of :class:`MetadataImage`, because their records
    are rare: an image made after a delta of partitions or brokers carries them over as
    one reference (see :mod:`metadata.security_delta`)."""

    EMPTY: ClassVar[SecurityImage]

    client_quotas: immutables.Map[QuotaEntity, immutables.Map[str, float]]
    """Quota values by entity, then quota key (an entity without keys is absent)."""
    acls: immutables.Map[str, StandardAcl]
    """ACLs by id."""
    scram: immutables.Map[int, immutables.Map[str, ScramCredentialData]]
    """SCRAM credentials by mechanism type, then user name (a mechanism without users is
    absent)."""
    delegation_tokens: immutables.Map[str, DelegationTokenData]
    """Delegation tokens by token id."""


SecurityImage.EMPTY = SecurityImage(immutables.Map(), immutables.Map(), immutables.Map(),
                                    immutables.Map())


def digest_of(*parts: object) -> int:
    """The checksum contribution of one entry (in-process only: ``hash`` is salted)."""
    return hash(parts) & DIGEST_MASK


K = TypeVar("K")
V = TypeVar("V")


def apply_entries(current: immutables.Map[K, V], changes: dict[K, V | None], tag: str,
                  digest: int) -> tuple[immutables.Map[K, V], int]:
    """``current`` with ``changes`` applied (``None`` removes a key), and ``digest`` with
    each entry's ``digest_of(tag, key, value)`` term moved along."""
    if not changes:
        return current, digest
    out = current.mutate()
    for key, value in changes.items():
        old = out.get(key)
        if old is not None:
            digest -= digest_of(tag, key, old)
            del out[key]
        if value is not None:
            out[key] = value
            digest += digest_of(tag, key, value)
    return out.finish(), digest


def apply_nested_entries(current: immutables.Map[K, immutables.Map[str, V]],
                         changes: dict[K, dict[str, V | None]], tag: str,
                         digest: int) -> tuple[immutables.Map[K, immutables.Map[str, V]], int]:
    """:func:`apply_entries` one level down; an outer key left without inner entries goes.
    The terms are ``digest_of(tag, outer, key, value)``."""
    if not changes:
        return current, digest
    out = current.mutate()
    for outer, inner_changes in changes.items():
        entries = out.get(outer, immutables.Map()).mutate()
        for key, value in inner_changes.items():
            old = entries.get(key)
            if old is not None:
                digest -= digest_of(tag, outer, key, old)
                del entries[key]
            if value is not None:
                entries[key] = value
                digest += digest_of(tag, outer, key, value)
        updated = entries.finish()
        if len(updated):
            out[outer] = updated
        elif outer in out:
            del out[outer]
    return out.finish(), digest


def partitions_digest(topic_id: str, partition_ids: Iterable[int],
                      registrations: Iterable[PartitionRegistration]) -> int:
    """``digest_of("p", topic_id, pid, reg)`` summed over the pairs, in C (no Python call
    per partition). The terms are not masked: a hash and its masked value are equal modulo
    2**64, which is all an image's digest keeps (the delta that makes an image masks it)."""
    return sum(map(hash, zip(_PARTITION_TAG, repeat(topic_id), partition_ids, registrations)))


def partition_change_digest(topic_id: str, partition_id: int, old: PartitionRegistration,
                            new: PartitionRegistration) -> int:
    """What replacing ``old`` by ``new`` adds to :func:`partitions_digest`'s sum."""
    return hash(("p", topic_id, partition_id, new)) - hash(("p", topic_id, partition_id, old))


_PARTITION_TAG = repeat("p")
"""The partition terms' tag, endlessly: an iterator with no state, which every call's
``zip`` can draw from (making a ``repeat`` costs more than hashing a partition, and a delta
of thousands of small topics sums a digest per topic)."""


class MetadataImage(msgspec.Struct, frozen=True, gc=False):
    """Everything the metadata log says at ``offset`` (the last record it contains).

    ``offset == -1`` is the empty image. ``epoch`` is the leader epoch of that
    record. ``digest`` changes with any change of content and never with the
    provenance.
    """

    EMPTY: ClassVar[MetadataImage]

    offset: int
    epoch: int
    topics_by_id: immutables.Map[str, TopicImage]
    topics_by_name: immutables.Map[str, str]
    brokers: immutables.Map[int, BrokerRegistration]
    controllers: immutables.Map[int, ControllerRegistration]
    configs: immutables.Map[ConfigKey, immutables.Map[str, str]]
    features: immutables.Map[str, int]
    next_producer_id: int = 0
    zk_migration_state: int = 0
    security: SecurityImage = SecurityImage.EMPTY
    """Client quotas, ACLs, SCRAM credentials and delegation tokens (also read as the
    properties of the same names)."""
    digest: int = 0
    partitions_by_broker: immutables.Map[int, immutables.Map[str, tuple[int, ...]]] = \
        msgspec.field(default_factory=immutables.Map)
    """Derived index, broker -> topic id -> partition ids it is a replica of (not in the
    digest); see :mod:`metadata.broker_index`."""
    leaderless_partitions: immutables.Map[str, tuple[int, ...]] = \
        msgspec.field(default_factory=immutables.Map)
    """Derived index, topic id -> sorted ids of its partitions without a leader (topics
    with none left out; not in the digest): what an unfence and the unclean-election
    check visit, without a walk over every partition."""

    @property
    def client_quotas(self) -> immutables.Map[QuotaEntity, immutables.Map[str, float]]:
        """Quota values by entity, then quota key."""
        return self.security.client_quotas

    @property
    def acls(self) -> immutables.Map[str, StandardAcl]:
        """ACLs by id."""
        return self.security.acls

    @property
    def scram(self) -> immutables.Map[int, immutables.Map[str, ScramCredentialData]]:
        """SCRAM credentials by mechanism type, then user name."""
        return self.security.scram

    @property
    def delegation_tokens(self) -> immutables.Map[str, DelegationTokenData]:
        """Delegation tokens by token id."""
        return self.security.delegation_tokens

    @property
    def metadata_version(self) -> int:
        """The metadata.version feature level (3.0-IV1 = 1 when none is set)."""
        return self.features.get(METADATA_VERSION_FEATURE, MINIMUM_KRAFT)

    @property
    def partition_count(self) -> int:
        """How many partitions all topics have together."""
        return sum(len(t.partitions) for t in self.topics_by_id.values())

    def topic(self, name: str) -> TopicImage | None:
        """The topic called ``name``, if any."""
        topic_id = self.topics_by_name.get(name)
        return None if topic_id is None else self.topics_by_id.get(topic_id)

    def same_content(self, other: MetadataImage) -> bool:
        """True when both hold the same metadata (whatever their offsets)."""
        return self.digest == other.digest

    def with_provenance(self, offset: int, epoch: int) -> MetadataImage:
        """The same content at another offset (an empty delta, e.g. after an Abort)."""
        return msgspec.structs.replace(self, offset=offset, epoch=epoch)


MetadataImage.EMPTY = MetadataImage(
    offset=-1, epoch=-1, topics_by_id=immutables.Map(), topics_by_name=immutables.Map(),
    brokers=immutables.Map(), controllers=immutables.Map(), configs=immutables.Map(),
    features=immutables.Map(),
)
