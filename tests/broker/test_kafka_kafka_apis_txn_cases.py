"""The producer-transaction request cases of Kafka's KafkaApisTest, in kraftsim's terms.

Kafka class followed: ``KafkaApisTest`` (``core/src/test/scala/unit/kafka/server``),
its cases about the transaction requests' handling around the coordinators:
error codes older clients do not know (PRODUCER_FENCED sent as
INVALID_PRODUCER_EPOCH, COORDINATOR_LOAD_IN_PROGRESS as COORDINATOR_NOT_AVAILABLE)
and partitions the broker's metadata does not have. kraftsim's request handler
is :mod:`broker.txn.requests`; the coordinators are real ones
(:class:`~tests.broker.test_txn_coordinator.Harness`, a
:class:`~broker.txn.group.GroupCoordinator` over an acknowledging log) brought to
the state that gives the error, where Kafka mocks them to return it. The
broker's metadata is a ``known(topic, partition)`` function: topic ``topic``
with one partition.

Not ported, from this part of KafkaApisTest:

- shouldThrowUnsupportedVersionExceptionOnHandle{AddOffsetToTxn,AddPartitionsToTxn,
  TxnOffsetCommit,EndTxn,WriteTxnMarkers}RequestWhenInterBrokerProtocolNotSupported: the
  inter-broker protocol of ZooKeeper clusters is not modelled.
- testHandleTxnOffsetCommitRequest and the TxnOffsetCommit authorization cases:
  generations, member ids and ACLs are not modelled.
- The partition leader's transaction verification (KIP-890): testBatchedAddPartitionsToTxnRequest,
  testTransactionalParametersSetCorrectly; authorization and metrics:
  testHandleAddPartitionsToTxnAuthorizationFailedAndMetrics,
  requiredAclsNotPresentWriteTxnMarkersThrowsAuthorizationException,
  testDescribeTransactionsFiltersUnauthorizedTopics, testListTransactionsAuthorization.
- Creating ``__transaction_state`` on a FindCoordinator or Metadata request
  (testFindCoordinatorAutoTopicCreationForTxnTopic,
  testFindCoordinatorNotEnoughBrokersForTxnTopic, their testOldFindCoordinator twins,
  testMetadataAutoTopicCreationForTxnTopic, testMetadataAutoTopicCreationDisabledForTxnTopic):
  the simulated cluster creates its internal topics when it starts.
- WriteTxnMarkers' message-format check
  (shouldRespondWithUnsupportedForMessageFormatOnHandleWriteTxnMarkersWhenMagicLowerThanRequired,
  shouldAppendToLogOnWriteTxnMarkersWhenCorrectMagicVersion): no message format versions
  (the markers' append is test_kafka_txn_marker_cases.py's); the new group coordinator's
  error translation for markers (testHandleWriteTxnMarkersRequestWithNewGroupCoordinator*)
  and TxnOffsetCommit's (testHandleTxnOffsetCommitRequestFutureFailed,
  testHandleTxnOffsetCommitRequestTopicsAndPartitionsValidation): one group coordinator.
- Coordinators resigned by StopReplica (the four shouldResignCoordinatorsIfStopReplica... and
  shouldNotResignCoordinatorsIfStopReplicaReceivedWithoutDeleteFlag): ZooKeeper mode.
- testDescribeProducers, testDescribeTransactions, testListTransactionsErrorResponse: the
  requests' authorization and per-partition errors (DescribeProducers' errors are
  ReplicaManagerTest's testActiveProducerState, test_kafka_replica_manager_cases.py;
  DescribeTransactions and ListTransactions: test_kafka_txn_coordinator_cases.py and
  test_kafka_txn_state_manager_cases.py).
- The rest of KafkaApisTest (produce, fetch, groups, configs, ...) is outside this
  module: it is not about producer transactions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest

from broker.replica_manager import ProduceResult
from broker.txn.coordinator import TxnResult
from broker.txn.group import GroupCoordinator, GroupCoordinatorConfig
from broker.txn.requests import (
    ADD_OFFSETS_MAX_VERSION,
    END_TXN_MAX_VERSION,
    INIT_PRODUCER_ID_MAX_VERSION,
    MAX_VERSION,
    TXN_OFFSET_COMMIT_MAX_VERSION,
    AddPartitionsTxn,
    InvalidTxnRequest,
    TxnErrors,
    client_error,
    handle_add_offsets_to_txn_request,
    handle_add_partitions_to_txn,
    handle_end_txn_request,
    handle_init_producer_id_request,
    handle_txn_offset_commit_request,
)
from broker.txn.state import TransactionMetadata, TransactionState
from tests.broker.replica_cell import TOPIC as CELL_TOPIC
from tests.broker.replica_cell import Cell
from tests.broker.test_txn_coordinator import Harness

S = TransactionState
PID = 15
TOPIC = "topic"


def known(topic: str, partition: int) -> bool:
    """The broker's metadata: ``topic`` with one partition."""
    return topic == TOPIC and partition == 0


