"""BrokerLifecycleManager alone: registration, heartbeats, fencing and controlled shutdown
(Kafka's BrokerLifecycleManagerTest), driven by hand-written controller answers."""

from __future__ import annotations

import random

import pytest

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
from metadata.schema import NoOpRecord
from raft import Batch
from raft.listener import LeaderAndEpoch

BROKER, CONTROLLER = 1, 3000
CONFIG = BrokerConfig()


class Harness:
    """A broker's lifecycle manager whose loader the test feeds."""

    def __init__(self) -> None:
        self.loader = MetadataLoader(BROKER)
        self.loader.catching_up = False
        self.loader.handle_leader_change(LeaderAndEpoch(CONTROLLER, 1))
        self.manager = BrokerLifecycleManager(BROKER, self.loader, random.Random(7), 0, CONFIG)

    def state(self) -> BrokerState:
        return self.manager.state

    def sent(self, now: int) -> list[object]:
        self.manager.poll(now)
        out = self.manager.drain_outbox()
        assert all(m.src == BROKER and m.dst == CONTROLLER for m in out)
        return [m.message for m in out]

    def answer(self, response: object, now: int) -> None:
        self.manager.handle_message(NodeMessage(CONTROLLER, BROKER, response), now)

    def publish(self, end_offset: int) -> None:
        self.loader.handle_commit([Batch(0, 1, tuple(NoOpRecord() for _ in range(end_offset)))],
                                  end_offset)


def test_a_broker_registers_then_heartbeats_fenced_until_it_has_caught_up() -> None:
    """Kafka's BrokerLifecycleManager: STARTING until a heartbeat answer says caught up,
    each next heartbeat 10 ms after the answer; RECOVERY (10 ms more) until unfenced."""
    h = Harness()
    [registration] = h.sent(0)
    assert isinstance(registration, BrokerRegistrationRequest)
    assert registration.incarnation_id == h.manager.incarnation_id
    assert h.sent(1) == []  # one request at a time, retried after an interval
    assert isinstance(h.sent(CONFIG.registration_retry_ms)[0], BrokerRegistrationRequest)
    h.publish(4)  # an image before the registration: not caught up yet
    assert not h.manager.registered and not h.manager.caught_up
    h.answer(BrokerRegistrationResponse(2, "NONE", broker_epoch=6), 200)
    assert h.manager.state is BrokerState.STARTING and h.manager.broker_epoch == 6
    assert not h.manager.caught_up  # the image (offset 3) is older than the registration
    [heartbeat] = h.sent(200)  # at once
    assert heartbeat == BrokerHeartbeatRequest(3, BROKER, 6, 3, want_fence=False)
    h.answer(BrokerHeartbeatResponse(3, "NONE", is_caught_up=False, is_fenced=True), 201)
    assert h.manager.state is BrokerState.STARTING and h.manager.fenced
    assert h.sent(210) == []
    [heartbeat] = h.sent(211)  # 10 ms after the answer, not a heartbeat interval
    h.publish(8)
    assert h.manager.caught_up
    h.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, "NONE", is_caught_up=True,
                                     is_fenced=True), 215)
    assert h.manager.state is BrokerState.RECOVERY and h.manager.fenced
    [heartbeat] = h.sent(225)
    assert isinstance(heartbeat, BrokerHeartbeatRequest)
    assert heartbeat.current_metadata_offset == 7
    h.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, "NONE", is_fenced=False), 226)
    assert h.manager.state is BrokerState.RUNNING and not h.manager.fenced
    assert h.sent(226 + CONFIG.heartbeat_interval_ms - 2) == []  # then every interval
    assert len(h.sent(225 + CONFIG.heartbeat_interval_ms)) == 1


def test_a_late_or_foreign_answer_is_ignored() -> None:
    h = Harness()
    h.sent(0)
    h.answer(BrokerRegistrationResponse(9, "NONE", broker_epoch=6), 1)  # not outstanding
    assert not h.manager.registered
    h.answer(BrokerRegistrationResponse(1, "DUPLICATE_BROKER_REGISTRATION"), 1)
    assert not h.manager.registered and h.manager.state is BrokerState.STARTING


