"""RegisterBroker, UnregisterBroker, FenceBroker, UnfenceBroker and ControlledShutdown.

Fencing, unregistering, a controlled shutdown and a re-registration under a
new incarnation take the broker out of every ISR it is in and move leadership
away from it; unfencing runs an election for every leaderless partition with
it counted as active, its own or not (Kafka's generateLeaderAndIsrUpdates; the
rules are in :mod:`controller.operations.leadership`). Only the broker's own
partitions are visited, through the image's broker index (on an unfence, the
leaderless partitions, through the image's index of them). With eligible leader replicas
on (KIP-966) these changes are :mod:`controller.operations.elr_changes`'s, and a
re-registration that does not name the broker epoch of a clean shutdown also takes the
broker out of every ELR.
"""

from __future__ import annotations

from typing import ClassVar

import msgspec

from controller.errors import ApiError
from controller.operations.base import Generated, OperationContext
from controller.operations.elr import elr_enabled
from controller.operations.elr_changes import elr_leaving_changes, elr_returning_changes
from controller.operations.leadership import leaving_changes, returning_changes
from metadata.image import BrokerRegistration, MetadataImage
from metadata.schema import (
    BrokerEndpoint,
    BrokerFeature,
    BrokerRegistrationChangeRecord,
    FenceBrokerRecord,
    MetadataRecord,
    PartitionChangeRecord,
    RegisterBrokerRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)
from metadata.uuids import random_uuid, uuid_to_bytes
from metadata.versions import (
    BROKER_REGISTRATION_CHANGE,
    DIRECTORIES,
    IN_CONTROLLED_SHUTDOWN_STATE,
    METADATA_VERSION_FEATURE,
    MINIMUM_KRAFT,
    SUPPORTED_FEATURES,
)

BROKER_FEATURES: tuple[BrokerFeature, ...] = tuple(
    BrokerFeature(name, lowest, highest)
    for name, (lowest, highest) in sorted(SUPPORTED_FEATURES.items()))
"""What a kraftsim broker registers as supported: the features kraftsim knows, by name."""


def _registered(image: MetadataImage, broker_id: int) -> BrokerRegistration:
    broker = image.brokers.get(broker_id)
    if broker is None:
        raise ApiError("BROKER_ID_NOT_REGISTERED",
                       f"Broker ID {broker_id} is not currently registered")
    return broker


def _registration_features(image: MetadataImage, requested: tuple[BrokerFeature, ...]
                           ) -> tuple[BrokerFeature, ...]:
    """The features a registration records, after Kafka's checks (ClusterControlManager.
    registerBroker): each range it gives holds the finalized level (metadata.version's
    defaulting to 3.0-IV1's); a broker that names no metadata.version supports 3.0-IV1
    only, recorded as such; and a feature finalized above 0 that it does not name counts
    as supported at level 0 only. Raises UNSUPPORTED_VERSION in Kafka's words."""
    finalized = {**image.features, METADATA_VERSION_FEATURE: image.metadata_version}
    recorded = list(requested)
    named = {feature.name for feature in requested}
    if METADATA_VERSION_FEATURE not in named:
        recorded.append(BrokerFeature(METADATA_VERSION_FEATURE, MINIMUM_KRAFT, MINIMUM_KRAFT))
    unnamed = [BrokerFeature(name, 0, 0) for name, level in sorted(finalized.items())
               if level != 0 and name not in named and name != METADATA_VERSION_FEATURE]
    for feature in (*recorded, *unnamed):
        level = finalized.get(feature.name, 0)
        if not feature.min_supported_version <= level <= feature.max_supported_version:
            raise ApiError("UNSUPPORTED_VERSION",
                           f"Unable to register because the broker does not support finalized "
                           f"version {level} of {feature.name}. The broker wants a version "
                           f"between {feature.min_supported_version} and "
                           f"{feature.max_supported_version}, inclusive.")
    return tuple(recorded)


def _leaving_changes(ctx: OperationContext, broker_id: int,
                     out: list[MetadataRecord] | None = None, *,
                     elr_members: bool = False) -> list[MetadataRecord]:
    """The changes that take ``broker_id`` out of its ISRs and leaderships (with ELR on,
    :mod:`controller.operations.elr_changes`'s; ``elr_members``: also visit the partitions
    whose ELR holds it, as an unregistration does)."""
    out = [] if out is None else out
    if elr_enabled(ctx.image):
        out.extend(elr_leaving_changes(ctx.image, broker_id, ctx.node_id,
                                       elr_members=elr_members))
    else:
        out.extend(leaving_changes(ctx.image, broker_id, ctx.node_id))
    return out


