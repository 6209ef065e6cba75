"""A few brokers' replica managers, fed metadata images and messages by hand.

The tests that follow Kafka's PartitionTest, ReplicaManagerTest and
DelayedFetchTest drive kraftsim's :class:`~broker.replica_manager.ReplicaManager`
without a cluster: each broker has a loader with no raft node, images are made
from records and published to every broker at once, and the brokers' messages
are delivered by :meth:`Cell.step` (fetches and answers between brokers; the
AlterPartition requests for the controller, or for any node that is not one of
the brokers, are kept in :attr:`Cell.alters`, to be answered or written by the
test). Time moves only when a test says so.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from broker.batch_loader import Manifest
from broker.config import BrokerConfig
from broker.lifecycle import BrokerLifecycleManager
from broker.loader import MetadataLoader
from broker.replica import Replica
from broker.replica_manager import ProduceResult, ReplicaManager
from metadata.delta import BROKER_RESOURCE, TOPIC_RESOURCE, MetadataDelta
from metadata.image import MetadataImage, PartitionRegistration
from metadata.requests import (
    AlterPartitionPartitionData,
    AlterPartitionPartitionResponse,
    AlterPartitionRequest,
    AlterPartitionResponse,
    AlterPartitionTopicResponse,
    NodeMessage,
)
from metadata.schema import (
    BrokerRegistrationChangeRecord,
    ConfigRecord,
    FeatureLevelRecord,
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
)
from metadata.versions import LATEST_PRODUCTION, METADATA_VERSION_FEATURE
from raft import LeaderAndEpoch

CONTROLLER = 3000
TOPIC, TOPIC_ID = "t", "AAAAAAAAAAAAAAAAAAAAAQ"
KEY = (TOPIC_ID, 0)


def one(request: AlterPartitionRequest) -> AlterPartitionPartitionData:
    """The proposal of a request that carries one partition (asserted)."""
    ((_, part),) = request.partitions()
    return part


def broker_epoch(broker: int) -> int:
    """The broker epoch each broker registers with in these tests."""
    return broker


class Cell:
    """Brokers ``brokers`` (registered, unfenced) and their replica managers, at
    ``metadata_version``; see the module docs."""

    def __init__(self, brokers: Sequence[int] = (1, 2, 3),
                 config: BrokerConfig | None = None,
                 metadata_version: int = LATEST_PRODUCTION) -> None:
        self.config = config or BrokerConfig(replica_fetch_wait_max_ms=0)
        self.now = 0
        self.offset = 10  # above every broker epoch: the managers start at once
        self.image = MetadataImage.EMPTY
        self.alters: list[tuple[int, AlterPartitionRequest]] = []
        self.alter_controllers: dict[tuple[int, int], int] = {}
        """The controller each AlterPartition went to, by (leader, correlation id)."""
        self.managers: dict[int, ReplicaManager] = {}
        self.publish(FeatureLevelRecord(METADATA_VERSION_FEATURE, metadata_version),
                     *[RegisterBrokerRecord(b, broker_epoch=broker_epoch(b), fenced=False)
                       for b in brokers])
        for b in brokers:
            loader = MetadataLoader(b)
            loader.leader = LeaderAndEpoch(CONTROLLER, 1)
            lifecycle = BrokerLifecycleManager(b, loader, random.Random(b), 0, self.config)
            lifecycle.broker_epoch = broker_epoch(b)
            loader._publish(self.image, Manifest(self.image.offset, 1, True, 0))
            self.managers[b] = ReplicaManager(b, loader, lifecycle, 0, self.config)

    # ------------------------------------------------------------------ metadata
    def publish(self, *records: MetadataRecord) -> MetadataImage:
        """Replay ``records`` on the current image and publish it to every broker."""
        delta = MetadataDelta(self.image)
        delta.replay_all(records)
        self.offset += 1
        self.image = delta.apply(self.offset, 1)
        for manager in getattr(self, "managers", {}).values():
            manager.now = self.now
            manager.loader._publish(self.image, Manifest(self.offset, 1, True, len(records)))
        return self.image

    def create(self, replicas: Sequence[int], isr: Sequence[int] | None = None,
               leader: int | None = None, leader_epoch: int = 0,
               min_isr: int | None = None) -> None:
        """Topic :data:`TOPIC` with one partition."""
        records: list[MetadataRecord] = [TopicRecord(TOPIC, TOPIC_ID)]
        if min_isr is not None:
            records.append(ConfigRecord(TOPIC_RESOURCE, TOPIC, "min.insync.replicas",
                                        str(min_isr)))
        records.append(PartitionRecord(
            0, TOPIC_ID, tuple(replicas), tuple(replicas if isr is None else isr),
            leader=replicas[0] if leader is None else leader, leader_epoch=leader_epoch,
            partition_epoch=0))
        self.publish(*records)

    def change(self, **fields: object) -> PartitionRegistration:
        """Write a PartitionChangeRecord of partition 0 (``leader`` set bumps the epoch)."""
        self.publish(PartitionChangeRecord(partition_id=0, topic_id=TOPIC_ID,
                                           **fields))  # type: ignore[arg-type]
        return self.registration()

    def set_min_isr(self, value: int, cluster_wide: bool = False) -> None:
        """min.insync.replicas of the topic (or the cluster default)."""
        self.publish(ConfigRecord(BROKER_RESOURCE if cluster_wide else TOPIC_RESOURCE,
                                  "" if cluster_wide else TOPIC, "min.insync.replicas",
                                  str(value)))

    def broker_state(self, broker: int, fenced: bool | None = None,
                     in_controlled_shutdown: bool = False) -> None:
        """Fence or unfence ``broker`` in the image, or start its controlled shutdown."""
        self.publish(BrokerRegistrationChangeRecord(
            broker, broker_epoch(broker), fenced=0 if fenced is None else 1 if fenced else -1,
            in_controlled_shutdown=int(in_controlled_shutdown)))

    def registration(self) -> PartitionRegistration:
        """The partition as the current image has it."""
        return self.image.topics_by_id[TOPIC_ID].partitions[0]

    # ------------------------------------------------------------------ brokers
    def replica(self, broker: int) -> Replica:
        """Broker ``broker``'s replica of the partition (made if compact)."""
        return self.managers[broker].replicas[KEY]

    def produce(self, leader: int, values: Sequence[str], acks: int = -1
                ) -> list[ProduceResult]:
        """Produce at ``leader``; the list gets the answer when it comes."""
        answers: list[ProduceResult] = []
        self.managers[leader].produce(TOPIC, 0, list(values), acks, answers.append)
        return answers

    def step(self, ms: int = 0, rounds: int = 20) -> None:
        """Move time ``ms`` on, poll every broker and deliver messages until none is left
        (at most ``rounds`` exchanges)."""
        self.now += ms
        for _ in range(rounds):
            for manager in self.managers.values():
                manager.poll(self.now)
            messages: list[NodeMessage] = []
            for manager in self.managers.values():
                messages += manager.drain_outbox()
            if not messages:
                return
            for env in messages:
                if isinstance(env.message, AlterPartitionRequest):  # to a controller
                    self.alters.append((env.src, env.message))
                    self.alter_controllers[env.src, env.message.correlation_id] = env.dst
                elif env.dst in self.managers:
                    self.managers[env.dst].handle_message(env, self.now)

    def run(self, ms: int, every: int = 50) -> None:
        """Step for ``ms`` in steps of ``every``."""
        for _ in range(ms // every):
            self.step(every)

    def answer_alter(self, error: str = "NONE", write: bool = True,
                     request: tuple[int, AlterPartitionRequest] | None = None,
                     top_level: bool = False) -> AlterPartitionRequest:
        """Answer the oldest AlterPartition (or ``request``, (leader, request), kept or
        taken from :attr:`alters` earlier): each of its partitions (all of the topic
        :data:`TOPIC` here) gets ``error``, its ISR written (and published) when NONE
        and ``write``; with ``top_level`` the request gets ``error`` and no partition is
        answered."""
        src, req = self.alters.pop(0) if request is None else request
        response = AlterPartitionResponse(req.correlation_id, error)
        if not top_level:
            answers = []
            for _, part in req.partitions():
                pid = part.partition_index
                if error == "NONE" and write:
                    self.publish(PartitionChangeRecord(partition_id=pid, topic_id=TOPIC_ID,
                                                       isr=part.new_isr))
                reg = self.image.topics_by_id[TOPIC_ID].partitions[pid]
                answers.append(AlterPartitionPartitionResponse(
                    pid, error, reg.leader, reg.leader_epoch, reg.isr,
                    reg.leader_recovery_state, reg.partition_epoch)
                    if error == "NONE" else AlterPartitionPartitionResponse(pid, error))
            response = AlterPartitionResponse(req.correlation_id, "NONE", (
                AlterPartitionTopicResponse(TOPIC_ID, tuple(answers)),))
        self.respond(src, req, response)
        return req

    def respond(self, src: int, req: AlterPartitionRequest,
                response: AlterPartitionResponse) -> None:
        """Deliver ``response`` to leader ``src`` from the controller ``req`` went to."""
        controller = self.alter_controllers.get((src, req.correlation_id), CONTROLLER)
        self.managers[src].handle_message(NodeMessage(controller, src, response), self.now)