def _running() -> Harness:
    h = Harness()
    h.sent(0)
    h.answer(BrokerRegistrationResponse(1, "NONE", broker_epoch=6), 1)
    [heartbeat] = h.sent(1)
    assert isinstance(heartbeat, BrokerHeartbeatRequest) and heartbeat.want_fence
    h.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, "NONE", is_fenced=False), 2)
    assert h.manager.state is BrokerState.RUNNING
    return h


@pytest.mark.parametrize("error", ["STALE_BROKER_EPOCH", "BROKER_ID_NOT_REGISTERED"])
def test_a_stale_epoch_sends_the_broker_back_to_registration(error: str) -> None:
    """A heartbeat refused for its broker epoch, or because the controller does not know
    the broker, sends the broker back to registering (same incarnation)."""
    h = _running()
    [heartbeat] = h.sent(1 + CONFIG.heartbeat_interval_ms)
    assert isinstance(heartbeat, BrokerHeartbeatRequest)
    h.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, error), 600)
    assert h.manager.state is BrokerState.STARTING and h.manager.fenced
    assert not h.manager.registered
    [again] = h.sent(600)
    assert isinstance(again, BrokerRegistrationRequest)
    assert again.incarnation_id == h.manager.incarnation_id  # the same process


def test_a_fenced_answer_leaves_a_running_broker_running() -> None:
    """Kafka's RUNNING state takes a fenced answer (a session that timed out) as any other:
    the broker stays RUNNING, marked fenced, heartbeating every interval with wantFence
    false, and is unfenced by the next answer that says so."""
    h = _running()
    h.publish(8)
    at = 1 + CONFIG.heartbeat_interval_ms
    [heartbeat] = h.sent(at)
    assert isinstance(heartbeat, BrokerHeartbeatRequest)
    h.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, "NONE", is_fenced=True), at)
    assert h.manager.state is BrokerState.RUNNING and h.manager.fenced
    assert h.sent(at + CONFIG.heartbeat_interval_ms - 1) == []
    [heartbeat] = h.sent(at + CONFIG.heartbeat_interval_ms)
    assert isinstance(heartbeat, BrokerHeartbeatRequest) and not heartbeat.want_fence
    h.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, "NONE", is_fenced=False),
             at + CONFIG.heartbeat_interval_ms)
    assert h.manager.state is BrokerState.RUNNING and not h.manager.fenced


def _recovering() -> Harness:
    """A broker that registered and was told it caught up, still fenced: RECOVERY."""
    h = Harness()
    h.sent(0)
    h.publish(8)
    h.answer(BrokerRegistrationResponse(1, "NONE", broker_epoch=6), 1)
    [heartbeat] = h.sent(1)
    h.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, "NONE", is_caught_up=True,
                                     is_fenced=True), 1)
    assert h.manager.state is BrokerState.RECOVERY
    return h


def test_a_broker_in_recovery_stays_there_while_the_controller_answers_fenced() -> None:
    """Kafka's RECOVERY state: a fenced answer keeps the broker in RECOVERY, heartbeating
    every interval; only an unfenced answer makes it RUNNING."""
    h = _recovering()
    at = 1 + 10  # the heartbeat 10 ms after the answer that said caught up
    assert h.sent(at - 1) == []
    [heartbeat] = h.sent(at)
    h.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, "NONE", is_caught_up=True,
                                     is_fenced=True), at)
    assert h.manager.state is BrokerState.RECOVERY and h.manager.fenced
    assert h.sent(at + CONFIG.heartbeat_interval_ms - 1) == []
    at += CONFIG.heartbeat_interval_ms
    [heartbeat] = h.sent(at)
    h.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, "NONE", is_caught_up=True,
                                     is_fenced=False), at)
    assert h.manager.state is BrokerState.RUNNING and not h.manager.fenced