def check_listener(host: str, port: int) -> None:
    """A listener Kafka's broker can put in its registration request (ListenerInfo's
    checkHostIsSerializable and checkPortIsSerializable, in their words): a host that is
    not blank and a port in 1-65535. Kafka's broker fails before sending the request;
    kraftsim refuses the operation with INVALID_REQUEST."""
    if not host.strip():
        raise ApiError("INVALID_REQUEST", "Cannot serialize empty host in ListenerInfo.")
    if port == 0:
        raise ApiError("INVALID_REQUEST", "Cannot serialize ephemeral port 0 in ListenerInfo.")
    if port < 0:
        raise ApiError("INVALID_REQUEST",
                       f"Cannot serialize negative port number {port} in ListenerInfo.")
    if port > 65535:
        raise ApiError("INVALID_REQUEST",
                       f"Cannot serialize invalid port number {port} in ListenerInfo.")


def check_cluster_id(expected: str | None, requested: str | None) -> None:
    """A registration names the controller's cluster id (Kafka's ClusterControlManager, in
    its words); either side None (an operator's tool, a controller without one) passes.
    Raises INCONSISTENT_CLUSTER_ID."""
    if expected is not None and requested is not None and requested != expected:
        raise ApiError("INCONSISTENT_CLUSTER_ID",
                       f"Expected cluster ID {expected}, but got cluster ID {requested}")


def _reserved_directory(directory: str) -> bool:
    """Kafka's DirectoryId.reserved: one of the first 100 Uuids (MIGRATING, UNASSIGNED,
    LOST and those kept for later), the high 64 bits 0 and the low 64 bits below 100 read
    as Java's signed long, so also a Uuid whose low half has its top bit set. Raises
    INVALID_REQUEST for a malformed Uuid."""
    try:
        raw = uuid_to_bytes(directory)
    except ValueError:
        raise ApiError("INVALID_REQUEST", f"Not a valid directory ID: {directory}") from None
    return raw[:8] == bytes(8) and int.from_bytes(raw[8:], "big", signed=True) < 100


def _check_directories(image: MetadataImage, broker_id: int,
                       log_dirs: tuple[str, ...]) -> None:
    """The log directories a registration names from metadata.version 3.7-IV2 (Kafka's
    ClusterControlManager.registerBroker, in its words): some, none reserved, none twice,
    none registered by another broker. Raises INVALID_REGISTRATION."""
    if not log_dirs:
        raise ApiError("INVALID_REGISTRATION", "No directories specified in request")
    if any(_reserved_directory(d) for d in log_dirs):
        raise ApiError("INVALID_REGISTRATION", "Reserved directory ID in request")
    if len(set(log_dirs)) != len(log_dirs):
        raise ApiError("INVALID_REGISTRATION", "Duplicate directory ID in request")
    for directory in log_dirs:
        for other_id in sorted(image.brokers):
            if other_id != broker_id and directory in image.brokers[other_id].directories:
                raise ApiError("INVALID_REGISTRATION", f"Broker {other_id} is already "
                                                       f"registered with directory {directory}")


