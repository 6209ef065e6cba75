"""Kafka's BrokerLifecycleManagerTest, against kraftsim's
:class:`broker.lifecycle.BrokerLifecycleManager`, driven by hand-written controller answers
as Kafka's test drives its manager through a mock channel (heartbeat interval 100 ms, as
the Kafka test configures it; controller node 3000).

kraftsim's manager starts when it is made (the broker process starts it at once), so
Kafka's NOT_RUNNING before ``start`` has no counterpart: each case begins at STARTING.

Ported: testCreateAndClose (test_create_and_close), testCreateStartAndClose
(test_create_start_and_close), testSuccessfulRegistration (test_successful_registration),
testRegistrationTimeout (test_registration_timeout: the refused registration resent after
the back-off; see below for its timeout), testControlledShutdown
(test_controlled_shutdown).

Not ported:
- testSuccessfulRegistrationDuringMigration: ZooKeeper migration (kraftsim refuses
  ZooKeeper brokers and does not model the migration).
- testRegistrationTimeout's last step (initial.broker.registration.timeout.ms, 60 s,
  after which an unregistered broker shuts down): kraftsim's broker processes only stop
  when told to, and the experiments' liveness checks require a broker restarted during a
  long controller outage to rejoin once the quorum is back.
- previousBrokerEpoch in testSuccessfulRegistration: kraftsim's brokers keep no clean
  shutdown file and always send -1.
- testAlwaysSendsAccumulatedOfflineDirs, testRegistrationIncludesDirs and
  testKraftJBODMetadataVersionUpdateEvent: log directories (JBOD) and the
  BrokerRegistrationTracker's re-registration for them are not modelled (kraftsim's
  brokers register no directories); BrokerRegistrationTrackerTest for the same reason.
"""

from __future__ import annotations

import random

from broker import MetadataLoader
from broker.config import BrokerConfig
from broker.lifecycle import BrokerLifecycleManager, BrokerState
from metadata.requests import (
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
    NodeMessage,
)
from raft.listener import LeaderAndEpoch

BROKER, CONTROLLER = 1, 3000
CONFIG = BrokerConfig(heartbeat_interval_ms=100)


class Context:
    """Kafka's RegistrationTestContext: a manager whose requests the test answers."""

    def __init__(self) -> None:
        self.loader = MetadataLoader(BROKER)
        self.loader.catching_up = False
        self.loader.handle_leader_change(LeaderAndEpoch(CONTROLLER, 1))
        self.manager = BrokerLifecycleManager(BROKER, self.loader, random.Random(1), 0, CONFIG)
        self.now = 0

    def next_request(self) -> object:
        """Advance the clock to the manager's next request and return it."""
        due = self.manager.next_deadline()
        assert due is not None
        self.now = max(self.now, due)
        self.manager.poll(self.now)
        [sent] = self.manager.drain_outbox()
        assert (sent.src, sent.dst) == (BROKER, CONTROLLER)
        return sent.message

    def answer(self, response: object) -> None:
        self.manager.handle_message(NodeMessage(CONTROLLER, BROKER, response), self.now)


def test_create_and_close() -> None:
    context = Context()
    context.manager.close(0)
    assert context.manager.drain_outbox() == []
    assert context.manager.next_deadline() is None


def test_create_start_and_close() -> None:
    context = Context()
    assert context.manager.state is BrokerState.STARTING
    context.manager.close(0)
    assert context.manager.state is BrokerState.SHUTTING_DOWN
    context.manager.poll(1_000)
    assert context.manager.drain_outbox() == []


def test_successful_registration() -> None:
    context = Context()
    registration = context.next_request()
    assert isinstance(registration, BrokerRegistrationRequest)
    assert registration.broker_id == BROKER
    assert registration.incarnation_id == context.manager.incarnation_id
    context.answer(BrokerRegistrationResponse(registration.correlation_id, "NONE",
                                              broker_epoch=1000))
    assert context.manager.broker_epoch == 1000


def test_registration_timeout() -> None:
    """A registration refused DUPLICATE_BROKER_REGISTRATION is sent again once the back-off
    (100 ms for the first failure) has passed, and the broker stays unregistered."""
    context = Context()
    first = context.next_request()
    assert isinstance(first, BrokerRegistrationRequest)
    context.answer(BrokerRegistrationResponse(first.correlation_id,
                                              "DUPLICATE_BROKER_REGISTRATION"))
    refused_at = context.now
    assert context.manager.broker_epoch == -1
    again = context.next_request()
    assert isinstance(again, BrokerRegistrationRequest)
    assert 98 <= context.now - refused_at <= 102
    context.answer(BrokerRegistrationResponse(again.correlation_id,
                                              "DUPLICATE_BROKER_REGISTRATION"))
    assert context.manager.broker_epoch == -1
    assert context.manager.state is BrokerState.STARTING


def test_controlled_shutdown() -> None:
    context = Context()
    manager = context.manager
    registration = context.next_request()
    assert isinstance(registration, BrokerRegistrationRequest)
    context.answer(BrokerRegistrationResponse(registration.correlation_id, "NONE",
                                              broker_epoch=1000))
    heartbeat = context.next_request()
    assert isinstance(heartbeat, BrokerHeartbeatRequest)
    context.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, "NONE",
                                           is_caught_up=True))
    assert manager.state is BrokerState.RECOVERY
    context.now += 20
    heartbeat = context.next_request()
    assert isinstance(heartbeat, BrokerHeartbeatRequest)
    context.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, "NONE", is_fenced=False))
    assert manager.state is BrokerState.RUNNING
    assert manager.begin_controlled_shutdown(context.now)
    assert manager.state is BrokerState.PENDING_CONTROLLED_SHUTDOWN
    [in_flight] = manager.drain_outbox()
    request = in_flight.message
    assert isinstance(request, BrokerHeartbeatRequest) and request.want_shut_down
    context.answer(BrokerHeartbeatResponse(request.correlation_id, "NONE",
                                           should_shut_down=True))
    assert manager.state is BrokerState.SHUTTING_DOWN and manager.shutdown_complete
