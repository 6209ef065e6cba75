"""Kafka's NodeToControllerRequestThreadTest, against kraftsim's one model of that channel
(:class:`metadata.controller_channel.ControllerChannel`) as
:class:`broker.lifecycle.BrokerLifecycleManager` sends its registration and heartbeats
through it (Kafka's BrokerLifecycleManager uses a NodeToControllerChannelManager whose
retry timeout is half the broker session); testControllerChanged against the channel
itself. The producer-id and controller-registration channels' cases are in
tests/broker/test_producer_ids.py and
tests/controller/test_kafka_controller_registration_manager_cases.py, the channel's own
in tests/metadata/test_controller_channel.py. The controller the channel asks for is the leader
the broker's raft client knows (Kafka's RaftControllerNodeProvider); the test moves it by
hand, as Kafka's test scripts its ControllerNodeProvider mock.

Ported: testRetryTimeoutWhileControllerNotAvailable
(test_retry_timeout_while_controller_not_available), testRequestsSent
(test_requests_sent), testNotController (test_not_controller), testRetryTimeout
(test_retry_timeout), testControllerChanged (test_controller_changed: kraftsim's network
tells no sender that a connection dropped, so the channel's ``leader_changed``, called when
the raft client names a new leader, stands in for the disconnect from the controller that
went away; the producer-id and controller-registration channels call it, the lifecycle
manager does not: its request to a controller that went away fails at its timeout, as
test_lifecycle shows). Also kraftsim's own cases of the same channel: NOT_CONTROLLER from
the controller the raft client still knows (sent there again after the network client's
50 ms reconnect back-off), from the last known controller (held until one is known), the
same request (its content as first built) going again, and the channel's looks for a
controller every 100 ms while it knows none (doWork's pollOnce(100); until this stop
kraftsim sent the moment the raft client learnt one).

Not ported:
- testEnvelopeResponseWithNotControllerError: kraftsim's brokers forward no client
  request to the controller (no Envelope).
- testUnsupportedVersionHandling, testAuthenticationExceptionHandling: kraftsim's
  controllers take every request version its brokers send, and there is no
  authentication.
- testThreadNotStarted: kraftsim's channel is no thread; the manager sends from its start.
"""

from __future__ import annotations

import random

from broker import MetadataLoader
from broker.config import BrokerConfig
from broker.lifecycle import BrokerLifecycleManager
from metadata.controller_channel import (
    CONTROLLER_LOOKUP_MS,
    RECONNECT_BACKOFF_MS,
    ControllerChannel,
)
from metadata.requests import (
    BROKER_SESSION_TIMEOUT_MS,
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
    NodeMessage,
)
from metadata.schema import NoOpRecord
from raft import Batch
from raft.listener import LeaderAndEpoch

BROKER, OLD, NEW = 1, 3000, 3001
RETRY_TIMEOUT = BROKER_SESSION_TIMEOUT_MS // 2


class Channel:
    """A broker's lifecycle manager and the controller its raft client knows."""

    def __init__(self, controller: int | None = OLD) -> None:
        self.loader = MetadataLoader(BROKER)
        self.loader.catching_up = False
        self.loader.handle_leader_change(LeaderAndEpoch(controller, 1))
        self.manager = BrokerLifecycleManager(BROKER, self.loader, random.Random(11), 0,
                                              BrokerConfig())

    def controller(self, node: int | None, epoch: int) -> None:
        """The raft client learns of another leader (None: none known)."""
        self.loader.handle_leader_change(LeaderAndEpoch(node, epoch))

    def sent(self, now: int) -> list[NodeMessage]:
        self.manager.poll(now)
        return self.manager.drain_outbox()

    def answer(self, request: NodeMessage, error: str, now: int) -> None:
        """``request``'s controller answers it with ``error`` (a registration's epoch 6)."""
        body = request.message
        response: object
        if isinstance(body, BrokerRegistrationRequest):
            response = BrokerRegistrationResponse(body.correlation_id, error, broker_epoch=6)
        else:
            assert isinstance(body, BrokerHeartbeatRequest)
            response = BrokerHeartbeatResponse(body.correlation_id, error)
        self.manager.handle_message(NodeMessage(request.dst, BROKER, response), now)


def test_retry_timeout_while_controller_not_available() -> None:
    """No controller known: the request waits in the channel until the retry timeout, then
    fails (the lifecycle manager backs off)."""
    c = Channel(controller=None)
    assert c.sent(0) == []
    assert c.sent(RETRY_TIMEOUT - 1) == [] and c.manager.failed_attempts == 0
    assert c.sent(RETRY_TIMEOUT) == []
    assert c.manager.failed_attempts == 1


