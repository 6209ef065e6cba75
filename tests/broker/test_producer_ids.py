"""A broker's producer-id blocks (Kafka's RPCProducerIdManager): ids come from the block the
controller allocated, one AllocateProducerIds request at a time, COORDINATOR_LOAD_IN_PROGRESS
while none is available."""

from __future__ import annotations

from broker.producer_ids import ProducerIdManager
from metadata.requests import AllocateProducerIdsRequest, AllocateProducerIdsResponse

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


def test_a_failed_allocation_grants_nothing_and_is_asked_again() -> None:
    """An error answer leaves the broker without ids; the next InitProducerId asks again."""
    manager, sent = _manager()
    manager.next_id(EPOCH)
    manager.handle_message(AllocateProducerIdsResponse(sent[0].correlation_id,
                                                       "NOT_CONTROLLER"))
    assert manager.next_id(EPOCH) == ("COORDINATOR_LOAD_IN_PROGRESS", -1)
    assert len(sent) == 2


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
