"""The cases of Kafka's ``kafka.server.FetchRequestTest`` that kraftsim models.

Kafka sends consumer Fetch requests to a cluster's brokers. kraftsim's
consumers call :meth:`~broker.replica_manager.ReplicaManager.fetch`
in-process (one partition, a number of records, an optional current leader
epoch); the replica Fetch RPC between brokers
(:class:`~broker.fetch_messages.ReplicaFetchRequest`, with KIP-227 fetch
sessions) carries the last fetched epoch and the session metadata, so the
cases about divergence and fetch sessions are ported on it, sent by hand to a
broker of a :class:`tests.broker.replica_cell.Cell` as a follower would. Killing
the first leader is a leader change in the image (the new epoch is one more).
Kafka's V12 variants differ only in the request version (topic names instead
of ids), which kraftsim does not model: each is covered by its latest-version
case.

Kept difference (docs/architecture.md, consumers read from the leader only): a consumer
fetch sent to a follower is NOT_LEADER_OR_FOLLOWER in kraftsim, where Kafka's
follower serves it (KIP-392, Fetch v11+, up to its high watermark); the leader
epoch is checked first in both, so a follower answers FENCED_LEADER_EPOCH and
UNKNOWN_LEADER_EPOCH as Kafka's does.

Not ported:

- testBrokerRespectsPartitionsOrderAndSizeLimits: fetch sizes are numbers of
  records, not bytes (no max.partition.fetch.bytes or fetch.max.bytes).
- testFetchRequestV4WithReadCommitted: request versions are not modelled; the
  read_committed bound (last stable offset) is ported with Kafka's
  ReplicaManagerTest and UnifiedLogTest cases.
- testLastFetchedEpochValidationV12, testCurrentEpochValidationV12,
  testEpochValidationWithinFetchSessionV12: request versions (above).
- testDownConversionWithConnectionFailure,
  testDownConversionFromBatchedToUnbatchedRespectsOffset: no message formats or
  down-conversion, no sockets.
- testCreateIncrementalFetchWithPartitionsInErrorV12, testFetchWithPartitionsWithIdError:
  partitions are named by topic id only and consumer fetches have no sessions;
  a follower's session naming a partition with no replica is answered per
  partition (tests/broker/test_fetch_session.py).
- testZStdCompressedTopic, testZStdCompressedRecords: no compression codecs.
"""

from __future__ import annotations

from broker.fetch_messages import (
    FetchedPartition,
    FetchPartition,
    ReplicaFetchRequest,
    ReplicaFetchResponse,
)
from metadata.requests import NodeMessage
from tests.broker.replica_cell import TOPIC, TOPIC_ID, Cell, broker_epoch


def _second_leader(cell: Cell) -> int:
    """Partition 0 on brokers 1, 2 and 3, led by 1 and then (the first leader killed) by 2:
    the new leader epoch."""
    cell.create(replicas=(1, 2, 3), leader=1)
    cell.step()
    reg = cell.change(leader=2, isr=(2, 3))
    cell.step()
    return reg.leader_epoch


def _replica_fetch(cell: Cell, sender: int, to: int, part: FetchPartition | None,
                   session_id: int = 0, session_epoch: int = 0) -> ReplicaFetchResponse:
    """Send broker ``to`` a fetch of follower ``sender`` (not waiting) and take its answer."""
    cell.managers[to].drain_outbox()
    cell.managers[to].handle_message(NodeMessage(sender, to, ReplicaFetchRequest(
        99, sender, broker_epoch(sender), () if part is None else (part,), 0,
        session_id, session_epoch)), cell.now)
    answers = [env.message for env in cell.managers[to].drain_outbox()
               if isinstance(env.message, ReplicaFetchResponse)]
    assert len(answers) == 1
    return answers[0]


def _only(response: ReplicaFetchResponse) -> FetchedPartition:
    assert response.error == "NONE"
    [part] = response.partitions
    return part


def test_fetch_request_to_non_replica() -> None:
    """testFetchRequestToNonReplica: a broker that hosts no replica answers
    NOT_LEADER_OR_FOLLOWER."""
    cell = Cell(brokers=(1, 2))
    cell.create(replicas=(1,), leader=1)
    assert cell.managers[2].fetch(TOPIC, 0, 0)[0] == "NOT_LEADER_OR_FOLLOWER"
    assert cell.managers[1].fetch(TOPIC, 0, 0)[0] == "NONE"