def _harness(state: TransactionState = S.ONGOING, epoch: int = 1) -> Harness:
    h = Harness()
    meta = TransactionMetadata("txnId", PID, 60_000, 0, epoch, epoch - 1, -1, state)
    if state == S.ONGOING:
        meta.topic_partitions = frozenset({(TOPIC, 0)})
        meta.txn_start_timestamp = 0
    h.coordinator.txns["txnId"] = meta
    return h


def _fenced_versions(newest: int, first_known: int) -> list[tuple[int, str]]:
    return [(v, "INVALID_PRODUCER_EPOCH" if v < first_known else "PRODUCER_FENCED")
            for v in range(newest + 1)]


@pytest.mark.parametrize(("version", "error"), _fenced_versions(INIT_PRODUCER_ID_MAX_VERSION, 4))
def test_should_replace_producer_fenced_with_invalid_producer_epoch_in_init_producer_id_with_older_client(  # noqa: E501
        version: int, error: str) -> None:
    """shouldReplaceProducerFencedWithInvalidProducerEpochInInitProducerIdWithOlderClient:
    from v3 a stale (producer id, epoch) is fenced; below v4 the client is told
    INVALID_PRODUCER_EPOCH. (Below v3 the request carries no producer to fence; the
    mapping itself is checked.)"""
    if version < 3:
        assert client_error("InitProducerId", version, "PRODUCER_FENCED") == error
        return
    h = _harness(S.EMPTY, epoch=5)
    out: list[TxnResult] = []
    handle_init_producer_id_request(h.coordinator, version, "txnId", 900_000, PID, 0, 5,
                                    out.append)
    assert out == [TxnResult(error)]


@pytest.mark.parametrize(("producer_id", "epoch"), [(-1, 0), (PID, -1)])
def test_init_producer_id_with_only_one_of_producer_id_and_epoch_is_invalid(
        producer_id: int, epoch: int) -> None:
    """rejectInitProducerIdWhenEpochButNotIdProvided and
    rejectInitProducerIdWhenIdButNotEpochProvided: (NO_PRODUCER_ID, epoch) or (producer
    id, NO_PRODUCER_EPOCH) is INVALID_REQUEST; nothing reaches the coordinator."""
    h = _harness(S.EMPTY, epoch=5)
    out: list[TxnResult] = []
    handle_init_producer_id_request(h.coordinator, 4, "txnId", 900_000, producer_id, epoch, 5,
                                    out.append)
    assert out == [TxnResult("INVALID_REQUEST")] and h.log == []


def test_init_producer_id_fields_need_their_versions() -> None:
    h = _harness(S.EMPTY, epoch=5)
    with pytest.raises(InvalidTxnRequest):
        handle_init_producer_id_request(h.coordinator, 2, "txnId", 1_000, PID, 5, 5,
                                        lambda _: None)
    with pytest.raises(InvalidTxnRequest):
        handle_init_producer_id_request(h.coordinator, 5, "txnId", 1_000, -1, -1, 5,
                                        lambda _: None, enable_2pc=True)
    with pytest.raises(InvalidTxnRequest):
        handle_init_producer_id_request(h.coordinator, 7, "txnId", 1_000, -1, -1, 5,
                                        lambda _: None)
    out: list[TxnResult] = []
    handle_init_producer_id_request(h.coordinator, 4, "txnId", 1_000, PID, 5, 5, out.append)
    assert out == [TxnResult("NONE", PID, 6)]


