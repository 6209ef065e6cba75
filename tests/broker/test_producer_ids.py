"""A broker's producer-id blocks (Kafka's RPCProducerIdManager): ids come from the block the
controller allocated, one AllocateProducerIds request at a time, COORDINATOR_LOAD_IN_PROGRESS
while none is available; and the broker's controller channel beneath it
(:class:`~metadata.controller_channel.ControllerChannel`, Kafka's NodeToControllerRequestThread:
NOT_CONTROLLER resent by the channel, the 100 ms looks, the request and retry timeouts, the
50 ms reconnect back-off, the controller it keeps).

Kafka's ``ProducerIdManagerTest`` cases ported here: testRetryBackoff, testInvalidRanges,
testUnrecoverableErrors (the rest: tests/broker/test_kafka_producer_id_manager_cases.py)."""

from __future__ import annotations

import pytest

from broker.producer_ids import REQUEST_RETRY_TIMEOUT_MS, RETRY_BACKOFF_MS, ProducerIdManager
from metadata.controller_channel import (
    CONTROLLER_LOOKUP_MS,
    RECONNECT_BACKOFF_MS,
    ControllerChannel,
)
from metadata.requests import (
    AllocateProducerIdsRequest,
    AllocateProducerIdsResponse,
    NodeMessage,
)
from tests.broker.replica_cell import CONTROLLER, Cell

EPOCH = 7


REQUEST_TIMEOUT_MS = 30_000
"""The forwarding channel's request timeout (controller.socket.timeout.ms)."""
CTRL, OTHER = 3000, 3001


class Controllers:
    """The controller the broker's raft client knows (the test moves it by hand), and the
    requests the channel sent: ``sent`` in order, ``to`` their destinations."""

    def __init__(self) -> None:
        self.leader: int | None = CTRL
        self.sent: list[AllocateProducerIdsRequest] = []
        self.to: list[int] = []

    def emit(self, env: NodeMessage) -> None:
        assert isinstance(env.message, AllocateProducerIdsRequest)
        self.sent.append(env.message)
        self.to.append(env.dst)


def _channel_manager(leader: int | None = CTRL) -> tuple[ProducerIdManager, Controllers]:
    world = Controllers()
    world.leader = leader
    channel = ControllerChannel(1, lambda: world.leader,
                                retry_timeout_ms=REQUEST_RETRY_TIMEOUT_MS,
                                request_timeout_ms=REQUEST_TIMEOUT_MS, emit=world.emit)
    return ProducerIdManager(1, channel), world


def _manager() -> tuple[ProducerIdManager, list[AllocateProducerIdsRequest]]:
    manager, world = _channel_manager()
    return manager, world.sent


def _answer(manager: ProducerIdManager, answer: AllocateProducerIdsResponse, now: int = 0,
            src: int = CTRL) -> None:
    manager.channel.handle_message(NodeMessage(src, 1, answer), now)