def test_controlled_shutdown_waits_for_the_controller_or_the_timeout() -> None:
    h = _running()
    assert h.manager.begin_controlled_shutdown(10)
    assert h.manager.state is BrokerState.PENDING_CONTROLLED_SHUTDOWN
    [heartbeat] = h.manager.drain_outbox()
    request = heartbeat.message
    assert isinstance(request, BrokerHeartbeatRequest) and request.want_shut_down
    h.answer(BrokerHeartbeatResponse(request.correlation_id, "NONE", is_fenced=False,
                                     should_shut_down=False), 11)
    assert h.state() is BrokerState.PENDING_CONTROLLED_SHUTDOWN
    assert h.manager.next_deadline() == 10 + CONFIG.heartbeat_interval_ms
    h.manager.poll(10 + CONFIG.controlled_shutdown_timeout_ms)
    assert h.state() is BrokerState.SHUTTING_DOWN and h.manager.shutdown_complete
    assert h.manager.next_deadline() is None

    answered = _running()
    answered.manager.begin_controlled_shutdown(10)
    [heartbeat] = answered.manager.drain_outbox()
    answered.answer(BrokerHeartbeatResponse(heartbeat.message.correlation_id, "NONE",
                                            is_fenced=True, should_shut_down=True), 12)
    assert answered.manager.shutdown_complete


def test_an_unregistered_or_fenced_broker_shuts_down_at_once() -> None:
    h = Harness()
    assert not h.manager.begin_controlled_shutdown(0)
    assert h.manager.shutdown_complete and h.manager.drain_outbox() == []
    assert h.sent(CONFIG.registration_retry_ms) == []


def test_no_known_controller_sends_nothing_and_retries_later() -> None:
    h = Harness()
    h.loader.handle_leader_change(LeaderAndEpoch(None, 2))
    assert h.sent(0) == []
    assert h.manager.next_deadline() == CONFIG.registration_retry_ms
    h.loader.handle_leader_change(LeaderAndEpoch(CONTROLLER, 2))
    assert isinstance(h.sent(CONFIG.registration_retry_ms)[0], BrokerRegistrationRequest)


def test_the_image_holding_the_registration_record_is_caught_up() -> None:
    """Caught up means the published image includes the RegisterBrokerRecord, whose offset
    is the broker epoch: an image ending exactly at that offset is enough."""
    h = Harness()
    h.sent(0)
    h.answer(BrokerRegistrationResponse(1, "NONE", broker_epoch=6), 1)
    h.publish(6)   # the image ends at offset 5
    assert not h.manager.caught_up
    h.publish(7)   # the image ends at offset 6: the registration record
    assert h.manager.caught_up


def test_a_fenced_broker_shuts_down_without_waiting_for_the_controller() -> None:
    """A broker still fenced (registered, recovering) leads nothing: a controlled shutdown
    has nothing to wait for, so it stops at once and asks the controller nothing."""
    h = Harness()
    h.sent(0)
    h.answer(BrokerRegistrationResponse(1, "NONE", broker_epoch=6), 1)
    assert h.manager.registered and h.manager.fenced
    assert not h.manager.begin_controlled_shutdown(2)
    assert h.manager.state is BrokerState.SHUTTING_DOWN and h.manager.shutdown_complete
    assert h.manager.drain_outbox() == []


def test_an_answer_before_the_first_request_is_ignored() -> None:
    """A restarted broker process may get an answer meant for its previous incarnation
    before it sent anything: it is not the answer to an outstanding request."""
    h = Harness()
    h.answer(BrokerRegistrationResponse(1, "NONE", broker_epoch=6), 0)
    h.answer(BrokerHeartbeatResponse(1, "NONE", is_fenced=False), 0)
    assert not h.manager.registered and h.manager.state is BrokerState.STARTING
    [registration] = h.sent(0)
    assert isinstance(registration, BrokerRegistrationRequest)