class RegisterBroker(msgspec.Struct, frozen=True):
    """Register (or re-register) a broker; it starts fenced, with the offset of the
    operation's first record as its epoch (Kafka's nextWriteOffset).

    Refused, in Kafka's order: a cluster id other than the controller's
    (INCONSISTENT_CLUSTER_ID), a ZooKeeper broker in migration (BROKER_ID_NOT_REGISTERED:
    Kafka's controllers no longer register those), from metadata.version 3.7-IV2 log
    directories that are missing, reserved, repeated or another broker's
    (INVALID_REGISTRATION), a feature level the broker does not support
    (UNSUPPORTED_VERSION). A broker id below 0 and a listener Kafka's broker could
    not serialize are INVALID_REQUEST before those. (A new incarnation while the old one's
    session lives, DUPLICATE_BROKER_REGISTRATION, is the broker service's check: it
    holds the sessions.)
    """

    broker_id: int
    rack: str | None = None
    host: str = "localhost"
    port: int = 9092
    incarnation_id: str | None = None
    """The broker process's id (None: a fresh random one, as an operator's tool would)."""
    features: tuple[BrokerFeature, ...] = BROKER_FEATURES
    """The feature levels the broker supports (Kafka's registration request's features)."""
    cluster_id: str | None = None
    """The cluster id the broker's meta.properties names (None: not checked)."""
    is_migrating_zk_broker: bool = False
    """Kafka's isMigratingZkBroker: a ZooKeeper-mode broker in a migration (refused)."""
    log_dirs: tuple[str, ...] | None = None
    """The ids of the broker's log directories, recorded from metadata.version 3.7-IV2 (and
    checked there). None: the broker models no directories (kraftsim's simulated brokers,
    an operator's tool), so none is checked or recorded."""
    previous_broker_epoch: int = -1
    """The broker epoch the broker held when it last shut down cleanly, -1 when it did not
    (Kafka's RegisterBroker v2+ ``previousBrokerEpoch``, which a Kafka broker keeps in its
    clean-shutdown file). A new incarnation naming the epoch the controller holds for it
    restarted cleanly; with eligible leader replicas on, any other leaves every ELR."""

    def describe(self) -> str:
        """E.g. ``RegisterBroker(1)``."""
        return f"RegisterBroker({self.broker_id})"

    def generate(self, ctx: OperationContext) -> Generated:
        """One RegisterBrokerRecord; the response's broker epoch is the record's.

        A new incarnation first leaves its partitions (Kafka's handleBrokerShutdown: as a
        fence does; with eligible leader replicas on and an unclean shutdown, that is a
        ``previous_broker_epoch`` other than the epoch registered, it also leaves every
        ELR) and takes the offset of the operation's first record as its
        epoch (Kafka's ``offsetControl.nextWriteOffset()``), fenced. The
        incarnation already registered amends its registration (Kafka's "amending
        registration"): it keeps its epoch, and whether it is fenced or in controlled
        shutdown.
        """
        if self.broker_id < 0:
            raise ApiError("INVALID_REQUEST", f"broker id must not be negative: {self.broker_id}")
        check_listener(self.host, self.port)
        check_cluster_id(ctx.cluster_id, self.cluster_id)
        if self.is_migrating_zk_broker:
            raise ApiError("BROKER_ID_NOT_REGISTERED",
                           "Controller does not support registering ZK brokers.")
        log_dirs: tuple[str, ...] = ()
        if self.log_dirs is not None and ctx.image.metadata_version >= DIRECTORIES:
            _check_directories(ctx.image, self.broker_id, self.log_dirs)
            log_dirs = self.log_dirs
        features = _registration_features(ctx.image, self.features)
        incarnation = self.incarnation_id or random_uuid(ctx.rng)
        records: list[MetadataRecord] = []
        existing = ctx.image.brokers.get(self.broker_id)
        endpoints = (BrokerEndpoint("PLAINTEXT", self.host, self.port, 0),)
        if existing is not None and existing.incarnation_id == incarnation:
            records.append(RegisterBrokerRecord(
                broker_id=self.broker_id, incarnation_id=incarnation,
                broker_epoch=existing.epoch, rack=self.rack, fenced=existing.fenced,
                in_controlled_shutdown=existing.in_controlled_shutdown, end_points=endpoints,
                features=features, log_dirs=log_dirs))
            return Generated(records, {"brokerId": self.broker_id,
                                       "brokerEpoch": existing.epoch})
        if elr_enabled(ctx.image):
            clean = existing is not None and self.previous_broker_epoch == existing.epoch
            records.extend(elr_leaving_changes(ctx.image, self.broker_id, ctx.node_id,
                                               unclean_shutdown=not clean))
        elif existing is not None:
            records.extend(leaving_changes(ctx.image, self.broker_id, ctx.node_id))
        epoch = ctx.next_offset
        records.append(RegisterBrokerRecord(
            broker_id=self.broker_id, incarnation_id=incarnation,
            broker_epoch=epoch, rack=self.rack, fenced=True, end_points=endpoints,
            features=features, log_dirs=log_dirs))
        return Generated(records, {"brokerId": self.broker_id, "brokerEpoch": epoch})


class UnregisterBroker(msgspec.Struct, frozen=True):
    """Remove a broker's registration."""

    broker_id: int

    def describe(self) -> str:
        """E.g. ``UnregisterBroker(1)``."""
        return f"UnregisterBroker({self.broker_id})"

    def generate(self, ctx: OperationContext) -> Generated:
        """ISR and leader changes away from the broker, then UnregisterBrokerRecord."""
        broker = _registered(ctx.image, self.broker_id)
        records = _leaving_changes(ctx, self.broker_id, ctx.records(), elr_members=True)
        records.append(UnregisterBrokerRecord(self.broker_id, broker.epoch))
        return Generated(records, {"brokerId": self.broker_id})


