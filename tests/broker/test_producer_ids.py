"""A broker's producer-id blocks (Kafka's RPCProducerIdManager): ids come from the block the
controller allocated, one AllocateProducerIds request at a time, COORDINATOR_LOAD_IN_PROGRESS
while none is available.

Kafka's ``ProducerIdManagerTest`` cases ported here: testRetryBackoff, testInvalidRanges,
testUnrecoverableErrors (the rest: tests/broker/test_kafka_producer_id_manager_cases.py)."""

from __future__ import annotations

import pytest

from broker.producer_ids import RETRY_BACKOFF_MS, ProducerIdManager
from metadata.requests import (
    AllocateProducerIdsRequest,
    AllocateProducerIdsResponse,
    NodeMessage,
)
from tests.broker.replica_cell import CONTROLLER, Cell

EPOCH = 7


def _manager() -> tuple[ProducerIdManager, list[AllocateProducerIdsRequest]]:
    sent: list[AllocateProducerIdsRequest] = []

    def send(message: object) -> bool:
        assert isinstance(message, AllocateProducerIdsRequest)
        sent.append(message)
        return True

    return ProducerIdManager(1, send), sent


def _grant(manager: ProducerIdManager, request: AllocateProducerIdsRequest, start: int,
           length: int = 1000) -> None:
    manager.handle_message(AllocateProducerIdsResponse(request.correlation_id, "NONE", start,
                                                       length))


def test_no_id_past_the_block_and_one_request_at_a_time() -> None:
    """Every id of the block is handed out once, none past its end; while no block is
    available the answer is COORDINATOR_LOAD_IN_PROGRESS and only one request is in flight
    however often the broker is asked."""
    manager, sent = _manager()
    assert manager.next_id(EPOCH) == ("COORDINATOR_LOAD_IN_PROGRESS", -1)
    assert manager.next_id(EPOCH) == ("COORDINATOR_LOAD_IN_PROGRESS", -1)
    assert len(sent) == 1 and sent[0].broker_epoch == EPOCH
    _grant(manager, sent[0], 5_000)
    ids = [manager.next_id(EPOCH)[1] for _ in range(1000)]
    assert ids == list(range(5_000, 6_000))
    assert len(sent) == 2  # the next block was asked for before this one ran out
    assert manager.next_id(EPOCH) == ("COORDINATOR_LOAD_IN_PROGRESS", -1)
    assert manager.next_id(EPOCH) == ("COORDINATOR_LOAD_IN_PROGRESS", -1)
    assert len(sent) == 2
    _grant(manager, sent[1], 9_000)
    assert manager.next_id(EPOCH) == ("NONE", 9_000)


def test_a_failed_allocation_grants_nothing_and_is_asked_again_after_the_backoff() -> None:
    """An error answer leaves the broker without ids; InitProducerId asks again once
    Kafka's RetryBackoffMs (50 ms) has passed, not before (testRetryBackoff)."""
    manager, sent = _manager()
    manager.next_id(EPOCH, 1_000)
    manager.handle_message(AllocateProducerIdsResponse(sent[0].correlation_id,
                                                       "NOT_CONTROLLER"), 1_010)
    assert manager.next_id(EPOCH, 1_059) == ("COORDINATOR_LOAD_IN_PROGRESS", -1)
    assert len(sent) == 1
    assert manager.next_id(EPOCH, 1_060) == ("COORDINATOR_LOAD_IN_PROGRESS", -1)
    assert len(sent) == 2
    _grant(manager, sent[1], 0, 1)
    assert manager.next_id(EPOCH, 1_070) == ("NONE", 0)


def test_an_answer_to_another_request_is_ignored() -> None:
    """Only the answer to the request in flight is taken (a stale one grants nothing)."""
    manager, sent = _manager()
    manager.next_id(EPOCH)
    manager.handle_message(AllocateProducerIdsResponse(sent[0].correlation_id + 5, "NONE",
                                                       3_000, 1000))
    assert manager.next_id(EPOCH) == ("COORDINATOR_LOAD_IN_PROGRESS", -1)
    _grant(manager, sent[0], 4_000)
    assert manager.next_id(EPOCH) == ("NONE", 4_000)


def test_the_next_block_is_asked_for_when_first_plus_900_is_handed_out() -> None:
    """Kafka's RPCProducerIdManager prefetches when the id it hands out is the block's
    first + 90% of its size (the 901st id of a block of 1,000), once."""
    manager, sent = _manager()
    manager.next_id(EPOCH)
    _grant(manager, sent[0], 5_000)
    for _ in range(900):
        manager.next_id(EPOCH)
    assert len(sent) == 1  # 5,000 .. 5,899 handed out
    assert manager.next_id(EPOCH) == ("NONE", 5_900)
    assert len(sent) == 2