def test_requests_sent() -> None:
    """The request goes to the controller the raft client knows and its answer completes it."""
    c = Channel()
    [request] = c.sent(0)
    assert request.dst == OLD and isinstance(request.message, BrokerRegistrationRequest)
    c.answer(request, "NONE", 3)
    assert c.manager.registered and c.manager.failed_attempts == 0


def test_not_controller() -> None:
    """NOT_CONTROLLER: the channel drops the old controller and sends the same request to
    the controller known now, at once; only the final answer reaches the manager."""
    c = Channel()
    [first] = c.sent(0)
    c.controller(NEW, 2)
    c.answer(first, "NOT_CONTROLLER", 5)
    assert c.manager.failed_attempts == 0 and not c.manager.registered
    [again] = c.sent(5)
    assert again.dst == NEW
    assert c.manager.next_deadline() == 5 + RETRY_TIMEOUT  # its own timeout from the resend
    assert isinstance(again.message, BrokerRegistrationRequest)
    assert again.message.correlation_id != first.message.correlation_id
    assert again.message.incarnation_id == first.message.incarnation_id
    c.answer(again, "NONE", 7)
    assert c.manager.registered and c.manager.failed_attempts == 0


def test_retry_timeout() -> None:
    """A NOT_CONTROLLER that comes once the request is as old as its retry timeout fails it:
    nothing is sent again at once, the manager backs off."""
    c = Channel()
    [first] = c.sent(0)
    c.controller(NEW, 2)
    c.answer(first, "NOT_CONTROLLER", RETRY_TIMEOUT - 1)  # (the answer in time counts)
    assert c.manager.failed_attempts == 0
    [again] = c.sent(RETRY_TIMEOUT - 1)
    c.answer(again, "NOT_CONTROLLER", RETRY_TIMEOUT)
    assert c.sent(RETRY_TIMEOUT) == []
    assert c.manager.failed_attempts == 1
    due = c.manager.next_deadline()
    assert due is not None and RETRY_TIMEOUT + 98 <= due <= RETRY_TIMEOUT + 102


def test_not_controller_from_the_known_controller_waits_the_reconnect_back_off() -> None:
    """The raft client still names the node that refused: the channel connects there again
    only after its reconnect back-off (50 ms), then sends the request there."""
    c = Channel()
    [first] = c.sent(0)
    c.answer(first, "NOT_CONTROLLER", 4)
    assert c.sent(4) == []
    assert c.manager.next_deadline() == 4 + RECONNECT_BACKOFF_MS
    assert c.sent(4 + RECONNECT_BACKOFF_MS - 1) == []
    [again] = c.sent(4 + RECONNECT_BACKOFF_MS)
    assert again.dst == OLD
    c.answer(again, "NONE", 60)
    assert c.manager.registered and c.manager.failed_attempts == 0


def test_a_new_controller_during_the_back_off_is_still_reached_through_the_old() -> None:
    """The request was handed to the refusing node's connection: a new controller known
    during the back-off does not take it (a second refusal sends it there at once)."""
    c = Channel()
    [first] = c.sent(0)
    c.answer(first, "NOT_CONTROLLER", 4)
    c.controller(NEW, 2)
    assert c.sent(10) == []
    [again] = c.sent(4 + RECONNECT_BACKOFF_MS)
    assert again.dst == OLD
    c.answer(again, "NOT_CONTROLLER", 56)
    [third] = c.sent(56)
    assert third.dst == NEW


def test_not_controller_with_no_controller_known_holds_the_request() -> None:
    """No controller known after the refusal: the request waits for one (sent at the
    channel's next look, every 100 ms from the refusal), and fails if none is known by its
    retry timeout from when it was made: at the first look at or past it (Kafka checks
    the retry timeout as it takes requests from its queue, once per doWork), here the
    look at 4,504 (looks at 4, 104, ... from the refusal; the retry timeout ends at
    4,500)."""
    c = Channel()
    [first] = c.sent(0)
    c.controller(None, 2)
    c.answer(first, "NOT_CONTROLLER", 4)
    assert c.sent(104) == []
    c.controller(NEW, 2)
    assert c.manager.next_deadline() == 204
    [again] = c.sent(204)
    assert again.dst == NEW and c.manager.failed_attempts == 0
    # half a session from the hand-off at 204, not from the request's making
    assert c.manager.next_deadline() == 204 + RETRY_TIMEOUT

    held = Channel()
    [first] = held.sent(0)
    held.controller(None, 2)
    held.answer(first, "NOT_CONTROLLER", 4)
    for look in range(104, RETRY_TIMEOUT, 100):
        assert held.manager.next_deadline() == look
        assert held.sent(look) == [] and held.manager.failed_attempts == 0
    assert held.manager.next_deadline() == RETRY_TIMEOUT + 4
    assert held.sent(RETRY_TIMEOUT + 4) == [] and held.manager.failed_attempts == 1