def _grant(manager: ProducerIdManager, request: AllocateProducerIdsRequest, start: int,
           length: int = 1000, now: int = 0) -> None:
    _answer(manager, AllocateProducerIdsResponse(request.correlation_id, "NONE", start,
                                                 length), now)


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
    _answer(manager, AllocateProducerIdsResponse(sent[0].correlation_id,
                                                 "UNKNOWN_SERVER_ERROR"), 1_010)
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
    _answer(manager, AllocateProducerIdsResponse(sent[0].correlation_id + 5, "NONE",
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
    _answer(manager, AllocateProducerIdsResponse(sent[1].correlation_id, error), 0)
    assert manager.next_id(EPOCH, 0) == ("COORDINATOR_LOAD_IN_PROGRESS", -1)
    assert len(sent) == 2
    manager.next_id(EPOCH, 50)
    _grant(manager, sent[2], 1, 1)
    assert manager.next_id(EPOCH, 50) == ("NONE", 1)


def test_a_request_without_answer_is_sent_again_then_given_up_at_the_retry_timeout() -> None:
    """An AllocateProducerIds lost on the way (the link was cut) times out after the
    channel's request timeout (30 s from its hand-off); the channel drops the connection
    and sends it again to the same controller once the 50 ms reconnect back-off has
    passed. When that one is lost too, the request, now older than the channel's retry
    timeout (60 s), is given up (Kafka's onTimeout) and the next InitProducerId asks
    again; late answers to the old sends are ignored."""
    manager, world = _channel_manager()
    channel = manager.channel
    manager.next_id(EPOCH, 0)
    assert channel.next_deadline() == REQUEST_TIMEOUT_MS
    channel.poll(REQUEST_TIMEOUT_MS)
    assert len(world.sent) == 1  # dropped; the same node only after the back-off
    assert channel.next_deadline() == REQUEST_TIMEOUT_MS + RECONNECT_BACKOFF_MS
    channel.poll(REQUEST_TIMEOUT_MS + RECONNECT_BACKOFF_MS)
    assert world.to == [CTRL, CTRL]
    # the hand-off was at the timeout: the second send times out 30 s after it
    assert channel.next_deadline() == REQUEST_TIMEOUT_MS + REQUEST_TIMEOUT_MS
    assert manager.next_id(EPOCH, 59_999) == ("COORDINATOR_LOAD_IN_PROGRESS", -1)
    assert len(world.sent) == 2 and manager.in_flight
    assert manager.next_id(EPOCH, 2 * REQUEST_TIMEOUT_MS) == \
        ("COORDINATOR_LOAD_IN_PROGRESS", -1)
    # given up at 60 s; this InitProducerId asked again, sent after the reconnect back-off
    assert len(world.sent) == 2 and manager.in_flight
    channel.poll(2 * REQUEST_TIMEOUT_MS + RECONNECT_BACKOFF_MS)
    assert len(world.sent) == 3
    _grant(manager, world.sent[0], 3_000, now=60_100)
    _grant(manager, world.sent[1], 3_500, now=60_100)
    assert manager.next_id(EPOCH, 60_100) == ("COORDINATOR_LOAD_IN_PROGRESS", -1)
    _grant(manager, world.sent[2], 4_000, now=60_100)
    assert manager.next_id(EPOCH, 60_100) == ("NONE", 4_000)


def test_not_controller_is_the_channels_business() -> None:
    """A NOT_CONTROLLER answer never reaches the manager (Kafka's channel resends it; its
    RPCProducerIdManager only backs off after errors it is handed): the same request goes
    at once to the controller the raft client knows now, with no 50 ms RetryBackoffMs, and
    its block is taken."""
    manager, world = _channel_manager()
    manager.next_id(EPOCH, 1_000)
    world.leader = OTHER
    _answer(manager, AllocateProducerIdsResponse(world.sent[0].correlation_id,
                                                 "NOT_CONTROLLER"), 1_010)
    assert world.to == [CTRL, OTHER]
    assert world.sent[1].broker_epoch == EPOCH
    _grant(manager, world.sent[1], 7_000, now=1_011)
    assert manager.next_id(EPOCH, 1_011) == ("NONE", 7_000)


def test_not_controller_from_the_known_controller_waits_for_the_reconnect_backoff() -> None:
    """NOT_CONTROLLER from the node the raft client still names: the channel dropped
    that connection, so the request goes there again only 50 ms later."""
    manager, world = _channel_manager()
    manager.next_id(EPOCH, 1_000)
    _answer(manager, AllocateProducerIdsResponse(world.sent[0].correlation_id,
                                                 "NOT_CONTROLLER"), 1_010)
    assert len(world.sent) == 1
    manager.channel.poll(1_010 + RECONNECT_BACKOFF_MS - 1)
    assert len(world.sent) == 1
    manager.channel.poll(1_010 + RECONNECT_BACKOFF_MS)
    assert world.to == [CTRL, CTRL]


def test_a_request_made_with_no_controller_known_goes_at_the_next_look() -> None:
    """With no controller known, the request waits in the channel (kraftsim used to send
    nothing and ask again at the next InitProducerId); the channel looks every 100 ms
    from its first look, so a controller learnt at 1,030 gets the request at 1,100."""
    manager, world = _channel_manager(leader=None)
    assert manager.next_id(EPOCH, 1_000) == ("COORDINATOR_LOAD_IN_PROGRESS", -1)
    assert world.sent == [] and manager.in_flight
    assert manager.channel.next_deadline() == 1_000 + CONTROLLER_LOOKUP_MS
    world.leader = CTRL
    manager.next_id(EPOCH, 1_030)
    assert world.sent == []  # asking again neither sends another nor wakes the channel
    manager.channel.poll(1_000 + CONTROLLER_LOOKUP_MS)
    assert world.to == [CTRL]


def test_a_request_unsent_for_the_retry_timeout_is_given_up() -> None:
    """With no controller for the whole retry timeout, the request is given up at the
    first look at or after 60 s from its making, and the next InitProducerId asks again."""
    manager, world = _channel_manager(leader=None)
    manager.next_id(EPOCH, 0)
    manager.channel.poll(REQUEST_RETRY_TIMEOUT_MS - CONTROLLER_LOOKUP_MS)
    assert manager.in_flight
    manager.channel.poll(REQUEST_RETRY_TIMEOUT_MS)
    assert not manager.in_flight and not manager.channel.busy
    world.leader = CTRL
    manager.next_id(EPOCH, REQUEST_RETRY_TIMEOUT_MS + 1)
    assert world.to == [CTRL]


def test_a_request_out_goes_to_a_new_leader_at_once() -> None:
    """When the raft client names a new leader while a request is out to another node,
    the channel sends it there at once (kraftsim's stand-in for the dropped connection
    to a controller that went away, which Kafka's channel notices at once); the late
    answer of the old controller is ignored. The next request goes to the leader named
    at its hand-off."""
    manager, world = _channel_manager()
    manager.next_id(EPOCH, 0)
    world.leader = OTHER
    manager.channel.leader_changed(5)
    assert world.to == [CTRL, OTHER]
    _grant(manager, world.sent[0], 0, 1, now=6)
    assert manager.next_id(EPOCH, 6) == ("COORDINATOR_LOAD_IN_PROGRESS", -1)
    _grant(manager, world.sent[1], 10, 1, now=7)
    assert manager.next_id(EPOCH, 7) == ("NONE", 10)  # (the prefetch: asks again)
    assert world.to == [CTRL, OTHER, OTHER]


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
        first.correlation_id, "UNKNOWN_SERVER_ERROR")), at)
    assert manager.init_producer_id(at + RETRY_BACKOFF_MS - 1) == \
        ("COORDINATOR_LOAD_IN_PROGRESS", -1)
    assert manager.drain_outbox() == []
    assert manager.init_producer_id(at + RETRY_BACKOFF_MS) == \
        ("COORDINATOR_LOAD_IN_PROGRESS", -1)
    assert [type(env.message) for env in manager.drain_outbox()] == \
        [AllocateProducerIdsRequest]