class FenceBroker(msgspec.Struct, frozen=True):
    """Fence a broker (as when its session expires)."""

    splits_when_atomic: ClassVar[bool] = True
    """Kafka writes a fence as a non-atomic result (split over batches when large), so
    ``atomic`` mode, Kafka as built, does not refuse it (see controller/write_mode.py)."""
    broker_id: int
    keep_leadership: bool = False
    """Test-only (the fence-keeps-leader mutation): leave the broker leader where it leads."""

    def describe(self) -> str:
        """E.g. ``FenceBroker(1)``."""
        return f"FenceBroker({self.broker_id})"

    def generate(self, ctx: OperationContext) -> Generated:
        """ISR and leader changes away from the broker, then the fence record (last, as
        Kafka's handleBrokerFenced orders them: a prefix of a fence split over batches
        never shows a fenced broker as a partition leader)."""
        broker = _registered(ctx.image, self.broker_id)
        if broker.fenced:
            return Generated([], {"brokerId": self.broker_id, "fenced": True})
        fence: MetadataRecord
        if ctx.image.metadata_version >= BROKER_REGISTRATION_CHANGE:
            fence = BrokerRegistrationChangeRecord(self.broker_id, broker.epoch, fenced=1)
        else:
            fence = FenceBrokerRecord(self.broker_id, broker.epoch)
        changes = _leaving_changes(ctx, self.broker_id)
        if self.keep_leadership:
            changes = [msgspec.structs.replace(c, leader=-2) for c in changes
                       if isinstance(c, PartitionChangeRecord) and c.isr is not None]
        return Generated([*changes, fence], {"brokerId": self.broker_id, "fenced": True})


class UnfenceBroker(msgspec.Struct, frozen=True):
    """Unfence a broker (as when it has caught up after registering)."""

    splits_when_atomic: ClassVar[bool] = True
    """Like :class:`FenceBroker`: Kafka's heartbeat answer, the elections an unfence allows
    included, is a non-atomic result (refused in ``atomic`` mode, the broker would stay
    fenced and its leaderless partitions without a leader)."""
    broker_id: int

    def describe(self) -> str:
        """E.g. ``UnfenceBroker(1)``."""
        return f"UnfenceBroker({self.broker_id})"

    def generate(self, ctx: OperationContext) -> Generated:
        """The unfence record, then an election for every leaderless partition that one
        more active broker lets elect (Kafka's handleBrokerUnfenced)."""
        broker = _registered(ctx.image, self.broker_id)
        if not broker.fenced:
            return Generated([], {"brokerId": self.broker_id, "fenced": False})
        unfence: MetadataRecord
        if ctx.image.metadata_version >= BROKER_REGISTRATION_CHANGE:
            unfence = BrokerRegistrationChangeRecord(self.broker_id, broker.epoch, fenced=-1)
        else:
            unfence = UnfenceBrokerRecord(self.broker_id, broker.epoch)
        returning = elr_returning_changes if elr_enabled(ctx.image) else returning_changes
        records: list[MetadataRecord] = [
            unfence, *returning(ctx.image, self.broker_id, ctx.node_id)]
        return Generated(records, {"brokerId": self.broker_id, "fenced": False})


class ControlledShutdown(msgspec.Struct, frozen=True):
    """A broker asked to shut down (wantShutDown): it leaves its ISRs and leaderships."""

    splits_when_atomic: ClassVar[bool] = True
    """Like :class:`FenceBroker`: a non-atomic result in Kafka."""
    broker_id: int

    def describe(self) -> str:
        """E.g. ``ControlledShutdown(1)``."""
        return f"ControlledShutdown({self.broker_id})"

    def generate(self, ctx: OperationContext) -> Generated:
        """BrokerRegistrationChangeRecord(inControlledShutdown), then the partition changes
        that take the broker out of its ISRs and leaderships (Kafka's
        handleBrokerInControlledShutdown writes them in this order).

        Below metadata.version 3.3-IV3, which cannot record a controlled shutdown (Kafka
        then keeps it in its heartbeat manager alone), the broker is fenced instead: the
        partition changes, then the fence, as :class:`FenceBroker` writes them. A broker
        marked already gets the changes still to make, and no second mark (a new active
        controller starts the shutdown again; the first one's write may have been cut
        after the mark).
        """
        broker = _registered(ctx.image, self.broker_id)
        if broker.fenced:
            return Generated([], {"brokerId": self.broker_id})
        changes = _leaving_changes(ctx, self.broker_id)
        if broker.in_controlled_shutdown:  # marked already: what is left to move, if any
            return Generated(changes, {"brokerId": self.broker_id})
        level = ctx.image.metadata_version
        if level >= IN_CONTROLLED_SHUTDOWN_STATE:
            mark = BrokerRegistrationChangeRecord(self.broker_id, broker.epoch,
                                                  in_controlled_shutdown=1)
            return Generated([mark, *changes], {"brokerId": self.broker_id})
        fence: MetadataRecord
        if level >= BROKER_REGISTRATION_CHANGE:
            fence = BrokerRegistrationChangeRecord(self.broker_id, broker.epoch, fenced=1)
        else:
            fence = FenceBrokerRecord(self.broker_id, broker.epoch)
        return Generated([*changes, fence], {"brokerId": self.broker_id})