def test_last_fetched_epoch_validation() -> None:
    """testLastFetchedEpochValidation: 100 records in the first epoch, 100 in the second;
    a fetch at an offset in the middle of the second epoch whose last fetched epoch is the
    first is told the first epoch diverges at its end offset, with no records."""
    cell = Cell(brokers=(1, 2, 3))
    cell.create(replicas=(1, 2, 3), leader=1)
    first = cell.produce(1, [f"a{i}" for i in range(100)])
    cell.run(500)
    first_end = first[0].last_offset + 1
    second_epoch = cell.change(leader=2, isr=(2, 3)).leader_epoch
    second = cell.produce(2, [f"b{i}" for i in range(100)])
    cell.run(500)
    second_end = second[0].last_offset + 1
    assert (first_end, second_end) == (100, 200)
    offset = second_end + (second_end - first_end) // 2
    part = _only(_replica_fetch(cell, 3, 2, FetchPartition(TOPIC_ID, 0, second_epoch,
                                                           offset, 0)))
    assert part.error == "NONE"
    assert part.entries == ()
    assert part.diverging
    assert (part.diverging_epoch, part.diverging_end_offset) == (0, first_end)


def test_current_epoch_validation() -> None:
    """testCurrentEpochValidation: the leader answers NONE for no epoch and for its own,
    FENCED_LEADER_EPOCH for an older one, UNKNOWN_LEADER_EPOCH for a newer one; a
    follower checks the epoch first too (and, see the module docs, does not serve reads)."""
    cell = Cell(brokers=(1, 2, 3))
    epoch = _second_leader(cell)

    def error(broker: int, current: int = -1) -> str:
        return cell.managers[broker].fetch(TOPIC, 0, 0, current_leader_epoch=current)[0]

    assert error(2) == "NONE"
    assert error(2, epoch) == "NONE"
    assert error(2, epoch - 1) == "FENCED_LEADER_EPOCH"
    assert error(2, epoch + 1) == "UNKNOWN_LEADER_EPOCH"
    assert error(3) == "NOT_LEADER_OR_FOLLOWER"  # Kafka: NONE (a read from a follower)
    assert error(3, epoch) == "NOT_LEADER_OR_FOLLOWER"  # Kafka: NONE, as above
    assert error(3, epoch + 1) == "UNKNOWN_LEADER_EPOCH"
    assert error(3, epoch - 1) == "FENCED_LEADER_EPOCH"


def test_epoch_validation_within_fetch_session() -> None:
    """testEpochValidationWithinFetchSession: a full fetch opens a session; its next
    fetches, naming the partition with an older and then a newer leader epoch, are
    answered FENCED_LEADER_EPOCH and UNKNOWN_LEADER_EPOCH, at the leader and at a
    follower alike."""
    cell = Cell(brokers=(1, 2, 3))
    epoch = _second_leader(cell)
    for to, sender in ((2, 3), (3, 1)):  # the leader, then the follower 3
        opened = _replica_fetch(cell, sender, to, FetchPartition(TOPIC_ID, 0, epoch, 0, -1))
        assert opened.error == "NONE" and opened.session_id != 0
        fenced = _replica_fetch(cell, sender, to, FetchPartition(TOPIC_ID, 0, epoch - 1, 0, -1),
                                opened.session_id, 1)
        assert _only(fenced).error == "FENCED_LEADER_EPOCH"
        unknown = _replica_fetch(cell, sender, to,
                                 FetchPartition(TOPIC_ID, 0, epoch + 1, 0, -1),
                                 opened.session_id, 2)
        assert _only(unknown).error == "UNKNOWN_LEADER_EPOCH"


def test_a_consumer_fetch_reads_500_records_unless_told() -> None:
    """A consumer's fetch that names no number of records reads at most 500 (the
    default of ``ReplicaManager.fetch``), from the offset asked."""
    cell = Cell(brokers=(1,))
    cell.create(replicas=(1,), leader=1)
    cell.produce(1, [f"v{i}" for i in range(501)])
    cell.run(500)
    error, entries, hw = cell.managers[1].fetch(TOPIC, 0, 0)
    assert (error, len(entries), hw) == ("NONE", 500, 501)
    assert len(cell.managers[1].fetch(TOPIC, 0, 0, 1_000)[1]) == 501
