"""The RPCs to the active controller, as frozen Structs (Kafka's ``clients`` request schemas).

Both sides import them: the controller answers them, the broker (or a controller,
registering itself) sends them, and the broker package may not import the controller.
Names and fields follow Kafka's BrokerRegistration, BrokerHeartbeat, AlterPartition,
AllocateProducerIds and ControllerRegistration APIs, reduced to what the simulation
needs. Every request
carries a ``correlation_id`` that its response echoes; a response to anything
but the outstanding request is ignored. ``epoch`` on each message is only for
the trace (the broker epoch, or -1).

:class:`NodeMessage` is the envelope of these and of the brokers' own replica
fetches on the simulated network (raft keeps its own ``Envelope``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from metadata.schema import BrokerEndpoint, BrokerFeature

BROKER_SESSION_TIMEOUT_MS = 9_000
"""Kafka's broker.session.timeout.ms default: how long the active controller keeps an
unfenced broker's session without a heartbeat; the broker caps its resend back-off at it
and gives up on an unanswered request after half of it."""


class NodeMessage(msgspec.Struct, frozen=True, gc=False):
    """A message between two nodes that is not a raft RPC."""

    src: int
    dst: int
    message: Any


class BrokerRegistrationRequest(msgspec.Struct, frozen=True, gc=False):
    """A broker (re)registers with a fresh ``incarnation_id`` (Kafka's BrokerRegistration)."""

    correlation_id: int
    broker_id: int
    incarnation_id: str
    rack: str | None = None
    host: str = "localhost"
    port: int = 9092
    previous_broker_epoch: int = -1
    cluster_id: str | None = None
    """The cluster id of the broker's meta.properties (None: the controller does not check)."""
    features: tuple[BrokerFeature, ...] | None = None
    """The feature levels the broker supports (None: every level kraftsim supports)."""
    is_migrating_zk_broker: bool = False
    """Kafka's isMigratingZkBroker (a ZooKeeper broker in a migration; refused)."""
    log_dirs: tuple[str, ...] | None = None
    """The broker's log directory ids (None: it models none, as kraftsim's brokers)."""

    @property
    def epoch(self) -> int:
        """The broker epoch the broker had before (trace only)."""
        return self.previous_broker_epoch


class BrokerRegistrationResponse(msgspec.Struct, frozen=True, gc=False):
    """``broker_epoch`` is the offset of the RegisterBrokerRecord (-1 on error)."""

    correlation_id: int
    error: str
    broker_epoch: int = -1

    @property
    def epoch(self) -> int:
        """The new broker epoch (trace only)."""
        return self.broker_epoch


class BrokerHeartbeatRequest(msgspec.Struct, frozen=True, gc=False):
    """Sent every broker.heartbeat.interval.ms; ``current_metadata_offset`` is the offset
    of the broker's published image."""

    correlation_id: int
    broker_id: int
    broker_epoch: int
    current_metadata_offset: int
    want_fence: bool = False
    want_shut_down: bool = False

    @property
    def epoch(self) -> int:
        """The broker epoch (trace only)."""
        return self.broker_epoch


class BrokerHeartbeatResponse(msgspec.Struct, frozen=True, gc=False):
    """What the controller decided: caught up, fenced, shutting down now."""

    correlation_id: int
    error: str
    is_caught_up: bool = False
    is_fenced: bool = True
    should_shut_down: bool = False

    @property
    def epoch(self) -> int:
        """-1 (trace only)."""
        return -1


class AlterPartitionPartitionData(msgspec.Struct, frozen=True, gc=False):
    """One partition's proposal in an AlterPartition request (Kafka's
    AlterPartitionRequestData.PartitionData)."""

    partition_index: int
    leader_epoch: int
    partition_epoch: int
    new_isr: tuple[int, ...]
    leader_recovery_state: int = 0
    """The leader's own recovery state: RECOVERED (0) once it leads (Kafka's makeLeader
    marks a RECOVERING partition RECOVERED), so its first ISR change ends KIP-704's
    RECOVERING."""
    new_isr_epochs: tuple[int, ...] = ()
    """The broker epoch the leader knows of each ``new_isr`` member, in its order (KIP-903,
    Kafka's newIsrWithEpochs; -1, or none at all, for unknown): the controller refuses a
    member registered since with another epoch (INELIGIBLE_REPLICA). A kraftsim leader
    always sends them (AlterPartition v3, which every kraftsim controller takes): its own
    broker epoch, and for a follower the one its fetches carried (-1 when none is stored:
    below metadata.version 3.5-IV1 fetches carry none)."""


class AlterPartitionTopicData(msgspec.Struct, frozen=True, gc=False):
    """The proposals of one topic, by topic id (AlterPartition v2 on; kraftsim has no
    by-name version)."""

    topic_id: str
    partitions: tuple[AlterPartitionPartitionData, ...]


class AlterPartitionRequest(msgspec.Struct, frozen=True, gc=False):
    """A broker's ISR proposals for the partitions it leads, grouped by topic (Kafka's
    AlterPartition: its AlterPartitionManager sends every change waiting, one request in
    flight at a time). ``broker_epoch`` is the broker's epoch when the request was built."""

    correlation_id: int
    broker_id: int
    broker_epoch: int
    topics: tuple[AlterPartitionTopicData, ...] = ()

    @property
    def epoch(self) -> int:
        """The broker epoch (trace only)."""
        return self.broker_epoch

    def partitions(self) -> list[tuple[str, AlterPartitionPartitionData]]:
        """Every (topic id, proposal) of the request, in its order."""
        return [(topic.topic_id, part) for topic in self.topics for part in topic.partitions]


class AlterPartitionPartitionResponse(msgspec.Struct, frozen=True, gc=False):
    """One partition's answer: NONE with the partition as the controller wrote it, or an
    error (INVALID_UPDATE_VERSION, FENCED_LEADER_EPOCH, INELIGIBLE_REPLICA,
    NEW_LEADER_ELECTED, UNKNOWN_TOPIC_ID, ...) and nothing else (Kafka's
    AlterPartitionResponseData.PartitionData)."""

    partition_index: int
    error: str
    leader_id: int = -1
    leader_epoch: int = -1
    isr: tuple[int, ...] = ()
    leader_recovery_state: int = 0
    partition_epoch: int = -1


class AlterPartitionTopicResponse(msgspec.Struct, frozen=True, gc=False):
    """The answers of one topic's partitions, in the request's order."""

    topic_id: str
    partitions: tuple[AlterPartitionPartitionResponse, ...]


class AlterPartitionResponse(msgspec.Struct, frozen=True, gc=False):
    """A top-level error (STALE_BROKER_EPOCH, NOT_CONTROLLER, UNKNOWN_SERVER_ERROR, ...:
    no partition is answered), or NONE and every partition asked for, grouped by topic in
    the request's order."""

    correlation_id: int
    error: str
    topics: tuple[AlterPartitionTopicResponse, ...] = ()

    @property
    def epoch(self) -> int:
        """The leader epoch of the first partition answered NONE, else -1 (trace only)."""
        return next((part.leader_epoch for _, part in self.partitions()
                     if part.error == "NONE"), -1)

    def partitions(self) -> list[tuple[str, AlterPartitionPartitionResponse]]:
        """Every (topic id, answer) of the response, in its order."""
        return [(topic.topic_id, part) for topic in self.topics for part in topic.partitions]


class AllocateProducerIdsRequest(msgspec.Struct, frozen=True, gc=False):
    """A broker asks for the next block of producer ids."""

    correlation_id: int
    broker_id: int
    broker_epoch: int

    @property
    def epoch(self) -> int:
        """The broker epoch (trace only)."""
        return self.broker_epoch


class AllocateProducerIdsResponse(msgspec.Struct, frozen=True, gc=False):
    """A block ``[producer_id_start, producer_id_start + producer_id_len)``."""

    correlation_id: int
    error: str
    producer_id_start: int = -1
    producer_id_len: int = 0

    @property
    def epoch(self) -> int:
        """-1 (trace only)."""
        return -1


class ControllerRegistrationRequest(msgspec.Struct, frozen=True, gc=False):
    """A controller registers its process with the active controller (Kafka's
    ControllerRegistration, KIP-919): its id, the incarnation id of this run of the
    process, its listeners and the feature levels it supports."""

    correlation_id: int
    controller_id: int
    incarnation_id: str
    listeners: tuple[BrokerEndpoint, ...]
    features: tuple[BrokerFeature, ...]
    zk_migration_ready: bool = False

    @property
    def epoch(self) -> int:
        """-1 (trace only)."""
        return -1


class ControllerRegistrationResponse(msgspec.Struct, frozen=True, gc=False):
    """NONE once the registration is committed, else the error (NOT_CONTROLLER,
    UNSUPPORTED_VERSION, ...)."""

    correlation_id: int
    error: str
    error_message: str | None = None

    @property
    def epoch(self) -> int:
        """-1 (trace only)."""
        return -1


CONTROLLER_REQUESTS = (BrokerRegistrationRequest, BrokerHeartbeatRequest, AlterPartitionRequest,
                       AllocateProducerIdsRequest, ControllerRegistrationRequest)
"""The requests a controller answers."""