def test_with_no_controller_the_channel_looks_for_one_every_100_ms() -> None:
    """doWork with no active controller: the thread polls for 100 ms, then looks at the
    controller provider again. A controller the raft client learns between two looks is
    used at the next one, not at once; looks go on every 100 ms from the channel's first
    (the request made at 0 here), whenever the controller comes."""
    for known_at, sent_at in ((1, 100), (99, 100), (100, 100), (101, 200), (250, 300)):
        c = Channel(controller=None)
        assert c.sent(0) == []
        now = 0
        while now + CONTROLLER_LOOKUP_MS < known_at:
            now += CONTROLLER_LOOKUP_MS
            assert c.manager.next_deadline() == now and c.sent(now) == []
        c.controller(OLD, 1)
        assert c.manager.next_deadline() == sent_at, known_at
        assert c.sent(sent_at - 1) == []
        [request] = c.sent(sent_at)
        assert request.dst == OLD and isinstance(request.message, BrokerRegistrationRequest)


def test_the_heartbeat_sent_again_is_the_one_first_built() -> None:
    """The channel sends the same request again: a heartbeat refused with NOT_CONTROLLER goes
    to the new controller with the metadata offset it first carried, even though the
    broker has published more since."""
    c = Channel()
    c.loader.handle_commit([Batch(0, 1, tuple(NoOpRecord() for _ in range(8)))], 8)
    [registration] = c.sent(0)
    c.answer(registration, "NONE", 1)
    [heartbeat] = c.sent(1)
    assert isinstance(heartbeat.message, BrokerHeartbeatRequest)
    offset = heartbeat.message.current_metadata_offset
    c.loader.handle_commit([Batch(8, 1, tuple(NoOpRecord() for _ in range(4)))], 12)
    assert c.loader.published_offset > offset
    c.controller(NEW, 2)
    c.answer(heartbeat, "NOT_CONTROLLER", 3)
    [again] = c.sent(3)
    assert again.dst == NEW and isinstance(again.message, BrokerHeartbeatRequest)
    assert again.message.current_metadata_offset == offset
    assert again.message.correlation_id != heartbeat.message.correlation_id


def test_the_reconnect_back_off_is_kafkas_default_of_fifty_ms() -> None:
    """reconnect.backoff.ms and reconnect.backoff.max.ms both default to 50 ms in Kafka: the
    request the controller still known refused goes to it again 50 ms after the refusal,
    not a millisecond sooner or later."""
    c = Channel()
    [first] = c.sent(0)
    c.answer(first, "NOT_CONTROLLER", 10)
    assert c.sent(59) == []
    [again] = c.sent(60)
    assert again.dst == OLD and c.manager.failed_attempts == 0


def test_a_heartbeat_refused_long_after_the_start_goes_again() -> None:
    """The retry timeout runs from each request's making, not from the manager's start: a
    heartbeat made well past half a session into the broker's life and refused with
    NOT_CONTROLLER goes again at once to the new controller, nothing failed."""
    c = Channel()
    [registration] = c.sent(0)
    c.answer(registration, "NONE", 1)
    now = 1
    while now < 3 * RETRY_TIMEOUT:
        due = c.manager.next_deadline()
        assert due is not None
        now = due
        for request in c.sent(now):
            c.answer(request, "NONE", now + 1)
    made = c.manager.next_deadline()
    assert made is not None and made > 3 * RETRY_TIMEOUT
    [heartbeat] = c.sent(made)
    c.controller(NEW, 2)
    c.answer(heartbeat, "NOT_CONTROLLER", made + 2)
    [again] = c.sent(made + 2)
    assert again.dst == NEW and isinstance(again.message, BrokerHeartbeatRequest)
    assert c.manager.failed_attempts == 0


def test_controller_changed() -> None:
    """testControllerChanged: a request out to the old controller, which becomes
    unreachable (here: the raft client names the new one, ``leader_changed``), goes to
    the new controller, whose answer completes it; nothing times out."""
    leader: list[int | None] = [OLD]
    sent: list[NodeMessage] = []
    answered: list[object] = []
    channel = ControllerChannel(BROKER, lambda: leader[0], retry_timeout_ms=1 << 62,
                                emit=sent.append)
    channel.send(BrokerHeartbeatRequest(0, BROKER, 6, 0), 0,
                 lambda answer, now: answered.append(answer),
                 lambda now: answered.append("timeout"))
    assert [m.dst for m in sent] == [OLD]
    leader[0] = NEW
    channel.leader_changed(1)
    assert [m.dst for m in sent] == [OLD, NEW] and answered == []
    response = BrokerHeartbeatResponse(sent[1].message.correlation_id, "NONE")
    assert channel.handle_message(NodeMessage(NEW, BROKER, response), 2)
    assert answered == [response]