@pytest.mark.parametrize("version", range(7))
def test_init_producer_id_without_a_producer_bumps_the_epoch_at_every_version(
        version: int) -> None:
    """No producer id and epoch (-1, -1: all a client below v3 can send) is no
    expectation: the coordinator bumps the transactional id's epoch, whatever it was."""
    h = _harness(S.EMPTY, epoch=5)
    out: list[TxnResult] = []
    handle_init_producer_id_request(h.coordinator, version, "txnId", 1_000, -1, -1, 5,
                                    out.append)
    assert out == [TxnResult("NONE", PID, 6)]


def test_init_producer_id_version_six_carries_the_two_phase_commit_flags() -> None:
    """KIP-939's Enable2Pc and KeepPreparedTxn reach the coordinator at v6: Enable2Pc on a
    broker without ``transaction.two.phase.commit.enable`` is refused by the coordinator
    (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), not as an unknown field."""
    h = _harness(S.EMPTY, epoch=5)
    out: list[TxnResult] = []
    handle_init_producer_id_request(h.coordinator, 6, "txnId", 1_000, -1, -1, 5, out.append,
                                    enable_2pc=True)
    handle_init_producer_id_request(h.coordinator, 6, "txnId", 1_000, -1, -1, 5, out.append,
                                    keep_prepared_txn=True)
    assert out == [TxnResult("TRANSACTIONAL_ID_AUTHORIZATION_FAILED"),
                   TxnResult("NONE", PID, 6)]


_NEWEST_VERSIONS = {"AddPartitionsToTxn": 5, "InitProducerId": 6, "EndTxn": 5,
                    "AddOffsetsToTxn": 4, "TxnOffsetCommit": 4}


def _send(request: str, version: int) -> None:
    h = _harness()
    ignore: Callable[[object], None] = lambda _: None  # noqa: E731
    if request == "AddPartitionsToTxn":
        txn = AddPartitionsTxn("txnId", PID, 1, ((TOPIC, 0),))
        handle_add_partitions_to_txn(h.coordinator, version, [txn], known, 5, ignore)
    elif request == "InitProducerId":
        handle_init_producer_id_request(h.coordinator, version, "txnId", 1_000, -1, -1, 5,
                                        ignore)
    elif request == "EndTxn":
        handle_end_txn_request(h.coordinator, version, "txnId", PID, 1, True, 5, ignore)
    elif request == "AddOffsetsToTxn":
        handle_add_offsets_to_txn_request(h.coordinator, version, "txnId", PID, 1, "groupId",
                                          5, ignore)
    else:
        handle_txn_offset_commit_request(_Groups("NONE"), version, "txnId", "groupId", PID, 1,
                                         {(TOPIC, 0): 3}, known, 5, ignore)


@pytest.mark.parametrize("name", sorted(_NEWEST_VERSIONS))
def test_each_transaction_request_serves_the_versions_kafka_serves(name: str) -> None:
    """Each request is answered from version 0 to its newest (AddPartitionsToTxn 5,
    InitProducerId 6, EndTxn 5, AddOffsetsToTxn 4, TxnOffsetCommit 4); the version past
    it, or a negative one, is UNSUPPORTED_VERSION."""
    newest = _NEWEST_VERSIONS[name]
    for version in (0, newest):
        _send(name, version)
    for version in (-1, newest + 1):
        with pytest.raises(InvalidTxnRequest) as refused:
            _send(name, version)
        assert refused.value.error == "UNSUPPORTED_VERSION"


