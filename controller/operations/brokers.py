"""RegisterBroker, UnregisterBroker, FenceBroker and UnfenceBroker.

Fencing and unregistering take the broker out of every ISR it is in and move
leadership away from it; unfencing gives it the leadership of leaderless
partitions it is in the ISR of (Kafka's generateLeaderAndIsrUpdates).
"""

from __future__ import annotations

import msgspec

from controller.errors import ApiError
from controller.operations.base import Generated, OperationContext
from controller.operations.placement import broker_leaving, broker_returning, usable_brokers
from metadata.image import BrokerRegistration, MetadataImage
from metadata.schema import (
    BrokerEndpoint,
    BrokerRegistrationChangeRecord,
    FenceBrokerRecord,
    MetadataRecord,
    RegisterBrokerRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)
from metadata.uuids import random_uuid
from metadata.versions import BROKER_REGISTRATION_CHANGE


def _registered(image: MetadataImage, broker_id: int) -> BrokerRegistration:
    broker = image.brokers.get(broker_id)
    if broker is None:
        raise ApiError("BROKER_ID_NOT_REGISTERED", f"Broker {broker_id} is not registered.")
    return broker


def _leaving_changes(image: MetadataImage, broker_id: int,
                     out: list[MetadataRecord] | None = None) -> list[MetadataRecord]:
    usable = set(usable_brokers(image)) - {broker_id}
    out = [] if out is None else out
    for topic_id in sorted(image.topics_by_id):
        topic = image.topics_by_id[topic_id]
        for pid in sorted(topic.partitions):
            change = broker_leaving(topic_id, pid, topic.partitions[pid], broker_id, usable)
            if change is not None:
                out.append(change)
    return out


class RegisterBroker(msgspec.Struct, frozen=True):
    """Register (or re-register) a broker; it starts fenced, with the record's offset as epoch."""

    broker_id: int
    rack: str | None = None
    host: str = "localhost"
    port: int = 9092

    def describe(self) -> str:
        """E.g. ``RegisterBroker(1)``."""
        return f"RegisterBroker({self.broker_id})"

    def generate(self, ctx: OperationContext) -> Generated:
        """One RegisterBrokerRecord."""
        if self.broker_id < 0:
            raise ApiError("INVALID_REQUEST", f"broker id must not be negative: {self.broker_id}")
        record = RegisterBrokerRecord(
            broker_id=self.broker_id, incarnation_id=random_uuid(ctx.rng),
            broker_epoch=ctx.next_offset, rack=self.rack, fenced=True,
            end_points=(BrokerEndpoint("PLAINTEXT", self.host, self.port, 0),))
        return Generated([record], {"brokerId": self.broker_id, "brokerEpoch": ctx.next_offset})


class UnregisterBroker(msgspec.Struct, frozen=True):
    """Remove a broker's registration."""

    broker_id: int

    def describe(self) -> str:
        """E.g. ``UnregisterBroker(1)``."""
        return f"UnregisterBroker({self.broker_id})"

    def generate(self, ctx: OperationContext) -> Generated:
        """ISR and leader changes away from the broker, then UnregisterBrokerRecord."""
        broker = _registered(ctx.image, self.broker_id)
        records = _leaving_changes(ctx.image, self.broker_id, ctx.records())
        records.append(UnregisterBrokerRecord(self.broker_id, broker.epoch))
        return Generated(records, {"brokerId": self.broker_id})


class FenceBroker(msgspec.Struct, frozen=True):
    """Fence a broker (as when its session expires)."""

    broker_id: int

    def describe(self) -> str:
        """E.g. ``FenceBroker(1)``."""
        return f"FenceBroker({self.broker_id})"

    def generate(self, ctx: OperationContext) -> Generated:
        """The fence record, then ISR and leader changes away from the broker."""
        broker = _registered(ctx.image, self.broker_id)
        if broker.fenced:
            return Generated([], {"brokerId": self.broker_id, "fenced": True})
        fence: MetadataRecord
        if ctx.image.metadata_version >= BROKER_REGISTRATION_CHANGE:
            fence = BrokerRegistrationChangeRecord(self.broker_id, broker.epoch, fenced=1)
        else:
            fence = FenceBrokerRecord(self.broker_id, broker.epoch)
        return Generated([fence, *_leaving_changes(ctx.image, self.broker_id)],
                         {"brokerId": self.broker_id, "fenced": True})


class UnfenceBroker(msgspec.Struct, frozen=True):
    """Unfence a broker (as when it has caught up after registering)."""

    broker_id: int

    def describe(self) -> str:
        """E.g. ``UnfenceBroker(1)``."""
        return f"UnfenceBroker({self.broker_id})"

    def generate(self, ctx: OperationContext) -> Generated:
        """The unfence record, then leadership of leaderless partitions it is in."""
        broker = _registered(ctx.image, self.broker_id)
        if not broker.fenced:
            return Generated([], {"brokerId": self.broker_id, "fenced": False})
        unfence: MetadataRecord
        if ctx.image.metadata_version >= BROKER_REGISTRATION_CHANGE:
            unfence = BrokerRegistrationChangeRecord(self.broker_id, broker.epoch, fenced=-1)
        else:
            unfence = UnfenceBrokerRecord(self.broker_id, broker.epoch)
        records: list[MetadataRecord] = [unfence]
        image = ctx.image
        for topic_id in sorted(image.topics_by_id):
            topic = image.topics_by_id[topic_id]
            for pid in sorted(topic.partitions):
                change = broker_returning(topic_id, pid, topic.partitions[pid], self.broker_id)
                if change is not None:
                    records.append(change)
        return Generated(records, {"brokerId": self.broker_id, "fenced": False})
