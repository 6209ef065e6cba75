"""The cases of Kafka's ``kafka.server.ProduceRequestTest`` that kraftsim models.

Kafka sends Produce requests to a cluster's brokers and checks each
partition's answer. kraftsim's clients call
:meth:`~broker.replica_manager.ReplicaManager.produce` in-process on the
brokers of a :class:`tests.broker.replica_cell.Cell` (metadata written by
hand); a record is a string value (no key, timestamp or compression) and the
answer is a :class:`~broker.replica_manager.ProduceResult` whose
``first_offset`` is Kafka's base offset.

Not ported:

- testProduceWithInvalidTimestamp: records carry no timestamp (no
  ``message.timestamp.*`` configs, no INVALID_TIMESTAMP).
- testCorruptLz4ProduceRequest: records are not encoded or compressed here, so
  none can be corrupt (no CORRUPT_MESSAGE).
- testZSTDProduceRequest: no compression codecs (nor the request versions
  that refuse ZStandard).
"""

from __future__ import annotations

from broker.replica_manager import ProduceResult
from tests.broker.replica_cell import TOPIC, Cell


def test_simple_produce_request() -> None:
    """testSimpleProduceRequest: acks=all batches of one and of two records are answered
    NONE with base offsets 0 and 1."""
    cell = Cell(brokers=(1, 2, 3))
    cell.create(replicas=(1, 2, 3), leader=1)
    first = cell.produce(1, ["value"])
    cell.step()
    second = cell.produce(1, ["value1", "value2"])
    cell.run(500)
    assert [(a.error, a.first_offset) for a in first + second] == [("NONE", 0), ("NONE", 1)]
    assert [e.value for e in cell.replica(1).log.entries] == ["value", "value1", "value2"]


def test_produce_to_non_replica() -> None:
    """testProduceToNonReplica: a broker that hosts no replica of the partition answers
    NOT_LEADER_OR_FOLLOWER (it knows the partition from its metadata) and writes nothing."""
    cell = Cell(brokers=(1, 2))
    cell.create(replicas=(1,), leader=1)
    assert cell.produce(2, ["value"]) == [ProduceResult("NOT_LEADER_OR_FOLLOWER")]
    assert cell.replica(1).log.end_offset == 0


def test_produce_to_a_partition_the_metadata_does_not_hold() -> None:
    """Beside testProduceToNonReplica (Kafka's ReplicaManager.getPartitionOrException): a
    partition missing from the broker's metadata is UNKNOWN_TOPIC_OR_PARTITION, whether the
    topic is unknown or only the partition."""
    cell = Cell(brokers=(1,))
    answers: list[ProduceResult] = []
    manager = cell.managers[1]
    manager.produce(TOPIC, 0, ["value"], -1, answers.append)
    cell.create(replicas=(1,), leader=1)
    manager.produce(TOPIC, 1, ["value"], -1, answers.append)
    assert [a.error for a in answers] == ["UNKNOWN_TOPIC_OR_PARTITION"] * 2


def test_an_append_made_by_a_produce_callback_is_answered_once() -> None:
    """A callback that appends again at once (the transaction coordinator writes its next
    state as soon as the last one is committed) is answered once, and so is the append it
    makes, even when the high watermark covers it at once (the only replica in the ISR).
    Found by a random search of the KIP-939 world: the coordinator's PrepareAbort write
    was answered a second time, inside its own answer's next write."""
    cell = Cell(brokers=(1,))
    cell.create(replicas=(1,), leader=1)
    manager = cell.managers[1]
    answers: list[tuple[str, ProduceResult]] = []

    def first_answered(result: ProduceResult) -> None:
        answers.append(("first", result))
        manager.produce(TOPIC, 0, ["second"], -1, lambda r: answers.append(("second", r)))

    manager.produce(TOPIC, 0, ["first"], -1, first_answered)
    cell.run(500)
    assert [(name, r.error, r.first_offset) for name, r in answers] == [
        ("first", "NONE", 0), ("second", "NONE", 1)]
    assert manager.pending == []