@pytest.mark.parametrize(("version", "error"), _fenced_versions(ADD_OFFSETS_MAX_VERSION, 2))
def test_should_replace_producer_fenced_with_invalid_producer_epoch_in_add_offset_to_txn_with_older_client(  # noqa: E501
        version: int, error: str) -> None:
    """shouldReplaceProducerFencedWithInvalidProducerEpochInAddOffsetToTxnWithOlderClient."""
    h = _harness(epoch=1)
    out: list[str] = []
    handle_add_offsets_to_txn_request(h.coordinator, version, "txnId", PID, 0, "groupId", 5,
                                      out.append)
    assert out == [error]


@pytest.mark.parametrize(("version", "error"), _fenced_versions(3, 2))
def test_should_replace_producer_fenced_with_invalid_producer_epoch_in_add_partition_to_txn_with_older_client(  # noqa: E501
        version: int, error: str) -> None:
    """shouldReplaceProducerFencedWithInvalidProducerEpochInAddPartitionToTxnWithOlderClient
    (client versions 0-3)."""
    h = _harness(epoch=1)
    out: list[TxnErrors] = []
    handle_add_partitions_to_txn(h.coordinator, version,
                                 [AddPartitionsTxn("txnId", PID, 0, ((TOPIC, 0),))], known, 5,
                                 out.append)
    assert out == [{"txnId": {(TOPIC, 0): error}}]


@pytest.mark.parametrize("version", range(MAX_VERSION + 1))
def test_add_partitions_to_txn_operation_not_attempted(version: int) -> None:
    """testAddPartitionsToTxnOperationNotAttempted: topic-0 is known, topic-1 is not; from v4
    (a broker's VerifyOnly request) as below it."""
    h = _harness()
    txn = AddPartitionsTxn("txnId1", PID, 0, ((TOPIC, 0), (TOPIC, 1)), version >= 4)
    out: list[TxnErrors] = []
    handle_add_partitions_to_txn(h.coordinator, version, [txn], known, 5, out.append)
    assert out == [{"txnId1": {(TOPIC, 0): "OPERATION_NOT_ATTEMPTED",
                               (TOPIC, 1): "UNKNOWN_TOPIC_OR_PARTITION"}}]


@pytest.mark.parametrize("partition", [-1, 1])
def test_add_partitions_to_txn_with_invalid_partition(partition: int) -> None:
    """testAddPartitionsToTxnWithInvalidPartition: partition -1, or 1 of a one-partition
    topic, is UNKNOWN_TOPIC_OR_PARTITION."""
    h = _harness()
    out: list[TxnErrors] = []
    handle_add_partitions_to_txn(h.coordinator, 3,
                                 [AddPartitionsTxn("txnlId", PID, 0, ((TOPIC, partition),))],
                                 known, 5, out.append)
    assert out == [{"txnlId": {(TOPIC, partition): "UNKNOWN_TOPIC_OR_PARTITION"}}]
    assert h.log == []


@pytest.mark.parametrize(("version", "error"), _fenced_versions(END_TXN_MAX_VERSION, 2))
def test_should_replace_producer_fenced_with_invalid_producer_epoch_in_end_txn_with_older_client(
        version: int, error: str) -> None:
    """shouldReplaceProducerFencedWithInvalidProducerEpochInEndTxnWithOlderClient: TV1
    below v5, TV2 at v5 (both fence a stale epoch)."""
    h = _harness(epoch=1)
    out: list[TxnResult] = []
    handle_end_txn_request(h.coordinator, version, "txnId", PID, 0, True, 5, out.append)
    assert out == [TxnResult(error)]


@pytest.mark.parametrize(("version", "answer"), [(4, TxnResult("NONE")),
                                                 (5, TxnResult("NONE", PID, 2))])
def test_end_txn_answers_the_next_producer_from_version_five(version: int,
                                                             answer: TxnResult) -> None:
    """EndTxn v5 is transaction version 2: the epoch is bumped and the answer carries it;
    below v5 the epoch is kept and the answer has producer id and epoch -1."""
    h = _harness(epoch=1)
    out: list[TxnResult] = []
    handle_end_txn_request(h.coordinator, version, "txnId", PID, 1, True, 5, out.append)
    assert out == [answer]
    assert h.coordinator.txns["txnId"].producer_epoch == (2 if version == 5 else 1)