@pytest.mark.parametrize(("start", "length"), [(-1, 10), (0, -1), ((1 << 63) - 2, 10)])
def test_an_invalid_block_grants_nothing(start: int, length: int) -> None:
    """testInvalidRanges: a negative start or length, or a block ending past
    Long.MAX_VALUE, is taken as a failed allocation (and backed off from)."""
    manager, sent = _manager()
    manager.next_id(EPOCH, 0)
    _grant(manager, sent[0], start, length)
    assert manager.next_id(EPOCH, 10) == ("COORDINATOR_LOAD_IN_PROGRESS", -1)
    assert len(sent) == 1
    manager.next_id(EPOCH, 50)
    assert len(sent) == 2


@pytest.mark.parametrize(("refused", "taken"), [(0, 1_010), (1_005, 1_009)],
                         ids=["below", "overlapping"])
def test_a_block_not_after_the_current_one_grants_nothing(refused: int, taken: int) -> None:
    """RPCProducerIdManager's monotonic check: the next block may not start below the
    current block's *last* id. A block below the current one, or one starting inside it
    (1,005 within 1,000 .. 1,009), is refused as Kafka refuses ``producerIdStart <
    lastProducerId``; one starting at that last id itself passes Kafka's check and is
    taken."""
    manager, sent = _manager()
    manager.next_id(EPOCH, 0)
    _grant(manager, sent[0], 1_000, 10)
    for _ in range(10):
        assert manager.next_id(EPOCH, 0)[0] == "NONE"   # the 10th asks for the next block
    _grant(manager, sent[1], refused, 10)
    assert manager.next_id(EPOCH, 0) == ("COORDINATOR_LOAD_IN_PROGRESS", -1)
    manager.next_id(EPOCH, 50)
    _grant(manager, sent[2], taken, 10)
    assert manager.next_id(EPOCH, 50) == ("NONE", taken)


@pytest.mark.parametrize("error", ["UNKNOWN_SERVER_ERROR", "INVALID_REQUEST"])
def test_one_id_per_block_of_one_then_asked_again(error: str) -> None:
    """testUnrecoverableErrors with blocks of one id: the block's only id is handed out
    (asking for the next one at once, as it is also the prefetch target); an error answer
    (UNKNOWN_SERVER_ERROR or INVALID_REQUEST) then holds further requests for the
    backoff."""
    manager, sent = _manager()
    manager.next_id(EPOCH, 0)
    _grant(manager, sent[0], 0, 1)
    assert manager.next_id(EPOCH, 0) == ("NONE", 0)
    assert len(sent) == 2
    manager.handle_message(AllocateProducerIdsResponse(sent[1].correlation_id, error), 0)
    assert manager.next_id(EPOCH, 0) == ("COORDINATOR_LOAD_IN_PROGRESS", -1)
    assert len(sent) == 2
    manager.next_id(EPOCH, 50)
    _grant(manager, sent[2], 1, 1)
    assert manager.next_id(EPOCH, 50) == ("NONE", 1)


def test_a_request_without_answer_is_given_up_after_the_channels_timeout() -> None:
    """An AllocateProducerIds lost on the way (the controller failed, the link was cut) is
    given up after the broker-to-controller channel's retry timeout (60 s), so the broker
    asks again instead of answering COORDINATOR_LOAD_IN_PROGRESS for ever; the late
    answer to the old request is ignored."""
    manager, sent = _manager()
    manager.next_id(EPOCH, 0)
    assert manager.next_id(EPOCH, 59_999) == ("COORDINATOR_LOAD_IN_PROGRESS", -1)
    assert len(sent) == 1
    assert manager.next_id(EPOCH, 60_000) == ("COORDINATOR_LOAD_IN_PROGRESS", -1)
    assert len(sent) == 2
    _grant(manager, sent[0], 3_000)
    assert manager.next_id(EPOCH, 60_001) == ("COORDINATOR_LOAD_IN_PROGRESS", -1)
    _grant(manager, sent[1], 4_000)
    assert manager.next_id(EPOCH, 60_001) == ("NONE", 4_000)


def test_init_producer_id_takes_the_callers_later_time() -> None:
    """A broker's InitProducerId runs at the caller's time when that is later than the
    broker's last poll or message: the backoff after a failed allocation has passed at
    the caller's time, so a new AllocateProducerIds goes out then (the broker was not
    polled in between)."""
    cell = Cell(brokers=(1,))
    manager = cell.managers[1]
    manager.drain_outbox()
    at = cell.now
    assert manager.init_producer_id(at) == ("COORDINATOR_LOAD_IN_PROGRESS", -1)
    (first,) = [env.message for env in manager.drain_outbox()
                if isinstance(env.message, AllocateProducerIdsRequest)]
    manager.handle_message(NodeMessage(CONTROLLER, 1, AllocateProducerIdsResponse(
        first.correlation_id, "NOT_CONTROLLER")), at)
    assert manager.init_producer_id(at + RETRY_BACKOFF_MS - 1) == \
        ("COORDINATOR_LOAD_IN_PROGRESS", -1)
    assert manager.drain_outbox() == []
    assert manager.init_producer_id(at + RETRY_BACKOFF_MS) == \
        ("COORDINATOR_LOAD_IN_PROGRESS", -1)
    assert [type(env.message) for env in manager.drain_outbox()] == \
        [AllocateProducerIdsRequest]
