"""Kafka clients in the simulated world: a producer (plain or idempotent) and a consumer.

Clients call brokers in-process (as the cluster submits operations to the
controller), from events of the simulation: a request to a broker that is
down fails NETWORK_EXCEPTION. A producer keeps one batch in flight
(max.in.flight.requests.per.connection = 1), finds the partition leader in a
running broker's published image (its metadata), and retries retriable
errors after ``retry.backoff.ms`` (100) with the same sequence, refreshing
metadata first, until ``delivery.timeout.ms`` (120,000). ``response_loss``
drops that share of answers on the way back (the client then times out and
retries), which is what makes idempotence matter.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec

from broker.replica_manager import ProduceResult, ReplicaManager
from broker.txn.fetch import TxnFetchResult, consume_fetch

if TYPE_CHECKING:
    from sim.cluster import KRaftCluster

RETRIABLE = frozenset({
    "NOT_LEADER_OR_FOLLOWER", "NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
    "REQUEST_TIMED_OUT", "NETWORK_EXCEPTION", "UNKNOWN_TOPIC_OR_PARTITION",
    "COORDINATOR_LOAD_IN_PROGRESS", "LEADER_NOT_AVAILABLE",
})
"""Errors after which a Kafka producer retries."""
RETRY_BACKOFF_MS = 100
"""Kafka's retry.backoff.ms."""
DELIVERY_TIMEOUT_MS = 120_000
"""Kafka's delivery.timeout.ms."""


class Acknowledged(msgspec.Struct, frozen=True):
    """A batch the producer was told is written."""

    topic: str
    partition: int
    first_offset: int
    values: tuple[str, ...]
    acks: int
    at_ms: int


class Producer:
    """One producer writing numbered values to one partition; see the module docs."""

    def __init__(self, cluster: KRaftCluster, name: str, topic: str, partition: int = 0,
                 acks: int = -1, idempotent: bool = False, batch_size: int = 1,
                 response_loss: float = 0.0,
                 on_ack: Callable[[Acknowledged], None] | None = None) -> None:
        self.cluster = cluster
        self.name = name
        self.topic = topic
        self.partition = partition
        self.acks = acks
        self.idempotent = idempotent
        self.batch_size = batch_size
        self.response_loss = response_loss
        self.on_ack = on_ack
        self.rng = random.Random(f"kraftsim/{cluster.config.seed}/client/{name}")
        self.producer_id = -1
        self.producer_epoch = 0
        self.next_sequence = 0
        self.queue: list[str] = []
        self.sent = 0
        self.in_flight: list[str] | None = None
        self.first_tried_at = 0
        self.attempt = 0
        self.acknowledged: list[Acknowledged] = []
        self.failed: list[tuple[list[str], str]] = []
        self.errors: dict[str, int] = {}

    @property
    def idle(self) -> bool:
        """Nothing queued and nothing in flight."""
        return not self.queue and self.in_flight is None

    def send(self, count: int) -> None:
        """Queue ``count`` new values and start sending if idle."""
        self.queue += [f"{self.name}-{self.sent + i}" for i in range(count)]
        self.sent += count
        if self.in_flight is None:
            self.cluster.sim.act(f"produce {self.name}", self._next_batch)

    # ------------------------------------------------------------------ sending
    def _next_batch(self) -> None:
        if self.in_flight is not None or not self.queue:
            return
        self.in_flight, self.queue = self.queue[:self.batch_size], self.queue[self.batch_size:]
        self.first_tried_at = self.cluster.sim.now
        self._attempt()

    def _later(self, what: Callable[[], None]) -> None:
        sim = self.cluster.sim
        sim.schedule(sim.now + RETRY_BACKOFF_MS, what, f"producer {self.name} retries")

    def _manager(self, node: int | None) -> ReplicaManager | None:
        return self.cluster.replica_manager(node) if node is not None else None

    def _attempt(self) -> None:
        batch = self.in_flight
        if batch is None:
            return
        self.attempt += 1
        if self.idempotent and self.producer_id < 0:
            manager = self._manager(self.cluster.any_running_broker())
            error, pid = manager.init_producer_id(self.cluster.sim.now) if manager else \
                ("NETWORK_EXCEPTION", -1)
            if error != "NONE":
                self._count(error)
                self._later(self._attempt)
                return
            self.producer_id, self.producer_epoch, self.next_sequence = pid, 0, 0
        manager = self._manager(self.cluster.partition_leader(self.topic, self.partition))
        attempt = self.attempt
        if manager is None:
            self._on_result(attempt, ProduceResult("NOT_LEADER_OR_FOLLOWER"))
            return
        seq = self.next_sequence if self.idempotent else -1
        manager.produce(self.topic, self.partition, list(batch), self.acks,
                        lambda result: self._on_result(attempt, result),
                        self.producer_id if self.idempotent else -1,
                        self.producer_epoch if self.idempotent else -1, seq)

    def _count(self, error: str) -> None:
        self.errors[error] = self.errors.get(error, 0) + 1

    def _on_result(self, attempt: int, result: ProduceResult) -> None:
        batch = self.in_flight
        if batch is None or attempt != self.attempt:
            return
        if result.error == "NONE" and self.response_loss and \
                self.rng.random() < self.response_loss:
            result = ProduceResult("REQUEST_TIMED_OUT")  # the answer was lost on the way
        sim = self.cluster.sim
        if result.error != "NONE":
            self._count(result.error)
            expired = sim.now - self.first_tried_at >= DELIVERY_TIMEOUT_MS
            if result.error in RETRIABLE and not expired:
                self._later(self._attempt)
                return
            self.failed.append((batch, result.error))
        else:
            ack = Acknowledged(self.topic, self.partition, result.first_offset, tuple(batch),
                               self.acks, sim.now)
            self.acknowledged.append(ack)
            self.cluster.broker_invariants.acknowledge(sim, ack)
            if self.on_ack is not None:
                self.on_ack(ack)
        if self.idempotent:
            self.next_sequence += len(batch)
        self.in_flight = None
        if self.queue:
            self._later(self._next_batch)


def consume(cluster: KRaftCluster, topic: str, partition: int = 0) -> list[str] | None:
    """Every record's value below the high watermark, read read_uncommitted from the leader
    (None: no leader now).

    As Kafka's consumer, control records (transaction markers) are not returned and the
    position moves past them (:func:`broker.txn.fetch.consume_fetch`).
    """
    manager = cluster.replica_manager(cluster.partition_leader(topic, partition))
    if manager is None:
        return None
    values: list[str] = []
    position = 0
    while True:
        error, entries, hw = manager.fetch(topic, partition, position, 10_000)
        if error != "NONE":
            return None
        consumed = consume_fetch(TxnFetchResult(error, tuple(entries), hw), position)
        values += [entry.value for entry in consumed.records]
        if consumed.next_offset == position or consumed.next_offset >= hw:
            return values
        position = consumed.next_offset