class _Groups(GroupCoordinator):
    """A group coordinator whose TxnOffsetCommit answers a chosen error (Kafka's mock)."""

    def __init__(self, answer: str | None = None) -> None:
        super().__init__(0, GroupCoordinatorConfig(num_partitions=1),
                         lambda *args: args[-1]("NONE"))
        self.sync(0, 0, [], 0)
        self.answer = answer

    def handle_txn_offset_commit(self, transactional_id: str, group_id: str, producer_id: int,
                                 producer_epoch: int, offsets: Mapping[tuple[str, int], int],
                                 now: int, callback: Callable[[str], None],
                                 label: str = "") -> None:
        if self.answer is not None:
            callback(self.answer)
            return
        super().handle_txn_offset_commit(transactional_id, group_id, producer_id,
                                         producer_epoch, offsets, now, callback, label)


@pytest.mark.parametrize("partition", [-1, 1])
def test_txn_offset_commit_with_invalid_partition(partition: int) -> None:
    """testTxnOffsetCommitWithInvalidPartition."""
    out: list[dict[tuple[str, int], str]] = []
    handle_txn_offset_commit_request(_Groups(), 4, "txnId", "groupId", PID, 0,
                                     {(TOPIC, partition): 15}, known, 5, out.append)
    assert out == [{(TOPIC, partition): "UNKNOWN_TOPIC_OR_PARTITION"}]


def test_txn_offset_commit_answers_known_and_unknown_partitions_apart() -> None:
    out: list[dict[tuple[str, int], str]] = []
    handle_txn_offset_commit_request(_Groups(), 4, "txnId", "groupId", PID, 0,
                                     {(TOPIC, 0): 15, (TOPIC, 1): 15}, known, 5, out.append)
    assert out == [{(TOPIC, 0): "NONE", (TOPIC, 1): "UNKNOWN_TOPIC_OR_PARTITION"}]


@pytest.mark.parametrize("version", range(TXN_OFFSET_COMMIT_MAX_VERSION + 1))
def test_should_replace_coordinator_not_available_with_load_in_process_in_txn_offset_commit_with_older_client(  # noqa: E501
        version: int) -> None:
    """shouldReplaceCoordinatorNotAvailableWithLoadInProcessInTxnOffsetCommitWithOlderClient:
    COORDINATOR_LOAD_IN_PROGRESS is sent as COORDINATOR_NOT_AVAILABLE below v2."""
    def known_two(topic: str, partition: int) -> bool:
        return topic == TOPIC and partition in (0, 1)

    out: list[dict[tuple[str, int], str]] = []
    handle_txn_offset_commit_request(_Groups("COORDINATOR_LOAD_IN_PROGRESS"), version, "txnId",
                                     "groupId", PID, 0, {(TOPIC, 1): 15}, known_two, 5,
                                     out.append)
    expected = "COORDINATOR_NOT_AVAILABLE" if version < 2 else "COORDINATOR_LOAD_IN_PROGRESS"
    assert out == [{(TOPIC, 1): expected}]


def test_should_replace_producer_fenced_with_invalid_producer_epoch_in_produce_response() -> None:
    """shouldReplaceProducerFencedWithInvalidProducerEpochInProduceResponse: a produce
    of an older epoch than the partition's is answered INVALID_PRODUCER_EPOCH (never
    PRODUCER_FENCED, which produce clients do not get), transactional or not."""
    cell = Cell()
    cell.create(replicas=(1,), leader=1)
    answers: list[ProduceResult] = []
    manager = cell.managers[1]
    manager.produce(CELL_TOPIC, 0, ["new"], 1, answers.append, PID, 3, 0, True)
    manager.produce(CELL_TOPIC, 0, ["old"], 1, answers.append, PID, 2, 0, True)
    manager.produce(CELL_TOPIC, 0, ["old"], 1, answers.append, PID, 2, 1, False)
    assert [a.error for a in answers] == ["NONE", "INVALID_PRODUCER_EPOCH",
                                          "INVALID_PRODUCER_EPOCH"]
